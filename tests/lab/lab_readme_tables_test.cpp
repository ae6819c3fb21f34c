// labs/README.md documents every lab scenario's parameters and measured
// quantities in tables. The scenario specs (engine/scenarios/) are the one
// source of truth: this test reads the tables back and fails when a
// parameter, a default or a measured quantity on the page differs from the
// spec, or when a scenario a lab may use has no section.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/scenarios/scenario_spec.h"

namespace shardlab {
namespace {

struct ReadmeSection {
  std::string scenario;
  int line = 0;
  std::map<std::string, std::string> defaults;  // parameter -> default cell
  std::set<std::string> measured;                // every name in the measured table
};

std::string Trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {  // row starts with '|'
    if (row[i] == '|') {
      cells.push_back(Trim(cell));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return cells;
}

// Every `name` in backticks of a cell ("`time_ns`, `time_us`" -> both).
std::vector<std::string> Quoted(const std::string& cell) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while ((at = cell.find('`', at)) != std::string::npos) {
    const std::size_t end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    out.push_back(cell.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return out;
}

// A default cell as the spec writes it: backticks and quotes dropped.
std::string DefaultOf(std::string cell) {
  std::string out;
  for (char c : cell)
    if (c != '`' && c != '"') out += c;
  return Trim(out);
}

std::vector<ReadmeSection> ReadSections(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<ReadmeSection> sections;
  std::string line, table;  // table: "parameter" or "measured" while inside one
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("## ", 0) == 0) {  // a new top-level section ends the scenarios
      table.clear();
      if (line != "## Scenarios" && !sections.empty()) break;
      continue;
    }
    if (line.rfind("### `", 0) == 0) {
      const std::size_t end = line.find('`', 5);
      sections.push_back({line.substr(5, end - 5), number, {}, {}});
      table.clear();
      continue;
    }
    if (sections.empty() || line.empty() || line[0] != '|') {
      table.clear();
      continue;
    }
    const std::vector<std::string> cells = Cells(line);
    if (cells.empty() || cells[0].rfind("---", 0) == 0) continue;
    if (table.empty()) {  // the header row says which table this is
      table = cells[0];
      continue;
    }
    ReadmeSection& s = sections.back();
    if (table == "parameter" && cells.size() >= 3) {
      // One row may list several parameters ("`dp`, `pp`, `tp`") with one
      // default each ("2, 2, 2") or one default for all.
      const std::vector<std::string> names = Quoted(cells[0]);
      std::vector<std::string> parts;
      std::stringstream split(cells[2]);
      for (std::string part; std::getline(split, part, ',');) parts.push_back(DefaultOf(part));
      for (std::size_t i = 0; i < names.size(); ++i)
        s.defaults[names[i]] = parts.size() == names.size() ? parts[i] : DefaultOf(cells[2]);
    } else if (table == "measured") {
      for (const std::string& name : Quoted(cells[0])) s.measured.insert(name);
    }
  }
  return sections;
}

TEST(LabReadme, EveryScenarioTableMatchesItsSpec) {
  const std::string path = std::string(SHARDLAB_LABS_DIR) + "/README.md";
  const std::vector<ReadmeSection> sections = ReadSections(path);
  ASSERT_FALSE(sections.empty()) << path << " has no scenario sections";
  std::set<std::string> documented;
  for (const ReadmeSection& section : sections) {
    SCOPED_TRACE(path + ":" + std::to_string(section.line) + ": scenario " + section.scenario);
    documented.insert(section.scenario);
    const ScenarioSpec* spec = FindScenario(section.scenario);
    ASSERT_NE(spec, nullptr) << "the page documents a scenario the engine does not have";
    for (const ParamSpec& p : spec->params) {
      if (!p.lab) continue;
      const auto it = section.defaults.find(p.name);
      if (it == section.defaults.end()) {
        ADD_FAILURE() << "parameter " << p.name << " is missing from the table";
        continue;
      }
      EXPECT_EQ(it->second, p.default_text) << "default of " << p.name;
    }
    for (const auto& [name, cell] : section.defaults) {
      const ParamSpec* p = spec->FindParam(name);
      EXPECT_TRUE(p != nullptr && p->name == name && p->lab)
          << "the table lists " << name << ", which a lab cannot set";
    }
    for (const QuantitySpec& q : spec->measured)
      EXPECT_TRUE(section.measured.count(q.name)) << "measured " << q.name << " is missing from the table";
    for (const std::string& name : section.measured)
      EXPECT_NE(spec->FindQuantity(name), nullptr) << "the table lists measured " << name
                                                   << ", which the scenario does not measure";
  }
  // Every scenario a lab can grade (it measures something) has its section.
  for (const ScenarioSpec& spec : Scenarios()) {
    if (!spec.measured.empty() && spec.name.rfind("test", 0) != 0) {
      EXPECT_TRUE(documented.count(spec.name)) << path << " has no section for scenario " << spec.name;
    }
  }
}

}  // namespace
}  // namespace shardlab
