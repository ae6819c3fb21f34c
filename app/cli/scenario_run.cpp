#include "app/cli/scenario_run.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/fault_flags.h"
#include "app/cli/iterations.h"
#include "app/cli/output.h"
#include "app/cli/scenario_flags.h"
#include "app/cli/zero_args.h"
#include "engine/core/backend_traits.h"
#include "engine/core/units.h"
#include "engine/plan/dump.h"
#include "engine/run/executor.h"
#include "engine/run/faults.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"

namespace shardlab::cli {
namespace {

std::string ValueText(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

const RunCommand& Defaults() {
  static const RunCommand none;
  return none;
}

CommandSpec CommandOf(const ScenarioSpec& spec, const RunCommand& cmd) {
  CommandSpec command;
  command.name = "run " + spec.name;
  command.summary = spec.summary;
  command.usage = cmd.usage.empty() ? "run " + spec.name + " [flags]" : cmd.usage;
  command.description = cmd.description.empty() ? spec.title + ": " + spec.summary + "." : cmd.description;
  if (spec.prepare && !cmd.description.empty())
    command.description += "\nExit code 0 when the result is correct (or not checked), 1 when it is wrong.";
  command.examples = cmd.examples;
  AddScenarioFlags(command.flags, spec);
  std::vector<FlagSpec>& f = command.flags;
  if (spec.prepare) {
    if (!spec.FindParam("backend")) f.push_back({"backend", 0, "NAME", "backend to run on (default: sim)"});
    if (!spec.FindParam("seed"))
      f.push_back({"seed", 0, "N", cmd.seed_help.empty() ? "seed of the weights and data (default: 1)" : cmd.seed_help});
  }
  f.push_back({"json", 0, "", "print one JSON object instead of the report"});
  if (spec.prepare || cmd.measure) {
    f.push_back({"trace", 0, "FILE", "write a Chrome trace (open it in Perfetto or chrome://tracing)"});
  }
  if (spec.prepare) {
    f.push_back({"plan", 0, "", "print the plan, one op per line, before running it"});
    if (cmd.critical_path)
      f.push_back({"critical-path", 0, "", "print the chain of ops that sets the run's end, split into "
                                           "compute, communication, link wait and idle"});
    AddIterationFlags(f);
    if (cmd.this_machine) AddThisMachineRunFlags(f);
  }
  return command;
}

/// The engine's "field: message" as "--flag: message": the spec's
/// parameters, the command's own fields, the backend, the faults.
Error AsFlagError(const Error& error, const ParsedArgs& args, const ScenarioSpec& spec, const RunCommand& cmd) {
  Error e = FaultErrorAsFlagError(error, args);
  if (cmd.flag_error) e = cmd.flag_error(e, args);
  std::vector<std::pair<std::string, std::string>> fields = cmd.field_flags;
  for (const ParamSpec& p : spec.params) fields.emplace_back(p.name + ": ", FlagNameOf(p));
  fields.emplace_back("backend: ", "backend");
  std::vector<std::pair<const char*, const char*>> table;
  for (const auto& [field, flag] : fields) table.emplace_back(field.c_str(), flag.c_str());
  return FieldErrorAsFlagError(e, args, table);
}

void WriteDefaultVerdict(JsonWriter& w, const Verdict& v) {
  w.Key("verdict");
  w.BeginObject();
  w.Field("kind", VerdictName(v.kind));
  w.Field("text", v.Text());
  w.EndObject();
}

void WriteRegistryFields(JsonWriter& w, const ScenarioParams& params, const Summary& summary,
                         const std::string& title, const std::vector<std::string>& own = {}) {
  const ScenarioSpec& spec = params.spec();
  const auto taken = [&](const char* key) { return std::find(own.begin(), own.end(), key) != own.end(); };
  w.Key("params");
  w.BeginObject();
  for (const auto& [name, value] : params.All()) w.Field(name, value);
  w.EndObject();
  if (!title.empty()) w.Field("title", title);
  w.Field("summary", summary.line);
  w.Key("values");
  w.BeginObject();
  for (const Quantity& q : summary.Quantities(spec)) w.Field(q.name, q.value);
  w.EndObject();
  if (taken("units")) return;
  w.Key("units");
  w.BeginObject();
  for (const Quantity& q : summary.Quantities(spec)) w.Field(q.name, q.unit);
  w.EndObject();
}

/// The parameters `names` as JSON fields, typed, with the values the run uses.
void WriteParamFields(JsonWriter& w, const ScenarioParams& params, const std::vector<std::string>& names) {
  const std::map<std::string, double> values = ScenarioParamValues(params);
  for (const std::string& name : names) {
    switch (params.spec().FindParam(name)->type) {
      case ParamType::kInteger:
      case ParamType::kSize:
      case ParamType::kCount: w.Field(name, static_cast<std::int64_t>(values.at(name))); break;
      case ParamType::kNumber: w.Field(name, values.at(name)); break;
      case ParamType::kBool: w.Field(name, params.Bool(name)); break;
      default: w.Field(name, params.Text(name));
    }
  }
}

void WriteReportValue(JsonWriter& w, const ReportValue& v) {
  switch (v.kind) {
    case ReportValue::Kind::kNull: w.Null(); break;
    case ReportValue::Kind::kBool: w.Bool(v.flag); break;
    case ReportValue::Kind::kInt: w.Int(v.integer); break;
    case ReportValue::Kind::kNumber: w.Double(v.number); break;
    case ReportValue::Kind::kText: w.String(v.text); break;
    case ReportValue::Kind::kList:
      w.BeginArray();
      for (const ReportValue& item : v.items) WriteReportValue(w, item);
      w.EndArray();
      break;
    case ReportValue::Kind::kObject:
      w.BeginObject();
      for (const ReportField& f : v.fields) {
        w.Key(f.key);
        WriteReportValue(w, f.value);
      }
      w.EndObject();
  }
}

}  // namespace

void WriteReportJson(JsonWriter& w, const Report& report) {
  for (const ReportBlock& block : report.blocks)
    for (const ReportRow& row : block.rows)
      if (!row.key.empty()) {
        w.Key(row.key);
        WriteReportValue(w, row.value);
      }
  for (const ReportField& f : report.fields.fields) {
    w.Key(f.key);
    WriteReportValue(w, f.value);
  }
}

void PrintReportRows(std::ostream& out, const Report& report, int position) {
  for (const ReportBlock& block : report.blocks) {
    if (block.position != position && !(position > 1 && block.position >= position)) continue;
    for (const ReportRow& row : block.rows) {
      if (row.label.empty() && row.text.empty() && !row.key.empty()) continue;  // --json only
      if (row.label.empty()) {
        out << (row.text.empty() ? "#" : "# " + row.text) << "\n";
        continue;
      }
      out << "# " << PadColumns(row.label, block.label_width, true);
      if (block.text_width > 0) {
        out << PadColumns(row.text, block.text_width - 2, true) << (row.formula.empty() ? "" : "  " + row.formula);
      } else {
        out << row.text << (row.formula.empty() ? "" : "   " + row.formula);
      }
      out << "\n";
    }
  }
}

namespace {

void PrintQuantities(std::ostream& out, const ScenarioSpec& spec, const Summary& summary) {
  if (!summary.line.empty()) out << "# " << summary.line << "\n";
  for (const Quantity& q : summary.Quantities(spec))
    out << q.name << " = " << ValueText(q.value) << (q.unit.empty() ? "" : " " + q.unit) << "\n";
}

ScenarioParams Params(const ScenarioSpec& spec, const RunCommand& cmd, const ParsedArgs& args,
                      const std::string& word) {
  if (cmd.check_flags) cmd.check_flags(args, word);
  try {
    ScenarioParams params = ParamsFromArgs(spec, args);
    if (cmd.adjust) cmd.adjust(args, word, params);
    return params;
  } catch (const Error& e) {
    throw AsFlagError(e, args, spec, cmd);
  }
}

/// A scenario that measures itself: its spec's `measure`, or the command's
/// own (with tables of its own).
int RunMeasured(const ScenarioSpec& spec, const RunCommand& cmd, const ParsedArgs& args,
                const std::string& word) {
  const ScenarioParams params = Params(spec, cmd, args, word);
  const std::string trace_path = args.Get("trace");
  if (args.Has("trace")) CheckTracePath(args, trace_path);
  if (!cmd.measure) {
    const ScenarioOutcome outcome = RunScenario(params);
    if (args.Has("json")) {
      JsonWriter w(std::cout, true);
      w.BeginObject();
      w.Field("scenario", spec.name);
      WriteRegistryFields(w, params, outcome.summary, "");
      WriteDefaultVerdict(w, outcome.summary.verdict);
      w.EndObject();
      std::cout << "\n";
    } else {
      std::cout << "# ShardLab: " << spec.title << "\n";
      PrintQuantities(std::cout, spec, outcome.summary);
    }
    return outcome.summary.verdict.kind == VerdictKind::kWrong ? 1 : 0;
  }
  MeasuredRun run;
  try {
    run = cmd.measure(args, params);
  } catch (const Error& e) {
    throw AsFlagError(e, args, spec, cmd);
  }
  if (args.Has("trace")) {
    if (run.plan == nullptr || run.plan->ops.empty())
      throw UsageError(args.Spelling("trace") + ": there is no real run to trace (--timing-only)");
    WriteRunTrace(trace_path, *run.plan, LoadScenarioTopology(run.topology), run.events, run.topology, "sim");
  }
  if (args.Has("json")) {
    JsonWriter w(std::cout, /*pretty=*/true);
    w.BeginObject();
    w.Field("scenario", spec.name);
    WriteReportJson(w, run.report);
    WriteVerdictJson(w, run.verdict);
    if (args.Has("trace")) w.Field("trace", trace_path);
    w.EndObject();
    std::cout << "\n";
  } else if (cmd.measured_text) {
    cmd.measured_text(std::cout, run);
  }
  std::cout.flush();
  return run.verdict.kind == VerdictKind::kWrong ? 1 : 0;
}

}  // namespace

void WriteSeedJson(JsonWriter& w, std::uint64_t seed) {
  if (seed <= static_cast<std::uint64_t>(INT64_MAX)) {
    w.Field("seed", static_cast<std::int64_t>(seed));
  } else {
    w.Field("seed", std::to_string(seed));
  }
}

const ScenarioSpec* ScenarioOfRunWord(const std::string& word) {
  if (const ScenarioSpec* spec = FindScenario(word)) return spec;
  // "tp-mlp": the scenario "tp" with its word parameter ("layer") set.
  const std::size_t dash = word.find('-');
  if (dash == std::string::npos) return nullptr;
  const std::string name = word.substr(0, dash);
  const RunCommand* cmd = FindRunCommand(name);
  if (cmd == nullptr || cmd->word_param.empty()) return nullptr;
  return FindScenario(name);
}

int RunRegisteredScenario(const ScenarioSpec& spec, std::span<const std::string> words) {
  return RunScenarioCommand(spec, spec.name, words);
}

int RunScenarioCommand(const ScenarioSpec& spec, const std::string& word, std::span<const std::string> words) {
  const RunCommand* found = FindRunCommand(spec.name);
  const RunCommand& cmd = found != nullptr ? *found : Defaults();
  if (cmd.main) return cmd.main(words);
  const CommandSpec command = CommandOf(spec, cmd);
  ParsedArgs args;
  if (HelpPrinted(command, words, args)) return 0;
  if (!spec.prepare) return RunMeasured(spec, cmd, args, word);

  const std::string backend = args.Get("backend", "sim");
  const IterationSettings iteration_settings = IterationsFromArgs(args, backend);
  const bool json = args.Has("json");
  const std::string trace_path = args.Get("trace");
  if (args.Has("trace")) CheckTracePath(args, trace_path);
  std::optional<std::uint64_t> seed;
  if (args.Has("seed")) seed = ParseSeedValue(args.Spelling("seed"), args.Get("seed"));

  const ScenarioParams params = Params(spec, cmd, args, word);
  const int ranks = cmd.ranks_param.empty() ? 0 : static_cast<int>(params.Int(cmd.ranks_param));
  std::optional<ThisMachine> machine;  // --topology this
  std::unique_ptr<Prepared> prepared;
  try {
    CheckScenarioBackend(backend);
    if (cmd.this_machine) machine = ThisMachineForRun(args, params.Text("topology"), ranks);
    prepared = PrepareScenario(params, machine ? &machine->plan_topology : nullptr);
    if (cmd.bind) cmd.bind(*prepared, params, backend, seed);
    if (seed) prepared->options.seed = *seed;
    if (const std::string refusal = FaultRefusal(prepared->options.faults, backend); !refusal.empty())
      throw Error(refusal, ErrorKind::kInvalidInput);
  } catch (const Error& e) {
    throw AsFlagError(e, args, spec, cmd);
  }
  const bool compare = cmd.this_machine && CompareModelRequested(args, backend);  // --compare sim
  const std::string topology_name =
      spec.FindParam("topology") ? params.Text("topology") : prepared->topology.name;

  std::ostream& out = std::cout;
  std::string plan_dump;
  if (args.Has("plan")) plan_dump = DumpPlan(prepared->plan);
  if (!json) {
    const std::vector<std::string> header =
        cmd.header ? cmd.header(PreparedView{args, params, *prepared, backend})
        : prepared->header.empty() ? std::vector<std::string>{spec.title + ": " + prepared->title}
                                   : prepared->header;
    for (std::size_t i = 0; i < header.size(); ++i)
      out << (i == 0 ? "# ShardLab: " + header[i] + ", backend " + backend : "#   " + header[i]) << "\n";
    if (machine) out << "#   machine: " << machine->record.Describe() << "\n";
    if (!plan_dump.empty()) out << "#\n" << plan_dump;
    out.flush();
  }

  RunOptions options = prepared->options;
  Topology run_topology = prepared->topology;
  if (machine) ApplyThisMachine(*machine, backend, &options, &run_topology);
  Executor executor(CreateBackend(backend), std::move(prepared->plan), std::move(run_topology), options);
  prepared->plan = Plan{};
  VectorSink sink;
  IterationTimes iterations;
  bool stopped = false;
  const Faults& faults = options.faults;
  try {
    iterations = RunIterations(executor, sink, iteration_settings);
  } catch (const Error&) {
    // A failed rank or link the scenario asked for may stop the run: that
    // stop is its result (RunScenario, engine/scenarios/scenario.h).
    const bool failure_asked = !faults.failed_ranks.empty() || !faults.failed_links.empty();
    if (!(prepared->stop_is_result && failure_asked && executor.state() == ExecutorState::kFailed)) throw;
    stopped = true;
    iterations = SummarizeIterations(iteration_settings, {});
  }
  const Plan& plan = executor.plan();
  const Summary summary = SummarizeScenario(
      *prepared, FinishedRun{plan, sink.events, executor.backend(), !stopped,
                             stopped ? executor.error() : std::string()});
  const RunView view{args, params, *prepared, backend, summary, plan, sink.events, iterations};
  if (args.Has("trace")) {
    WriteRunTrace(trace_path, plan, prepared->topology, sink.events, topology_name, backend,
                  cmd.rank_labels ? cmd.rank_labels(*prepared) : std::vector<std::string>{},
                  executor.backend().host_lane(),
                  cmd.this_machine ? TraceMachine(machine, backend, ranks) : std::nullopt,
                  PlanSettingsText(params));
  }
  std::optional<CriticalPath> critical;
  if (args.Has("critical-path")) {
    // Link wait against the modelled links only (a real run's are not modelled).
    const bool modelled = BackendTraitsOrDefault(backend).simulator;
    critical = FindCriticalPath(plan, sink.events, modelled ? &prepared->topology : nullptr, &faults);
  }
  const Verdict& verdict = summary.verdict;

  if (json) {
    JsonWriter w(out, /*pretty=*/true);
    w.BeginObject();
    w.Field("scenario", spec.name);
    WriteParamFields(w, params, cmd.json_params);
    if (cmd.json_setup) cmd.json_setup(w, view);
    w.Field("backend", backend);
    WriteIterationsJson(w, iterations);  // the same object in every scenario's --json
    WriteSeedJson(w, options.seed);
    w.Field("timing_only", options.timing_only);
    if (cmd.counts != RunCommand::Counts::kOpsEvents)
      w.Field("steps", static_cast<std::int64_t>(plan.num_steps));
    w.Field("ops", static_cast<std::int64_t>(plan.ops.size()));
    w.Field("events", static_cast<std::int64_t>(sink.events.size()));
    const Report& report = summary.report;
    if (cmd.json_result || !report.blocks.empty() || !report.fields.fields.empty()) {
      if (cmd.json_result) cmd.json_result(w, view);
      WriteReportJson(w, report);
      WriteVerdictJson(w, verdict);
    } else {
      WriteDefaultVerdict(w, verdict);
    }
    WriteRegistryFields(w, params, summary, prepared->title, cmd.json_own_keys);
    if (!trace_path.empty()) w.Field("trace", trace_path);
    if (!plan_dump.empty()) w.Field("plan", plan_dump);
    if (critical) WriteCriticalPathJson(w, *critical);
    w.EndObject();
    out << "\n";
  } else {
    if (cmd.counts != RunCommand::Counts::kNone) {
      out << "#   ";
      if (cmd.counts == RunCommand::Counts::kStepsOpsEvents) out << "steps " << plan.num_steps << "   ";
      out << "ops " << plan.ops.size() << "   events " << sink.events.size()
          << (options.timing_only ? "   timing only" : "") << "\n";
    }
    const Report& report = summary.report;
    const bool own = cmd.tables || !report.blocks.empty();  // else the quantities
    PrintReportRows(out, report, 0);
    if (cmd.tables) cmd.tables(out, view);
    PrintReportRows(out, report, 1);
    PrintReportRows(out, report, 2);
    if (!own) {
      PrintQuantities(out, spec, summary);
      out << "# " << plan.num_steps << " steps, " << plan.ops.size() << " ops, " << sink.events.size()
          << " events\n";
    }
    if (own) out << "#\n";
    out << "# Result: " << (report.result.empty() ? verdict.Text() : report.result) << "\n";
    if (!trace_path.empty()) out << "# Trace: " << trace_path << "\n";
    out << DescribeIterations(iterations);
    if (critical) {
      out << "#\n" << CommentLines(FormatCriticalPath(*critical));
      if (!cmd.bound_by.empty())
        out << "#   (" << cmd.bound_by << " " << critical->bounding_rank
            << " bounds the step: its ops hold the most time on the path)\n";
    }
  }
  if (compare) out << CompareRunWithModel(args, machine, plan, sink.events, backend, plan.num_ranks);
  out.flush();
  return verdict.kind == VerdictKind::kWrong ? 1 : 0;
}

}  // namespace shardlab::cli
