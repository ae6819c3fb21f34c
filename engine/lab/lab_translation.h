// A lab's text in another language: labs/NN-name/lab.zh-CN.toml beside
// lab.toml. lab.toml stays the one source of numbers, parameters and
// checks; the translation mirrors its structure and holds only text,
// matched by id, so a lab graded in Chinese is graded exactly as in English.
//
//   lab.zh-CN.toml                      must match lab.toml:
//     format = 1
//     title, summary                    each present exactly when lab.toml has it
//     goals = [...]                     the same count
//     [[step]] id = "idea"              an id of a step of lab.toml; every step once
//       title, text | text_file         text_file when lab.toml's step has one
//       [[step.question]] id = "steps"  an id of a question of that step; every one once
//         prompt, feedback, feedback_low, feedback_high, explain,
//         options (the same count)      each present exactly when lab.toml's has it
//
// Anything else (expected, units, params, ...) is a problem: such things
// live in lab.toml only. Each problem names the translation file, its line
// and the field, like the loader's (lab_loader.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/lab/lab.h"
#include "engine/lab/lab_loader.h"

namespace shardlab {

/// The language of lab.toml.
inline constexpr const char* kLabSourceLanguage = "en";

/// The languages of translations every lab in labs/ has: {"zh-CN"}.
const std::vector<std::string>& LabTranslationLanguages();

/// True for "en" and the translations' languages.
bool IsLabLanguage(std::string_view lang);

/// "en, zh-CN": for messages.
std::string LabLanguagesText();

/// The file holding the translation into `lang`: "lab.zh-CN.toml".
std::string LabTranslationFileName(std::string_view lang);

/// The lab language a locale asks for: "zh-CN" for any "zh..." locale
/// ("zh_CN.UTF-8", "zh_TW", "zh"), "en" for anything else ("C", "", "en_US").
std::string LabLanguageFromLocale(std::string_view locale);

/// The lab language of the environment: the first set of LC_ALL,
/// LC_MESSAGES and LANG (POSIX order), through LabLanguageFromLocale.
std::string LabLanguageFromEnvironment();

/// `english` (read from lab.toml) with its text from the translation into
/// `lang` in its folder. Every problem of the translation is appended to
/// `problems` (a missing file is one); text that could not be read stays
/// English.
Lab TranslateLab(const Lab& english, std::string_view lang, std::vector<LabProblem>* problems);

/// Gives each lab's choice questions the options of the others as
/// `other_options` (the labs are one lab in several languages: the same
/// steps and questions in the same order), so an answer in any language
/// grades the same. Labs whose structure differs are skipped.
void ShareLabOptions(const std::vector<Lab*>& languages);

/// TranslateLab from the translation's text, as if read from `path`
/// (text_file paths are read relative to the English lab's folder).
Lab TranslateLabText(const Lab& english, std::string_view lang, std::string_view text,
                     const std::string& path, std::vector<LabProblem>* problems);

}  // namespace shardlab
