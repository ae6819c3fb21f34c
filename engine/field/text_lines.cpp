#include "engine/field/text_lines.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace shardlab {

std::vector<std::string_view> SplitHeadLines(std::string_view head) {
  std::vector<std::string_view> lines;
  std::size_t begin = 0;
  while (begin < head.size()) {
    std::size_t end = head.find('\n', begin);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    begin = end + 1;
  }
  return lines;
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    if (j > i) words.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

std::string StripTerminalEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < text.size() && !((text[j] >= 'A' && text[j] <= 'Z') || (text[j] >= 'a' && text[j] <= 'z'))) ++j;
      i = j;
      continue;
    }
    out += text[i];
  }
  return out;
}

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

/// Length of a "[digits]" or "[digits,digits]" tag at the start of `s`, else 0.
std::size_t BracketTag(std::string_view s) {
  if (s.empty() || s[0] != '[') return 0;
  std::size_t i = 1;
  bool digits = false;
  while (i < s.size() && (IsDigit(s[i]) || s[i] == ',')) {
    digits = digits || IsDigit(s[i]);
    ++i;
  }
  return digits && i < s.size() && s[i] == ']' ? i + 1 : 0;
}

}  // namespace

std::string_view StripLaunchPrefix(std::string_view line) {
  for (int guard = 0; guard < 8; ++guard) {
    std::size_t skip = 0;
    if (const std::size_t tag = BracketTag(line); tag > 0) {
      skip = tag;
      for (const std::string_view stream : {"<stdout>:", "<stderr>:"}) {
        if (line.substr(skip, stream.size()) == stream) skip += stream.size();
      }
      // "[0] NCCL INFO" from NCCL itself keeps its [dev]: only strip a tag
      // that is not NCCL's own (NCCL's is followed by " NCCL ").
      if (line.substr(skip).rfind(" NCCL ", 0) == 0) return line;
      if (skip < line.size() && line[skip] == ' ') ++skip;
    } else if (line.rfind("(", 0) == 0) {  // Ray: "(RayWorkerWrapper pid=927) "
      const std::size_t close = line.find(") ");
      if (close == std::string_view::npos || line.substr(0, close).find(" pid=") == std::string_view::npos) break;
      skip = close + 2;
    }
    if (skip == 0) break;
    line.remove_prefix(skip);
  }
  return line;
}

std::optional<NcclLine> SplitNcclLine(std::string_view line) {
  line = StripLaunchPrefix(line);
  std::size_t at = std::string_view::npos;
  std::string level;
  for (const char* l : {"INFO", "WARN", "TRACE"}) {
    const std::string marker = std::string("NCCL ") + l;
    for (std::size_t p = line.find(marker); p != std::string_view::npos; p = line.find(marker, p + 1)) {
      const std::size_t end = p + marker.size();
      if ((p == 0 || line[p - 1] == ' ') && (end == line.size() || line[end] == ' ')) {
        if (p < at) {
          at = p;
          level = l;
        }
        break;
      }
    }
  }
  if (at == std::string_view::npos) return std::nullopt;
  NcclLine out;
  out.level = level;
  std::string_view message = line.substr(at + 5 + level.size());
  if (!message.empty() && message[0] == ' ') message.remove_prefix(1);
  out.message = message;
  // The prefix: "host:pid:tid [dev] " (NCCL's), perhaps after "IP: " or other text.
  std::string_view prefix = line.substr(0, at);
  while (!prefix.empty() && prefix.back() == ' ') prefix.remove_suffix(1);
  if (!prefix.empty() && prefix.back() == ']') {
    const std::size_t open = prefix.rfind('[');
    if (open != std::string_view::npos) {
      if (const auto dev = ParseInt(prefix.substr(open + 1, prefix.size() - open - 2))) out.cuda_dev = static_cast<int>(*dev);
      prefix = prefix.substr(0, open);
      while (!prefix.empty() && prefix.back() == ' ') prefix.remove_suffix(1);
    }
  }
  const std::size_t space = prefix.rfind(' ');
  std::string_view hpt = space == std::string_view::npos ? prefix : prefix.substr(space + 1);
  // host:pid:tid, the host itself may hold no colon.
  const std::size_t c2 = hpt.rfind(':');
  const std::size_t c1 = c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : hpt.rfind(':', c2 - 1);
  if (c1 != std::string_view::npos && c1 > 0) {
    const auto pid = ParseInt(hpt.substr(c1 + 1, c2 - c1 - 1));
    const auto tid = ParseInt(hpt.substr(c2 + 1));
    if (pid && tid) {
      out.host = std::string(hpt.substr(0, c1));
      out.pid = static_cast<long>(*pid);
    }
  }
  return out;
}

std::optional<std::int64_t> ParseInt(std::string_view text) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseNumber(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace shardlab
