// Expert parallelism: a mixture-of-experts layer with E experts over N
// ranks (E/N each; expert e lives on rank e / (E/N)), as a Plan with real
// arithmetic, two variable-size all-to-alls, and ops tagged by phase.
//
//   rank r (tokens r·T/N ..)                    every rank              rank r
//   router ─► pack ══ dispatch all-to-all ══► its experts' MLPs ══ combine all-to-all ══► Σ gate·y
//   x·Wr, top-k     rows to the ranks of          relu(x·W1_e)·W2_e       rows back to their
//   gates           their experts                 on its rows             tokens' ranks
//
//   step 0          1     2 .. 1+D               2+D                     3+D .. 2+2D   3+2D
//   (D = max(N−1, 1) all-to-all steps; at step s rank r sends to (r+s+1) mod N,
//    its own block is a local copy, as the direct all-to-all)
//
// Routing is decided when the plan is built, on the host, from the same
// seeded data the backend will hold (RouteMoeTokens): the all-to-all sizes
// depend on it, as a real MoE layer first exchanges its per-expert token
// counts before it sends the tokens. The plan's router still computes the
// logits and gates itself; only the choice of experts is fixed in advance.
//
// Layouts. Rank s's "dispatch.send" holds its kept choices ordered by
// destination rank, then expert, then token; rank d's "dispatch.recv" holds
// the blocks of sources 0..N−1 in that order. Each expert gathers its rows
// of every source block into one block (Megatron's sort by expert after
// the all-to-all), runs its MLP on it, and scatters the result into
// "combine.send", laid out as dispatch.recv; rank s receives them into
// "combine.recv", laid out as its dispatch.send, and adds gate · row into
// row t of "y". Blocks of zero rows send nothing.
//
// Cost (fp32, 4 B): rank s sends Σ_{d≠s} rows(s→d) · H · 4 B in the
// dispatch and receives the same rows back in the combine; rank d's
// experts cost 4·rows·H·F flops for the rows it receives. A hot expert's
// rank computes longest: the others wait for it in the combine.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/moe_layer.h"
#include "engine/plan/plan.h"

namespace shardlab {

struct MoeLayerPlan {
  MoeLayerConfig config;
  MoeRouting routing;
  Plan plan;
  std::vector<BufferId> output;  // [rank]: "y", its T/N tokens × H
  std::vector<BufferId> gates;   // [rank]: "gates", T/N × k
  int dispatch_seq = 0;          // collective_seq of the dispatch's ops
  int combine_seq = 1;
  int dispatch_first_step = 2;   // the steps above
  int expert_step = 0;
  int combine_first_step = 0;
  int sum_step = 0;
};

/// Builds the layer for `routing` (RouteMoeTokens of the same config).
/// Throws Error(kInvalidInput) on a bad config or a routing of another shape.
MoeLayerPlan BuildMoeLayer(const MoeLayerConfig& config, const MoeRouting& routing);

/// What each all-to-all moves, by rank, from the routing alone (the hand
/// count): rank r sends Σ_{d≠r} rows(r→d)·H·4 B in the dispatch and
/// receives Σ_{s≠r} rows(s→r)·H·4 B; the combine is the mirror image.
/// Local blocks (r→r) are copies and not counted.
struct MoeAllToAllBytes {
  std::vector<Bytes> dispatch_sent, dispatch_received;  // [rank]
  std::vector<Bytes> combine_sent, combine_received;    // [rank]
  std::int64_t transfers_per_all_to_all = 0;             // non-empty r→d blocks, r ≠ d
};
MoeAllToAllBytes ExpectedMoeAllToAllBytes(const MoeLayerConfig& config, const MoeRouting& routing);

/// Rows each rank's experts compute (Σ over its experts of kept_per_expert).
std::vector<std::int64_t> MoeRowsPerRank(const MoeRouting& routing);

}  // namespace shardlab
