// `shardlab-cli run COLLECTIVE`: one collective, reported like one line of
// nccl-tests, optionally step by step (--step), as JSON (--json), as a
// Chrome trace (--trace) and with its plan (--plan).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <sstream>

#include "app/cli/collective_run.h"
#include "app/cli/commands.h"
#include "app/cli/output.h"
#include "app/cli/scenario_flags.h"
#include "app/cli/scenario_run.h"
#include "engine/core/backend_traits.h"
#include "engine/scenarios/scenario.h"
#include "engine/plan/dump.h"
#include "engine/compare/compare.h"
#include "engine/run/critical_path.h"
#include "engine/run/executor.h"
#include "engine/io/trace_writer.h"
#include "engine/run/vector_sink.h"

namespace shardlab::cli {
namespace {

/// At most this many transfers are listed per step; the rest are counted.
constexpr std::size_t kMaxSendsShown = 16;

/// Chunk letters as ChunkState writes them: A..Z, then AA, AB, ...
std::string ChunkName(int chunk) {
  if (chunk < 0) return "?";
  std::string letters;
  for (int n = chunk + 1; n > 0; n = (n - 1) / 26) {
    letters.insert(letters.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return letters;
}

/// How many chunks the plan's ops name (ring: one per rank; tree: its
/// pipeline chunks), so the letters in "sends:" match the GPU lines.
int PlanChunks(const Plan& plan) {
  int chunks = 0;
  for (const Op& op : plan.ops) chunks = std::max(chunks, op.tags.chunk + 1);
  return chunks;
}

/// ChunkState's lines, each starting "GPU<r>: " (rank r runs on GPU r).
std::vector<std::string> GpuLines(const ChunkState& chunks, int chunk_count) {
  std::vector<std::string> lines = chunks.FormatRanks(chunk_count);
  for (std::size_t r = 0; r < lines.size(); ++r) {
    if (lines[r].rfind("GPU", 0) != 0) lines[r] = "GPU" + std::to_string(r) + ": " + lines[r];
  }
  return lines;
}

/// "0->1 A  1->2 B ..." for the sends of one step (1-based), built lazily
/// because step mode is the only user and plans can hold millions of ops.
class StepSends {
 public:
  std::string Describe(const Plan& plan, int step) {
    if (by_step_.empty()) {
      by_step_.resize(static_cast<std::size_t>(plan.num_steps));
      for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
        const Op& op = plan.ops[static_cast<std::size_t>(id)];
        if (op.kind == OpKind::kSend && op.step >= 0 && op.step < plan.num_steps) {
          by_step_[static_cast<std::size_t>(op.step)].push_back(id);
        }
      }
    }
    const std::vector<OpId>& ids = by_step_[static_cast<std::size_t>(step - 1)];
    std::ostringstream out;
    for (std::size_t i = 0; i < ids.size() && i < kMaxSendsShown; ++i) {
      const Op& op = plan.ops[static_cast<std::size_t>(ids[i])];
      out << (i ? "  " : "") << op.rank << "->" << op.peer << " " << ChunkName(op.tags.chunk);
    }
    if (ids.size() > kMaxSendsShown) out << "  (+" << ids.size() - kMaxSendsShown << " more)";
    return out.str();
  }

 private:
  std::vector<std::vector<OpId>> by_step_;
};

struct StepRecord {
  int step = 0;
  std::string phase;
  TimeNs now_ns = 0;
  std::vector<std::string> gpus;
};

void PrintStepLegend(std::ostream& out) {
  out << "# Chunk state after each step: letter = chunk of the buffer (A = chunk 0),\n"
      << "# digits = ranks whose inputs it holds (summed), A0..7 = ranks 0 to 7,\n"
      << "# _ = nothing yet, * = the chunk's elements hold different sets.\n";
}

void PrintStep(std::ostream& out, const StepView& view, StepSends& sends, int chunk_count) {
  out << "step " << view.step << "/" << view.steps;
  if (view.step == 0) {
    out << "  inputs\n";
  } else {
    const char* phase = PhaseName(view.phase);
    out << "  " << (*phase != '\0' ? phase : "step") << "  t = " << FormatTime(view.now_ns)
        << "\n";
    const std::string moves = sends.Describe(view.plan, view.step);
    if (!moves.empty()) out << "  sends: " << moves << "\n";
  }
  for (const std::string& line : GpuLines(view.chunks, chunk_count)) {
    out << "  " << line << "\n";
  }
}

std::string TraceTitle(const CollectiveSetup& setup, Bytes size_bytes) {
  return DescribeCollective(setup) + ", " + FormatBytes(size_bytes) + " on " +
         setup.topology_name + " (" + setup.backend + ")";
}

}  // namespace

CommandSpec RunSpec() {
  CommandSpec s;
  s.name = "run";
  s.summary = "run a collective (or pipeline, tp-LAYER, zero, 3d, moe) and check its result";
  s.usage =
      "run COLLECTIVE [flags]   |   run pipeline [flags] (see 'run pipeline --help')\n"
      "       shardlab-cli run tp-LAYER [flags] (tensor parallel; see 'run tp-mlp --help')\n"
      "       shardlab-cli run zero [flags] (data parallel and ZeRO; see 'run zero --help')\n"
      "       shardlab-cli run 3d [flags] (DP x PP x TP; see 'run 3d --help')\n"
      "       shardlab-cli run moe [flags] (expert parallel; see 'run moe --help')";
  s.description =
      "Builds the plan of one collective (allreduce, reducescatter, allgather, broadcast,\n"
      "reduce, alltoall), runs it on a backend and reports it as nccl-tests does: time,\n"
      "algbw = size / time and busbw = algbw x the collective's factor (2(n-1)/n for\n"
      "all-reduce). Every rank's result is compared with a single-buffer reference.\n"
      "Exit code 0 when the result is correct (or not checked), 1 when it is wrong.\n"
      "\n"
      "Scenarios ('run NAME --help' for each; the collective is 'run allreduce', ...,\n"
      "tensor parallel 'run tp-mlp', ...; memory and plan are commands of their own):\n" +
      ScenarioListText();
  s.description.pop_back();  // FormatHelp ends the paragraph
  s.flags = {FlagFromParam(*ScenarioSpecOf("collective").FindParam("size"))};
  AddCollectiveFlags(s.flags);
  const std::vector<FlagSpec> own = {
      {"step", 0, "", "print every rank's chunks after each step (GPU0: [A0+A1, ...])"},
      {"json", 0, "", "print one JSON object instead of the table"},
      {"trace", 0, "FILE", "write a Chrome trace (open it in Perfetto or chrome://tracing)"},
      {"plan", 0, "", "print the plan, one op per line, before running it"},
      {"critical-path", 0, "", "print the chain of ops that sets the run's end, split into "
                               "compute, communication, link wait and idle"},
      {"compare", 0, "sim", "with a real backend: run the simulator's model of this machine "
                            "(--topology this; rates from --device-profile, else the cached profile, calibrated on first "
                            "use) on "
                            "the same plan and print the compare table"},
  };
  s.flags.insert(s.flags.end(), own.begin(), own.end());
  AddIterationFlags(s.flags);
  s.max_positionals = 1;
  s.examples =
      "  shardlab-cli run allreduce --algo ring --ranks 8 --size 64M --topology dgx-a100\n"
      "  shardlab-cli run allreduce --ranks 4 --size 1K --step\n"
      "  shardlab-cli run allgather --topology dgx1-v100 --ring-order rank --json\n"
      "  shardlab-cli run allreduce --size 26GB --timing-only --trace ar.json\n";
  return s;
}

int RunMain(std::span<const std::string> words) {
  // `run NAME`: every registered scenario from its spec, with its renderer
  // where it has a table of its own; a word that names none is a
  // collective's kind (`run allreduce`).
  if (!words.empty()) {
    if (const ScenarioSpec* spec = ScenarioOfRunWord(words.front()); spec != nullptr && ScenarioRuns(*spec))
      return RunScenarioCommand(*spec, words.front(), words.subspan(1));
  }
  return CollectiveRunMain(words);
}

int CollectiveRunMain(std::span<const std::string> words) {
  ParsedArgs args;
  if (HelpPrinted(RunSpec(), words, args)) return 0;
  CollectiveSetup setup = SetupFromArgs(args, "run");
  const IterationSettings iterations = IterationsFromArgs(args, setup.backend);
  setup.warmup = iterations.warmup;
  setup.iters = iterations.iters;
  const int element_bytes = DTypeBytes(setup.dtype);
  const std::string size_flag = args.Spelling("size");
  const Bytes size_bytes = ParseSizeValue(
      size_flag, args.Get("size", ScenarioSpecOf("collective").FindParam("size")->default_text),
      element_bytes);
  if (size_bytes % element_bytes != 0) {
    throw UsageError(size_flag + ": " + std::to_string(size_bytes) + " B is not a whole number " +
                     "of " + DTypeName(setup.dtype) + " elements (" +
                     std::to_string(element_bytes) + " B each)");
  }
  const bool json = args.Has("json");
  const bool compare = args.Has("compare");
  const BackendTraits traits = BackendTraitsOrDefault(setup.backend);
  if (compare) {
    CheckCompareModel(args);
    if (traits.simulator) {
      throw UsageError(args.Spelling("compare") + " sim: this run is the simulator already; compare a "
                       "real run (--backend cuda) with it, or two traces with 'shardlab-cli compare A B'");
    }
    if (args.Has("step")) throw UsageError(args.Spelling("compare") + ": not with --step");
  }
  const std::string trace_path = args.Get("trace");
  if (args.Has("trace")) CheckTracePath(args, trace_path);


  std::ostream& out = std::cout;
  std::string plan_dump;
  std::vector<StepRecord> steps_json;
  StepSends sends;
  RunHooks hooks;
  hooks.on_plan = [&](const Plan& plan) {
    if (!json) {
      out << "# ShardLab: " << DescribeCollective(setup) << ", " << FormatBytes(size_bytes) << " (";
      if (size_bytes >= 1024) out << size_bytes << " B, ";
      out << DTypeName(setup.dtype);
      if (CollectiveReduces(setup.kind)) out << ", " << ReduceOpName(setup.op);
      out << ") on " << setup.topology_name << ", backend " << setup.backend << "\n";
      if (setup.algo == CollectiveAlgo::kRing) {
        out << "#   ring order " << DescribeRing(setup) << "\n";
      }
    }
    if (args.Has("plan")) {
      plan_dump = DumpPlan(plan);
      if (!json) out << "#\n" << plan_dump;
    }
    if (!json && args.Has("step")) {
      out << "#\n";
      PrintStepLegend(out);
    }
    out.flush();
  };
  int chunk_count = -1;  // counted once: the plan does not change between steps
  if (args.Has("step")) {
    hooks.on_step = [&](const StepView& view) {
      if (chunk_count < 0) chunk_count = PlanChunks(view.plan);
      if (json) {
        steps_json.push_back(
            {view.step, PhaseName(view.phase), view.now_ns, GpuLines(view.chunks, chunk_count)});
      } else {
        PrintStep(out, view, sends, chunk_count);
      }
    };
  }
  std::vector<HostEnqueueSpan> host_lane;
  if (args.Has("trace")) {
    hooks.host_lane = &host_lane;
    hooks.on_done = [&](const Plan& plan, std::span<const Event> events) {
      TraceInfo info;
      info.host_lane = host_lane;
      info.title = TraceTitle(setup, size_bytes);
      ScenarioParams settings = ParamsFromArgs(ScenarioSpecOf("collective"), args);
      settings.Set("kind", CollectiveKindName(setup.kind));
      info.plan_settings = PlanSettingsText(settings);
      info.backend = setup.backend;
      info.rank_to_gpu.resize(static_cast<std::size_t>(setup.ranks));
      std::iota(info.rank_to_gpu.begin(), info.rank_to_gpu.end(), 0);
      const Topology* topology = &setup.topology;
      if (setup.this_machine) {
        // The machine itself, and where each rank ran on it.
        info.machine = setup.this_machine->record;
        if (traits.runs_on_local_gpus) info.machine->issue = CudaIssueMode();
        if (traits.models_machine) {
          info.rank_to_gpu = info.machine->rank_to_gpu;
          topology = &setup.this_machine->machine;
        }
      } else if (traits.runs_on_local_gpus) {
        info.machine = RecordRealMachine(setup.ranks, setup.device_profile);
      }
      WriteChromeTraceFile(trace_path, plan, *topology, events, info);
    };
  }

  // --compare sim: keep the real run's plan and events for the model's run.
  std::optional<Plan> kept_plan;
  std::vector<Event> kept_events;
  if (compare) {
    auto trace_hook = hooks.on_done;
    hooks.on_done = [&, trace_hook](const Plan& plan, std::span<const Event> events) {
      if (trace_hook) trace_hook(plan, events);
      kept_plan = plan;
      kept_events.assign(events.begin(), events.end());
    };
  }

  // --critical-path: the chain that sets the end, on the run's own topology.
  std::optional<CriticalPath> critical;
  if (args.Has("critical-path")) {
    auto before = hooks.on_done;
    hooks.on_done = [&, before](const Plan& plan, std::span<const Event> events) {
      if (before) before(plan, events);
      const Topology* topology = &setup.topology;
      if (setup.this_machine && traits.models_machine) topology = &setup.this_machine->machine;
      // Link wait is measured against the modelled links: the simulator's,
      // or those a real run emulates; a real run's own links are not modelled.
      const bool modelled = traits.simulator || setup.emulate_links;
      critical = FindCriticalPath(plan, std::vector<Event>(events.begin(), events.end()),
                                  modelled ? topology : nullptr, &setup.faults);
    };
  }

  const CollectiveOutcome outcome = RunCollective(setup, size_bytes, hooks);

  std::optional<Comparison> comparison;
  std::string model_machine;
  if (compare && kept_plan) {
    const ThisMachine model = setup.this_machine ? *setup.this_machine : ThisMachineFromArgs(args, setup.ranks);
    model_machine = model.record.Describe();
    RunOptions options;
    options.timing_only = true;
    MachineRecord modelled = model.record;
    if (traits.runs_on_local_gpus && !args.Has("issue")) modelled.issue = CudaIssueMode();  // as this run did
    ApplyMachineModel(modelled, &options);
    Executor sim(CreateBackend(args.Get("compare")), *kept_plan, model.machine, options);
    VectorSink model_events;
    sim.RunToEnd(model_events);
    comparison = CompareRuns(RunFromEvents(*kept_plan, kept_events, "this run", setup.backend),
                             RunFromEvents(*kept_plan, model_events.events, "model", "sim"));
  }

  if (json) {
    JsonWriter w(out, /*pretty=*/true);
    w.BeginObject();
    WriteSetupFields(w, setup);
    WriteOutcomeFields(w, outcome);
    if (args.Has("trace")) w.Field("trace", trace_path);
    if (args.Has("plan")) w.Field("plan", plan_dump);
    if (critical) WriteCriticalPathJson(w, *critical);
    if (comparison) {
      w.Key("compare");
      w.BeginObject();
      w.Field("model_machine", model_machine);
      w.Field("measured_us", comparison->run.a_ns / 1000.0);
      w.Field("model_us", comparison->run.b_ns / 1000.0);
      w.Field("ratio", comparison->run.ratio());
      w.Field("explanation", comparison->explanation);
      w.EndObject();
    }
    if (args.Has("step")) {
      w.Key("step_states");
      w.BeginArray();
      for (const StepRecord& s : steps_json) {
        w.BeginObject();
        w.Field("step", s.step);
        w.Field("phase", s.phase);
        w.Field("time_us", s.now_ns / 1000.0);
        w.Key("gpus");
        w.BeginArray();
        for (const std::string& line : s.gpus) w.String(line);
        w.EndArray();
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
    out << "\n";
  } else {
    out << "#   steps " << outcome.steps << "   ops " << outcome.ops << "   events "
        << outcome.events << "   clock " << ClockKindName(outcome.clock) << "\n";
    if (!outcome.placement.empty()) out << "#   placement: " << outcome.placement << "\n";
    if (setup.this_machine) {
      out << "#   machine: " << setup.this_machine->record.Describe() << "\n";
      if (traits.models_machine) {
        const TimeNs issue_ns = ModelOpIssueNs(setup.this_machine->record);
        const TimeNs graph_ns = ModelGraphOpNs(setup.this_machine->record);
        std::string issue_text;
        if (issue_ns > 0) {
          issue_text = "each op issued after the one before it (" + FormatTime(issue_ns) +
                       ": launch + 2 event records, from the profile)";
        } else if (graph_ns > 0) {
          issue_text = "ops replayed as one CUDA graph (no host cost per op); a dependent op starts " +
                       FormatTime(graph_ns) + " after its inputs (3 graph nodes of the profile's graph_node_ns)";
        } else {
          issue_text = "ops replayed as one CUDA graph (no host cost per op; the profile has no graph_node_ns)";
        }
        out << "#   model: " << issue_text
            << "; copies and memory-bound kernels of one GPU share its "
            << FormatGbps(setup.this_machine->machine.nodes[setup.this_machine->machine.gpus[0]].device.memory_gbps) << " GB/s"
            << " of HBM traffic\n";
      }
    }
    out << "#\n";
    PrintTableHeader(out, !outcome.nccl_model.empty());
    PrintTableRow(out, RowFor(outcome));
    out << DescribeIterations(outcome.iterations);
    out << "#\n# Result: " << ResultText(outcome) << "\n";
    if (args.Has("trace")) out << "# Trace: " << trace_path << "\n";
    if (critical) out << "#\n" << CommentLines(FormatCriticalPath(*critical));
    if (comparison) {
      out << "#\n# Model: the simulator on " << model_machine << "\n" << FormatComparison(*comparison);
    }
  }
  out.flush();
  return outcome.wrong() ? 1 : 0;
}

}  // namespace shardlab::cli
