// TpLayerView: what the app shows of one tensor-parallel (Megatron) layer,
// as plain data a test can check: every weight as a whole matrix cut into
// the blocks each rank holds, the words for how it is cut (read from the
// blocks, never from the tensor's name), where the matrices sit in a panel,
// which ranks compute at the replay time, and short names for the layer's
// collectives.
//
//   A 32×128  split by columns (column-parallel)    B 128×32  split by rows
//   ┌──────┬──────┬──────┬──────┐                   ┌────────────┐
//   │ GPU0 │ GPU1 │ GPU2 │ GPU3 │                   │    GPU0    │
//   └──────┴──────┴──────┴──────┘                   ├────────────┤
//                                                   │    GPU1    │  ...
//   a [128]  ▬▬▬▬▬▬▬▬▬▬▬▬  split in 4 parts
//   b [32]   ▬▬▬▬  replicated (every GPU holds all of it)
//
// Matrices share one scale (pixels per element), so A looks four times
// the size of a square H×H weight; an aspect ratio past kMaxAspect is
// clamped by growing the short side. Vectors (biases, norms) are thin
// strips listed under the matrices or beside them. A replicated matrix is
// drawn as a stack of copies, one per rank, offset a few pixels each.
//
// Invariants the tests check: the blocks of a split weight cover every
// element exactly once, a replicated one exactly tp times (BlockCoverage);
// every rectangle of LayoutTpWeights lies inside the panel, and no two
// items overlap.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/gui/model/timeline_store.h"
#include "app/gui/model/topology_layout.h"
#include "engine/algorithms/tensor_parallel.h"

namespace shardlab::gui {

/// How a weight is spread over the ranks, read from its blocks.
enum class TpSplit : std::uint8_t {
  kColumns,     // every rank holds all rows and its own columns
  kRows,        // every rank holds all columns and its own rows
  kParts,       // a vector cut into one range per rank
  kReplicated,  // every rank holds the whole tensor
  kOther,       // anything else (blocks of a grid, uneven cover)
};

struct TpRankBlock {
  int rank = 0;
  TpBlock block;
  BufferId buffer = kNoBuffer;  // the rank's buffer holding it
};

/// One weight of the layer with every rank's block of it.
struct TpWeightMatrix {
  std::string tensor;                // "A", "Wq", "b2" as the engine names it
  std::int64_t rows = 0, cols = 0;   // of the single-device tensor
  bool vector = false;               // one row or one column: drawn as a strip
  std::vector<TpRankBlock> blocks;   // by rank, then as the engine listed them
  TpSplit split = TpSplit::kOther;
  int coverage = 0;                  // BlockCoverage of the blocks

  std::int64_t length() const { return rows * cols; }  // elements
};

/// The weights (role kWeight) of `blocks`, in the order they first appear,
/// each with its blocks, split and coverage.
std::vector<TpWeightMatrix> TpWeightMatrices(const std::vector<TpTensorBlock>& blocks);
/// The weights of `layer` in the order the engine lists the layer's
/// tensors (TpLayerTensors: Wq, bq, Wk, ... then A, a, B, b), any it does
/// not list after them.
std::vector<TpWeightMatrix> TpWeightMatrices(const TpLayerPlan& layer);

/// How `blocks` cut a rows × cols tensor (see TpSplit). A vector is a
/// tensor with one row or one column; its ranges make kParts.
TpSplit ClassifySplit(std::int64_t rows, std::int64_t cols, const std::vector<TpRankBlock>& blocks);

/// How many blocks cover each element of the rows × cols tensor when that
/// number is the same for every element (1: an exact split; tp: every rank
/// holds a copy); -1 when some element is covered more or less often than
/// another, or a block reaches outside the tensor.
int BlockCoverage(std::int64_t rows, std::int64_t cols, const std::vector<TpRankBlock>& blocks);

/// The caption under a weight, longest first, for the view to take the
/// first that fits: {"A: split by columns (column-parallel)", "A: by
/// columns", "A: cols"}; "B: split by rows (row-parallel)"; "b: replicated
/// (every GPU holds all of it)"; "a: split in 4 parts (one per GPU)".
std::vector<std::string> TpSplitCaptions(const TpWeightMatrix& matrix);

/// A weight's title over its drawing: "A 32×128", or "a [128]" for a vector.
std::string TpWeightTitle(const TpWeightMatrix& matrix);

/// "rows 0-31, cols 32-63 (32×32)" or, for a vector, "elements 32-63 (32)".
std::string TpBlockRange(const TpWeightMatrix& matrix, const TpRankBlock& block);

/// "GPUs 0-3", "GPU 2", "GPUs 0, 2".
std::string RankList(const std::vector<int>& ranks);

/// Where one weight goes in the panel.
struct TpWeightBox {
  int matrix = 0;                 // index into the matrices laid out
  Rect item;                      // everything of it: text lines and drawing
  Rect title;                     // "A 32×128" (matrices) or "a [128]" (vectors)
  Rect caption;                   // the split in words
  Rect shape;                     // the matrix or strip itself
  std::vector<Rect> blocks;       // one per block of the matrix, in its order
};

struct TpWeightLayout {
  std::vector<TpWeightBox> boxes;  // matrices first, then vectors
  double px_per_element = 0;       // the matrices' common scale
  float height = 0;                // what the boxes need; may exceed the panel's
};

/// Geometry constants of the layout, in pixels.
inline constexpr double kMaxAspect = 4.0;      // a matrix drawn wider than 4:1 gets taller
inline constexpr float kMinMatrixSidePx = 18.0f;
inline constexpr float kMinMatrixItemPx = 96.0f;  // room for a caption under a thin matrix (and its title)
inline constexpr float kStripPx = 12.0f;       // a vector's thickness
inline constexpr float kStackStepPx = 4.0f;    // offset between copies of a replicated matrix
inline constexpr float kItemGapPx = 14.0f;

/// Lays out `matrices` in a panel of `width` × `height` pixels at (0, 0):
/// the matrices at the largest common scale that fits, flowed in rows (or
/// in columns, when that draws them at least 10% larger), the vectors one
/// per line under them or in a column at their right (likewise); spare
/// width then lengthens the matrices' captions. `line_h` is a text line's height and `text_w` measures a
/// string (the app passes ImGui's; tests a fixed advance).
TpWeightLayout LayoutTpWeights(const std::vector<TpWeightMatrix>& matrices, float width, float height,
                               float line_h, const std::function<float(const std::string&)>& text_w);

/// What one rank's compute lane does at a moment.
struct RankCompute {
  bool busy = false;           // an op runs at t (one that starts exactly at t counts)
  bool just_done = false;      // else an op ended exactly at t: the replay paused after its step
  Phase phase = Phase::kNone;  // of that op (forward, backward)
  int op = -1;                 // that op
  bool lit() const { return busy || just_done; }
};

/// Every rank of `plan` at `t_ns`: the blocks of lit ranks light up, so
/// stepping (which pauses at a step's end) shows the compute it just did.
std::vector<RankCompute> RanksComputingAt(const TimelineStore& store, const Plan& plan, TimeNs t_ns);

/// The buffers compute op `op`'s kernels read or write, sorted: a block
/// whose buffer is among them is in use by that op (attention's weights
/// while attention runs, the MLP's after). Empty for other ops.
std::vector<BufferId> BuffersOfOp(const Plan& plan, int op);

/// Short names of the layer's collectives, numbered per kind in plan order
/// so every one is unique: AR1, AR2 (all-reduce), RS1 and AG1 (sequence
/// parallelism's reduce-scatter and all-gather).
struct TpCollectiveName {
  int seq = -1;              // the ops' collective_seq
  std::string tag;           // "AR1"
  std::string name;          // "AR1 fwd"
  std::string what;          // the engine's words: "MLP output (g)"
  bool two_passes = false;   // an all-reduce: a reduce-scatter, then an all-gather pass
  bool forward = true;
};
std::vector<TpCollectiveName> NameTpCollectives(const std::vector<TpCollective>& collectives);

/// The name whose seq is `seq`, or null.
const TpCollectiveName* FindTpCollective(const std::vector<TpCollectiveName>& names, int seq);

}  // namespace shardlab::gui
