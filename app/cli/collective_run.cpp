#include "app/cli/collective_run.h"
#include "app/cli/scenario_flags.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <utility>

#include "engine/backends/sim/nccl_model.h"
#include "engine/core/error.h"
#include "engine/run/backend.h"
#include "engine/run/executor.h"
#include "engine/backends/mpi/process_group.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/fault_params.h"
#include "engine/topology/detect.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/presets.h"
#include "engine/topology/this_machine.h"

namespace shardlab::cli {
namespace {

/// The collectives' names, in kind order (the collectives' table).
const std::vector<std::string>& KindNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const CollectiveDef* def : Collectives()) all.emplace_back(def->name);
    return all;
  }();
  return names;
}

/// The engine names the scenario field a message is about ("ranks: must be
/// at least 1 (got 0)"); the CLI names the flag as the user spelled it.
Error AsFlagError(const Error& error, const ParsedArgs& args) {
  static const std::pair<const char*, const char*> kFieldFlags[] = {
      {"ranks: ", "ranks"},         {"root: ", "root"},       {"ring order: ", "ring-order"},
      {"algo: ", "algo"},           {"backend: ", "backend"}, {"topology: ", "topology"},
      {"slow_rank: ", "slow-rank"}, {"throttle_link: ", "throttle-link"},
      {"fail_link: ", "fail-link"}, {"fail_rank: ", "fail-rank"},
  };
  return FieldErrorAsFlagError(error, args, kFieldFlags);
}

/// Host memory the backend holds for the plan's data: floats per element.
Bytes HostDataBytes(const Plan& plan) {
  Bytes total = 0;
  for (const Buffer& b : plan.buffers) total += b.count * static_cast<Bytes>(sizeof(float));
  return total;
}

}  // namespace

void AddCollectiveFlags(std::vector<FlagSpec>& flags) {
  // The scenario's own parameters, from its spec (the collective is the
  // command word, the size is `run`'s --size or `sweep`'s -b/-e).
  std::vector<FlagSpec> from_spec;
  AddScenarioFlags(from_spec, ScenarioSpecOf("collective"), {"size"});
  for (FlagSpec& f : from_spec) {
    if (f.name == "topology") {
      // The CLI also takes 'this', and a real backend detects its machine.
      f.help = "a preset (see 'topo --list'), a topology file, or 'this': the machine the run "
               "uses, ranks beyond its GPUs as virtual devices sharing their GPU's memory; with "
               "--backend cuda and no --topology, this machine's GPUs as detected " +
               ParamDefaultText(*ScenarioSpecOf("collective").FindParam("topology"));
    }
    if (f.name == "ranks") {
      f.help += "; under mpirun, the job's size";
    }
  }
  flags.insert(flags.end(), from_spec.begin(), from_spec.end());
  const std::vector<FlagSpec> shared = {
      {"backend", 0, "NAME", "where to run (default: sim, the simulator)"},
      {"seed", 0, "N", "seed of the input data (default: 1)"},
      {"device-profile", 0, "FILE", "simulate every GPU with the figures 'calibrate' measured "
                                    "(sim backend)"},
      {"emulate-links", 0, "", "cuda backend: hold each transfer for the time the topology's "
                               "link would take (times labelled emulated)"},
      {"verify-max", 0, "SIZE", "check data only while all buffers fit in SIZE of host memory; "
                                "larger runs are timed only (default: 1G)"},
  };
  flags.insert(flags.end(), shared.begin(), shared.end());
  AddMachineFlags(flags);
}

CollectiveSetup SetupFromArgs(const ParsedArgs& args, const std::string& command) {
  CollectiveSetup setup;
  if (args.positionals().empty()) {
    throw UsageError(command + ": which collective? (" + JoinChoices(KindNames()) + ")");
  }
  const std::string& kind_text = args.positionals().front();
  if (std::find(KindNames().begin(), KindNames().end(), kind_text) == KindNames().end()) {
    throw UsageError(command + ": unknown collective '" + kind_text + "' (use " +
                     JoinChoices(KindNames()) + ")");
  }
  setup.kind = ParseCollectiveKind(kind_text);

  // The scenario's parameters, checked against its spec ("--root: must be
  // at least 0 (got -1)"); whether they fit the topology is the engine's call.
  ScenarioParams params = ParamsFromArgs(ScenarioSpecOf("collective"), args);
  params.Set("kind", kind_text);
  setup.algo = params.Text("algo") == "auto" ? DefaultAlgo(setup.kind)
                                             : ParseCollectiveAlgo(params.Text("algo"));
  setup.backend = args.Get("backend", "sim");
  const BackendTraits traits = BackendTraitsOrDefault(setup.backend);

  if (args.Has("topology") && args.Get("topology").empty())
    throw UsageError(args.Spelling("topology") + ": missing value");
  // Flags that do not fit the backend, before anything looks for a GPU.
  if (args.Has("emulate-links") && !BackendEmulatesLinks(setup.backend)) {
    throw UsageError(args.Spelling("emulate-links") +
                     (traits.simulator ? ": the simulator models links already; "
                                               "link emulation is for real GPUs (--backend cuda)"
                                             : ": link emulation is for CUDA GPUs (--backend cuda), not " +
                                                   setup.backend));
  }
  const bool this_machine = args.Get("topology", "") == "this";
  if ((args.Has("gpus") || args.Has("machine-from")) && !this_machine) {
    throw UsageError(args.Spelling(args.Has("gpus") ? "gpus" : "machine-from") +
                     ": describes the machine of --topology this");
  }
  if (this_machine) {
    setup.topology_name = "this";
    const int ranks_flag = static_cast<int>(params.Int("ranks"));  // 0: all (not given)
    setup.this_machine = ThisMachineFromArgs(args, ranks_flag);
    setup.topology = setup.this_machine->plan_topology;
    if (args.Has("device-profile")) setup.device_profile = args.Get("device-profile");
  } else {
    if (args.Has("device-profile") && !traits.models_machine && !args.Has("compare"))
      throw UsageError(args.Spelling("device-profile") + ": only the simulator (--backend sim) "
                       "takes a device profile (or the model of --compare sim); '" + setup.backend +
                       "' measures the real GPU");
    // Real GPUs with no --topology: the detected machine, one rank per GPU.
    // Where there is no device, the preset stays, so that bad flags are still
    // refused first (exit 2) and the backend then says "no CUDA device" itself.
    TopologyChoice machine;
    try {
      machine = ChooseTopology(args.Get("topology", ""), traits.runs_on_local_gpus);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kRuntime || args.Has("topology")) throw;
      machine = ChooseTopology("", false);
    }
    setup.topology_name = machine.name;
    setup.topology = std::move(machine.topology);
  }
  if (!this_machine && args.Has("device-profile")) {
    const std::string path = args.Get("device-profile");
    if (path.empty()) throw UsageError(args.Spelling("device-profile") + ": missing value");
    setup.device_profile = path;
    // A real run measures its GPU; the profile is for the model it is compared with.
    const DeviceProfile profile = LoadDeviceProfile(path);
    if (traits.models_machine) ApplyDeviceProfile(profile, setup.topology);
  }
  setup.emulate_links = args.Has("emulate-links");

  // Flags are parsed here; whether their values fit the topology and the
  // collective is the engine's call (CheckCollectiveScenario below).
  setup.ranks = setup.topology.num_gpus();
  // Under mpirun the job's size is the natural rank count.
  if (IsProcessBackend(setup.backend)) {
    setup.ranks = CurrentProcessGroup().size;
  }
  // --ranks all (the spec's default) is every GPU, as no --ranks.
  if (params.Int("ranks") > 0) setup.ranks = static_cast<int>(params.Int("ranks"));
  const CollectiveScenario from_params = CollectiveFromParams(params, &setup.topology);
  setup.dtype = from_params.dtype;
  setup.op = from_params.op;
  // nccl-tests ignores the root of rootless collectives; so do we.
  if (CollectiveHasRoot(setup.kind)) setup.root = from_params.root;
  if (args.Has("seed")) setup.seed = ParseSeedValue(args.Spelling("seed"), args.Get("seed"));
  setup.timing_only = from_params.timing_only;
  if (args.Has("verify-max")) {
    setup.verify_max_bytes = ParseSizeValue(args.Spelling("verify-max"), args.Get("verify-max"), 0);
  }

  // Stragglers and failures: a throttle changes the machine itself (so the
  // automatic ring sees it); the rest the backend applies, or says it cannot.
  try {
    setup.faults = FaultsFromParams(params);
    std::string refusal = FaultRefusal(setup.faults, setup.backend);
    if (refusal.empty() && setup.this_machine) refusal = MachineModelFaultRefusal(setup.faults);
    if (!refusal.empty()) throw Error(refusal);
    ResolveFaults(setup.faults, setup.topology, setup.ranks);
  } catch (const Error& e) {
    throw AsFlagError(e, args);
  }
  ApplyLinkThrottles(setup.faults, setup.topology);

  CollectiveScenario scenario;
  scenario.kind = setup.kind;
  scenario.algo = setup.algo;
  scenario.ranks = setup.ranks;
  // A placeholder size (one element per rank): each run brings its own.
  scenario.size_bytes = Bytes{DTypeBytes(setup.dtype)} * std::max(setup.ranks, 1);
  scenario.dtype = setup.dtype;
  scenario.op = setup.op;
  scenario.root = setup.root;
  scenario.topology = setup.topology_name;
  scenario.ring_order = from_params.ring_order;
  scenario.backend = setup.backend;
  scenario.seed = setup.seed;
  scenario.timing_only = setup.timing_only;
  std::shared_ptr<const PreparedCollective> checked;
  try {
    checked = CheckCollectiveScenario(scenario, setup.topology);
  } catch (const Error& e) {
    throw AsFlagError(e, args);
  }
  setup.op = checked->params.op;
  setup.root = checked->params.root;
  setup.ring_order = checked->ring_order;
  setup.ring_order_mode = checked->ring_order_mode;
  setup.ring_bottleneck_gbps = checked->ring_bottleneck_gbps;
  setup.checked = std::move(checked);
  return setup;
}

CollectiveOutcome RunCollective(const CollectiveSetup& setup, Bytes size_bytes,
                                const RunHooks& hooks) {
  if (!setup.checked) throw Error("RunCollective: the setup was not made by SetupFromArgs");
  std::unique_ptr<PreparedCollective> prepared =
      PrepareCollectiveAtSize(*setup.checked, size_bytes);
  CollectiveOutcome out;
  out.params = prepared->params;
  out.size_bytes = CollectiveSizeBytes(out.params);

  Plan built = std::move(prepared->plan);
  if (hooks.on_plan) hooks.on_plan(built);

  RunOptions options;
  options.seed = setup.seed;
  options.emulate_links = setup.emulate_links;
  try {
    CheckFaultSteps(setup.faults, built);
  } catch (const Error& e) {
    std::string message = e.what();  // "fail_rank: step 40 is past ..." as the flag
    for (const char* field : {"fail_link", "fail_rank"}) {
      const std::string prefix = std::string(field) + ": ";
      if (message.rfind(prefix, 0) != 0) continue;
      std::string flag = field;
      flag[4] = '-';
      message = "--" + flag + ": " + message.substr(prefix.size());
    }
    throw UsageError(message);
  }
  options.faults = setup.faults;
  const Bytes host_bytes = HostDataBytes(built);
  if (setup.timing_only) {
    options.timing_only = true;
    out.not_checked_reason = "timing only (--timing-only)";
  } else if (host_bytes > setup.verify_max_bytes) {
    options.timing_only = true;
    out.not_checked_reason = "timing only: the data needs " + FormatBytes(host_bytes) +
                             " of host memory, above --verify-max " +
                             FormatBytes(setup.verify_max_bytes);
  }

  prepared->scenario.timing_only = options.timing_only;

  // The model of this machine: the simulator on its physical GPUs, ranks
  // placed as the CUDA backend places them, HBM shared, ops issued in turn.
  Topology run_topology = std::move(prepared->topology);
  if (setup.this_machine) ApplyThisMachine(*setup.this_machine, setup.backend, &options, &run_topology);
  Executor executor(CreateBackend(setup.backend), std::move(built), std::move(run_topology), options);
  const Plan& plan = executor.plan();
  out.steps = plan.num_steps;
  out.ops = plan.ops.size();

  CountingSink counter;
  FanOutSink sink;
  sink.Add(&counter);
  VectorSink kept;
  if (hooks.on_done) sink.Add(&kept);

  // Warm-up runs, then the timed runs before the last: the same plan again
  // from its inputs (on the mpi backend each run is one more collective
  // call, numbered on). Run r is timed from r = warmup on.
  std::vector<TimeNs> spans;
  for (int run = 0; run + 1 < setup.warmup + setup.iters; ++run) {
    CountingSink discard;
    executor.RunToEnd(discard);
    if (executor.state() != ExecutorState::kDone)
      throw Error("the run failed: " + executor.error(), ErrorKind::kRuntime);
    if (run >= setup.warmup) spans.push_back(discard.end_ns);
    executor.Reset();
  }

  if (hooks.on_step) {
    ChunkState chunks(out.params, plan);
    sink.Add(&chunks);
    const std::vector<Phase> phases = StepPhases(plan);
    hooks.on_step(StepView{0, plan.num_steps, Phase::kNone, 0, plan, chunks});
    int step = 0;
    while (executor.StepOnce(sink)) {
      const Phase phase = phases.empty() ? Phase::kNone : phases[static_cast<std::size_t>(step)];
      ++step;
      hooks.on_step(StepView{step, plan.num_steps, phase, counter.end_ns, plan, chunks});
    }
  } else {
    executor.RunToEnd(sink);
  }

  spans.push_back(counter.end_ns);
  out.iterations = SummarizeIterations({setup.warmup, setup.iters}, std::move(spans));
  const CollectiveOutcomeSummary summary = SummarizeCollective(
      *prepared, out.iterations.average_ns, counter.count, executor.backend(), &plan);
  out.events = summary.events;
  out.clock = counter.clock;
  out.placement = executor.backend().placement();
  if (setup.algo == CollectiveAlgo::kNccl && BackendTraitsOrDefault(setup.backend).simulator) {
    // What the simulator's NCCL model chose for this size (the same call
    // the backend timed: rank r on GPU r).
    const Topology& topology = executor.topology();
    const std::vector<std::int32_t> gpus(topology.gpus.begin(),
                                         topology.gpus.begin() + out.params.ranks);
    const double size = static_cast<double>(out.params.count) * DTypeBytes(out.params.dtype);
    out.nccl_model = PredictNccl(LibraryCallOf(out.params.kind), size,
                                 DescribeNcclMachine(topology, gpus))
                         .Describe();
  }
  out.metrics = summary.metrics;
  out.checked = summary.checked;
  out.verify = summary.verify;
  if (hooks.host_lane) *hooks.host_lane = executor.backend().host_lane();
  if (hooks.on_done) hooks.on_done(plan, kept.events);
  return out;
}

}  // namespace shardlab::cli
