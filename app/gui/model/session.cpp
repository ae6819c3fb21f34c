#include "app/gui/model/session.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <utility>

#include <unistd.h>

#include "engine/core/backend_traits.h"
#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/plan/kernel.h"
#include "engine/io/trace_writer.h"
#include "engine/scenarios/elastic_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/scenarios/trace_compare_scenario.h"
#include "engine/run/vector_sink.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/this_machine_choice.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

// The faults a collective's settings name, checked against its machine and
// ranks; a throttle is applied to `topology`. What the backend cannot apply
// is refused (FaultRefusal).
Faults CheckCollectiveFaults(Faults faults, const CollectiveScenario& scenario, Topology* topology) {
  if (faults.empty()) return faults;
  const std::string refusal = FaultRefusal(faults, scenario.backend);
  if (!refusal.empty()) throw Error(refusal);
  ResolveFaults(faults, *topology, scenario.ranks);
  ApplyLinkThrottles(faults, *topology);
  return faults;
}

// ---- the settings as engine scenarios ------------------------------------
// Every scenario's parameters come from its spec (ParamsOf: the settings
// checked against it); the spec's FromParams function makes the engine's
// scenario; the app adds what is no parameter: where it runs.

/// The app's machine and backend on an engine scenario. A worker run is
/// checked and planned here on the simulator (the app may not have the
/// worker's backend); the worker checks its backend itself.
template <class Scenario>
Scenario OnAppBackend(Scenario scenario, const ScenarioSettings& settings) {
  scenario.topology = settings.topology;
  scenario.backend = settings.in_worker ? "sim" : settings.backend;
  return scenario;
}

/// `topology`: the settings' machine (ranks 0 means every GPU of it).
CollectiveScenario ScenarioFrom(const ScenarioParams& params, const ScenarioSettings& settings,
                                const Topology& topology) {
  return OnAppBackend(CollectiveFromParams(params, &topology), settings);
}

PipelineScenario PipelineScenarioFrom(const ScenarioParams& params, const ScenarioSettings& settings) {
  return OnAppBackend(PipelineFromParams(params), settings);
}

TpScenario TpScenarioFrom(const ScenarioParams& params, const ScenarioSettings& settings) {
  return OnAppBackend(TpFromParams(params), settings);
}

ZeroScenario ZeroScenarioFrom(const ScenarioParams& params, const ScenarioSettings& settings) {
  return OnAppBackend(ZeroFromParams(params), settings);
}

/// The 3D scenario: the small MLP, always real (never timed only), so a
/// step of more host arithmetic than the app computes is an error naming
/// the width.
ThreeDScenario ThreeDScenarioFrom(const ScenarioParams& params, const ScenarioSettings& settings,
                                  double max_host_flops) {
  ThreeDScenario scenario = OnAppBackend(ThreeDFromParams(params), settings);
  if (scenario.timing_only()) {
    // A paper-scale plan is millions of ops: too much to draw, and to build
    // while a student types.
    throw Error("model: the app runs the small MLP; '" + scenario.model +
                    "' runs at paper scale in 'shardlab-cli run 3d --model " + scenario.model + "'",
                ErrorKind::kInvalidInput);
  }
  const MlpConfig& m = scenario.mlp;
  const double flops = 6.0 * m.batch * double(m.width) * m.width * m.layers;
  if (flops > max_host_flops) {
    char text[220];
    std::snprintf(text, sizeof text,
                  "width: one step is %.1f GFLOP of host arithmetic, above the %.0f GFLOP the app "
                  "computes; choose a smaller width, batch or fewer layers",
                  flops / 1e9, max_host_flops / 1e9);
    throw Error(text, ErrorKind::kInvalidInput);
  }
  return scenario;
}

MoeScenario MoeScenarioFrom(const ScenarioParams& params, const ScenarioSettings& settings) {
  return OnAppBackend(MoeFromParams(params), settings);
}

/// The formula's K, which only the views use: the ZeRO paper's 12 or the
/// seed texts' 8.
void CheckZeroK(int k) {
  if (k != 12 && k != 8) {
    throw Error("k: " + std::to_string(k) +
                " bytes of optimizer state per parameter is neither the ZeRO paper's 12 (fp32 master, "
                "Adam m and v) nor the seed texts' 8 (Adam m and v)", ErrorKind::kInvalidInput);
  }
}

/// "timing only: ..." from an engine error whose message starts with its
/// field, without the CLI's advice to pass --timing-only.
std::string TimingOnlyReason(const Error& real) {
  std::string message = real.what();
  const std::size_t colon = message.find(": ");
  if (colon != std::string::npos && colon < 20) message = message.substr(colon + 2);
  return "timing only: " + message.substr(0, message.find("; use --timing-only"));
}

/// The one timing-only path, first half: checks `scenario` as the engine
/// would run it. A run the engine will only time (too big for host
/// buffers, fp16 data) is no error in the app: it runs timing-only and
/// `why` says so (empty when the real run is fine). Throws what the engine
/// throws when even timing-only cannot run it.
template <class Scenario, class CheckFn>
void CheckOrTimeOnly(Scenario& scenario, const Topology& topology, CheckFn check, std::string* why) {
  why->clear();
  try {
    check(scenario, topology);
    return;
  } catch (const Error& real) {
    if (scenario.timing_only) throw;
    Scenario timed = scenario;
    timed.timing_only = true;
    check(timed, topology);  // throws the error a student must fix
    scenario.timing_only = true;
    *why = TimingOnlyReason(real);
  }
}

/// Floating-point work of every compute op of `plan`, per rank.
std::vector<double> ComputeFlopsPerRank(const Plan& plan) {
  std::vector<double> flops(static_cast<std::size_t>(std::max(plan.num_ranks, 0)), 0.0);
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::kCompute || op.rank < 0 || op.rank >= plan.num_ranks) continue;
    for (int k = 0; k < op.kernel_count; ++k) {
      flops[static_cast<std::size_t>(op.rank)] +=
          KernelFlops(plan.kernels[static_cast<std::size_t>(op.kernel_begin + k)]);
    }
  }
  return flops;
}

/// The one timing-only path, second half: a prepared run of more host work
/// than the app checks at once (its arithmetic, or its data) is timed only;
/// returns why, or "" when it is checked.
std::string HostWorkAboveLimit(const Plan& plan, Bytes max_bytes, double max_flops) {
  double flops = 0;
  for (double f : ComputeFlopsPerRank(plan)) flops += f;
  if (flops > max_flops) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "timing only: the run is %.1f GFLOP of host arithmetic (the app checks up to %.0f GFLOP); "
                  "a smaller model, batch or fewer steps are checked",
                  flops / 1e9, max_flops / 1e9);
    return text;
  }
  Bytes host_bytes = 0;  // the simulator keeps each element as a float
  for (const Buffer& b : plan.buffers) host_bytes += b.count * Bytes{sizeof(float)};
  if (host_bytes > max_bytes) {
    return "timing only: the data would need " + FormatBytes(host_bytes) + " of host memory (the limit is " +
           FormatBytes(max_bytes) + ")";
  }
  return "";
}

/// GPU 0's float32 rate in TFLOP/s, 0 when the topology has no GPU figure.
double Fp32Tflops(const Topology& topology) {
  return topology.num_gpus() > 0
             ? topology.nodes[static_cast<std::size_t>(topology.gpus[0])].device.fp32_tflops
             : 0;
}

/// The ranks chunk `chunk` of rank `rank`'s output holds when the
/// collective is over (empty: the chunk is not part of the result).
std::vector<int> FinalContributors(const CollectiveParams& params, int rank, int chunk) {
  std::vector<int> all(static_cast<std::size_t>(params.ranks));
  for (int r = 0; r < params.ranks; ++r) all[static_cast<std::size_t>(r)] = r;
  switch (params.kind) {
    case CollectiveKind::kAllReduce: return all;
    case CollectiveKind::kReduceScatter: return chunk == rank ? all : std::vector<int>{};
    case CollectiveKind::kAllGather: return {chunk};
    case CollectiveKind::kBroadcast: return {params.root};
    case CollectiveKind::kReduce: return rank == params.root ? all : std::vector<int>{};
    case CollectiveKind::kAllToAll: return {chunk};
  }
  return {};
}

/// Elements in chunk `chunk` of a rank's output, cut as ChunkState cuts it.
std::int64_t ChunkElements(const CollectiveParams& params, int chunk) {
  if (params.kind == CollectiveKind::kAllToAll) return params.count / params.ranks;
  return ChunkCount(params.count, params.ranks, chunk);
}

/// "GPU3: [A0+A3, B3, ...]" -> {"A0+A3", "B3", ...}; empty when the line is
/// cut short ("... (N chunks)") or has no cells.
std::vector<std::string> CellsOfLine(const std::string& line) {
  std::vector<std::string> cells;
  const std::size_t open = line.find('[');
  const std::size_t close = line.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close <= open) return cells;
  const std::string body = line.substr(open + 1, close - open - 1);
  std::size_t at = 0;
  while (at <= body.size()) {
    const std::size_t comma = body.find(", ", at);
    const std::size_t end = comma == std::string::npos ? body.size() : comma;
    cells.push_back(body.substr(at, end - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  if (!cells.empty() && cells.back().rfind("...", 0) == 0) cells.clear();
  return cells;
}

/// Spreadsheet letters of a chunk, as ChunkState prints them: A..Z, AA, AB.
std::string ChunkLetters(int chunk) {
  std::string letters;
  for (int n = chunk + 1; n > 0; n = (n - 1) / 26) {
    letters.insert(letters.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return letters;
}

/// A label from a contributor set, for rows ChunkState prints cut short:
/// "C0..7", "C(5 ranks)", or "C?" when the chunk's elements disagree.
std::string LabelFromSet(int chunk, const std::vector<int>& members, bool empty_chunk) {
  const std::string letters = ChunkLetters(chunk);
  if (members.empty()) return empty_chunk ? "_" : letters + "?";
  if (members.size() == 1) return letters + std::to_string(members.front());
  const bool consecutive = members.back() - members.front() + 1 ==
                           static_cast<int>(members.size());
  if (consecutive) {
    return letters + std::to_string(members.front()) + ".." + std::to_string(members.back());
  }
  return letters + "(" + std::to_string(members.size()) + " ranks)";
}

}  // namespace

Session::Session() = default;

Session::~Session() { Cancel(); }

pid_t Session::worker_pid() const {
  return worker_client_ && !worker_client_->ended() ? worker_client_->pid() : -1;
}

int Session::num_steps() const {
  const Plan* p = plan();
  return p != nullptr ? p->num_steps : 0;
}

const Plan* Session::plan() const {
  if (prepared_) return &prepared_->plan;
  if (pipeline_) return &pipeline_->pipeline.plan;
  if (tp_) return &tp_->layer.plan;
  if (zero_) return &zero_->zero.plan;
  if (three_d_) return &three_d_->three_d.plan;
  if (moe_) return &moe_->layer.plan;
  if (dp_train_) return &dp_train_->plan.plan;
  if (trace_) return &trace_->plan;
  return nullptr;
}

const Topology* Session::topology() const {
  if (prepared_) return &prepared_->topology;
  if (pipeline_) return &pipeline_->topology;
  if (tp_) return &tp_->topology;
  if (zero_) return &zero_->topology;
  if (three_d_) return &three_d_->topology;
  if (moe_) return &moe_->topology;
  if (dp_train_) return &dp_train_->topology;
  if (trace_) return &trace_->topology;
  return nullptr;
}

std::string Session::backend() const {
  if (prepared_ && worker_run_) return worker_settings_.backend + " (worker process)";
  if (prepared_) return prepared_->scenario.backend;
  if (pipeline_) return pipeline_->scenario.backend;
  if (tp_) return tp_->scenario.backend;
  if (zero_) return zero_->scenario.backend;
  if (three_d_) return three_d_->scenario.backend;
  if (moe_) return moe_->scenario.backend;
  if (dp_train_) return "sim";
  if (trace_) return trace_->backend;
  return "";
}

std::string Session::Title() const {
  if (prepared_) {
    const CollectiveScenario& s = prepared_->scenario;
    return std::string(CollectiveAlgoName(s.algo)) + " " + CollectiveKindName(s.kind) + ", " +
           std::to_string(s.ranks) + " ranks on " + prepared_->topology.name;
  }
  if (pipeline_) {
    const PipelineParams& p = pipeline_->pipeline.params;
    return pipeline_->pipeline.plan.name + " (batch " + std::to_string(p.model.batch) + ") on " +
           pipeline_->topology.name;
  }
  if (tp_) return tp_->layer.plan.name + " on " + tp_->topology.name;
  if (zero_) {
    return zero_->zero.plan.name + " (batch " + std::to_string(zero_->scenario.params.model.batch) + ") on " +
           zero_->topology.name;
  }
  if (three_d_) return three_d_->three_d.plan.name + " on " + three_d_->topology.name;
  if (moe_) return moe_->layer.plan.name + " on " + moe_->topology.name;
  if (dp_train_) return dp_train_->plan.plan.name + " on " + dp_train_->topology.name;
  if (trace_) return "trace " + trace_->source + ": " + (trace_->title.empty() ? trace_->plan.name : trace_->title);
  return "";
}

TimeNs Session::expected_ns() const {
  if (prepared_) return prepared_->predicted_ns;
  if (trace_) return store_.end_ns();  // recorded: the trace's own span
  if (tp_) {
    // The busiest rank's compute at the topology's speed, plus the ring
    // formula for each all-reduce: compute waits for every one of them.
    const std::vector<double> flops = ComputeFlopsPerRank(tp_->layer.plan);
    const double tflops = Fp32Tflops(tp_->topology);
    const double busiest = flops.empty() ? 0 : *std::max_element(flops.begin(), flops.end());
    TimeNs comm_ns = 0;
    try {
      comm_ns = TpAllReduceEstimate(tp_->scenario, tp_->topology).ns *
                (tp_->layer.forward_allreduces + tp_->layer.backward_allreduces);
    } catch (const std::exception&) {
      comm_ns = 0;  // the estimate only paces the replay
    }
    return (tflops > 0 ? busiest / (tflops * 1e3) : 0) + comm_ns;
  }
  if (zero_) {
    // Every rank computes its B/N rows of every layer: the busiest rank's
    // compute at the topology's speed, plus one ring pass over the
    // parameters' fp16 bytes per collective round (2Ψ or 3Ψ elements a step).
    const std::vector<double> flops = ComputeFlopsPerRank(zero_->zero.plan);
    const double tflops = Fp32Tflops(zero_->topology);
    const double busiest = flops.empty() ? 0 : *std::max_element(flops.begin(), flops.end());
    const ZeroParams& p = zero_->scenario.params;
    const double elements = (p.stage == 3 ? 3.0 : 2.0) * (p.ranks - 1) / p.ranks *
                            static_cast<double>(zero_->zero.parameter_count) * p.steps;
    const Topology& t = zero_->topology;
    Route route;  // GPU 0 to GPU 1: a ring's typical hop (1 byte per ns is 1 GB/s)
    const bool hop = t.num_gpus() > 1 && p.ranks > 1 && TryFindRoute(t, t.gpus[0], t.gpus[1], &route);
    const TimeNs comm_ns =
        hop && route.bottleneck_gbps > 0 ? elements * DTypeBytes(DType::kF16) / route.bottleneck_gbps : 0;
    return (tflops > 0 ? busiest / (tflops * 1e3) : 0) + comm_ns;
  }
  if (three_d_ || moe_ || dp_train_) {
    // The busiest rank's compute at the topology's speed: enough to pace
    // the replay until the run is recorded.
    const Plan& plan = three_d_ ? three_d_->three_d.plan : moe_ ? moe_->layer.plan : dp_train_->plan.plan;
    const std::vector<double> flops = ComputeFlopsPerRank(plan);
    const double tflops =
        Fp32Tflops(three_d_ ? three_d_->topology : moe_ ? moe_->topology : dp_train_->topology);
    const double busiest = flops.empty() ? 0 : *std::max_element(flops.begin(), flops.end());
    return tflops > 0 ? busiest / (tflops * 1e3) : 0;
  }
  if (!pipeline_) return 0;
  // The longest stage's compute at the topology's speed, stretched by the
  // formula's bubble: enough to pace the replay before the run is recorded.
  const std::vector<double> flops = ComputeFlopsPerRank(pipeline_->pipeline.plan);
  const double tflops = Fp32Tflops(pipeline_->topology);
  if (tflops <= 0 || flops.empty()) return 0;
  const PipelineParams& p = pipeline_->pipeline.params;
  const double busiest = *std::max_element(flops.begin(), flops.end());
  return busiest / (tflops * 1e3) * (1 + FormulaBubbleOverUseful(p.schedule, p.shape));
}

std::uint64_t Session::dropped_events() const { return queue_ ? queue_->dropped() : 0; }

const Topology& Session::CachedTopology(const std::string& name) {
  if (IsThisMachine(name)) {
    throw Error(std::string("topology: ") +
                    Tr("the app models This machine for collectives, pipeline, tp and zero; choose a "
                       "preset or a topology file for this scenario"),
                ErrorKind::kInvalidInput);
  }
  auto it = topologies_.find(name);
  if (it == topologies_.end()) {
    auto loaded = std::make_unique<const Topology>(LoadScenarioTopology(name));
    it = topologies_.emplace(name, std::move(loaded)).first;
  }
  return *it->second;
}

Topology Session::MachineTopology(const ScenarioSettings& settings, int ranks, std::optional<MachineModel>* model) {
  model->reset();
  if (!IsThisMachine(settings.topology)) return CachedTopology(settings.topology);
  // More ranks than GPUs are virtual devices sharing their GPU's HBM.
  if (settings.in_worker && !BackendTraitsOrDefault(settings.backend).models_machine) {
    // The app sees no GPU (the worker does): its plan could be for another machine.
    throw Error(std::string("topology: ") +
                    Tr("a real run on This machine runs from the CLI for now (shardlab-cli run allreduce "
                       "--topology this --backend cuda --compare sim): the app cannot see this machine's GPUs"),
                ErrorKind::kInvalidInput);
  }
  // Link faults name links of the plan's machine, which the model does not run on.
  const std::string fault_refusal = MachineModelFaultRefusal(FaultsFromParams(ParamsOf(settings)));
  if (!fault_refusal.empty()) throw Error(fault_refusal, ErrorKind::kInvalidInput);
  *model = ModelThisMachine(settings.device_profile, settings.machine_gpus, ranks);
  return (*model)->plan_topology;
}

Topology Session::CollectiveTopology(const ScenarioSettings& settings, const ScenarioParams& params,
                                     std::optional<MachineModel>* model) {
  // As the CLI's --ranks: "all" is one rank per GPU.
  const int ranks = params.Text("ranks") == "all" ? 0 : static_cast<int>(params.Int("ranks"));
  return MachineTopology(settings, ranks, model);
}

std::string Session::machine_description() const {
  const bool prepared = prepared_ || pipeline_ || tp_ || zero_;
  return machine_model_ && prepared ? machine_model_->record.Describe() : "";
}

std::string Session::Check(const ScenarioSettings& settings) {
  if (has_last_check_ && settings == last_check_settings_) return last_check_message_;
  std::string message;
  last_check_machine_.clear();
  try {
    const ScenarioParams params = ParamsOf(settings);  // the spec's ranges and choices
    const std::string& spec = params.spec().name;
    std::string timed_only;  // fine: Start runs it timing-only and says why
    FaultsFromParams(params);  // the fault switches parse; Start checks them against the run
    RunIterationsOf(settings);  // warm-up and timed runs (run_iterations.h)
    std::optional<MachineModel> machine;  // "This machine": its model's description
    if (spec == kPipelineScenario) {
      PipelineScenario scenario = PipelineScenarioFrom(params, settings);
      const Topology topology = MachineTopology(settings, scenario.params.shape.stages, &machine);
      CheckOrTimeOnly(scenario, topology, CheckPipelineScenario, &timed_only);
    } else if (spec == kTensorParallelScenario) {
      TpScenario scenario = TpScenarioFrom(params, settings);
      const Topology topology = MachineTopology(settings, scenario.layer.tp, &machine);
      CheckOrTimeOnly(scenario, topology, CheckTpScenario, &timed_only);
    } else if (spec == kZeroScenario) {
      CheckZeroK(settings.zero_k);
      ZeroScenario scenario = ZeroScenarioFrom(params, settings);
      const Topology topology = MachineTopology(settings, scenario.params.ranks, &machine);
      CheckOrTimeOnly(scenario, topology, CheckZeroScenario, &timed_only);
    } else if (spec == kThreeDScenario) {
      // Building the small model's plan is the engine's full check (ms).
      const ThreeDScenario scenario = ThreeDScenarioFrom(params, settings, kMaxCheckedHostFlops);
      PrepareThreeD(scenario, CachedTopology(scenario.topology));
    } else if (spec == kMoeScenario) {
      MoeScenario scenario = MoeScenarioFrom(params, settings);
      CheckOrTimeOnly(scenario, CachedTopology(scenario.topology), CheckMoeScenario, &timed_only);
    } else if (spec == kDpTrainScenario) {
      // The spec's checks and the scenario's own (no training yet).
      const DpTrainScenario scenario = DpTrainFromParams(params);
      CheckRanksFitTopology("ranks", scenario.config.ranks, "rank", scenario.topology,
                            CachedTopology(scenario.topology));
    } else if (spec == "elastic") {
      // The job's own checks (ranks, batch split, the failure's step); the run writes files.
      BuildElastic(ElasticFromParams(params).params);
    } else if (spec == "inference") {
      // The parameters' own checks; the layout against the machine is RunInference's first step.
      InferenceFromParams(params);
    } else if (spec == "trace-compare") {
      // The files exist and the settings parse; modelling runs on Start.
      CheckTraceCompare(params);
    } else if (spec == kCollectiveSpec) {
      // No plan: a 1,024-rank check stays cheap.
      Topology topology = CollectiveTopology(settings, params, &machine);
      CollectiveScenario scenario = ScenarioFrom(params, settings, topology);
      CheckCollectiveFaults(FaultsFromParams(params), scenario, &topology);
      CheckOrTimeOnly(scenario, topology,
                      [](const CollectiveScenario& c, const Topology& t) { CheckCollectiveScenario(c, t); },
                      &timed_only);
    } else {
      throw Error("scenario: the app does not run '" + spec + "' yet; its settings are checked against "
                  "its spec (shardlab-cli runs it)", ErrorKind::kInvalidInput);
    }
    if (machine) last_check_machine_ = machine->record.Describe();
  } catch (const std::exception& e) {
    message = e.what();
  }
  has_last_check_ = true;
  last_check_settings_ = settings;
  last_check_message_ = message;
  return message;
}

void Session::ResetRun() {
  if (worker_client_) worker_client_->Kill();
  worker_client_.reset();
  worker_run_ = false;
  worker_chunks_.reset();
  worker_buffers_.clear();
  worker_failure_.clear();
  faults_ = Faults{};  // a new run names its own
  worker_error_record_seen_ = false;
  worker_runs_done_ = 0;
  worker_error_record_ = ErrorRecord{};
  worker_sent_ = ScenarioRecord{};
  worker_echo_ = ScenarioRecord{};
  run_scenario_.clear();
  inference_.reset();
  trace_.reset();
  compare_.reset();
  prepared_.reset();
  machine_model_.reset();
  pipeline_.reset();
  tp_.reset();
  zero_.reset();
  three_d_.reset();
  moe_.reset();
  dp_train_.reset();
  store_.Clear();
  snapshots_.clear();
  host_lane_.clear();
  outcome_ = CollectiveOutcomeSummary{};
  iterations_ = IterationTimes{};
  pipeline_outcome_ = PipelineOutcomeSummary{};
  tp_outcome_ = TpSummary{};
  zero_outcome_ = ZeroSummary{};
  three_d_outcome_ = ThreeDSummary{};
  moe_outcome_ = MoeSummary{};
  dp_train_outcome_ = DpTrainSummary{};
  error_.clear();
  timing_only_reason_.clear();
  {
    std::lock_guard lock(mutex_);
    pending_snapshots_.clear();
    worker_error_.clear();
    worker_outcome_ = CollectiveOutcomeSummary{};
    worker_iterations_ = IterationTimes{};
    worker_pipeline_outcome_ = PipelineOutcomeSummary{};
    worker_tp_outcome_ = TpSummary{};
    worker_zero_outcome_ = ZeroSummary{};
    worker_three_d_outcome_ = ThreeDSummary{};
    worker_moe_outcome_ = MoeSummary{};
    worker_dp_train_outcome_ = DpTrainSummary{};
    worker_host_lane_.clear();
  }
  steps_done_ = 0;
  worker_finished_ = false;
  cancel_ = false;
}

void Session::ShowFinishedRun(const Plan& plan, const Topology& topology, const std::vector<Event>& events,
                              const std::string& title) {
  // Through a trace file: the views then replay it as they replay any
  // opened trace (the file is gone once read).
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("shardlab-run-" + std::to_string(::getpid()) + ".json")).string();
  TraceInfo info;
  info.title = title;
  info.backend = "sim";
  WriteChromeTraceFile(path, plan, topology, events, info);
  std::string message;
  const bool shown = OpenTrace(path, &message);
  std::filesystem::remove(path);
  if (!shown) throw Error(message, ErrorKind::kRuntime);
}

bool Session::ShowElasticJob(const ScenarioParams& params) {
  // The job writes and reads back real checkpoint files between parts of
  // its plan (engine/scenarios/elastic_scenario.h), so it runs here, whole,
  // on the simulator (a small job: milliseconds of host work), and is shown
  // as the trace it writes: the lost work, the reload and the re-shard.
  const ElasticScenario scenario = ElasticFromParams(params);
  Topology topology = CachedTopology(scenario.topology);
  const ElasticPlan job = BuildElastic(scenario.params);
  const Faults faults = ElasticFaults(params, topology, job);
  const ElasticOutcome outcome = RunElastic(scenario, job, topology, faults);
  if (outcome.verdict.checked() && !outcome.verdict.correct())
    throw Error("the elastic job's final parameters: " + outcome.verdict.Text(), ErrorKind::kRuntime);
  ShowFinishedRun(job.plan, topology, outcome.events, job.plan.name + " on " + scenario.topology + " (sim)");
  run_scenario_ = "elastic";
  return true;
}

bool Session::ShowInferenceRun(const ScenarioParams& params) {
  InferenceScenario scenario = InferenceFromParams(params);
  scenario.record_steps = true;
  scenario.all_policies = true;  // the view lays the policies side by side on the same arrivals
  auto run = std::make_unique<InferenceRun>(RunInference(scenario));
  if (run->check.checked && !run->check.verdict.correct())
    throw Error("the inference run's logits: " + run->check.verdict.Text(), ErrorKind::kRuntime);
  if (!run->real_plan.ops.empty()) {
    ShowFinishedRun(run->real_plan, CachedTopology(scenario.topology), run->real_events,
                    run->real_plan.name + " on " + scenario.topology + " (sim)");
  } else {
    Cancel();
    ResetRun();
    ++run_id_;
    state_ = SessionState::kDone;
  }
  inference_ = std::move(run);
  run_scenario_ = "inference";
  return true;
}

bool Session::OpenTrace(const std::string& path, std::string* message) {
  std::unique_ptr<LoadedTrace> loaded;
  try {
    loaded = std::make_unique<LoadedTrace>(ReadChromeTraceFile(path));
  } catch (const std::exception& e) {
    *message = e.what();  // the run on screen stays
    return false;
  }
  Cancel();
  ResetRun();
  ++run_id_;
  ShowLoadedTrace(std::move(loaded));
  message->clear();
  return true;
}

void Session::ShowLoadedTrace(std::unique_ptr<LoadedTrace> loaded) {
  trace_ = std::move(loaded);
  store_.Add(trace_->events);
  host_lane_ = trace_->host_lane;
  host_clock_ = trace_->host_clock == "simulated" ? ClockKind::kSimulated : ClockKind::kHost;
  steps_done_ = trace_->plan.num_steps;
  state_ = SessionState::kDone;
}

bool Session::ShowTraceCompare(const ScenarioParams& params) {
  // A measured trace shipped with the project and the simulator's model of
  // the machine that recorded it (engine/scenarios/trace_compare_scenario.h):
  // the trace is shown as File > Open trace shows one, the model laid over
  // it as File > Open trace to compare... lays a second run.
  TraceCompareRun run = RunTraceCompare(params);
  auto loaded = std::make_unique<LoadedTrace>(std::move(run.trace));
  RunRecord measured = RunFromTrace(*loaded);
  std::vector<std::int32_t> event_op_ids = loaded->original_op;
  auto overlay = std::make_unique<CompareOverlay>(measured, run.model.model, std::move(event_op_ids),
                                                  "the model of " + run.model.machine.Describe());
  ShowLoadedTrace(std::move(loaded));
  compare_ = std::move(overlay);
  run_scenario_ = "trace-compare";
  return true;
}

bool Session::OpenCompareTrace(const std::string& path, std::string* message) {
  if (state_ != SessionState::kDone || plan() == nullptr) {
    *message = "nothing to compare with yet: open a trace or let a run finish first";
    return false;
  }
  try {
    const LoadedTrace added = ReadChromeTraceFile(path);
    RunRecord shown;
    std::vector<std::int32_t> event_op_ids;
    if (trace_) {
      shown = RunFromTrace(*trace_);
      event_op_ids = trace_->original_op;
    } else {
      std::vector<Event> events;
      events.reserve(store_.event_count());
      for (const TimelineRow& row : store_.rows()) events.insert(events.end(), row.events.begin(), row.events.end());
      shown = RunFromEvents(*plan(), events, "this run", backend());
    }
    compare_ = std::make_unique<CompareOverlay>(shown, RunFromTrace(added), std::move(event_op_ids), path);
  } catch (const std::exception& e) {
    *message = path + ": cannot compare: " + e.what();
    return false;
  }
  message->clear();
  return true;
}

TimeNs Session::replay_end_ns() const {
  return compare_ != nullptr ? std::max(store_.end_ns(), compare_->added_end_ns()) : store_.end_ns();
}

bool Session::Start(const ScenarioSettings& settings) {
  Cancel();
  ResetRun();
  ++run_id_;

  // Every scenario takes one path: its spec's parameters, its engine
  // scenario, the real run's check (or timing only, and why), its plan,
  // then the app's limit on host work (or timing only, and why).
  const Plan* plan = nullptr;
  bool* timing_only = nullptr;  // the prepared run's; null where it is always real (3d)
  faults_ = {};
  try {
    const ScenarioParams params = ParamsOf(settings);
    iteration_settings_ = RunIterationsOf(settings);  // "warmup: ..." / "iters: ..." as any bad field
    const std::string& spec = params.spec().name;
    run_scenario_ = spec;
    if (spec == "elastic") return ShowElasticJob(params);
    if (spec == "inference") return ShowInferenceRun(params);
    if (spec == "trace-compare") return ShowTraceCompare(params);
    if (spec == kPipelineScenario) {
      PipelineScenario scenario = PipelineScenarioFrom(params, settings);
      const Topology topology = MachineTopology(settings, scenario.params.shape.stages, &machine_model_);
      CheckOrTimeOnly(scenario, topology, CheckPipelineScenario, &timing_only_reason_);
      pipeline_ = PreparePipeline(scenario, topology);
      faults_ = PrepareRunFaults(params, scenario.backend, pipeline_->topology, pipeline_->pipeline.plan);
      plan = &pipeline_->pipeline.plan;
      timing_only = &pipeline_->scenario.timing_only;
    } else if (spec == kTensorParallelScenario) {
      TpScenario scenario = TpScenarioFrom(params, settings);
      const Topology topology = MachineTopology(settings, scenario.layer.tp, &machine_model_);
      CheckOrTimeOnly(scenario, topology, CheckTpScenario, &timing_only_reason_);
      tp_ = PrepareTp(scenario, topology);
      faults_ = PrepareRunFaults(params, scenario.backend, tp_->topology, tp_->layer.plan);
      plan = &tp_->layer.plan;
      timing_only = &tp_->scenario.timing_only;
    } else if (spec == kZeroScenario) {
      CheckZeroK(settings.zero_k);
      ZeroScenario scenario = ZeroScenarioFrom(params, settings);
      const Topology topology = MachineTopology(settings, scenario.params.ranks, &machine_model_);
      CheckOrTimeOnly(scenario, topology, CheckZeroScenario, &timing_only_reason_);
      zero_ = PrepareZero(scenario, topology);
      faults_ = PrepareRunFaults(params, scenario.backend, zero_->topology, zero_->zero.plan);
      zero_k_ = settings.zero_k;
      plan = &zero_->zero.plan;
      timing_only = &zero_->scenario.timing_only;
    } else if (spec == kThreeDScenario) {
      const ThreeDScenario scenario = ThreeDScenarioFrom(params, settings, kMaxCheckedHostFlops);
      three_d_ = PrepareThreeD(scenario, CachedTopology(scenario.topology));
      faults_ = PrepareRunFaults(params, scenario.backend, three_d_->topology, three_d_->three_d.plan);
      plan = &three_d_->three_d.plan;
    } else if (spec == kMoeScenario) {
      MoeScenario scenario = MoeScenarioFrom(params, settings);
      const Topology& topology = CachedTopology(scenario.topology);
      CheckOrTimeOnly(scenario, topology, CheckMoeScenario, &timing_only_reason_);
      moe_ = PrepareMoe(scenario, topology);
      faults_ = PrepareRunFaults(params, scenario.backend, moe_->topology, moe_->layer.plan);
      plan = &moe_->layer.plan;
      timing_only = &moe_->scenario.timing_only;
    } else if (spec == kDpTrainScenario) {
      // The arithmetic runs here (the training and its baseline, real
      // numbers on the host); the plan that times it runs timing only.
      dp_train_ = PrepareDpTrain(DpTrainFromParams(params));
      plan = &dp_train_->plan.plan;
    } else if (spec == kCollectiveSpec) {
      Topology topology = CollectiveTopology(settings, params, &machine_model_);
      CollectiveScenario scenario = ScenarioFrom(params, settings, topology);
      // Stragglers and failures: a throttle is a slower link in the machine
      // itself (the ring is chosen around it), the rest the simulator applies.
      faults_ = CheckCollectiveFaults(FaultsFromParams(params), scenario, &topology);
      CheckOrTimeOnly(scenario, topology,
                      [](const CollectiveScenario& c, const Topology& t) { CheckCollectiveScenario(c, t); },
                      &timing_only_reason_);
      prepared_ = PrepareCollective(scenario, topology);
      CheckFaultSteps(faults_, prepared_->plan);
      plan = &prepared_->plan;
      timing_only = &prepared_->scenario.timing_only;
    } else {
      throw Error("scenario: the app does not run '" + spec + "' yet", ErrorKind::kInvalidInput);
    }
  } catch (const std::exception& e) {
    prepared_.reset();
    machine_model_.reset();
    pipeline_.reset();
    tp_.reset();
    zero_.reset();
    three_d_.reset();
    moe_.reset();
    dp_train_.reset();
    timing_only_reason_.clear();
    error_ = e.what();
    state_ = SessionState::kFailed;
    return false;
  }

  if (timing_only != nullptr && !*timing_only) {
    timing_only_reason_ = HostWorkAboveLimit(*plan, kMaxCheckedHostBytes, kMaxCheckedHostFlops);
    *timing_only = !timing_only_reason_.empty();
  }

  if (prepared_ && settings.in_worker) {
    StartWorkerRun(settings);
    return state_ != SessionState::kFailed;
  }
  queue_ = std::make_unique<EventQueue>(kQueueCapacity);
  state_ = SessionState::kRunning;
  if (prepared_) {
    worker_ = std::thread([this] { RunCollectiveWorker(); });
  } else if (tp_) {
    worker_ = std::thread([this] { RunTpWorker(); });
  } else if (zero_) {
    worker_ = std::thread([this] { RunZeroWorker(); });
  } else if (three_d_) {
    worker_ = std::thread([this] { RunThreeDWorker(); });
  } else if (moe_) {
    worker_ = std::thread([this] { RunMoeWorker(); });
  } else if (dp_train_) {
    worker_ = std::thread([this] { RunDpTrainWorker(); });
  } else {
    worker_ = std::thread([this] { RunPipelineWorker(); });
  }
  return true;
}

void Session::Cancel() {
  StopEventFlood();
  if (worker_run_) {
    if (worker_client_ && !worker_client_->ended()) {
      worker_client_->Send(MakeCommand(RecordType::kCancel));
      worker_client_->Kill();  // and reaped: a cancelled worker never lingers
    }
    if (state_ == SessionState::kRunning) {
      error_ = "run cancelled";
      state_ = SessionState::kFailed;
    }
    return;
  }
  cancel_ = true;
  {
    std::lock_guard lock(mutex_);
    if (running_executor_ != nullptr) running_executor_->Cancel();
  }
  if (worker_.joinable()) worker_.join();
  if (state_ == SessionState::kRunning) {
    DrainEvents();
    std::lock_guard lock(mutex_);
    for (BufferSnapshot& s : pending_snapshots_) snapshots_.push_back(std::move(s));
    pending_snapshots_.clear();
    error_ = "run cancelled";
    state_ = SessionState::kFailed;
  }
}

void Session::DrainEvents(std::size_t max_count) {
  if (!queue_) return;
  batch_.clear();
  queue_->PopBatch(batch_, max_count);
  store_.Add(batch_);
}

bool Session::StartEventFlood(std::string* why) {
  if (state_ != SessionState::kDone || store_.event_count() == 0) {
    *why = "the event flood needs a recorded run with events";
    return false;
  }
  StopEventFlood();
  std::vector<Event> run;
  run.reserve(store_.event_count());
  for (const TimelineRow& row : store_.rows()) run.insert(run.end(), row.events.begin(), row.events.end());
  const TimeNs span_ns = store_.end_ns();
  store_.Clear();  // the flood's first round lands where the run was
  // A fresh queue: its drop count is the flood's alone.
  queue_ = std::make_unique<EventQueue>(kQueueCapacity);
  flood_counters_ = FloodCounters{};
  flood_counters_.queue_bytes = queue_->capacity() * sizeof(Event);
  flood_counters_.window_bytes = kFloodWindow * sizeof(Event);
  flood_base_ns_ = -1;
  flood_ = std::make_unique<EventFlood>(*queue_, std::move(run), span_ns);
  return true;
}

void Session::StopEventFlood() {
  if (!flood_) return;
  flood_->Stop();
  batch_.clear();
  flood_counters_.ingested += queue_->PopBatch(batch_);  // counted, not stored
  flood_counters_.attempted = flood_->attempted();
  flood_counters_.dropped = queue_->dropped();
  flood_.reset();
}

FloodCounters Session::flood_counters() const {
  FloodCounters counters = flood_counters_;
  if (flood_) {
    counters.attempted = flood_->attempted();
    counters.dropped = queue_->dropped();
  }
  return counters;
}

void Session::PollFlood() {
  batch_.clear();
  const std::size_t got = queue_->PopBatch(batch_, kMaxEventsPerFrame);
  flood_counters_.ingested += got;
  if (got == 0) return;
  if (store_.event_count() + got > kFloodWindow) {
    store_.Clear();
    flood_base_ns_ = -1;
  }
  // Each window starts at time 0: take off the first event's round.
  const TimeNs span = flood_->span_ns();
  if (flood_base_ns_ < 0) flood_base_ns_ = std::floor(batch_.front().start_ns / span) * span;
  for (Event& e : batch_) {
    e.start_ns -= flood_base_ns_;
    e.end_ns -= flood_base_ns_;
  }
  store_.Add(batch_);
}

void Session::Poll() {
  if (flood_) {
    PollFlood();
    return;
  }
  if (worker_run_) {
    PollWorker();
    return;
  }
  if (state_ != SessionState::kRunning) return;
  // Read the flag first: everything the worker queued before setting it is
  // then drained below.
  const bool finished = worker_finished_.load();
  DrainEvents(kMaxEventsPerFrame);
  {
    std::lock_guard lock(mutex_);
    for (BufferSnapshot& s : pending_snapshots_) snapshots_.push_back(std::move(s));
    pending_snapshots_.clear();
  }
  // Everything was queued before `finished` was set: the run is recorded
  // once the queue is empty.
  if (!finished || queue_->size_approx() > 0) return;
  if (worker_.joinable()) worker_.join();
  std::lock_guard lock(mutex_);
  if (worker_error_.empty()) {
    outcome_ = worker_outcome_;
    iterations_ = worker_iterations_;
    pipeline_outcome_ = worker_pipeline_outcome_;
    tp_outcome_ = worker_tp_outcome_;
    zero_outcome_ = worker_zero_outcome_;
    three_d_outcome_ = worker_three_d_outcome_;
    moe_outcome_ = worker_moe_outcome_;
    dp_train_outcome_ = worker_dp_train_outcome_;
    host_lane_ = worker_host_lane_;
    host_clock_ = worker_host_clock_;
    state_ = SessionState::kDone;
  } else {
    error_ = worker_error_;
    state_ = SessionState::kFailed;
  }
}

BufferSnapshot Session::Snapshot(int step, const ChunkState& chunks) const {
  const CollectiveParams& params = prepared_->params;
  const int n = params.ranks;
  BufferSnapshot snapshot;
  snapshot.step = step;
  snapshot.ranks.resize(static_cast<std::size_t>(n));
  // ChunkState's own labels ("A0..7", "C(5 ranks)*") while it prints whole rows.
  const std::vector<std::string> lines = chunks.FormatRanks();
  for (int r = 0; r < n; ++r) {
    const std::vector<std::string> labels = CellsOfLine(lines[static_cast<std::size_t>(r)]);
    std::vector<ChunkCell>& row = snapshot.ranks[static_cast<std::size_t>(r)];
    row.resize(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) {
      ChunkCell& cell = row[static_cast<std::size_t>(c)];
      cell.contributors = chunks.Contributors(r, c);
      const bool empty_chunk = ChunkElements(params, c) == 0;
      cell.label = static_cast<int>(labels.size()) == n ? labels[static_cast<std::size_t>(c)]
                                                        : LabelFromSet(c, cell.contributors,
                                                                       empty_chunk);
      const std::vector<int> final_set = FinalContributors(params, r, c);
      cell.complete = empty_chunk || (!final_set.empty() && cell.contributors == final_set);
    }
  }
  return snapshot;
}

class Session::PublishedExecutor {
 public:
  PublishedExecutor(Session* session, Executor* executor) : session_(session) {
    std::lock_guard lock(session_->mutex_);
    session_->running_executor_ = executor;
  }
  ~PublishedExecutor() {
    std::lock_guard lock(session_->mutex_);
    session_->running_executor_ = nullptr;
  }
  PublishedExecutor(const PublishedExecutor&) = delete;
  PublishedExecutor& operator=(const PublishedExecutor&) = delete;

 private:
  Session* session_;
};

bool Session::StepToEnd(Executor& executor, EventSink& sink,
                        const std::function<void(int)>& after_step) {
  const PublishedExecutor published(this, &executor);
  int step = 0;
  while (!cancel_) {
    // Pace: start a step only while the queue has room for it.
    while (!cancel_ && queue_->size_approx() > queue_->capacity() / 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (cancel_ || !executor.StepOnce(sink)) break;
    steps_done_ = ++step;
    after_step(step);
  }
  if (!cancel_) return true;
  std::lock_guard lock(mutex_);
  worker_error_ = "run cancelled";
  return false;
}

bool Session::RunIterationsFirst(Executor& executor, std::vector<TimeNs>& spans) {
  {
    // A run that fails or is cancelled throws out of here: the executor is
    // taken back before the worker's scope destroys it.
    const PublishedExecutor published(this, &executor);
    spans = RunBeforeTheShownRun(executor, iteration_settings_, cancel_);
  }
  if (!cancel_) return true;
  std::lock_guard lock(mutex_);
  worker_error_ = "run cancelled";
  return false;
}

void Session::KeepHostLane(const Backend& backend) {
  worker_host_lane_ = backend.host_lane();
  worker_host_clock_ = BackendTraitsOrDefault(backend.name()).host_lane_clock();
}

void Session::WorkerGuard(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    worker_error_ = e.kind() == ErrorKind::kCancelled ? "run cancelled" : e.what();
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    worker_error_ = std::string("the run failed: ") + e.what();
  }
  worker_finished_ = true;
}

void Session::RunCollectiveWorker() {
  WorkerGuard([this] {
    const PreparedCollective& prepared = *prepared_;
    RunOptions options = CollectiveRunOptions(prepared.scenario);  // placement and host issue too
    options.faults = faults_;
    // "This machine" on the simulator: the model's GPUs, placement, shared HBM and issue cost.
    Topology run_topology = prepared.topology;
    if (machine_model_) ApplyMachineModelOn(prepared.scenario.backend, *machine_model_, &options, &run_topology);
    Executor executor(CreateBackend(prepared.scenario.backend), prepared.plan, std::move(run_topology),
                      options);
    const Plan& plan = executor.plan();
    QueueSink to_queue(*queue_);
    CountingSink span;
    std::unique_ptr<ChunkState> chunks;
    if (prepared.params.ranks <= kMaxBufferViewRanks) {
      chunks = std::make_unique<ChunkState>(prepared.params, plan);
    }
    EventSink* tail = &span;
    std::unique_ptr<TeeSink> span_and_chunks;
    if (chunks) {
      span_and_chunks = std::make_unique<TeeSink>(span, *chunks);
      tail = span_and_chunks.get();
    }
    TeeSink sink(to_queue, *tail);

    auto publish = [&](int step) {
      if (!chunks) return;
      BufferSnapshot snapshot = Snapshot(step, *chunks);
      std::lock_guard lock(mutex_);
      pending_snapshots_.push_back(std::move(snapshot));
    };
    std::vector<TimeNs> spans;
    if (!RunIterationsFirst(executor, spans)) return;
    publish(0);
    if (!StepToEnd(executor, sink, publish)) return;
    spans.push_back(span.end_ns);
    // As the CLI: the time is the timed runs' average; the timeline the last.
    IterationTimes iterations = SummarizeIterations(iteration_settings_, std::move(spans));
    CollectiveOutcomeSummary outcome =
        SummarizeCollective(prepared, iterations.average_ns, span.count, executor.backend(), &plan);
    if (!timing_only_reason_.empty()) outcome.not_checked_reason = timing_only_reason_;
    std::lock_guard lock(mutex_);
    worker_outcome_ = std::move(outcome);
    worker_iterations_ = std::move(iterations);
    KeepHostLane(executor.backend());
  });
}

// The training scenarios' worker: the executor runs a copy of the plan (the
// views keep reading the prepared one), every event goes to the queue and to
// a vector (these plans have hundreds to thousands of ops, not millions),
// and once the run is over the outcome is summarized here, on the worker:
// the UI thread never touches the backend while it runs.
template <class Prepared, class Summary, class Summarize>
void Session::RunTrainingWorker(const Prepared& prepared, const Plan& plan, Summary& slot,
                                Summarize summarize) {
  WorkerGuard([&, this] {
    RunOptions options;
    options.seed = prepared.scenario.seed;
    options.timing_only = prepared.scenario.timing_only;
    options.faults = faults_;  // every scenario's stragglers and failures (PrepareRunFaults)
    // "This machine" on the simulator (pipeline, tp, zero): the model's GPUs, placement, shared HBM and issue cost.
    Topology run_topology = prepared.topology;
    if (machine_model_) ApplyMachineModelOn(prepared.scenario.backend, *machine_model_, &options, &run_topology);
    Executor executor(CreateBackend(prepared.scenario.backend), plan, std::move(run_topology), options);
    QueueSink to_queue(*queue_);
    VectorSink events;
    TeeSink sink(to_queue, events);
    std::vector<TimeNs> spans;
    if (!RunIterationsFirst(executor, spans)) return;
    if (!StepToEnd(executor, sink, [](int) {})) return;
    TimeNs last_end = 0;
    for (const Event& e : events.events) last_end = std::max(last_end, e.end_ns);
    spans.push_back(last_end);
    Summary outcome = summarize(prepared, events.events, executor.backend(), &executor.plan());
    if (!timing_only_reason_.empty()) outcome.check.not_checked_reason = timing_only_reason_;
    std::lock_guard lock(mutex_);
    slot = std::move(outcome);
    worker_iterations_ = SummarizeIterations(iteration_settings_, std::move(spans));
    KeepHostLane(executor.backend());
  });
}

void Session::RunPipelineWorker() {
  RunTrainingWorker(*pipeline_, pipeline_->pipeline.plan, worker_pipeline_outcome_,
                    [](const PreparedPipeline& p, std::span<const Event> e, const Backend& b, const Plan* ran) {
                      return SummarizePipeline(p, e, b, ran);
                    });
}

void Session::RunTpWorker() {
  RunTrainingWorker(*tp_, tp_->layer.plan, worker_tp_outcome_,
                    [](const PreparedTp& p, std::span<const Event> e, const Backend& b, const Plan* ran) {
                      return SummarizeTp(p, e, b, ran);
                    });
}

void Session::RunZeroWorker() {
  RunTrainingWorker(*zero_, zero_->zero.plan, worker_zero_outcome_,
                    [](const PreparedZero& p, std::span<const Event> e, const Backend& b, const Plan* ran) {
                      return SummarizeZero(p, e, b, ran);
                    });
}

// The 3D scenario's prepared struct has no timing_only field (the small
// model is always real) and the MoE one's seed sits in its scenario; this
// adapter gives RunTrainingWorker what it reads.
namespace {
struct ThreeDRunView {
  struct {
    std::uint64_t seed;
    bool timing_only;
    std::string backend;
  } scenario;
  const Topology& topology;
};
}  // namespace

void Session::RunThreeDWorker() {
  const PreparedThreeD& prepared = *three_d_;
  const ThreeDRunView view{{prepared.scenario.seed, prepared.scenario.timing_only(), prepared.scenario.backend},
                           prepared.topology};
  RunTrainingWorker(view, prepared.three_d.plan, worker_three_d_outcome_,
                    [&prepared](const ThreeDRunView&, std::span<const Event> e, const Backend& b, const Plan* ran) {
                      return SummarizeThreeD(prepared, e, b, ran);
                    });
}

void Session::RunMoeWorker() {
  RunTrainingWorker(*moe_, moe_->layer.plan, worker_moe_outcome_,
                    [](const PreparedMoe& p, std::span<const Event> e, const Backend& b, const Plan* ran) {
                      return SummarizeMoe(p, e, b, ran);
                    });
}

// dp-train: the plan runs timing only with the run's stragglers; the
// baseline's plan runs beside it (not streamed) for the time it saves.
void Session::RunDpTrainWorker() {
  WorkerGuard([this] {
    const PreparedDpTrain& prepared = *dp_train_;
    RunOptions options;
    options.timing_only = true;
    options.faults = prepared.scenario.faults;
    Executor executor(CreateBackend("sim"), prepared.plan.plan, prepared.topology, options);
    QueueSink to_queue(*queue_);
    VectorSink events;
    TeeSink sink(to_queue, events);
    if (!StepToEnd(executor, sink, [](int) {})) return;
    Executor baseline(CreateBackend("sim"), prepared.baseline_plan.plan, prepared.topology, options);
    VectorSink baseline_events;
    baseline.RunToEnd(baseline_events);
    DpTrainSummary outcome =
        SummarizeDpTrain(prepared, events.events, executor.backend(), baseline_events.events, executor.plan());
    std::lock_guard lock(mutex_);
    worker_dp_train_outcome_ = std::move(outcome);
  });
}

}  // namespace shardlab::gui
