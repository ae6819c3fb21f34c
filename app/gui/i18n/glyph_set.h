// The characters the app's Chinese needs from a CJK font, so ImGui's atlas
// bakes only those (about a thousand of the font's 20,000+) and start-up
// stays fast:
//
//   ChinesePhrases() + ChineseSpecTexts() + LanguageName(kChinese)
//   + every lab.toml, lab.zh-CN.toml and *.txt of the lab folders   ──► code points
//     (ASCII left out: the Latin font has it)                          ──► glyph ranges
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::gui {

/// Adds the code points of UTF-8 `text` above ASCII to `out`; a malformed
/// byte adds U+FFFD, as a renderer would draw it.
void AddCodepoints(std::string_view text, std::set<char32_t>* out);

/// The texts of the labs under `labs_dir` (each folder's lab.toml,
/// lab.zh-CN.toml and *.txt) and of the lab folder `lab_path` (may be ""),
/// read whole; a folder or file that cannot be read is skipped.
std::vector<std::string> LabTexts(const std::string& labs_dir, const std::string& lab_path);

/// The code points above ASCII of the app's Chinese tables and `extra`.
std::set<char32_t> ChineseCodepoints(const std::vector<std::string>& extra);

/// ImGui's glyph range list (pairs, 0-terminated) of `codepoints` within
/// the 16-bit range ImGui is built for; runs of neighbours become one pair.
std::vector<std::uint16_t> GlyphRangesOf(const std::set<char32_t>& codepoints);

}  // namespace shardlab::gui
