#include "engine/scenarios/dp_train_scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/metrics.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/scenarios/scenario.h"
#include "engine/train/grad_accumulation.h"
#include "engine/train/recompute.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"

namespace shardlab {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

std::string Num(double v, const char* format = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The plan's events: rank 0's time with communication in flight, and bytes sent per rank.
struct PlanTimes {
  double step_ms = 0, comm_ms = 0;
  Bytes most_sent = 0;
};

PlanTimes TimesOf(std::span<const Event> events, int ranks, int steps) {
  PlanTimes t;
  t.step_ms = static_cast<double>(RunSpanNs(events)) / 1e6 / steps;
  std::vector<Bytes> sent(static_cast<std::size_t>(ranks), 0);
  std::vector<std::pair<TimeNs, TimeNs>> busy;
  for (const Event& e : events) {
    if (e.kind == OpKind::kSend && e.rank >= 0 && e.rank < ranks) sent[e.rank] += e.bytes;
    if (e.rank == 0 && e.lane != Lane::kCompute) busy.emplace_back(e.start_ns, e.end_ns);
  }
  std::sort(busy.begin(), busy.end());
  TimeNs total = 0, end = -1;
  for (const auto& [s, f] : busy) {
    const TimeNs from = std::max(s, end);
    if (f > from) total += f - from;
    end = std::max(end, f);
  }
  t.comm_ms = static_cast<double>(total) / 1e6 / steps;
  t.most_sent = sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end());
  return t;
}

void RunTimingOnly(Plan plan, const Topology& topology, const Faults& faults, VectorSink* sink,
                   std::unique_ptr<Executor>* keep) {
  RunOptions options;
  options.timing_only = true;
  options.faults = faults;
  *keep = std::make_unique<Executor>(CreateBackend("sim"), std::move(plan), topology, options);
  (*keep)->RunToEnd(*sink);
}

}  // namespace

DpTrainScenario DpTrainFromParams(const ScenarioParams& p) {
  DpTrainScenario sc;
  DpTrainConfig& c = sc.config;
  c.ranks = static_cast<int>(p.Int("ranks"));
  c.model.layers = static_cast<int>(p.Int("layers"));
  c.model.width = static_cast<int>(p.Int("width"));
  c.model.batch = static_cast<int>(p.Int("batch"));
  c.model.optimizer = OptimizerKind::kSgd;
  c.model.learning_rate = static_cast<float>(p.Number("lr"));
  c.steps = static_cast<int>(p.Int("steps"));
  c.accumulate = static_cast<int>(p.Int("accumulate"));
  c.recompute = RecomputedLayers(ParseRecomputeMode(p.Text("recompute")), p.Text("recompute_layers"), c.model.layers);
  const std::string precision = p.Text("precision");
  c.precision = precision == "fp16" ? DType::kF16 : precision == "bf16" ? DType::kBF16 : DType::kF32;
  c.loss_scale.initial_scale = p.Number("loss_scale");
  c.loss_scale.growth_interval = static_cast<int>(p.Int("scale_growth_interval"));
  const std::string overflow = p.Text("overflow");
  if (overflow != "none") {
    const std::size_t at = overflow.find('@');
    int rank = -1, step = -1;
    char tail = 0;
    if (at == std::string::npos ||
        std::sscanf(overflow.c_str(), "%d@%d%c", &rank, &step, &tail) != 2 || rank < 0 || step < 0)
      Fail("overflow: '" + overflow + "' is not R@STEP (rank R's gradient gets an inf at step STEP), or none");
    c.overflow_rank = rank;
    c.overflow_step = step;
  }
  c.compression.kind = ParseCompression(p.Text("compress"));
  c.compression.topk_fraction = p.Number("topk");
  c.compression.bucket_elements = static_cast<std::int64_t>(p.Int("compress_bucket"));
  c.compression.error_feedback = p.Bool("error_feedback");
  c.local_steps = static_cast<int>(p.Int("local_steps"));
  c.staleness = static_cast<int>(p.Int("staleness"));
  sc.faults = FaultsFromParams(p);
  for (const SlowRank& s : sc.faults.slow_ranks)
    if (s.rank >= c.ranks) Fail("slow_rank: rank " + std::to_string(s.rank) + " is not one of the " + std::to_string(c.ranks) + " ranks");
  c.step_time.assign(static_cast<std::size_t>(c.ranks), 1.0);
  for (int r = 0; r < c.ranks; ++r) c.step_time[r] = sc.faults.SlowFactor(r);
  sc.topology = p.Text("topology");
  sc.plan_steps = std::min(c.steps, std::max(4, 2 * c.local_steps));
  CheckDpTrainConfig(c);
  return sc;
}

std::unique_ptr<PreparedDpTrain> PrepareDpTrain(const DpTrainScenario& scenario) {
  auto p = std::make_unique<PreparedDpTrain>();
  p->scenario = scenario;
  p->topology = LoadScenarioTopology(scenario.topology);
  CheckRanksFitTopology("ranks", scenario.config.ranks, "rank", scenario.topology, p->topology);
  ResolveFaults(p->scenario.faults, p->topology, scenario.config.ranks);
  p->result = RunDpTraining(scenario.config);
  DpTrainConfig base = scenario.config;
  base.accumulate = 1;
  base.recompute.clear();
  base.precision = DType::kF32;
  base.overflow_rank = base.overflow_step = -1;
  base.compression = CompressionConfig{};
  base.local_steps = 1;
  base.staleness = 0;
  p->baseline = RunDpTraining(base);
  p->plan = BuildDpTrainPlan(scenario.config, p->result, scenario.plan_steps);
  p->baseline_plan = BuildDpTrainPlan(base, p->baseline, scenario.plan_steps);
  return p;
}

DpTrainSummary SummarizeDpTrain(const PreparedDpTrain& prepared, std::span<const Event> events,
                                const Backend& backend, std::span<const Event> baseline_events,
                                const Plan& ran) {
  const DpTrainConfig& c = prepared.scenario.config;
  const DpTrainResult& r = prepared.result;
  const DpTrainResult& base = prepared.baseline;
  const int shown = prepared.plan.steps;
  DpTrainSummary s;
  auto& m = s.measured;
  const std::int64_t psi = MlpParameterCount(c.model);
  const AccumulationSplit split{c.model.batch / c.ranks, c.model.batch / c.ranks / c.accumulate};
  // Loss.
  m["loss_first"] = r.loss.front();
  m["loss_final"] = r.final_loss;
  m["baseline_loss_final"] = base.final_loss;
  m["loss_gap"] = std::fabs(r.final_loss - base.final_loss) / std::max(base.final_loss, 1e-30);
  // Communication.
  const double bytes_per_step = static_cast<double>(r.total_bytes()) / c.steps;
  m["bytes_per_step"] = bytes_per_step;
  m["bytes_per_sample"] = bytes_per_step / c.model.batch;
  m["baseline_bytes_per_step"] = static_cast<double>(base.total_bytes()) / c.steps;
  const PlanTimes t = TimesOf(events, c.ranks, shown);
  const PlanTimes tb = TimesOf(baseline_events, c.ranks, shown);
  m["wire_bytes_per_step"] = static_cast<double>(t.most_sent) / shown;
  m["time_ms"] = t.step_ms;
  m["comm_ms"] = t.comm_ms;
  m["baseline_time_ms"] = tb.step_ms;
  m["time_saved_ms"] = tb.step_ms - t.step_ms;
  // Memory and recomputation.
  const int e = c.mixed() ? 2 : 4;
  if (const MemoryUsage* usage = backend.memory()) {
    Bytes peak = 0;
    for (const RankMemory& rm : usage->ranks)
      peak = std::max(peak, rm.peak[static_cast<int>(MemoryCategory::kActivations)]);
    m["peak_activation_bytes"] = static_cast<double>(peak);
  }
  const std::vector<bool> none(static_cast<std::size_t>(c.model.layers), false);
  const std::vector<bool>& rec = c.recompute.empty() ? none : c.recompute;
  m["formula_activation_bytes"] = static_cast<double>(RecomputePeakActivationBytes(c.model, split.microbatch_rows, e, rec));
  m["recompute_flops_per_step"] = static_cast<double>(r.recompute_flops) / c.steps;
  m["formula_recompute_flops_per_step"] = RecomputeFlops(c.model, split.microbatch_rows, rec) * c.accumulate;
  // Loss scale.
  m["skipped_steps"] = r.skipped_steps();
  m["final_loss_scale"] = r.scale.back();
  m["nonfinite_updates"] = r.nonfinite_updates;
  // Compression, local and stale-synchronous SGD.
  m["compression_error_ratio"] = r.compression_error_ratio;
  int comm_steps = 0;
  for (const char x : r.communicated) comm_steps += x ? 1 : 0;
  m["communicating_steps"] = comm_steps;
  m["max_staleness"] = r.max_staleness;
  {
    // Time of the whole run in steps of a fast rank: stale-synchronous SGD
    // against lock-step (every step as long as the slowest rank's), which
    // every other mode is.
    double slowest = 1;
    for (const double x : c.step_time) slowest = std::max(slowest, x);
    m["makespan_steps"] = c.staleness > 0 ? r.makespan : slowest * c.steps;
    m["sync_makespan_steps"] = slowest * c.steps;
  }
  (void)ran;

  // The check.
  const bool exact_mode = c.compression.kind == Compression::kNone && !c.mixed() && c.local_steps == 1 &&
                          c.staleness == 0;
  if (exact_mode) {
    MlpBoundedReference reference(c.model, c.seed, UnitRoundoff(DType::kF32));
    for (int k = 0; k < c.steps; ++k) reference.TrainStep();
    VerdictJudge judge;
    for (int l = 0; l < c.model.layers; ++l) {
      judge.Compare("w" + std::to_string(l) + " after " + std::to_string(c.steps) + " steps", r.params[0].w[l],
                    reference.weight(l).value, reference.weight(l).Bound());
      judge.Compare("b" + std::to_string(l), r.params[0].b[l], reference.bias(l).value, reference.bias(l).Bound());
    }
    judge.CompareScalar("loss of step " + std::to_string(c.steps), r.loss.back(), reference.loss(), reference.loss_bound());
    s.verdict = judge.Finish();
  } else {
    s.verdict = NotChecked("the technique changes the arithmetic on purpose: its loss curve is compared with "
                           "synchronous fp32 training instead (loss_gap)");
  }
  m["correct"] = s.verdict.correct() ? 1 : 0;

  // Text.
  std::string& x = s.text;
  x += std::to_string(c.ranks) + " ranks, MLP " + std::to_string(c.model.layers) + "x" + std::to_string(c.model.width) +
       " (" + std::to_string(psi) + " parameters), batch " + std::to_string(c.model.batch) + " = " +
       std::to_string(c.ranks) + " ranks x " + std::to_string(c.accumulate) + (c.accumulate == 1 ? " micro-batch x " : " micro-batches x ") +
       std::to_string(split.microbatch_rows) + " rows, SGD lr " + Num(c.model.learning_rate) + ", " +
       prepared.topology.name + "\n";
  x += " step        loss    baseline" + std::string(c.loss_scaled() ? "   loss scale" : "") + "   sent (bytes)\n";
  for (int k = 0; k < c.steps; ++k) {
    if (c.steps > 12 && k >= 6 && k + 3 < c.steps) {
      if (k == 6) x += "  ...\n";
      continue;
    }
    char line[160];
    std::snprintf(line, sizeof line, "%5d  %10.6f  %10.6f", k, r.loss[static_cast<std::size_t>(k)],
                  base.loss[static_cast<std::size_t>(k)]);
    x += line;
    if (c.loss_scaled()) {
      std::snprintf(line, sizeof line, "  %11.0f", r.scale[static_cast<std::size_t>(k)]);
      x += line;
    }
    std::snprintf(line, sizeof line, "  %13lld", static_cast<long long>(r.bytes[static_cast<std::size_t>(k)]));
    x += line;
    if (r.skipped[static_cast<std::size_t>(k)]) x += "  skipped on every rank (overflow)";
    else if (c.local_steps > 1 && r.communicated[static_cast<std::size_t>(k)]) x += "  average";
    x += "\n";
  }
  x += "final loss " + Num(r.final_loss, "%.6f") + " (baseline " + Num(base.final_loss, "%.6f") + ", gap " +
       Num(100 * m["loss_gap"], "%.2f") + "%)\n";
  x += "result: " + s.verdict.Text();
  return s;
}

DpTrainSummary MeasureDpTrain(const ScenarioParams& params) {
  const DpTrainScenario sc = DpTrainFromParams(params);
  std::unique_ptr<PreparedDpTrain> prepared = PrepareDpTrain(sc);
  VectorSink sink, base_sink;
  std::unique_ptr<Executor> run, base_run;
  RunTimingOnly(std::move(prepared->plan.plan), prepared->topology, prepared->scenario.faults, &sink, &run);
  RunTimingOnly(std::move(prepared->baseline_plan.plan), prepared->topology, prepared->scenario.faults, &base_sink,
                &base_run);
  return SummarizeDpTrain(*prepared, sink.events, run->backend(), base_sink.events, run->plan());
}

namespace {

std::unique_ptr<Prepared> PrepareDpTrainRun(const ScenarioParams& p, const Topology* machine) {
  DpTrainScenario sc = DpTrainFromParams(p);
  std::shared_ptr<PreparedDpTrain> detail = PrepareDpTrain(sc);
  if (machine != nullptr) detail->topology = *machine;
  auto out = std::make_unique<Prepared>();
  out->topology = detail->topology;
  out->options.timing_only = true;  // the arithmetic ran in PrepareDpTrain
  out->options.faults = detail->scenario.faults;
  out->plan = std::move(detail->plan.plan);
  out->title = std::to_string(sc.config.ranks) + " ranks, " + std::to_string(sc.config.steps) +
               " steps on " + sc.topology;
  out->detail = std::move(detail);
  return out;
}

void SummarizeDpTrainRun(const Prepared& prepared, const FinishedRun& run, Summary& out) {
  const PreparedDpTrain& detail = prepared.Detail<PreparedDpTrain>();
  // The baseline (synchronous fp32 SGD) runs beside it: the time the
  // technique saves or costs is the difference.
  VectorSink base_sink;
  std::unique_ptr<Executor> base_run;
  RunTimingOnly(detail.baseline_plan.plan, prepared.topology, detail.scenario.faults, &base_sink,
                &base_run);
  DpTrainSummary sum =
      SummarizeDpTrain(detail, run.events, run.backend, base_sink.events, run.plan);
  for (const char ch : sum.text) {
    out.line += ch;
    if (ch == '\n') out.line += "# ";
  }
  out.values = std::move(sum.measured);
  out.verdict = std::move(sum.verdict);
}

}  // namespace

void RegisterScenario_dp_train_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "dp-train";
  s.title = "Data-parallel training techniques";
  s.summary =
      "multi-step data-parallel SGD of a small MLP with accumulation, recomputation, loss scaling, "
      "compression, local and stale-synchronous SGD";
  ParamSpec topology = TopologyParam();
  topology.default_text = "pcie-gen3-4gpu";
  ParamSpec slow = FaultParams()[0];
  slow.help = "a straggler: rank R's steps take FACTOR times longer (stale-synchronous SGD lets the others run ahead)";
  s.params = {
      Param("ranks", T::kInteger, "4", "data-parallel ranks N, one per GPU").Range(1, 64).Unit("GPUs"),
      Param("layers", T::kInteger, "4", "layers of the MLP").Range(1, 64).Unit("layers"),
      Param("width", T::kInteger, "32", "features of every layer").Range(1, 1024).Unit("features"),
      Param("batch", T::kInteger, "32", "global rows per optimizer step; splits into ranks x accumulate micro-batches")
          .Range(1, 1 << 16).Unit("rows"),
      Param("steps", T::kInteger, "20", "optimizer steps").Range(1, 2000).Unit("steps"),
      Param("lr", T::kNumber, "0.05", "SGD's learning rate").ValueName("X"),
      Param("accumulate", T::kInteger, "1", "gradient accumulation: micro-batches per all-reduce (K)")
          .Range(1, 1024).Unit("micro-batches").ValueName("K"),
      Param("recompute", T::kChoice, "none",
            "activation checkpointing: none, full (every hidden layer) or selective (recompute_layers)")
          .Choices({"none", "full", "selective"}).Noun("recompute mode"),
      Param("recompute_layers", T::kText, "", "selective: the layers that recompute, e.g. 0,2")
          .ValueName("LIST"),
      Param("precision", T::kChoice, "fp32",
            "fp32; fp16 mixed precision with a dynamic loss scale; or bf16 mixed precision, which needs no loss "
            "scale (fp32's exponent range, fewer mantissa bits)")
          .Choices({"fp32", "fp16", "bf16"}).Noun("precision"),
      Param("loss_scale", T::kNumber, "65536", "fp16: the initial loss scale S").Range(1, 1e30).ValueName("S"),
      Param("scale_growth_interval", T::kInteger, "2000", "fp16: good steps before S doubles")
          .Range(1, 1000000).Unit("steps"),
      Param("overflow", T::kText, "none", "fp16: rank R's gradient gets an inf at step STEP (a bad batch)")
          .ValueName("R@STEP"),
      Param("compress", T::kChoice, "none", "gradient compression: none, fp16, bf16, int8 (scale per bucket) or topk")
          .Choices({"none", "fp16", "bf16", "int8", "topk"}).Noun("compression"),
      Param("topk", T::kNumber, "0.01", "topk: the fraction of gradient elements each rank sends, in (0, 1]")
          .Range(0, 1).ValueName("F"),
      Param("compress_bucket", T::kInteger, "1024", "int8: elements that share one scale").Range(1, 1 << 24).Unit("elements"),
      Param("error_feedback", T::kBool, "true",
            "top-k: keep what a rank did not send and add it to its next gradient (error feedback)"),
      Param("local_steps", T::kInteger, "1", "local SGD: steps between averaging the ranks' parameters (H)")
          .Range(1, 1000).Unit("steps").ValueName("H"),
      Param("staleness", T::kInteger, "0",
            "stale-synchronous SGD: a rank may run up to S steps ahead of the slowest; 0: synchronous")
          .Range(0, 1000).Unit("steps").ValueName("S"),
      slow,
      topology,
  };
  s.measured = {
      {"loss_first", "", "the batch's loss before the first update"},
      {"loss_final", "", "the batch's loss after the last update"},
      {"baseline_loss_final", "", "the same after synchronous fp32 SGD without the technique"},
      {"loss_gap", "", "|loss_final - baseline_loss_final| / baseline_loss_final"},
      {"bytes_per_step", "bytes", "bytes the busiest rank sent per step (host count)"},
      {"bytes_per_sample", "bytes", "bytes_per_step / batch"},
      {"baseline_bytes_per_step", "bytes", "the same without the technique: 2(N-1)/N x 4 psi"},
      {"wire_bytes_per_step", "bytes", "bytes the busiest rank sent per step on the simulator"},
      {"time_ms", "ms", "one step on the simulator"},
      {"comm_ms", "ms", "rank 0's time with communication in flight, per step"},
      {"baseline_time_ms", "ms", "one step without the technique"},
      {"time_saved_ms", "ms", "baseline_time_ms - time_ms"},
      {"peak_activation_bytes", "bytes", "the largest rank's peak of activations (memory tracker)"},
      {"formula_activation_bytes", "bytes", "(2L - |R|) x b x H x bytes per element"},
      {"recompute_flops_per_step", "FLOPs", "rank 0's recomputation, executed"},
      {"formula_recompute_flops_per_step", "FLOPs", "K x |R| x (2bH^2 + bH)"},
      {"skipped_steps", "steps", "updates skipped for an overflow (every rank)"},
      {"final_loss_scale", "", "the loss scale of the last step"},
      {"nonfinite_updates", "", "updates that wrote inf or NaN into the weights (0)"},
      {"compression_error_ratio", "", "largest |compressed sum - sum| / its quantisation bound (<= 1)"},
      {"communicating_steps", "steps", "steps that all-reduced (local SGD: averaged)"},
      {"max_staleness", "steps", "largest lead of a rank over the slowest (<= staleness)"},
      {"makespan_steps", "steps", "the run's length in a fast rank's steps (lock-step unless stale-synchronous)"},
      {"sync_makespan_steps", "steps", "the same in lock-step"},
      {"correct", "", "1 when the weights match the single-device batch's within their bounds"},
  };
  s.check = [](const ScenarioParams& p) { (void)DpTrainFromParams(p); };
  s.prepare = PrepareDpTrainRun;
  s.summarize = SummarizeDpTrainRun;
  s.panels = {"dp_train_metrics"};
  RegisterScenario(std::move(s));
}

}  // namespace shardlab
