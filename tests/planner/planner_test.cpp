// The planner: nothing it returns breaks memory or divisibility (checked
// from first principles over several inputs), every rejection reason comes
// out of an input crafted for it, and the ranking is deterministic.
#include "engine/planner/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/planner/group_bandwidth.h"
#include "engine/planner/planner_simulation.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

struct Input {
  std::string model;
  std::string topology;
  int gpus;
  Bytes gpu_memory_bytes;  // 0: the GPU's own
  int global_batch;        // 0: the model's
};

PlannerRequest RequestFor(const Input& in) {
  PlannerRequest r;
  r.model = FindModelPreset(in.model);
  if (in.global_batch > 0) r.model.global_batch = in.global_batch;
  r.gpus = in.gpus;
  r.gpu_memory_bytes = in.gpu_memory_bytes;
  return r;
}

constexpr Bytes kGiB = Bytes{1} << 30;

const std::vector<Input>& Inputs() {
  static const std::vector<Input> inputs = {
      {"gpt3-175b", "64x-dgx-a100-ib", 512, 0, 0},
      {"gpt3-175b", "64x-dgx-a100-ib", 512, 40 * kGiB, 0},
      {"gpt3-175b", "32x-dgx-h100-superpod", 256, 0, 0},
      {"gpt3-13b", "8x-dgx-h100-ib", 64, 0, 0},
      {"gpt3-1.3b", "dgx-a100", 8, 16 * kGiB, 96},
      {"llama-7b-ish", "2x-dgx-a100-ib", 16, 24 * kGiB, 120},
      {"gpt3-13b", "pcie-gen4-8gpu", 4, 0, 64},
  };
  return inputs;
}

// Every GPU of the TP group on one host, or every route between them NVLink.
bool TpGroupStaysOnNvLinkOrHost(const Topology& t, const ParallelLayout& l, RouteTable& routes) {
  for (int base = 0; base < l.dp * l.pp * l.tp; base += l.tp) {
    const int host = t.nodes[static_cast<std::size_t>(t.gpus[static_cast<std::size_t>(base)])].host;
    for (int k = 1; k < l.tp; ++k) {
      const int r = base + k;
      if (t.nodes[static_cast<std::size_t>(t.gpus[static_cast<std::size_t>(r)])].host == host)
        continue;
      for (const LinkHop& hop : routes.Between(base, r).hops) {
        const LinkKind kind = t.links[static_cast<std::size_t>(hop.link)].kind;
        if (kind != LinkKind::kNvLink3 && kind != LinkKind::kNvLink4) return false;
      }
    }
  }
  return true;
}

TEST(Planner, NeverReturnsALayoutThatDoesNotFitOrDivide) {
  for (const Input& in : Inputs()) {
    const Topology topology = MakeTopologyPreset(in.topology);
    const PlannerRequest request = RequestFor(in);
    const PlannerResult result = PlanParallelLayouts(request, topology);
    const TransformerShape& m = request.model;
    const DeviceSpec& gpu = topology.nodes[static_cast<std::size_t>(topology.gpus[0])].device;
    const double memory = double(in.gpu_memory_bytes > 0 ? in.gpu_memory_bytes : gpu.memory_bytes);
    RouteTable routes(topology);
    SCOPED_TRACE(in.model + " on " + std::to_string(in.gpus) + " GPUs of " + in.topology);
    for (const PlanCandidate& c : result.feasible) {
      const ParallelLayout& l = c.layout;
      ASSERT_TRUE(c.feasible);
      EXPECT_EQ(l.dp * l.pp * l.tp, in.gpus);
      EXPECT_EQ(m.heads % l.tp, 0);
      EXPECT_EQ(m.ffn_hidden % l.tp, 0);
      EXPECT_EQ(m.layers % (l.pp * l.interleave), 0);
      EXPECT_EQ(l.dp * l.micro_batch * l.micro_batches, m.global_batch);
      if (l.interleave > 1) {
        EXPECT_EQ(l.micro_batches % l.pp, 0);
      }
      EXPECT_TRUE(l.zero_stage == 0 || l.dp > 1);
      // Memory recomputed here, stage by stage, against 90% of the GPU.
      for (int s = 0; s < l.pp; ++s) {
        EXPECT_LE(EstimateTrainingMemory(m, l, s).total(), 0.9 * memory)
            << "stage " << s << " of dp " << l.dp << " pp " << l.pp << " tp " << l.tp;
      }
      EXPECT_TRUE(TpGroupStaysOnNvLinkOrHost(topology, l, routes))
          << "tp " << l.tp << " leaves NVLink on " << in.topology;
      const StepTimeEstimate& t = c.time;
      EXPECT_GT(t.step_ns, 0);
      EXPECT_NEAR(t.step_ns,
                  t.compute_ns + t.tp_comm_ns + t.bubble_ns + t.pp_comm_ns + t.dp_exposed_ns,
                  1e-6 * t.step_ns);
      EXPECT_GT(t.mfu, 0);
      EXPECT_LE(t.mfu, request.compute_efficiency + 1e-9);  // nothing beats the matmul rate
      EXPECT_LE(t.dp_exposed_ns, t.dp_comm_ns + 1e-6);
      if (l.pp == 1) {
        EXPECT_EQ(t.bubble_ns, 0);
        EXPECT_EQ(t.pp_comm_ns, 0);
      }
    }
    for (std::size_t i = 1; i < result.feasible.size(); ++i)
      EXPECT_LE(result.feasible[i - 1].time.step_ns, result.feasible[i].time.step_ns);
    for (const PlanCandidate& c : result.rejected) {
      EXPECT_FALSE(c.feasible);
      EXPECT_FALSE(c.detail.empty());
      if (c.reason == RejectReason::kOutOfMemory) {
        EXPECT_GT(c.memory.total(), 0.9 * memory);
      }
    }
  }
}

TEST(Planner, GptThreeOnSixtyFourDgxA100sKeepsTpInsideABox) {
  const Topology topology = MakeTopologyPreset("64x-dgx-a100-ib");
  const PlannerResult result =
      PlanParallelLayouts(RequestFor({"gpt3-175b", "64x-dgx-a100-ib", 512, 0, 0}), topology);
  ASSERT_FALSE(result.feasible.empty());
  const PlanCandidate& best = result.feasible.front();
  EXPECT_EQ(best.layout.tp, 8);  // TP on NVLink, the whole box
  EXPECT_EQ(best.time.tp_gbps, 300);
  // With TP on the whole box, each DP and PP group has one GPU per box, and
  // each GPU reaches the others through its own HDR NIC: 25 GB/s for every
  // DP group at once (12.5 when GPU pairs shared one NIC). A middle pipeline
  // stage sends to both neighbours over its NIC, so PP gets half with more
  // than two stages. At 25 GB/s the DP gradient traffic is cheap enough that
  // the seed's DP 64 x TP 8 (ZeRO-3, it fits no other way) is fastest.
  EXPECT_EQ(best.time.dp_gbps, 25);
  EXPECT_EQ(best.layout.dp, 64);
  EXPECT_EQ(best.layout.zero_stage, 3);
  for (const PlanCandidate& c : result.feasible) {
    if (c.layout.tp != 8) continue;
    if (c.layout.dp > 1) EXPECT_EQ(c.time.dp_gbps, 25) << c.layout.pp;
    if (c.layout.pp > 1) EXPECT_EQ(c.time.pp_gbps, c.layout.pp == 2 ? 25 : 12.5) << c.layout.pp;
  }
  EXPECT_GT(best.time.mfu, 0.2);
  // The seed text's DP 64 x TP 8 (no pipeline): Ψ/8 = 21.8B parameters per
  // GPU, 16 B each unsharded. On 80 GB it needs ZeRO-2 (2Ψ' of fp16
  // weights, 44 GB, stay whole); at a V100's 32 GB only ZeRO-3 fits.
  auto seed_layout_stages = [](const PlannerResult& r) {
    std::set<int> stages;
    for (const PlanCandidate& c : r.feasible) {
      if (c.layout.dp == 64 && c.layout.tp == 8 && c.layout.pp == 1)
        stages.insert(c.layout.zero_stage);
    }
    return stages;
  };
  EXPECT_EQ(seed_layout_stages(result), (std::set<int>{2, 3}));
  const PlannerResult v100_sized = PlanParallelLayouts(
      RequestFor({"gpt3-175b", "64x-dgx-a100-ib", 512, 32 * kGiB, 0}), topology);
  EXPECT_EQ(seed_layout_stages(v100_sized), (std::set<int>{3}));
}

TEST(Planner, TopChoiceIsStableAcrossRunsAndInputOrder) {
  const Topology topology = MakeTopologyPreset("64x-dgx-a100-ib");
  const PlannerRequest request = RequestFor({"gpt3-175b", "64x-dgx-a100-ib", 512, 0, 0});
  const PlannerResult first = PlanParallelLayouts(request, topology);
  const PlannerResult second = PlanParallelLayouts(request, topology);
  ASSERT_EQ(first.feasible.size(), second.feasible.size());
  ASSERT_EQ(first.rejected.size(), second.rejected.size());
  for (std::size_t i = 0; i < first.feasible.size(); ++i) {
    const ParallelLayout& a = first.feasible[i].layout;
    const ParallelLayout& b = second.feasible[i].layout;
    EXPECT_TRUE(a.dp == b.dp && a.pp == b.pp && a.tp == b.tp && a.zero_stage == b.zero_stage &&
                a.micro_batch == b.micro_batch && a.interleave == b.interleave &&
                a.recompute == b.recompute)
        << "row " << i;
    EXPECT_EQ(first.feasible[i].time.step_ns, second.feasible[i].time.step_ns);
  }
  // Listing the choices in another order changes nothing at the top.
  PlannerRequest reordered = request;
  std::reverse(reordered.zero_stages.begin(), reordered.zero_stages.end());
  std::reverse(reordered.micro_batch_sizes.begin(), reordered.micro_batch_sizes.end());
  std::reverse(reordered.interleaves.begin(), reordered.interleaves.end());
  std::reverse(reordered.recomputes.begin(), reordered.recomputes.end());
  const PlannerResult third = PlanParallelLayouts(reordered, topology);
  ASSERT_EQ(third.feasible.size(), first.feasible.size());
  for (std::size_t i = 0; i < std::min<std::size_t>(10, first.feasible.size()); ++i) {
    EXPECT_FALSE(RanksBefore(first.feasible[i], third.feasible[i]) ||
                 RanksBefore(third.feasible[i], first.feasible[i]))
        << "row " << i;
  }
  // A shuffled list sorts back into the same order.
  std::vector<PlanCandidate> shuffled = first.feasible;
  std::mt19937 rng(7);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::stable_sort(shuffled.begin(), shuffled.end(), RanksBefore);
  for (std::size_t i = 0; i < shuffled.size(); ++i) {
    EXPECT_FALSE(RanksBefore(shuffled[i], first.feasible[i]) ||
                 RanksBefore(first.feasible[i], shuffled[i]));
  }
}

TEST(Planner, EqualStepTimesPreferSmallerModelParallelism) {
  PlanCandidate a, b;
  a.time.step_ns = b.time.step_ns = 1e9;
  a.layout.tp = 4;
  b.layout.tp = 8;
  EXPECT_TRUE(RanksBefore(a, b));
  EXPECT_FALSE(RanksBefore(b, a));
  b.layout.tp = 4;
  a.layout.pp = 2;
  b.layout.pp = 4;
  EXPECT_TRUE(RanksBefore(a, b));
  b.layout.pp = 2;
  a.layout.zero_stage = 1;
  b.layout.zero_stage = 2;
  EXPECT_TRUE(RanksBefore(a, b));
  b.layout.zero_stage = 1;
  a.layout.micro_batch = 2;  // larger micro-batches first
  b.layout.micro_batch = 1;
  EXPECT_TRUE(RanksBefore(a, b));
  b.layout.micro_batch = 2;
  EXPECT_FALSE(RanksBefore(a, b) || RanksBefore(b, a));
}

// A small model whose every number is easy to steer.
TransformerShape Tiny() {
  TransformerShape m;
  m.name = "tiny";
  m.layers = 12;
  m.hidden = 768;
  m.heads = 12;
  m.seq_len = 1024;
  m.vocab = 50257;
  m.ffn_hidden = 4 * 768;
  m.global_batch = 48;
  m.micro_batch = 1;
  return m;
}

bool Has(const PlannerResult& r, RejectReason reason, const std::string& detail) {
  for (const PlanCandidate& c : r.rejected) {
    if (c.reason == reason && c.detail.find(detail) != std::string::npos) return true;
  }
  return false;
}

TEST(Planner, EveryRejectionReasonHasAnInputThatProducesIt) {
  const Topology cluster = MakeTopologyPreset("4x-dgx-a100-ib");  // 32 GPUs, 8 per box
  PlannerRequest r;
  r.model = Tiny();
  r.gpus = 32;
  const PlannerResult result = PlanParallelLayouts(r, cluster);
  // 12 heads: tp 8, 16 and 32 do not divide them.
  EXPECT_TRUE(Has(result, RejectReason::kTpSplitsHeads, "tp 8 does not divide 12 heads"));
  // 12 layers: pp 8 does not divide them.
  EXPECT_TRUE(Has(result, RejectReason::kPpSplitsLayers, "pp 8 does not divide 12 layers"));
  // dp 32 x b 2 = 64 does not divide 48.
  EXPECT_TRUE(
      Has(result, RejectReason::kBatchNotDivisible, "dp 32 x b 2 does not divide the batch of 48"));
  // pp 4 x v 4 = 16 does not divide 12 layers; v 3 with pp 4 leaves m 3 (dp 8, b 2)...
  EXPECT_TRUE(
      Has(result, RejectReason::kInterleaveInvalid, "pp 4 x v 4 does not divide 12 layers"));
  EXPECT_TRUE(Has(result, RejectReason::kInterleaveInvalid, "is not a multiple of pp"));

  // 16 heads and a node of 8: tp 16 would put its all-reduces on InfiniBand.
  r.model.heads = 16;
  r.model.hidden = 1024;
  r.model.ffn_hidden = 4096;
  const PlannerResult wide = PlanParallelLayouts(r, cluster);
  EXPECT_TRUE(Has(wide, RejectReason::kTpCrossesNode, "tp 16 > 8 GPUs per node"));
  // The same tp 16 is fine on the NVLink Switch System.
  const PlannerResult pod = PlanParallelLayouts(r, MakeTopologyPreset("4x-dgx-h100-superpod"));
  EXPECT_FALSE(Has(pod, RejectReason::kTpCrossesNode, ""));
  bool tp16 = false;
  for (const PlanCandidate& c : pod.feasible) tp16 = tp16 || c.layout.tp == 16;
  EXPECT_TRUE(tp16);

  // 1 GiB per GPU: the tiny model's 16Ψ (2.6 GB) does not fit unsharded.
  r.model = Tiny();
  r.gpu_memory_bytes = kGiB;
  const PlannerResult small = PlanParallelLayouts(r, cluster);
  EXPECT_TRUE(Has(small, RejectReason::kOutOfMemory, "usable"));
  for (const PlanCandidate& c : small.feasible)
    EXPECT_TRUE(c.layout.zero_stage > 0 || c.layout.tp * c.layout.pp > 1);
}

std::string PlanError(PlannerRequest r, const std::string& topology) {
  try {
    PlanParallelLayouts(r, MakeTopologyPreset(topology));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST(Planner, BadRequestsNameTheField) {
  PlannerRequest r;
  r.model = Tiny();
  r.gpus = 12;
  EXPECT_EQ(PlanError(r, "4x-dgx-a100-ib"),
            "gpus: 12 is not a whole number of 8-GPU nodes (try 8 or 16)");
  r.gpus = 64;
  EXPECT_EQ(PlanError(r, "4x-dgx-a100-ib"),
            "gpus: 64 is more than the 32 GPUs of topology '4x-dgx-a100-ib'");
  r.gpus = 0;
  EXPECT_EQ(PlanError(r, "dgx-a100"), "gpus: must be at least 1 (got 0)");
  r.gpus = 8;
  r.zero_stages = {4};
  EXPECT_EQ(PlanError(r, "dgx-a100"), "zero: 4 is not a ZeRO stage (0-3)");
  r.zero_stages = {0};
  r.model.heads = 7;
  EXPECT_NE(PlanError(r, "dgx-a100").find("hidden 768 is not a multiple of heads 7"),
            std::string::npos);
  // Fewer GPUs than a box is fine: 4 of 8.
  r.model = Tiny();
  r.gpus = 4;
  EXPECT_EQ(PlanError(r, "dgx-a100"), "");
}

TEST(GroupBandwidth, GroupsSharingALinkSplitIt) {
  // Four GPUs on one 16 GB/s bus: one pair alone gets it all; two pairs at
  // once put four transfers on it.
  const Topology bus = MakeSharedBus(4, 16, 1000);
  RouteTable routes(bus);
  const std::vector<GroupBandwidth> one = ConcurrentRingBandwidth(routes, bus, {{0, 1}});
  EXPECT_EQ(one[0].gbps, 8);  // both directions of the pair cross the bus
  EXPECT_EQ(one[0].alone_gbps, 16);
  const std::vector<GroupBandwidth> two = ConcurrentRingBandwidth(routes, bus, {{0, 1}, {2, 3}});
  EXPECT_EQ(two[0].gbps, 4);
  EXPECT_EQ(two[1].gbps, 4);
  EXPECT_TRUE(two[0].one_host);
  EXPECT_FALSE(two[0].nvlink_only);
  EXPECT_EQ(SlowestGroup(two).alpha_ns, 1000);
}

TEST(GroupBandwidth, NvSwitchBoxGivesEveryRingTheFullLink) {
  const Topology box = MakeTopologyPreset("dgx-h100");
  RouteTable routes(box);
  const std::vector<GroupBandwidth> rings =
      ConcurrentRingBandwidth(routes, box, {{0, 1, 2, 3}, {4, 5, 6, 7}});
  for (const GroupBandwidth& g : rings) {
    EXPECT_EQ(g.gbps, 450);
    EXPECT_TRUE(g.nvlink_only);
    EXPECT_EQ(g.alpha_ns, 700);
  }
}

}  // namespace
}  // namespace shardlab

namespace shardlab {
namespace {

TEST(PlannerSimulation, AnalyticStepTimesAgreeWithTheSimulatorAtFullPeak) {
  // The simulator runs matmuls at the full peak, so the analytic model is
  // asked for efficiency 1; both then differ only in how they model
  // communication (contention, overlap, latency per all-reduce).
  const Topology topology = MakeTopologyPreset("8x-dgx-h100-ib");
  PlannerRequest r;
  r.model = FindModelPreset("gpt3-13b");
  r.gpus = 64;
  r.compute_efficiency = 1.0;
  r.interleaves = {1};
  r.zero_stages = {0, 1};
  r.recomputes = {Recompute::kNone};
  const PlannerResult result = PlanParallelLayouts(r, topology);
  ASSERT_GE(result.feasible.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const PlanCandidate& c = result.feasible[i];
    const SimulatedLayout sim = SimulatePlanCandidate(r, topology, c);
    ASSERT_TRUE(sim.simulated) << sim.not_simulated;
    EXPECT_GT(sim.events, 0u);
    EXPECT_NEAR(c.time.step_ns / sim.step_ns, 1.0, 0.15)
        << "dp " << c.layout.dp << " pp " << c.layout.pp << " tp " << c.layout.tp << ": analytic "
        << c.time.step_ns * 1e-9 << " s, simulated " << sim.step_ns * 1e-9 << " s";
    EXPECT_LE(sim.mfu, 1.0);
  }
}

TEST(PlannerSimulation, SaysWhatItCannotRun) {
  PlanCandidate c;
  c.feasible = true;
  EXPECT_EQ(WhyNotSimulable(c), "");
  c.layout.interleave = 2;
  EXPECT_EQ(WhyNotSimulable(c), "interleaving v 2");
  c.layout.interleave = 1;
  c.layout.zero_stage = 3;
  EXPECT_EQ(WhyNotSimulable(c), "ZeRO-3");
  c.layout.zero_stage = 1;
  c.layout.recompute = Recompute::kFull;
  EXPECT_EQ(WhyNotSimulable(c), "full recomputation");
  c.feasible = false;
  EXPECT_EQ(WhyNotSimulable(c), "not feasible");
  PlannerRequest r;
  r.model = FindModelPreset("gpt3-1.3b");
  EXPECT_FALSE(SimulatePlanCandidate(r, MakeTopologyPreset("dgx-a100"), c).simulated);
}

}  // namespace
}  // namespace shardlab
