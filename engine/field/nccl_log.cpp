#include "engine/field/nccl_log.h"

#include <algorithm>
#include <set>

#include "engine/core/error.h"
#include "engine/field/text_lines.h"

namespace shardlab {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<int> Int(std::string_view s) {
  const auto v = ParseInt(s);
  if (!v || *v < -1 || *v > (1 << 24)) return std::nullopt;
  return static_cast<int>(*v);
}

/// "4[4]" or "4[4000]" or "4": the rank before any bracket.
std::optional<int> RankOf(std::string_view s) {
  const std::size_t bracket = s.find('[');
  return Int(s.substr(0, bracket));
}

/// "P2P/IPC", "NET/IB/0/GDRDMA" -> "NET/IB/GDRDMA", "NET/IB/3(0)/GDRDMA" -> "NET/IB/GDRDMA".
std::string TransportKind(std::string via) {
  if (const std::size_t comm = via.find(" comm "); comm != std::string::npos) via.resize(comm);
  std::string kind;
  std::size_t begin = 0;
  while (begin <= via.size()) {
    std::size_t end = via.find('/', begin);
    if (end == std::string::npos) end = via.size();
    const std::string part = via.substr(begin, end - begin);
    const bool number = !part.empty() && std::isdigit(static_cast<unsigned char>(part[0])) != 0 &&
                        part.find_first_not_of("0123456789()") == std::string::npos;
    if (!number && !part.empty()) kind += (kind.empty() ? "" : "/") + part;
    begin = end + 1;
  }
  return kind;
}

/// "a/b/c->r->p": children, rank, parent; nullopt when it does not read.
std::optional<NcclLogTreeNode> TreeTriple(std::string_view text) {
  const std::size_t a1 = text.find("->");
  const std::size_t a2 = a1 == std::string_view::npos ? a1 : text.find("->", a1 + 2);
  if (a2 == std::string_view::npos) return std::nullopt;
  NcclLogTreeNode node;
  const auto rank = Int(text.substr(a1 + 2, a2 - a1 - 2));
  const auto parent = Int(text.substr(a2 + 2));
  if (!rank || !parent || *rank < 0) return std::nullopt;
  node.rank = *rank;
  node.parent = *parent;
  std::string_view kids = text.substr(0, a1);
  while (!kids.empty()) {
    const std::size_t slash = kids.find('/');
    const auto child = Int(kids.substr(0, slash));
    if (!child) return std::nullopt;
    if (*child >= 0) node.children.push_back(*child);
    if (slash == std::string_view::npos) break;
    kids.remove_prefix(slash + 1);
  }
  return node;
}

struct PerRankRing {
  int prev, me, next, line;
};

class LogReader {
 public:
  explicit LogReader(const FieldFile& file) : file_(file) { log_.source = file.path; }

  NcclLog Read() {
    for (int n = 1; n <= file_.line_count(); ++n) Line(n);
    Finish();
    return std::move(log_);
  }

 private:
  std::string Where(int line) const { return file_.path + ":" + std::to_string(line) + ": "; }

  void Line(int n) {
    const std::string_view raw = file_.Line(n);
    const std::optional<NcclLine> nl = SplitNcclLine(raw);
    if (!nl) {
      const std::string_view plain = StripLaunchPrefix(raw);
      if (StartsWith(plain, "NCCL version ")) Version(plain.substr(13));
      return;
    }
    if (!nl->host.empty() && host_set_.insert(nl->host).second) log_.hosts.push_back(nl->host);
    const std::string_view m = nl->message;
    const std::vector<std::string> w = Words(m);
    if (w.empty()) return;
    if (StartsWith(m, "NCCL version ")) {
      Version(m.substr(13));
    } else if (StartsWith(m, "comm 0x")) {
      Comm(w);
    } else if ((w[0] == "Channel" || w[0] == "Ring") && m.find(" via ") != std::string_view::npos) {
      Transport(m, n);
    } else if (w[0] == "Channel" && w.size() >= 3 && w[2] == ":") {
      WholeRing(w, n, true);
    } else if (w[0] == "Ring" && w.size() >= 3 && w[2] == ":") {
      if (std::find(w.begin(), w.end(), "->") != w.end()) RankRing(w, n);
      else WholeRing(w, n, false);
    } else if (w[0] == "Trees") {
      Trees(w, n);
    } else if (w[0] == "Tree" && w.size() >= 7 && w[2] == ":") {
      RankTree(w, n);
    }
  }

  void Version(std::string_view text) {
    const std::vector<std::string> w = Words(text);
    if (!w.empty() && log_.nccl_version.empty()) log_.nccl_version = w[0];
  }

  void Comm(const std::vector<std::string>& w) {
    for (std::size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] == "nRanks" || w[i] == "nranks") {
        if (const auto v = Int(w[i + 1]); v && *v > 0) comm_sizes_.insert(*v);
      } else if (w[i] == "nNodes") {
        if (const auto v = Int(w[i + 1]); v && *v > 0) log_.nodes = std::max(log_.nodes, *v);
      }
    }
  }

  /// "Channel 00/08 : 0 7 6 ..." or "Ring 00 : 0 1 2 3".
  void WholeRing(const std::vector<std::string>& w, int n, bool channel_form) {
    const std::string& id = w[1];
    const auto channel = Int(id.substr(0, id.find('/')));
    if (!channel || (channel_form && id.find('/') == std::string::npos)) return;
    NcclLogRing ring;
    ring.channel = *channel;
    ring.line = n;
    for (std::size_t i = 3; i < w.size(); ++i) {
      const auto r = Int(w[i]);
      if (!r) return;  // another Channel line (NVLS, CollNet, ...)
      ring.ranks.push_back(*r);
    }
    if (ring.ranks.empty()) return;
    whole_rings_.push_back(ring);
  }

  /// "Ring 02 : 2 -> 0 -> 1"
  void RankRing(const std::vector<std::string>& w, int n) {
    const auto channel = Int(w[1]);
    if (!channel || w.size() < 7 || w[4] != "->" || w[6] != "->" || w.size() < 8) return;
    const auto prev = RankOf(w[3]), me = RankOf(w[5]), next = RankOf(w[7]);
    if (!prev || !me || !next) return;
    rank_rings_[*channel].push_back({*prev, *me, *next, n});
  }

  /// "Trees [0] 2/-1/-1->1->0 [1] ..."
  void Trees(const std::vector<std::string>& w, int n) {
    for (std::size_t i = 1; i + 1 < w.size(); i += 2) {
      if (w[i].size() < 3 || w[i].front() != '[' || w[i].back() != ']') break;
      const auto channel = Int(w[i].substr(1, w[i].size() - 2));
      std::optional<NcclLogTreeNode> node = TreeTriple(w[i + 1]);
      if (!channel || !node) {
        log_.warnings.push_back(Where(n) + "a Trees entry that does not read: '" + w[i] + " " + w[i + 1] + "'");
        return;
      }
      node->line = n;
      AddTreeNode(*channel, *node);
    }
  }

  /// "Tree 5 : -1 -> 3 -> 2/1/-1"
  void RankTree(const std::vector<std::string>& w, int n) {
    const auto channel = Int(w[1]);
    if (!channel || w[4] != "->" || w[6] != "->" || w.size() < 8) return;
    const auto parent = Int(w[3]);
    const auto me = Int(w[5]);
    std::optional<NcclLogTreeNode> node = TreeTriple(w[7] + "->" + w[5] + "->" + w[3]);
    if (!parent || !me || !node) return;
    node->line = n;
    AddTreeNode(*channel, *node);
  }

  void AddTreeNode(int channel, const NcclLogTreeNode& node) {
    const auto [index, added] = tree_index_.emplace(channel, log_.trees.size());
    if (added) log_.trees.push_back({channel, {}});
    NcclLogTree* tree = &log_.trees[index->second];
    // Printed again (another communicator, or a Tree line beside a Trees line): the first stays.
    if (!tree_ranks_.insert({channel, node.rank}).second) return;
    tree->nodes.push_back(node);
  }

  /// "Channel 00/0 : 4[4] -> 2[2] via P2P/IPC", "Channel 04/1 : 3[1] -> 0[0] [receive] via NET/IB/0/GDRDMA"
  void Transport(std::string_view m, int n) {
    const std::vector<std::string> w = Words(m.substr(0, m.find(" via ")));
    if (w.size() < 5 || w[2] != ":" || w[4] != "->" || w.size() < 6) return;
    const auto channel = Int(w[1].substr(0, w[1].find('/')));
    const auto from = RankOf(w[3]);
    const auto to = RankOf(w[5]);
    if (!channel || !from || !to) return;
    NcclLogTransport t;
    t.channel = *channel;
    t.from = *from;
    t.to = *to;
    t.via = std::string(m.substr(m.find(" via ") + 5));
    if (const std::size_t comm = t.via.find(" comm "); comm != std::string::npos) t.via.resize(comm);
    t.kind = TransportKind(t.via);
    t.line = n;
    if (!transport_keys_.insert(std::to_string(t.channel) + " " + std::to_string(t.from) + " " +
                                std::to_string(t.to) + " " + t.via).second) {
      return;  // the same connection printed again
    }
    log_.transports.push_back(t);
  }

  int MaxRankSeen() const {
    int top = -1;
    for (const NcclLogRing& r : whole_rings_)
      for (int x : r.ranks) top = std::max(top, x);
    for (const auto& [c, lines] : rank_rings_)
      for (const PerRankRing& p : lines) top = std::max({top, p.prev, p.me, p.next});
    for (const NcclLogTree& t : log_.trees)
      for (const NcclLogTreeNode& node : t.nodes) {
        top = std::max({top, node.rank, node.parent});
        for (int child : node.children) top = std::max(top, child);
      }
    for (const NcclLogTransport& t : log_.transports) top = std::max({top, t.from, t.to});
    return top;
  }

  void Finish() {
    log_.tests = ReadNcclTestsOutput(file_, NcclTestsReadOptions{.warn_unfamiliar = false});
    for (const std::string& warning : log_.tests.warnings) log_.warnings.push_back(warning);
    // The communicator's size: nRanks, else the longest ring, else the ranks seen.
    if (!comm_sizes_.empty()) log_.ranks = *comm_sizes_.rbegin();
    else {
      log_.ranks_inferred = true;
      for (const NcclLogRing& r : whole_rings_) log_.ranks = std::max(log_.ranks, static_cast<int>(r.ranks.size()));
      log_.ranks = std::max({log_.ranks, MaxRankSeen() + 1, log_.tests.ranks()});
    }
    for (const NcclLogRing& ring : whole_rings_) {
      const int size = static_cast<int>(ring.ranks.size());
      if (size != log_.ranks) {
        if (comm_sizes_.count(size) > 0) {
          log_.warnings.push_back(Where(ring.line) + "channel " + std::to_string(ring.channel) + "'s ring of " +
                                  std::to_string(size) + " ranks is another communicator's (skipped)");
          continue;
        }
        throw Error(Where(ring.line) + "channel " + std::to_string(ring.channel) + "'s ring has " +
                    std::to_string(size) + " ranks, the communicator " + std::to_string(log_.ranks) +
                    (ring.line == file_.line_count() && !file_.EndsWithNewline() ? " (the file stops here: truncated?)" : ""));
      }
      if (const std::string bad = RingPermutationError(ring.ranks, log_.ranks); !bad.empty()) {
        throw Error(Where(ring.line) + "channel " + std::to_string(ring.channel) + "'s ring " + bad);
      }
      const auto same = std::find_if(log_.rings.begin(), log_.rings.end(),
                                     [&](const NcclLogRing& r) { return r.channel == ring.channel; });
      if (same != log_.rings.end()) {
        if (same->ranks != ring.ranks) {
          log_.warnings.push_back(Where(ring.line) + "channel " + std::to_string(ring.channel) +
                                  " printed again with another ring (another communicator?); the first is kept");
        }
        continue;
      }
      log_.rings.push_back(ring);
    }
    for (const auto& [channel, lines] : rank_rings_) AssembleRing(channel, lines);
    std::sort(log_.rings.begin(), log_.rings.end(),
              [](const NcclLogRing& a, const NcclLogRing& b) { return a.channel < b.channel; });
    std::sort(log_.trees.begin(), log_.trees.end(),
              [](const NcclLogTree& a, const NcclLogTree& b) { return a.channel < b.channel; });
  }

  /// A ring from the per-rank "Ring c : prev -> me -> next" lines of one channel.
  void AssembleRing(int channel, const std::vector<PerRankRing>& lines) {
    if (std::any_of(log_.rings.begin(), log_.rings.end(), [&](const NcclLogRing& r) { return r.channel == channel; })) {
      return;  // the Channel line said it whole
    }
    std::map<int, int> next;
    auto link = [&](int a, int b, int line) {
      const auto [it, added] = next.emplace(a, b);
      if (!added && it->second != b) {
        throw Error(Where(line) + "ring " + std::to_string(channel) + ": rank " + std::to_string(a) +
                    " is followed by " + std::to_string(it->second) + " on one line and by " + std::to_string(b) +
                    " on this one");
      }
    };
    for (const PerRankRing& p : lines) {
      for (int r : {p.prev, p.me, p.next}) {
        if (r < 0 || r >= log_.ranks) {
          throw Error(Where(p.line) + "ring " + std::to_string(channel) + " names rank " + std::to_string(r) +
                      " of a communicator of " + std::to_string(log_.ranks));
        }
      }
      link(p.prev, p.me, p.line);
      link(p.me, p.next, p.line);
    }
    NcclLogRing ring;
    ring.channel = channel;
    ring.line = lines.front().line;
    // Follow the links from a rank nothing leads to (a partial chain), else from rank 0.
    std::set<int> targets;
    for (const auto& [a, b] : next) targets.insert(b);
    int start = next.count(0) > 0 ? 0 : next.begin()->first;
    for (const auto& [a, b] : next) {
      if (targets.count(a) == 0) {
        start = a;
        break;
      }
    }
    std::set<int> seen;
    for (int r = start; seen.insert(r).second;) {
      ring.ranks.push_back(r);
      const auto it = next.find(r);
      if (it == next.end()) break;
      r = it->second;
    }
    const bool closed = next.count(ring.ranks.back()) > 0;  // the walk came back to a rank it had seen
    if (closed && static_cast<int>(ring.ranks.size()) < log_.ranks) {
      throw Error(Where(ring.line) + "ring " + std::to_string(channel) + " closes after " +
                  std::to_string(ring.ranks.size()) + " of " + std::to_string(log_.ranks) + " ranks");
    }
    // Every rank in one chain: the ring is known even where its closing line is missing.
    ring.complete = static_cast<int>(ring.ranks.size()) == log_.ranks;
    if (ring.complete) {
      std::rotate(ring.ranks.begin(), std::find(ring.ranks.begin(), ring.ranks.end(), 0), ring.ranks.end());
    }
    log_.rings.push_back(ring);
  }

  const FieldFile& file_;
  NcclLog log_;
  std::set<int> comm_sizes_;
  std::vector<NcclLogRing> whole_rings_;
  std::map<int, std::vector<PerRankRing>> rank_rings_;
  std::map<int, std::size_t> tree_index_;     // channel -> its place in log_.trees
  std::set<std::pair<int, int>> tree_ranks_;  // (channel, rank) already in log_.trees
  std::set<std::string> transport_keys_;
  std::set<std::string> host_set_;
};

}  // namespace

int NcclLog::complete_rings() const {
  return static_cast<int>(std::count_if(rings.begin(), rings.end(), [](const NcclLogRing& r) { return r.complete; }));
}

std::map<std::string, int> NcclLog::TransportCounts() const {
  std::map<std::string, int> counts;
  for (const NcclLogTransport& t : transports) ++counts[t.kind];
  return counts;
}

std::string RingPermutationError(const std::vector<int>& ring, int ranks) {
  std::vector<int> seen(static_cast<std::size_t>(std::max(ranks, 0)), 0);
  std::string repeated, outside;
  for (int r : ring) {
    if (r < 0 || r >= ranks) {
      outside += (outside.empty() ? "" : ", ") + std::to_string(r);
      continue;
    }
    if (seen[static_cast<std::size_t>(r)]++ == 1) repeated += (repeated.empty() ? "" : ", ") + std::to_string(r);
  }
  std::string missing;
  for (int r = 0; r < ranks; ++r)
    if (seen[static_cast<std::size_t>(r)] == 0) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  if (repeated.empty() && outside.empty() && missing.empty()) return "";
  std::string what = "is not a permutation of the " + std::to_string(ranks) + " ranks:";
  if (!repeated.empty()) what += " repeats " + repeated + ";";
  if (!outside.empty()) what += " names " + outside + " outside 0.." + std::to_string(ranks - 1) + ";";
  if (!missing.empty()) what += " lacks " + missing + ";";
  what.pop_back();
  return what;
}

bool LooksLikeNcclLog(std::string_view head) {
  for (const std::string_view raw : SplitHeadLines(head)) {
    const std::optional<NcclLine> nl = SplitNcclLine(raw);
    if (!nl) continue;
    const std::string_view m = nl->message;
    for (const std::string_view start : {"NCCL version", "Channel ", "Ring ", "Trees", "Tree ", "comm 0x",
                                         "Bootstrap", "NET/", "Using network", "cudaDriverVersion", "Connected all"}) {
      if (StartsWith(m, start)) return true;
    }
  }
  return false;
}

NcclLog ParseNcclLog(const FieldFile& file) { return LogReader(file).Read(); }

}  // namespace shardlab
