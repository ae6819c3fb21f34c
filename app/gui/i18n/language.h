// The app's language: English (the source text) or Simplified Chinese,
// chosen by --lang, by the locale, or at run time (View > Language).
//
//   code:  Tr("Play")          ──► "Play"  (en)
//                              ──► "播放"   (zh-CN, from ChineseTable())
//   spec:  SpecLabel("pipeline", param) ──► "Microbatches" / "微批次数"
//
// The key of a phrase is its English text, written once at the call site as
// a string literal, so tests/gui_model/i18n_test.cpp can read every Tr("...")
// in app/gui and check it against the table both ways (a phrase with no
// Chinese, a Chinese entry no code uses, a printf format whose conversions
// differ). Scenario titles and parameters are the engine's (English) specs:
// the app translates them by key ("pipeline.microbatches"), in spec_text.cpp.
// The engine and the CLI stay English; the lab's own text comes from its
// lab.zh-CN.toml through the lab loader.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace shardlab::gui {

enum class Language { kEnglish, kChinese };

/// "en" or "zh-CN": the --lang value, and the lab loader's language.
const char* LanguageCode(Language language);

/// "English" / "简体中文": how View > Language lists it (each in itself).
const char* LanguageName(Language language);

/// "en" / "zh-CN" (also "zh", "zh_CN", "zh-Hans", any case); nullopt for others.
std::optional<Language> ParseLanguage(std::string_view text);

/// The POSIX locale's language: the first set of LC_ALL, LC_MESSAGES, LANG
/// (null or "" means unset); one starting with "zh" is Chinese, the rest
/// (and none) English.
Language LanguageFromLocale(const char* lc_all, const char* lc_messages, const char* lang);
/// The same, from this process's environment.
Language LanguageFromEnvironment();

/// The language Tr answers in; English until set.
Language CurrentLanguage();
void SetLanguage(Language language);

/// `english` in the current language: the table's Chinese for it, or
/// `english` itself (English, or a phrase the table lacks — the test sees
/// to it that none does). Call it with a string literal, so the test finds
/// it; the pointer lives as long as the program.
const char* Tr(const char* english);

/// printf into a string: `Format(Tr("Step %d of %d"), k, n)`.
std::string Format(const char* format, ...);

/// One phrase of the table: English as written in the code, and Chinese.
struct PhraseEntry {
  const char* english;
  const char* chinese;
};

/// Every phrase the app translates (zh_cn_phrases.cpp), in no order.
std::span<const PhraseEntry> ChinesePhrases();

}  // namespace shardlab::gui
