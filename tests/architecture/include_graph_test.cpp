// The engine's folders and who may include whom, checked on the source
// tree itself: a header pulled in the wrong way fails here, not in review.
//
// The folders form a DAG: follow the includes from folder to folder and
// you never come back. A folder is the first path part under engine/
// ("run/executor.cpp" is in run); under backends/ it is checked twice, once
// with each backend its own folder (backends/sim, backends/cuda, ...; the
// registry, backends/backend_registry.cpp, is in backends) and once with
// all of backends/ as one folder, so neither a cycle between two backends
// nor one that enters backends/ through one backend and leaves through
// another passes. A cycle is printed one edge a line, each with the first
// include that makes it (file:line). The layering that DAG has, top to
// bottom (a folder includes only folders on the lines below its own):
//
//   lab/
//   scenarios/                            every scenario, its spec, the registry
//   compare/  planner/  train/  serving/
//   algorithms/                           the generators
//   verify/  field/                       field/: files from the field (inspect)
//   model/  io/  run/
//   plan/  topology/  launch/
//   core/
//
// backends/ stand beside scenarios/: nothing else of the engine includes
// them (the front ends register them). The registry includes sim/ and mpi/;
// mpi_gpu/ includes cuda/ and mpi/, cuda/ device/, device/ sim/; all but
// mpi_gpu/ include run/ (run/backend.h), and sim/ algorithms/ as well.
//
// Besides the DAG, rules for single edges (those on planner/, compare/,
// io/, scenarios/ and run/'s algorithms/ name edges that once made cycles
// or put collective kinds below the executor, so they cannot come back
// even where they would close no cycle):
//
//   core/      includes nothing else of the engine
//   plan/, topology/  include only core/ and themselves
//   run/       includes no backend (backends include run/backend.h) and no
//              algorithms/ (collective kinds and their table are in plan/:
//              collective_kind.h, collective_def.h)
//   planner/, compare/, io/  include no scenarios/ (the scenarios use them)
//   scenarios/ includes no lab/ (the labs bind to the scenarios)
//   field/     includes only core/, topology/ and io/ (the readers of NCCL's
//              files sit below every consumer: compare/, scenarios/, the app)
//   engine/    includes nothing of app/, ImGui, GLFW or OpenGL
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
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

// Includes of `folder`'s files that reach into any of `forbidden`.
std::vector<std::string> IncludesInto(const std::string& folder, const std::vector<std::string>& forbidden) {
  std::vector<std::string> bad;
  for (const Include& i : IncludesUnder(kEngine / folder))
    for (const std::string& f : forbidden)
      if (StartsWith(i.target, "engine/" + f + "/")) bad.push_back(Where(i));
  return bad;
}

// The folder of an engine-relative path: its first part; under backends/,
// "backends/X" for a backend's files when `split_backends`, else "backends".
std::string FolderOf(const std::string& path, bool split_backends) {
  const std::size_t slash = path.find('/');
  if (slash == std::string::npos) return ".";  // a file directly in engine/
  const std::string first = path.substr(0, slash);
  if (first != "backends" || !split_backends) return first;
  const std::size_t second = path.find('/', slash + 1);
  return second == std::string::npos ? first : path.substr(0, second);
}

// Folder -> folder it includes -> the first include that does it.
using FolderGraph = std::map<std::string, std::map<std::string, Include>>;

FolderGraph FolderGraphOf(const std::vector<Include>& includes, bool split_backends) {
  FolderGraph g;
  for (const Include& i : includes) {
    if (!StartsWith(i.target, "engine/")) continue;
    const std::string from = FolderOf(i.file, split_backends);
    const std::string to = FolderOf(i.target.substr(7), split_backends);
    if (from != to) g[from].emplace(to, i);  // emplace keeps the first
  }
  return g;
}

// One cycle of `g` as its edges, one "a/ -> b/  (engine/file:line includes
// target)" line each; empty when `g` is a DAG. Depth-first search in name
// order, so the same tree always prints the same cycle.
std::vector<std::string> FindCycle(const FolderGraph& g) {
  enum class Mark { kNew, kOnPath, kDone };
  std::map<std::string, Mark> mark;
  std::vector<std::string> path;
  std::vector<std::string> cycle;
  auto edge = [&](const std::string& a, const std::string& b) {
    return a + "/ -> " + b + "/  (" + Where(g.at(a).at(b)) + ")";
  };
  auto visit = [&](auto&& self, const std::string& v) -> bool {
    mark[v] = Mark::kOnPath;
    path.push_back(v);
    const auto out = g.find(v);
    if (out != g.end()) {
      for (const auto& [w, include] : out->second) {
        if (mark[w] == Mark::kOnPath) {  // back to a folder on the path: the cycle is path[w..] -> w
          std::size_t k = 0;
          while (path[k] != w) ++k;
          for (; k + 1 < path.size(); ++k) cycle.push_back(edge(path[k], path[k + 1]));
          cycle.push_back(edge(v, w));
          return true;
        }
        if (mark[w] == Mark::kNew && self(self, w)) return true;
      }
    }
    path.pop_back();
    mark[v] = Mark::kDone;
    return false;
  };
  for (const auto& [v, out] : g)
    if (mark[v] == Mark::kNew && visit(visit, v)) break;
  return cycle;
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

TEST(IncludeGraph, FieldIncludesOnlyCoreTopologyAndIo) {
  ASSERT_TRUE(fs::exists(kEngine / "field" / "field_reader.h"));
  const std::vector<std::string> bad = Violations("field", {"core", "topology", "io", "field"});
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

TEST(IncludeGraph, TheCycleFinderFindsACycleAndPrintsEachEdgeWithItsInclude) {
  // a -> b -> c -> a, and c -> d outside it.
  const std::vector<Include> includes = {{"a/x.h", 3, "engine/b/y.h"},
                                         {"b/y.h", 5, "engine/c/z.h"},
                                         {"c/z.cpp", 7, "engine/a/x.h"},
                                         {"c/z.cpp", 8, "engine/d/w.h"}};
  EXPECT_EQ(FindCycle(FolderGraphOf(includes, true)),
            (std::vector<std::string>{"a/ -> b/  (engine/a/x.h:3 includes engine/b/y.h)",
                                      "b/ -> c/  (engine/b/y.h:5 includes engine/c/z.h)",
                                      "c/ -> a/  (engine/c/z.cpp:7 includes engine/a/x.h)"}));
  EXPECT_TRUE(FindCycle(FolderGraphOf({includes[0], includes[1], includes[3]}, true)).empty());
  // Two backends that include each other's folders through run/ are a cycle
  // only when backends/ is one folder.
  const std::vector<Include> through = {{"run/r.cpp", 1, "engine/backends/sim/s.h"},
                                        {"backends/cuda/c.cpp", 2, "engine/run/r.h"}};
  EXPECT_TRUE(FindCycle(FolderGraphOf(through, true)).empty());
  EXPECT_EQ(FindCycle(FolderGraphOf(through, false)).size(), 2u);
  EXPECT_EQ(FolderOf("backends/backend_registry.cpp", true), "backends");
  EXPECT_EQ(FolderOf("backends/mpi/mpi_options.h", true), "backends/mpi");
}

TEST(IncludeGraph, TheEngineFoldersFormADag) {
  const std::vector<Include> includes = IncludesUnder(kEngine);
  for (const bool split_backends : {true, false}) {
    const FolderGraph g = FolderGraphOf(includes, split_backends);
    EXPECT_GT(g.size(), 10u);  // the folders were found at all
    const std::vector<std::string> cycle = FindCycle(g);
    EXPECT_TRUE(cycle.empty()) << "a cycle of folders" << (split_backends ? "" : " (backends/ as one folder)")
                               << ":\n"
                               << Lines(cycle);
  }
}

TEST(IncludeGraph, PlannerAndCompareIncludeNoScenarios) {
  std::vector<std::string> bad = IncludesInto("planner", {"scenarios"});
  for (const std::string& b : IncludesInto("compare", {"scenarios"})) bad.push_back(b);
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

TEST(IncludeGraph, IoIncludesNoScenarios) {
  const std::vector<std::string> bad = IncludesInto("io", {"scenarios"});
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

TEST(IncludeGraph, ScenariosIncludeNoLab) {
  const std::vector<std::string> bad = IncludesInto("scenarios", {"lab"});
  EXPECT_TRUE(bad.empty()) << Lines(bad);
}

TEST(IncludeGraph, RunIncludesNoAlgorithms) {
  const std::vector<std::string> bad = IncludesInto("run", {"algorithms"});
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
