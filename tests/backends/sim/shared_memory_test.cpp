// The model of a real machine (RunOptions::shared_device_memory and
// op_issue_ns): virtual ranks of one GPU share its HBM; each op waits for
// the host to issue it. Expected times come from the formulas, not from a
// run.
#include <gtest/gtest.h>

#include <vector>

#include "engine/backends/sim/sim_backend.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/this_machine.h"

namespace shardlab {
namespace {

const std::string kProfile = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml";

// One H200 (the recorded profile) holding every rank.
struct OneGpu {
  DeviceProfile profile = LoadDeviceProfile(kProfile);
  MachineRecord record = MachineFromProfile(profile, 1, "test");
  Topology topology = BuildMachineTopology(record);
  double bw() const { return *profile.memory_gbps; }  // bytes/ns of HBM traffic
};

std::vector<Event> RunModel(const Plan& plan, const Topology& topology, bool shared, TimeNs issue_ns = 0,
                            TimeNs graph_op_ns = 0) {
  RunOptions options;
  options.graph_op_ns = graph_op_ns;
  options.timing_only = true;
  options.rank_to_gpu.assign(static_cast<std::size_t>(plan.num_ranks), 0);
  options.shared_device_memory = shared;
  options.op_issue_ns = issue_ns;
  Executor ex(CreateSimBackend(), plan, topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  EXPECT_EQ(ex.state(), ExecutorState::kDone);
  std::vector<Event> by_op(plan.ops.size());
  for (const Event& e : sink.events) by_op[static_cast<std::size_t>(e.op)] = e;
  return by_op;
}

constexpr std::int64_t kCount = std::int64_t{2} << 20;  // 8 MiB of floats
constexpr double kBytes = 4.0 * kCount;

// `transfers` copies between disjoint pairs of virtual ranks, all at once.
Plan Transfers(int transfers) {
  PlanBuilder b("copies", 2 * transfers);
  for (int t = 0; t < transfers; ++t) {
    const BufferId src = b.AddBuffer(2 * t, "data", kCount);
    const BufferId dst = b.AddBuffer(2 * t + 1, "data", kCount);
    b.AddTransfer(2 * t, 2 * t + 1, {src, 0, kCount}, {dst, 0, kCount}, ReduceOp::kNone, 0, {}, {}, {});
  }
  return b.Finish();
}

TEST(SharedDeviceMemory, TwoConcurrentTransfersOnOneGpuTakeTwiceAsLongAsOne) {
  const OneGpu gpu;
  const double alone_ns = 2 * kBytes / gpu.bw();  // read + write
  const auto one = RunModel(Transfers(1), gpu.topology, true);
  EXPECT_NEAR(one[1].duration_ns(), alone_ns, 1e-6 * alone_ns);
  const auto two = RunModel(Transfers(2), gpu.topology, true);
  for (int recv : {1, 3}) EXPECT_NEAR(two[recv].duration_ns(), 2 * alone_ns, 1e-6 * alone_ns);
  const auto eight = RunModel(Transfers(8), gpu.topology, true);
  EXPECT_NEAR(eight[15].duration_ns(), 8 * alone_ns, 1e-6 * alone_ns);
  // Without the shared model each copy has the whole bandwidth to itself.
  const auto unshared = RunModel(Transfers(2), gpu.topology, false);
  EXPECT_NEAR(unshared[3].duration_ns(), alone_ns, 1e-6 * alone_ns);
}

TEST(SharedDeviceMemory, AReducingTransferMovesThreeTimesItsBytes) {
  const OneGpu gpu;
  PlanBuilder b("reduce", 2);
  const BufferId src = b.AddBuffer(0, "data", kCount);
  const BufferId dst = b.AddBuffer(1, "data", kCount);
  b.AddTransfer(0, 1, {src, 0, kCount}, {dst, 0, kCount}, ReduceOp::kSum, 0, {}, {}, {});
  const auto e = RunModel(b.Finish(), gpu.topology, true);
  EXPECT_NEAR(e[1].duration_ns(), 3 * kBytes / gpu.bw(), 1e-3);
}

// A transfer between ranks 1 and 2 beside a kernel on rank 0 of `bytes`
// memory traffic and `flops`.
Plan TransferBesideKernel(double kernel_bytes, double flops) {
  PlanBuilder b("beside", 3);
  Op kernel;
  kernel.rank = 0;
  kernel.bytes = static_cast<Bytes>(kernel_bytes);
  kernel.flops = flops;
  b.AddOp(kernel);
  const BufferId src = b.AddBuffer(1, "data", kCount);
  const BufferId dst = b.AddBuffer(2, "data", kCount);
  b.AddTransfer(1, 2, {src, 0, kCount}, {dst, 0, kCount}, ReduceOp::kNone, 0, {}, {}, {});
  return b.Finish();
}

TEST(SharedDeviceMemory, ATransferBesideAMemoryBoundKernelGetsHalfTheBandwidth) {
  const OneGpu gpu;
  // The kernel moves 4x the copy's bytes: it outlasts the copy. While both
  // run each gets half the HBM; then the kernel has it alone.
  const double copy_traffic = 2 * kBytes;
  const double kernel_traffic = 2 * copy_traffic;
  const auto e = RunModel(TransferBesideKernel(kernel_traffic, 1e3), gpu.topology, true);
  const double copy_end = copy_traffic / (gpu.bw() / 2);
  EXPECT_NEAR(e[2].end_ns, copy_end, 1e-6 * copy_end);
  const double kernel_end = copy_end + (kernel_traffic - copy_traffic) / gpu.bw();
  EXPECT_NEAR(e[0].end_ns, kernel_end, 1e-6 * kernel_end);
}

TEST(SharedDeviceMemory, AComputeBoundKernelLeavesTheTransferItsBandwidth) {
  const OneGpu gpu;
  // 1e12 flops at fp32 take ~20 ms; its 1 MB of traffic is hidden under them.
  const auto e = RunModel(TransferBesideKernel(1e6, 1e12), gpu.topology, true);
  const double alone_ns = 2 * kBytes / gpu.bw();
  EXPECT_NEAR(e[2].duration_ns(), alone_ns, 1e-6 * alone_ns);
  EXPECT_NEAR(e[0].duration_ns(), 1e12 / (*gpu.profile.fp32_tflops * 1e3), 1.0);
}

TEST(SharedDeviceMemory, OpsWaitForTheHostToIssueThemInPlanOrder) {
  const OneGpu gpu;
  const TimeNs issue = OpIssueNs(gpu.profile);
  EXPECT_NEAR(issue, *gpu.profile.kernel_launch_ns + 2 * *gpu.profile.event_record_ns, 1e-9);
  // Eight independent copies: copy k (a send and its receive, one unit)
  // starts when the host has issued k + 1 units.
  const auto e = RunModel(Transfers(8), gpu.topology, true, issue);
  for (int t = 0; t < 8; ++t) {
    EXPECT_NEAR(e[static_cast<std::size_t>(2 * t)].start_ns, (t + 1) * issue, 1e-6) << t;
    EXPECT_NEAR(e[static_cast<std::size_t>(2 * t + 1)].start_ns, (t + 1) * issue, 1e-6) << t;
  }
}

// A graph replay: an op that depends on another starts graph_op_ns after
// its input is done; an op with no input starts at once; nothing is charged
// per op on the host.
TEST(SharedDeviceMemory, AGraphReplayStartsADependentOpItsNodeDelayAfterItsInput) {
  const OneGpu gpu;
  PlanBuilder b("chain", 2);
  const BufferId a = b.AddBuffer(0, "a", kCount);
  const BufferId c = b.AddBuffer(1, "c", kCount);
  const BufferId d = b.AddBuffer(0, "d", kCount);
  const auto first = b.AddTransfer(0, 1, {a, 0, kCount}, {c, 0, kCount}, ReduceOp::kNone, 0, {}, {}, {});
  b.AddTransfer(1, 0, {c, 0, kCount}, {d, 0, kCount}, ReduceOp::kNone, 1, {}, {first.recv}, {});
  const Plan plan = b.Finish();
  constexpr TimeNs kNode = 5000;
  const auto plain = RunModel(plan, gpu.topology, true);
  const auto graph = RunModel(plan, gpu.topology, true, 0, kNode);
  EXPECT_EQ(graph[0].start_ns, 0);
  EXPECT_NEAR(graph[1].end_ns, plain[1].end_ns, 1e-6);
  EXPECT_NEAR(graph[2].start_ns - graph[1].end_ns, kNode, 1e-6);
  EXPECT_NEAR(graph.back().end_ns - plain.back().end_ns, kNode, 1e-6);

  // The model of a machine's graph run charges kGraphNodesPerOp nodes per
  // op from the profile, and nothing for an eager one.
  MachineRecord record = gpu.record;
  record.profile->graph_node_ns = 1500;
  record.issue = "graph";
  EXPECT_EQ(ModelGraphOpNs(record), kGraphNodesPerOp * 1500.0);
  EXPECT_EQ(ModelOpIssueNs(record), 0);
  record.issue = "eager";
  EXPECT_EQ(ModelGraphOpNs(record), 0);
  EXPECT_EQ(ModelOpIssueNs(record), OpIssueNs(*record.profile));
}

}  // namespace
}  // namespace shardlab
