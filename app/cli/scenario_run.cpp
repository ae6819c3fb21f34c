#include "app/cli/scenario_run.h"

#include <cstdio>
#include <iostream>

#include "app/cli/output.h"
#include "app/cli/scenario_flags.h"
#include "engine/core/json.h"
#include "engine/plan/dump.h"
#include "engine/run/executor.h"
#include "engine/scenarios/scenario.h"

namespace shardlab::cli {
namespace {

std::string ValueText(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void WriteJson(std::ostream& out, const ScenarioParams& params, const ScenarioOutcome& outcome,
               const std::string& trace_path, const std::string& plan_dump) {
  const ScenarioSpec& spec = params.spec();
  JsonWriter w(out, true);
  w.BeginObject();
  w.Field("scenario", spec.name);
  w.Key("params");
  w.BeginObject();
  for (const auto& [name, value] : params.All()) w.Field(name, value);
  w.EndObject();
  if (outcome.prepared) w.Field("title", outcome.prepared->title);
  w.Field("summary", outcome.summary.line);
  w.Key("values");
  w.BeginObject();
  for (const Quantity& q : outcome.summary.Quantities(spec)) w.Field(q.name, q.value);
  w.EndObject();
  w.Key("units");
  w.BeginObject();
  for (const Quantity& q : outcome.summary.Quantities(spec)) w.Field(q.name, q.unit);
  w.EndObject();
  const Verdict& v = outcome.summary.verdict;
  w.Key("verdict");
  w.BeginObject();
  w.Field("kind", VerdictName(v.kind));
  w.Field("text", v.Text());
  w.EndObject();
  if (outcome.executor) {
    w.Field("steps", static_cast<std::int64_t>(outcome.executor->plan().num_steps));
    w.Field("ops", static_cast<std::int64_t>(outcome.executor->plan().ops.size()));
    w.Field("events", static_cast<std::int64_t>(outcome.events.size()));
  }
  if (!trace_path.empty()) w.Field("trace", trace_path);
  if (!plan_dump.empty()) w.Field("plan", plan_dump);
  w.EndObject();
  out << "\n";
}

void PrintText(std::ostream& out, const ScenarioSpec& spec, const ScenarioOutcome& outcome,
               const std::string& trace_path) {
  out << "# ShardLab: " << spec.title;
  if (outcome.prepared) out << ": " << outcome.prepared->title << ", backend sim";
  out << "\n";
  if (!outcome.summary.line.empty()) out << "# " << outcome.summary.line << "\n";
  for (const Quantity& q : outcome.summary.Quantities(spec))
    out << q.name << " = " << ValueText(q.value) << (q.unit.empty() ? "" : " " + q.unit) << "\n";
  if (outcome.executor)
    out << "# " << outcome.executor->plan().num_steps << " steps, "
        << outcome.executor->plan().ops.size() << " ops, " << outcome.events.size() << " events\n";
  if (outcome.prepared) out << "# Result: " << outcome.summary.verdict.Text() << "\n";
  if (!trace_path.empty()) out << "# Trace: " << trace_path << "\n";
}

}  // namespace

int RunRegisteredScenario(const ScenarioSpec& spec, std::span<const std::string> words) {
  CommandSpec command;
  command.name = "run " + spec.name;
  command.summary = spec.summary;
  command.usage = "run " + spec.name + " [flags]";
  command.description = spec.title + ": " + spec.summary + ".";
  AddScenarioFlags(command.flags, spec);
  command.flags.push_back({"json", 0, "", "print one JSON object instead of the report"});
  if (spec.prepare) {
    command.flags.push_back(
        {"trace", 0, "FILE", "write a Chrome trace (open it in Perfetto or chrome://tracing)"});
    command.flags.push_back({"plan", 0, "", "print the plan, one op per line, before the report"});
  }
  const ParsedArgs args = ParseArgs(command, words);
  if (args.help()) {
    std::cout << FormatHelp(command);
    return 0;
  }
  const ScenarioParams params = ParamsFromArgs(spec, args);
  const std::string trace_path = args.Get("trace");
  if (args.Has("trace")) CheckTracePath(args, trace_path);
  const ScenarioOutcome outcome = RunScenario(params);
  std::string plan_dump;
  if (outcome.executor && args.Has("plan")) plan_dump = DumpPlan(outcome.executor->plan());
  if (outcome.executor && args.Has("trace")) {
    WriteRunTrace(trace_path, outcome.executor->plan(), outcome.prepared->topology, outcome.events,
                  outcome.prepared->topology.name, "sim", {}, outcome.executor->backend().host_lane(),
                  std::nullopt, PlanSettingsText(params));
  }
  if (args.Has("json")) {
    WriteJson(std::cout, params, outcome, trace_path, plan_dump);
  } else {
    if (!plan_dump.empty()) std::cout << plan_dump << "#\n";
    PrintText(std::cout, spec, outcome, trace_path);
  }
  return outcome.summary.verdict.kind == VerdictKind::kWrong ? 1 : 0;
}

}  // namespace shardlab::cli
