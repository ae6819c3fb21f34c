#include "engine/scenarios/three_d_scenario.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/model/model_presets.h"
#include "engine/model/zero_memory.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"
#include "engine/algorithms/pipeline_schedule.h"
#include "engine/core/units.h"
#include "engine/run/faults.h"
#include "engine/scenarios/scenario.h"

namespace shardlab {

std::unique_ptr<PreparedThreeD> PrepareThreeD(const ThreeDScenario& scenario) {
  return PrepareThreeD(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedThreeD> PrepareThreeD(const ThreeDScenario& scenario,
                                              const Topology& topology) {
  CheckScenarioBackend(scenario.backend);
  CheckParallelGrid(scenario.grid);
  CheckRanksFitTopology("grid", scenario.grid.ranks(), "rank", scenario.topology, topology);
  auto p = std::make_unique<PreparedThreeD>();
  if (topology.num_gpus() > scenario.grid.ranks())
    p->warnings.push_back(scenario.grid.Text() + " uses GPUs 0-" +
                          std::to_string(scenario.grid.ranks() - 1) + " of the " +
                          std::to_string(topology.num_gpus()) + " in '" + scenario.topology +
                          "'; the rest stay idle");
  p->scenario = scenario;
  p->topology = topology;
  const DeviceSpec& gpu = topology.nodes[topology.gpus[0]].device;
  if (scenario.timing_only()) {
    ThreeDTimingParams params;
    params.grid = scenario.grid;
    params.schedule = scenario.schedule;
    params.zero_stage = scenario.zero_stage;
    try {
      params.model = FindModelPreset(scenario.model);
    } catch (const Error&) {
      throw Error("model: unknown model '" + scenario.model + "' (small, " + ModelPresetNames() + ")");
    }
    if (scenario.micro_batch != 0) params.model.micro_batch = scenario.micro_batch;
    if (scenario.global_batch != 0) params.model.global_batch = scenario.global_batch;
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

// The elements [first, end) of a block of a row-major tensor: the
// backend's, the reference's and their bounds, in the block's order.
struct BlockElements {
  std::vector<float> got;
  std::vector<double> want, bound, switches;  // switches: the bound's part for Adam's sign switches
};

// Largest |got − want| beyond the element's allowance for Adam's sign
// switches, relative to the largest |want| (for display).
double ErrorBeyondSwitches(const BlockElements& b) {
  if (b.got.size() != b.want.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < b.want.size(); ++i) {
    const double d = std::max(0.0, std::fabs(static_cast<double>(b.got[i]) - b.want[i]) - b.switches[i]);
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::fabs(b.want[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

BlockElements GatherBlock(std::span<const float> data, const BoundedTensor& reference, const TpBlock& b,
                          std::int64_t first = 0, std::int64_t end = -1) {
  BlockElements out;
  if (static_cast<std::int64_t>(data.size()) != b.rows * b.cols) {
    out.got.assign(data.begin(), data.end());  // a size mismatch, reported by the judge
    return out;
  }
  if (end < 0) end = b.rows * b.cols;
  const std::vector<double> bound = reference.Bound();
  for (std::int64_t i = first; i < end; ++i) {
    const std::int64_t r = i / b.cols, c = i % b.cols;
    const auto at = static_cast<std::size_t>((b.row0 + r) * b.total_cols + b.col0 + c);
    out.got.push_back(data[static_cast<std::size_t>(i)]);
    out.want.push_back(reference.value[at]);
    out.bound.push_back(bound[at]);
    out.switches.push_back(reference.det[at]);
  }
  return out;
}

ThreeDCheck CheckAgainstReference(const PreparedThreeD& prepared, const Backend& backend) {
  ThreeDCheck check;
  check.checked = true;
  const ThreeDPlan& plan = prepared.three_d;
  const ParallelGrid& grid = plan.params.grid;
  const DType computed = ComputeDType(prepared.scenario.backend.c_str(), DType::kF32);
  MlpBoundedReference reference(prepared.scenario.mlp, prepared.scenario.seed, UnitRoundoff(computed));
  reference.TrainStep();
  check.reference_loss = reference.loss();
  VerdictJudge judge;
  // ZeRO-1 leaves each DP rank the reduced gradient of its own chunk only.
  const bool zero1 = plan.params.zero_stage >= 1;
  for (int r = 0; r < grid.ranks(); ++r) {
    if (plan.loss[r] != kNoBuffer && grid.CoordOf(r).tp == 0)
      for (const float loss : backend.BufferData(plan.loss[r])) check.loss += loss;
    for (const ThreeDTensor& t : plan.tensors[r]) {
      const BoundedTensor& want_param = t.is_bias ? reference.bias(t.layer) : reference.weight(t.layer);
      const BoundedTensor& want_grad = t.is_bias ? reference.bias_grad(t.layer) : reference.weight_grad(t.layer);
      const std::string where = " on rank " + std::to_string(r) + " (" + GridCoordText(grid, r) + ")";
      const BlockElements param = GatherBlock(backend.BufferData(t.param), want_param, t.block);
      const int dp_index = grid.CoordOf(r).dp;
      const std::int64_t first = zero1 ? ChunkBegin(t.count, grid.dp, dp_index) : 0;
      const std::int64_t end = zero1 ? first + ChunkCount(t.count, grid.dp, dp_index) : t.count;
      const BlockElements grad = GatherBlock(backend.BufferData(t.grad), want_grad, t.block, first, end);
      check.weight_error = std::max(check.weight_error, ErrorBeyondSwitches(param));
      check.gradient_error = std::max(check.gradient_error, ErrorBeyondSwitches(grad));
      judge.Compare(t.name + where, param.got, param.want, param.bound);
      judge.Compare("d" + t.name + where, grad.got, grad.want, grad.bound);
    }
  }
  judge.CompareScalar("loss", check.loss, check.reference_loss, reference.loss_bound());
  check.verdict = judge.Finish();
  check.correct = check.verdict.correct();
  check.worst_tensor = check.verdict.worst.tensor;
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
  if (prepared.scenario.timing_only()) {
    out.check.not_checked_reason = "timing only: " + prepared.scenario.model +
                                   " runs without data (no reference to compare)";
    out.check.verdict = NotChecked(out.check.not_checked_reason);
  }
  else
    out.check = CheckAgainstReference(prepared, backend);
  return out;
}

ThreeDScenario ThreeDFromParams(const ScenarioParams &p) {
  ThreeDScenario sc;
  sc.grid = {static_cast<int>(p.Int("dp")), static_cast<int>(p.Int("pp")),
             static_cast<int>(p.Int("tp"))};
  sc.schedule = ParsePipelineSchedule(p.Text("schedule"));
  sc.zero_stage = static_cast<int>(p.Int("zero_stage"));
  sc.model = p.Text("model");
  sc.microbatches = static_cast<int>(p.Int("microbatches"));
  sc.mlp.layers = static_cast<int>(p.Int("layers"));
  sc.mlp.width = static_cast<int>(p.Int("width"));
  sc.mlp.batch = static_cast<int>(p.Int("batch"));
  sc.mlp.optimizer = ParseOptimizer(p.Text("optimizer"));
  const double lr = p.Number("lr");
  sc.mlp.learning_rate = lr > 0 ? static_cast<float>(lr)
                         : sc.mlp.optimizer == OptimizerKind::kAdam ? 1e-3f
                                                                    : 0.05f;
  sc.dp_buckets = static_cast<int>(p.Int("buckets"));
  sc.micro_batch = static_cast<int>(p.Int("micro_batch"));
  sc.global_batch = static_cast<int>(p.Int("global_batch"));
  sc.topology = p.Text("topology");
  return sc;
}

namespace {

/// The engine's "dp: ..." messages already name the field; others get `field`.
Error WithField(const Error& e, const std::string& field) {
  const std::string message = e.what();
  const std::size_t colon = message.find(": ");
  if (colon != std::string::npos && colon < 16 && message.find(' ') > colon) {
    return Error(message, ErrorKind::kInvalidInput);
  }
  return Error(field + ": " + message, ErrorKind::kInvalidInput);
}

Bytes GpuMemory(const Topology& topology) {
  return topology.nodes[topology.gpus[0]].device.memory_bytes;
}

/// ThreeDFromParams with the rules of a run that checks or times: a model preset
/// only timing-only, the small model only with data and within the host's budget.
ThreeDScenario ThreeDFromCheckedParams(const ScenarioParams& p) {
  ThreeDScenario sc = ThreeDFromParams(p);
  const bool small = sc.model == "small";
  const bool timing_only = p.Bool("timing_only");
  if (!small && !timing_only) {
    throw Error("timing_only: model '" + sc.model +
                    "' is paper-sized and runs without data: set timing_only = true",
                ErrorKind::kInvalidInput);
  }
  if (small && timing_only) {
    throw Error("timing_only: the small model always runs with data (it is checked against "
                "one device); timing_only is for the model presets",
                ErrorKind::kInvalidInput);
  }
  if (small) {
    for (const char* name : {"micro_batch", "global_batch"}) {
      if (p.Int(name) != 0) {
        throw Error(std::string(name) + ": only for a model preset (the small model uses batch "
                                        "and microbatches)",
                    ErrorKind::kInvalidInput);
      }
    }
    const double flops = 6.0 * sc.mlp.batch * double(sc.mlp.width) * sc.mlp.width * sc.mlp.layers;
    if (flops > kMaxHostFlops) {
      throw Error("width: one real step is " + FormatFixed(flops / 1e9, 0) +
                      " GFLOP of host arithmetic, above the 20 GFLOP a lab computes (a smaller "
                      "width, layers or batch, or a model preset with timing_only)",
                  ErrorKind::kInvalidInput);
    }
  }
  return sc;
}

// The same checks as PrepareThreeD without building the plan (a 512-GPU
// plan takes seconds; the validator checks every step and variant).
void CheckThreeDRun(const ScenarioParams& p) {
  const ThreeDScenario sc = ThreeDFromCheckedParams(p);
  try {
    CheckParallelGrid(sc.grid);
    const Topology topology = LoadScenarioTopology(sc.topology);
    CheckRanksFitTopology("grid", sc.grid.ranks(), "rank", sc.topology, topology);
    if (sc.timing_only()) {
      ThreeDTimingParams params;
      params.grid = sc.grid;
      params.schedule = sc.schedule;
      params.zero_stage = sc.zero_stage;
      params.model = FindModelPreset(sc.model);
      if (sc.micro_batch != 0) params.model.micro_batch = sc.micro_batch;
      if (sc.global_batch != 0) params.model.global_batch = sc.global_batch;
      params.dp_buckets = sc.dp_buckets;
      CheckThreeDTimingParams(params);
    } else {
      ThreeDParams params;
      params.grid = sc.grid;
      params.schedule = sc.schedule;
      params.microbatches = sc.microbatches;
      params.zero_stage = sc.zero_stage;
      params.model = sc.mlp;
      CheckThreeDParams(params);
    }
  } catch (const Error& e) {
    throw WithField(e, "model");
  }
}


std::unique_ptr<Prepared> PrepareThreeDRun(const ScenarioParams& p, const Topology* machine) {
  const ThreeDScenario sc = ThreeDFromCheckedParams(p);
  std::shared_ptr<PreparedThreeD> detail;
  try {
    detail = machine != nullptr ? PrepareThreeD(sc, *machine) : PrepareThreeD(sc);
  } catch (const Error& e) {
    throw WithField(e, "model");
  }
  std::string title = "3D " + sc.grid.Text() + " ZeRO-" + std::to_string(sc.zero_stage) + " " +
      PipelineScheduleName(sc.schedule) + ", " + sc.model + " on " + sc.topology;
  std::vector<std::string> header = {detail->three_d.plan.name + " on " + sc.topology};
  Topology& topology = detail->topology;
  Plan& plan = detail->three_d.plan;
  auto out = PreparedPlan(p, topology, plan, sc.timing_only(), sc.seed, std::move(title), std::move(detail));
  out->header = std::move(header);
  return out;
}

std::string Percent(double part, double whole) {
  return whole > 0 ? FormatFixed(100.0 * part / whole, 1) + "%" : "-";
}

std::string GroupExample(const std::vector<std::vector<int>>& groups) {
  const std::vector<int>& g = groups.front();
  std::string text = "{";
  for (std::size_t i = 0; i < g.size() && i < 4; ++i) text += (i ? "," : "") + std::to_string(g[i]);
  if (g.size() > 4) text += ",..," + std::to_string(g.back());
  return text + "}";
}

/// The grid and the step before the table of traffic per group kind;
/// memory, MFU and what the step approximates after it.
void ThreeDReport(const PreparedThreeD& p, const ThreeDSummary& s, Report& r) {
  const ParallelGrid& g = p.three_d.params.grid;
  const bool paper = p.scenario.timing_only();
  ReportBlock& grid = r.Block();
  grid.position = 0;
  grid.rows = {{"", "grid " + g.Text() + " = " + std::to_string(g.ranks()) +
                        " GPUs, Megatron order: rank = pp*(dp_size*tp_size) + dp*tp_size + tp"},
               {"", "  TP groups " + std::to_string(g.dp * g.pp) + " x " + std::to_string(g.tp) + " ranks, e.g. " +
                        GroupExample(g.TpGroups()) + "   DP groups " + std::to_string(g.pp * g.tp) + " x " +
                        std::to_string(g.dp) + ", e.g. " + GroupExample(g.DpGroups()) + "   PP groups " +
                        std::to_string(g.dp * g.tp) + " x " + std::to_string(g.pp) + ", e.g. " +
                        GroupExample(g.PpGroups())}};
  for (const std::string& w : p.warnings) grid.rows.push_back({"", "warning: " + w});
  grid.rows.push_back({});
  ReportBlock& step = r.Block(21);
  step.position = 0;
  step.rows = {{"step time", FormatTime(s.step_ns), "(" + std::to_string(s.microbatches) + " micro-batches per replica)",
                "step_time_us", s.step_ns / 1e3},
               {"  compute", FormatTime(s.compute_ns) + "  " + Percent(s.compute_ns, s.step_ns),
                "(the busiest GPU's compute lane)", "compute_us", s.compute_ns / 1e3},
               {"  not hidden", FormatTime(s.exposed_ns) + "  " + Percent(s.exposed_ns, s.step_ns),
                "(communication and pipeline bubble; bubble formula (p-1)/m = " + FormatFixed(s.bubble_formula, 3) +
                    " of compute)", "exposed_us", s.exposed_ns / 1e3},
               {}};
  ReportBlock& after = r.Block(21);
  after.rows = {{}};
  if (paper) {
    const double total = s.memory.model_states_bytes + s.memory.activations_bytes;
    const Bytes gpu_bytes = p.topology.nodes[p.topology.gpus[0]].device.memory_bytes;
    after.rows.push_back({"memory per GPU", FormatBytes(static_cast<Bytes>(total)) + " = model states " +
                              FormatBytes(static_cast<Bytes>(s.memory.model_states_bytes)) +
                              " (fp16 weights and gradients, 12 B/param of Adam state" +
                              (p.three_d.params.zero_stage ? " over dp" : "") + ") + activations " +
                              FormatBytes(static_cast<Bytes>(s.memory.activations_bytes)) +
                              " (sbh(10+24/t+5as/(ht)) per layer, no recomputation)"});
    if (gpu_bytes > 0)
      after.rows.push_back(
          {" ", "the GPU has " + FormatBytes(gpu_bytes) +
                    (s.memory.model_states_bytes > gpu_bytes
                         ? ": does NOT fit; the model states alone exceed it (try --zero-stage 1, or more --pp)"
                     : total > gpu_bytes ? ": does NOT fit without activation recomputation"
                                         : ": fits")});
  } else {
    after.rows.push_back({"memory per GPU", FormatBytes(s.memory.tracked_peak_bytes) +
                                                " peak (every fp32 buffer of the busiest GPU, as the simulator allocated them)"});
  }
  const double unit = s.model_flops >= 1e12 ? 1e12 : s.model_flops >= 1e9 ? 1e9 : 1e6;
  after.rows.push_back({"MFU", FormatFixed(100.0 * s.mfu, 1) + "%",
                        "(" + FormatFixed(s.model_flops / unit, 1) +
                            (unit == 1e12 ? " TFLOP" : unit == 1e9 ? " GFLOP" : " MFLOP") + " per step / (step time x " +
                            std::to_string(g.ranks()) + " GPUs x " + FormatFixed(p.peak_flops_per_gpu / 1e12, 1) +
                            " TFLOP/s " + (paper ? "fp16 tensor-core" : "fp32") + " peak))",
                        "mfu", s.mfu});
  after.rows.push_back({"plan", std::to_string(s.ops) + " ops"});
  if (paper)
    for (const char* line :
         {"approximation: one compute op per stage, micro-batch and pass with its layers'",
          "  FLOPs, and one TP all-reduce with the bytes of its 2 per layer (latency paid", "",
          "peak: the matmuls run at the GPU's full fp16 peak, so this MFU is an upper",
          "  bound (only the bubble and communication are lost). Real runs reach about",
          "  half: Megatron-LM measured ~140 TFLOP/s per A100 for GPT-3 175B (45% MFU);",
          "  `plan` assumes 50% of the peak (--efficiency)."})
      after.rows.push_back({"", *line ? std::string(line) : "  once); DP gradients in " + std::to_string(p.scenario.dp_buckets) +
                                                   " buckets after the last backward, not overlapped."});
  ReportValue& f = r.fields;
  f.Add("zero", p.three_d.params.zero_stage).Add("microbatches", s.microbatches);
  f.Add("bubble_formula", s.bubble_formula);
  ReportValue traffic = ReportValue::Object();
  for (int k = 0; k < kGroupKindCount; ++k) {
    ReportValue t = ReportValue::Object();
    t.Add("max_sent_bytes_per_gpu", s.traffic[k].max_sent_bytes_per_rank);
    t.Add("total_sent_bytes", s.traffic[k].total_sent_bytes);
    t.Add("max_send_time_us_per_gpu", s.traffic[k].max_busy_ns_per_rank / 1e3);
    traffic.Add(GroupKindName(GroupKind(k)), std::move(t));
  }
  f.Add("traffic", std::move(traffic)).Add("model_states_bytes_per_gpu", s.memory.model_states_bytes);
  f.Add("activation_bytes_per_gpu", s.memory.activations_bytes);
  f.Add("tracked_peak_bytes_per_gpu", s.memory.tracked_peak_bytes).Add("model_flops", s.model_flops);
  ReportValue warnings = ReportValue::List();
  for (const std::string& w : p.warnings) warnings.Push(w);
  f.Add("warnings", std::move(warnings));
  AddCheckFields(f, s.check.checked, s.check.correct,
                 {{"weight_error", s.check.weight_error}, {"gradient_error", s.check.gradient_error},
                  {"loss", s.check.loss}, {"reference_loss", s.check.reference_loss}},
                 s.check.not_checked_reason);
  r.result = s.check.checked
                 ? StepCheckText(s.check.verdict, "after one step, every gradient and parameter shard and the loss "
                                 "against its error bound from the double-precision single-device reference",
                                 s.check.loss, s.check.reference_loss, s.check.worst_tensor)
                 : "not checked (" + s.check.not_checked_reason + ")";
}

void SummarizeThreeDRun(const Prepared& prepared, const FinishedRun& run, Summary& summary) {
  const PreparedThreeD& detail = prepared.Detail<PreparedThreeD>();
  const ThreeDScenario& sc = detail.scenario;
  auto kept = std::make_shared<ThreeDSummary>(
      SummarizeThreeD(detail, run.events, run.backend, &run.plan));
  const ThreeDSummary& s = *kept;
  summary.detail = kept;
  summary.verdict = s.check.verdict;
  ThreeDReport(detail, s, summary.report);
  // Paper scale: the formulas' model states + activations; the small model:
  // the simulator's tracked peak of every buffer.
  const double memory = sc.timing_only()
                            ? s.memory.model_states_bytes + s.memory.activations_bytes
                            : static_cast<double>(s.memory.tracked_peak_bytes);
  const double gpu_memory = static_cast<double>(GpuMemory(detail.topology));
  const double parameters =
      sc.timing_only() ? detail.shape.TotalParameters()
                       : double(sc.mlp.layers) * sc.mlp.width * sc.mlp.width;
  auto traffic = [&](GroupKind kind) { return s.traffic[static_cast<int>(kind)]; };
  const double step_ns = static_cast<double>(s.step_ns);
    summary.values = {
      {"step_time_s", step_ns * 1e-9},
      {"step_time_ms", step_ns * 1e-6},
      {"compute_ms", s.compute_ns * 1e-6},
      {"compute_fraction", step_ns > 0 ? s.compute_ns / step_ns : 0.0},
      {"bubble_formula", s.bubble_formula},
      {"pipeline_microbatches", static_cast<double>(s.microbatches)},
      {"tp_bytes_per_gpu",
       static_cast<double>(traffic(GroupKind::kTensor).max_sent_bytes_per_rank)},
      {"pp_bytes_per_gpu",
       static_cast<double>(traffic(GroupKind::kPipeline).max_sent_bytes_per_rank)},
      {"dp_bytes_per_gpu", static_cast<double>(traffic(GroupKind::kData).max_sent_bytes_per_rank)},
      {"tp_time_ms", traffic(GroupKind::kTensor).max_busy_ns_per_rank * 1e-6},
      {"pp_time_ms", traffic(GroupKind::kPipeline).max_busy_ns_per_rank * 1e-6},
      {"dp_time_ms", traffic(GroupKind::kData).max_busy_ns_per_rank * 1e-6},
      {"parameter_count", parameters},
      {"model_state_bytes", s.memory.model_states_bytes},
      {"activation_bytes", s.memory.activations_bytes},
      {"memory_per_gpu_bytes", memory},
      {"gpu_memory_bytes", gpu_memory},
      {"fits", gpu_memory > 0 && memory <= gpu_memory ? 1.0 : 0.0},
      {"model_flops", s.model_flops},
      {"mfu", s.mfu},
      {"checked", s.check.checked ? 1.0 : 0.0},
      {"correct", s.check.checked && s.check.correct ? 1.0 : 0.0},
  };
  const ParallelGrid& g = sc.grid;
  summary.line = "3D " + g.Text() + " ZeRO-" + std::to_string(sc.zero_stage) + " " +
                PipelineScheduleName(sc.schedule) + ", " + sc.model + " on " + sc.topology +
                ": step " + FormatTime(s.step_ns) + ", compute " +
                FormatFixed(100.0 * summary.values["compute_fraction"], 1) + "%, MFU " +
                FormatFixed(100.0 * s.mfu, 1) + "%, memory " + FormatBytes(static_cast<Bytes>(memory)) +
                " per GPU of " + FormatBytes(static_cast<Bytes>(gpu_memory)) +
                (summary.values["fits"] > 0 ? " (fits)" : " (does NOT fit)");
  if (s.check.checked) summary.line += ", matches one device";
}


}  // namespace

void RegisterScenario_three_d_scenario() {
  using T = ParamType;
  std::vector<std::string> models = {"small"};
  for (const TransformerShape &shape : ModelPresets())
    models.push_back(shape.name);
  ScenarioSpec s;
  s.name = "3d";
  s.title = "3D parallel (DP x PP x TP)";
  s.summary = "one DP x PP x TP training step: the small MLP checked, or a "
              "preset timed";
  s.params = {
      Param("dp", T::kInteger, "2", "data-parallel replicas")
          .Range(1, 65536)
          .Unit("GPUs"),
      Param("pp", T::kInteger, "2", "pipeline stages")
          .Range(1, 4096)
          .Unit("GPUs"),
      Param("tp", T::kInteger, "2",
            "tensor-parallel ranks per stage (consecutive GPUs)")
          .Range(1, 65536)
          .Unit("GPUs"),
      Param("zero_stage", T::kInteger, "0",
            "0: DP all-reduce; 1: ZeRO-1 over each DP group")
          .Range(0, 1)
          .Unit("stage")
          .OldNames({"zero"}),
      Param("schedule", T::kChoice, "1f1b", "the pipeline schedule")
          .Choices({"1f1b", "gpipe"}),
      Param("model", T::kChoice, "small",
            "small (the real MLP) or a model preset (timed at paper scale, no "
            "data)")
          .Choices(models),
      Param("microbatches", T::kInteger, "4",
            "small: micro-batches per replica")
          .Range(1, 65536)
          .Unit("micro-batches")
          .Short('m'),
      Param("layers", T::kInteger, "8", "small: MLP layers; even when tp > 1")
          .Range(1, 100000)
          .Unit("layers"),
      Param("width", T::kInteger, "256",
            "small: features per layer, a multiple of tp")
          .Range(1, 1 << 20)
          .Unit("features"),
      Param("batch", T::kInteger, "64", "small: rows of the global batch")
          .Range(1, 1 << 24)
          .Unit("rows"),
      Param("optimizer", T::kChoice, "sgd", "small: the optimizer")
          .Choices({"sgd", "adam"}),
      Param("lr", T::kNumber, "0",
            "small: learning rate; 0: the optimizer's (0.05 sgd, 0.001 adam)")
          .ValueName("X"),
      Param("buckets", T::kInteger, "4",
            "paper scale: DP gradient buckets per GPU")
          .Range(1, 4096)
          .Unit("buckets"),
      Param("micro_batch", T::kInteger, "0",
            "paper scale: sequences per micro-batch; 0: the preset's")
          .Range(0, 1 << 20)
          .Unit("sequences"),
      Param("global_batch", T::kInteger, "0",
            "paper scale: sequences per step; 0: the preset's")
          .Range(0, 1 << 24)
          .Unit("sequences"),
      TopologyParam(
          "a preset or file with dp*pp*tp GPUs, e.g. 64x-dgx-a100-ib"),
      Param("timing_only", T::kBool, "false",
            "true for a preset (no data); false for small (the CLI: implied by "
            "--model)")
          .NoCli(),
  };
  for (ParamSpec& p : FaultParams()) s.params.push_back(std::move(p));  // faults.h
  s.measured = {
      {"step_time_s", "s", "one training step"},
      {"step_time_ms", "ms", "one training step"},
      {"compute_ms", "ms", "the busiest GPU's compute"},
      {"compute_fraction", "", "compute_ms / step_time_ms"},
      {"bubble_formula", "", "(p-1)/m of the schedule"},
      {"pipeline_microbatches", "", "micro-batches per replica that ran"},
      {"tp_bytes_per_gpu", "bytes",
       "busiest GPU's bytes sent in TP all-reduces"},
      {"pp_bytes_per_gpu", "bytes", "busiest GPU's bytes sent between stages"},
      {"dp_bytes_per_gpu", "bytes",
       "busiest GPU's bytes sent for DP gradients"},
      {"tp_time_ms", "ms", "busiest GPU's time sending TP traffic"},
      {"pp_time_ms", "ms", "busiest GPU's time sending PP traffic"},
      {"dp_time_ms", "ms", "busiest GPU's time sending DP traffic"},
      {"parameter_count", "", "parameters of the whole model"},
      {"model_state_bytes", "bytes",
       "preset: fp16 weights + grads + 12 B/param Adam per GPU"},
      {"activation_bytes", "bytes",
       "preset: stored activations per GPU, formula"},
      {"memory_per_gpu_bytes", "bytes",
       "preset: model states + activations; small: tracked peak"},
      {"gpu_memory_bytes", "bytes", "one GPU's memory on the topology"},
      {"fits", "", "1 when memory_per_gpu_bytes <= gpu_memory_bytes"},
      {"model_flops", "FLOP", "model FLOPs of one step"},
      {"mfu", "", "model FLOPs / (step x GPUs x peak)"},
      {"checked", "", "1 when compared with one device (small model)"},
      {"correct", "", "1 when checked and equal to one device"},
  };
  s.panels = {"three_d_metrics", "three_d_legend", "three_d_summary", "three_d_how_to_read",
              "three_d_schedule_field"};
  s.check = CheckThreeDRun;
  s.prepare = PrepareThreeDRun;
  s.summarize = SummarizeThreeDRun;
  s.resolve = [](const ScenarioParams& p, std::map<std::string, double>& values) {
    values["lr"] = ThreeDFromParams(p).mlp.learning_rate;
  };
  RegisterScenario(std::move(s));
}

} // namespace shardlab
