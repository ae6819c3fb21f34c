// The engine's folders and who may include whom, checked on the source
// tree itself: a header pulled in the wrong way fails here, not in review.
//
//   core/      includes nothing else of the engine
//   run/       includes no backend (backends include run/backend.h)
//   engine/    includes nothing of app/, ImGui, GLFW or OpenGL
//   plan/, topology/  include only core/ and themselves
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kEngine = fs::path(SHARDLAB_TEST_DATA_DIR).parent_path().parent_path() / "engine";

struct Include {
  std::string file;  // engine-relative: "run/executor.cpp"
  int line = 0;
  std::string target;  // as written: "engine/plan/plan.h", "imgui.h"
};

std::vector<Include> IncludesUnder(const fs::path& root) {
  std::vector<Include> all;
  const std::regex include_re(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu")) continue;
    std::ifstream in(entry.path());
    std::string text;
    int line = 0;
    while (std::getline(in, text)) {
      ++line;
      std::smatch m;
      if (std::regex_search(text, m, include_re))
        all.push_back({fs::relative(entry.path(), kEngine).generic_string(), line, m[1].str()});
    }
  }
  return all;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string Where(const Include& i) {
  return "engine/" + i.file + ":" + std::to_string(i.line) + " includes " + i.target;
}

// Engine includes of `file`'s folder that leave the folders it may use.
std::vector<std::string> Violations(const std::string& folder,
                                    const std::vector<std::string>& allowed) {
  std::vector<std::string> bad;
  for (const Include& i : IncludesUnder(kEngine / folder)) {
    if (!StartsWith(i.target, "engine/")) continue;
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || StartsWith(i.target, "engine/" + a + "/");
    if (!ok) bad.push_back(Where(i));
  }
  return bad;
}

std::string Lines(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += "  " + s + "\n";
  return out;
}

TEST(IncludeGraph, TheSourceTreeIsWhereTheTestThinksItIs) {
  ASSERT_TRUE(fs::exists(kEngine / "core" / "error.h")) << kEngine;
  // The reader finds includes at all (a broken regex would pass every rule).
  EXPECT_GT(IncludesUnder(kEngine / "run").size(), 20u);
}

TEST(IncludeGraph, CoreIncludesNothingElseOfTheEngine) {
  const std::vector<std::string> bad = Violations("core", {"core"});
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

TEST(IncludeGraph, PlanAndTopologyIncludeOnlyCore) {
  std::vector<std::string> bad = Violations("plan", {"core", "plan"});
  for (const std::string& b : Violations("topology", {"core", "topology"})) bad.push_back(b);
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

TEST(IncludeGraph, RunIncludesNoBackend) {
  std::vector<std::string> bad;
  for (const Include& i : IncludesUnder(kEngine / "run"))
    if (StartsWith(i.target, "engine/backends/")) bad.push_back(Where(i));
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

TEST(IncludeGraph, TheEngineIncludesNoAppAndNoGuiLibrary) {
  std::vector<std::string> bad;
  const std::regex gui(R"(^(app/|imgui|GLFW/|GL/|glad/|backends/imgui))");
  for (const Include& i : IncludesUnder(kEngine))
    if (std::regex_search(i.target, gui)) bad.push_back(Where(i));
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

}  // namespace
