// Lab scenarios: the mapping of a parameter set onto the engine's scenarios,
// and the reduction of each run to named quantities. Adding a quantity means
// one row in the table (lab_scenario_table.cpp), one line where the run
// below fills `measured`, and one row in labs/README.md.
#include "engine/lab/lab_scenario.h"
#include "engine/lab/lab_scenario_3d.h"
#include "engine/lab/lab_scenario_moe.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/pipeline_schedule.h"
#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "engine/core/units.h"
#include "engine/model/tp_layer.h"
#include "engine/model/zero_memory.h"
#include "engine/scenarios/fault_params.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/memory_scenario.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/run/executor.h"
#include "engine/run/memory_tracker.h"
#include "engine/run/metrics.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab {
namespace {

using K = LabParamKind;

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

const LabScenarioSpec& SpecOrThrow(const std::string& scenario) {
  const LabScenarioSpec* spec = FindLabScenario(scenario);
  if (spec == nullptr) {
    throw Error("scenario: unknown scenario '" + scenario + "' (" + LabScenarioNames() + ")");
  }
  return *spec;
}

/// Every parameter of a scenario resolved: the file's value or the spec's
/// default, each checked. Throws "<name>: message".
class ResolvedParams {
 public:
  ResolvedParams(const std::string& scenario, const std::vector<LabParam>& params)
      : spec_(SpecOrThrow(scenario)), params_(LabScenarioParams(scenario, params)) {}

  const ScenarioParams& params() const { return params_; }
  std::int64_t Int(const std::string& name) const { return params_.Int(name); }

  /// The values formulas see, under each parameter's name and its old
  /// names (a lab's formula may say `stage` for zero_stage).
  LabValues Values() const {
    LabValues out;
    for (const LabParamSpec& s : spec_.params) {
      double value = 0;
      switch (s.kind) {
        case K::kInteger:
        case K::kNumber:
        case K::kSize:
        case K::kCount: value = params_.Number(s.name); break;
        case K::kBool: value = params_.Bool(s.name) ? 1.0 : 0.0; break;
        case K::kChoice:
        case K::kText:
        case K::kTopology: continue;
      }
      out[s.name] = value;
      for (const std::string& old : s.spec->old_names) out[old] = value;
    }
    return out;
  }

 private:
  const LabScenarioSpec& spec_;
  ScenarioParams params_;
};

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

/// Runs `plan` on the simulator to the end; throws Error(kRuntime) when the
/// run fails, unless `fault_stop_ok` and the faults hold a failed rank or
/// link: then the stop is the run's result (the simulator's report is the
/// executor's error) and the caller reads what finished.
void RunPlan(Plan plan, const Topology& topology, bool timing_only, std::uint64_t seed,
             std::unique_ptr<Executor>* executor, VectorSink* sink, const Faults& faults = {},
             bool fault_stop_ok = false, const RunOptions& machine = {}) {
  RunOptions options = machine;  // placement, shared memory and host issue, if any
  options.timing_only = timing_only;
  options.seed = seed;
  CheckFaultSteps(faults, plan);
  options.faults = faults;
  *executor = std::make_unique<Executor>(CreateBackend("sim"), std::move(plan), topology, options);
  const bool failure_asked = !faults.failed_ranks.empty() || !faults.failed_links.empty();
  try {
    (*executor)->RunToEnd(*sink);
  } catch (const Error&) {
    // The simulator ends a run that a failed rank or link holds with the
    // report of who never joined what (sim_backend.cpp).
    if (!(fault_stop_ok && failure_asked && (*executor)->state() == ExecutorState::kFailed)) throw;
    return;
  }
  if ((*executor)->state() != ExecutorState::kDone) {
    throw Error("the run failed: " + (*executor)->error(), ErrorKind::kRuntime);
  }
}

/// What a run that a failed rank or link stopped left behind, from the plan
/// and the events of the ops that finished.
struct FaultStop {
  double ops_done = 0;
  double stalled_step = -1;   // the first logical step with an op that never ran
  double waiting_ranks = 0;   // ranks with work left that did not fail themselves
};

FaultStop MeasureFaultStop(const Plan& plan, const std::vector<Event>& events,
                           const Faults& faults) {
  FaultStop out;
  std::vector<char> done(plan.ops.size(), 0);
  for (const Event& e : events) {
    if (e.op >= 0 && e.op < static_cast<OpId>(plan.ops.size()) && !done[e.op]) {
      done[e.op] = 1;
      out.ops_done += 1;
    }
  }
  std::vector<char> waiting(static_cast<std::size_t>(std::max(plan.num_ranks, 0)), 0);
  for (std::size_t id = 0; id < plan.ops.size(); ++id) {
    if (done[id]) continue;
    const Op& op = plan.ops[id];
    if (out.stalled_step < 0 || op.step < out.stalled_step) out.stalled_step = op.step;
    if (op.rank >= 0 && op.rank < plan.num_ranks && !faults.RankFailedAt(op.rank, op.step))
      waiting[static_cast<std::size_t>(op.rank)] = 1;
  }
  out.waiting_ranks = static_cast<double>(std::count(waiting.begin(), waiting.end(), 1));
  return out;
}

CollectiveScenario CollectiveFrom(const ResolvedParams& p) {
  return CollectiveFromParams(p.params());
}

/// A real collective run holds every rank's buffers as floats on the host.
void CheckCollectiveHostMemory(const CollectiveScenario& sc) {
  if (sc.timing_only) return;
  const double elements = static_cast<double>(sc.size_bytes) / DTypeBytes(sc.dtype);
  // Input and output buffers per rank (all-to-all: send and receive).
  const double bytes = 2.0 * sc.ranks * elements * sizeof(float);
  if (bytes > kLabMaxRealCollectiveBytes) {
    throw Error("size: a run with data of " + FormatBytes(sc.size_bytes) + " on " +
                std::to_string(sc.ranks) + " ranks needs about " +
                FormatBytes(static_cast<Bytes>(bytes)) + " of host memory (labs allow " +
                FormatBytes(static_cast<Bytes>(kLabMaxRealCollectiveBytes)) +
                "); set timing_only = true");
  }
}

PipelineScenario PipelineFrom(const ResolvedParams& p) { return PipelineFromParams(p.params()); }
TpScenario TpFrom(const ResolvedParams& p) { return TpFromParams(p.params()); }
ZeroScenario ZeroFrom(const ResolvedParams& p) { return ZeroFromParams(p.params()); }

MemoryScenario CheckMemory(const ResolvedParams& p) {
  const MemoryScenario m = MemoryFromParams(p.params());
  if (m.parameters <= 0) throw Error("params: must be more than 0");
  return m;
}

// ---- runs -----------------------------------------------------------------

LabRunResult RunCollectiveLab(const ResolvedParams& p) {
  const CollectiveScenario sc = CollectiveFrom(p);
  CheckCollectiveHostMemory(sc);
  // Stragglers and failures (slow_rank, ...): a throttle changes the machine
  // before the ring is chosen; the rest the simulator applies.
  Faults faults = FaultsFromParams(p.params());
  Topology topology = LoadScenarioTopology(sc.topology);
  ResolveFaults(faults, topology, sc.ranks);
  ApplyLinkThrottles(faults, topology);
  std::unique_ptr<PreparedCollective> prepared = PrepareCollective(sc, topology);
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  RunPlan(std::move(prepared->plan), prepared->topology, sc.timing_only,
                              sc.seed, &executor, &sink, faults, /*fault_stop_ok=*/true,
                              CollectiveRunOptions(sc));
  const Plan& plan = executor->plan();
  // The host lane (issue_us > 0): the calls the host made, their total.
  const std::vector<HostEnqueueSpan> host_lane = executor->backend().host_lane();
  double host_lane_ns = 0;
  for (const HostEnqueueSpan& h : host_lane) host_lane_ns += h.end_ns - h.start_ns;
  auto add_host = [&](LabRunResult& r) {
    const double run_ns = r.measured["time_ns"];
    r.measured["host_calls"] = static_cast<double>(host_lane.size());
    r.measured["host_lane_us"] = host_lane_ns / 1e3;
    r.measured["host_share"] = run_ns > 0 ? host_lane_ns / run_ns : 0.0;
  };
  std::vector<double> sent(static_cast<std::size_t>(std::max(sc.ranks, 1)), 0.0);
  for (const Event& e : sink.events) {
    if (e.kind == OpKind::kSend && e.rank >= 0 && e.rank < static_cast<int>(sent.size())) {
      sent[static_cast<std::size_t>(e.rank)] += static_cast<double>(e.bytes);
    }
  }
  const FaultStop stop = MeasureFaultStop(plan, sink.events, faults);
  const bool completed = executor->state() == ExecutorState::kDone;
  if (!completed) {
    // A failed rank or link stopped the run: the collective never finished,
    // so it has no bandwidth and its result is not checked.
    const double t = static_cast<double>(RunSpanNs(sink.events));
    LabRunResult r;
    r.measured = {
        {"time_ns", t}, {"time_us", t / 1e3}, {"time_ms", t / 1e6},
        {"algbw_gbps", 0.0}, {"busbw_gbps", 0.0},
        {"bytes_sent_per_rank", *std::max_element(sent.begin(), sent.end())},
        {"steps", static_cast<double>(plan.num_steps)},
        {"predicted_ns", prepared->predicted_ns},
        {"predicted_us", prepared->predicted_ns / 1e3},
        {"predicted_ms", prepared->predicted_ns / 1e6},
        {"formula_bandwidth_gbps", prepared->bandwidth_gbps},
        {"formula_alpha_us", prepared->alpha_ns / 1e3},
        {"completed", 0.0},
        {"ops_done", stop.ops_done},
        {"ops_total", static_cast<double>(plan.ops.size())},
        {"stalled_step", stop.stalled_step},
        {"waiting_ranks", stop.waiting_ranks},
    };
    r.summary = std::string(CollectiveAlgoName(sc.algo)) + " " + CollectiveTitle(sc.kind) +
                " of " + FormatBytes(sc.size_bytes) + " on " + std::to_string(sc.ranks) +
                " ranks (" + sc.topology + ") stopped: " + executor->error();
    add_host(r);
    return r;
  }
  const CollectiveOutcomeSummary s = SummarizeCollective(
      *prepared, RunSpanNs(sink.events), sink.events.size(), executor->backend(), &plan);
  if (s.checked && !s.verify.correct) {
    throw Error("the collective's result is wrong (a bug in the engine, please report it)",
                ErrorKind::kRuntime);
  }
  LabRunResult r;
  const double t = s.metrics.time_ns;
  r.measured = {
      {"completed", 1.0},
      {"ops_done", stop.ops_done},
      {"ops_total", static_cast<double>(plan.ops.size())},
      {"stalled_step", -1.0},
      {"waiting_ranks", 0.0},
      {"time_ns", t},
      {"time_us", t / 1e3},
      {"time_ms", t / 1e6},
      {"algbw_gbps", s.metrics.algbw_gbps},
      {"busbw_gbps", s.metrics.busbw_gbps},
      {"bytes_sent_per_rank", *std::max_element(sent.begin(), sent.end())},
      {"steps", static_cast<double>(plan.num_steps)},
      {"predicted_ns", prepared->predicted_ns},
      {"predicted_us", prepared->predicted_ns / 1e3},
      {"predicted_ms", prepared->predicted_ns / 1e6},
      {"formula_bandwidth_gbps", prepared->bandwidth_gbps},
      {"formula_alpha_us", prepared->alpha_ns / 1e3},
  };
  r.summary = std::string(CollectiveAlgoName(sc.algo)) + " " + CollectiveTitle(sc.kind) +
              " of " + FormatBytes(sc.size_bytes) + " on " + std::to_string(sc.ranks) +
              " ranks (" + sc.topology + "): " + FormatTime(t) + ", algbw " +
              Fixed(s.metrics.algbw_gbps, 1) + " GB/s, busbw " + Fixed(s.metrics.busbw_gbps, 1) +
              " GB/s, " + std::to_string(plan.num_steps) + " steps";
  add_host(r);
  if (!host_lane.empty()) {
    r.summary += "; host lane " + std::to_string(host_lane.size()) + " calls, " + FormatTime(host_lane_ns);
  }
  return r;
}

LabRunResult RunPipelineLab(const ResolvedParams& p) {
  const PipelineScenario sc = PipelineFrom(p);
  std::unique_ptr<PreparedPipeline> prepared = PreparePipeline(sc);
  const Faults faults = PrepareRunFaults(p.params(), "sim", prepared->topology, prepared->pipeline.plan);
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  RunPlan(std::move(prepared->pipeline.plan), prepared->topology,
                            sc.timing_only, sc.seed, &executor, &sink, faults);
  const Plan& plan = executor->plan();
  const PipelineOutcomeSummary s =
      SummarizePipeline(*prepared, sink.events, executor->backend(), &plan);
  if (s.check.checked && !s.check.correct) {
    throw Error("the pipelined training step differs from the single-device reference (" +
                    s.check.worst_tensor + "): a bug in the engine, please report it",
                ErrorKind::kRuntime);
  }
  const PipelineMetrics& m = s.metrics;
  int peak = 0, formula_peak = 0;
  for (const PipelineStageMetrics& st : m.stages) {
    peak = std::max(peak, st.peak_inflight);
    formula_peak = std::max(formula_peak, st.formula_peak_inflight);
  }
  LabRunResult r;
  r.measured = {
      {"time_ms", m.step_ns / 1e6},
      {"span_ms", m.span_ns / 1e6},
      {"bubble_fraction", m.bubble_over_useful},
      {"formula_bubble_fraction", m.formula_bubble_over_useful},
      {"bubble_share_of_step", m.bubble_of_step},
      {"formula_bubble_share_of_step", m.formula_bubble_of_step},
      {"peak_inflight", static_cast<double>(peak)},
      {"formula_peak_inflight", static_cast<double>(formula_peak)},
      {"peak_inflight_last",
       m.stages.empty() ? 0.0 : static_cast<double>(m.stages.back().peak_inflight)},
      {"transfers", static_cast<double>(m.transfers)},
      {"transfer_bytes", static_cast<double>(m.transfer_bytes)},
      {"steps", static_cast<double>(plan.num_steps)},
  };
  const PipelineShape& shape = sc.params.shape;
  r.summary = std::string(PipelineScheduleName(sc.params.schedule)) + ", " +
              std::to_string(shape.stages) + " stages, " + std::to_string(shape.microbatches) +
              " micro-batches: step " + FormatTime(m.step_ns) + ", bubble/useful " +
              Fixed(m.bubble_over_useful, 3) + " (formula " +
              Fixed(m.formula_bubble_over_useful, 3) + "), peak in flight " +
              std::to_string(peak);
  return r;
}

LabRunResult RunTpLab(const ResolvedParams& p) {
  const TpScenario sc = TpFrom(p);
  std::unique_ptr<PreparedTp> prepared = PrepareTp(sc);
  const TpAllReduceFormula formula = TpAllReduceEstimate(sc, prepared->topology);
  std::set<int> hosts;
  for (int g = 0; g < sc.layer.tp && g < prepared->topology.num_gpus(); ++g) {
    hosts.insert(prepared->topology.nodes[static_cast<std::size_t>(prepared->topology.gpus[
        static_cast<std::size_t>(g)])].host);
  }
  const Faults faults = PrepareRunFaults(p.params(), "sim", prepared->topology, prepared->layer.plan);
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  RunPlan(std::move(prepared->layer.plan), prepared->topology, sc.timing_only,
                      sc.seed, &executor, &sink, faults);
  const Plan& plan = executor->plan();
  const TpSummary s = SummarizeTp(*prepared, sink.events, executor->backend(), &plan);
  if (s.check.checked && !s.check.correct) {
    throw Error("the split layer differs from the single-device layer (" + s.check.worst_tensor +
                    "): a bug in the engine, please report it",
                ErrorKind::kRuntime);
  }
  const TpMetrics& m = s.metrics;
  double span_sum = 0;
  for (const TpCollectiveTiming& c : m.collectives) span_sum += c.span_ns;
  const double mean_span = m.collectives.empty() ? 0.0 : span_sum / m.collectives.size();
  LabRunResult r;
  r.measured = {
      {"time_ms", m.step_ns / 1e6},
      {"compute_ms", m.compute_ns / 1e6},
      {"comm_ms", m.comm_ns / 1e6},
      {"comm_fraction", m.comm_share},
      {"forward_allreduces", static_cast<double>(m.forward_allreduces)},
      {"backward_allreduces", static_cast<double>(m.backward_allreduces)},
      {"allreduce_tensor_bytes",
       m.collectives.empty() ? 0.0 : static_cast<double>(m.collectives.front().tensor_bytes)},
      {"allreduce_ms", mean_span / 1e6},
      {"formula_allreduce_ms", formula.ns / 1e6},
      {"ring_gbps", formula.bandwidth_gbps},
      {"hosts", static_cast<double>(hosts.size())},
  };
  r.summary = std::string("tp-") + TpLayerKindName(sc.layer.kind) + " at tp " +
              std::to_string(sc.layer.tp) + " (" + sc.topology + "): step " +
              FormatTime(m.step_ns) + ", communication " + Fixed(100 * m.comm_share, 1) +
              "%, " + std::to_string(m.forward_allreduces) + " + " +
              std::to_string(m.backward_allreduces) + " all-reduces";
  return r;
}

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
std::pair<double, double> CommAndExposedNs(const std::vector<Event>& events) {
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

LabRunResult RunZeroLab(const ResolvedParams& p) {
  const ZeroScenario sc = ZeroFrom(p);
  std::unique_ptr<PreparedZero> prepared = PrepareZero(sc);
  const Faults faults = PrepareRunFaults(p.params(), "sim", prepared->topology, prepared->zero.plan);
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  RunPlan(std::move(prepared->zero.plan), prepared->topology, sc.timing_only,
                        sc.seed, &executor, &sink, faults);
  const Plan& plan = executor->plan();
  const ZeroSummary s = SummarizeZero(*prepared, sink.events, executor->backend(), &plan);
  if (s.check.checked && !s.check.correct) {
    throw Error("the trained parameters differ from the single-device reference: a bug in the "
                "engine, please report it",
                ErrorKind::kRuntime);
  }
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
  const auto [comm_ns, exposed_ns] = CommAndExposedNs(sink.events);
  const double steps = std::max(1, sc.params.steps);
  LabRunResult r;
  r.measured = {
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
  r.summary = "ZeRO stage " + std::to_string(sc.params.stage) + " on " +
              std::to_string(sc.params.ranks) + " ranks, " + Fixed(s.parameter_count, 0) +
              " parameters: model states " + FormatBytes(static_cast<Bytes>(states)) +
              " per GPU (formula " + FormatBytes(static_cast<Bytes>(s.formula.total())) +
              "), step " + FormatTime(s.step_ns);
  return r;
}

LabRunResult RunMemoryLab(const ResolvedParams& p) {
  const MemoryScenario m = CheckMemory(p);
  const ZeroMemoryFormula f = ZeroMemoryPerGpu(m.parameters, m.ranks, m.stage, m.k_bytes);
  LabRunResult r;
  r.measured = {
      {"memory_per_gpu_bytes", f.total()},
      {"memory_per_gpu_gb", f.total() / 1e9},
      {"parameter_bytes", f.parameters},
      {"gradient_bytes", f.gradients},
      {"optimizer_bytes", f.optimizer_states},
  };
  r.summary = "ZeRO stage " + std::to_string(m.stage) + ", " +
              ZeroMemoryFormulaText(m.stage, m.k_bytes) + " per GPU = " +
              Fixed(f.total() / 1e9, 2) + " GB";
  return r;
}


}  // namespace

ScenarioParams LabScenarioParams(const std::string& scenario, const std::vector<LabParam>& params) {
  const LabScenarioSpec& spec = SpecOrThrow(scenario);
  ScenarioParams out(*spec.spec);
  for (const LabParam& p : params) {
    const LabParamSpec* s = spec.FindParam(p.name);
    if (s == nullptr) {
      std::vector<std::string> names;
      for (const LabParamSpec& known : spec.params) names.push_back(known.name);
      throw Error(p.name + ": unknown parameter of scenario '" + spec.name + "' (" +
                  JoinNames(names) + ")");
    }
    try {
      CheckLabParam(*s, p);
    } catch (const Error& e) {
      throw Error(p.name + ": " + e.what());
    }
    out.Set(s->name, LabParamSpecText(p));
  }
  return out;
}

namespace {

void CheckScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  const ResolvedParams p(scenario, params);
  // Fault switches (slow_rank, ...) parse here; ranks, links and steps are
  // checked against the run's plan when it runs.
  FaultsFromParams(p.params());
  if (scenario == "collective") {
    const CollectiveScenario sc = CollectiveFrom(p);
    CheckCollectiveScenario(sc, LoadScenarioTopology(sc.topology));
    CheckCollectiveHostMemory(sc);
  } else if (scenario == "pipeline") {
    const PipelineScenario sc = PipelineFrom(p);
    CheckPipelineScenario(sc, LoadScenarioTopology(sc.topology));
  } else if (scenario == "tp") {
    const TpScenario sc = TpFrom(p);
    CheckTpScenario(sc, LoadScenarioTopology(sc.topology));
  } else if (scenario == "zero") {
    const ZeroScenario sc = ZeroFrom(p);
    CheckZeroScenario(sc, LoadScenarioTopology(sc.topology));
  } else if (scenario == "memory") {
    CheckMemory(p);
  } else if (scenario == "3d") {
    CheckThreeDLab(p.params());
  } else if (scenario == "plan") {
    CheckPlanLab(p.params());
  } else if (scenario == "moe") {
    CheckMoeLab(p.params());
  } else if (const ScenarioSpec& spec = p.params().spec(); spec.check) {
    spec.check(p.params());
  }
}

LabRunResult RunScenario(const std::string& scenario, const std::vector<LabParam>& params);

/// The engine names a parameter by its new name ("ranks: ..."); parameters
/// spelled the old way ("gpus", as an older lab file or caller wrote them)
/// read their own spelling back.
Error InGivenSpelling(const Error& e, const std::string& scenario,
                      const std::vector<LabParam>& params) {
  const LabScenarioSpec* spec = FindLabScenario(scenario);
  const std::string message = e.what();
  for (const LabParam& given : params) {
    const LabParamSpec* ps = spec != nullptr ? spec->FindParam(given.name) : nullptr;
    if (ps == nullptr || ps->name == given.name) continue;
    const std::string prefix = ps->name + ": ";
    if (message.rfind(prefix, 0) == 0)
      return Error(given.name + ": " + message.substr(prefix.size()), e.kind());
  }
  return e;
}

}  // namespace

void CheckLabScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  try {
    CheckScenario(scenario, params);
  } catch (const Error& e) {
    throw InGivenSpelling(e, scenario, params);
  }
}

LabRunResult RunLabScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  try {
    return RunScenario(scenario, params);
  } catch (const Error& e) {
    throw InGivenSpelling(e, scenario, params);
  }
}

LabEngineScenario ToEngineScenario(const std::string& scenario,
                                   const std::vector<LabParam>& params) {
  const ResolvedParams p(scenario, params);
  LabEngineScenario out;
  if (scenario == "collective") out.collective = CollectiveFrom(p);
  if (scenario == "pipeline") out.pipeline = PipelineFrom(p);
  if (scenario == "tp") out.tp = TpFrom(p);
  if (scenario == "zero") out.zero = ZeroFrom(p);
  return out;
}

LabValues LabParamValues(const std::string& scenario, const std::vector<LabParam>& params) {
  const ResolvedParams p(scenario, params);
  LabValues values = p.Values();
  // Parameters whose default follows others ("0: every GPU of the topology")
  // show formulas the value the run uses.
  if (scenario == "collective") values["ranks"] = CollectiveFrom(p).ranks;
  if (scenario == "pipeline") {
    const PipelineScenario sc = PipelineFrom(p);
    values["chunks"] = sc.params.shape.chunks;
    values["lr"] = sc.params.model.learning_rate;
  }
  if (scenario == "zero") values["batch"] = ZeroFrom(p).params.model.batch;
  if (scenario == "3d") values["lr"] = ThreeDFromParams(p.params()).mlp.learning_rate;
  if (scenario == "plan" && p.Int("ranks") == 0) {
    values["ranks"] = values["gpus"] =
        LoadScenarioTopology(p.params().Text("topology")).num_gpus();
  }
  return values;
}

namespace {

LabRunResult RunScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  const ResolvedParams p(scenario, params);
  if (scenario == "collective") return RunCollectiveLab(p);
  if (scenario == "pipeline") return RunPipelineLab(p);
  if (scenario == "tp") return RunTpLab(p);
  if (scenario == "zero") return RunZeroLab(p);
  if (scenario == "3d") return RunThreeDLab(p.params());
  if (scenario == "plan") return RunPlanLab(p.params());
  if (scenario == "memory") return RunMemoryLab(p);
  if (scenario == "moe") return RunMoeLab(p.params());
  // A registered scenario that measures itself (LabScenarios lists no other).
  LabRunResult r;
  for (const auto& [name, value] : p.params().spec().measure(p.params(), &r.summary))
    r.measured[name] = value;
  return r;
}

}  // namespace

LabStepValues RunLabStep(const LabStep& step) {
  LabStepValues out;
  if (!step.runs()) return out;
  out.values = LabParamValues(step.scenario, step.params);
  LabRunResult main = RunLabScenario(step.scenario, step.params);
  for (const auto& [name, value] : main.measured) out.values[name] = value;
  out.summaries.push_back(main.summary);
  for (const LabVariant& v : step.variants) {
    const std::vector<LabParam> merged = MergeLabParams(step.params, v.params);
    for (const auto& [name, value] : LabParamValues(step.scenario, merged)) {
      out.values[v.id + "." + name] = value;
    }
    LabRunResult run = RunLabScenario(step.scenario, merged);
    for (const auto& [name, value] : run.measured) out.values[v.id + "." + name] = value;
    out.summaries.push_back(v.id + ": " + run.summary);
  }
  out.ran = true;
  return out;
}

std::vector<std::string> LabStepValueNames(const LabStep& step) {
  std::vector<std::string> names;
  const LabScenarioSpec* spec = FindLabScenario(step.scenario);
  if (spec == nullptr) return names;
  std::vector<std::string> base;
  for (const LabParamSpec& p : spec->params) {
    if (p.kind == K::kChoice || p.kind == K::kText || p.kind == K::kTopology) continue;
    base.push_back(p.name);
    for (const std::string& old : p.spec->old_names) base.push_back(old);
  }
  for (const LabQuantitySpec& q : spec->measured) base.push_back(q.name);
  names = base;
  for (const LabVariant& v : step.variants) {
    for (const std::string& b : base) names.push_back(v.id + "." + b);
  }
  return names;
}

}  // namespace shardlab
