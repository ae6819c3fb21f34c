// Every front end shows one scenario spec: for every scenario and parameter,
// `run NAME --help` and the lab loader report the spec's default, range and
// unit; a scenario registered by this test binary alone appears in `run
// --help`, runs as `run NAME` and is accepted (and graded) in a lab file;
// old spellings still work and say so on stderr; bad values give one line
// and exit 2 naming the flag.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/scenario_flags.h"
#include "engine/lab/lab_loader.h"
#include "engine/lab/lab_scenario.h"
#include "engine/algorithms/collective.h"
#include "engine/core/json_parse.h"
#include "engine/run/metrics.h"
#include "engine/scenarios/scenario.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/presets.h"
#include "tests/common/in_process.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

// A scenario of this test binary alone, registered before main() as a new
// scenario's file would be: it "measures" the area of a rectangle.
const bool kTestScenarioRegistered = [] {
  ScenarioSpec s;
  s.name = "test-rectangle";
  s.title = "Test rectangle";
  s.summary = "a scenario only the cli test registers";
  s.params = {Param("width", ParamType::kInteger, "3", "the rectangle's width")
                  .Range(1, 100)
                  .Unit("cells"),
              Param("height", ParamType::kInteger, "4", "the rectangle's height")
                  .Range(1, 100)
                  .Unit("cells")
                  .OldNames({"tall"})};
  s.measured = {{"area", "cells", "width x height"}};
  s.measure = [](const ScenarioParams& p, std::string* summary) {
    *summary = "a " + p.Text("width") + " x " + p.Text("height") + " rectangle";
    return std::map<std::string, double>{{"area", p.Number("width") * p.Number("height")}};
  };
  RegisterScenario(std::move(s));
  return true;
}();

using test_util::InProcess;

/// The rows of a --help flag table: "--name" -> the row's text, wrapped
/// lines joined with single spaces.
std::map<std::string, std::string> HelpRows(const std::string& help) {
  std::map<std::string, std::string> rows;
  std::string current;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const std::string t = line.substr(first);
    const bool starts_row = t.rfind("--", 0) == 0 || (t.size() > 4 && t[0] == '-' && t[2] == ',');
    if (starts_row && first <= 6) {
      const std::size_t at = t.find("--");
      current = t.substr(at, t.find(' ', at) - at);
      rows[current] = t;
    } else if (!current.empty() && first > 6) {
      rows[current] += " " + t;
    } else {
      current.clear();
    }
  }
  return rows;
}

struct RunCommand {
  const char* scenario;
  std::vector<std::string> words;  // before --help
};

const std::vector<RunCommand>& RunCommands() {
  static const std::vector<RunCommand> commands = {
      {"collective", {"allreduce"}}, {"pipeline", {"pipeline"}}, {"tp", {"tp-mlp"}},
      {"zero", {"zero"}},            {"3d", {"3d"}},             {"moe", {"moe"}},
      {"test-rectangle", {"test-rectangle"}}};
  return commands;
}

TEST(ScenarioFlags, EveryParameterHelpLineShowsTheSpecsDefaultUnitAndRange) {
  for (const RunCommand& command : RunCommands()) {
    const ScenarioSpec& spec = cli::ScenarioSpecOf(command.scenario);
    std::vector<std::string> words = command.words;
    words.push_back("--help");
    const std::map<std::string, std::string> rows = HelpRows(InProcess(cli::RunMain, words));
    for (const ParamSpec& p : spec.params) {
      if (!p.cli) continue;
      SCOPED_TRACE(spec.name + "." + p.name);
      const std::string flag = "--" + cli::FlagNameOf(p);
      ASSERT_EQ(rows.count(flag), 1u) << "run " << command.words[0] << " --help has no " << flag;
      const std::string& row = rows.at(flag);
      if (p.short_flag != 0) EXPECT_EQ(row.rfind(std::string("-") + p.short_flag + ", ", 0), 0u) << row;
      if (p.type == ParamType::kBool) continue;  // a switch: given, it turns the default over
      EXPECT_NE(row.find(ParamDefaultText(p)), std::string::npos) << row;
      EXPECT_NE(row.find("(default: " + p.default_text), std::string::npos) << row;
      if (!p.unit.empty()) EXPECT_NE(row.find("; " + p.unit), std::string::npos) << row;
    }
  }
}

TEST(ScenarioFlags, TheLabLoaderUsesTheSpecsDefaultsAndRanges) {
  for (const ScenarioSpec* lab : LabScenarios()) {
    const ScenarioSpec& spec = *lab;
    const ScenarioParams defaults(spec);
    const LabValues values = LabParamValues(spec.name, {});
    for (const ParamSpec& p : spec.params) {
      SCOPED_TRACE(spec.name + "." + p.name);
      const ParamSpec* param = LabSettableParam(spec, p.name);
      if (!p.lab) {  // a lab may not set it (elastic's checkpoint_dir: a path of this machine)
        EXPECT_EQ(param, nullptr);
        continue;
      }
      ASSERT_NE(param, nullptr);
      EXPECT_EQ(LabParamSpecText(LabParamDefault(*param)), p.default_text);
      const bool numeric = p.type == ParamType::kInteger || p.type == ParamType::kNumber ||
                           p.type == ParamType::kSize || p.type == ParamType::kCount;
      if (numeric && p.default_text != "0" && p.default_text != p.auto_word) {
        EXPECT_EQ(values.at(p.name), defaults.Number(p.name));  // "0" defaults follow others
      }
      if (p.type != ParamType::kInteger) continue;
      // Just outside the range, in a lab file: the loader names the field and the bound.
      for (const double outside : {p.min - 1, p.max + 1}) {
        if (!std::isfinite(outside)) continue;
        const std::string number = std::to_string(static_cast<long long>(outside));
        const std::string text = "format = 1\ntitle = \"t\"\nminutes = 1\ngoals = [\"g\"]\n"
                                 "[[step]]\nid = \"s\"\ntitle = \"s\"\ntext = \"s\"\n"
                                 "scenario = \"" + spec.name + "\"\n[step.params]\n" + p.name +
                                 " = " + number + "\n";
        const LabLoadResult r = ReadLabText(text, "/nonexistent/range/lab.toml");
        const std::string bound = outside < p.min ? "must be at least " : "must be at most ";
        EXPECT_NE(r.ProblemsText().find("step[1].params." + p.name + ": " + bound), std::string::npos)
            << r.ProblemsText();
      }
    }
  }
}

TEST(ScenarioFlags, ATestScenarioIsInRunHelpRunsAndIsAcceptedInALab) {
  const std::string help = InProcess(cli::RunMain, {"--help"});
  EXPECT_NE(help.find("  test-rectangle  a scenario only the cli test registers"), std::string::npos)
      << help;
  for (const ScenarioSpec& s : Scenarios()) EXPECT_NE(help.find("  " + s.name + " "), std::string::npos) << s.name;

  const std::string out = InProcess(cli::RunMain, {"test-rectangle", "--width", "5"});
  EXPECT_NE(out.find("area = 20 cells"), std::string::npos) << out;
  EXPECT_THROW(InProcess(cli::RunMain, {"test-rectangle", "--width", "0"}), Error);

  const std::string lab =
      "format = 1\ntitle = \"Rectangles\"\nminutes = 1\ngoals = [\"measure\"]\n"
      "[[step]]\nid = \"r\"\ntitle = \"r\"\ntext = \"r\"\nscenario = \"test-rectangle\"\n"
      "locked = [\"tall\"]\n"
      "[step.params]\nwidth = 6\ntall = 7\n"
      "[[step.variant]]\nid = \"wide\"\n[step.variant.params]\nwidth = 10\n"
      "[[step.question]]\nid = \"q\"\nprompt = \"area?\"\nexpected = \"width * tall\"\n"
      "[[step.question]]\nid = \"m\"\nprompt = \"wide area?\"\nmeasured = \"wide.area\"\n";
  const LabLoadResult r = ReadLabText(lab, "/nonexistent/rect/lab.toml");
  ASSERT_TRUE(r.ok()) << r.ProblemsText();
  const LabStep& step = r.lab.steps.at(0);
  EXPECT_EQ(step.locked, std::vector<std::string>{"height"});  // the old spelling, stored new
  const LabStepValues v = RunLabStep(step);
  EXPECT_EQ(v.values.at("area"), 42);
  EXPECT_EQ(v.values.at("wide.area"), 70);
  EXPECT_EQ(v.values.at("tall"), 7);

  const LabLoadResult bad = ReadLabText(
      "format = 1\ntitle = \"t\"\nminutes = 1\ngoals = [\"g\"]\n[[step]]\nid = \"r\"\n"
      "title = \"r\"\ntext = \"r\"\nscenario = \"test-rectangle\"\n[step.params]\nwidth = 101\n",
      "/nonexistent/rect/lab.toml");
  EXPECT_NE(bad.ProblemsText().find("lab.toml:11: step[1].params.width: must be at most 100 (got 101)"),
            std::string::npos)
      << bad.ProblemsText();
}

// --- the real binary: notices and errors on stderr, exit codes ---------------

test_util::ProgramResult RunCli(const std::vector<std::string>& args) {
  test_util::TempDir dir;
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

TEST(ScenarioFlags, OldSpellingsStillWorkWithANotice) {
  struct Case {
    std::vector<std::string> args;
    std::string notice;
    std::string in_output;
  };
  const std::vector<Case> cases = {
      {{"run", "zero", "--stage", "1", "--json"}, "--stage is now --zero-stage", "\"stage\": 1"},
      {{"run", "3d", "--zero", "1", "--json"}, "--zero is now --zero-stage", "\"zero\": 1"},
      {{"memory", "--stage", "2"}, "--stage is now --zero-stage", "<- --zero-stage 2"},
      {{"memory", "-n", "8"}, "-n is now --ranks", "on N = 8 GPUs"},
      {{"plan", "--gpus", "64", "--topology", "8x-dgx-a100-ib", "--top", "1"},
       "--gpus is now --ranks", "on 64 GPUs of 8x-dgx-a100-ib"},
      {{"run", "allreduce", "--dtype", "f16", "--size", "1K"}, "", "half"},
  };
  for (const Case& c : cases) {
    const auto r = RunCli(c.args);
    SCOPED_TRACE(c.args[0] + " " + c.args[1] + " " + c.args[2]);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (c.notice.empty()) {
      EXPECT_EQ(r.err, "");
    } else {
      EXPECT_EQ(r.err, "shardlab-cli: " + c.notice + "; the old spelling goes in the next release\n");
    }
    EXPECT_NE(r.out.find(c.in_output), std::string::npos) << r.out.substr(0, 2000);
  }
}

TEST(ScenarioFlags, ABadValueIsOneLineAndExitTwoNamingTheFlag) {
  for (const RunCommand& command : RunCommands()) {
    if (std::string(command.scenario) == "test-rectangle") continue;  // not in the binary
    const ScenarioSpec& spec = cli::ScenarioSpecOf(command.scenario);
    for (const ParamSpec& p : spec.params) {
      if (!p.cli || p.type == ParamType::kBool || p.type == ParamType::kText ||
          p.type == ParamType::kTopology)
        continue;
      std::string bad = "nonsense";
      std::string why = "";
      if (p.type == ParamType::kInteger && std::isfinite(p.max)) {
        bad = std::to_string(static_cast<long long>(p.max) + 1);
        why = "must be at most ";
      }
      std::vector<std::string> args = {"run"};
      args.insert(args.end(), command.words.begin(), command.words.end());
      args.push_back("--" + cli::FlagNameOf(p));
      args.push_back(bad);
      const auto r = RunCli(args);
      SCOPED_TRACE(spec.name + "." + p.name + " = " + bad);
      EXPECT_EQ(r.exit_code, 2) << r.out.substr(0, 500);
      const std::string prefix = "shardlab-cli: error: --" + cli::FlagNameOf(p) + ": " + why;
      EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
}

}  // namespace
}  // namespace shardlab

// --- a scenario with a plan, in one file: run, --json, --plan, --trace, a lab -

namespace shardlab {
namespace {

// A scenario of this test binary alone that runs a plan: a ring all-reduce
// of `size` bytes over `ranks` GPUs of a uniform 100 GB/s ring with 1 us
// hops, so its time has a closed form the test checks: 2(n-1)(1 us + M/(n
// 100 GB/s)).
const bool kPlanScenarioRegistered = [] {
  ScenarioSpec s;
  s.name = "test-ring";
  s.title = "Test ring";
  s.summary = "a plan-running scenario only the cli test registers";
  s.params = {Param("ranks", ParamType::kInteger, "4", "GPUs in the ring").Range(2, 16),
              Param("size", ParamType::kSize, "1M", "bytes per rank").Range(4, 1 << 30)};
  s.measured = {{"time_us", "us", "the run's span"}, {"formula_us", "us", "2(n-1)(a + M/(nB))"}};
  s.prepare = [](const ScenarioParams& p, const Topology* machine) {
    auto out = std::make_unique<Prepared>();
    const int n = static_cast<int>(p.Int("ranks"));
    out->topology = machine != nullptr ? *machine : MakeUniformRing(n, 100.0, 1000);
    CollectiveParams c;
    c.ranks = n;
    c.count = static_cast<std::int64_t>(p.Size("size") / 4);
    out->plan = BuildCollective(c);
    out->title = std::to_string(n) + " ranks";
    return out;
  };
  s.summarize = [](const Prepared&, const FinishedRun& run, Summary& out) {
    const double n = run.plan.num_ranks;
    const double m = static_cast<double>(run.plan.buffers.at(0).count) * 4;
    out.values["time_us"] = RunSpanNs(run.events) / 1e3;
    out.values["formula_us"] = 2 * (n - 1) * (1000 + m / n / 100.0) / 1e3;
    out.line = "ring of " + std::to_string(run.plan.num_ranks);
    out.verdict = NotChecked("a test scenario");
  };
  RegisterScenario(std::move(s));
  return true;
}();

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ScenarioRun, APlanScenarioInOneFileRunsWithJsonPlanAndTrace) {
  ASSERT_TRUE(kPlanScenarioRegistered);
  const std::string help = InProcess(cli::RunMain, {"test-ring", "--help"});
  for (const char* flag : {"--ranks", "--size", "--json", "--trace", "--plan"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag << "\n" << help;

  const std::string text = InProcess(cli::RunMain, {"test-ring", "--ranks", "8"});
  EXPECT_NE(text.find("# ShardLab: Test ring: 8 ranks, backend sim"), std::string::npos) << text;
  EXPECT_NE(text.find("time_us = "), std::string::npos) << text;

  const std::string json = InProcess(cli::RunMain, {"test-ring", "--ranks", "8", "--json"});
  const JsonValue v = ParseJson(json, "run --json");
  EXPECT_EQ(v.Find("scenario")->string, "test-ring");
  EXPECT_EQ(v.Find("params")->Find("ranks")->string, "8");
  const double time_us = v.Find("values")->Find("time_us")->number;
  const double formula_us = v.Find("values")->Find("formula_us")->number;
  // The simulator adds nothing to the ring's formula on a uniform ring.
  EXPECT_NEAR(time_us, formula_us, 1e-3 * formula_us);
  EXPECT_EQ(v.Find("units")->Find("time_us")->string, "us");
  EXPECT_EQ(v.Find("steps")->number, 14);  // 2(n-1)
  EXPECT_EQ(v.Find("verdict")->Find("kind")->string, "not checked");

  const std::string plan = InProcess(cli::RunMain, {"test-ring", "--ranks", "2", "--plan"});
  EXPECT_NE(plan.find("send"), std::string::npos) << plan;

  test_util::TempDir dir;
  const std::string trace = (dir.path() / "ring.json").string();
  InProcess(cli::RunMain, {"test-ring", "--trace", trace});
  const JsonValue t = ParseJson(ReadWhole(trace), trace);
  EXPECT_GT(t.Find("traceEvents")->items.size(), 12u);  // 2(n-1) sends and receives per rank, at least

  // A lab runs it too: its quantities are formula variables.
  const LabRunResult r = RunLabScenario("test-ring", {});
  EXPECT_NEAR(r.measured.at("time_us"), r.measured.at("formula_us"), 1e-3 * r.measured.at("formula_us"));
  EXPECT_THROW(InProcess(cli::RunMain, {"test-ring", "--ranks", "1"}), Error);
}

}  // namespace
}  // namespace shardlab
