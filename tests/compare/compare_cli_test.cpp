// shardlab-cli compare end to end: the JSON numbers equal the engine's,
// and every bad input is one line on stderr and exit 2.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/compare/compare.h"
#include "engine/core/json_parse.h"
#include "engine/io/trace_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::Describe;
using test_util::ProgramResult;
using test_util::RunProgram;
using test_util::TempDir;

const std::string kCli = SHARDLAB_CLI_PATH;
const std::string kRing = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200-ring8-64M-warm.json";
const std::string kPipe = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200-1f1b.json";

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST(CompareCli, PhasesInJsonEqualTheSpansOfTheTwoTraces) {
  TempDir dir;
  const std::string sim = (dir.path() / "sim.json").string();
  const ProgramResult run = RunProgram(
      kCli, {"run", "allreduce", "--ranks", "8", "--size", "64M", "--timing-only", "--trace", sim}, dir.path());
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  // Simulated first: compare puts the measurement in A anyway.
  const ProgramResult r = RunProgram(kCli, {"compare", sim, kRing, "--json"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  JsonParser parser(r.out, "stdout");
  const JsonValue doc = parser.ParseValue();
  const LoadedTrace measured = ReadChromeTraceFile(kRing);
  const LoadedTrace model = ReadChromeTraceFile(sim);
  for (const JsonValue& row : doc.Find("phases")->items) {
    const std::string name = row.Find("name")->string;
    auto span = [&](const LoadedTrace& t) {
      double first = 1e300, last = -1e300;
      for (std::size_t i = 0; i < t.events.size(); ++i) {
        if (name != PhaseName(t.plan.ops[i].tags.phase)) continue;
        first = std::min(first, t.events[i].start_ns);
        last = std::max(last, t.events[i].end_ns);
      }
      return (last - first) / 1000.0;
    };
    EXPECT_NEAR(row.Find("a_us")->number, span(measured), 1e-6) << name;
    EXPECT_NEAR(row.Find("b_us")->number, span(model), 1e-6) << name;
  }
  EXPECT_EQ(doc.Find("phases")->items.size(), 2u);
  EXPECT_NE(doc.Find("a")->string.find("cuda-event"), std::string::npos);
}

TEST(CompareCli, TracesOfTwoPlansAreRefusedWithTheFirstDifference) {
  TempDir dir;
  const ProgramResult r = RunProgram(kCli, {"compare", kRing, kPipe}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("not runs of one plan: op 0: A has send of 8 MiB on rank 0"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CompareCli, ATruncatedOrForeignFileIsOneLineAndExitTwo) {
  TempDir dir;
  std::ifstream in(kRing, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = (dir.path() / "cut.json").string();
  std::ofstream(truncated, std::ios::binary) << text.substr(0, text.size() / 2);
  const std::string foreign = (dir.path() / "perfetto.json").string();
  std::ofstream(foreign) << R"({"traceEvents":[{"ph":"X","name":"kernel","pid":1,"tid":2,"ts":0,"dur":3}]})";
  const std::string empty = (dir.path() / "empty.json").string();
  std::ofstream(empty) << "";
  struct Case { std::string file, says; };
  for (const Case& c : {Case{truncated, "cut.json:"}, Case{foreign, "not a ShardLab trace"},
                        Case{empty, "the file is empty"}, Case{"/nonexistent.json", "cannot open"}}) {
    const ProgramResult r = RunProgram(kCli, {"compare", kRing, c.file}, dir.path());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << Describe(r);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  const ProgramResult one = RunProgram(kCli, {"compare", kRing}, dir.path());
  EXPECT_EQ(one.exit_code, 2) << Describe(one);
}

}  // namespace
}  // namespace shardlab
