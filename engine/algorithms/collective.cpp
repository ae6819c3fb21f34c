// Collective names, parameter checks, the facts front ends need (steps, bus
// bandwidth factor, size) and the dispatch to the generators in ring.cpp,
// tree.cpp and all_to_all.cpp: each a lookup in the collectives' table
// (engine/plan/collective_def.h; the defs in collectives/*.cpp).
#include "engine/algorithms/collective.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <vector>

#include "engine/algorithms/collective_internal.h"
#include "engine/core/error.h"

namespace shardlab {

namespace {

constexpr CollectiveAlgo kAllAlgos[] = {
    CollectiveAlgo::kRing, CollectiveAlgo::kTree, CollectiveAlgo::kDirect,
};

// "All-Reduce" and "all_reduce" parse like "allreduce".
std::string Normalized(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

void CheckRingOrder(const std::vector<int>& order, int ranks) {
  if (order.empty()) return;
  if (static_cast<std::int64_t>(order.size()) != ranks)
    throw Error("ring order lists " + std::to_string(order.size()) + " ranks but the collective has " +
                std::to_string(ranks) + " (it must be a permutation of 0.." +
                std::to_string(ranks - 1) + ")");
  std::vector<char> seen(static_cast<std::size_t>(ranks), 0);
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const int rank = order[pos];
    if (rank < 0 || rank >= ranks)
      throw Error("ring order: position " + std::to_string(pos) + " names rank " +
                  std::to_string(rank) + ", outside 0.." + std::to_string(ranks - 1));
    if (seen[rank])
      throw Error("ring order: rank " + std::to_string(rank) + " appears twice (it must be a " +
                  "permutation of 0.." + std::to_string(ranks - 1) + ")");
    seen[rank] = 1;
  }
}

}  // namespace

bool CollectiveHasAlgo(CollectiveKind kind, CollectiveAlgo algo) {
  const CollectiveDef* def = FindCollective(kind);
  if (def == nullptr) return false;
  if (algo == CollectiveAlgo::kNccl) return def->library != LibraryCollective::kNone;
  return def->Algo(algo) != nullptr;
}

std::string CollectiveAlgoList(CollectiveKind kind) {
  std::string list;
  for (const CollectiveAlgo algo : kAllAlgos) {
    if (!CollectiveHasAlgo(kind, algo)) continue;
    if (!list.empty()) list += ", ";
    list += CollectiveAlgoName(algo);
  }
  return list;
}

bool CollectiveHasRoot(CollectiveKind kind) {
  const CollectiveDef* def = FindCollective(kind);
  return def != nullptr && def->root != RootRole::kNone;
}

bool CollectiveReduces(CollectiveKind kind) {
  const CollectiveDef* def = FindCollective(kind);
  return def != nullptr && def->reduces;
}

std::vector<CollectiveAlgo> CollectiveAlgosFor(CollectiveKind kind) {
  std::vector<CollectiveAlgo> algos;
  for (const CollectiveAlgo algo : kAllAlgos) {
    if (CollectiveHasAlgo(kind, algo)) algos.push_back(algo);
  }
  return algos;
}

const char* CollectiveTitle(CollectiveKind kind) {
  const CollectiveDef* def = FindCollective(kind);
  return def != nullptr ? def->title : "collective";
}

const char* CollectiveKindName(CollectiveKind kind) {
  const CollectiveDef* def = FindCollective(kind);
  return def != nullptr ? def->name : "?";
}

const char* CollectiveAlgoName(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::kRing: return "ring";
    case CollectiveAlgo::kTree: return "tree";
    case CollectiveAlgo::kDirect: return "direct";
    case CollectiveAlgo::kNccl: return "nccl";
  }
  return "?";
}

CollectiveKind ParseCollectiveKind(const std::string& text) {
  const std::string key = Normalized(text);
  const std::vector<const CollectiveDef*> all = Collectives();
  for (const CollectiveDef* def : all)
    if (key == def->name) return def->kind;
  std::string valid;
  for (const CollectiveDef* def : all) {
    if (!valid.empty()) valid += ", ";
    valid += def->name;
  }
  throw Error("unknown collective '" + text + "' (valid: " + valid + ")");
}

CollectiveAlgo ParseCollectiveAlgo(const std::string& text) {
  const std::string key = Normalized(text);
  for (const CollectiveAlgo algo : kAllAlgos)
    if (key == CollectiveAlgoName(algo)) return algo;
  if (key == "nccl") return CollectiveAlgo::kNccl;
  std::string valid;
  for (const CollectiveAlgo algo : kAllAlgos) {
    if (!valid.empty()) valid += ", ";
    valid += CollectiveAlgoName(algo);
  }
  throw Error("unknown algorithm '" + text + "' (valid: " + valid + ")");
}

CollectiveAlgo DefaultAlgo(CollectiveKind kind) {
  const CollectiveDef* def = FindCollective(kind);
  if (def == nullptr || def->algos.empty()) return def != nullptr ? CollectiveAlgo::kNccl : CollectiveAlgo::kRing;
  return def->algos.front().algo;
}

void CheckCollectiveParams(const CollectiveParams& params) {
  const char* kind = CollectiveDefOf(params.kind).name;  // throws on an unknown kind
  if (params.ranks < 1)
    throw Error(std::string(kind) + ": ranks must be at least 1 (got " +
                std::to_string(params.ranks) + ")");
  if (params.count < 0)
    throw Error(std::string(kind) + ": count must not be negative (got " +
                std::to_string(params.count) + ")");
  if (params.count > std::numeric_limits<Bytes>::max() / DTypeBytes(params.dtype))
    throw Error(std::string(kind) + ": count " + std::to_string(params.count) +
                " is too large to address in bytes");
  if (!CollectiveHasAlgo(params.kind, params.algo))
    throw Error(std::string(kind) + " has no '" + CollectiveAlgoName(params.algo) +
                "' algorithm (valid for " + kind + ": " + CollectiveAlgoList(params.kind) + ")");
  if (CollectiveHasRoot(params.kind) && (params.root < 0 || params.root >= params.ranks))
    throw Error(std::string(kind) + ": root " + std::to_string(params.root) +
                " is out of range for " + std::to_string(params.ranks) + " ranks (0.." +
                std::to_string(params.ranks - 1) + ")");
  if (CollectiveReduces(params.kind) && params.op == ReduceOp::kNone)
    throw Error(std::string(kind) + " needs a reduction operator (sum, max or min), not none");
  if (params.tree_chunks < 0 || params.tree_chunks > detail::kMaxTreePieces)
    throw Error(std::string(kind) + ": tree_chunks must be 0 (automatic) .. " +
                std::to_string(detail::kMaxTreePieces) + " (got " +
                std::to_string(params.tree_chunks) + ")");
  if (params.collective_seq < 0)
    throw Error(std::string(kind) + ": collective_seq must not be negative (got " +
                std::to_string(params.collective_seq) + ")");
  CheckRingOrder(params.ring_order, params.ranks);
  const std::int64_t ops = detail::EstimatedOpCount(params);
  if (ops > detail::kMaxCollectiveOps)
    throw Error(std::string(CollectiveAlgoName(params.algo)) + " " + kind + " over " +
                std::to_string(params.ranks) + " ranks needs " + std::to_string(ops) +
                " ops; a plan holds at most " + std::to_string(detail::kMaxCollectiveOps));
}

Plan BuildCollective(const CollectiveParams& params) {
  CheckCollectiveParams(params);
  const CollectiveDef& def = CollectiveDefOf(params.kind);
  const CollectiveAlgoDef* algo = def.Algo(params.algo);  // null: nccl
  Plan plan = algo != nullptr ? algo->build(params) : detail::BuildNcclCollective(params);
  // The call's name for the labels: "AR" / "all-reduce (ring)"; an
  // all-reduce by hand runs two passes (reduce-scatter and all-gather, or
  // the tree's reduce and broadcast) that its ops' phases name.
  CollectiveNote note;
  note.tag = def.tag;
  note.what = std::string(def.title) + " (" +
              (params.algo == CollectiveAlgo::kNccl ? "NCCL" : CollectiveAlgoName(params.algo)) + ")";
  note.two_passes = algo != nullptr && algo->two_passes;
  plan.collectives.assign(static_cast<std::size_t>(params.collective_seq) + 1, CollectiveNote{});
  plan.collectives[static_cast<std::size_t>(params.collective_seq)] = std::move(note);
  return plan;
}

// Step counts: each algorithm's `steps` in its collective's def
// (collectives/*.cpp); nccl: 1, one library call per rank.
int ExpectedSteps(const CollectiveParams& params) {
  CheckCollectiveParams(params);
  if (params.algo == CollectiveAlgo::kNccl) return 1;
  return CollectiveDefOf(params.kind).Algo(params.algo)->steps(params);
}

Bytes CollectiveSizeBytes(const CollectiveParams& params) {
  return params.count * DTypeBytes(params.dtype);
}

// c*count/n without overflowing c*count: count = q*n + r, so
// c*count/n = c*q + (c*r)/n exactly, and c*r < n*n fits easily.
std::int64_t ChunkBegin(std::int64_t count, int n, int c) {
  if (n < 1) throw Error("chunking needs at least one part (got " + std::to_string(n) + ")");
  const std::int64_t q = count / n;
  const std::int64_t r = count % n;
  return static_cast<std::int64_t>(c) * q + static_cast<std::int64_t>(c) * r / n;
}

std::int64_t ChunkCount(std::int64_t count, int n, int c) {
  return ChunkBegin(count, n, c + 1) - ChunkBegin(count, n, c);
}

namespace detail {

std::vector<int> RingRanks(const CollectiveParams& params) {
  if (!params.ring_order.empty()) return params.ring_order;
  std::vector<int> ranks(static_cast<std::size_t>(params.ranks));
  for (int r = 0; r < params.ranks; ++r) ranks[r] = r;
  return ranks;
}


std::string CollectivePlanName(const CollectiveParams& params) {
  std::string name = std::string(CollectiveAlgoName(params.algo)) + " " +
                     CollectiveTitle(params.kind) + ", " + std::to_string(params.ranks) +
                     (params.ranks == 1 ? " rank, " : " ranks, ") +
                     FormatBytes(CollectiveSizeBytes(params));
  if (CollectiveHasRoot(params.kind)) name += ", root " + std::to_string(params.root);
  return name;
}

int TreePieces(const CollectiveParams& params) {
  if (params.tree_chunks > 0) return params.tree_chunks;
  const Bytes half_bytes = ChunkCount(params.count, 2, 0) * DTypeBytes(params.dtype);
  const Bytes pieces = half_bytes / kTreeAutoPieceBytes;
  return static_cast<int>(std::clamp<Bytes>(pieces, 1, kMaxAutoTreePieces));
}

std::int64_t EstimatedOpCount(const CollectiveParams& params) {
  if (params.algo == CollectiveAlgo::kNccl) return params.ranks;
  return CollectiveDefOf(params.kind).Algo(params.algo)->ops(params);
}

std::vector<int> AllRanks(int ranks) {
  std::vector<int> all(static_cast<std::size_t>(std::max(ranks, 0)));
  for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

void AddCollectiveBuffers(PlanBuilder& builder, const CollectiveParams& params) {
  const CollectiveDef& def = CollectiveDefOf(params.kind);
  for (int r = 0; r < params.ranks; ++r)
    builder.AddBuffer(r, def.input_buffer(), params.count, params.dtype, BufferInit::kRandom);
  if (!def.separate_output()) return;
  for (int r = 0; r < params.ranks; ++r)
    builder.AddBuffer(r, def.output_buffer(), params.count, params.dtype, BufferInit::kZero);
}

}  // namespace detail

}  // namespace shardlab
