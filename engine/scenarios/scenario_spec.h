// A scenario, described once: its name, its parameters (type, unit, the one
// default, range or choices, help) and the quantities a run of it measures.
// Every front end reads the same description:
//
//   ScenarioSpec "pipeline" ──► shardlab-cli run pipeline   (flags, --help, defaults)
//     params: schedule, stages,  ──► the app's scenario panel and launch flags
//     microbatches, width, ...   ──► lab files (`scenario = "pipeline"`, their checks)
//     measured: bubble_fraction  ──► the worker protocol's settings, the lab grader
//
// A parameter is named once, in snake_case ("timing_only"): a lab file and
// JSON write it so, the CLI spells it "--timing-only". Values travel as
// text, as a user typed them ("25M", "1f1b", "true"); ScenarioParams checks
// them against the spec and reads them back typed.
//
// Each scenario's file in engine/scenarios/ defines one function
// `void RegisterScenario_<file name>()` (see scenario_registry.cpp: CMake
// lists those files and calls every such function); a test may add its own
// scenario at run time with RegisterScenario.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/op_kinds.h"

namespace shardlab {

enum class ParamType {
  kInteger,   // a whole number: ranks, stages
  kNumber,    // any number: a learning rate
  kSize,      // bytes, written "64M", "1K" or a number
  kCount,     // a parameter count, "7.5B" or a number
  kChoice,    // one of `choices`
  kText,      // free text
  kBool,      // true / false
  kTopology,  // a topology: a preset name (or, outside labs, a file)
};

/// "integer", "size", ... for help and messages.
const char* ParamTypeName(ParamType type);

struct ParamSpec {
  std::string name;                  // snake_case: "microbatches", "timing_only"
  ParamType type = ParamType::kInteger;
  std::string default_text;          // the one default, as a lab file writes it
  std::string unit;                  // "bytes", "layers", "GPUs"; "" for none
  double min = -std::numeric_limits<double>::infinity();  // kInteger, kNumber, kSize, kCount
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // kChoice
  std::string help;                  // one line
  char short_flag = 0;               // the CLI's one-letter flag ('b' for -b); 0: none
  std::vector<std::string> old_names;  // earlier spellings, accepted for one release
                                       // with a one-line notice ("stage" for zero_stage)
  bool lab = true;                   // a lab file may set it
  bool cli = true;                   // `run NAME` has a flag for it (collective's kind is
                                     // the command word instead: `run allreduce`)
  std::vector<std::pair<std::string, std::string>> aliases;  // kChoice: {other spelling, choice}
                                     // ("f32" -> "fp32"), accepted and stored as the choice
  std::string value_name;            // the CLI's placeholder ("N", "SIZE"); "" : from the type
  std::string noun;                  // kChoice: "unknown <noun> 'x' (...)"; "" : the name
  std::string auto_word;             // kInteger: a word taken in place of a number, meaning
                                     // "follows the others" ("all": every GPU of the
                                     // topology); Number() reads it as 0

  /// "--timing-only": the name with '-' for '_'.
  std::string Flag() const;

  // Setters for a spec written as one expression:
  //   Param("stages", ParamType::kInteger, "4", "pipeline stages").Range(1, 4096).Short('p')
  ParamSpec& Unit(std::string u) { unit = std::move(u); return *this; }
  ParamSpec& Range(double lo, double hi) { min = lo; max = hi; return *this; }
  ParamSpec& Min(double lo) { min = lo; return *this; }
  ParamSpec& Choices(std::vector<std::string> c) { choices = std::move(c); return *this; }
  ParamSpec& Short(char c) { short_flag = c; return *this; }
  ParamSpec& OldNames(std::vector<std::string> n) { old_names = std::move(n); return *this; }
  ParamSpec& ValueName(std::string v) { value_name = std::move(v); return *this; }
  ParamSpec& NoCli() { cli = false; return *this; }
  ParamSpec& Noun(std::string n) { noun = std::move(n); return *this; }
  ParamSpec& AutoWord(std::string w) { auto_word = std::move(w); return *this; }
};

/// A parameter: its name, type, the one default and its help line.
ParamSpec Param(std::string name, ParamType type, std::string default_text, std::string help);

class ScenarioParams;
struct Prepared;   // scenario.h
struct FinishedRun;
struct Summary;
struct Topology;

struct QuantitySpec {
  std::string name;  // "busbw_gbps"
  std::string unit;  // "GB/s"
  std::string help;
};

struct ScenarioSpec {
  std::string name;     // "pipeline": `run pipeline`, a lab's `scenario =`, the app's --scenario
  std::string title;    // "Pipeline parallel": the app's scenario list
  std::string summary;  // one line: `run --help`, the app's tooltip
  std::vector<ParamSpec> params;
  std::vector<QuantitySpec> measured;
  /// Optional: checks a whole parameter set as the engine would (ranks fit
  /// the topology, the shape divides, ...) without running; throws
  /// Error(kInvalidInput) "<param>: message". The lab validator calls it.
  std::function<void(const ScenarioParams&)> check;
  /// Optional: runs the scenario and returns its measured quantities (and a
  /// one-line summary). The lab runner has its own code for the built-in
  /// scenarios; a scenario without it (a test's) runs through this.
  std::function<std::map<std::string, double>(const ScenarioParams&, std::string* summary)> measure;
  /// The scenario's plan from its parameters (scenario.h): a scenario that
  /// runs a plan sets this and `summarize` instead of `measure`. `machine`,
  /// when not null, replaces the topology the parameters name. Throws
  /// Error(kInvalidInput) "<param>: message".
  std::function<std::unique_ptr<Prepared>(const ScenarioParams&, const Topology* machine)> prepare;
  /// The spec's quantities from a run of what `prepare` made.
  std::function<void(const Prepared&, const FinishedRun&, Summary&)> summarize;
  /// Optional: the values of parameters whose default follows the others
  /// ("chunks 0: 2 when interleaved"), as the run uses them, written over
  /// the plain values formulas see (ScenarioParamValues).
  std::function<void(const ScenarioParams&, std::map<std::string, double>&)> resolve;
  /// The app's views of this scenario beyond the machine, timeline and
  /// buffers every run has, and its fields' own widgets, by name;
  /// app/gui/views/scenario_panels.cpp draws each ("pipeline_metrics" in
  /// the metrics column, "tp_weights" beside the timeline, "tp_summary"
  /// under the settings, "zero_stage_field" for zero_stage). Empty: the
  /// common views and fields only (a test's scenario). A test checks that
  /// every name has a view and every view a scenario.
  std::vector<std::string> panels;
  /// Named sets of values a command or a lab starts from instead of the
  /// defaults: "gpt3-layer" is the seed text's GPT-3 layer on two DGX A100s
  /// (`sweep tp-LAYER` starts there). Each value is checked like a Set.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> presets;

  /// The parameter named `name` (or once spelled so: old_names), or nullptr.
  const ParamSpec* FindParam(std::string_view name) const;
  const QuantitySpec* FindQuantity(std::string_view name) const;
};

/// Checks `text` as a value of `param`; returns "" when it is good, else
/// the message without the parameter's name ("must be at least 1 (got 0)",
/// "'zb' is not one of gpipe, 1f1b, interleaved, zb-h1").
std::string CheckParamValue(const ParamSpec& param, std::string_view text);

/// The value as stored: a kChoice alias becomes its choice ("f16" -> "fp16").
std::string CanonicalParamValue(const ParamSpec& param, std::string_view text);

/// "N", "SIZE", "COUNT", "NAME", "X", "TEXT", "NAME|FILE" or "" (a switch)
/// for the CLI's flag table: value_name, else from the type.
std::string ParamValueName(const ParamSpec& param);

/// "(default: 16M; bytes; 1 .. 4096)": what every front end shows after a
/// parameter's help, from the spec alone. Messages of CheckParamValue read
/// "must be at least 1 (got 0)", "must be an integer (got 'x')", "not a
/// number: 'x'", "unknown schedule 'zb' (gpipe, 1f1b, interleaved or zb-h1)".
std::string ParamDefaultText(const ParamSpec& param);

// ---- parameters several scenarios share, spelled once ------------------------

/// topology: a preset (or, outside labs, a topology file); short flag -t.
ParamSpec TopologyParam(std::string help = "a topology preset or file; rank r on GPU r");
/// timing_only: skip the data (time only, the result is not checked).
ParamSpec TimingOnlyParam(std::string help = "skip the data: time only, the result is not checked");
/// dtype: fp32, fp16 or bf16 (f32, f16 accepted); `choices` narrows it.
ParamSpec DTypeParam(std::string help, std::vector<std::string> choices = {"fp32", "fp16", "bf16"});

/// One scenario's parameter values: the spec's defaults until Set.
class ScenarioParams {
 public:
  explicit ScenarioParams(const ScenarioSpec& spec);
  const ScenarioSpec& spec() const { return *spec_; }

  /// Sets `name` (or an old name of it) from text. Throws Error
  /// (kInvalidInput) "NAME: message" for an unknown name or a bad value.
  void Set(std::string_view name, std::string_view text);
  /// Sets every value of the spec's preset `name` (not marked as set by
  /// the user: IsSet stays false). Throws Error for an unknown preset.
  void ApplyPreset(std::string_view name);
  /// True when Set was called for it (not only the default).
  bool IsSet(std::string_view name) const;

  /// The value as text (the default when not set). Throws Error for a name
  /// the spec does not have (a programming error in the caller).
  const std::string& Text(std::string_view name) const;
  std::int64_t Int(std::string_view name) const;
  double Number(std::string_view name) const;  // kInteger, kNumber, kSize (bytes), kCount
  std::uint64_t Size(std::string_view name) const;
  bool Bool(std::string_view name) const;

  /// Every parameter, name -> text, defaults included, in the spec's order
  /// of names (for the worker protocol, JSON and traces).
  std::vector<std::pair<std::string, std::string>> All() const;

 private:
  const ParamSpec& Find(std::string_view name) const;
  const ScenarioSpec* spec_;
  std::map<std::string, std::string, std::less<>> values_;
  std::map<std::string, bool, std::less<>> set_;
};

/// Adds a scenario (a test's, or a built-in from its RegisterScenario_*
/// function). A second spec of the same name replaces the first.
void RegisterScenario(ScenarioSpec spec);

/// Every scenario, built-ins first (in engine/scenarios/ file order), then
/// those registered at run time (a deque: pointers stay valid).
const std::deque<ScenarioSpec>& Scenarios();

/// The scenario named `name`, or nullptr.
const ScenarioSpec* FindScenario(std::string_view name);

/// "collective, pipeline, tp, ..." for messages.
std::string ScenarioNames();

/// The DType a dtype parameter names.
DType ParamDType(const ScenarioParams& params, std::string_view name = "dtype");

}  // namespace shardlab
