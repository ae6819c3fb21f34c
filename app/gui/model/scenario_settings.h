// ScenarioSettings: what the scenario panel edits. Beside the scenario's
// name and what is no scenario parameter (the machine, the backend, the
// runs), it holds one map of the scenario's parameter values as typed,
// keyed by spec and parameter; a value not there is the spec's default
// (scenario_fields.cpp). ParamsOf turns the settings into the spec's
// ScenarioParams, which is all Session runs from; Session::Check
// (session_check.cpp) says what is wrong with them.
//
//   scenario "tp", params {"tp.hidden": "1024", "tp.layer": "attention"}
//      Param("hidden") -> "1024"    Param("seq") -> "16" (the spec's default)
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace shardlab::gui {

/// What the scenario panel edits; values stay text until Check.
struct ScenarioSettings {
  ScenarioSettings();  // ring all-reduce, every parameter its spec's default (scenario_fields.cpp)

  /// A collective kind (CLI spelling: "allreduce"), which names the
  /// collective spec's kind, or another spec's name.
  std::string scenario = "allreduce";
  /// Every spec's "topology" parameter, shared by the scenarios: a preset
  /// name, file path, or "this" (this_machine_choice.h).
  std::string topology;
  /// topology "this" without a GPU here: the modelled machine is
  /// machine_gpus GPUs of this device profile (calibrate's TOML).
  std::string device_profile;
  int machine_gpus = 1;
  /// Real hardware (cuda): hold each transfer for the modelled link's time
  /// (link_emulation.h; RunOptions::emulate_links). Ignored on the simulator.
  bool emulate_links = false;
  std::string backend = "sim";
  /// Collectives only: run in a worker process (`shardlab-cli worker`)
  /// instead of in the app, as real hardware (cuda, mpi) always does.
  bool in_worker = false;
  /// Untimed runs first and timed runs, as the CLI's -w/-n (run_iterations.h):
  /// warmup -1 is the backend's default (1 on cuda, 0 on the simulator).
  int warmup = -1;
  int iters = 1;
  /// The scenarios' parameter values as typed: "spec.param" -> text
  /// ("zero.zero_stage" -> "2", "collective.size" -> "64M"); absent means
  /// the spec's default. Each scenario keeps its own while another is
  /// chosen. The topology and a collective's kind live above.
  std::map<std::string, std::string> params;

  /// The value of the settings' scenario's parameter `name` as text: as
  /// set, else its spec's default; "" for a name the spec lacks that was
  /// never set.
  std::string Param(std::string_view name) const;
  /// The value read as a whole number (0 for an auto word such as "all",
  /// or for text that is none), and as a switch ("true").
  long long Int(std::string_view name) const;
  bool Flag(std::string_view name) const;
  /// Sets `name` of the settings' scenario to `text`, unchecked (ParamsOf
  /// and Session::Check say what is wrong). A whole number takes a
  /// parameter's auto word back for 0 ("all" GPUs); a value equal to the
  /// default is dropped from `params`, so equal settings compare equal. A
  /// name the spec lacks is kept too, and ignored by ParamsOf.
  void SetParam(std::string_view name, const std::string& text);

  bool operator==(const ScenarioSettings&) const = default;
};

}  // namespace shardlab::gui
