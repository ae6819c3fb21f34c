// Pipeline schedule orders (GPipe, 1F1B, interleaved 1F1B) and their
// formula facts. See pipeline_schedule.h for the schedules themselves.
#include "engine/algorithms/pipeline_schedule.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"

namespace shardlab {

namespace {

constexpr int kMaxStages = 4096;
constexpr int kMaxMicrobatches = 65536;

PipelineSlot Forward(int microbatch, int chunk) {
  return {PipelinePass::kForward, microbatch, chunk};
}
PipelineSlot Backward(int microbatch, int chunk) {
  return {PipelinePass::kBackward, microbatch, chunk};
}

// The k-th forward (or backward) slot of an interleaved stage, as Megatron's
// schedule table: micro-batches in groups of p, and within a group every
// chunk runs the whole group before the next chunk starts. A last group of
// q = m % p micro-batches cycles over its q (Megatron-LM's
// get_schedule_table does the same), so no chunk ever waits for
// micro-batches that do not exist. Backwards walk the chunks from v-1 down.
PipelineSlot InterleavedSlot(const PipelineShape& shape, int k, bool backward) {
  const int p = shape.stages, m = shape.microbatches, v = shape.chunks;
  const int group = k / (p * v);
  const int first = group * p;  // first micro-batch of the group
  const int size = std::min(p, m - first);
  const int in_group = k - group * p * v;
  int chunk = in_group / size;
  if (backward) chunk = v - 1 - chunk;
  return backward ? Backward(first + in_group % size, chunk) : Forward(first + in_group % size, chunk);
}

std::vector<PipelineSlot> GPipeStage(const PipelineShape& shape) {
  std::vector<PipelineSlot> order;
  for (int mb = 0; mb < shape.microbatches; ++mb) order.push_back(Forward(mb, 0));
  for (int mb = 0; mb < shape.microbatches; ++mb) order.push_back(Backward(mb, 0));
  return order;
}

// PipeDream-Flush: enough warm-up forwards to fill the pipe below this
// stage, then one forward and the oldest backward in turn, then drain.
std::vector<PipelineSlot> OneFOneBStage(const PipelineShape& shape, int stage) {
  const int m = shape.microbatches;
  const int warmup = std::min(m, shape.stages - stage - 1);
  std::vector<PipelineSlot> order;
  int next_f = 0, next_b = 0;
  while (next_f < warmup) order.push_back(Forward(next_f++, 0));
  while (next_f < m) {
    order.push_back(Forward(next_f++, 0));
    order.push_back(Backward(next_b++, 0));
  }
  while (next_b < m) order.push_back(Backward(next_b++, 0));
  return order;
}

// Megatron's forward_backward_pipelining_with_interleaving: warm-up of
// 2*(p-s-1) + (v-1)*p forwards, i.e. chunks 0..v-2 of the first group (the
// last stage's first backward, chunk v-1 of micro-batch 0, can follow right
// after) plus two per stage below for the round trip. With m == p Megatron
// runs every forward first; so do we. The k-th backward's own forward is
// at most (v-1)*p slots after position k, so a stage never waits on itself.
//
// Deviation: a partial last group (m > p, q = m % p > 0) deadlocks with
// Megatron's counts. There a micro-batch comes back to stage 0 for its next
// chunk after q forward slots instead of p, so stage 0's forward F_k needs
// stage p-1's F_{k-q} early. A stage s with a short warm-up has already
// entered 1F1B and runs F_{k-q} only after backward B_j, j = k-q-w_s-1; when
// B_j is a chunk < v-1 of the last full group it waits on stage 0's backward
// of the next chunk, which stage 0 runs after F_k: a cycle. It breaks when
// w_s >= w_0 - p - q (stage 0 reaches that backward first) or when
// w_s >= (v-1)*p + (v-1)*q - 1 (every such B_j is a chunk v-1 backward,
// which needs no other stage). So every stage's warm-up is raised to at
// least the smaller of the two; one less deadlocks (see the tests).
int InterleavedWarmup(const PipelineShape& shape, int stage) {
  const int p = shape.stages, m = shape.microbatches, v = shape.chunks;
  const int total = m * v;
  if (m == p) return total;
  int warmup = (p - stage - 1) * 2 + (v - 1) * p;
  const int q = m % p;
  if (m > p && q > 0) warmup = std::max(warmup, (v - 1) * p + std::min((v - 1) * q - 1, p - q - 2));
  return std::min(warmup, total);
}

std::vector<PipelineSlot> InterleavedStage(const PipelineShape& shape, int stage) {
  const int total = shape.microbatches * shape.chunks;
  const int warmup = InterleavedWarmup(shape, stage);
  std::vector<PipelineSlot> order;
  int next_f = 0, next_b = 0;
  while (next_f < warmup) order.push_back(InterleavedSlot(shape, next_f++, false));
  while (next_f < total) {
    order.push_back(InterleavedSlot(shape, next_f++, false));
    order.push_back(InterleavedSlot(shape, next_b++, true));
  }
  while (next_b < total) order.push_back(InterleavedSlot(shape, next_b++, true));
  return order;
}

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023): the backward
// is split into B (the input gradient, which the previous stage waits for)
// and W (the weight gradient, which nobody waits for). Stage s runs 1F1B's
// order of F and B, and the W of micro-batch j right after the B of
// micro-batch j + s: the later a stage, the more W's it holds back, and the
// drain, where 1F1B's stages wait for gradients, is filled with them. With
// F, B and W one tick each the step takes 3m + p - 1 ticks once m >= p, so
// the bubble is (p-1)/(3m) of the useful time, a third of 1F1B's. The cost
// is memory: an activation lives until its W, so every stage holds up to
// min(m, p) of them (1F1B's stage 0 peak; its later stages hold fewer).
std::vector<PipelineSlot> ZeroBubbleH1Stage(const PipelineShape& shape, int stage) {
  const int m = shape.microbatches, lag = stage;
  const int warmup = std::min(m, shape.stages - stage - 1);
  std::vector<PipelineSlot> order;
  int next_f = 0, next_b = 0, next_w = 0;
  auto backward_then_weight = [&] {
    order.push_back(Backward(next_b++, 0));
    if (next_b - 1 - lag >= next_w) order.push_back({PipelinePass::kWeight, next_w++, 0});
  };
  while (next_f < warmup) order.push_back(Forward(next_f++, 0));
  while (next_f < m) {
    order.push_back(Forward(next_f++, 0));
    backward_then_weight();
  }
  while (next_b < m) backward_then_weight();
  while (next_w < m) order.push_back({PipelinePass::kWeight, next_w++, 0});
  return order;
}

}  // namespace

const char* PipelineScheduleName(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGPipe: return "gpipe";
    case PipelineSchedule::k1F1B: return "1f1b";
    case PipelineSchedule::kInterleaved1F1B: return "interleaved";
    case PipelineSchedule::kZeroBubbleH1: return "zb-h1";
    case PipelineSchedule::kNaive: return "naive";
  }
  return "?";
}

PipelineSchedule ParsePipelineSchedule(std::string_view name) {
  for (const PipelineSchedule s : {PipelineSchedule::kGPipe, PipelineSchedule::k1F1B,
                                   PipelineSchedule::kInterleaved1F1B, PipelineSchedule::kZeroBubbleH1,
                                   PipelineSchedule::kNaive}) {
    if (name == PipelineScheduleName(s)) return s;
  }
  throw Error("schedule: unknown schedule '" + std::string(name) +
                  "' (choose gpipe, 1f1b, interleaved, zb-h1, naive)",
              ErrorKind::kInvalidInput);
}

const char* PipelineScheduleTitle(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGPipe: return "GPipe";
    case PipelineSchedule::k1F1B: return "1F1B (PipeDream-Flush)";
    case PipelineSchedule::kInterleaved1F1B: return "interleaved 1F1B";
    case PipelineSchedule::kZeroBubbleH1: return "ZB-H1 (zero bubble)";
    case PipelineSchedule::kNaive: return "naive model parallel (one micro-batch)";
  }
  return "?";
}

bool SplitsBackward(PipelineSchedule s) { return s == PipelineSchedule::kZeroBubbleH1; }

void CheckPipelineShape(PipelineSchedule s, const PipelineShape& shape) {
  if (shape.stages < 1 || shape.stages > kMaxStages)
    throw Error(
        "stages: " + std::to_string(shape.stages) + " is outside 1.." + std::to_string(kMaxStages),
        ErrorKind::kInvalidInput);
  if (shape.microbatches < 1 || shape.microbatches > kMaxMicrobatches)
    throw Error("microbatches: " + std::to_string(shape.microbatches) + " is outside 1.." +
                    std::to_string(kMaxMicrobatches),
                ErrorKind::kInvalidInput);
  if (s == PipelineSchedule::kNaive && shape.microbatches != 1)
    throw Error("microbatches: naive model parallelism runs the whole batch as one micro-batch (got " +
                    std::to_string(shape.microbatches) + "); gpipe or 1f1b split it",
                ErrorKind::kInvalidInput);
  if (s == PipelineSchedule::kInterleaved1F1B) {
    if (shape.chunks < 2)
      throw Error("chunks: the interleaved schedule needs at least 2 model chunks per stage, got " +
                      std::to_string(shape.chunks),
                  ErrorKind::kInvalidInput);
    // Keeps 2*m*v slots per stage, and every index, far inside int.
    if (shape.chunks > kMaxStages)
      throw Error("chunks: " + std::to_string(shape.chunks) + " is outside 2.." +
                      std::to_string(kMaxStages),
                  ErrorKind::kInvalidInput);
  } else if (shape.chunks != 1) {
    throw Error("chunks: only the interleaved schedule splits a stage into model chunks (got " +
                    std::to_string(shape.chunks) + ", " + PipelineScheduleName(s) + " needs 1)",
                ErrorKind::kInvalidInput);
  }
}

std::vector<std::vector<PipelineSlot>> PipelineOrder(PipelineSchedule s,
                                                     const PipelineShape& shape) {
  CheckPipelineShape(s, shape);
  std::vector<std::vector<PipelineSlot>> orders;
  orders.reserve(static_cast<std::size_t>(shape.stages));
  for (int stage = 0; stage < shape.stages; ++stage) {
    switch (s) {
      case PipelineSchedule::kGPipe:
      case PipelineSchedule::kNaive: orders.push_back(GPipeStage(shape)); break;
      case PipelineSchedule::k1F1B: orders.push_back(OneFOneBStage(shape, stage)); break;
      case PipelineSchedule::kInterleaved1F1B:
        orders.push_back(InterleavedStage(shape, stage));
        break;
      case PipelineSchedule::kZeroBubbleH1:
        orders.push_back(ZeroBubbleH1Stage(shape, stage));
        break;
    }
  }
  return orders;
}

int GlobalChunk(const PipelineShape& shape, int stage, int chunk) {
  return chunk * shape.stages + stage;
}

// The formulas divide the p-1 slots of fill and drain by an effective
// number of micro-batches: v·m when interleaved (each slot is 1/v of a
// stage), 3m for ZB-H1 (its bubble is (p-1)(T_F + T_B - T_W), a third of
// 1F1B's when F, B and W take equal time).
static double EffectiveMicrobatches(PipelineSchedule s, const PipelineShape& shape) {
  const double m = shape.microbatches;
  if (s == PipelineSchedule::kInterleaved1F1B) return m * shape.chunks;
  if (s == PipelineSchedule::kZeroBubbleH1) return 3 * m;
  return m;
}

double FormulaBubbleOverUseful(PipelineSchedule s, const PipelineShape& shape) {
  return (shape.stages - 1) / EffectiveMicrobatches(s, shape);
}

double FormulaBubbleOfStep(PipelineSchedule s, const PipelineShape& shape) {
  // bubble / (useful + bubble)
  return (shape.stages - 1) / (EffectiveMicrobatches(s, shape) + shape.stages - 1);
}

const char* FormulaBubbleOverUsefulText(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kInterleaved1F1B: return "(p-1)/(v*m)";
    case PipelineSchedule::kZeroBubbleH1: return "(p-1)/(3m)";
    default: return "(p-1)/m";
  }
}

const char* FormulaBubbleOfStepText(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kInterleaved1F1B: return "(p-1)/(v*m+p-1)";
    case PipelineSchedule::kZeroBubbleH1: return "(p-1)/(3m+p-1)";
    default: return "(p-1)/(m+p-1)";
  }
}

int FormulaPeakInFlight(PipelineSchedule s, const PipelineShape& shape, int stage) {
  switch (s) {
    case PipelineSchedule::kGPipe:
    case PipelineSchedule::kNaive: return shape.microbatches;
    case PipelineSchedule::k1F1B: return std::min(shape.microbatches, shape.stages - stage);
    case PipelineSchedule::kInterleaved1F1B: break;
    case PipelineSchedule::kZeroBubbleH1: return std::min(shape.microbatches, shape.stages);
  }
  // No closed form worth keeping in step with the partial-group rules.
  CheckPipelineShape(s, shape);
  return PeakInFlight(InterleavedStage(shape, stage));
}

int PeakInFlight(const std::vector<PipelineSlot>& order) {
  // A split backward frees its activation at W, a whole one at B.
  bool split = false;
  for (const PipelineSlot& slot : order) split = split || slot.pass == PipelinePass::kWeight;
  const PipelinePass frees = split ? PipelinePass::kWeight : PipelinePass::kBackward;
  int held = 0, peak = 0;
  for (const PipelineSlot& slot : order) {
    if (slot.pass == PipelinePass::kForward) ++held;
    if (slot.pass == frees) --held;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace shardlab
