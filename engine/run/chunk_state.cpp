#include "engine/run/chunk_state.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "engine/core/error.h"
#include "engine/plan/collective_def.h"

namespace shardlab {

namespace {

// Chunk c of `count` elements split n ways, as collective.h defines it.
std::int64_t ChunkStart(std::int64_t count, int n, int c) { return c * count / n; }

// The kind's cut (its def's `chunks`): even chunks, or (all-to-all, as
// nccl-tests) blocks of count/n elements with the last count % n in none.
std::pair<std::int64_t, std::int64_t> ChunkRange(bool blocks, std::int64_t count, int n, int c) {
  if (blocks) return {c * (count / n), (c + 1) * (count / n)};
  return {ChunkStart(count, n, c), ChunkStart(count, n, c + 1)};
}

// Spreadsheet-style column letters: 0 -> A, 25 -> Z, 26 -> AA, 27 -> AB.
std::string ChunkLetters(int chunk) {
  std::string letters;
  for (int n = chunk + 1; n > 0; n = (n - 1) / 26) {
    letters.insert(letters.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return letters;
}

// One term per rank up to four ranks ("A0+A1+A3"); beyond that, at most two
// runs of consecutive ranks ("A0..7", "A0..2+A6..7") or a count.
std::string FormatSet(const std::string& letters, const std::vector<int>& members) {
  if (members.empty()) return "_";
  std::string text;
  auto term = [&](const std::string& body) {
    if (!text.empty()) text += '+';
    text += letters;
    text += body;
  };
  if (members.size() <= 4) {
    for (int rank : members) term(std::to_string(rank));
    return text;
  }
  std::vector<std::pair<int, int>> runs;  // [first, last]
  for (int rank : members) {
    if (!runs.empty() && runs.back().second + 1 == rank) {
      runs.back().second = rank;
    } else {
      runs.emplace_back(rank, rank);
    }
  }
  if (runs.size() > 2) return letters + "(" + std::to_string(members.size()) + " ranks)";
  for (const auto& [first, last] : runs) {
    if (first == last) {
      term(std::to_string(first));
    } else if (first + 1 == last) {
      term(std::to_string(first));
      term(std::to_string(last));
    } else {
      term(std::to_string(first) + ".." + std::to_string(last));
    }
  }
  return text;
}

}  // namespace

// --- RankSet ---------------------------------------------------------------

void ChunkState::RankSet::UnionWith(const RankSet& other) {
  for (std::size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
}

bool ChunkState::RankSet::Empty() const {
  return std::all_of(words_.begin(), words_.end(), [](std::uint64_t w) { return w == 0; });
}

int ChunkState::RankSet::Count() const {
  int count = 0;
  for (std::uint64_t w : words_) count += std::popcount(w);
  return count;
}

std::vector<int> ChunkState::RankSet::Members() const {
  std::vector<int> members;
  for (std::size_t i = 0; i < words_.size(); ++i) {
    for (std::uint64_t w = words_[i]; w != 0; w &= w - 1) {
      members.push_back(static_cast<int>(i * 64) + std::countr_zero(w));
    }
  }
  return members;
}

// --- ChunkState ------------------------------------------------------------

ChunkState::ChunkState(const CollectiveParams& params, const Plan& plan)
    : plan_(&plan), num_ranks_(plan.num_ranks) {
  const CollectiveDef& def = CollectiveDefOf(params.kind);
  blocks_ = def.chunks == ChunkCut::kBlocks;
  if (params.ranks != plan.num_ranks) {
    throw Error("ChunkState: the parameters have " + std::to_string(params.ranks) +
                " ranks but plan '" + plan.name + "' has " + std::to_string(plan.num_ranks));
  }
  const std::string output_name = def.output_buffer();
  const std::string input_name = def.input_buffer();
  output_.assign(num_ranks_, kNoBuffer);
  buffers_.resize(plan.buffers.size());

  for (std::size_t id = 0; id < plan.buffers.size(); ++id) {
    const Buffer& buffer = plan.buffers[id];
    Intervals& list = buffers_[id];
    list.push_back(Interval{0, RankSet(num_ranks_)});
    const int rank = buffer.rank;
    if (rank < 0 || rank >= num_ranks_) continue;
    if (buffer.name == output_name && output_[rank] == kNoBuffer) {
      output_[rank] = static_cast<BufferId>(id);
    }

    if (buffer.name != input_name) continue;
    // The part of the input buffer that holds this rank's own input (the
    // def's `input`: all of it, its own chunk for all-gather, the root's
    // for broadcast); the rest is filled by the run.
    const ElementRange input = def.input(params, rank, buffer.count);
    const std::int64_t begin = std::max<std::int64_t>(input.begin, 0);
    const std::int64_t end = std::min(input.end, buffer.count);
    if (begin >= end) continue;
    RankSet own(num_ranks_);
    own.Insert(rank);
    SplitAt(list, begin, buffer.count);
    SplitAt(list, end, buffer.count);
    list[Find(list, begin)].ranks = own;
  }
}

std::size_t ChunkState::Find(const Intervals& list, std::int64_t element) {
  auto after = std::upper_bound(list.begin(), list.end(), element,
                                [](std::int64_t e, const Interval& iv) { return e < iv.begin; });
  return static_cast<std::size_t>(after - list.begin()) - 1;
}

void ChunkState::SplitAt(Intervals& list, std::int64_t element, std::int64_t count) {
  if (element <= 0 || element >= count) return;
  const std::size_t i = Find(list, element);
  if (list[i].begin == element) return;
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(i) + 1,
              Interval{element, list[i].ranks});
}

void ChunkState::Apply(const BufferSlice& src, const BufferSlice& dst, bool overwrite) {
  const auto num_buffers = static_cast<BufferId>(buffers_.size());
  if (src.buffer < 0 || src.buffer >= num_buffers || dst.buffer < 0 || dst.buffer >= num_buffers) {
    return;
  }
  const std::int64_t src_count = plan_->buffers[src.buffer].count;
  const std::int64_t dst_count = plan_->buffers[dst.buffer].count;
  // Clamp to both buffers; a validated plan never needs it.
  std::int64_t n = std::min(src.count, dst.count);
  n = std::min(n, src_count - src.offset);
  n = std::min(n, dst_count - dst.offset);
  if (n <= 0 || src.offset < 0 || dst.offset < 0) return;

  // Copy the source pieces first: src and dst may be the same buffer.
  struct Piece {
    std::int64_t begin;  // relative to the slice
    RankSet ranks;
  };
  std::vector<Piece> pieces;
  {
    const Intervals& from = buffers_[src.buffer];
    for (std::size_t i = Find(from, src.offset); i < from.size(); ++i) {
      if (from[i].begin >= src.offset + n) break;
      pieces.push_back(Piece{std::max<std::int64_t>(from[i].begin - src.offset, 0), from[i].ranks});
    }
  }

  Intervals& list = buffers_[dst.buffer];
  SplitAt(list, dst.offset, dst_count);
  SplitAt(list, dst.offset + n, dst_count);
  const std::size_t first = Find(list, dst.offset);
  std::size_t last = first;  // one past the last interval inside the slice
  while (last < list.size() && list[last].begin < dst.offset + n) ++last;

  // Walk both partitions of [0, n) together; each boundary of either one
  // starts a new interval of the result.
  Intervals rewritten;
  std::size_t d = first;
  std::size_t p = 0;
  std::int64_t at = 0;
  while (at < n) {
    const std::int64_t d_end = d + 1 < last ? list[d + 1].begin - dst.offset : n;
    const std::int64_t p_end = p + 1 < pieces.size() ? pieces[p + 1].begin : n;
    RankSet ranks = pieces[p].ranks;
    if (!overwrite) ranks.UnionWith(list[d].ranks);
    rewritten.push_back(Interval{dst.offset + at, std::move(ranks)});
    at = std::min(d_end, p_end);
    if (at == d_end) ++d;
    if (at == p_end) ++p;
  }
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(first),
             list.begin() + static_cast<std::ptrdiff_t>(last));
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(first),
              std::make_move_iterator(rewritten.begin()), std::make_move_iterator(rewritten.end()));

  // Merge equal neighbours around the rewritten range so the list stays short.
  const std::size_t lo = first > 0 ? first - 1 : 0;
  const std::size_t hi = std::min(list.size(), first + rewritten.size() + 1);
  std::size_t out = lo;
  for (std::size_t i = lo + 1; i < hi; ++i) {
    if (list[i].ranks == list[out].ranks) continue;
    ++out;
    if (out != i) list[out] = std::move(list[i]);
  }
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(out) + 1,
             list.begin() + static_cast<std::ptrdiff_t>(hi));
}

void ChunkState::OnEvent(const Event& event) {
  if (event.status != EventStatus::kOk) return;
  if (event.op < 0 || static_cast<std::size_t>(event.op) >= plan_->ops.size()) return;
  const Op& op = plan_->ops[event.op];
  switch (op.kind) {
    case OpKind::kRecv: {
      if (op.match < 0 || static_cast<std::size_t>(op.match) >= plan_->ops.size()) return;
      // The data lands when the Recv completes: it reads the Send's source now.
      Apply(plan_->ops[op.match].src, op.dst, op.reduce == ReduceOp::kNone);
      break;
    }
    case OpKind::kReduce:
      Apply(op.src, op.dst, op.reduce == ReduceOp::kNone);
      break;
    case OpKind::kCopy:
      Apply(op.src, op.dst, /*overwrite=*/true);
      break;
    default:
      break;
  }
}

ChunkState::RankSet ChunkState::Collect(BufferId buffer, std::int64_t begin, std::int64_t end,
                                        bool* uniform) const {
  RankSet ranks(num_ranks_);
  *uniform = true;
  if (begin >= end) return ranks;
  const Intervals& list = buffers_[buffer];
  const std::size_t first = Find(list, begin);
  ranks = list[first].ranks;
  for (std::size_t i = first + 1; i < list.size() && list[i].begin < end; ++i) {
    if (!(list[i].ranks == ranks)) *uniform = false;
    ranks.UnionWith(list[i].ranks);
  }
  return ranks;
}

std::vector<std::string> ChunkState::FormatRanks(int chunks) const {
  constexpr int kMaxShownChunks = 16;
  constexpr int kShownWhenCut = 8;
  const int n = DefaultChunks(chunks);
  std::vector<std::string> lines;
  lines.reserve(num_ranks_);
  for (int rank = 0; rank < num_ranks_; ++rank) {
    std::string line = "GPU" + std::to_string(rank) + ": ";
    const BufferId buffer = output_[rank];
    if (buffer == kNoBuffer) {
      lines.push_back(line + "(no output buffer)");
      continue;
    }
    const std::int64_t count = plan_->buffers[buffer].count;
    const int shown = n > kMaxShownChunks ? kShownWhenCut : n;
    line += '[';
    for (int c = 0; c < shown; ++c) {
      if (c > 0) line += ", ";
      bool uniform = true;
      const auto [begin, end] = ChunkRange(blocks_, count, n, c);
      const RankSet ranks = Collect(buffer, begin, end, &uniform);
      line += FormatSet(ChunkLetters(c), ranks.Members());
      if (!uniform) line += '*';
    }
    if (shown < n) line += ", ... (" + std::to_string(n) + " chunks)";
    line += ']';
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<int> ChunkState::Contributors(int rank, int chunk, int chunks) const {
  const int n = DefaultChunks(chunks);
  if (rank < 0 || rank >= num_ranks_ || chunk < 0 || chunk >= n) {
    throw Error("ChunkState::Contributors: rank " + std::to_string(rank) + " chunk " +
                std::to_string(chunk) + " is outside " + std::to_string(num_ranks_) +
                " ranks x " + std::to_string(n) + " chunks");
  }
  const BufferId buffer = output_[rank];
  if (buffer == kNoBuffer) return {};
  const std::int64_t count = plan_->buffers[buffer].count;
  bool uniform = true;
  const auto [begin, end] = ChunkRange(blocks_, count, n, chunk);
  const RankSet ranks = Collect(buffer, begin, end, &uniform);
  if (!uniform) return {};
  return ranks.Members();
}

}  // namespace shardlab
