#include "doc_examples.h"

#include <cctype>
#include <map>
#include <regex>
#include <stdexcept>

namespace shardlab::docs {
namespace {

const char* const kSkipMarker = "<!-- doc-test: skip ";
// Why a block may stay unchecked: it needs something CI's machine lacks
// (a GPU, MPI across processes, a display, other hosts), or it takes
// minutes. Anything else is a typo and fails.
const char* const kSkipReasons[] = {"gpu", "mpi", "display", "host", "long"};

std::string TrimRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string TrimLeft(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The fence a line opens or closes (``` or ~~~, three or more), else "".
std::string FenceOf(const std::string& line) {
  const std::string t = TrimLeft(line);
  if (t.size() < 3 || (t[0] != '`' && t[0] != '~')) return "";
  size_t n = 0;
  while (n < t.size() && t[n] == t[0]) ++n;
  return n >= 3 ? t.substr(0, n) : "";
}

// `$ cmd  # exit 2` -> 2; -1 when the command carries no such comment.
int TrailingExit(const std::string& command) {
  static const std::regex kExit(R"(#\s*exits?\s+(\d+)\s*$)");
  std::smatch m;
  if (std::regex_search(command, m, kExit)) return std::stoi(m[1].str());
  return -1;
}

std::string EscapeRegex(const std::string& literal) {
  static const std::string kSpecial = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : literal) {
    if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// An expected line as a regular expression: `...` any text, `~123.4` any
// number, runs of spaces any run of spaces; the rest literal.
std::regex LinePattern(const std::string& expected) {
  std::string pattern;
  size_t i = 0;
  std::string literal;
  auto flush = [&] {
    pattern += EscapeRegex(literal);
    literal.clear();
  };
  // Exactly three dots: a run of four or more is text (the pipeline chart's
  // idle slots), so it stays literal.
  auto elision_at = [&](size_t k) {
    return expected.compare(k, 3, "...") == 0 && (k == 0 || expected[k - 1] != '.') &&
           (k + 3 == expected.size() || expected[k + 3] != '.');
  };
  while (i < expected.size()) {
    if (expected[i] == '.' && !elision_at(i)) {
      while (i < expected.size() && expected[i] == '.') literal += expected[i++];
    } else if (elision_at(i)) {
      flush();
      pattern += ".*";
      i += 3;
    } else if (expected[i] == '~' && i + 1 < expected.size() &&
               (std::isdigit(static_cast<unsigned char>(expected[i + 1])) != 0)) {
      flush();
      pattern += R"([-+]?[0-9][0-9.,]*(?:[eE][-+]?[0-9]+)?)";
      ++i;
      while (i < expected.size() &&
             (std::isdigit(static_cast<unsigned char>(expected[i])) != 0 || expected[i] == '.' ||
              expected[i] == ',')) {
        ++i;
      }
    } else if (expected[i] == ' ') {
      flush();
      while (i < expected.size() && expected[i] == ' ') ++i;
      if (elision_at(i)) {
        // "ring ..." matches "ring", "ring all-reduce", not "ringer".
        pattern += "(?: +.*)?";
        i += 3;
      } else {
        pattern += " +";
      }
    } else {
      literal += expected[i++];
    }
  }
  flush();
  return std::regex(pattern);
}

std::vector<std::string> Normalised(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const std::string& l : lines) out.push_back(TrimRight(l));
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

// Longest prefix of `expected` that some placement of the elisions matches
// against a prefix of `actual`; used to point at the failing line.
class Matcher {
 public:
  Matcher(const std::vector<std::string>& expected, const std::vector<std::string>& actual)
      : exp_(Normalised(expected)), act_(Normalised(actual)) {
    for (const std::string& e : exp_) patterns_.push_back(e == "..." ? std::regex() : LinePattern(e));
  }

  bool Matches() { return Match(0, 0); }

  // The furthest expected line reached by any partial match, when none is whole.
  int Furthest() {
    Matches();
    return furthest_;
  }

 private:
  bool Match(size_t i, size_t j) {
    if (static_cast<int>(i) > furthest_) furthest_ = static_cast<int>(i);
    const auto key = std::make_pair(i, j);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    bool ok = false;
    if (i == exp_.size()) {
      ok = j == act_.size();
    } else if (exp_[i] == "...") {
      ok = Match(i + 1, j) || (j < act_.size() && Match(i, j + 1));
    } else {
      ok = j < act_.size() && std::regex_match(act_[j], patterns_[i]) && Match(i + 1, j + 1);
    }
    memo_[key] = ok;
    return ok;
  }

  std::vector<std::string> exp_;
  std::vector<std::string> act_;
  std::vector<std::regex> patterns_;
  std::map<std::pair<size_t, size_t>, bool> memo_;
  int furthest_ = 0;
};

}  // namespace

bool DocBlock::IsShell() const {
  return info == "sh" || info == "bash" || info == "shell" || info == "console";
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<DocBlock> ParseDocBlocks(const std::string& text, const std::string& file) {
  const std::vector<std::string> lines = SplitLines(text);
  std::vector<DocBlock> blocks;
  std::string previous;  // the last non-blank line before the current one
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string fence = FenceOf(lines[i]);
    if (fence.empty()) {
      if (!TrimRight(lines[i]).empty()) previous = TrimRight(TrimLeft(lines[i]));
      continue;
    }
    DocBlock block;
    block.line = static_cast<int>(i) + 1;
    block.info = TrimRight(TrimLeft(lines[i]).substr(fence.size()));
    if (const size_t space = block.info.find(' '); space != std::string::npos) {
      block.info.resize(space);
    }
    if (StartsWith(previous, kSkipMarker)) {
      std::string reason = previous.substr(std::string(kSkipMarker).size());
      if (const size_t end = reason.find("-->"); end != std::string::npos) reason.resize(end);
      reason = TrimRight(reason);
      const std::string word = reason.substr(0, reason.find_first_of(" :"));
      bool known = false;
      for (const char* r : kSkipReasons) known = known || word == r;
      if (!known) {
        throw std::runtime_error(file + ":" + std::to_string(block.line - 1) +
                                 ": doc-test skip reason '" + word +
                                 "' is not one of gpu, mpi, display, host, long");
      }
      block.skip_reason = reason;
    }
    // The block's body, up to a closing fence of the same character and at
    // least the same length.
    size_t j = i + 1;
    std::vector<std::string> body;
    for (; j < lines.size(); ++j) {
      const std::string close = FenceOf(lines[j]);
      if (!close.empty() && close[0] == fence[0] && close.size() >= fence.size() &&
          TrimRight(TrimLeft(lines[j])) == close) {
        break;
      }
      body.push_back(lines[j]);
    }
    if (j == lines.size()) {
      throw std::runtime_error(file + ":" + std::to_string(block.line) + ": unclosed " + fence +
                               " block");
    }
    DocCommand* current = nullptr;
    bool continuing = false;
    for (size_t k = 0; k < body.size(); ++k) {
      const std::string& l = body[k];
      if (continuing) {
        current->command += "\n" + l;
        continuing = !TrimRight(l).empty() && TrimRight(l).back() == '\\';
        continue;
      }
      if (StartsWith(l, "$ ")) {
        block.commands.push_back(DocCommand{});
        current = &block.commands.back();
        current->line = block.line + 1 + static_cast<int>(k);
        current->command = l.substr(2);
        continuing = !TrimRight(l).empty() && TrimRight(l).back() == '\\';
        continue;
      }
      if (current != nullptr) current->expected.push_back(l);
    }
    for (DocCommand& c : block.commands) {
      const int exit = TrailingExit(c.command);
      c.expected_exit = exit < 0 ? 0 : exit;
    }
    blocks.push_back(std::move(block));
    i = j;
    previous.clear();
  }
  return blocks;
}

bool OutputMatches(const std::vector<std::string>& expected,
                   const std::vector<std::string>& actual) {
  return Matcher(expected, actual).Matches();
}

int FirstMismatch(const std::vector<std::string>& expected, const std::vector<std::string>& actual) {
  Matcher m(expected, actual);
  if (m.Matches()) return -1;
  return m.Furthest();
}

std::vector<DocLink> FindLinks(const std::string& text) {
  std::vector<DocLink> links;
  const std::vector<std::string> lines = SplitLines(text);
  std::string fence;
  static const std::regex kLink(R"(!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\))");
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string f = FenceOf(lines[i]);
    if (!fence.empty()) {
      if (!f.empty() && f[0] == fence[0] && f.size() >= fence.size()) fence.clear();
      continue;
    }
    if (!f.empty()) {
      fence = f;
      continue;
    }
    // Inline code spans hold examples, not links: blank them out.
    std::string line = lines[i];
    for (size_t p = line.find('`'); p != std::string::npos; p = line.find('`', p)) {
      const size_t q = line.find('`', p + 1);
      if (q == std::string::npos) break;
      for (size_t k = p; k <= q; ++k) line[k] = ' ';
      p = q + 1;
    }
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kLink);
         it != std::sregex_iterator(); ++it) {
      links.push_back(DocLink{static_cast<int>(i) + 1, (*it)[1].str()});
    }
  }
  return links;
}

std::vector<std::string> HeadingAnchors(const std::string& text) {
  std::vector<std::string> anchors;
  std::map<std::string, int> seen;
  std::string fence;
  static const std::regex kLinkText(R"(\[([^\]]*)\]\([^)]*\))");
  for (const std::string& raw : SplitLines(text)) {
    const std::string f = FenceOf(raw);
    if (!fence.empty()) {
      if (!f.empty() && f[0] == fence[0] && f.size() >= fence.size()) fence.clear();
      continue;
    }
    if (!f.empty()) {
      fence = f;
      continue;
    }
    if (!StartsWith(raw, "#")) continue;
    size_t level = 0;
    while (level < raw.size() && raw[level] == '#') ++level;
    if (level > 6 || level >= raw.size() || raw[level] != ' ') continue;
    const std::string title = std::regex_replace(TrimRight(raw.substr(level + 1)), kLinkText, "$1");
    std::string anchor;
    for (unsigned char c : title) {
      if (c >= 0x80) {
        anchor += static_cast<char>(c);  // GitHub keeps letters outside ASCII
      } else if (std::isalnum(c) != 0 || c == '-' || c == '_') {
        anchor += static_cast<char>(std::tolower(c));
      } else if (c == ' ') {
        anchor += '-';
      }
    }
    const int n = seen[anchor]++;
    anchors.push_back(n == 0 ? anchor : anchor + "-" + std::to_string(n));
  }
  return anchors;
}

}  // namespace shardlab::docs
