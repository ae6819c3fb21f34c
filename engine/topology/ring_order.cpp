// Ring search. The score of a ring is (slowest hop, sum of hops), compared
// in that order; a hop's bandwidth is the bottleneck of its widest route.
//
//   1. Up to kExactRanks GPUs: depth-first search over the orders that start
//      at rank 0, pruned by the best score so far (9! leaves at most).
//   2. More: first check whether rank order is already optimal by counting
//      (RankOrderIsOptimal): n routes and a few union-finds over the links,
//      no search. True on NVSwitch boxes and clusters of them, which is
//      where rings of a thousand GPUs occur.
//   3. Otherwise: nearest-neighbour greedy, improved by 2-opt moves, and
//      never worse than rank order.
// Ties keep the order found first, which is rank order where it is optimal.
#include "engine/topology/ring_order.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "engine/core/error.h"

namespace shardlab {
namespace {

constexpr int kExactRanks = 10;
constexpr int kMaxTwoOptPasses = 50;
constexpr std::size_t kMaxCountingLevels = 256;  // distinct widths worth the quick check

struct Score {
  Gbps bottleneck = 0;
  Gbps sum = 0;
  bool operator>(const Score& other) const {
    return bottleneck > other.bottleneck || (bottleneck == other.bottleneck && sum > other.sum);
  }
};

// Route bandwidth between every pair of the first `ranks` GPUs (0 = no route).
std::vector<std::vector<Gbps>> PairWidths(const Topology& topology, int ranks) {
  std::vector<std::vector<Gbps>> widths(static_cast<std::size_t>(ranks));
  for (int i = 0; i < ranks; ++i) {
    const std::vector<Gbps> from =
        WidestBandwidthsFrom(topology, topology.gpus[static_cast<std::size_t>(i)]);
    auto& row = widths[static_cast<std::size_t>(i)];
    row.resize(static_cast<std::size_t>(ranks));
    for (int j = 0; j < ranks; ++j)
      row[static_cast<std::size_t>(j)] =
          i == j ? 0 : from[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(j)])];
  }
  return widths;
}

Score ScoreOf(const std::vector<std::vector<Gbps>>& w, const std::vector<int>& order) {
  Score score{std::numeric_limits<Gbps>::infinity(), 0};
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Gbps hop = w[static_cast<std::size_t>(order[k])]
                      [static_cast<std::size_t>(order[(k + 1) % order.size()])];
    score.bottleneck = std::min(score.bottleneck, hop);
    score.sum += hop;
  }
  return score;
}

// Whether rank order is already the best ring, by a counting argument that
// needs no search. The sum of hop widths is the integral over t of
// #{hops wider than t}, so a ring that has, for every t, the fewest hops of
// width <= t is best in sum and in bottleneck. Join the ring's GPUs by every
// link wider than t (capped by the forward capacity of its switch, CPU or
// NIC ends) into c(t) groups: every route between two groups crosses a link
// of at most t, and a ring must leave each group, so when c(t) > 1 it has at
// least c(t) hops of width <= t. (GPUs may join groups here: a chain of
// routes through GPUs is still a chain of ring hops.) Rank order is optimal
// when it meets that bound at every t; the counts only change at the
// distinct widths, so checking those suffices.
bool RankOrderIsOptimal(const Topology& topology, int ranks, const std::vector<Gbps>& hop_widths) {
  const std::size_t n = topology.nodes.size();
  std::vector<char> in_ring(n, 0);
  for (int r = 0; r < ranks; ++r)
    in_ring[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(r)])] = 1;
  std::vector<std::pair<Gbps, std::size_t>> links;  // (capacity, link index)
  for (std::size_t i = 0; i < topology.links.size(); ++i) {
    const Link& link = topology.links[i];
    Gbps cap = link.gbps;
    bool usable = true;
    for (const std::int32_t end : {link.a, link.b}) {
      const Node& node = topology.nodes[static_cast<std::size_t>(end)];
      if (node.kind == NodeKind::kGpu) {
        usable = usable && in_ring[static_cast<std::size_t>(end)];  // other GPUs forward nothing
      } else if (node.forward_gbps > 0) {
        cap = std::min(cap, node.forward_gbps);
      }
    }
    if (usable) links.emplace_back(cap, i);
  }
  std::vector<Gbps> levels = hop_widths;
  for (const auto& link : links) levels.push_back(link.first);
  levels.push_back(0);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  if (levels.size() > kMaxCountingLevels) return false;

  std::vector<std::size_t> parent(n);
  auto find = [&](std::size_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const Gbps level : levels) {
    // Hops no wider than `level` against groups joined by links wider than it.
    const auto narrow = static_cast<int>(
        std::count_if(hop_widths.begin(), hop_widths.end(), [&](Gbps w) { return w <= level; }));
    std::iota(parent.begin(), parent.end(), std::size_t{0});
    std::vector<char> has_ring = in_ring;  // per group root: holds a ring GPU
    int groups = ranks;
    for (const auto& [cap, index] : links) {
      if (!(cap > level)) continue;
      const Link& link = topology.links[index];
      const std::size_t a = find(static_cast<std::size_t>(link.a));
      const std::size_t b = find(static_cast<std::size_t>(link.b));
      if (a == b) continue;
      // Only merges of two groups that both hold ring GPUs reduce the count.
      parent[a] = b;
      if (has_ring[a] && has_ring[b]) --groups;
      has_ring[b] = has_ring[b] || has_ring[a];
    }
    if (narrow != (groups > 1 ? groups : 0)) return false;
  }
  return true;
}

// Exhaustive search with pruning; `best` starts as rank order.
void SearchExact(const std::vector<std::vector<Gbps>>& w, std::vector<int>* path,
                 std::vector<char>* used, Gbps path_min, Gbps path_sum, Gbps max_width,
                 std::vector<int>* best, Score* best_score) {
  const int n = static_cast<int>(w.size());
  const int placed = static_cast<int>(path->size());
  const int remaining_hops = n - placed + 1;  // including the hop back to rank 0
  if (path_min < best_score->bottleneck) return;
  if (path_min == best_score->bottleneck &&
      path_sum + remaining_hops * max_width <= best_score->sum)
    return;
  const int last = path->back();
  if (placed == n) {
    const Gbps back = w[static_cast<std::size_t>(last)][0];
    const Score score{std::min(path_min, back), path_sum + back};
    if (score > *best_score) {
      *best_score = score;
      *best = *path;
    }
    return;
  }
  for (int next = 1; next < n; ++next) {
    if ((*used)[static_cast<std::size_t>(next)]) continue;
    const Gbps hop = w[static_cast<std::size_t>(last)][static_cast<std::size_t>(next)];
    if (hop < best_score->bottleneck) continue;
    (*used)[static_cast<std::size_t>(next)] = 1;
    path->push_back(next);
    SearchExact(w, path, used, std::min(path_min, hop), path_sum + hop, max_width, best,
                best_score);
    path->pop_back();
    (*used)[static_cast<std::size_t>(next)] = 0;
  }
}

std::vector<int> Greedy(const std::vector<std::vector<Gbps>>& w) {
  const std::size_t n = w.size();
  std::vector<int> order{0};
  std::vector<char> used(n, 0);
  used[0] = 1;
  while (order.size() < n) {
    const auto& row = w[static_cast<std::size_t>(order.back())];
    int pick = -1;
    for (std::size_t j = 0; j < n; ++j) {
      if (!used[j] && (pick < 0 || row[j] > row[static_cast<std::size_t>(pick)]))
        pick = static_cast<int>(j);
    }
    used[static_cast<std::size_t>(pick)] = 1;
    order.push_back(pick);
  }
  return order;
}

// 2-opt: replace hops (a,b) and (c,d) by (a,c) and (b,d), reversing b..c,
// whenever that raises the score. Widths are symmetric (links are full duplex
// with the same figure both ways), so a reversed segment keeps its hops.
void ImproveTwoOpt(const std::vector<std::vector<Gbps>>& w, std::vector<int>* order) {
  const std::size_t n = order->size();
  auto width = [&](int x, int y) {
    return w[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)];
  };
  for (int pass = 0; pass < kMaxTwoOptPasses; ++pass) {
    // The three narrowest hops give the bottleneck without any two of them.
    std::vector<std::pair<Gbps, std::size_t>> hops(n);
    for (std::size_t k = 0; k < n; ++k) hops[k] = {width((*order)[k], (*order)[(k + 1) % n]), k};
    std::partial_sort(hops.begin(),
                      hops.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, n)),
                      hops.end());
    Score current = ScoreOf(w, *order);
    bool improved = false;
    for (std::size_t i = 0; i + 2 < n && !improved; ++i) {
      for (std::size_t j = i + 2; j < n && !improved; ++j) {
        if (i == 0 && j == n - 1) continue;  // the same two hops
        const int a = (*order)[i], b = (*order)[i + 1], c = (*order)[j], d = (*order)[(j + 1) % n];
        const Gbps added1 = width(a, c), added2 = width(b, d);
        Gbps rest = std::numeric_limits<Gbps>::infinity();
        for (std::size_t k = 0; k < std::min<std::size_t>(3, n); ++k) {
          if (hops[k].second != i && hops[k].second != j) {
            rest = hops[k].first;
            break;
          }
        }
        const Score candidate{std::min({rest, added1, added2}),
                              current.sum - width(a, b) - width(c, d) + added1 + added2};
        if (candidate > current &&
            (candidate.bottleneck > current.bottleneck ||
             candidate.sum > current.sum + 1e-9 * std::max(1.0, current.sum))) {
          std::reverse(order->begin() + static_cast<std::ptrdiff_t>(i + 1),
                       order->begin() + static_cast<std::ptrdiff_t>(j + 1));
          improved = true;
        }
      }
    }
    if (!improved) return;
  }
}

void CheckRanks(const Topology& topology, int ranks) {
  if (ranks < 1 || ranks > topology.num_gpus()) {
    throw Error("ring over " + std::to_string(ranks) + " ranks: topology '" + topology.name +
                "' has " + std::to_string(topology.num_gpus()) + " GPUs");
  }
}

}  // namespace

std::vector<int> ChooseRingOrder(const Topology& topology, int ranks) {
  CheckRanks(topology, ranks);
  std::vector<int> rank_order(static_cast<std::size_t>(ranks));
  std::iota(rank_order.begin(), rank_order.end(), 0);
  if (ranks <= 3) return rank_order;  // every ring of three or fewer is the same ring

  if (ranks > kExactRanks) {
    // Cheap first: rank order needs n routes; anything else needs n^2 widths.
    RouteTable routes(topology);
    std::vector<Gbps> hop_widths(static_cast<std::size_t>(ranks), 0);
    for (int r = 0; r < ranks; ++r) {
      try {
        hop_widths[static_cast<std::size_t>(r)] =
            routes.Between(r, (r + 1) % ranks).bottleneck_gbps;
      } catch (const Error&) {
        // no route: width 0
      }
    }
    if (RankOrderIsOptimal(topology, ranks, hop_widths)) return rank_order;
  }

  const std::vector<std::vector<Gbps>> w = PairWidths(topology, ranks);
  Score best_score = ScoreOf(w, rank_order);
  std::vector<int> best = rank_order;
  if (ranks <= kExactRanks) {
    Gbps max_width = 0;
    for (const auto& row : w)
      max_width = std::max(max_width, *std::max_element(row.begin(), row.end()));
    std::vector<int> path{0};
    std::vector<char> used(static_cast<std::size_t>(ranks), 0);
    used[0] = 1;
    SearchExact(w, &path, &used, std::numeric_limits<Gbps>::infinity(), 0, max_width, &best,
                &best_score);
    return best;
  }
  std::vector<int> greedy = Greedy(w);
  ImproveTwoOpt(w, &greedy);
  return ScoreOf(w, greedy) > best_score ? greedy : best;
}

Gbps RingBottleneckGbps(const Topology& topology, const std::vector<int>& order) {
  CheckRanks(topology, static_cast<int>(order.size()));
  std::vector<char> seen(order.size(), 0);
  for (const int rank : order) {
    if (rank < 0 || rank >= static_cast<int>(order.size()) || seen[static_cast<std::size_t>(rank)])
      throw Error("ring order is not a permutation of 0.." + std::to_string(order.size() - 1));
    seen[static_cast<std::size_t>(rank)] = 1;
  }
  if (order.size() < 2) return std::numeric_limits<Gbps>::infinity();
  RouteTable routes(topology);
  Gbps bottleneck = std::numeric_limits<Gbps>::infinity();
  for (std::size_t k = 0; k < order.size(); ++k) {
    Gbps hop = 0;
    try {
      hop = routes.Between(order[k], order[(k + 1) % order.size()]).bottleneck_gbps;
    } catch (const Error&) {
      hop = 0;  // no route: the ring cannot close
    }
    bottleneck = std::min(bottleneck, hop);
  }
  return bottleneck;
}

}  // namespace shardlab
