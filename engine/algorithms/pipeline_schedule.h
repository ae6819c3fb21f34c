// Pipeline-parallel schedules as pure orders: for each stage, the sequence
// of forward (F) and backward (B) slots it runs. No Plan and no timing; the
// Plan builder turns these orders into kernels and sends.
//
// The model is cut into p stages (one per GPU); a step pushes m
// micro-batches through it. Stage s runs F(mb) after stage s-1 did, and
// B(mb) after its own F(mb) and after stage s+1's B(mb). Timelines for
// p = 4, m = 6, every slot one tick (digit n: F of micro-batch n; letter:
// its B, a = 0; dot: idle):
//
//   GPipe: all forwards, then all backwards; stage s holds m activations.
//     s0  012345......abcdef
//     s1  .012345....abcdef.
//     s2  ..012345..abcdef..
//     s3  ...012345abcdef...
//
//   1F1B (PipeDream-Flush): p-s-1 warm-up forwards, then one forward and
//   the oldest backward in turn, then the remaining backwards. Same step
//   time, but stage s holds at most min(m, p-s) activations.
//     s0  0123...a4b5c.d.e.f
//     s1  .012..a3b4c5d.e.f.
//     s2  ..01.a2b3c4d5e.f..
//     s3  ...0a1b2c3d4e5f...
//
//   Both idle (p-1)/m of the useful time: (p-1)/(m+p-1) of the step.
//
//   Interleaved 1F1B (Megatron-LM): stage s holds v model chunks, the
//   global chunks s, s+p, s+2p, ..., so a micro-batch loops v times around
//   the stages. Micro-batches go in groups of p: a stage runs chunk 0 for
//   the whole group, then chunk 1, ... (backwards from chunk v-1 down).
//   A slot is 1/v of a stage's work, so the bubble shrinks to (p-1)/(v*m)
//   of the useful time (m a multiple of p), for v times more sends.
//   p = 2, m = 4, v = 2 (second row: the local chunk of each slot):
//     s0  01012a3b2a3b.c.dcd
//         001101011010 1 100
//     s1  .010a1b2a3b2c3dcd.
//          0011110000111100
//
// Every order runs without deadlock when each stage takes its slots in
// order and waits only for its inputs (tested for p 1..8, m 1..17, v 2..4);
// for that, the interleaved schedule's warm-up departs from Megatron's when
// the last group is partial (see pipeline_schedule.cpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace shardlab {

// Naive model parallelism (seed 000 §2) is the same cut of the layers over
// the GPUs with the whole batch as one micro-batch: F then B, one stage
// at a time, every other GPU idle, (p-1)/p of the step:
//     s0  0......a
//     s1  .0....a.
//     s2  ..0..a..
//     s3  ...0a...
enum class PipelineSchedule : std::uint8_t { kGPipe, k1F1B, kInterleaved1F1B, kZeroBubbleH1, kNaive };

/// "gpipe", "1f1b", "interleaved", "zb-h1", "naive" (CLI spelling).
const char* PipelineScheduleName(PipelineSchedule s);
/// Parses the CLI spelling; throws Error(kInvalidInput) listing the valid ones.
PipelineSchedule ParsePipelineSchedule(std::string_view name);
/// Human title: "GPipe", "1F1B (PipeDream-Flush)", "interleaved 1F1B",
/// "ZB-H1 (zero bubble)".
const char* PipelineScheduleTitle(PipelineSchedule s);
/// True for schedules that split the backward pass into B (input gradient)
/// and W (weight gradient) slots.
bool SplitsBackward(PipelineSchedule s);

/// What a slot computes. kBackward is the whole backward pass, or only the
/// input gradient when the schedule splits it; kWeight is the weight
/// gradient of a split backward (ZB-H1).
enum class PipelinePass : std::uint8_t { kForward, kBackward, kWeight };

/// One unit of work on a stage: forward or backward of one micro-batch
/// through one of the stage's model chunks (chunk is 0 unless interleaved).
struct PipelineSlot {
  PipelinePass pass = PipelinePass::kForward;
  int microbatch = 0;
  int chunk = 0;  // local model chunk on this stage, 0 .. chunks-1
  bool operator==(const PipelineSlot&) const = default;
};

struct PipelineShape {
  int stages = 4;        // p
  int microbatches = 8;  // m
  int chunks = 1;        // v: model chunks per stage (interleaved only; must be 1 otherwise)
};

/// Throws Error(kInvalidInput) starting with the field ("stages: ", "microbatches: ",
/// "chunks: ") unless 1 <= stages <= 4096, 1 <= microbatches <= 65536 and chunks is 1
/// (gpipe, 1f1b) or >= 2 (interleaved).
void CheckPipelineShape(PipelineSchedule s, const PipelineShape& shape);

/// The order in which each stage runs its slots: result[stage] has 2*m*v slots
/// (3*m for zb-h1: F, B and W of each micro-batch).
/// Throws like CheckPipelineShape.
std::vector<std::vector<PipelineSlot>> PipelineOrder(PipelineSchedule s,
                                                     const PipelineShape& shape);

/// Global model chunk index of local chunk `chunk` on `stage`: chunk*p + stage
/// (Megatron's interleaving: stage s holds model chunks s, s+p, s+2p, ...).
int GlobalChunk(const PipelineShape& shape, int stage, int chunk);

/// Formula bubble relative to useful time: (p-1)/m for gpipe and 1f1b, (p-1)/(v*m)
/// interleaved, (p-1)/(3m) zb-h1 (F = B = W, m >= p).
double FormulaBubbleOverUseful(PipelineSchedule s, const PipelineShape& shape);
/// Formula bubble as share of the whole step: (p-1)/(m+p-1) for gpipe and 1f1b,
/// (p-1)/(v*m+p-1) interleaved, (p-1)/(3m+p-1) zb-h1.
double FormulaBubbleOfStep(PipelineSchedule s, const PipelineShape& shape);
/// The two formulas as text, "(p-1)/m" and "(p-1)/(m+p-1)" and so on, for reports.
const char* FormulaBubbleOverUsefulText(PipelineSchedule s);
const char* FormulaBubbleOfStepText(PipelineSchedule s);

/// Peak number of activations held at once on `stage` (chunk activations when
/// interleaved): gpipe m; 1f1b min(m, p - stage); zb-h1 min(m, p), since a W
/// runs `stage` slots after its B and the activation is kept until then;
/// interleaved PeakInFlight of the order.
int FormulaPeakInFlight(PipelineSchedule s, const PipelineShape& shape, int stage);
/// Peak of (forwards done - backwards done) walking `order` (one stage's
/// slots); with a split backward an activation is held until its W.
int PeakInFlight(const std::vector<PipelineSlot>& order);

}  // namespace shardlab
