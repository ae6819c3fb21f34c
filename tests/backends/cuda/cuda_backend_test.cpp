// The CUDA backend against the simulator: every collective and algorithm,
// on one GPU per rank or on virtual devices, gives the simulator's bytes
// (the reductions run in the same order); training scenarios agree to
// float rounding (cuBLAS sums in its own order); events are one per op,
// never overlap on a stream, and start after what they wait for. Each test
// skips with the reason when there is no CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/verify.h"
#include "engine/core/error.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"
#include "engine/topology/presets.h"
#include "tests/backends/cuda/cuda_test_util.h"

namespace shardlab {
namespace {

using testing::PlanRun;
using testing::RunPlan;

std::vector<CollectiveParams> EveryCollective(int ranks, std::int64_t count) {
  std::vector<CollectiveParams> out;
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                              CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                              CollectiveKind::kReduce, CollectiveKind::kAllToAll}) {
    for (CollectiveAlgo algo : CollectiveAlgosFor(kind)) {
      CollectiveParams p;
      p.kind = kind;
      p.algo = algo;
      p.ranks = ranks;
      p.count = count;
      p.root = CollectiveHasRoot(kind) ? ranks - 1 : 0;
      out.push_back(p);
    }
  }
  return out;
}

void ExpectSameBytes(const PlanRun& a, const PlanRun& b, const std::string& what) {
  ASSERT_EQ(a.buffers.size(), b.buffers.size()) << what;
  for (std::size_t id = 0; id < a.buffers.size(); ++id) {
    ASSERT_EQ(a.buffers[id].size(), b.buffers[id].size()) << what << " buffer " << id;
    EXPECT_EQ(0, std::memcmp(a.buffers[id].data(), b.buffers[id].data(),
                             a.buffers[id].size() * sizeof(float)))
        << what << ": buffer " << id << " differs";
  }
}

void ExpectClose(const PlanRun& gpu, const PlanRun& sim, double rel, const std::string& what) {
  ASSERT_EQ(gpu.buffers.size(), sim.buffers.size()) << what;
  for (std::size_t id = 0; id < gpu.buffers.size(); ++id) {
    const auto& g = gpu.buffers[id];
    const auto& s = sim.buffers[id];
    ASSERT_EQ(g.size(), s.size());
    double worst = 0, scale = 1e-6;
    for (std::size_t i = 0; i < g.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(g[i]) - s[i]));
      scale = std::max(scale, std::fabs(static_cast<double>(s[i])));
    }
    EXPECT_LE(worst / scale, rel) << what << ": buffer " << id;
  }
}

// One event per op; on each (rank, lane) events do not overlap; an op
// starts no earlier than the ops it waits for end (same GPU: exactly; the
// GPUs' time bases are aligned to a few microseconds).
void ExpectEventInvariants(const Plan& plan, const std::vector<Event>& events, TimeNs slack_ns) {
  ASSERT_EQ(events.size(), plan.ops.size());
  std::vector<const Event*> by_op(plan.ops.size(), nullptr);
  for (const Event& e : events) {
    ASSERT_GE(e.op, 0);
    ASSERT_EQ(by_op[static_cast<std::size_t>(e.op)], nullptr) << "two events for op " << e.op;
    by_op[static_cast<std::size_t>(e.op)] = &e;
    EXPECT_LE(e.start_ns, e.end_ns);
    EXPECT_TRUE(e.clock == ClockKind::kCudaEvent || e.clock == ClockKind::kEmulated);
  }
  std::map<std::pair<int, int>, std::vector<const Event*>> lanes;
  for (const Event& e : events) lanes[{e.rank, static_cast<int>(e.lane)}].push_back(&e);
  for (auto& [key, list] : lanes) {
    std::sort(list.begin(), list.end(),
              [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
    for (std::size_t i = 1; i < list.size(); ++i)
      EXPECT_GE(list[i]->start_ns + slack_ns, list[i - 1]->end_ns)
          << "rank " << key.first << " lane " << key.second << ": op " << list[i]->op
          << " overlaps op " << list[i - 1]->op;
  }
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d)
      EXPECT_GE(by_op[static_cast<std::size_t>(id)]->start_ns + slack_ns,
                by_op[static_cast<std::size_t>(*d)]->end_ns)
          << "op " << id << " started before its dependency " << *d << " ended";
  }
}

TEST(CudaBackend, EveryCollectiveGivesTheSimulatorsBytes) {
  SHARDLAB_REQUIRE_GPU();
  const Topology topology = MakeTopologyPreset("dgx-a100");
  for (const int ranks : {2, 4, 8}) {
    for (const CollectiveParams& p : EveryCollective(ranks, 4099)) {
      const Plan plan = BuildCollective(p);
      const PlanRun sim = RunPlan("sim", plan, topology);
      const PlanRun gpu = RunPlan("cuda", plan, topology);
      const std::string what = std::string(CollectiveAlgoName(p.algo)) + " " +
                               CollectiveKindName(p.kind) + " on " + std::to_string(ranks);
      ExpectSameBytes(gpu, sim, what);
      const VerifyResult verify = VerifyCollective(p, plan, 1, [&](BufferId id) {
        return std::span<const float>(gpu.buffers[static_cast<std::size_t>(id)]);
      });
      EXPECT_TRUE(verify.correct) << what;
      ExpectEventInvariants(plan, gpu.events, 5000);
    }
  }
}

TEST(CudaBackend, VirtualDevicesShareOneGpu) {
  SHARDLAB_REQUIRE_GPU();
  const Topology topology = MakeTopologyPreset("dgx-a100");
  CollectiveParams p;
  p.ranks = 8;
  p.count = 1 << 16;
  const Plan plan = BuildCollective(p);
  RunOptions options;
  options.rank_to_gpu.assign(8, 0);  // every rank on model GPU 0 -> physical GPU 0
  const PlanRun gpu = RunPlan("cuda", plan, topology, options);
  const PlanRun sim = RunPlan("sim", plan, topology);
  ExpectSameBytes(gpu, sim, "ring all-reduce, 8 ranks on GPU 0");
  ExpectEventInvariants(plan, gpu.events, 0);
  EXPECT_EQ(DescribePlacement(PhysicalGpus(8, options.rank_to_gpu, 1), 1),
            "8 ranks on 1 GPU as virtual devices (separate buffers and streams): GPU 0 holds "
            "ranks 0-7");
}

TEST(CudaBackend, StepModeReadsBackTheSimulatorsBuffersAfterEveryStep) {
  SHARDLAB_REQUIRE_GPU();
  const Topology topology = MakeTopologyPreset("dgx-a100");
  CollectiveParams p;
  p.ranks = 4;
  p.count = 1001;
  const Plan plan = BuildCollective(p);
  Executor sim(CreateBackend("sim"), plan, topology);
  Executor gpu(CreateCudaBackend(), plan, topology);
  VectorSink a, b;
  int steps = 0;
  while (true) {
    const bool more_sim = sim.StepOnce(a);
    const bool more_gpu = gpu.StepOnce(b);
    ASSERT_EQ(more_sim, more_gpu);
    if (!more_sim) break;
    ++steps;
    for (BufferId id = 0; id < static_cast<BufferId>(plan.buffers.size()); ++id) {
      const auto s = sim.backend().BufferData(id);
      const auto g = gpu.backend().BufferData(id);
      ASSERT_EQ(s.size(), g.size());
      EXPECT_TRUE(std::equal(s.begin(), s.end(), g.begin()))
          << "after step " << steps << " buffer " << id;
    }
  }
  EXPECT_EQ(steps, plan.num_steps);
  // Reset restores the inputs; a second run gives the same bytes.
  gpu.Reset();
  VectorSink c;
  gpu.RunToEnd(c);
  for (BufferId id = 0; id < static_cast<BufferId>(plan.buffers.size()); ++id) {
    const auto s = sim.backend().BufferData(id);
    const auto g = gpu.backend().BufferData(id);
    EXPECT_TRUE(std::equal(s.begin(), s.end(), g.begin())) << "after reset, buffer " << id;
  }
}

TEST(CudaBackend, TrainingScenariosMatchTheSimulator) {
  SHARDLAB_REQUIRE_GPU();
  {
    ZeroScenario s;
    for (int stage = 0; stage <= 3; ++stage) {
      s.params.stage = stage;
      const std::unique_ptr<PreparedZero> z = PrepareZero(s);
      const PlanRun sim = RunPlan("sim", z->zero.plan, z->topology);
      const PlanRun gpu = RunPlan("cuda", z->zero.plan, z->topology);
      // Adam divides by the gradients' root mean square: float rounding in
      // a tiny gradient moves a parameter by up to the learning rate.
      ExpectClose(gpu, sim, 1e-2, "zero stage " + std::to_string(stage));
      ExpectEventInvariants(z->zero.plan, gpu.events, 5000);
    }
  }
  {
    PipelineScenario s;
    const std::unique_ptr<PreparedPipeline> pp = PreparePipeline(s);
    const PlanRun sim = RunPlan("sim", pp->pipeline.plan, pp->topology);
    const PlanRun gpu = RunPlan("cuda", pp->pipeline.plan, pp->topology);
    ExpectClose(gpu, sim, 1e-3, "pipeline");
    ExpectEventInvariants(pp->pipeline.plan, gpu.events, 5000);
  }
  {
    TpScenario s;
    const std::unique_ptr<PreparedTp> tp = PrepareTp(s);
    const PlanRun sim = RunPlan("sim", tp->layer.plan, tp->topology);
    const PlanRun gpu = RunPlan("cuda", tp->layer.plan, tp->topology);
    ExpectClose(gpu, sim, 1e-3, "tensor parallel");
    ExpectEventInvariants(tp->layer.plan, gpu.events, 5000);
  }
}

TEST(CudaBackend, EmulatedLinksHoldTransfersForTheModelledTime) {
  SHARDLAB_REQUIRE_GPU();
  const Topology topology = MakeTopologyPreset("pcie-gen3-4gpu");
  CollectiveParams p;
  p.ranks = 4;
  p.count = 1 << 20;  // 4 MiB: 1 MiB chunks, tens of microseconds on PCIe
  const Plan plan = BuildCollective(p);
  RunOptions options;
  options.emulate_links = true;
  const PlanRun gpu = RunPlan("cuda", plan, topology, options);
  const PlanRun sim = RunPlan("sim", plan, topology);
  ExpectSameBytes(gpu, sim, "emulated ring all-reduce");
  for (const Event& e : gpu.events) {
    if (e.kind != OpKind::kRecv) continue;
    EXPECT_EQ(e.clock, ClockKind::kEmulated);
    // At least the route's time without contention (the simulator's
    // transfer time is that or more, when links are shared).
    const Route route = FindRoute(topology, topology.gpus[static_cast<std::size_t>(e.peer)],
                                  topology.gpus[static_cast<std::size_t>(e.rank)]);
    // Less at most one tick of the GPU's global timer (1 us on some parts).
    EXPECT_GE(e.duration_ns() + 1000,
              route.latency_ns + TransferNs(e.bytes, route.bottleneck_gbps));
  }
}

// NCCL on the same buffers: every kind agrees with the hand-written ring to
// float rounding (NCCL sums in its own order) where there is a GPU per
// rank; with fewer GPUs, one clear error.
TEST(CudaBackend, NcclCollectivesMatchTheRingOrSayWhyNot) {
  SHARDLAB_REQUIRE_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  const Topology topology = MakeTopologyPreset("dgx-a100");
  if (devices < 2) {
    CollectiveParams p;
    p.algo = CollectiveAlgo::kNccl;
    p.ranks = 4;
    p.count = 1024;
    try {
      RunPlan("cuda", BuildCollective(p), topology);
      FAIL() << "NCCL ran 4 ranks on one GPU";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("NCCL needs one GPU per rank: 4 ranks, 1 GPU", 0), 0u)
          << e.what();
    }
  }
  const int ranks = std::min(devices, 8);
  for (CollectiveParams p : EveryCollective(ranks, 4096 * ranks)) {
    if (p.algo == CollectiveAlgo::kTree) continue;
    const Plan ring = BuildCollective(p);
    p.algo = CollectiveAlgo::kNccl;
    const Plan nccl = BuildCollective(p);
    const PlanRun a = RunPlan("cuda", ring, topology);
    const PlanRun b = RunPlan("cuda", nccl, topology);
    const std::string what = std::string("nccl ") + CollectiveKindName(p.kind);
    ASSERT_EQ(b.events.size(), static_cast<std::size_t>(ranks)) << what;
    const VerifyResult verify = VerifyCollective(p, nccl, 1, [&](BufferId id) {
      return std::span<const float>(b.buffers[static_cast<std::size_t>(id)]);
    });
    EXPECT_TRUE(verify.correct) << what;
    // Outside the result (a reduce's non-roots, a reduce-scatter's other
    // chunks) the ring leaves partial sums and NCCL the inputs.
    if (p.kind != CollectiveKind::kReduce && p.kind != CollectiveKind::kReduceScatter)
      ExpectClose(b, a, 1e-5, what);
  }
}

// Each kernel kind on its own, against the host kernels: element-wise kinds
// bit for bit, row reductions and products to float rounding.
TEST(CudaKernels, EveryKindMatchesTheHostKernel) {
  SHARDLAB_REQUIRE_GPU();
  const int m = 37, n = 53, k = 29;
  PlanBuilder b("kernels", 1);
  auto rnd = [&](const char* name, std::int64_t count) {
    return b.AddBuffer(0, name, count, DType::kF32, BufferInit::kRandom);
  };
  const BufferId A = rnd("a", m * k + 64), B = rnd("b", k * n + 64), P = rnd("p", m * n);
  const BufferId Q = rnd("q", m * n), C = rnd("c", m * n + 64), V = rnd("v", n);
  const BufferId M1 = b.AddBuffer(0, "m1", n), M2 = b.AddBuffer(0, "m2", n);
  auto slice = [](BufferId id, std::int64_t count, std::int64_t offset = 0) {
    return BufferSlice{id, offset, count};
  };
  std::vector<std::pair<KernelCall, bool>> calls;  // call, exact
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      KernelCall mm = MatMulCall(slice(A, m * k), slice(B, k * n), slice(C, m * n), m, n, k);
      mm.transpose_a = ta;
      mm.transpose_b = tb;
      mm.accumulate = ta == tb;
      calls.push_back({mm, false});
    }
  }
  KernelCall strided = MatMulCall(slice(A, m * k + 64), slice(B, k * n + 64), slice(C, m * n + 64),
                                  m, n - 8, k - 4);
  strided.lda = k;
  strided.ldb = n;
  strided.ldc = n;
  calls.push_back({strided, false});
  auto ew = [&](KernelKind kind, BufferSlice a, BufferSlice bb, BufferSlice c, int rows, int cols,
                float alpha, bool exact) {
    calls.push_back({ElementwiseCall(kind, a, bb, c, rows, cols, alpha), exact});
  };
  ew(KernelKind::kAddBias, slice(V, n), {}, slice(C, m * n), m, n, 1, true);
  ew(KernelKind::kRelu, slice(P, m * n), {}, slice(C, m * n), m, n, 1, true);
  ew(KernelKind::kReluBackward, slice(P, m * n), slice(Q, m * n), slice(C, m * n), m, n, 1, true);
  ew(KernelKind::kColumnSum, slice(P, m * n), {}, slice(V, n), m, n, 1, true);
  ew(KernelKind::kMseGrad, slice(P, m * n), slice(Q, m * n), slice(C, m * n), m, n, 0.5f, true);
  ew(KernelKind::kMseLoss, slice(P, m * n), slice(Q, m * n), slice(C, 1), m, n, 0.25f, false);
  ew(KernelKind::kAxpy, slice(P, n), {}, slice(V, n), 1, n, -0.1f, true);
  ew(KernelKind::kSoftmax, slice(P, m * n), {}, slice(C, m * n), m, n, 0.7f, false);
  ew(KernelKind::kSoftmaxBackward, slice(P, m * n), slice(Q, m * n), slice(C, m * n), m, n, 0.7f,
     false);
  ew(KernelKind::kLayerNorm, slice(P, m * n), {}, slice(C, m * n), m, n, 1, false);
  ew(KernelKind::kLayerNormBackward, slice(P, m * n), slice(Q, m * n), slice(C, m * n), m, n, 1,
     false);
  ew(KernelKind::kCopy, slice(P, n), {}, slice(V, n), 1, n, 1, true);
  KernelCall adam = ElementwiseCall(KernelKind::kAdam, slice(P, n), slice(M1, n), slice(V, n), 1, n,
                                    1e-3f);
  adam.d = slice(M2, n);
  adam.adam_step = 3;
  calls.push_back({adam, true});

  const Topology topology = MakeUniformRing(1, 100, 1000);
  for (const auto& [call, exact] : calls) {
    PlanBuilder pb = b;
    Op op;
    op.rank = 0;
    pb.AddCompute(op, {call}, {});
    const Plan plan = pb.Finish();
    const PlanRun sim = RunPlan("sim", plan, topology);
    const PlanRun gpu = RunPlan("cuda", plan, topology);
    const std::string what = KernelKindName(call.kind);
    if (exact) {
      ExpectSameBytes(gpu, sim, what);
    } else {
      ExpectClose(gpu, sim, 1e-5, what);
    }
  }
}

}  // namespace
}  // namespace shardlab
