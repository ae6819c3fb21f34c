// Chinese for what the engine's scenario specs say in English: a
// scenario's title and summary, a parameter's label and help, a unit. The
// engine stays English (the CLI, lab files and traces spell these as the
// specs do); the app shows them in its language, keyed by name:
//
//   "pipeline"               title / summary        (ScenarioSpec)
//   "pipeline.microbatches"  label / help           (ParamSpec)
//   "unit:GPUs"              the unit, in a field   ("%d GPUs" -> "%d 个 GPU")
//
// tests/gui_model/i18n_test.cpp checks the table against the registry:
// every built-in scenario, parameter and unit has its entry, and every
// entry names one that exists.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/scenarios/scenario_spec.h"

namespace shardlab::gui {

struct SpecTextEntry {
  const char* key;    // "pipeline", "pipeline.stages", "unit:GPUs"
  const char* title;  // the scenario's title, the parameter's label, the unit
  const char* help;   // the scenario's summary, the parameter's help ("" for a unit)
};

/// Every entry of the Chinese table.
std::span<const SpecTextEntry> ChineseSpecTexts();

/// The entry for `key`, or nullptr.
const SpecTextEntry* FindChineseSpecText(std::string_view key);

/// In the current language (English: the spec's own words, or `english_label`).
std::string SpecTitle(const ScenarioSpec& spec);
std::string SpecSummary(const ScenarioSpec& spec);
std::string ParamLabel(const ScenarioSpec& spec, const ParamSpec& param, const std::string& english_label);
std::string ParamHelp(const ScenarioSpec& spec, const ParamSpec& param);
std::string UnitText(const std::string& unit);

}  // namespace shardlab::gui
