#include "app/gui/model/comm_pattern.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

namespace shardlab::gui {
namespace {

/// Adds the hop from -> to with its route (none when a rank has no GPU or
/// no route exists).
void AddHop(const Topology& topology, CommPattern& p, int from, int to, int group, int order) {
  PatternHop hop;
  hop.from_rank = from;
  hop.to_rank = to;
  hop.group = group;
  hop.order = order;
  if (from >= 0 && to >= 0 && from < topology.num_gpus() && to < topology.num_gpus() && from != to) {
    Route route;
    if (TryFindRoute(topology, topology.gpus[static_cast<std::size_t>(from)],
                     topology.gpus[static_cast<std::size_t>(to)], &route)) {
      hop.route = std::move(route);
    }
  }
  p.hops.push_back(std::move(hop));
}

std::string RankWords(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? "," : "") + std::to_string(ranks[i]);
  return text;
}

/// Ring hops over `members` (in order, wrapping), as group `group`.
void AddRing(const Topology& topology, CommPattern& p, const std::vector<int>& members, int group) {
  const int n = static_cast<int>(members.size());
  if (n < 2) return;
  for (int i = 0; i < n; ++i) {
    const int to = members[static_cast<std::size_t>((i + 1) % n)];
    if (n == 2 && i == 1) {
      AddHop(topology, p, members[1], members[0], group, 2);  // two ranks: both directions
      break;
    }
    AddHop(topology, p, members[static_cast<std::size_t>(i)], to, group, i + 1);
  }
}

}  // namespace

std::vector<LinkHop> CommPattern::LinksUsed() const {
  std::set<std::pair<int, bool>> seen;
  std::vector<LinkHop> used;
  for (const PatternHop& hop : hops) {
    for (const LinkHop& l : hop.route.hops) {
      if (seen.insert({l.link, l.forward}).second) used.push_back(l);
    }
  }
  return used;
}

Gbps CommPattern::SlowestGbps() const {
  Gbps slowest = 0;
  for (const PatternHop& hop : hops) {
    if (hop.route.hops.empty()) continue;
    if (slowest == 0 || hop.route.bottleneck_gbps < slowest) slowest = hop.route.bottleneck_gbps;
  }
  return slowest;
}

CommPattern RingPattern(const Topology& topology, const std::vector<int>& ring_order, const std::string& title) {
  CommPattern p;
  p.title = title;
  std::string order;
  for (int r : ring_order) order += " " + std::to_string(r);
  p.groups.push_back({"ring" + order, 0});
  AddRing(topology, p, ring_order, 0);
  return p;
}

CommPattern DoubleTreePattern(const Topology& topology, const std::vector<int>& rank_at) {
  CommPattern p;
  p.title = "double binary tree";
  if (rank_at.empty()) return p;
  const std::array<BinaryTree, 2> trees = BuildDoubleBinaryTree(rank_at);
  for (int t = 0; t < 2; ++t) {
    const BinaryTree& tree = trees[static_cast<std::size_t>(t)];
    p.groups.push_back({std::string(t == 0 ? "tree A" : "tree B") + ", root GPU" + std::to_string(tree.root), t});
    // Parent -> child, by depth, so order numbers read from the root down.
    int order = 0;
    for (int depth = 0; depth < static_cast<int>(rank_at.size()); ++depth) {
      for (std::size_t r = 0; r < tree.parent.size(); ++r) {
        if (tree.depth[r] != depth || tree.parent[r] < 0) continue;
        AddHop(topology, p, tree.parent[r], static_cast<int>(r), t, ++order);
      }
    }
  }
  return p;
}

CommPattern MeshPattern(const Topology& topology, int ranks) {
  CommPattern p;
  p.title = "all-to-all: every pair directly";
  p.groups.push_back({"every GPU to every other", 3});
  int order = 0;
  for (int a = 0; a < ranks; ++a) {
    for (int b = 0; b < ranks; ++b) {
      if (a != b) AddHop(topology, p, a, b, 0, ++order);
    }
  }
  return p;
}

CommPattern StageChainPattern(const Topology& topology, int stages) {
  CommPattern p;
  p.title = "pipeline: stage order";
  std::vector<int> chain;
  for (int s = 0; s < stages; ++s) chain.push_back(s);
  p.groups.push_back({"stages " + RankWords(chain) + " (activations forward, gradients back)", 1});
  for (int s = 0; s + 1 < stages; ++s) AddHop(topology, p, s, s + 1, 0, s + 1);
  return p;
}

CommPattern GridPattern(const Topology& topology, const ParallelGrid& grid) {
  CommPattern p;
  p.title = "dp " + std::to_string(grid.dp) + " x pp " + std::to_string(grid.pp) + " x tp " +
            std::to_string(grid.tp) + ": TP groups, PP chains, DP groups";
  int group = 0;
  const std::vector<std::vector<int>> tp = grid.TpGroups();
  for (std::size_t g = 0; g < tp.size() && grid.tp > 1; ++g) {
    p.groups.push_back({"TP group " + std::to_string(g) + " = ranks " + RankWords(tp[g]), 0, "TP groups", RankWords(tp[g])});
    AddRing(topology, p, tp[g], group++);
  }
  for (const std::vector<int>& chain : grid.pp > 1 ? grid.PpGroups() : std::vector<std::vector<int>>{}) {
    p.groups.push_back({"PP chain " + RankWords(chain), 1, "PP chains", RankWords(chain)});
    for (std::size_t s = 0; s + 1 < chain.size(); ++s)
      AddHop(topology, p, chain[s], chain[s + 1], group, static_cast<int>(s) + 1);
    ++group;
  }
  const std::vector<std::vector<int>> dp = grid.DpGroups();
  for (std::size_t g = 0; g < dp.size() && grid.dp > 1; ++g) {
    p.groups.push_back({"DP group " + std::to_string(g) + " = ranks " + RankWords(dp[g]), 2, "DP groups", RankWords(dp[g])});
    AddRing(topology, p, dp[g], group++);
  }
  return p;
}

CommPattern TransferPattern(const Topology& topology, const Plan& plan, const std::string& title) {
  CommPattern p;
  p.title = title;
  p.groups.push_back({"who sends to whom in this plan", 0});
  std::set<std::pair<int, int>> pairs;
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::kSend && op.peer >= 0) pairs.insert({op.rank, op.peer});
  }
  int order = 0;
  for (const auto& [from, to] : pairs) AddHop(topology, p, from, to, 0, ++order);
  return p;
}

}  // namespace shardlab::gui
