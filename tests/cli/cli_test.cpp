// End-to-end tests of shardlab-cli: each test runs the real binary
// (SHARDLAB_CLI_PATH) with posix_spawn, its stdout and stderr sent to files,
// and checks what a user would see: the table, the JSON, the trace file,
// the step-by-step chunk state, and one clear error line with exit code 2
// for every kind of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

// --- Running the binary -------------------------------------------------------

using CliResult = test_util::ProgramResult;
using test_util::TempDir;

std::string ReadFile(const fs::path& path) { return test_util::ReadWholeFile(path); }

CliResult RunCli(const std::vector<std::string>& args) {
  TempDir dir;
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

std::string Describe(const std::vector<std::string>& args, const CliResult& r) {
  std::string text = "shardlab-cli";
  for (const std::string& a : args) text += " " + a;
  return text + "\n  exit " + std::to_string(r.exit_code) + " signal " + std::to_string(r.signal) +
         "\n  stdout: " + r.out.substr(0, 2000) + "\n  stderr: " + r.err;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- JSON: the shared strict reader (tests/common/json_reader.h) ---------------

using test_util::Json;
using test_util::ParseJson;

TEST(JsonReader, ReadsWhatTheTestsNeedAndRejectsGarbage) {
  const Json j = ParseJson(R"({"a": [1, -2.5e3, true, null], "b": {"c": "x\"y"}})");
  EXPECT_EQ(j["a"].items.size(), 4u);
  EXPECT_EQ(j["a"].items[1].number, -2500);
  EXPECT_EQ(j["b"]["c"].text, "x\"y");
  EXPECT_THROW(ParseJson(R"({"a": 1,})"), std::runtime_error);
  EXPECT_THROW(ParseJson(R"({"a": 01})"), std::runtime_error);
  EXPECT_THROW(ParseJson(R"({"a": 1} x)"), std::runtime_error);
  EXPECT_THROW(ParseJson(R"({"a": nan})"), std::runtime_error);
}

// --- run ------------------------------------------------------------------------

const std::vector<std::string> kIssueRun = {"run",      "allreduce", "--algo",     "ring",
                                            "--ranks",  "8",         "--size",     "64M",
                                            "--topology", "dgx-a100", "--backend", "sim"};

TEST(CliRun, PrintsTimeBandwidthStepsAndACheckedResult) {
  const CliResult r = RunCli(kIssueRun);
  ASSERT_EQ(r.exit_code, 0) << Describe(kIssueRun, r);
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(Contains(r.out, "busbw")) << r.out;
  EXPECT_TRUE(Contains(r.out, "algbw")) << r.out;
  EXPECT_TRUE(Contains(r.out, "steps 14")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
  // The data row: size, count, type, redop, root, time, algbw, busbw, #wrong.
  const std::regex row(
      R"(^\s+67108864\s+16777216\s+float\s+sum\s+-1\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+0$)");
  bool found = false;
  for (const std::string& line : Lines(r.out)) found = found || std::regex_match(line, row);
  EXPECT_TRUE(found) << r.out;
}

TEST(CliRun, JsonHoldsTheDocumentedFields) {
  std::vector<std::string> args = kIssueRun;
  args[7] = "4M";
  args.push_back("--json");
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  for (const char* key : {"scenario", "algo", "ranks", "bytes", "backend", "topology", "time_us",
                          "algbw_gbps", "busbw_gbps", "steps", "correct", "max_abs_err",
                          "events"}) {
    EXPECT_TRUE(j.Has(key)) << key << " missing in " << r.out;
  }
  EXPECT_EQ(j["scenario"].text, "allreduce");
  EXPECT_EQ(j["algo"].text, "ring");
  EXPECT_EQ(j["ranks"].number, 8);
  EXPECT_EQ(j["bytes"].number, 4 << 20);
  EXPECT_EQ(j["backend"].text, "sim");
  EXPECT_EQ(j["topology"].text, "dgx-a100");
  EXPECT_EQ(j["steps"].number, 14);
  EXPECT_EQ(j["correct"].type, Json::Type::kBool);
  EXPECT_TRUE(j["correct"].boolean);
  EXPECT_EQ(j["max_abs_err"].number, 0);
  EXPECT_GT(j["time_us"].number, 0);
  EXPECT_GT(j["busbw_gbps"].number, j["algbw_gbps"].number);  // factor 2(n-1)/n = 1.75
  EXPECT_NEAR(j["busbw_gbps"].number / j["algbw_gbps"].number, 1.75, 1e-6);
  EXPECT_EQ(j["events"].number, 224);  // 14 steps x 8 ranks x (send + recv)
}

TEST(CliRun, TimingOnlyReportsTheResultAsNotChecked) {
  const std::vector<std::string> args = {"run", "allreduce", "--size", "1G", "--timing-only",
                                         "--json"};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["correct"].type, Json::Type::kNull);
  EXPECT_EQ(j["max_abs_err"].type, Json::Type::kNull);
  EXPECT_GT(j["busbw_gbps"].number, 0);

  const CliResult human = RunCli({"run", "allreduce", "--size", "1M", "--timing-only"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(Contains(human.out, "# Result: not checked")) << human.out;
  EXPECT_TRUE(Contains(human.out, "N/A")) << human.out;
}

TEST(CliRun, TraceWritesAChromeTraceFile) {
  TempDir dir;
  const std::string path = (dir.path() / "out.json").string();
  const std::vector<std::string> args = {"run", "allreduce", "--size", "1M", "--trace", path};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const std::string trace = ReadFile(path);
  // A Chrome trace JSON object: {"traceEvents": [...], ...} (key order is free).
  EXPECT_EQ(trace.rfind("{\"", 0), 0u) << trace.substr(0, 200);
  const Json j = ParseJson(trace);
  ASSERT_TRUE(j.Has("traceEvents")) << trace.substr(0, 200);
  EXPECT_GE(j["traceEvents"].items.size(), 224u);  // a slice per event, plus metadata
}

TEST(CliRun, StepShowsEveryRanksChunksAfterEachOfThe14Steps) {
  const std::vector<std::string> args = {"run", "allreduce", "--algo", "ring", "--ranks", "8",
                                         "--size", "1K", "--topology", "dgx-a100", "--step"};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const std::vector<std::string> lines = Lines(r.out);
  const std::regex header(R"(^step ([0-9]+)/14\b.*)");
  std::vector<int> blocks;
  std::vector<std::string> last_block;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, header)) continue;
    blocks.push_back(std::stoi(m[1]));
    // The block: an optional "sends:" line, then GPU0..GPU7 in order.
    std::size_t k = i + 1;
    if (k < lines.size() && Contains(lines[k], "sends:")) ++k;
    last_block.clear();
    for (int g = 0; g < 8; ++g, ++k) {
      ASSERT_LT(k, lines.size());
      EXPECT_EQ(lines[k].rfind("  GPU" + std::to_string(g) + ": [", 0), 0u) << lines[k];
      last_block.push_back(lines[k]);
    }
  }
  ASSERT_EQ(blocks.size(), 15u) << r.out;  // the inputs, then steps 1..14
  for (int s = 0; s <= 14; ++s) EXPECT_EQ(blocks[static_cast<std::size_t>(s)], s);
  // After the last step every chunk on GPU0 holds the sum of all 8 inputs.
  EXPECT_EQ(last_block[0], "  GPU0: [A0..7, B0..7, C0..7, D0..7, E0..7, F0..7, G0..7, H0..7]");
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
}

TEST(CliRun, PlanDumpsTheOpsBeforeTheResult) {
  const CliResult r = RunCli({"run", "allreduce", "--ranks", "4", "--size", "1K", "--plan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "plan: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "step 0:")) << r.out;
  EXPECT_LT(r.out.find("plan: "), r.out.find("# Result:"));
}

TEST(CliRun, RingOrderIsChosenOrTakenAsGiven) {
  const CliResult chosen = RunCli({"run", "allreduce", "--topology", "dgx1-v100", "--size", "1M",
                                   "--json"});
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  const Json a = ParseJson(chosen.out);
  ASSERT_EQ(a["ring_order"].items.size(), 8u);
  EXPECT_TRUE(a["correct"].boolean);

  const CliResult given = RunCli({"run", "allreduce", "--ranks", "4", "--size", "1K",
                                  "--ring-order", "0,2,1,3", "--json"});
  ASSERT_EQ(given.exit_code, 0) << given.err;
  const Json b = ParseJson(given.out);
  ASSERT_EQ(b["ring_order"].items.size(), 4u);
  EXPECT_EQ(b["ring_order"].items[1].number, 2);
  EXPECT_TRUE(b["correct"].boolean);
}

/// Every collective with every algorithm the engine has for it.
struct KindAlgo {
  const char* kind;
  const char* algo;
};

void PrintTo(const KindAlgo& p, std::ostream* out) { *out << p.kind << "/" << p.algo; }

class CliEveryCollective : public ::testing::TestWithParam<KindAlgo> {};

TEST_P(CliEveryCollective, RunsCorrectlyInRunAndSweep) {
  const KindAlgo p = GetParam();
  const std::vector<std::string> run = {"run", p.kind, "--algo", p.algo, "--ranks", "8",
                                        "--size", "256K", "--json"};
  const CliResult r = RunCli(run);
  ASSERT_EQ(r.exit_code, 0) << Describe(run, r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["scenario"].text, p.kind);
  EXPECT_TRUE(j["correct"].boolean) << r.out;
  EXPECT_GT(j["busbw_gbps"].number, 0);

  // Odd sizes and rank counts leave uneven chunks; a rooted kind gets root 2.
  const std::vector<std::string> odd = {"run", p.kind, "--algo", p.algo, "--ranks", "5",
                                        "--size", "1004", "--root", "2", "--dtype", "f16"};
  const CliResult o = RunCli(odd);
  EXPECT_EQ(o.exit_code, 0) << Describe(odd, o);
  EXPECT_TRUE(Contains(o.out, "# Result: correct")) << o.out;

  const std::vector<std::string> sweep = {"sweep", p.kind, "--algo", p.algo, "-b", "8",
                                          "-e", "1M", "-f", "4", "--ranks", "8"};
  const CliResult s = RunCli(sweep);
  ASSERT_EQ(s.exit_code, 0) << Describe(sweep, s);
  EXPECT_TRUE(Contains(s.out, "# Out of bounds values : 0 OK")) << s.out;
  EXPECT_TRUE(Contains(s.out, "# Avg bus bandwidth    : ")) << s.out;
}

INSTANTIATE_TEST_SUITE_P(
    KindsAndAlgorithms, CliEveryCollective,
    ::testing::Values(KindAlgo{"allreduce", "ring"}, KindAlgo{"allreduce", "tree"},
                      KindAlgo{"reducescatter", "ring"}, KindAlgo{"allgather", "ring"},
                      KindAlgo{"broadcast", "ring"}, KindAlgo{"reduce", "ring"},
                      KindAlgo{"alltoall", "direct"}),
    [](const ::testing::TestParamInfo<KindAlgo>& param_info) {
      return std::string(param_info.param.kind) + "_" + param_info.param.algo;
    });

// --- sweep ----------------------------------------------------------------------

/// The data rows of a table: lines that are not comments.
std::vector<std::string> TableRows(const std::string& out) {
  std::vector<std::string> rows;
  for (const std::string& line : Lines(out)) {
    if (!line.empty() && line[0] != '#') rows.push_back(line);
  }
  return rows;
}

TEST(CliSweep, PrintsARowPerSizeAndTheAverageBusBandwidth) {
  const std::vector<std::string> args = {"sweep", "allreduce", "-b", "8", "-e", "1M", "-f", "2",
                                         "--ranks", "8", "--topology", "dgx-a100"};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const std::vector<std::string> rows = TableRows(r.out);
  ASSERT_EQ(rows.size(), 18u) << r.out;  // 8 B, 16 B, ..., 1 MiB
  EXPECT_EQ(rows.front().substr(0, 12), "           8");
  EXPECT_EQ(rows.back().substr(0, 12), "     1048576");
  for (const char* column : {"size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                             "#wrong"}) {
    EXPECT_TRUE(Contains(r.out, column)) << column;
  }
  EXPECT_TRUE(Contains(r.out, "# Out of bounds values : 0 OK")) << r.out;
  const std::regex avg(R"(# Avg bus bandwidth    : [0-9.e+]+)");
  EXPECT_TRUE(std::regex_search(r.out, avg)) << r.out;
}

TEST(CliSweep, RunsTheIssuesRangeTimingOnly) {
  const std::vector<std::string> args = {"sweep", "allreduce", "-b", "8", "-e", "1G", "-f", "2",
                                         "--ranks", "8", "--topology", "dgx-a100", "--timing-only"};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const std::vector<std::string> rows = TableRows(r.out);
  ASSERT_EQ(rows.size(), 28u) << r.out;  // 2^3 .. 2^30
  for (const std::string& row : rows) EXPECT_TRUE(Contains(row, "N/A")) << row;
  EXPECT_TRUE(Contains(r.out, "# Out of bounds values : not checked")) << r.out;
}

TEST(CliSweep, TimesSizesAboveVerifyMaxWithoutCheckingThem) {
  const CliResult r = RunCli({"sweep", "allreduce", "-b", "1K", "-e", "64K", "-f", "4",
                              "--verify-max", "256K"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> rows = TableRows(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;  // 1K 4K 16K 64K; 8 ranks x 64K > 256K
  EXPECT_FALSE(Contains(rows[2], "N/A")) << rows[2];
  EXPECT_TRUE(Contains(rows[3], "N/A")) << rows[3];
  EXPECT_TRUE(Contains(r.out, "timed only")) << r.out;
}

TEST(CliSweep, JsonHasARowPerSize) {
  const CliResult r = RunCli({"sweep", "allgather", "-b", "1K", "-e", "1M", "-f", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = ParseJson(r.out);
  ASSERT_EQ(j["rows"].items.size(), 6u);
  EXPECT_EQ(j["rows"].items[0]["bytes"].number, 1024);
  EXPECT_TRUE(j["rows"].items[5]["correct"].boolean);
  EXPECT_GT(j["avg_busbw_gbps"].number, 0);
}

TEST(CliSweep, AddsStepBytesWhenTheFactorIsOne) {
  const CliResult r = RunCli({"sweep", "allreduce", "-b", "1K", "-e", "4K", "-f", "1", "-i",
                              "1K", "--ranks", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(TableRows(r.out).size(), 4u) << r.out;
}

// --- topo -----------------------------------------------------------------------

TEST(CliTopo, ListsThePresets) {
  const CliResult r = RunCli({"topo", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "dgx-a100")) << r.out;
  EXPECT_TRUE(Contains(r.out, "dgx1-v100")) << r.out;
}

TEST(CliTopo, PrintsAPresetAndItsRing) {
  const CliResult r = RunCli({"topo", "--preset", "dgx1-v100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "GPU")) << r.out;
  EXPECT_TRUE(Contains(r.out, "--ring-order auto")) << r.out;
}

TEST(CliTopo, WritesATopologyFileThatRunAndTopoReadBack) {
  TempDir dir;
  const CliResult toml = RunCli({"topo", "--preset", "dgx-a100", "--toml"});
  ASSERT_EQ(toml.exit_code, 0) << toml.err;
  const fs::path file = dir.path() / "box.toml";
  std::ofstream(file) << toml.out;

  const CliResult shown = RunCli({"topo", "--topology", file.string()});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  const CliResult run = RunCli({"run", "allreduce", "--topology", file.string(), "--size", "1M"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "# Result: correct")) << run.out;
}

// --- help and version -----------------------------------------------------------

TEST(CliHelp, EveryCommandHasHelpAndTheToolAVersion) {
  for (const char* command : {"run", "sweep", "topo", "demo"}) {
    const CliResult r = RunCli({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_EQ(r.out.rfind(std::string("Usage: shardlab-cli ") + command, 0), 0u) << r.out;
    EXPECT_EQ(r.err, "");
  }
  const CliResult top = RunCli({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_TRUE(Contains(top.out, "Commands:")) << top.out;
  const CliResult version = RunCli({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("shardlab-cli ", 0), 0u) << version.out;
}

// --- bad input ------------------------------------------------------------------

/// Exit code 2, exactly one "shardlab-cli: error: ..." line on stderr that
/// contains `expected`, and no sign of a crash.
void ExpectUsageError(const std::vector<std::string>& args, const std::string& expected) {
  const CliResult r = RunCli(args);
  const std::string what = Describe(args, r);
  EXPECT_EQ(r.signal, 0) << what;
  EXPECT_EQ(r.exit_code, 2) << what;
  EXPECT_EQ(r.err.rfind("shardlab-cli: error: ", 0), 0u) << what;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what;
  EXPECT_TRUE(Contains(r.err, expected)) << "expected '" << expected << "'\n" << what;
  EXPECT_FALSE(Contains(r.err, "terminate")) << what;
  EXPECT_FALSE(Contains(r.err, "Aborted")) << what;
}

TEST(CliErrors, RanksOutOfRange) {
  ExpectUsageError({"run", "allreduce", "--ranks", "0"}, "--ranks: must be at least 1 (got 0)");
  ExpectUsageError({"run", "allreduce", "--ranks", "-3"}, "--ranks: must be at least 1 (got -3)");
  ExpectUsageError({"run", "allreduce", "--ranks", "eight"}, "--ranks: must be an integer");
  ExpectUsageError({"run", "allreduce", "--ranks", "99999999999999999999"}, "--ranks");
  ExpectUsageError({"run", "allreduce", "--ranks", "16", "--topology", "dgx-a100"},
                   "has only 8 GPUs");
  ExpectUsageError({"sweep", "allreduce", "--ranks=0"}, "--ranks: must be at least 1");
}

TEST(CliErrors, BadSizes) {
  ExpectUsageError({"run", "allreduce", "--size", "0"}, "--size: must be at least");
  ExpectUsageError({"run", "allreduce", "--size", "12Q"}, "--size");
  ExpectUsageError({"run", "allreduce", "--size", "-5"}, "must not be negative");
  ExpectUsageError({"run", "allreduce", "--size", "1.5"}, "whole number of bytes");
  ExpectUsageError({"run", "allreduce", "--size", "10"}, "whole number of float elements");
  ExpectUsageError({"run", "allreduce", "--size", "99999999999999T"}, "too large");
  ExpectUsageError({"sweep", "allreduce", "-b", "12Q"}, "-b: ");
  ExpectUsageError({"sweep", "allreduce", "-b", "1G", "-e", "8"}, "larger than the largest");
  ExpectUsageError({"sweep", "allreduce", "-f", "0"}, "-f: must be at least 1");
  ExpectUsageError({"sweep", "allreduce", "-b", "1", "-e", "1G", "-f", "1", "-i", "1"},
                   "more than 1000 sizes");
}

TEST(CliErrors, MissingValuesAndUnknownFlagsOrCommands) {
  ExpectUsageError({"run", "allreduce", "--size"}, "--size: missing value");
  ExpectUsageError({"run", "allreduce", "--size", "--json"}, "--size: missing value");
  ExpectUsageError({"run", "allreduce", "--bogus"}, "unknown flag --bogus");
  ExpectUsageError({"run", "allreduce", "--rank", "8"}, "did you mean --ranks?");
  ExpectUsageError({"run", "allreduce", "--json=yes"}, "--json: takes no value");
  ExpectUsageError({"run", "allreduce", "extra"}, "unexpected argument 'extra'");
  ExpectUsageError({"run"}, "which collective?");
  ExpectUsageError({"run", "allreduse"}, "unknown collective 'allreduse'");
  ExpectUsageError({"frobnicate"}, "unknown command 'frobnicate'");
  ExpectUsageError({}, "missing command");
  ExpectUsageError({"--bogus"}, "unknown flag --bogus");
  ExpectUsageError({"help", "nope"}, "unknown command 'nope'");
  ExpectUsageError({"topo", "--list", "--preset", "dgx-a100"}, "give one of");
}

TEST(CliErrors, BadChoices) {
  ExpectUsageError({"run", "allreduce", "--algo", "butterfly"}, "unknown algorithm 'butterfly'");
  ExpectUsageError({"run", "allreduce", "--algo", "direct"}, "");
  ExpectUsageError({"run", "allgather", "--algo", "tree"}, "");
  ExpectUsageError({"run", "allreduce", "--dtype", "f64"}, "--dtype: unknown type 'f64'");
  ExpectUsageError({"run", "allreduce", "--op", "prod"}, "--op: unknown reduction 'prod'");
  ExpectUsageError({"run", "broadcast", "--root", "8"}, "--root: must be at most 7 (got 8)");
  ExpectUsageError({"run", "allreduce", "--backend", "quantum"}, "unknown backend 'quantum'");
  ExpectUsageError({"run", "allreduce", "--ring-order", "0,1,2"}, "--ring-order");
  ExpectUsageError({"run", "allreduce", "--ring-order", "0,0,1,2,3,4,5,6"}, "appears twice");
  ExpectUsageError({"run", "allreduce", "--seed", "x"}, "--seed");
  ExpectUsageError({"run", "allreduce", "--trace", "/nonexistent-dir/out.json"}, "cannot write");
}

TEST(CliErrors, UnknownPresetsAndMissingFiles) {
  ExpectUsageError({"run", "allreduce", "--topology", "dgx-z900"}, "dgx-z900");
  ExpectUsageError({"topo", "--preset", "dgx-z900"}, "dgx-z900");
  ExpectUsageError({"topo", "--topology", "/nonexistent/box.toml"}, "box.toml");
}

const char* const kTwoGpuNodes = R"(name = "broken-box"
[[node]]
name = "gpu0"
kind = "gpu"
model = "A100"
[[node]]
name = "gpu1"
kind = "gpu"
model = "A100"
)";

TEST(CliErrors, TopologyFileWithAMissingFieldNamesFileAndLine) {
  TempDir dir;
  const fs::path file = dir.path() / "missing.toml";
  std::ofstream(file) << kTwoGpuNodes
                      << "[[link]]\na = \"gpu0\"\nkind = \"nvlink3\"\ngbps = 300\nlatency_us = 1\n";
  const CliResult r = RunCli({"run", "allreduce", "--ranks", "2", "--topology", file.string()});
  ExpectUsageError({"run", "allreduce", "--ranks", "2", "--topology", file.string()},
                   file.string() + ":");
  // "path:LINE:" names where the broken link is.
  const std::regex located(R"(missing\.toml:[0-9]+: )");
  EXPECT_TRUE(std::regex_search(r.err, located)) << r.err;
}

TEST(CliErrors, TopologyFileWithALinkToAMissingGpu) {
  TempDir dir;
  const fs::path file = dir.path() / "ghost.toml";
  std::ofstream(file) << kTwoGpuNodes
                      << "[[link]]\na = \"gpu0\"\nb = \"gpu9\"\nkind = \"nvlink3\"\ngbps = 300\n"
                      << "latency_us = 1\n";
  ExpectUsageError({"topo", "--topology", file.string()}, "gpu9");
  ExpectUsageError({"run", "allreduce", "--topology", file.string()}, "gpu9");
}

}  // namespace
}  // namespace shardlab
