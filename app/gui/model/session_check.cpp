// What the app's settings may be, and a run prepared from them: the spec's
// own checks and Prepare (engine/scenarios/), plus what only the app adds.
//
//   ScenarioSettings ─ParamsOf─► ScenarioParams ─► the app's limits (kAppLimits)
//       │ Check: spec.check (no plan: a 1,024-rank check stays cheap)
//       │ Start: PrepareScenario on the cached topology or This machine's model
//       ▼
//   a real run the engine cannot check (too big for host buffers, fp16 data)
//   is no error in the app: it runs timing-only and says why; so does one of
//   more host work than the app checks at once (HostWorkAboveLimit).
#include <cstdio>

#include "app/gui/i18n/language.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/session.h"
#include "app/gui/model/this_machine_choice.h"
#include "engine/core/backend_traits.h"
#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/plan/kernel.h"
#include "engine/scenarios/fault_params.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab::gui {
namespace {

/// The 3D scenario in the app: the small MLP, always real (never timed
/// only), so a step of more host arithmetic than the app computes is an
/// error naming the width.
void CheckSmallThreeD(const ScenarioParams& params) {
  const ThreeDScenario scenario = ThreeDFromParams(params);
  if (scenario.timing_only()) {
    // A paper-scale plan is millions of ops: too much to draw, and to build
    // while a student types.
    throw Error("model: the app runs the small MLP; '" + scenario.model +
                    "' runs at paper scale in 'shardlab-cli run 3d --model " + scenario.model + "'",
                ErrorKind::kInvalidInput);
  }
  const MlpConfig& m = scenario.mlp;
  const double flops = 6.0 * m.batch * double(m.width) * m.width * m.layers;
  if (flops > Session::kMaxCheckedHostFlops) {
    char text[220];
    std::snprintf(text, sizeof text,
                  "width: one step is %.1f GFLOP of host arithmetic, above the %.0f GFLOP the app "
                  "computes; choose a smaller width, batch or fewer layers",
                  flops / 1e9, Session::kMaxCheckedHostFlops / 1e9);
    throw Error(text, ErrorKind::kInvalidInput);
  }
}

/// What the app adds to a spec: the parameter that counts the ranks of a
/// run on This machine (null: the app does not model This machine for it),
/// and a limit of its own beyond the spec's checks.
struct AppLimits {
  const char* spec;
  const char* this_machine_ranks;
  void (*check)(const ScenarioParams&);
};
constexpr AppLimits kAppLimits[] = {
    {"collective", "ranks", nullptr},
    {"pipeline", "stages", nullptr},
    {"tp", "tp", nullptr},
    {"zero", "ranks", nullptr},  // K: the spec's check (CheckZeroK)
    {"3d", nullptr, CheckSmallThreeD},
};

const AppLimits* LimitsOf(const ScenarioSpec& spec) {
  for (const AppLimits& l : kAppLimits)
    if (spec.name == l.spec) return &l;
  return nullptr;
}

void CheckAppLimits(const ScenarioParams& params) {
  const AppLimits* limits = LimitsOf(params.spec());
  if (limits != nullptr && limits->check != nullptr) limits->check(params);
}

/// A spec whose run the app may time only: it has a timing_only switch, off.
bool CanTimeOnly(const ScenarioParams& params) {
  const ParamSpec* p = params.spec().FindParam("timing_only");
  return p != nullptr && p->type == ParamType::kBool && !params.Bool("timing_only");
}

ScenarioParams TimedOnly(ScenarioParams params) {
  params.Set("timing_only", "true");
  return params;
}

/// `attempt` on the parameters timed only, after the real run's `real`
/// error: its error is the one a student must fix, unless the spec refuses
/// timing-only itself ("timing_only: the small model always runs with
/// data"), when the real run's error is.
template <class Attempt>
void OrTimedOnly(const ScenarioParams& params, const Error& real, Attempt attempt) {
  try {
    attempt(TimedOnly(params));
  } catch (const Error& timed) {
    if (std::string(timed.what()).rfind("timing_only: ", 0) == 0) throw real;
    throw;
  }
}

/// "timing only: ..." from an engine error whose message starts with its
/// field, without the CLI's advice to pass --timing-only.
std::string TimingOnlyReason(const Error& real) {
  std::string message = real.what();
  const std::size_t colon = message.find(": ");
  if (colon != std::string::npos && colon < 20) message = message.substr(colon + 2);
  message = message.substr(0, message.find("; use --timing-only"));
  return "timing only: " + message.substr(0, message.find("; set timing_only = true"));
}

/// A prepared run of more host work than the app checks at once (its
/// arithmetic, or its data) is timed only; returns why, or "" when it is checked.
std::string HostWorkAboveLimit(const Plan& plan, Bytes max_bytes, double max_flops) {
  double flops = 0;
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::kCompute) continue;
    for (int k = 0; k < op.kernel_count; ++k)
      flops += KernelFlops(plan.kernels[static_cast<std::size_t>(op.kernel_begin + k)]);
  }
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

}  // namespace

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

Session::AppRun Session::PrepareRun(const ScenarioSettings& settings, const ScenarioParams& params) {
  const ScenarioSpec& spec = params.spec();
  if (!spec.prepare) {
    throw Error("scenario: the app does not run '" + spec.name + "' yet; its settings are checked against "
                "its spec (shardlab-cli runs it)", ErrorKind::kInvalidInput);
  }
  CheckAppLimits(params);
  AppRun run;
  // The one place "This machine" is special: the model of this machine
  // for the run's ranks (0: one per GPU), as the CLI's `--topology this`.
  const Topology* machine = nullptr;
  const AppLimits* limits = LimitsOf(spec);
  if (IsThisMachine(settings.topology) && limits != nullptr && limits->this_machine_ranks != nullptr) {
    // More ranks than GPUs are virtual devices sharing their GPU's HBM.
    if (settings.in_worker && !BackendTraitsOrDefault(settings.backend).models_machine) {
      // The app sees no GPU (the worker does): its plan could be for another machine.
      throw Error(std::string("topology: ") +
                      Tr("a real run on This machine runs from the CLI for now (shardlab-cli run allreduce "
                         "--topology this --backend cuda --compare sim): the app cannot see this machine's GPUs"),
                  ErrorKind::kInvalidInput);
    }
    // Link faults name links of the plan's machine, which the model does not run on.
    const std::string fault_refusal = MachineModelFaultRefusal(FaultsFromParams(params));
    if (!fault_refusal.empty()) throw Error(fault_refusal, ErrorKind::kInvalidInput);
    const std::string& ranks_param = limits->this_machine_ranks;
    const int ranks = params.Text(ranks_param) == "all" ? 0 : static_cast<int>(params.Int(ranks_param));
    run.machine = ModelThisMachine(settings.device_profile, settings.machine_gpus, ranks);
    machine = &run.machine->plan_topology;
  } else {
    machine = &CachedTopology(settings.topology);
  }
  run.params = params;
  try {
    run.prepared = PrepareScenario(*run.params, machine);
  } catch (const Error& real) {
    if (!CanTimeOnly(*run.params)) throw;
    OrTimedOnly(*run.params, real, [&](const ScenarioParams& timed) {
      run.prepared = PrepareScenario(timed, machine);
      run.params = timed;
    });
    run.timing_only_reason = TimingOnlyReason(real);
  }
  // Also when the spec chose timing-only itself (its own host limit is the
  // CLI's, above the app's): the reason the user reads is the app's.
  if (CanTimeOnly(*run.params)) {
    const std::string why = HostWorkAboveLimit(run.prepared->plan, kMaxCheckedHostBytes, kMaxCheckedHostFlops);
    if (!why.empty() && run.prepared->options.timing_only) {
      run.timing_only_reason = why;
    } else if (!why.empty()) {
      try {
        run.prepared = PrepareScenario(TimedOnly(*run.params), machine);
        run.params = TimedOnly(*run.params);
        run.timing_only_reason = why;
      } catch (const Error&) {
        // The spec runs it with data only: the real run it is.
      }
    }
  }
  return run;
}

std::string Session::Check(const ScenarioSettings& settings) {
  if (has_last_check_ && settings == last_check_settings_) return last_check_message_;
  std::string message;
  last_check_machine_.clear();
  try {
    const ScenarioParams params = ParamsOf(settings);  // the spec's ranges and choices
    const ScenarioSpec& spec = params.spec();
    FaultsFromParams(params);   // the fault switches parse; Start checks them against the run
    RunIterationsOf(settings);  // warm-up and timed runs (run_iterations.h)
    if (CheckMeasuredScenario(params)) {
      // The scenario's own checks (session_traces.cpp).
    } else if (IsThisMachine(settings.topology) || !spec.check) {
      // This machine's model is small to plan for; its description is shown before Run.
      const AppRun run = PrepareRun(settings, params);
      if (run.machine) last_check_machine_ = run.machine->record.Describe();
    } else {
      if (!spec.prepare) PrepareRun(settings, params);  // says the app does not run it
      CheckAppLimits(params);
      CachedTopology(settings.topology);  // "topology: ..." for a name that loads nothing
      try {
        spec.check(params);  // no plan: a 1,024-rank check stays cheap
      } catch (const Error& real) {
        if (!CanTimeOnly(params)) throw;
        // Fine when timing-only runs it: Start says why.
        OrTimedOnly(params, real, [&](const ScenarioParams& timed) { spec.check(timed); });
      }
    }
  } catch (const std::exception& e) {
    message = e.what();
  }
  has_last_check_ = true;
  last_check_settings_ = settings;
  last_check_message_ = message;
  return message;
}

}  // namespace shardlab::gui
