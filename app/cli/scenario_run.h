// `shardlab-cli run NAME` for every registered scenario, from its spec: the
// flags are the spec's parameters plus what every run has (--backend,
// --seed, --json, --trace, --plan, --critical-path, -w/-n, --topology this
// and its machine flags, --compare sim); the run is Prepare, an Executor on
// the backend, the iterations, Summarize (engine/scenarios/scenario.h).
//
//   words ──ParseArgs──► ScenarioParams ──PrepareScenario──► Prepared
//                               │ (RunCommand hooks: a flag the spec cannot
//                               │  check, the backend and seed into the
//                               │  scenario's own state)
//                               ▼
//            Executor(backend) ─► RunIterations ─► SummarizeScenario ─► Summary
//                                                                         │
//   header ◄── Prepared::header, else "# ShardLab: title, backend"        ▼
//   tables ◄── the Summary's report rows (engine/scenarios/report.h) around
//              the renderer's tables, else one "name = value" per quantity
//   --json ◄── the same rows' keys and the report's fields
//   "# Result: ...", --trace, -w/-n, --critical-path, --compare, exit 1 on WRONG
//
// A scenario with a table of its own has a RunCommand in the table of
// scenario_commands.cpp (its help, flags and field names) whose renderers
// are its cmd_*.cpp (the pipeline's per-stage table and Gantt, ZeRO's
// memory table, ...) and its flags' own checks; every other scenario runs
// with the defaults.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/machine_args.h"
#include "app/common/args.h"
#include "engine/core/json.h"
#include "engine/run/critical_path.h"
#include "engine/run/iterations.h"
#include "engine/scenarios/scenario.h"

namespace shardlab::cli {

/// What a renderer sees of a run before it starts (the header).
struct PreparedView {
  const ParsedArgs& args;
  const ScenarioParams& params;
  const Prepared& prepared;
  const std::string& backend;
};

/// What a renderer sees of a finished run.
struct RunView {
  const ParsedArgs& args;
  const ScenarioParams& params;
  const Prepared& prepared;
  const std::string& backend;
  const Summary& summary;
  const Plan& plan;  // the plan that ran (the executor's)
  std::span<const Event> events;
  const IterationTimes& iterations;
};

/// A scenario that measures itself but has tables of its own (inference):
/// what its run left for the renderer, --json, the trace and the exit code.
struct MeasuredRun {
  std::shared_ptr<const void> detail;  // the scenario's own result (InferenceRun)
  Verdict verdict;
  const Plan* plan = nullptr;          // the real run's plan, for --trace (null or empty: none)
  std::span<const Event> events;
  std::string topology;                // the preset or file the trace's machine is
  Report report;                       // its rows and --json fields (the tables print the rows)
  template <class T>
  const T& Detail() const {
    return *static_cast<const T*>(detail.get());
  }
};

/// How the generic `run NAME` shows one scenario: every field is optional.
struct RunCommand {
  /// `run WORD` names this scenario when WORD is the spec's name, or, with
  /// a word_param, "NAME-VALUE" ("tp-mlp": the parameter `layer` = "mlp").
  std::string word_param;
  std::string usage;        // "run tp-column|tp-row|... [flags]"; default "run NAME [flags]"
  std::string description;  // the help's paragraph; default the spec's title and summary
  std::string examples;
  std::string seed_help;    // --seed's help line; default "seed of the weights and data (default: 1)"
  /// Off: no --critical-path (a scenario whose path says nothing); no
  /// --topology this (a scenario without a machine to model).
  bool critical_path = true;
  bool this_machine = false;
  std::string ranks_param;  // --topology this: the parameter that counts the ranks
  /// "stage": the critical path's bounding rank is "stage N bounds the step".
  std::string bound_by;
  /// The line of counts after the header: none, "ops/events" or "steps/ops/events".
  enum class Counts { kNone, kOpsEvents, kStepsOpsEvents } counts = Counts::kNone;
  /// The engine's "field: ..." messages whose field is no parameter name
  /// ("zero: ..." is --zero-stage), as flags.
  std::vector<std::pair<std::string, std::string>> field_flags;

  /// Before the flags become parameters: a flag's text the spec would
  /// refuse with a less helpful message ("--tp 2,4": 'sweep' runs a list).
  std::function<void(const ParsedArgs&, const std::string& word)> check_flags;
  /// Before Prepare: what the spec cannot check ("--params: give either
  /// --params or --layers and --width"), a parameter a flag implies. Throws
  /// UsageError, or Error "field: ..." (as a flag error).
  std::function<void(const ParsedArgs&, const std::string& word, ScenarioParams&)> adjust;
  /// After Prepare: the backend and seed into the scenario's own state
  /// (Prepared::detail), which the spec's Prepare made for the simulator.
  std::function<void(Prepared&, const ScenarioParams&, const std::string& backend,
                     std::optional<std::uint64_t> seed)>
      bind;
  /// An Error (not a UsageError) of the run as a flag error.
  std::function<Error(const Error&, const ParsedArgs&)> flag_error;

  /// The lines before the run: the first is "# ShardLab: FIRST, backend B",
  /// each other "#   LINE". Default: the spec's title and the prepared one.
  std::function<std::vector<std::string>(const PreparedView&)> header;
  /// The tables between the header and "# Result:", among the Summary's
  /// report rows (the rows alone, or every quantity, when none).
  std::function<void(std::ostream&, const RunView&)> tables;
  /// --json: parameters after "scenario", typed as the run uses them
  /// (ScenarioParamValues: "chunks" resolved), then the fields of the
  /// setup; after "events" those of the result.
  std::vector<std::string> json_params;
  std::function<void(JsonWriter&, const RunView&)> json_setup;
  std::function<void(JsonWriter&, const RunView&)> json_result;
  /// Keys of the scenario's own --json that the registry's ("params",
  /// "title", "summary", "values", "units") then leaves out: ZeRO's "units".
  std::vector<std::string> json_own_keys;
  /// Trace lanes named by the rank's coordinates ("dp0 pp1 tp0").
  std::function<std::vector<std::string>(const Prepared&)> rank_labels;

  /// A scenario that measures itself with tables of its own: runs it.
  std::function<MeasuredRun(const ParsedArgs&, const ScenarioParams&)> measure;
  std::function<void(std::ostream&, const MeasuredRun&)> measured_text;  // its tables and the report's rows

  /// A command not yet on the generic path (elastic): the whole of it.
  std::function<int(std::span<const std::string>)> main;
};

/// The RunCommand of the scenario `name`, or nullptr (the defaults).
const RunCommand* FindRunCommand(const std::string& name);

/// The scenario `run WORD` names ("pipeline", "tp-mlp"), or nullptr.
const ScenarioSpec* ScenarioOfRunWord(const std::string& word);

/// `run WORD ...` for the scenario ScenarioOfRunWord(word) found: --help,
/// the run, the report. Exit 0, 1 when the verdict is WRONG; bad flags
/// are UsageErrors (exit 2).
int RunScenarioCommand(const ScenarioSpec& spec, const std::string& word,
                       std::span<const std::string> words);

/// `run NAME` with the defaults alone (a scenario one file adds).
int RunRegisteredScenario(const ScenarioSpec& spec, std::span<const std::string> words);

/// The rows of `report`'s blocks at `position` (2: at 2 or later), laid
/// out in their columns: "# LABEL  TEXT   FORMULA".
void PrintReportRows(std::ostream& out, const Report& report, int position);
/// The report's --json fields: its rows' keys, then its own fields.
void WriteReportJson(JsonWriter& w, const Report& report);

/// A 64-bit seed as JSON: a number, or text past 2^63 (JsonWriter::Int wraps).
void WriteSeedJson(JsonWriter& w, std::uint64_t seed);

/// RunCommand::bind of a scenario whose own state (T::scenario) runs on a
/// backend from a seed: the flags' backend and seed into it.
template <class T>
void BindBackendAndSeed(Prepared& p, const ScenarioParams&, const std::string& backend,
                        std::optional<std::uint64_t> seed) {
  auto& scenario = p.Detail<T>().scenario;
  scenario.backend = backend;
  if (seed) scenario.seed = *seed;
}

/// The renderers of the scenarios with tables of their own (cmd_*.cpp):
/// each sets the hooks of `c` that draw its tables and read its state; the
/// table of scenario_commands.cpp adds the help and flags.
using Renderers = void(RunCommand& c);
Renderers PipelineRenderers, TpRenderers, ZeroRenderers, ThreeDRenderers, MoeRenderers, InferenceRenderers;

}  // namespace shardlab::cli
