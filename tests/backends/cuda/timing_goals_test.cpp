// The timing goals of the CUDA backend, asserted with generous margins
// (the exact goals are printed by scripts/gpu-check.sh): per-op events cost
// little once the plan is a replayed graph, a warm run has no cold-start
// outlier, the ring gets near the copy roofline on virtual devices, a tiny
// all-reduce is bound by launch cost and not by the host stepping, and an
// emulated ring ends near the simulator's time. Label gpu: each test skips
// without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/run/iterations.h"
#include "engine/topology/presets.h"
#include "tests/backends/cuda/cuda_test_util.h"

namespace shardlab {
namespace {

struct Timed {
  IterationTimes times;
  std::vector<Event> last;
};

Timed RunTimed(const std::string& backend, const Plan& plan, const Topology& topology,
               RunOptions options, IterationSettings settings) {
  Executor ex(testing::MakeBackend(backend), plan, topology, options);
  VectorSink sink;
  Timed t;
  t.times = RunIterations(ex, sink, settings);
  t.last = sink.events;
  return t;
}

Plan Ring(int ranks, Bytes bytes) {
  CollectiveParams p;
  p.ranks = ranks;
  p.count = std::max<Bytes>(bytes / 4, 1);
  return BuildCollective(p);
}

// A chain of reductions on one rank (the event-overhead benchmark's plan).
Plan Chain(int ops, std::int64_t chunk) {
  PlanBuilder b("reduction chain", 1);
  const BufferId src = b.AddBuffer(0, "src", chunk * ops, DType::kF32, BufferInit::kZero);
  const BufferId dst = b.AddBuffer(0, "dst", chunk * ops, DType::kF32, BufferInit::kZero);
  OpId prev = kNoOp;
  for (int i = 0; i < ops; ++i) {
    Op op;
    op.kind = OpKind::kReduce;
    op.reduce = ReduceOp::kSum;
    op.src = BufferSlice{src, i * chunk, chunk};
    op.dst = BufferSlice{dst, i * chunk, chunk};
    op.bytes = chunk * 4;
    prev = prev == kNoOp ? b.AddOp(op) : b.AddOp(op, {prev});
  }
  return b.Finish();
}

// Device copy bandwidth as memory traffic (read + write) per second.
double CopyTrafficGbps(std::size_t bytes) {
  void *a = nullptr, *b = nullptr;
  CUDA_CHECK(cudaMalloc(&a, bytes), -1);
  CUDA_CHECK(cudaMalloc(&b, bytes), -1);
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start), -1);
  CUDA_CHECK(cudaEventCreate(&stop), -1);
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CUDA_CHECK(cudaEventRecord(start), -1);
    CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice), -1);
    CUDA_CHECK(cudaEventRecord(stop), -1);
    CUDA_CHECK(cudaEventSynchronize(stop), -1);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop), -1);
    best = std::min(best, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) / (best * 1e6);
}

TEST(CudaTimingGoals, PerOpEventsCostLittleOnceThePlanIsAGraph) {
  SHARDLAB_REQUIRE_GPU();
  const std::int64_t chunk = (std::int64_t{4} << 20) / 4;
  const int ops = 64;
  RunOptions options;
  options.timing_only = true;
  const Timed t = RunTimed("cuda", Chain(ops, chunk), MakeUniformRing(1, 100, 1000), options, {1, 3});
  float *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, chunk * ops * 4), -1);
  CUDA_CHECK(cudaMalloc(&dst, chunk * ops * 4), -1);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), -1);
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start), -1);
  CUDA_CHECK(cudaEventCreate(&stop), -1);
  float best = 1e30f;
  for (int rep = 0; rep < 4; ++rep) {
    CUDA_CHECK(cudaEventRecord(start, stream), -1);
    for (int i = 0; i < ops; ++i)
      cuda::LaunchCombine(ReduceOp::kSum, src + i * chunk, dst + i * chunk, chunk, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream), -1);
    CUDA_CHECK(cudaEventSynchronize(stop), -1);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop), -1);
    if (rep > 0) best = std::min(best, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  cudaFree(src);
  cudaFree(dst);
  const double bare_ns = best * 1e6;
  // Goal: < 5% (event_overhead_bench); asserted: < 25%.
  EXPECT_LT(t.times.best_ns, 1.25 * bare_ns)
      << "backend " << t.times.best_ns / 1e3 << " us, bare kernels " << bare_ns / 1e3 << " us";
}

TEST(CudaTimingGoals, AWarmRunHasNoColdStartOutlier) {
  SHARDLAB_REQUIRE_GPU();
  const Timed t = RunTimed("cuda", Ring(4, Bytes{16} << 20), MakeTopologyPreset("dgx-a100"), {}, {1, 2});
  std::vector<TimeNs> recv;
  for (const Event& e : t.last)
    if (e.kind == OpKind::kRecv) recv.push_back(e.duration_ns());
  ASSERT_GE(recv.size(), 4u);
  std::vector<TimeNs> sorted = recv;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const TimeNs median = sorted[sorted.size() / 2];
  // Goal: every op within 2x the median of its kind; asserted: 4x.
  for (TimeNs d : recv) EXPECT_LT(d, 4 * median) << "median " << median << " ns";
}

TEST(CudaTimingGoals, TheRingOnVirtualDevicesNearsTheCopyRoofline) {
  SHARDLAB_REQUIRE_GPU();
  const Plan plan = Ring(8, Bytes{64} << 20);
  double traffic = 0;  // bytes through HBM: a reducing receive reads two and writes one
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::kRecv) traffic += static_cast<double>(op.bytes) * (op.reduce == ReduceOp::kNone ? 2 : 3);
  const double roofline_ns = traffic / CopyTrafficGbps(std::size_t{256} << 20);
  RunOptions options;
  options.timing_only = true;
  const Timed t = RunTimed("cuda", plan, MakeTopologyPreset("dgx-a100"), options, {1, 5});
  // Goal: >= 80% of the roofline; asserted: >= 40%.
  EXPECT_GT(roofline_ns / t.times.average_ns, 0.4)
      << "ring " << t.times.average_ns / 1e3 << " us, roofline " << roofline_ns / 1e3 << " us";
}

TEST(CudaTimingGoals, ATinyRingIsBoundByLaunchesNotByHostSteps) {
  SHARDLAB_REQUIRE_GPU();
  const Timed t = RunTimed("cuda", Ring(8, 8), MakeTopologyPreset("dgx-a100"), {}, {1, 10});
  // Goal: < 60 us; asserted: < 150 us (the stepping executor took 620-990 us).
  EXPECT_LT(t.times.average_ns, 150e3) << t.times.average_ns / 1e3 << " us";
}

TEST(CudaTimingGoals, AnEmulatedRingEndsNearTheSimulator) {
  SHARDLAB_REQUIRE_GPU();
  const Plan plan = Ring(8, Bytes{16} << 20);
  const Topology topology = MakeTopologyPreset("dgx-a100");
  RunOptions options;
  options.timing_only = true;
  const Timed sim = RunTimed("sim", plan, topology, options, {0, 1});
  options.emulate_links = true;
  const Timed emu = RunTimed("cuda", plan, topology, options, {1, 3});
  for (const Event& e : emu.last) {
    if (e.kind == OpKind::kRecv) {
      EXPECT_EQ(e.clock, ClockKind::kEmulated);
    }
  }
  // Emulation holds a transfer for the model's time or longer, never shorter.
  EXPECT_GE(emu.times.average_ns, 0.97 * sim.times.average_ns);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  if (devices < 8) {
    // Eight ranks on fewer GPUs share their HBM: a step's copies need more
    // time than the DGX A100's links give them (docs/gpu.md, "Not yet").
    GTEST_SKIP() << "8 ranks on " << devices << " GPU(s): the emulated ring (" << emu.times.average_ns / 1e3
                 << " us) cannot reach the simulator's " << sim.times.average_ns / 1e3
                 << " us on shared HBM; the 10% goal needs a GPU per rank";
  }
  // Goal: within 10%; asserted: within 30%.
  EXPECT_NEAR(emu.times.average_ns, sim.times.average_ns, 0.3 * sim.times.average_ns);
}

}  // namespace
}  // namespace shardlab
