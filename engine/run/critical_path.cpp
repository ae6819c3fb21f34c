#include "engine/run/critical_path.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "engine/core/error.h"

namespace shardlab {
namespace {

constexpr TimeNs kTieNs = 1.0;  // ends this close are tied (clocks round to ns)

struct LaneKey {
  std::int32_t rank;
  Lane lane;
  bool operator<(const LaneKey& o) const {
    return rank != o.rank ? rank < o.rank : static_cast<int>(lane) < static_cast<int>(o.lane);
  }
};

class PathFinder {
 public:
  PathFinder(const Plan& plan, const std::vector<Event>& events) : plan_(plan) {
    by_op_.assign(plan.ops.size(), nullptr);
    for (const Event& e : events) {
      if (e.op < 0 || static_cast<std::size_t>(e.op) >= plan.ops.size())
        throw Error("critical path: an event names op " + std::to_string(e.op) + " but the plan '" +
                    plan.name + "' has " + std::to_string(plan.ops.size()) + " ops");
      by_op_[static_cast<std::size_t>(e.op)] = &e;
    }
    for (std::size_t id = 0; id < plan.ops.size(); ++id) {
      if (!by_op_[id]) continue;
      const Op& op = plan.ops[id];
      lanes_[LaneKey{op.rank, op.lane}].push_back(static_cast<OpId>(id));
    }
    for (auto& [key, ops] : lanes_)
      std::sort(ops.begin(), ops.end(), [this](OpId a, OpId b) { return End(a) < End(b); });
  }

  // The op that stands for a transfer: its Recv (a Send's event is the same span).
  OpId Unit(OpId id) const {
    const Op& op = plan_.ops[static_cast<std::size_t>(id)];
    if (op.kind == OpKind::kSend && op.match != kNoOp && Has(op.match)) return op.match;
    return id;
  }
  bool Has(OpId id) const { return by_op_[static_cast<std::size_t>(id)] != nullptr; }
  const Event& Ev(OpId id) const { return *by_op_[static_cast<std::size_t>(id)]; }
  TimeNs End(OpId id) const { return Ev(id).end_ns; }

  OpId Last() const {
    OpId best = kNoOp;
    for (std::size_t id = 0; id < by_op_.size(); ++id) {
      if (!by_op_[id]) continue;
      const OpId u = Unit(static_cast<OpId>(id));
      if (best == kNoOp || End(u) > End(best) + kTieNs || (End(u) >= End(best) - kTieNs && u < best))
        best = u;
    }
    return best;
  }

  struct Pick {
    OpId op = kNoOp;
    bool dependency = false;
  };

  // What `unit` waited for: the candidate that ended latest, no later than it started.
  Pick Predecessor(OpId unit) const {
    const Op& op = plan_.ops[static_cast<std::size_t>(unit)];
    const TimeNs start = Ev(unit).start_ns;
    Pick best;
    TimeNs best_end = 0;
    auto consider = [&](OpId candidate, bool dependency) {
      if (candidate == kNoOp || !Has(candidate)) return;
      const OpId u = Unit(candidate);
      if (u == unit) return;
      const TimeNs end = End(u);
      if (end > start + kTieNs) return;
      const bool better =
          best.op == kNoOp || end > best_end + kTieNs ||
          (end >= best_end - kTieNs &&
           (dependency > best.dependency || (dependency == best.dependency && u < best.op)));
      if (better) {
        best = {u, dependency};
        best_end = end;
      }
    };
    std::vector<OpId> sides = {unit};
    if (op.kind == OpKind::kRecv && op.match != kNoOp) sides.push_back(op.match);
    for (OpId side : sides) {
      const Op& s = plan_.ops[static_cast<std::size_t>(side)];
      for (const OpId* d = plan_.deps_begin(s); d != plan_.deps_end(s); ++d) consider(*d, true);
      const auto lane = lanes_.find(LaneKey{s.rank, s.lane});
      if (lane == lanes_.end()) continue;
      // The latest op of the lane that ended by `start` (sorted by end).
      const std::vector<OpId>& ops = lane->second;
      auto it = std::upper_bound(ops.begin(), ops.end(), start + kTieNs,
                                 [this](TimeNs t, OpId o) { return t < End(o); });
      while (it != ops.begin()) {
        --it;
        if (*it == side) continue;
        consider(*it, false);
        break;
      }
    }
    return best;
  }

 private:
  const Plan& plan_;
  std::vector<const Event*> by_op_;
  std::map<LaneKey, std::vector<OpId>> lanes_;
};

bool IsTransfer(OpKind kind) { return kind == OpKind::kRecv || kind == OpKind::kSend; }

std::string Percent(TimeNs part, TimeNs whole) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buffer;
}

}  // namespace

CriticalPath FindCriticalPath(const Plan& plan, const std::vector<Event>& events,
                              const Topology* topology) {
  CriticalPath path;
  PathFinder finder(plan, events);
  OpId unit = finder.Last();
  if (unit == kNoOp) return path;
  path.end_ns = finder.End(unit);

  std::unique_ptr<RouteTable> routes;
  if (topology) routes = std::make_unique<RouteTable>(*topology);

  std::vector<char> seen(plan.ops.size(), 0);
  while (unit != kNoOp && !seen[static_cast<std::size_t>(unit)]) {
    seen[static_cast<std::size_t>(unit)] = 1;
    const Op& op = plan.ops[static_cast<std::size_t>(unit)];
    const Event& e = finder.Ev(unit);
    CriticalPathStep step;
    step.op = unit;
    step.rank = op.rank;
    step.kind = op.kind;
    step.start_ns = e.start_ns;
    step.end_ns = std::max(e.start_ns, e.end_ns);
    if (op.kind == OpKind::kRecv) step.peer = op.peer;
    const auto before = finder.Predecessor(unit);
    const TimeNs waited_until = before.op == kNoOp ? 0 : finder.End(before.op);
    step.idle_before_ns = std::max<TimeNs>(0, step.start_ns - waited_until);
    step.after_dependency = before.dependency;
    if (IsTransfer(op.kind) && routes && op.peer >= 0 && op.rank < topology->num_gpus() &&
        op.peer < topology->num_gpus()) {
      const Route& route = routes->Between(op.peer, op.rank);
      const Bytes bytes = e.bytes > 0 ? e.bytes : op.bytes;
      const TimeNs ideal = route.latency_ns + TransferNs(bytes, route.bottleneck_gbps);
      step.link_wait_ns = std::clamp<TimeNs>(step.end_ns - step.start_ns - ideal, 0,
                                             step.end_ns - step.start_ns);
    }
    path.steps.push_back(step);
    unit = before.op;
  }
  std::reverse(path.steps.begin(), path.steps.end());

  std::map<std::int32_t, TimeNs> by_rank;
  std::map<std::pair<std::int32_t, std::int32_t>, TimeNs> by_hop;
  for (const CriticalPathStep& s : path.steps) {
    const TimeNs span = s.end_ns - s.start_ns;
    path.idle_ns += s.idle_before_ns;
    if (IsTransfer(s.kind)) {
      path.link_wait_ns += s.link_wait_ns;
      path.communication_ns += span - s.link_wait_ns;
      by_hop[{s.peer, s.rank}] += span;
    } else if (s.kind == OpKind::kCollective) {
      path.communication_ns += span;
    } else {
      path.compute_ns += span;
    }
    by_rank[s.rank] += span;
  }
  for (const auto& [rank, ns] : by_rank) {
    if (ns > path.bounding_rank_ns + kTieNs || path.bounding_rank < 0) {
      path.bounding_rank = rank;
      path.bounding_rank_ns = ns;
    }
  }
  for (const auto& [hop, ns] : by_hop) {
    if (ns > path.slowest_hop.ns + kTieNs || path.slowest_hop.src < 0)
      path.slowest_hop = {hop.first, hop.second, ns};
  }
  return path;
}

std::string FormatCriticalPath(const CriticalPath& path) {
  if (path.steps.empty()) return "critical path: no events";
  const TimeNs total = path.end_ns;
  std::string text = "critical path: " + std::to_string(path.steps.size()) + " ops to " +
                     FormatTime(total) + ": compute " + FormatTime(path.compute_ns) + " (" +
                     Percent(path.compute_ns, total) + ") · communication " +
                     FormatTime(path.communication_ns) + " (" +
                     Percent(path.communication_ns, total) + ") · link wait " +
                     FormatTime(path.link_wait_ns) + " (" + Percent(path.link_wait_ns, total) +
                     ") · idle " + FormatTime(path.idle_ns) + " (" + Percent(path.idle_ns, total) +
                     ")";
  text += "\n  bounded by rank " + std::to_string(path.bounding_rank) + " (" +
          FormatTime(path.bounding_rank_ns) + " of its ops on the path)";
  if (path.slowest_hop.src >= 0)
    text += "; slowest hop " + std::to_string(path.slowest_hop.src) + " -> " +
            std::to_string(path.slowest_hop.dst) + " (" + FormatTime(path.slowest_hop.ns) + ")";
  return text;
}

}  // namespace shardlab
