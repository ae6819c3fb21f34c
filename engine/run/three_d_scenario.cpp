#include "engine/run/three_d_scenario.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/model/zero_memory.h"
#include "engine/run/collective_scenario.h"

namespace shardlab {

std::unique_ptr<PreparedThreeD> PrepareThreeD(const ThreeDScenario& scenario) {
  return PrepareThreeD(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedThreeD> PrepareThreeD(const ThreeDScenario& scenario,
                                              const Topology& topology) {
  CheckScenarioBackend(scenario.backend);
  CheckParallelGrid(scenario.grid);
  CheckRanksFitTopology("grid", scenario.grid.ranks(), "rank", scenario.topology, topology);
  if (topology.num_gpus() != scenario.grid.ranks())
    throw Error("grid: " + scenario.grid.Text() + " = " + std::to_string(scenario.grid.ranks()) +
                " ranks, but topology '" + scenario.topology + "' has " +
                std::to_string(topology.num_gpus()) + " GPUs (3D uses every GPU, one rank each)");
  auto p = std::make_unique<PreparedThreeD>();
  p->scenario = scenario;
  p->topology = topology;
  const DeviceSpec& gpu = topology.nodes[topology.gpus[0]].device;
  if (scenario.timing_only()) {
    ThreeDTimingParams params;
    params.grid = scenario.grid;
    params.schedule = scenario.schedule;
    params.zero_stage = scenario.zero_stage;
    params.model = FindModelPreset(scenario.model);
    params.dp_buckets = scenario.dp_buckets;
    p->shape = params.model;
    p->three_d = BuildThreeDTiming(params);
    p->model_flops = params.model.TrainingFlopsPerSequence() * params.model.global_batch;
    p->peak_flops_per_gpu = gpu.fp16_tflops * 1e12;
  } else {
    ThreeDParams params;
    params.grid = scenario.grid;
    params.schedule = scenario.schedule;
    params.microbatches = scenario.microbatches;
    params.zero_stage = scenario.zero_stage;
    params.model = scenario.mlp;
    params.skip_dp_reduce = scenario.skip_dp_reduce;
    p->three_d = BuildThreeD(params);
    const MlpConfig& m = scenario.mlp;
    p->model_flops = 6.0 * m.batch * static_cast<double>(m.width) * m.width * m.layers;
    p->peak_flops_per_gpu = gpu.fp32_tflops * 1e12;
  }
  // Megatron's placement wants every TP group inside one box (NVLink).
  for (const auto& group : scenario.grid.TpGroups()) {
    const int host = topology.nodes[topology.gpus[group.front()]].host;
    for (int r : group)
      if (topology.nodes[topology.gpus[r]].host != host) {
        p->warnings.push_back("tp " + std::to_string(scenario.grid.tp) +
                              " spans more than one box: TP all-reduces (ranks " +
                              std::to_string(group.front()) + ".." + std::to_string(group.back()) +
                              ") cross the inter-node network");
        break;
      }
    if (!p->warnings.empty()) break;
  }
  return p;
}

namespace {

// Largest |got − want| over a block of a row-major tensor, relative to the
// block's largest |want|.
double BlockError(std::span<const float> got, const std::vector<float>& want, const TpBlock& b) {
  if (static_cast<std::int64_t>(got.size()) != b.rows * b.cols) return INFINITY;
  double diff = 0, scale = 0;
  for (std::int64_t r = 0; r < b.rows; ++r)
    for (std::int64_t c = 0; c < b.cols; ++c) {
      const double w = want[static_cast<std::size_t>((b.row0 + r) * b.total_cols + b.col0 + c)];
      const double d = std::fabs(static_cast<double>(got[static_cast<std::size_t>(r * b.cols + c)]) - w);
      diff = std::isnan(d) ? INFINITY : std::max(diff, d);
      scale = std::max(scale, std::fabs(w));
    }
  return scale > 0 ? diff / scale : diff;
}

ThreeDCheck CheckAgainstReference(const PreparedThreeD& prepared, const Backend& backend) {
  ThreeDCheck check;
  check.checked = true;
  const ThreeDPlan& plan = prepared.three_d;
  const ParallelGrid& grid = plan.params.grid;
  MlpReference reference(prepared.scenario.mlp, prepared.scenario.seed);
  reference.TrainStep();
  check.reference_loss = reference.loss();
  double worst = -1;
  const bool gradients = plan.params.zero_stage == 0;
  for (int r = 0; r < grid.ranks(); ++r) {
    if (plan.loss[r] != kNoBuffer && grid.CoordOf(r).tp == 0)
      for (const float loss : backend.BufferData(plan.loss[r])) check.loss += loss;
    for (const ThreeDTensor& t : plan.tensors[r]) {
      const auto& want_param = t.is_bias ? reference.bias(t.layer) : reference.weight(t.layer);
      const auto& want_grad = t.is_bias ? reference.bias_grad(t.layer) : reference.weight_grad(t.layer);
      const double we = BlockError(backend.BufferData(t.param), want_param, t.block);
      const double ge = gradients ? BlockError(backend.BufferData(t.grad), want_grad, t.block) : 0;
      check.weight_error = std::max(check.weight_error, we);
      check.gradient_error = std::max(check.gradient_error, ge);
      if (std::max(we, ge) > worst) {
        worst = std::max(we, ge);
        check.worst_tensor = (ge > we ? "d" : "") + t.name + " on rank " + std::to_string(r) +
                             " (" + GridCoordText(grid, r) + ")";
      }
    }
  }
  const double loss_error = std::fabs(check.loss - check.reference_loss) /
                            std::max(1e-30, std::fabs(check.reference_loss));
  check.correct = check.weight_error <= ThreeDCheck::kTolerance &&
                  check.gradient_error <= ThreeDCheck::kTolerance &&
                  loss_error <= ThreeDCheck::kTolerance;
  return check;
}

// Paper scale, per GPU of stage 0 (embeddings, and the most micro-batches
// in flight): activations stored for backward, Korthikanti et al. 2022
// (tensor parallel, no sequence parallelism, no recomputation):
// s·b·h·(10 + 24/t + 5·a·s/(h·t)) bytes per layer and micro-batch.
ThreeDMemory PaperMemory(const PreparedThreeD& prepared) {
  ThreeDMemory memory;
  const TransformerShape& m = prepared.shape;
  const ThreeDPlan& plan = prepared.three_d;
  const ParallelGrid& g = plan.params.grid;
  const int stage_layers = plan.stage_first_layer[1] - plan.stage_first_layer[0];
  const double params = (stage_layers * m.LayerParameters() + m.EmbeddingParameters()) / g.tp;
  memory.model_states_bytes = ZeroMemoryPerGpu(params, g.dp, plan.params.zero_stage, 12).total();
  const double s = m.seq_len, b = m.micro_batch, h = m.hidden, a = m.heads, t = g.tp;
  const double per_layer = s * b * h * (10 + 24 / t + 5 * a * s / (h * t));
  const int in_flight = plan.params.schedule == PipelineSchedule::kGPipe
                            ? plan.params.microbatches
                            : std::min(g.pp, plan.params.microbatches);
  memory.activations_bytes = per_layer * stage_layers * in_flight;
  return memory;
}

}  // namespace

ThreeDSummary SummarizeThreeD(const PreparedThreeD& prepared, std::span<const Event> events,
                              const Backend& backend, const Plan* ran) {
  const Plan& plan = ran != nullptr ? *ran : prepared.three_d.plan;
  const ThreeDPlan& three_d = prepared.three_d;
  const ParallelGrid& grid = three_d.params.grid;
  ThreeDSummary out;
  out.ops = plan.ops.size();
  out.events = events.size();
  out.microbatches = three_d.params.microbatches;
  out.model_flops = prepared.model_flops;
  const int ranks = grid.ranks();
  std::vector<TimeNs> compute(ranks, 0);
  std::vector<std::array<Bytes, kGroupKindCount>> sent(ranks);
  std::vector<std::array<TimeNs, kGroupKindCount>> busy(ranks);
  for (auto& s : sent) s.fill(0);
  for (auto& b : busy) b.fill(0);
  for (const Event& e : events) {
    out.step_ns = std::max(out.step_ns, e.end_ns);
    if (e.rank < 0 || e.rank >= ranks) continue;
    if (e.kind == OpKind::kCompute) compute[e.rank] += e.duration_ns();
    if (e.kind == OpKind::kSend && e.collective_seq >= 0 &&
        e.collective_seq < static_cast<int>(three_d.collectives.size())) {
      const int kind = static_cast<int>(three_d.collectives[e.collective_seq].kind);
      sent[e.rank][kind] += e.bytes;
      busy[e.rank][kind] += e.duration_ns();
    }
  }
  out.compute_ns = ranks > 0 ? *std::max_element(compute.begin(), compute.end()) : 0;
  out.exposed_ns = out.step_ns - out.compute_ns;
  out.bubble_formula = grid.pp > 1 ? double(grid.pp - 1) / out.microbatches : 0.0;
  for (int r = 0; r < ranks; ++r)
    for (int k = 0; k < kGroupKindCount; ++k) {
      ThreeDGroupTraffic& t = out.traffic[k];
      t.max_sent_bytes_per_rank = std::max(t.max_sent_bytes_per_rank, sent[r][k]);
      t.total_sent_bytes += sent[r][k];
      t.max_busy_ns_per_rank = std::max(t.max_busy_ns_per_rank, busy[r][k]);
    }
  if (out.step_ns > 0 && prepared.peak_flops_per_gpu > 0)
    out.mfu = prepared.model_flops /
              (out.step_ns * 1e-9 * ranks * prepared.peak_flops_per_gpu);
  if (prepared.scenario.timing_only()) out.memory = PaperMemory(prepared);
  if (const MemoryUsage* usage = backend.memory())
    for (const RankMemory& rank : usage->ranks)
      out.memory.tracked_peak_bytes = std::max(out.memory.tracked_peak_bytes, rank.peak_total);
  if (prepared.scenario.timing_only())
    out.check.not_checked_reason = "timing only: " + prepared.scenario.model +
                                   " runs without data (no reference to compare)";
  else
    out.check = CheckAgainstReference(prepared, backend);
  return out;
}

}  // namespace shardlab
