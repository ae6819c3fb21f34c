#include "engine/lab/lab_words.h"

#include <algorithm>

#include "engine/lab/lab_grader.h"

namespace shardlab {

namespace {

LabWords English() {
  LabWords w;
  w.correct_number = "Correct: {value} (expected {expected}).";
  w.correct_option = "Correct: {expected}.";
  w.missing_number = "Not answered; expected {expected}.";
  w.missing_option = "Not answered; the answer is '{expected}'.";
  w.not_a_number = "'{given}' is not a number{in_units}; expected {expected}.";
  w.in_units = " (in {units})";
  w.percent_high = "{percent}% high";
  w.percent_low = "{percent}% low";
  w.too_high = "too high";
  w.too_low = "too low";
  w.factor = " (a factor of {factor})";
  w.wrong_number = "{how}: you gave {value}, expected {expected}.";
  w.not_an_option = "'{given}' is not one of the options ({options}); the answer is '{expected}'.";
  w.wrong_option = "You chose '{given}'; the answer is '{expected}'.";
  w.list_separator = ", ";

  w.panel_type_first = "Type an answer first.";
  w.panel_not_a_number = "'{given}' is not a number.";
  w.panel_not_a_number_units = "'{given}' is not a number (the units, {units}, are already given).";
  w.panel_not_an_option = "'{given}' is not one of the options.";
  w.panel_too_high = "Too high";
  w.panel_too_low = "Too low";
  w.panel_above = "{percent}% above the expected value";
  w.panel_below = "{percent}% below the expected value";
  w.panel_within = "; within {percent}% counts";
  w.panel_open = " (";
  w.panel_close = ").";
  w.panel_end = ".";
  w.panel_not_option_given = "Not '{given}'.";

  w.report_title = "Lab {id}: {title}";
  w.student = "Student: {student}";
  w.runs = "Runs (simulator):";
  w.question_line = "[{n}] {id} (step {step})  {verdict}  {points}/{max}";
  w.expected = "expected: ";
  w.given = "given:    ";
  w.none = "(none)";
  w.unknown_answer = "Unknown answer '{id}': no question of this lab has that id (not graded)";
  w.score = "Score: {score} / {max}";
  w.verdicts[0] = "correct";
  w.verdicts[1] = "wrong";
  w.verdicts[2] = "missing";
  w.verdicts[3] = "invalid";

  w.key_header = "# Answer key for {id} ({title}), from fresh simulator runs";

  w.gradebook_title = "Gradebook for {id}: {title}";
  w.graded_one = "{n} student graded";
  w.graded_many = "{n} students graded";
  w.failed_one = ", {n} answers file failed";
  w.failed_many = ", {n} answers files failed";
  w.student_column = "student";
  w.score_column = "score";
  w.not_graded = "not graded: {error}";
  w.share_heading = "Share correct per question:";
  w.share_count = "({correct} of {graded})";
  w.most_missed = "Most students miss: ";  // the ids follow
  w.most_missed_none = "none (every question: at least half right)";
  w.id_separator = ", ";
  return w;
}

// Plain teaching Chinese: the words a teacher writes beside a student's answer.
LabWords Chinese() {
  LabWords w;
  w.correct_number = "正确：{value}（期望 {expected}）。";
  w.correct_option = "正确：{expected}。";
  w.missing_number = "未作答；期望 {expected}。";
  w.missing_option = "未作答；答案是“{expected}”。";
  w.not_a_number = "“{given}”不是一个数{in_units}；期望 {expected}。";
  w.in_units = "（单位：{units}）";
  w.percent_high = "偏高 {percent}%";
  w.percent_low = "偏低 {percent}%";
  w.too_high = "偏高";
  w.too_low = "偏低";
  w.factor = "（差了 {factor} 倍）";
  w.wrong_number = "{how}：你的答案是 {value}，期望 {expected}。";
  w.not_an_option = "“{given}”不是选项之一（{options}）；答案是“{expected}”。";
  w.wrong_option = "你选了“{given}”；答案是“{expected}”。";
  w.list_separator = "、";

  w.panel_type_first = "请先填写答案。";
  w.panel_not_a_number = "“{given}”不是一个数。";
  w.panel_not_a_number_units = "“{given}”不是一个数（单位 {units} 已经给出，只填数字）。";
  w.panel_not_an_option = "“{given}”不是选项之一。";
  w.panel_too_high = "偏高";
  w.panel_too_low = "偏低";
  w.panel_above = "比期望值高 {percent}%";
  w.panel_below = "比期望值低 {percent}%";
  w.panel_within = "；误差在 {percent}% 以内算对";
  w.panel_open = "（";
  w.panel_close = "）。";
  w.panel_end = "。";
  w.panel_not_option_given = "不是“{given}”。";

  w.report_title = "实验 {id}：{title}";
  w.student = "学生：{student}";
  w.runs = "运行（模拟器）：";
  w.question_line = "[{n}] {id}（步骤 {step}）  {verdict}  {points}/{max}";
  w.expected = "期望：";
  w.given = "作答：";
  w.none = "（未作答）";
  w.unknown_answer = "未知的答案“{id}”：本实验没有这个编号的问题（不计分）";
  w.score = "得分：{score} / {max}";
  w.verdicts[0] = "正确";
  w.verdicts[1] = "错误";
  w.verdicts[2] = "未作答";
  w.verdicts[3] = "无效";

  w.key_header = "# {id}（{title}）的标准答案，由模拟器新跑一遍得出";

  w.gradebook_title = "成绩册 {id}：{title}";
  w.graded_one = "已评分 {n} 名学生";
  w.graded_many = "已评分 {n} 名学生";
  w.failed_one = "，{n} 个答案文件无法评分";
  w.failed_many = "，{n} 个答案文件无法评分";
  w.student_column = "学生";
  w.score_column = "得分";
  w.not_graded = "未评分：{error}";
  w.share_heading = "每道题的正确率：";
  w.share_count = "（{graded} 人中 {correct} 人答对）";
  w.most_missed = "多数学生答错的题：";
  w.most_missed_none = "没有（每道题都至少有一半人答对）";
  w.id_separator = "、";
  return w;
}

}  // namespace

const LabWords& LabWordsFor(const std::string& lang) {
  static const LabWords en = English();
  static const LabWords zh = Chinese();
  return lang == "zh-CN" ? zh : en;
}

std::vector<std::string> LabWordsLanguages() { return {"en", "zh-CN"}; }

std::string Fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  // One pass over the template: a value (a student's answer may hold braces)
  // is never read as a blank.
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      const std::string name = text.substr(i + 1, close - i - 1);
      const auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
      if (it != values.end()) {
        out += it->second;
        i = close + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

std::size_t DisplayWidth(const std::string& utf8) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < utf8.size();) {
    const auto lead = static_cast<unsigned char>(utf8[i]);
    const int length = lead < 0x80 ? 1 : lead >> 5 == 0x6 ? 2 : lead >> 4 == 0xE ? 3 : lead >> 3 == 0x1E ? 4 : 1;
    char32_t code = length == 1 ? lead : lead & (0x7F >> length);
    for (int k = 1; k < length && i + static_cast<std::size_t>(k) < utf8.size(); ++k) {
      code = (code << 6) | (static_cast<unsigned char>(utf8[i + static_cast<std::size_t>(k)]) & 0x3F);
    }
    // East Asian wide ranges: Hangul Jamo, CJK radicals to Yi, Hangul
    // syllables, CJK compatibility, vertical and full-width forms, and the
    // supplementary ideographic planes.
    const bool wide = (code >= 0x1100 && code <= 0x115F) || (code >= 0x2E80 && code <= 0xA4CF) ||
                      (code >= 0xAC00 && code <= 0xD7A3) || (code >= 0xF900 && code <= 0xFAFF) ||
                      (code >= 0xFE30 && code <= 0xFE4F) || (code >= 0xFF00 && code <= 0xFF60) ||
                      (code >= 0xFFE0 && code <= 0xFFE6) || (code >= 0x20000 && code <= 0x3FFFD);
    width += wide ? 2 : 1;
    i += static_cast<std::size_t>(length);
  }
  return width;
}

std::string PadTo(const std::string& text, std::size_t width) {
  const std::size_t used = DisplayWidth(text);
  return used >= width ? text : text + std::string(width - used, ' ');
}

const std::string& VerdictWord(const LabWords& words, LabVerdict verdict) {
  return words.verdicts[static_cast<int>(verdict)];
}

}  // namespace shardlab
