#include "engine/planner/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/parallel_grid.h"
#include "engine/core/error.h"
#include "engine/planner/group_bandwidth.h"

namespace shardlab {
namespace {

constexpr double kFp16Bytes = 2;
constexpr double kBackwardShareOfSlot = 2.0 / 3.0;  // backward = 2 × forward FLOPs
constexpr int kTpAllReducesPerLayer = 4;            // 2 forward (attention, MLP), 2 backward
constexpr int kRecomputedTpAllReduces = 2;          // the forward again, under full recompute

[[noreturn]] void Invalid(const std::string& message) {
  throw Error(message, ErrorKind::kInvalidInput);
}

std::vector<int> Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// GPU memory is sold in GiB ("80 GB" is 80 GiB), so fits are told in GiB.
std::string GibText(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(Bytes{1} << 30));
  return text;
}

ParallelGrid GridOf(const ParallelLayout& l) {
  ParallelGrid grid;
  grid.dp = l.dp;
  grid.pp = l.pp;
  grid.tp = l.tp;
  return grid;
}

// Neighbouring stages as pairs: activations one way, gradients the other.
std::vector<std::vector<int>> PpPairs(const ParallelGrid& grid) {
  std::vector<std::vector<int>> pairs;
  for (const std::vector<int>& chain : grid.PpGroups()) {
    for (std::size_t s = 0; s + 1 < chain.size(); ++s) pairs.push_back({chain[s], chain[s + 1]});
  }
  return pairs;
}

// Reduce-scatter or all-gather: half an all-reduce.
TimeNs RingHalfNs(double bytes, int n, Gbps gbps, TimeNs alpha_ns) {
  if (n <= 1 || gbps <= 0) return 0;
  return double(n - 1) / n * bytes / gbps + (n - 1) * alpha_ns;
}

struct LayoutLinks {
  GroupBandwidth tp, dp, pp;
};

StepTimeEstimate EstimateStepTime(const TransformerShape& shape, const ParallelLayout& l,
                                  const LayoutLinks& links, double stage_parameters,
                                  double compute_flops_per_s, double peak_flops, int gpus) {
  const double s = shape.seq_len, b = l.micro_batch, h = shape.hidden;
  const double layers = double(shape.layers) / l.pp;
  const double layer_forward = shape.LayerForwardFlopsPerSequence();
  const double attention_scores = 4.0 * s * s * h;  // Q·Kᵀ and P·V, forward
  double recomputed = 0;
  if (l.recompute == Recompute::kFull) recomputed = layer_forward;
  if (l.recompute == Recompute::kSelective) recomputed = attention_scores;
  // The last stage carries the logits too, so it sets the pace.
  const double slot_flops =
      b * (layers * (3 * layer_forward + recomputed) + 3 * shape.LogitsForwardFlopsPerSequence()) /
      l.tp;
  const TimeNs compute_slot = slot_flops / compute_flops_per_s * 1e9;

  const Bytes activation_bytes = static_cast<Bytes>(s * b * h * kFp16Bytes);
  const int all_reduces =
      kTpAllReducesPerLayer + (l.recompute == Recompute::kFull ? kRecomputedTpAllReduces : 0);
  const TimeNs tp_slot = layers * all_reduces *
                         RingAllReduceNs(activation_bytes, l.tp, links.tp.gbps, links.tp.alpha_ns);
  const TimeNs slot = compute_slot + tp_slot;
  const double m = l.micro_batches, v = l.interleave, p = l.pp;

  StepTimeEstimate t;
  t.tp_gbps = links.tp.gbps;
  t.pp_gbps = links.pp.gbps;
  t.dp_gbps = links.dp.gbps;
  t.compute_ns = m * compute_slot;
  t.tp_comm_ns = m * tp_slot;
  t.bubble_ns = (p - 1) / v * slot;
  if (l.pp > 1) {
    // With SP the activations cross between stages split by tp (Megatron's
    // scatter-gather), each tp rank sending its share at once.
    const TimeNs send = double(activation_bytes) / l.tp / links.pp.gbps + links.pp.alpha_ns;
    t.pp_comm_ns = 2 * (v * m + p - 1) * send;
  }
  if (l.dp > 1) {
    const double grads = stage_parameters * kFp16Bytes;
    const TimeNs all_reduce =
        RingAllReduceNs(static_cast<Bytes>(grads), l.dp, links.dp.gbps, links.dp.alpha_ns);
    const TimeNs half = RingHalfNs(grads, l.dp, links.dp.gbps, links.dp.alpha_ns);
    const TimeNs backward = kBackwardShareOfSlot * compute_slot;
    switch (l.zero_stage) {
      case 0:
        t.dp_comm_ns = all_reduce;
        t.dp_exposed_ns = std::max(0.0, all_reduce - backward);
        break;
      case 1:
        t.dp_comm_ns = 2 * half;
        t.dp_exposed_ns = std::max(0.0, half - backward) + half;
        break;
      case 2:
        t.dp_comm_ns = m * half + half;
        t.dp_exposed_ns = m * std::max(0.0, half - backward) + half;
        break;
      default:
        t.dp_comm_ns = m * 3 * half;
        t.dp_exposed_ns = m * std::max(0.0, 3 * half - compute_slot);
        break;
    }
  }
  t.step_ns = t.compute_ns + t.tp_comm_ns + t.bubble_ns + t.pp_comm_ns + t.dp_exposed_ns;
  const double model_flops = double(shape.global_batch) * shape.TrainingFlopsPerSequence();
  t.mfu = t.step_ns > 0 ? model_flops / (t.step_ns * 1e-9 * gpus * peak_flops) : 0;
  return t;
}

auto RankKey(const PlanCandidate& c) {
  const ParallelLayout& l = c.layout;
  return std::make_tuple(c.time.step_ns, l.tp, l.pp, l.zero_stage, -l.micro_batch, l.interleave,
                         static_cast<int>(l.recompute));
}

void CheckRequest(const PlannerRequest& r, const Topology& topology) {
  ValidateTransformerShape(r.model);
  if (topology.num_gpus() < 1) Invalid("topology: '" + topology.name + "' has no GPUs");
  if (r.gpus < 1) Invalid("gpus: must be at least 1 (got " + std::to_string(r.gpus) + ")");
  if (r.gpus > topology.num_gpus()) {
    Invalid("gpus: " + std::to_string(r.gpus) + " is more than the " +
            std::to_string(topology.num_gpus()) + " GPUs of topology '" + topology.name + "'");
  }
  int per_host = 0;
  const int host0 = topology.nodes[static_cast<std::size_t>(topology.gpus[0])].host;
  for (const int node : topology.gpus)
    per_host += topology.nodes[static_cast<std::size_t>(node)].host == host0;
  if (r.gpus > per_host && r.gpus % per_host != 0) {
    Invalid("gpus: " + std::to_string(r.gpus) + " is not a whole number of " +
            std::to_string(per_host) + "-GPU nodes (try " +
            std::to_string(r.gpus / per_host * per_host) + " or " +
            std::to_string((r.gpus / per_host + 1) * per_host) + ")");
  }
  if (r.gpu_memory_bytes < 0) Invalid("gpu-memory: must be positive");
  if (!(r.usable_memory_fraction > 0 && r.usable_memory_fraction <= 1))
    Invalid("usable-memory: the share of GPU memory must be in (0, 1]");
  if (!(r.compute_efficiency > 0 && r.compute_efficiency <= 1))
    Invalid("efficiency: the share of peak FLOPs must be in (0, 1]");
  if (r.zero_stages.empty() || r.micro_batch_sizes.empty() || r.interleaves.empty() ||
      r.recomputes.empty()) {
    Invalid(
        "planner: every choice list (zero stages, micro-batch sizes, interleaves, "
        "recomputation) needs at least one entry");
  }
  for (const int z : r.zero_stages)
    if (z < 0 || z > 3) Invalid("zero: " + std::to_string(z) + " is not a ZeRO stage (0-3)");
  for (const int b : r.micro_batch_sizes)
    if (b < 1) Invalid("micro-batch: sizes must be at least 1 (got " + std::to_string(b) + ")");
  for (const int v : r.interleaves)
    if (v < 1) Invalid("interleave: must be at least 1 (got " + std::to_string(v) + ")");
  if (r.optimizer_k_bytes < 0) Invalid("k: optimizer bytes per parameter must be >= 0");
  // Every GPU planned for must have the first one's figures: one peak, one memory.
  const DeviceSpec& first = topology.nodes[static_cast<std::size_t>(topology.gpus[0])].device;
  for (int i = 1; i < r.gpus; ++i) {
    const DeviceSpec& d =
        topology.nodes[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(i)])].device;
    if (d.model != first.model) {
      Invalid("topology: GPU " + std::to_string(i) + " is a " + d.model + ", GPU 0 a " +
              first.model + "; the planner needs one GPU model");
    }
  }
  if (!(first.fp16_tflops > 0)) Invalid("topology: GPU 0 (" + first.model + ") has no fp16 peak");
  if (r.gpu_memory_bytes == 0 && first.memory_bytes <= 0)
    Invalid("gpu-memory: GPU 0 (" + first.model + ") has no memory size; give --gpu-memory");
}

}  // namespace

const char* RejectReasonName(RejectReason reason) {
  switch (reason) {
    case RejectReason::kTpSplitsHeads:
      return "tp does not divide the heads";
    case RejectReason::kPpSplitsLayers:
      return "pp does not divide the layers";
    case RejectReason::kTpCrossesNode:
      return "tp group crosses a node";
    case RejectReason::kBatchNotDivisible:
      return "dp x micro-batch does not divide the batch";
    case RejectReason::kInterleaveInvalid:
      return "interleaving does not fit the stages";
    case RejectReason::kOutOfMemory:
      return "out of memory";
  }
  return "?";
}

bool RanksBefore(const PlanCandidate& a, const PlanCandidate& b) { return RankKey(a) < RankKey(b); }

PlannerResult PlanParallelLayouts(const PlannerRequest& request, const Topology& topology) {
  CheckRequest(request, topology);
  const TransformerShape& shape = request.model;
  const DeviceSpec& gpu = topology.nodes[static_cast<std::size_t>(topology.gpus[0])].device;

  PlannerResult result;
  result.gpu_model = gpu.model;
  result.gpu_memory_bytes =
      double(request.gpu_memory_bytes > 0 ? request.gpu_memory_bytes : gpu.memory_bytes);
  result.usable_memory_bytes = result.gpu_memory_bytes * request.usable_memory_fraction;
  result.peak_flops = gpu.fp16_tflops * 1e12;
  const int host0 = topology.nodes[static_cast<std::size_t>(topology.gpus[0])].host;
  for (int i = 0; i < topology.num_gpus(); ++i) {
    result.gpus_per_host +=
        topology.nodes[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(i)])].host ==
        host0;
  }
  const double compute_rate = result.peak_flops * request.compute_efficiency;

  RouteTable routes(topology);
  auto reject = [&](const ParallelLayout& layout, bool expanded, RejectReason reason,
                    std::string detail, const MemoryEstimate* memory = nullptr) {
    PlanCandidate c;
    c.layout = layout;
    c.expanded = expanded;
    c.reason = reason;
    c.detail = std::move(detail);
    if (memory != nullptr) c.memory = *memory;
    result.rejected.push_back(std::move(c));
  };

  for (const int tp : Divisors(request.gpus)) {
    for (const int pp : Divisors(request.gpus / tp)) {
      ParallelLayout base;
      base.tp = tp;
      base.pp = pp;
      base.dp = request.gpus / tp / pp;
      base.optimizer_k_bytes = request.optimizer_k_bytes;
      if (shape.heads % tp != 0 || shape.ffn_hidden % tp != 0) {
        reject(base, false, RejectReason::kTpSplitsHeads,
               "tp " + std::to_string(tp) + " does not divide " + std::to_string(shape.heads) +
                   " heads" +
                   (shape.ffn_hidden % tp != 0 ? " / MLP width " + std::to_string(shape.ffn_hidden)
                                               : ""));
        continue;
      }
      if (shape.layers % pp != 0) {
        reject(base, false, RejectReason::kPpSplitsLayers,
               "pp " + std::to_string(pp) + " does not divide " + std::to_string(shape.layers) +
                   " layers");
        continue;
      }
      LayoutLinks links;
      const ParallelGrid grid = GridOf(base);
      links.tp = SlowestGroup(ConcurrentRingBandwidth(routes, topology, grid.TpGroups()));
      if (tp > 1 && !links.tp.one_host && !links.tp.nvlink_only) {
        reject(base, false, RejectReason::kTpCrossesNode,
               "tp " + std::to_string(tp) + " > " + std::to_string(result.gpus_per_host) +
                   " GPUs per node: its all-reduces would leave NVLink (" +
                   std::to_string(static_cast<int>(links.tp.gbps)) + " GB/s)");
        continue;
      }
      links.dp = SlowestGroup(ConcurrentRingBandwidth(routes, topology, grid.DpGroups()));
      links.pp = SlowestGroup(ConcurrentRingBandwidth(routes, topology, PpPairs(grid)));

      for (const int b : request.micro_batch_sizes) {
        ParallelLayout batched = base;
        batched.micro_batch = b;
        if (shape.global_batch % (base.dp * b) != 0) {
          reject(batched, false, RejectReason::kBatchNotDivisible,
                 "dp " + std::to_string(base.dp) + " x b " + std::to_string(b) +
                     " does not divide the batch of " + std::to_string(shape.global_batch));
          continue;
        }
        batched.micro_batches = shape.global_batch / (base.dp * b);
        for (const int v : request.interleaves) {
          if (v > 1 && pp == 1) continue;  // one stage: nothing to interleave
          ParallelLayout chunked = batched;
          chunked.interleave = v;
          if (v > 1 && (shape.layers % (pp * v) != 0 || batched.micro_batches % pp != 0)) {
            reject(chunked, false, RejectReason::kInterleaveInvalid,
                   shape.layers % (pp * v) != 0
                       ? "pp " + std::to_string(pp) + " x v " + std::to_string(v) +
                             " does not divide " + std::to_string(shape.layers) + " layers"
                       : "m " + std::to_string(batched.micro_batches) +
                             " is not a multiple of pp " + std::to_string(pp));
            continue;
          }
          for (const int zero : request.zero_stages) {
            if (zero > 0 && base.dp == 1) continue;  // nothing to shard over
            for (const Recompute recompute : request.recomputes) {
              ParallelLayout layout = chunked;
              layout.zero_stage = zero;
              layout.recompute = recompute;
              const MemoryEstimate memory = EstimateTrainingMemory(shape, layout);
              if (memory.total() > result.usable_memory_bytes) {
                reject(layout, true, RejectReason::kOutOfMemory,
                       "needs " + GibText(memory.total()) + " > " +
                           GibText(result.usable_memory_bytes) + " usable",
                       &memory);
                continue;
              }
              PlanCandidate c;
              c.layout = layout;
              c.feasible = true;
              c.memory = memory;
              // The stage with most parameters sets the DP traffic.
              const double stage_parameters =
                  std::max(StageParametersPerGpu(shape, layout, 0),
                           StageParametersPerGpu(shape, layout, layout.pp - 1));
              c.time = EstimateStepTime(shape, layout, links, stage_parameters, compute_rate,
                                        result.peak_flops, request.gpus);
              result.feasible.push_back(std::move(c));
            }
          }
        }
      }
    }
  }
  std::stable_sort(result.feasible.begin(), result.feasible.end(), RanksBefore);
  return result;
}

}  // namespace shardlab
