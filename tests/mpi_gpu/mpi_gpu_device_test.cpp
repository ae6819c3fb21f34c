// The mpi backend's --device gpu on a machine with a GPU (label gpu): each
// test starts a real job through `shardlab-cli mpirun -np N -- run ...` and
// skips with the reason when cudaGetDeviceCount finds no device. Results
// are checked against the single-buffer reference (the simulator's
// semantics), events against the plan: one per op, none before the ops it
// depends on. With one GPU, processes share it (local rank mod 1); NCCL
// needs one GPU per process, so its test skips below two.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "engine/scenarios/collective_scenario.h"
#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;
using test_util::Describe;
using test_util::Json;
using test_util::ProgramResult;
using test_util::TempDir;

/// CUDA devices here; sets `reason` when there are none.
int DeviceCount(std::string& reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    reason = std::string("no CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorName(status);
    return 0;
  }
  if (count == 0) reason = "no CUDA device: cudaGetDeviceCount returned 0 devices";
  return count;
}

#define REQUIRE_GPUS(n)                                                                     \
  do {                                                                                      \
    std::string reason;                                                                     \
    const int count = DeviceCount(reason);                                                  \
    if (count == 0) GTEST_SKIP() << reason;                                                 \
    if (count < (n))                                                                        \
      GTEST_SKIP() << "needs " << (n) << " GPUs (one per process), found " << count;        \
  } while (0)

ProgramResult RunMpi(int processes, const std::vector<std::string>& words, const fs::path& dir) {
  return test_util::RunCliUnderMpi(SHARDLAB_CLI_PATH, processes, words, dir, 300);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> AllReduceWords(int ranks, const std::string& algo) {
  return {"run",      "allreduce", "--ranks",  std::to_string(ranks), "--size", "64K",
          "--algo",   algo,        "--backend", "mpi",                "--device", "gpu",
          "--topology", "dgx-a100"};
}

struct GpuCase {
  int processes;
  std::string algo;
};

void PrintTo(const GpuCase& c, std::ostream* os) { *os << c.algo << " on " << c.processes; }

class MpiGpuAllReduce : public ::testing::TestWithParam<GpuCase> {};

TEST_P(MpiGpuAllReduce, EqualsTheSingleBufferReferenceOnEveryRank) {
  REQUIRE_GPUS(1);
  const GpuCase& c = GetParam();
  TempDir dir;
  std::vector<std::string> words = AllReduceWords(c.processes, c.algo);
  words.push_back("--json");
  const ProgramResult r = RunMpi(c.processes, words, dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json json = test_util::JsonReader(r.out).ParseDocument();
  EXPECT_TRUE(json["checked"].boolean) << r.out;
  EXPECT_TRUE(json["correct"].boolean) << r.out;
  EXPECT_EQ(json["wrong"].number, 0);
  EXPECT_EQ(json["events"].number, json["ops"].number);
  EXPECT_TRUE(Contains(json["placement"].text, "rank 0 on GPU 0 of ")) << r.out;
  EXPECT_TRUE(Contains(json["placement"].text, "transfers ")) << r.out;
}

INSTANTIATE_TEST_SUITE_P(RingAndTree, MpiGpuAllReduce,
                         ::testing::Values(GpuCase{2, "ring"}, GpuCase{4, "ring"},
                                           GpuCase{2, "tree"}, GpuCase{4, "tree"}),
                         [](const ::testing::TestParamInfo<GpuCase>& p) {
                           return p.param.algo + "_" + std::to_string(p.param.processes) + "ranks";
                         });

TEST(MpiGpuNccl, AllReduceEqualsTheReferenceAsTheRingDoes) {
  REQUIRE_GPUS(2);
  TempDir dir;
  for (const std::string algo : {"ring", "nccl"}) {
    std::vector<std::string> words = AllReduceWords(2, algo);
    words.push_back("--json");
    const ProgramResult r = RunMpi(2, words, dir.path());
    ASSERT_EQ(r.exit_code, 0) << algo << "\n" << Describe(r);
    const Json json = test_util::JsonReader(r.out).ParseDocument();
    EXPECT_TRUE(json["correct"].boolean) << algo << "\n" << r.out;
    EXPECT_EQ(json["wrong"].number, 0) << algo;
    EXPECT_EQ(json["events"].number, json["ops"].number) << algo;
  }
}

// One trace slice per op, and none starts before an op it depends on ended
// (same rank: the mpi backend has no cross-rank dependencies). The trace's
// microseconds carry three decimals; CUDA event times are put on the host
// clock through one reference event, good to a few microseconds.
TEST(MpiGpuEvents, OneEventPerOpEachAfterItsDependencies) {
  REQUIRE_GPUS(1);
  TempDir dir;
  const fs::path trace_path = dir.path() / "gpu.json";
  std::vector<std::string> words = AllReduceWords(4, "ring");
  words.insert(words.end(), {"--trace", trace_path.string()});
  const ProgramResult r = RunMpi(4, words, dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);

  CollectiveScenario scenario;
  scenario.ranks = 4;
  scenario.size_bytes = 64 * 1024;
  scenario.algo = CollectiveAlgo::kRing;
  scenario.topology = "dgx-a100";
  const std::unique_ptr<PreparedCollective> prepared = PrepareCollective(scenario);
  const Plan& plan = prepared->plan;

  const Json trace =
      test_util::JsonReader(test_util::ReadWholeFile(trace_path)).ParseDocument();
  std::map<int, std::pair<double, double>> span_us;  // op -> start, end
  std::map<int, int> seen;
  for (const Json& e : trace["traceEvents"].items) {
    if (e["ph"].text != "X" || !e.Has("args") || !e["args"].Has("op")) continue;
    const int op = static_cast<int>(e["args"]["op"].number);
    ++seen[op];
    span_us[op] = {e["ts"].number, e["ts"].number + e["dur"].number};
  }
  ASSERT_EQ(seen.size(), plan.ops.size());
  for (const auto& [op, count] : seen) EXPECT_EQ(count, 1) << "op " << op;
  constexpr double kSlackUs = 20.0;
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[id];
    for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d)
      EXPECT_GE(span_us[id].first + kSlackUs, span_us[*d].second)
          << "op " << id << " starts before op " << *d << " (which it waits for) ended";
  }
}

TEST(MpiGpuScenario, PipelineTrainsLikeTheSingleDeviceModel) {
  REQUIRE_GPUS(1);
  TempDir dir;
  const ProgramResult r = RunMpi(4, {"run", "pipeline", "--stages", "4", "--layers", "4",
                                     "--width", "32", "--batch", "8", "--microbatches", "4",
                                     "--backend", "mpi", "--device", "gpu"},
                                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
}

TEST(MpiGpuScenario, ZeroStage3EqualsTheSingleDeviceModel) {
  REQUIRE_GPUS(1);
  TempDir dir;
  const ProgramResult r = RunMpi(4, {"run", "zero", "--ranks", "4", "--stage", "3", "--backend",
                                     "mpi", "--device", "gpu"},
                                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
}

}  // namespace
}  // namespace shardlab
