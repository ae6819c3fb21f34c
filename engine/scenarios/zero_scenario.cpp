#include "engine/scenarios/zero_scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/run/metrics.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"
#include "engine/core/units.h"
#include "engine/scenarios/scenario.h"

namespace shardlab {
namespace {

// Real runs hold every buffer as float on the host; past this many bytes
// over all ranks, ask for timing-only.
constexpr double kMaxRealBytes = 2.0 * (1 << 30);

double HostBytesOf(const ZeroParams& p) {
  // Every buffer is a float on the host for the whole run, transient ones
  // included: per rank the model states (5 copies of Ψ or of Ψ/N, bounded
  // by 5Ψ), and per step stage 2's bucket gradients (Ψ) or stage 3's two
  // gathers and layer gradients (3Ψ).
  const double psi = static_cast<double>(MlpParameterCount(p.model));
  const double per_step = p.stage == 3 ? 3 * psi : p.stage == 2 ? psi : 0;
  const double activations = 4.0 * p.model.layers * p.model.batch * p.model.width;
  return 4.0 * p.ranks * (5 * psi + p.steps * per_step) + 4.0 * activations;
}

}  // namespace

double ZeroRealRunHostBytes(const ZeroParams& params) { return HostBytesOf(params); }

void CheckZeroK(std::int64_t k) {
  if (k == kZeroPaperK || k == kSeedTextK) return;
  throw Error("k: must be 12 (the ZeRO paper: fp32 master copy, Adam m and v) or 8 (the seed texts: "
              "Adam m and v) (got " + std::to_string(k) + ")",
              ErrorKind::kInvalidInput);
}
double ZeroMaxRealRunBytes() { return kMaxRealBytes; }

MlpConfig MlpForParameterCount(double parameters) {
  MlpConfig m;
  const double ideal = std::sqrt(std::max(parameters, 1.0) / 16.0);
  int width = 64;
  while (width < 16384 && width * 2 <= ideal * 1.41) width *= 2;
  m.width = width;
  const double layer = static_cast<double>(width) * width + width;
  m.layers = static_cast<int>(std::clamp(std::llround(parameters / layer), 1LL, 4096LL));
  m.optimizer = OptimizerKind::kAdam;
  m.learning_rate = 1e-3f;
  return m;
}

void CheckZeroScenario(const ZeroScenario& scenario, const Topology& topology) {
  CheckScenarioBackend(scenario.backend);
  CheckZeroParams(scenario.params);
  CheckRanksFitTopology("ranks", scenario.params.ranks, "rank", scenario.topology, topology);
  if (!scenario.timing_only && ZeroRealRunHostBytes(scenario.params) > kMaxRealBytes)
    throw Error("params: a real run of " + std::to_string(MlpParameterCount(scenario.params.model)) +
                " parameters on " + std::to_string(scenario.params.ranks) +
                " ranks would hold about " + FormatBytes(static_cast<Bytes>(ZeroRealRunHostBytes(scenario.params))) +
                " of host memory; use --timing-only for models this large");
}

std::unique_ptr<PreparedZero> PrepareZero(const ZeroScenario& scenario) {
  return PrepareZero(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedZero> PrepareZero(const ZeroScenario& scenario, const Topology& topology) {
  CheckZeroScenario(scenario, topology);
  auto p = std::make_unique<PreparedZero>();
  p->scenario = scenario;
  p->topology = topology;
  p->zero = BuildZero(scenario.params);
  return p;
}

ZeroSummary SummarizeZero(const PreparedZero& prepared, std::span<const Event> events,
                          const Backend& backend, const Plan* ran) {
  const ZeroParams& p = prepared.scenario.params;
  const Plan& plan = ran != nullptr ? *ran : prepared.zero.plan;
  ZeroSummary s;
  s.parameter_count = static_cast<double>(prepared.zero.parameter_count);
  s.formula = ZeroMemoryPerGpu(s.parameter_count, p.ranks, p.stage, kZeroPaperK);
  s.formula_seed = ZeroMemoryPerGpu(s.parameter_count, p.ranks, p.stage, kSeedTextK);
  if (const MemoryUsage* usage = backend.memory()) s.memory = usage->ranks;
  s.sent_bytes.assign(static_cast<std::size_t>(plan.num_ranks), 0);
  for (const Event& e : events)
    if (e.kind == OpKind::kSend && e.rank >= 0 && e.rank < plan.num_ranks) s.sent_bytes[e.rank] += e.bytes;
  const Bytes most = s.sent_bytes.empty() ? 0 : *std::max_element(s.sent_bytes.begin(), s.sent_bytes.end());
  s.sent_elements_per_step = static_cast<double>(most) / DTypeBytes(DType::kF16) / p.steps;
  s.formula_elements_per_step =
      (p.stage == 3 ? 3.0 : 2.0) * (p.ranks - 1) / p.ranks * s.parameter_count;
  s.step_ns = RunSpanNs(events) / p.steps;
  s.collectives_per_step = prepared.zero.collectives_per_step;
  s.events = events.size();
  if (prepared.scenario.timing_only) {
    s.check.not_checked_reason = "timing only: the data was not computed";
    s.check.verdict = NotChecked(s.check.not_checked_reason);
    return s;
  }
  // The fp32 master parameters, put together from the ranks, against the
  // double-precision model after the same number of Adam steps.
  ZeroCheck& check = s.check;
  check.checked = true;
  MlpConfig m = p.model;
  m.optimizer = OptimizerKind::kAdam;
  const DType computed = ComputeDType(prepared.scenario.backend.c_str(), DType::kF16);
  MlpBoundedReference reference(m, prepared.scenario.seed, UnitRoundoff(computed));
  for (int k = 0; k < p.steps; ++k) reference.TrainStep();
  check.reference_loss = reference.loss();
  const std::int64_t psi = MlpParameterCount(m);
  VerdictJudge judge;
  // Stage 0: every rank holds a whole replica, each checked; stages 1-3:
  // the ranks' shards put together.
  const int replicas = p.stage == 0 ? p.ranks : 1;
  for (int replica = 0; replica < replicas; ++replica) {
    std::vector<float> got(static_cast<std::size_t>(psi), NAN);
    std::vector<int> owner(static_cast<std::size_t>(psi), -1);
    for (int r = 0; r < p.ranks; ++r) {
      if (p.stage == 0 && r != replica) continue;
      for (const ZeroPiece& piece : prepared.zero.master[r]) {
        const auto data = backend.BufferData(piece.slice.buffer);
        for (std::int64_t i = 0; i < piece.slice.count; ++i) {
          const auto at = static_cast<std::size_t>(piece.begin + i);
          got[at] = data[static_cast<std::size_t>(piece.slice.offset + i)];
          owner[at] = r;
        }
      }
    }
    const std::int64_t h = m.width;
    for (int l = 0; l < m.layers; ++l)
      for (const bool is_bias : {false, true}) {
        const BoundedTensor& want = is_bias ? reference.bias(l) : reference.weight(l);
        const std::int64_t begin = ZeroLayerOffset(m, l) + (is_bias ? h * h : 0);
        const std::span<const float> mine(got.data() + begin, want.value.size());
        // Name the ranks that hold the tensor's master copy.
        int first = owner[static_cast<std::size_t>(begin)], last = first;
        for (std::size_t i = 0; i < want.value.size(); ++i) {
          first = std::min(first, owner[static_cast<std::size_t>(begin) + i]);
          last = std::max(last, owner[static_cast<std::size_t>(begin) + i]);
        }
        const std::string held = first == last ? " on rank " + std::to_string(first)
                                                : " on ranks " + std::to_string(first) + "-" + std::to_string(last);
        check.parameter_error = std::max(check.parameter_error, RelativeTensorError(mine, want.value, want.det));
        judge.Compare((is_bias ? "b" : "w") + std::to_string(l) + " (fp32 master" + held + ")", mine,
                      want.value, want.Bound());
      }
  }
  for (const BufferId id : prepared.zero.loss) {
    const auto data = backend.BufferData(id);
    if (!data.empty()) check.loss += data[static_cast<std::size_t>(p.steps - 1)];
  }
  judge.CompareScalar("loss of step " + std::to_string(p.steps), check.loss, check.reference_loss,
                      reference.loss_bound());
  check.verdict = judge.Finish();
  check.correct = check.verdict.correct();
  return s;
}

ZeroScenario ZeroFromParams(const ScenarioParams &p) {
  ZeroScenario sc;
  ZeroParams &z = sc.params;
  z.stage = static_cast<int>(p.Int("zero_stage"));
  z.ranks = static_cast<int>(p.Int("ranks"));
  z.steps = static_cast<int>(p.Int("steps"));
  z.bucket_bytes = p.Size("bucket");
  z.overlap = p.Bool("overlap");
  const double count = p.Number("params");
  if (count > 0) {
    const MlpConfig sized = MlpForParameterCount(count);
    z.model.layers = sized.layers;
    z.model.width = sized.width;
  } else {
    z.model.layers = static_cast<int>(p.Int("layers"));
    z.model.width = static_cast<int>(p.Int("width"));
  }
  const int batch = static_cast<int>(p.Int("batch"));
  z.model.batch =
      batch > 0 ? batch
                : kZeroDefaultRowsPerRank * std::clamp(z.ranks, 1, 1 << 16);
  z.model.optimizer = OptimizerKind::kAdam;
  z.model.learning_rate = static_cast<float>(p.Number("lr"));
  sc.topology = p.Text("topology");
  sc.timing_only = p.Bool("timing_only");
  return sc;
}

std::string ZeroModelText(const MlpConfig& m) {
  const double psi = static_cast<double>(MlpParameterCount(m));
  return std::to_string(m.layers) + (m.layers == 1 ? " layer" : " layers") + " x " + std::to_string(m.width) + " = " +
         ParameterCountText(psi) + " parameters";
}

namespace {

/// Total length of the union of [start, end) intervals.
double UnionNs(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0, cur_start = 0, cur_end = -1;
  bool open = false;
  for (const auto& [s, e] : spans) {
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

/// Rank 0's communication time, and the part of it with no compute beside it.
std::pair<double, double> CommAndExposedNs(std::span<const Event> events) {
  std::vector<std::pair<double, double>> comm, compute, both;
  for (const Event& e : events) {
    if (e.rank != 0 || e.end_ns <= e.start_ns) continue;
    const bool is_comm = e.kind == OpKind::kSend || e.kind == OpKind::kRecv ||
                         e.kind == OpKind::kCollective;
    const bool is_compute = e.kind == OpKind::kCompute;
    if (is_comm) comm.emplace_back(e.start_ns, e.end_ns);
    if (is_compute) compute.emplace_back(e.start_ns, e.end_ns);
    if (is_comm || is_compute) both.emplace_back(e.start_ns, e.end_ns);
  }
  const double comm_ns = UnionNs(comm);
  // |comm \ compute| = |comm ∪ compute| − |compute|.
  const double exposed = UnionNs(both) - UnionNs(compute);
  return {comm_ns, std::max(0.0, exposed)};
}

std::string UnitsText(const ZeroPlan& zero) {
  const ZeroParams& p = zero.params;
  const std::size_t units = zero.units.size();
  if (p.stage == 3) return std::to_string(units) + " units (one per layer, gathered when needed)";
  return std::to_string(units) + (units == 1 ? " bucket" : " buckets") + " of up to " + FormatBytes(p.bucket_bytes) +
         " of fp16 gradient (whole layers, from the last one)";
}

/// The lines before the run: the stage, the model, the batch, the units.
std::vector<std::string> ZeroHeader(const PreparedZero& prepared) {
  const ZeroParams& p = prepared.zero.params;
  const MlpConfig& m = p.model;
  std::ostringstream model;
  model << "model  MLP of " << ZeroModelText(m) << " (Ψ = " << prepared.zero.parameter_count;
  if (prepared.asked_parameters > 0) model << ", asked " << ParameterCountText(prepared.asked_parameters);
  model << "), Adam, lr " << m.learning_rate;
  return {ZeroStageName(p.stage) + " (" + ZeroStageSharding(p.stage) + "), " + std::to_string(p.ranks) +
              (p.ranks == 1 ? " rank" : " ranks") + ", on " + prepared.scenario.topology,
          model.str(),
          "batch  " + std::to_string(m.batch) + " rows (" + std::to_string(m.batch / p.ranks) + " per rank), " +
              std::to_string(p.steps) + (p.steps == 1 ? " step" : " steps"),
          "units  " + UnitsText(prepared.zero) + ", overlap " + (p.overlap ? "on" : "off")};
}

std::unique_ptr<Prepared> PrepareZeroRun(const ScenarioParams& p, const Topology* machine) {
  CheckZeroK(p.Int("k"));
  const ZeroScenario sc = ZeroFromParams(p);
  std::shared_ptr<PreparedZero> detail =
      machine != nullptr ? PrepareZero(sc, *machine) : PrepareZero(sc);
  std::string title = "ZeRO stage " + std::to_string(sc.params.stage) + " on " +
      std::to_string(sc.params.ranks) + " ranks of " + sc.topology;
  detail->asked_parameters = p.IsSet("params") ? p.Number("params") : 0;
  std::vector<std::string> header = ZeroHeader(*detail);
  Topology& topology = detail->topology;
  Plan& plan = detail->zero.plan;
  auto out = PreparedPlan(p, topology, plan, sc.timing_only, sc.seed, std::move(title), std::move(detail));
  out->header = std::move(header);
  return out;
}

/// A float as the double its shortest text reads (0.001, not 0.00100000005).
double FloatAsTyped(float value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(value));
  return std::strtod(buf, nullptr);
}

/// "3(N-1)/N·Ψ": what a rank sends per step under the stage.
std::string ElementsFormulaText(int stage) { return stage == 3 ? "3(N-1)/N·Ψ" : "2(N-1)/N·Ψ"; }

/// Which collectives a step runs, in words, for the stage.
std::string CollectivesText(const ZeroPlan& zero) {
  const std::size_t units = zero.units.size();
  const std::string u = std::to_string(units);
  switch (zero.params.stage) {
    case 0:
      return u + (units == 1 ? " bucket" : " buckets") +
             " x all-reduce of the gradient (a ring: reduce-scatter + all-gather)";
    case 1:
    case 2:
      return u + (units == 1 ? " bucket" : " buckets") +
             " x (reduce-scatter of the gradient, all-gather of the updated parameters)";
    case 3:
      return u + (units == 1 ? " layer" : " layers") +
             " x (all-gather before forward, all-gather before backward, reduce-scatter of the gradient)";
  }
  return "";
}

ReportValue FormulaValue(int stage, int k, const ZeroMemoryFormula& f) {
  ReportValue v = ReportValue::Object();
  v.Add("k", k).Add("text", ZeroMemoryFormulaText(stage, k)).Add("parameters_bytes", f.parameters);
  v.Add("gradients_bytes", f.gradients).Add("optimizer_states_bytes", f.optimizer_states);
  return v.Add("total_bytes", f.total());
}

/// The rows under the memory table: communication per step beside its
/// formula; the setup and the check in --json.
void ZeroReport(const PreparedZero& prepared, const ZeroSummary& s, Report& r) {
  const ZeroParams& p = prepared.zero.params;
  const double ratio = s.formula_elements_per_step > 0 ? s.sent_elements_per_step / s.formula_elements_per_step : 0;
  r.Block().rows = {{}, {"", "Communication per step"}};
  ReportBlock& b = r.Block(18);
  b.rows = {{"  elements sent",
             ParameterCountText(s.sent_elements_per_step) + " by the busiest rank (fp16); formula " +
                 ElementsFormulaText(p.stage) + " = " + ParameterCountText(s.formula_elements_per_step) +
                 (p.ranks > 1 ? ", ratio " + FormatFixed(ratio, 3) : ""),
             "", "sent_elements_per_step", s.sent_elements_per_step},
            {"  collectives", std::to_string(s.collectives_per_step) + ": " + CollectivesText(prepared.zero), "",
             "collectives_per_step", s.collectives_per_step},
            TimeRow("  step time", "step_time_us", s.step_ns)};
  if (p.stage == 3) b.rows.push_back({"", "  Stage 3 gathers every layer twice (forward, backward): 1.5x data parallel's 2Ψ."});
  ReportValue& f = r.fields;
  f.Add("stage", p.stage).Add("stage_name", ZeroStageName(p.stage)).Add("layers", p.model.layers);
  f.Add("width", p.model.width).Add("parameters", prepared.zero.parameter_count);
  const double asked = prepared.asked_parameters;
  f.Add("asked_parameters", ReportValue::Maybe(asked > 0, static_cast<std::int64_t>(asked)));
  f.Add("optimizer", "adam").Add("lr", FloatAsTyped(p.model.learning_rate)).Add("bucket_bytes", p.bucket_bytes);
  f.Add("units", static_cast<std::int64_t>(prepared.zero.units.size()));
  f.Add("formula", FormulaValue(p.stage, kZeroPaperK, s.formula));
  f.Add("formula_seed", FormulaValue(p.stage, kSeedTextK, s.formula_seed));
  ReportValue sent = ReportValue::List();
  for (const Bytes bytes : s.sent_bytes) sent.Push(bytes);
  f.Add("sent_bytes", std::move(sent)).Add("formula_elements_per_step", s.formula_elements_per_step);
  f.Add("formula_elements_text", ElementsFormulaText(p.stage));
  AddCheckFields(f, s.check.checked, s.check.correct,
                 {{"parameter_error", s.check.parameter_error}, {"loss", s.check.loss},
                  {"reference_loss", s.check.reference_loss}},
                 s.check.not_checked_reason);
  r.result = s.check.checked
                 ? StepCheckText(s.check.verdict, "fp32 parameters after " + std::to_string(p.steps) + " Adam step" +
                                     (p.steps == 1 ? "" : "s") + " and the loss against their error bounds from the "
                                     "double-precision single-device model",
                                 s.check.loss, s.check.reference_loss, "")
                 : "not checked: " + s.check.not_checked_reason;
}

void SummarizeZeroRun(const Prepared& prepared, const FinishedRun& run, Summary& out) {
  const PreparedZero& detail = prepared.Detail<PreparedZero>();
  const ZeroScenario& sc = detail.scenario;
  auto kept = std::make_shared<ZeroSummary>(
      SummarizeZero(detail, run.events, run.backend, &run.plan));
  const ZeroSummary& s = *kept;
  out.detail = kept;
  out.verdict = s.check.verdict;
  ZeroReport(detail, s, out.report);
  auto at = [](const std::array<Bytes, kMemoryCategoryCount>& a, MemoryCategory c) {
    return static_cast<double>(a[static_cast<std::size_t>(c)]);
  };
  double states = 0, peak = 0;
  for (const RankMemory& m : s.memory) {
    states = std::max(states, at(m.persistent, MemoryCategory::kParameters) +
                                  at(m.persistent, MemoryCategory::kGradients) +
                                  at(m.persistent, MemoryCategory::kOptimizerStates));
    peak = std::max(peak, static_cast<double>(m.peak_total));
  }
  const auto [comm_ns, exposed_ns] = CommAndExposedNs(run.events);
  const double steps = std::max(1, sc.params.steps);
  out.values = {
      {"parameter_count", s.parameter_count},
      {"memory_per_gpu_bytes", states},
      {"formula_memory_per_gpu_bytes", s.formula.total()},
      {"seed_formula_memory_per_gpu_bytes", s.formula_seed.total()},
      {"peak_memory_per_gpu_bytes", peak},
      {"sent_elements_per_step", s.sent_elements_per_step},
      {"formula_elements_per_step", s.formula_elements_per_step},
      {"time_ms", s.step_ns / 1e6},
      {"comm_ms", comm_ns / steps / 1e6},
      {"exposed_comm_ms", exposed_ns / steps / 1e6},
      {"collectives_per_step", static_cast<double>(s.collectives_per_step)},
  };
  out.line = "ZeRO stage " + std::to_string(sc.params.stage) + " on " +
             std::to_string(sc.params.ranks) + " ranks, " + FormatFixed(s.parameter_count, 0) +
             " parameters: model states " + FormatBytes(static_cast<Bytes>(states)) +
             " per GPU (formula " + FormatBytes(static_cast<Bytes>(s.formula.total())) +
             "), step " + FormatTime(s.step_ns);
}

}  // namespace

void RegisterScenario_zero_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "zero";
  s.title = "Data parallel / ZeRO";
  s.summary =
      "data parallel / ZeRO stages 0-3 training of a small MLP with Adam";
  s.params = {
      Param("zero_stage", T::kInteger, "3",
            "0 (plain data parallel), 1, 2 or 3")
          .Range(0, 3)
          .Unit("stage")
          .OldNames({"stage"}),
      Param("ranks", T::kInteger, "4",
            "data-parallel ranks N, one per GPU (GPUs 0..N-1)")
          .Range(1, 65536)
          .Unit("GPUs"),
      Param("params", T::kCount, "0",
            "model size: 1B, 7.5B, 350M; builds the nearest MLP (a "
            "power-of-two width, as many "
            "layers as make up the count) in place of layers x width; 0: "
            "layers x width")
          .Min(0)
          .Unit("parameters"),
      Param("layers", T::kInteger, "4", "layers of the MLP")
          .Range(1, 100000)
          .Unit("layers"),
      Param("width", T::kInteger, "64", "features of every layer of the MLP")
          .Range(1, 1 << 20)
          .Unit("features"),
      Param("batch", T::kInteger, "0",
            "global rows per step; must divide by ranks; 0: 8 per rank")
          .Range(0, 1 << 24)
          .Unit("rows"),
      Param("steps", T::kInteger, "2", "training steps, one Adam update each")
          .Range(1, 1000)
          .Unit("steps"),
      Param("bucket", T::kSize, "25M",
            "gradient bucket of stages 0-2 (PyTorch DDP's 25 MiB)")
          .Min(1)
          .Unit("bytes"),
      Param("overlap", T::kBool, "true",
            "reduce each bucket during the backward as it is ready (the CLI: "
            "--no-overlap "
            "reduces after the whole backward)"),
      Param("lr", T::kNumber, "0.001", "Adam's learning rate")
          .ValueName("X"),
      Param("k", T::kInteger, "12",
            "optimizer bytes per parameter in the formula column: 12 (the ZeRO "
            "paper) "
            "or 8 (the seed texts)")
          .Range(8, 12)
          .Unit("bytes/parameter")
          .ValueName("8|12"),
      TopologyParam(),
      TimingOnlyParam(
          "skip the arithmetic: time and memory only (for paper-sized models)"),
  };
  for (ParamSpec& p : FaultParams()) s.params.push_back(std::move(p));  // faults.h
  s.measured = {
      {"parameter_count", "", "parameters of the model that ran"},
      {"memory_per_gpu_bytes", "bytes",
       "largest rank's model states as allocated"},
      {"formula_memory_per_gpu_bytes", "bytes", "ZeRO paper formula, K = 12"},
      {"seed_formula_memory_per_gpu_bytes", "bytes",
       "seed texts' formula, K = 8"},
      {"peak_memory_per_gpu_bytes", "bytes",
       "largest rank's peak of all buffers"},
      {"sent_elements_per_step", "elements", "most any rank sent per step"},
      {"formula_elements_per_step", "elements", "2(N-1)/N psi or 3(N-1)/N psi"},
      {"time_ms", "ms", "one training step"},
      {"comm_ms", "ms", "rank 0's time with communication in flight, per step"},
      {"exposed_comm_ms", "ms",
       "rank 0's communication with no compute beside it, per step"},
      {"collectives_per_step", "", "collectives per step"},
  };
  s.panels = {"zero_metrics", "zero_memory", "zero_legend", "zero_summary", "zero_how_to_read",
              "zero_stage_field", "zero_k_field"};
  s.check = [](const ScenarioParams& p) {
    CheckZeroK(p.Int("k"));
    const ZeroScenario sc = ZeroFromParams(p);
    CheckZeroScenario(sc, LoadScenarioTopology(sc.topology));
  };
  s.prepare = PrepareZeroRun;
  s.summarize = SummarizeZeroRun;
  s.resolve = [](const ScenarioParams& p, std::map<std::string, double>& values) {
    values["batch"] = ZeroFromParams(p).params.model.batch;
  };
  RegisterScenario(std::move(s));
}

} // namespace shardlab
