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
#include "engine/plan/host_data.h"
#include "engine/plan/host_kernels.h"
#include "engine/verify/bounds.h"
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

// 16-bit plans hold 16-bit data on the GPU: every collective (ring, tree,
// direct) in fp16 and bf16 passes the verifier with the dtype's bound, and
// its transfers' events carry the plan's 2-byte-per-element bytes.
TEST(CudaSixteenBit, CollectivesAreRightWithinTheDtypesBound) {
  SHARDLAB_REQUIRE_GPU();
  const Topology topology = MakeTopologyPreset("dgx-a100");
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (CollectiveParams p : EveryCollective(4, 4099)) {
      p.dtype = dtype;
      const Plan plan = BuildCollective(p);
      const PlanRun gpu = RunPlan("cuda", plan, topology);
      const std::string what = std::string(CollectiveAlgoName(p.algo)) + " " +
                               CollectiveKindName(p.kind) + " " + DTypeName(dtype);
      const VerifyResult verify = VerifyCollective(p, plan, 1, [&](BufferId id) {
        return std::span<const float>(gpu.buffers[static_cast<std::size_t>(id)]);
      }, ComputeDType("cuda", dtype));
      EXPECT_TRUE(verify.correct) << what << ": " << verify.wrong << " wrong, max error "
                                  << verify.max_abs_err;
      for (const Event& e : gpu.events) {
        const Op& op = plan.ops[static_cast<std::size_t>(e.op)];
        if (op.kind == OpKind::kRecv) {
          EXPECT_EQ(op.bytes, DTypeBytes(dtype) * op.dst.count) << what;
        }
      }
      ExpectEventInvariants(plan, gpu.events, 5000);
    }
  }
}

// The CUDA backend does what it declares (BackendTraits): its events carry
// its clock, and a half buffer is computed and kept as half.
TEST(CudaBackend, EventsAndDataAreWhatItsTraitsDeclare) {
  SHARDLAB_REQUIRE_GPU();
  const BackendTraits cuda = BackendTraitsOf("cuda");
  CollectiveParams p;
  p.ranks = 2;
  p.count = 64;
  p.dtype = DType::kF16;
  const PlanRun gpu = RunPlan("cuda", BuildCollective(p), MakeTopologyPreset("dgx-a100"));
  ASSERT_FALSE(gpu.events.empty());
  for (const Event& e : gpu.events) EXPECT_EQ(e.clock, cuda.event_clock) << "op " << e.op;
  ASSERT_FALSE(cuda.computes_in_float32);
  ASSERT_EQ(gpu.buffers[0].size(), 64u);
  for (float v : gpu.buffers[0]) EXPECT_EQ(RoundTo(DType::kF16, v), v);
}

// ZeRO keeps its working parameters, gradients and activations in fp16:
// on the GPU they are fp16, and the scenario's own check (the fp16 bound,
// ComputeDType("cuda", fp16)) passes for every stage.
TEST(CudaSixteenBit, ZeroPassesItsFp16CheckOnTheGpu) {
  SHARDLAB_REQUIRE_GPU();
  ZeroScenario s;
  for (int stage = 0; stage <= 3; ++stage) {
    s.params.stage = stage;
    s.backend = "cuda";
    const std::unique_ptr<PreparedZero> z = PrepareZero(s);
    Executor ex(CreateCudaBackend(), z->zero.plan, z->topology);
    VectorSink sink;
    ex.RunToEnd(sink);
    const ZeroSummary summary = SummarizeZero(*z, sink.events, ex.backend());
    EXPECT_TRUE(summary.check.checked) << "stage " << stage;
    EXPECT_TRUE(summary.check.correct) << "stage " << stage << ": parameter error "
                                       << summary.check.parameter_error;
  }
}

// Each kernel on 16-bit operands against the host kernel run in fp32 on the
// same (rounded) inputs: the GPU computes in fp32 (products on tensor cores
// with fp32 accumulation) and stores in the dtype, so it is off by the
// dtype's rounding of the result plus fp32 noise; a product accumulated in
// the 16-bit dtype would be off by up to γ_k of that dtype.
TEST(CudaSixteenBit, KernelsComputeInFp32AndStoreInTheDtype) {
  SHARDLAB_REQUIRE_GPU();
  const int m = 37, n = 53, k = 256;
  const Topology topology = MakeUniformRing(1, 100, 1000);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    PlanBuilder b("kernels 16-bit", 1);
    auto rnd = [&](const char* name, std::int64_t count) {
      return b.AddBuffer(0, name, count, dtype, BufferInit::kRandom);
    };
    const BufferId A = rnd("a", m * k), B = rnd("b", k * n), P = rnd("p", m * n);
    const BufferId C = rnd("c", m * n), V = rnd("v", n);
    const BufferId C32 = b.AddBuffer(0, "c32", m * n, DType::kF32, BufferInit::kRandom);
    auto slice = [](BufferId id, std::int64_t count) { return BufferSlice{id, 0, count}; };
    std::vector<KernelCall> calls;
    for (int t = 0; t < 2; ++t) {
      KernelCall mm = MatMulCall(slice(A, m * k), slice(B, k * n), slice(C, m * n), m, n, k);
      mm.accumulate = t == 1;
      calls.push_back(mm);
    }
    calls.push_back(MatMulCall(slice(A, m * k), slice(B, k * n), slice(C32, m * n), m, n, k));
    calls.push_back(ElementwiseCall(KernelKind::kAddBias, slice(V, n), {}, slice(C, m * n), m, n));
    calls.push_back(ElementwiseCall(KernelKind::kRelu, slice(P, m * n), {}, slice(C, m * n), m, n));
    calls.push_back(ElementwiseCall(KernelKind::kColumnSum, slice(P, m * n), {}, slice(V, n), m, n));
    calls.push_back(ElementwiseCall(KernelKind::kSoftmax, slice(P, m * n), {}, slice(C, m * n), m, n, 0.7f));
    calls.push_back(ElementwiseCall(KernelKind::kLayerNorm, slice(P, m * n), {}, slice(C, m * n), m, n));
    calls.push_back(ElementwiseCall(KernelKind::kCopy, slice(C32, n), {}, slice(V, n), 1, n));  // a cast
    const double u = UnitRoundoff(dtype);
    for (const KernelCall& call : calls) {
      PlanBuilder pb = b;
      Op op;
      op.rank = 0;
      pb.AddCompute(op, {call}, {});
      const Plan plan = pb.Finish();
      // The reference: the inputs rounded into their dtypes, the kernel in fp32.
      HostBuffers host;
      AllocateHostBuffers(plan, 1, host);
      for (std::size_t id = 0; id < plan.buffers.size(); ++id)
        for (float& x : host.data[id]) x = static_cast<float>(RoundTo(plan.buffers[id].dtype, x));
      RunHostKernel(call, host.data);
      const PlanRun gpu = RunPlan("cuda", plan, topology);
      const BufferId out = call.c.buffer;
      const std::vector<float>& got = gpu.buffers[static_cast<std::size_t>(out)];
      const std::vector<float>& want = host.data[static_cast<std::size_t>(out)];
      ASSERT_EQ(got.size(), want.size());
      const bool product = call.kind == KernelKind::kMatMul;
      const double out_u = plan.buffers[static_cast<std::size_t>(out)].dtype == DType::kF32 ? 0 : u;
      double scale = 1e-6;
      for (float w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
      // A product's fp32 accumulation: γ_k·(|A|·|B|) with u = 2^-23 (tensor
      // cores may truncate where IEEE rounds: twice fp32's unit round-off).
      std::vector<double> product_bound(got.size(), 0.0);
      if (product) {
        const auto as_double = [&](BufferId id) {
          const std::vector<float>& v = host.data[static_cast<std::size_t>(id)];
          return std::vector<double>(v.begin(), v.end());
        };
        product_bound = ProductBound(as_double(A), as_double(B), m, k, n, std::ldexp(1.0, -23));
      }
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        // The store's rounding of this element, fp32 noise, the product's bound.
        const double allowed = out_u * std::fabs(static_cast<double>(want[i])) + 1e-5 * scale +
                               product_bound[i];
        worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) - allowed);
      }
      EXPECT_LE(worst, 0.0) << KernelKindName(call.kind) << " on " << DTypeName(dtype);
    }
  }
}

// A timing-only fp16 tensor-parallel layer runs on the GPU (its products
// on tensor cores) with one event per op.
TEST(CudaSixteenBit, TimingOnlyFp16TensorParallelRuns) {
  SHARDLAB_REQUIRE_GPU();
  TpScenario s;
  s.layer.dtype = DType::kF16;
  s.timing_only = true;
  const std::unique_ptr<PreparedTp> tp = PrepareTp(s);
  RunOptions options;
  options.timing_only = true;
  const PlanRun gpu = RunPlan("cuda", tp->layer.plan, tp->topology, options);
  ExpectEventInvariants(tp->layer.plan, gpu.events, 5000);
}

}  // namespace
}  // namespace shardlab
