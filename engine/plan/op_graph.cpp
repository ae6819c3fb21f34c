#include "engine/plan/op_graph.h"

namespace shardlab {

OpGraph BuildOpGraph(const Plan& plan) {
  const std::size_t n = plan.ops.size();
  OpGraph g;
  g.pred_count.assign(n, 0);
  g.succ_begin.assign(n + 1, 0);

  // The lane predecessor of every op, found in one pass.
  std::vector<OpId> lane_prev(n, kNoOp);
  std::vector<OpId> last(static_cast<std::size_t>(plan.num_ranks) * kLaneCount, kNoOp);
  for (OpId id = 0; id < static_cast<OpId>(n); ++id) {
    const Op& op = plan.ops[id];
    OpId& slot = last[static_cast<std::size_t>(op.rank) * kLaneCount + static_cast<int>(op.lane)];
    lane_prev[id] = slot;
    slot = id;
  }

  // Count out-degrees, prefix-sum, then fill: two passes, no per-op vectors.
  for (OpId id = 0; id < static_cast<OpId>(n); ++id) {
    const Op& op = plan.ops[id];
    for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d) ++g.succ_begin[*d + 1];
    if (lane_prev[id] != kNoOp) ++g.succ_begin[lane_prev[id] + 1];
    g.pred_count[id] = static_cast<std::int32_t>(op.dep_count) + (lane_prev[id] != kNoOp ? 1 : 0);
  }
  for (std::size_t i = 0; i < n; ++i) g.succ_begin[i + 1] += g.succ_begin[i];
  g.succ.resize(g.succ_begin[n]);
  std::vector<std::uint32_t> fill(g.succ_begin.begin(), g.succ_begin.end() - 1);
  for (OpId id = 0; id < static_cast<OpId>(n); ++id) {
    const Op& op = plan.ops[id];
    for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d) g.succ[fill[*d]++] = id;
    if (lane_prev[id] != kNoOp) g.succ[fill[lane_prev[id]]++] = id;
  }
  return g;
}

}  // namespace shardlab
