// The grader's own words, in each language a lab's text comes in.
//
//   lab.zh-CN.toml ──► prompts, feedback, explanations   (lab_translation.h)
//   LabWordsFor("zh-CN") ──► "期望：", "正确", "偏高 12%：你的答案是 …"
//                             the words the grader puts around them
//
// A report (`lab run`), a gradebook and the app's lab panel in Chinese are
// then Chinese throughout, not Chinese questions between English labels.
// The words change; the numbers, the verdicts and the points never do (the
// JSON keeps the English verdict names, which programs read).
//
// Templates name their blanks in braces: "Correct: {value} (expected
// {expected})." Fill() replaces each {name} with its value.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace shardlab {

enum class LabVerdict;

struct LabWords {
  // One answer's feedback (CheckLabAnswer).
  std::string correct_number;   // {value} {expected}
  std::string correct_option;   // {expected}
  std::string missing_number;   // {expected}
  std::string missing_option;   // {expected}
  std::string not_a_number;     // {given} {in_units} {expected}
  std::string in_units;         // {units}: the {in_units} of not_a_number
  std::string percent_high;     // {percent}
  std::string percent_low;      // {percent}
  std::string too_high;
  std::string too_low;
  std::string factor;           // {factor}: appended to the four above
  std::string wrong_number;     // {how} {value} {expected}
  std::string not_an_option;    // {given} {options} {expected}
  std::string wrong_option;     // {given} {expected}
  std::string list_separator;   // between options in {options}

  // The app's lab panel, which tells the direction of a wrong number but
  // not the expected value (app/gui/model/lab_panel_model.cpp).
  std::string panel_type_first;
  std::string panel_not_a_number;        // {given}
  std::string panel_not_a_number_units;  // {given} {units}
  std::string panel_not_an_option;       // {given}
  std::string panel_too_high;
  std::string panel_too_low;
  std::string panel_above;               // {percent}
  std::string panel_below;               // {percent}
  std::string panel_within;              // {percent}: appended inside the brackets
  std::string panel_open;                // the brackets around the two above
  std::string panel_close;
  std::string panel_end;                 // the full stop without the brackets
  std::string panel_not_option_given;    // {given}

  // The report (FormatLabReport).
  std::string report_title;     // {id} {title}
  std::string student;          // {student}
  std::string runs;             // heading of the runs' summaries
  std::string question_line;    // {n} {id} {step} {verdict} {points} {max}
  std::string expected;         // label, padded to the width of `given`
  std::string given;
  std::string none;             // nothing given
  std::string unknown_answer;   // {id}
  std::string score;            // {score} {max}
  std::string verdicts[4];      // correct, wrong, missing, invalid (LabVerdict order)

  // `lab key`'s first line, a TOML comment.
  std::string key_header;       // {id} {title}

  // The class gradebook (FormatGradebook).
  std::string gradebook_title;  // {id} {title}
  std::string graded_one;       // {n}
  std::string graded_many;      // {n}
  std::string failed_one;       // {n}: appended to the line above
  std::string failed_many;      // {n}
  std::string student_column;
  std::string score_column;
  std::string not_graded;       // {error}
  std::string share_heading;
  std::string share_count;      // {correct} {graded}
  std::string most_missed;      // heading, with its space; the ids follow
  std::string most_missed_none;
  std::string id_separator;     // between ids after most_missed
};

/// The words of `lang` ("en", "zh-CN"); English for a language without its own.
const LabWords& LabWordsFor(const std::string& lang);

/// The languages with words of their own.
std::vector<std::string> LabWordsLanguages();

/// `text` with every {name} of `values` replaced by its value.
std::string Fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values);

/// Columns a terminal gives `utf8`: two for a CJK (wide) character, one
/// for any other character, so that Chinese tables line up.
std::size_t DisplayWidth(const std::string& utf8);

/// `text` followed by spaces up to `width` columns (DisplayWidth).
std::string PadTo(const std::string& text, std::size_t width);

/// The verdict in `words` ("correct", "正确").
const std::string& VerdictWord(const LabWords& words, LabVerdict verdict);

}  // namespace shardlab
