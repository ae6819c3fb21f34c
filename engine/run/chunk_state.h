// ChunkState: which ranks' contributions each chunk of each rank's buffer
// holds, updated from events as they complete. It draws the picture the
// seed texts draw after every ring step:
//
//   GPU0: [A0+A1+A2+A3, B0, C0+C3, D0+D2+D3]
//
// Letter = chunk position in the buffer (A = chunk 0; after Z comes AA),
// digits = the ranks whose input is summed there; "_" = nothing meaningful
// yet. Sets of more than four ranks are compacted: runs of consecutive ranks
// as "A0..7" or "A0..2+A6..7", anything more scattered as "A(5 ranks)". A
// chunk whose elements disagree shows the union of their sets with a
// trailing "*". More than 16 chunks: the first 8, then "... (N chunks)".
//
// Each buffer is a sorted partition of its elements into intervals, each
// with one set of ranks (a bitset); an event splits intervals at its slice's
// ends, rewrites the sets inside, and merges equal neighbours again, so a
// buffer holds about as many intervals as the algorithm has chunks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/event.h"
#include "engine/plan/collective_kind.h"
#include "engine/plan/plan.h"

namespace shardlab {

class ChunkState : public EventSink {
 public:
  /// Tracks the buffers of a collective; the initial contributions follow
  /// the layout in collective.h and the kind's def (collective_def.h:
  /// all-gather: only chunk r of rank r holds rank r's input; all-to-all:
  /// rank r's "send", empty "recv"; broadcast: root only; ...). `plan` must
  /// outlive this object.
  ChunkState(const CollectiveParams& params, const Plan& plan);

  /// Applies a completed Recv/Reduce/Copy event (others are ignored).
  void OnEvent(const Event& event) override;

  /// One line per rank for its output buffer ("data", or "recv" for
  /// all-to-all), split into `chunks` chunks (default: the rank count;
  /// all-to-all: blocks of count/chunks elements, the remainder unshown).
  std::vector<std::string> FormatRanks(int chunks = 0) const;

  /// The set of contributing ranks of chunk `chunk` of rank `rank`'s output
  /// buffer split `chunks` ways (for tests and the app's buffer view);
  /// empty when the chunk's elements disagree or hold nothing. Throws
  /// shardlab::Error when `rank` or `chunk` is out of range.
  std::vector<int> Contributors(int rank, int chunk, int chunks = 0) const;

 private:
  // A set of ranks as a bitset of 64-bit words (1,024 ranks: 16 words).
  class RankSet {
   public:
    RankSet() = default;
    explicit RankSet(int num_ranks) : words_((num_ranks + 63) / 64, 0) {}
    void Insert(int rank) { words_[rank >> 6] |= std::uint64_t{1} << (rank & 63); }
    bool Contains(int rank) const { return (words_[rank >> 6] >> (rank & 63)) & 1; }
    void UnionWith(const RankSet& other);
    bool Empty() const;
    int Count() const;
    /// The members in increasing order.
    std::vector<int> Members() const;
    bool operator==(const RankSet& other) const { return words_ == other.words_; }

   private:
    std::vector<std::uint64_t> words_;
  };

  // Elements [begin, next interval's begin or the buffer's end) hold `ranks`.
  struct Interval {
    std::int64_t begin = 0;
    RankSet ranks;
  };
  using Intervals = std::vector<Interval>;  // sorted by begin; first begins at 0

  /// Index of the interval holding `element` (begin <= element).
  static std::size_t Find(const Intervals& list, std::int64_t element);
  /// Makes `element` the begin of an interval (a no-op at an existing edge).
  static void SplitAt(Intervals& list, std::int64_t element, std::int64_t count);
  /// dst slice = src slice (overwrite) or dst |= src, element by element.
  void Apply(const BufferSlice& src, const BufferSlice& dst, bool overwrite);
  /// The sets over [begin, end) of `buffer`: union, and whether all agree.
  RankSet Collect(BufferId buffer, std::int64_t begin, std::int64_t end, bool* uniform) const;
  BufferId OutputBuffer(int rank) const;
  int DefaultChunks(int chunks) const { return chunks > 0 ? chunks : num_ranks_; }

  const Plan* plan_;
  int num_ranks_;
  bool blocks_ = false;              // chunks are count/n blocks (all-to-all), as the generator cuts them
  std::vector<Intervals> buffers_;   // by BufferId
  std::vector<BufferId> output_;     // by rank
};

}  // namespace shardlab
