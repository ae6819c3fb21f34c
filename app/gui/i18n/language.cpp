#include "app/gui/i18n/language.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace shardlab::gui {
namespace {

std::atomic<Language> g_language{Language::kEnglish};

/// English -> Chinese, built once from the table.
const std::unordered_map<std::string_view, const char*>& ChineseIndex() {
  static const auto* index = [] {
    auto* map = new std::unordered_map<std::string_view, const char*>();
    for (const PhraseEntry& e : ChinesePhrases()) map->emplace(e.english, e.chinese);
    return map;
  }();
  return *index;
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithZh(const char* locale) {
  return locale != nullptr && Lower(locale[0]) == 'z' && Lower(locale[1]) == 'h' &&
         (locale[2] == '\0' || locale[2] == '_' || locale[2] == '-' || locale[2] == '.' || locale[2] == '@');
}

}  // namespace

const char* LanguageCode(Language language) { return language == Language::kChinese ? "zh-CN" : "en"; }

const char* LanguageName(Language language) {
  return language == Language::kChinese ? "\xE7\xAE\x80\xE4\xBD\x93\xE4\xB8\xAD\xE6\x96\x87" : "English";  // 简体中文
}

std::optional<Language> ParseLanguage(std::string_view text) {
  std::string lower;
  for (char c : text) lower += c == '_' ? '-' : Lower(c);
  if (lower == "en" || lower == "en-us" || lower == "en-gb") return Language::kEnglish;
  if (lower == "zh" || lower == "zh-cn" || lower == "zh-hans" || lower == "zh-hans-cn") return Language::kChinese;
  return std::nullopt;
}

Language LanguageFromLocale(const char* lc_all, const char* lc_messages, const char* lang) {
  for (const char* value : {lc_all, lc_messages, lang}) {
    if (value == nullptr || value[0] == '\0') continue;
    return StartsWithZh(value) ? Language::kChinese : Language::kEnglish;
  }
  return Language::kEnglish;
}

Language LanguageFromEnvironment() {
  return LanguageFromLocale(std::getenv("LC_ALL"), std::getenv("LC_MESSAGES"), std::getenv("LANG"));
}

Language CurrentLanguage() { return g_language.load(std::memory_order_relaxed); }

void SetLanguage(Language language) { g_language.store(language, std::memory_order_relaxed); }

const char* Tr(const char* english) {
  if (CurrentLanguage() != Language::kChinese) return english;
  const auto& index = ChineseIndex();
  const auto it = index.find(english);
  return it != index.end() ? it->second : english;
}

std::string Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

}  // namespace shardlab::gui
