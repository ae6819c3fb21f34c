// The collectives' table: everything the engine and the front ends know
// about one collective kind, in one CollectiveDef, as nccl-tests keeps one
// file per collective. Each kind's def is one file,
// engine/algorithms/collectives/NAME.cpp, that defines
// `void RegisterCollective_NAME()` (CMake finds it and calls it before the
// first lookup, as it does for the scenarios); nothing else switches on
// the kind:
//
//   CollectiveDef                  used by
//   name, title, tag, nccl_tests   parsing and text (collective.h), op labels
//   busbw_factor, busbw_formula    metrics (run/metrics.h), the app's metrics panel
//   reduces, root                  parameter checks, the NCCL op, the formula's pairs
//   layout, chunks                 buffers (collective.h), verify, ChunkState, the app
//   algos: build, steps, ops, cost the generators, ExpectedSteps, the size guard,
//                                  the alpha-beta formula (scenarios/collective_scenario)
//   input, final_contributors      chunk semantics: ChunkState, the app's buffer view
//   reference                      the expected output (algorithms/verify.cpp)
//   library, nccl_phase, ...       the NCCL counterpart (algorithms/nccl_plan.cpp)
//
// The table lives here, below run/ and algorithms/, so that the executor's
// chunk state and metrics read it without the generators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/op_kinds.h"
#include "engine/core/units.h"
#include "engine/plan/collective_kind.h"
#include "engine/plan/plan.h"

namespace shardlab {

/// A rank's buffers.
enum class CollectiveLayout : std::uint8_t {
  kInPlace,   // one "data" buffer per rank, input and output (buffer id r)
  kSendRecv,  // "send" (input, id r) and "recv" (output, id ranks + r, zero at the start)
};

/// How a rank's output is cut into n chunks (ChunkState, the app's cells).
enum class ChunkCut : std::uint8_t {
  kEven,    // chunk c = [ChunkBegin(c), ChunkBegin(c+1)): sizes differ by at most one
  kBlocks,  // chunk c = [c*(count/n), (c+1)*(count/n)); the last count % n elements in none
};

/// The root's part in the data's path.
enum class RootRole : std::uint8_t {
  kNone,    // no root
  kSource,  // the data leaves the root (broadcast)
  kSink,    // the data arrives at the root (reduce)
};

/// Elements [begin, end) of a buffer; begin == end: none.
struct ElementRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

/// The expected output, region by region (the reference). verify.cpp
/// compares each region against the inputs it regenerates; the table test
/// fills buffers from it. Regions a kind does not name are not checked.
class ReferenceSink {
 public:
  virtual ~ReferenceSink() = default;
  /// Rank `rank`'s output [begin, end): element i is the reduction
  /// (params.op) of every rank's input element i.
  virtual void Reduced(int rank, std::int64_t begin, std::int64_t end) = 0;
  /// Rank `rank`'s output [begin, end) is rank `from`'s input from element
  /// `from_begin` on.
  virtual void Copied(int rank, std::int64_t begin, std::int64_t end, int from,
                      std::int64_t from_begin) = 0;
  /// Rank `rank`'s output [begin, end) stays zero (never written).
  virtual void Zero(int rank, std::int64_t begin, std::int64_t end) = 0;
};

/// The alpha-beta formula's time and its text, "2(n-1)·(α + M/(n·B)) = ...".
struct CollectiveCost {
  TimeNs ns = 0;
  std::string formula;
};

/// One hand-written algorithm of a collective. The functions get checked
/// parameters (CheckCollectiveParams) of this kind and algorithm.
struct CollectiveAlgoDef {
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  Plan (*build)(const CollectiveParams&) = nullptr;
  /// = the built Plan's num_steps.
  int (*steps)(const CollectiveParams&) = nullptr;
  /// The ops `build` will create (the size guard; an estimate is fine).
  std::int64_t (*ops)(const CollectiveParams&) = nullptr;
  /// The alpha-beta formula for ranks >= 2: α the slowest route's latency,
  /// B the narrowest route's bandwidth among those the algorithm uses.
  CollectiveCost (*cost)(const CollectiveParams&, TimeNs alpha_ns, Gbps gbps) = nullptr;
  /// The labels name the ops' two passes (all-reduce by hand: RS + AG).
  bool two_passes = false;
};

struct CollectiveDef {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  const char* name = "";        // "allreduce": the CLI's spelling (parsed without - _ and case)
  const char* title = "";       // "all-reduce": the word in text
  const char* tag = "";         // "AR": a Gantt bar's name for the call
  const char* nccl_tests = "";  // "all_reduce_perf": nccl-tests' program for it

  /// nccl-tests' bus bandwidth = algbw · busbw_factor(n), n >= 1.
  double (*busbw_factor)(int ranks) = nullptr;
  const char* busbw_formula = "";  // "2(n-1)/n"

  bool reduces = false;  // needs a reduction operator (sum, max, min)
  RootRole root = RootRole::kNone;
  CollectiveLayout layout = CollectiveLayout::kInPlace;
  ChunkCut chunks = ChunkCut::kEven;

  /// Hand-written algorithms, the default first (an empty list: only nccl).
  std::vector<CollectiveAlgoDef> algos;

  // Chunk semantics (ChunkState and the app's buffer view).
  /// The elements of rank `rank`'s input buffer ("data" or "send", of
  /// `count` elements) that hold its own input before the run.
  ElementRange (*input)(const CollectiveParams&, int rank, std::int64_t count) = nullptr;
  /// The ranks whose inputs chunk `chunk` of rank `rank`'s output holds
  /// when the collective is over, ascending; empty: not part of the result.
  std::vector<int> (*final_contributors)(const CollectiveParams&, int rank, int chunk) = nullptr;

  /// The expected output of every rank, region by region.
  void (*reference)(const CollectiveParams&, ReferenceSink&) = nullptr;

  // The NCCL counterpart: the "nccl" algorithm, one library call per rank.
  LibraryCollective library = LibraryCollective::kNone;  // kNone: no nccl algorithm
  Phase nccl_phase = Phase::kNone;                       // the call's op phase
  bool nccl_equal_chunks = false;  // NCCL needs count % ranks == 0

  /// The hand-written algorithm `algo`; nullptr when the kind has none.
  const CollectiveAlgoDef* Algo(CollectiveAlgo algo) const;
  /// Buffer ids of rank r's input and output (layout).
  bool separate_output() const { return layout == CollectiveLayout::kSendRecv; }
  const char* input_buffer() const { return separate_output() ? "send" : "data"; }
  const char* output_buffer() const { return separate_output() ? "recv" : "data"; }
};

/// Adds `def` to the table (or replaces the def of its kind). Throws
/// shardlab::Error when a function is missing, it has no algorithm at all,
/// or its name is another kind's.
void RegisterCollective(CollectiveDef def);

/// The def of `kind`; nullptr when none is registered.
const CollectiveDef* FindCollective(CollectiveKind kind);
/// The def of `kind`; throws shardlab::Error "unknown collective kind N".
const CollectiveDef& CollectiveDefOf(CollectiveKind kind);
/// Every def, in kind order (the built-in ones in the enum's order).
std::vector<const CollectiveDef*> Collectives();

}  // namespace shardlab
