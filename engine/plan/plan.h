// The Plan IR: what every scenario compiles to and every backend executes.
//
//   rank 0:  send ─┐           recv+ ── send ─┐
//   rank 1:        └─► recv+ ── send ─┐       └─► ...
//                                      ...
// A Plan is a DAG of ops. Each op belongs to one rank and one lane, reads or
// writes slices of buffers that live on its rank, and lists the ops it waits
// for. A transfer is two ops, a Send on the source rank and a Recv on the
// destination, that name each other through `match`. `step` is the logical
// algorithm step (one click of "Step" in the app); tags say what the op
// means to a student (phase, micro-batch, layer, chunk).
//
// Ops are kept compact (no per-op heap allocation; dependencies live in one
// flat array) because a paper-sized ring all-reduce over 1,024 ranks has
// about four million of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/units.h"
#include "engine/plan/buffer_slice.h"
#include "engine/plan/kernel.h"
#include "engine/core/op_kinds.h"

namespace shardlab {

using OpId = std::int32_t;
inline constexpr OpId kNoOp = -1;

/// How a backend fills a buffer before the run.
enum class BufferInit : std::uint8_t {
  kZero,
  kRandom,  // FillInputs(seed, init_stream): exactly representable values
};

/// What a buffer holds, for memory accounting by category (ZeRO's
/// parameters, gradients and optimizer states; activations; parameters
/// gathered for one layer).
enum class MemoryCategory : std::uint8_t {
  kOther, kParameters, kGradients, kOptimizerStates, kActivations, kGatheredParameters,
};
inline constexpr int kMemoryCategoryCount = 6;
const char* MemoryCategoryName(MemoryCategory category);  // "optimizer states"

struct Buffer {
  std::string name;          // "data", "send", "recv", "act.mb3" ...
  std::int32_t rank = 0;
  std::int64_t count = 0;    // elements
  DType dtype = DType::kF32;
  BufferInit init = BufferInit::kZero;
  /// kRandom: the FillInputs stream (-1: the buffer's id) and a scale applied
  /// after filling. Model parameters use a stream per (layer, tensor), so
  /// every partition of a model starts from the same weights.
  std::int64_t init_stream = -1;
  float init_scale = 1.0f;
  /// kRandom: which elements of the stream the buffer holds, so that a shard
  /// of a larger tensor starts with that tensor's values. Element i reads
  /// stream index init_offset + (i / init_row) * init_stride + i % init_row
  /// (init_row 0: init_offset + i). A column block of a row-major R x C
  /// tensor, columns [c0, c0 + w): init_offset c0, init_row w, init_stride C.
  std::int64_t init_offset = 0;
  std::int64_t init_row = 0;
  std::int64_t init_stride = 0;

  MemoryCategory category = MemoryCategory::kOther;
  /// Allocated when the first op that touches it starts and freed when the
  /// last one ends (ZeRO-3's gathered layer parameters); otherwise it lives
  /// for the whole run.
  bool transient = false;

  Bytes size_bytes() const { return count * DTypeBytes(dtype); }
};

/// Phase of an op, for colour and text in the views.
enum class Phase : std::uint8_t {
  kNone, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll,
  kForward, kBackward, kOptimizer,
  kWeightGrad,  // the weight-gradient half of a split backward (ZB-H1's W)
  // A mixture-of-experts layer: router and top-k, tokens to their experts'
  // ranks (pack + all-to-all), the experts' MLPs, results back and summed.
  kRouter, kDispatch, kExpert, kCombine,
};
const char* PhaseName(Phase phase);

struct OpTags {
  Phase phase = Phase::kNone;
  std::int32_t chunk = -1;       // which chunk of the buffer
  std::int32_t microbatch = -1;
  std::int32_t layer = -1;
};

/// What one collective call does, in the words of the generator that made
/// it: every op whose collective_seq is its index in Plan::collectives
/// belongs to it. The op labels (op_label.h) read it; per call, not per
/// op, so a Plan of millions of ops carries a few strings per call.
struct CollectiveNote {
  std::string tag;          // short, for a Gantt bar: "AG L3 fwd", "AR1 fwd", "TP g3", "RS b1"
  std::string what;         // a phrase: "all-gather of layer 3's parameters before its forward"
  bool two_passes = false;  // an all-reduce run as two passes its ops' phases name (RS, AG)
};

struct Op {
  OpKind kind = OpKind::kCompute;
  Lane lane = Lane::kCompute;
  ReduceOp reduce = ReduceOp::kNone;
  LibraryCollective library = LibraryCollective::kNone;  // kCollective: which call
  std::int32_t rank = 0;
  std::int32_t peer = -1;            // the other rank of a Send/Recv
  OpId match = kNoOp;                // the paired Recv/Send
  std::int32_t step = 0;
  std::int32_t collective_seq = -1;  // sequence number of its collective call
  // What the simulator reads for every op comes first, in the op's first
  // 64 bytes: a timing-only run then touches one cache line per op.
  Bytes bytes = 0;                   // bytes moved (Send/Recv) or touched
  Flops flops = 0;
  std::uint32_t dep_begin = 0;       // into Plan::deps
  std::uint32_t dep_count = 0;
  std::int32_t kernel_begin = 0;     // Compute: into Plan::kernels
  std::int32_t kernel_count = 0;
  BufferSlice src;                   // read by Send, Reduce, Copy
  BufferSlice dst;                   // written by Recv, Reduce, Copy
  OpTags tags;
};

struct Plan {
  std::string name;                  // "ring all-reduce, 8 ranks, 64 MiB"
  std::int32_t num_ranks = 0;
  std::int32_t num_steps = 0;        // steps are 0 .. num_steps-1
  std::vector<Buffer> buffers;
  std::vector<Op> ops;
  std::vector<OpId> deps;            // flat storage of every op's deps
  std::vector<KernelCall> kernels;   // flat storage of Compute ops' arithmetic
  /// Index = collective_seq; calls past the end, or with an empty tag,
  /// have no note (their ops are named from their tags alone).
  std::vector<CollectiveNote> collectives;

  /// The ops that `op` waits for.
  const OpId* deps_begin(const Op& op) const { return deps.data() + op.dep_begin; }
  const OpId* deps_end(const Op& op) const { return deps.data() + op.dep_begin + op.dep_count; }
};

/// Appends ops to a Plan; the generators' only way to write one.
class PlanBuilder {
 public:
  explicit PlanBuilder(std::string name, int num_ranks);

  BufferId AddBuffer(int rank, std::string name, std::int64_t count,
                     DType dtype = DType::kF32, BufferInit init = BufferInit::kZero);
  BufferId AddBuffer(Buffer buffer);

  /// Adds an op (its dep fields are filled from `deps`) and returns its id.
  OpId AddOp(Op op, std::initializer_list<OpId> deps = {});
  OpId AddOp(Op op, const std::vector<OpId>& deps);

  /// Adds a Compute op that runs `kernels` in order; its flops and bytes
  /// are their sum (plus whatever `op` already carries).
  OpId AddCompute(Op op, const std::vector<KernelCall>& kernels, const std::vector<OpId>& deps);

  /// Adds a matched Send (on `from`) and Recv (on `to`). The Send reads
  /// `src`, the Recv writes `dst` with `reduce`. Returns {send, recv}.
  struct Transfer { OpId send; OpId recv; };
  Transfer AddTransfer(int from, int to, BufferSlice src, BufferSlice dst, ReduceOp reduce,
                       int step, OpTags tags, const std::vector<OpId>& send_deps,
                       const std::vector<OpId>& recv_deps, int collective_seq = -1);

  /// Names collective call `seq` (>= 0) for the labels (op_label.h).
  void NoteCollective(int seq, CollectiveNote note);

  const Plan& plan() const { return plan_; }
  const Buffer& buffer(BufferId id) const { return plan_.buffers[id]; }
  std::size_t op_count() const { return plan_.ops.size(); }
  void Reserve(std::size_t ops, std::size_t deps);

  /// Finishes the plan: sets num_steps from the ops and returns it.
  Plan Finish();

 private:
  Plan plan_;
};

/// Bytes and op counts per rank, counted from the Plan.
struct PlanTraffic {
  std::vector<Bytes> sent_bytes;      // by rank
  std::vector<Bytes> received_bytes;  // by rank
  std::int64_t transfers = 0;
};
PlanTraffic CountTraffic(const Plan& plan);

/// The phase of each logical step (index = step), from the first op of
/// that step that has one: what "step 3 of 14 · reduce-scatter" names.
std::vector<Phase> StepPhases(const Plan& plan);

}  // namespace shardlab
