// `shardlab-cli run pipeline`: one training step of the small MLP split into
// pipeline stages, run on a backend; prints the measured bubble beside the
// formulas, peak in-flight activations per stage, a text Gantt, and whether
// the trained weights equal the single-device reference.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <numeric>
#include <sstream>

#include "app/cli/machine_args.h"
#include "app/cli/fault_flags.h"
#include "app/cli/commands.h"
#include "app/cli/iterations.h"
#include "app/cli/output.h"
#include "app/cli/pipeline_chart.h"
#include "app/cli/scenario_flags.h"
#include "engine/core/json.h"
#include "engine/plan/dump.h"
#include "engine/run/critical_path.h"
#include "engine/run/executor.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/io/trace_writer.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/topology_file.h"

namespace shardlab::cli {
namespace {

/// Above this much host arithmetic a run is timed only (about ten seconds
/// of plain loops); --timing-only says the same explicitly.
constexpr double kMaxHostFlops = 2e10;

constexpr std::pair<const char*, const char*> kFieldFlags[] = {
    {"stages: ", "stages"},   {"microbatches: ", "microbatches"}, {"chunks: ", "chunks"},
    {"layers: ", "layers"},   {"width: ", "width"},               {"batch: ", "batch"},
    {"schedule: ", "schedule"}, {"optimizer: ", "optimizer"},     {"learning rate: ", "lr"},
    {"backend: ", "backend"}, {"topology: ", "topology"},
};

PipelineScenario ScenarioFromArgs(const ParsedArgs& args) {
  PipelineScenario s = PipelineFromParams(ParamsFromArgs(ScenarioSpecOf("pipeline"), args));
  s.backend = args.Get("backend", "sim");
  if (args.Has("seed")) s.seed = ParseSeedValue(args.Spelling("seed"), args.Get("seed"));
  return s;
}

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

void PrintText(std::ostream& out, const PreparedPipeline& prepared, const Plan& plan,
               const PipelineOutcomeSummary& s, std::span<const Event> events,
               const std::string& not_checked, const std::string& trace_path) {
  const PipelinePlan& pipeline = prepared.pipeline;
  const PipelineShape& shape = pipeline.params.shape;
  const PipelineMetrics& m = s.metrics;
  const int p = shape.stages;
  const bool split = SplitsBackward(pipeline.params.schedule);
  out << "#\n# stage  layers      F (us)    B (us)" << (split ? "    W (us)" : "")
      << "  busy (us)  idle (us)  bubble  in-flight (formula)\n";
  for (int st = 0; st < p; ++st) {
    const PipelineStageMetrics& sm = m.stages[static_cast<std::size_t>(st)];
    out << "# " << std::setw(5) << st << "  " << std::left << std::setw(9) << PipelineStageLayers(pipeline, st)
        << std::right << std::setw(9) << Fixed(sm.forward_ns / 1e3, 2) << std::setw(10)
        << Fixed(sm.backward_ns / 1e3, 2)
        << (split ? (std::ostringstream() << std::setw(10) << Fixed(sm.weight_ns / 1e3, 2)).str()
                  : std::string())
        << std::setw(11) << Fixed(sm.busy_ns / 1e3, 2)
        << std::setw(11) << Fixed(sm.idle_ns / 1e3, 2) << std::setw(8)
        << Fixed(sm.bubble_over_useful, 3) << std::setw(6) << sm.peak_inflight << " ("
        << sm.formula_peak_inflight << ")\n";
  }
  out << "#\n# Timeline: F forward, B backward"
      << (split ? " (input gradient), W weight gradient" : "")
      << " (F3 = micro-batch 3;\n# letters alternate case by micro-batch when too narrow to"
      << " label), . idle: the bubble.\n";
  for (const std::string& row : PipelineChart(plan, shape, events)) out << "# " << row << "\n";
  const bool interleaved = pipeline.params.schedule == PipelineSchedule::kInterleaved1F1B;
  const std::string pm = "p=" + std::to_string(p) + ", m=" + std::to_string(shape.microbatches) +
                         (interleaved ? ", v=" + std::to_string(shape.chunks) : "");
  out << "#\n# step time " << FormatTime(m.step_ns) << "   (forward/backward span "
      << FormatTime(m.span_ns) << ", then the optimizer step)\n"
      << "# bubble / useful time   " << Fixed(m.bubble_over_useful, 4) << "   formula "
      << FormulaBubbleOverUsefulText(pipeline.params.schedule) << " = "
      << Fixed(m.formula_bubble_over_useful, 4)
      << "  (" << pm << ")\n"
      << "# bubble / step          " << Fixed(m.bubble_of_step, 4) << "   formula "
      << FormulaBubbleOfStepText(pipeline.params.schedule) << " = "
      << Fixed(m.formula_bubble_of_step, 4) << "\n";
  out << "# transfers              " << m.transfers << " activations and gradients, "
      << FormatBytes(m.transfer_bytes) << ", " << FormatTime(m.transfer_ns) << " in flight in all\n";
  const PipelineBubbleExcess excess = ExplainPipelineBubble(m, shape);
  if (excess.above_formula) {
    out << "# note: the bubble is above the formula, which assumes free communication and\n";
    if (excess.communication) {
      out << "#       equal slots. Here a transfer between stages takes "
          << FormatTime(excess.transfer_ns) << " on average beside\n#       "
          << FormatTime(excess.forward_ns)
          << " per forward slot; 1F1B and ZB-H1 wait for every gradient's round\n"
          << "#       trip, GPipe only at the fill and drain. A wider model hides it:\n"
          << "#       --width 4096 --batch 256 --timing-only.\n";
    } else {
      out << "#       slots that all take as long (F = B" << (split ? " = W" : "") << ").\n"
          << "#       Here the average slot is F " << FormatTime(excess.forward_ns) << ", B "
          << FormatTime(excess.backward_ns)
          << (split ? ", W " + FormatTime(excess.weight_ns) : std::string())
          << ", and stage 0\n#       skips the input gradient of its first layer.\n";
    }
  }
  out << "#\n# Result: ";
  if (!s.check.checked) {
    out << "not checked (" << not_checked << ")\n";
  } else {
    out << VerdictName(s.check.verdict.kind) << " (" << s.check.verdict.Detail()
        << "; after one step, every gradient, weight and the loss against its error bound from the"
           " double-precision single-device reference; loss "
        << std::setprecision(6) << s.check.loss << " vs " << s.check.reference_loss << ")\n";
    if (!s.check.correct) out << "#   worst tensor: " << s.check.worst_tensor << "\n";
  }
  if (!trace_path.empty()) out << "# Trace: " << trace_path << "\n";
}

void WriteJson(std::ostream& out, const PreparedPipeline& prepared, const Plan& plan,
               const PipelineOutcomeSummary& s, const std::string& not_checked,
               const std::string& trace_path, const std::string& plan_dump,
               const std::optional<CriticalPath>& critical,
               const IterationTimes& iterations) {
  const PipelineParams& params = prepared.pipeline.params;
  const PipelineMetrics& m = s.metrics;
  JsonWriter w(out, /*pretty=*/true);
  w.BeginObject();
  w.Field("scenario", "pipeline");
  w.Field("schedule", PipelineScheduleName(params.schedule));
  w.Field("stages", params.shape.stages);
  w.Field("microbatches", params.shape.microbatches);
  w.Field("chunks", params.shape.chunks);
  w.Field("layers", params.model.layers);
  w.Field("width", params.model.width);
  w.Field("batch", params.model.batch);
  w.Field("optimizer", OptimizerName(params.model.optimizer));
  w.Field("topology", prepared.scenario.topology);
  w.Field("backend", prepared.scenario.backend);
  WriteIterationsJson(w, iterations);  // the same object in every scenario's --json
  w.Field("seed", static_cast<std::int64_t>(prepared.scenario.seed));
  w.Field("timing_only", !s.check.checked);
  w.Field("steps", s.steps);
  w.Field("ops", static_cast<std::int64_t>(plan.ops.size()));
  w.Field("events", static_cast<std::int64_t>(s.events));
  w.Field("step_time_us", m.step_ns / 1e3);
  w.Field("span_us", m.span_ns / 1e3);
  w.Field("bubble_fraction", m.bubble_over_useful);
  w.Field("formula_bubble_fraction", m.formula_bubble_over_useful);
  w.Field("bubble_share_of_step", m.bubble_of_step);
  w.Field("formula_bubble_share_of_step", m.formula_bubble_of_step);
  w.Key("peak_inflight_per_stage");
  w.BeginArray();
  for (const PipelineStageMetrics& st : m.stages) w.Int(st.peak_inflight);
  w.EndArray();
  w.Key("formula_peak_inflight_per_stage");
  w.BeginArray();
  for (const PipelineStageMetrics& st : m.stages) w.Int(st.formula_peak_inflight);
  w.EndArray();
  w.Key("per_stage");
  w.BeginArray();
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    const PipelineStageMetrics& st = m.stages[i];
    w.BeginObject();
    w.Field("stage", static_cast<std::int64_t>(i));
    w.Field("layers", PipelineStageLayers(prepared.pipeline, static_cast<int>(i)));
    w.Field("forward_us", st.forward_ns / 1e3);
    w.Field("backward_us", st.backward_ns / 1e3);
    if (SplitsBackward(params.schedule)) w.Field("weight_gradient_us", st.weight_ns / 1e3);
    w.Field("busy_us", st.busy_ns / 1e3);
    w.Field("idle_us", st.idle_ns / 1e3);
    w.Field("bubble_fraction", st.bubble_over_useful);
    w.EndObject();
  }
  w.EndArray();
  w.Field("transfers", m.transfers);
  w.Field("transfer_bytes", m.transfer_bytes);
  w.Field("checked", s.check.checked);
  if (s.check.checked) {
    w.Field("correct", s.check.correct);
    w.Field("gradient_error", s.check.gradient_error);
    w.Field("weight_error", s.check.weight_error);
    w.Field("loss", s.check.loss);
    w.Field("reference_loss", s.check.reference_loss);
    w.Key("not_checked_reason");
    w.Null();
  } else {
    w.Key("correct");
    w.Null();
    w.Field("not_checked_reason", not_checked);
  }
  WriteVerdictJson(w, s.check.checked ? s.check.verdict : NotChecked(not_checked));
  if (!trace_path.empty()) w.Field("trace", trace_path);
  if (!plan_dump.empty()) w.Field("plan", plan_dump);
  if (critical) WriteCriticalPathJson(w, *critical);
  w.EndObject();
  out << "\n";
}

}  // namespace

const CommandSpec& PipelineSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "run pipeline";
    s.summary = "train the small MLP for one step across pipeline stages; measure the bubble";
    s.usage = "run pipeline [flags]";
    s.description =
        "Splits an MLP (--layers layers of --width features) into --stages stages, one per GPU,\n"
        "and trains it for one step on a batch of --batch rows cut into --microbatches\n"
        "micro-batches, with the GPipe, 1F1B (PipeDream-Flush), interleaved 1F1B or ZB-H1\n"
        "schedule (zero bubble: the backward split into input and weight gradients).\n"
        "Activations and gradients cross stages as sends over the topology's links; the\n"
        "arithmetic is real, and the weights after the step are compared with one device\n"
        "training on the whole batch. Prints each stage's busy and idle time, the measured\n"
        "bubble beside (p-1)/m and (p-1)/(m+p-1), peak in-flight activations, and a text Gantt.\n"
        "Exit code 0 when the result is correct (or not checked), 1 when it is wrong.";
    AddScenarioFlags(s.flags, ScenarioSpecOf("pipeline"));
    s.flags.insert(s.flags.end(), {
        {"backend", 0, "NAME", "backend to run on (default: sim)"},
        {"seed", 0, "N", "seed of the weights and data (default: 1)"},
        {"json", 0, "", "print one JSON object instead of the table"},
        {"trace", 0, "FILE", "write a Chrome trace (open it in Perfetto or chrome://tracing)"},
        {"plan", 0, "", "print the plan, one op per line, before running it"},
        {"critical-path", 0, "", "print the chain of ops that sets the step's end and the stage "
                                 "that bounds it"},
    });
    AddIterationFlags(s.flags);
    AddThisMachineRunFlags(s.flags);
    s.examples =
        "  shardlab-cli run pipeline --schedule 1f1b --stages 4 --microbatches 8 --topology dgx-a100\n"
        "  shardlab-cli run pipeline --schedule gpipe -p 4 -m 4 --json\n"
        "  shardlab-cli run pipeline --schedule interleaved -p 4 -m 8 --chunks 2 --layers 16\n"
        "  shardlab-cli run pipeline --schedule zb-h1 -p 4 -m 8 --width 4096 --batch 256 --timing-only\n"
        "  shardlab-cli run pipeline -p 8 -m 32 --width 8192 --layers 32 --batch 256 --timing-only\n";
    return s;
  }();
  return spec;
}

int PipelineMain(std::span<const std::string> words) {
  const ParsedArgs args = ParseArgs(PipelineSpec(), words);
  if (args.help()) {
    std::cout << FormatHelp(PipelineSpec());
    return 0;
  }
  const IterationSettings iteration_settings = IterationsFromArgs(args, args.Get("backend", "sim"));
  const bool json = args.Has("json");
  const std::string trace_path = args.Get("trace");
  if (args.Has("trace") && trace_path.empty())
    throw UsageError(args.Spelling("trace") + ": missing value (FILE)");

  std::unique_ptr<PreparedPipeline> prepared;
  std::optional<ThisMachine> machine;  // --topology this
  std::string not_checked;
  try {
    PipelineScenario scenario = ScenarioFromArgs(args);
    if (scenario.timing_only) {
      not_checked = "timing only (--timing-only)";
    } else if (PipelineHostFlops(scenario.params) > kMaxHostFlops) {
      scenario.timing_only = true;
      not_checked = "timing only: one step is " +
                    Fixed(PipelineHostFlops(scenario.params) / 1e9, 0) +
                    " GFLOP of host arithmetic, above the 20 GFLOP this command computes; "
                    "choose a smaller --width, --layers or --batch to check the result";
    }
    machine = ThisMachineForRun(args, scenario.topology, scenario.params.shape.stages);
    prepared = machine ? PreparePipeline(scenario, machine->plan_topology) : PreparePipeline(scenario);
  } catch (const Error& e) {
    throw FieldErrorAsFlagError(e, args, kFieldFlags);
  }
  if (args.Has("trace")) CheckTracePath(args, trace_path);
  const bool compare = CompareModelRequested(args, prepared->scenario.backend);  // --compare sim

  std::ostream& out = std::cout;
  const PipelineParams& params = prepared->pipeline.params;
  std::string plan_dump;
  if (args.Has("plan")) plan_dump = DumpPlan(prepared->pipeline.plan);
  if (!json) {
    out << "# ShardLab: " << prepared->pipeline.plan.name << " (batch " << params.model.batch
        << ", " << params.model.batch / params.shape.microbatches << " rows per micro-batch, "
        << OptimizerName(params.model.optimizer) << ") on " << prepared->scenario.topology
        << ", backend " << prepared->scenario.backend << "\n";
    if (machine) out << "#   machine: " << machine->record.Describe() << "\n";
    if (!plan_dump.empty()) out << "#\n" << plan_dump;
    out.flush();
  }

  RunOptions options;
  options.seed = prepared->scenario.seed;
  options.timing_only = prepared->scenario.timing_only;
  options.faults = FaultsFromFlags(ScenarioSpecOf("pipeline"), args, prepared->scenario.backend,
                                   prepared->topology, prepared->pipeline.plan);
  Topology run_topology = prepared->topology;
  if (machine) ApplyThisMachine(*machine, prepared->scenario.backend, &options, &run_topology);
  Executor executor(CreateBackend(prepared->scenario.backend), std::move(prepared->pipeline.plan),
                    std::move(run_topology), options);
  VectorSink sink;
  const IterationTimes iterations = RunIterations(executor, sink, iteration_settings);
  const Plan& plan = executor.plan();
  const PipelineOutcomeSummary s =
      SummarizePipeline(*prepared, sink.events, executor.backend(), &plan);
  if (args.Has("trace")) {
    WriteRunTrace(trace_path, plan, prepared->topology, sink.events, prepared->scenario.topology,
                  prepared->scenario.backend, {}, executor.backend().host_lane(),
                  TraceMachine(machine, prepared->scenario.backend, params.shape.stages),
                  PlanSettingsText(ParamsFromArgs(ScenarioSpecOf("pipeline"), args)));
  }
  std::optional<CriticalPath> critical;
  if (args.Has("critical-path")) {
    // Link wait against the modelled links only (a real run's are not modelled).
    const bool modelled = BackendTraitsOrDefault(prepared->scenario.backend).simulator;
    critical = FindCriticalPath(plan, sink.events, modelled ? &prepared->topology : nullptr,
                                &options.faults);
  }
  if (json) {
    WriteJson(out, *prepared, plan, s, not_checked, trace_path, plan_dump, critical, iterations);
  } else {
    PrintText(out, *prepared, plan, s, sink.events, not_checked, trace_path);
    out << DescribeIterations(iterations);
    if (critical) {
      out << "#\n" << CommentLines(FormatCriticalPath(*critical)) << "#   (stage " << critical->bounding_rank
          << " bounds the step: its ops hold the most time on the path)\n";
    }
  }
  if (compare) out << CompareRunWithModel(args, machine, plan, sink.events, prepared->scenario.backend, plan.num_ranks);
  out.flush();
  return s.check.checked && !s.check.correct ? 1 : 0;
}

}  // namespace shardlab::cli
