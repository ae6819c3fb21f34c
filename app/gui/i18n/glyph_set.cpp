#include "app/gui/i18n/glyph_set.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/gui/i18n/language.h"
#include "app/gui/i18n/spec_text.h"

namespace shardlab::gui {
namespace {

namespace fs = std::filesystem;

/// A lab text larger than this is not a lab text: skipped.
constexpr std::uintmax_t kMaxLabTextBytes = 4u << 20;

void ReadInto(const fs::path& path, std::vector<std::string>* out) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > kMaxLabTextBytes || ec) return;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (in) out->push_back(text.str());
}

void ReadLabFolder(const fs::path& folder, std::vector<std::string>* out) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (name == "lab.toml" || name == "lab.zh-CN.toml" || path.extension() == ".txt") ReadInto(path, out);
  }
}

}  // namespace

void AddCodepoints(std::string_view text, std::set<char32_t>* out) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    const int length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    char32_t cp = length == 4 ? c & 0x07 : length == 3 ? c & 0x0F : c & 0x1F;
    bool good = length > 0 && i + length <= text.size();
    for (int k = 1; good && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      good = (next & 0xC0) == 0x80;
      cp = (cp << 6) | (next & 0x3F);
    }
    out->insert(good ? cp : U'\uFFFD');
    i += good ? length : 1;
  }
}

std::vector<std::string> LabTexts(const std::string& labs_dir, const std::string& lab_path) {
  std::vector<std::string> texts;
  std::error_code ec;
  if (!labs_dir.empty()) {
    for (fs::directory_iterator it(labs_dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec)) ReadLabFolder(it->path(), &texts);
    }
  }
  if (!lab_path.empty()) {
    fs::path folder(lab_path);
    if (folder.filename() == "lab.toml") folder = folder.parent_path();
    ReadLabFolder(folder, &texts);
  }
  return texts;
}

std::set<char32_t> ChineseCodepoints(const std::vector<std::string>& extra) {
  std::set<char32_t> points;
  for (const PhraseEntry& e : ChinesePhrases()) AddCodepoints(e.chinese, &points);
  for (const SpecTextEntry& e : ChineseSpecTexts()) {
    AddCodepoints(e.title, &points);
    AddCodepoints(e.help, &points);
  }
  AddCodepoints(LanguageName(Language::kChinese), &points);
  for (const std::string& text : extra) AddCodepoints(text, &points);
  return points;
}

std::vector<std::uint16_t> GlyphRangesOf(const std::set<char32_t>& codepoints) {
  std::vector<std::uint16_t> ranges;
  for (const char32_t cp : codepoints) {
    if (cp == 0 || cp > 0xFFFF) continue;
    const auto c = static_cast<std::uint16_t>(cp);
    if (!ranges.empty() && ranges.back() + 1u == c) {
      ranges.back() = c;
    } else {
      ranges.push_back(c);
      ranges.push_back(c);
    }
  }
  ranges.push_back(0);
  return ranges;
}

}  // namespace shardlab::gui
