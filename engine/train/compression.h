// Gradient compression for the data-parallel all-reduce (seed 001 §19.2.2):
// fewer bytes on the wire for some error in the sum.
//
//   none   ring all-reduce of fp32:        2(N−1)/N · 4Ψ bytes sent per rank
//   fp16   the ring carries fp16:           2(N−1)/N · 2Ψ
//   bf16   the ring carries bf16:           2(N−1)/N · 2Ψ (fp32's range,
//          8 significant bits against fp16's 11)
//   int8   the ring carries int8 + one fp32 scale per bucket of E elements
//          (scale = max|x|/127 over the bucket):  2(N−1)/N · (Ψ + 4Ψ/E)
//   topk   each rank sends its k = ⌈fΨ⌉ largest |g + residual| as (index,
//          value) pairs, an all-gather:    (N−1) · 8k
//
// fp16, bf16 and int8 run the ring's reduce-scatter with the partial sums
// re-quantised at every hop, and the all-gather of the reduced chunks
// quantised once more, so every rank ends with the same numbers. Each
// quantisation moves a value by at most half its step (fp16: u·|x|, u =
// 2^-11; bf16: u = 2^-8; int8: scale/2); the sum's error is bounded by the half-steps of
// all the quantisations an element went through (N of them) plus fp32's
// rounding of the additions — the bound tests check element by element.
//
// Top-k with error feedback (Stich et al., Lin et al.'s DGC) keeps what a
// rank did not send in a residual that joins the next step's gradient, so
// nothing is lost, only delayed; without it the dropped part is gone and
// training drifts from the uncompressed run.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/core/op_kinds.h"
#include "engine/core/units.h"

namespace shardlab {

enum class Compression : std::uint8_t { kNone, kFp16, kBf16, kInt8, kTopK };
const char* CompressionName(Compression c);  // "none", "fp16", "bf16", "int8", "topk"
/// Throws Error(kInvalidInput) "compress: unknown compression 'int3' (...)".
Compression ParseCompression(std::string_view text);
/// What a mixed-precision run's gradients travel as: fp16 -> kFp16, bf16 ->
/// kBf16 (kNone for fp32).
Compression WireCompression(DType working);
/// fp16 or bf16: a rounding to a narrower float, with a relative half-step.
bool IsFloatCompression(Compression c);

struct CompressionConfig {
  Compression kind = Compression::kNone;
  std::int64_t bucket_elements = 1024;  // int8: elements per scale
  double topk_fraction = 0.01;          // topk: f in (0, 1]
  bool error_feedback = true;           // topk: keep what was not sent
};

/// Throws Error(kInvalidInput) "topk: ..." / "compress_bucket: ...".
void CheckCompressionConfig(const CompressionConfig& config);

/// Bytes one rank sends for one all-reduce of `count` fp32 elements over
/// `ranks` ranks (the formulas above; ChunkCount's split for the ring).
Bytes CompressedAllReduceBytes(const CompressionConfig& config, std::int64_t count, int ranks);
/// k of top-k for `count` elements.
std::int64_t TopKCount(const CompressionConfig& config, std::int64_t count);

struct CompressedSum {
  std::vector<float> sum;        // what every rank holds afterwards
  std::vector<double> bound;     // per element: the bound of |sum − exact sum| (fp16, bf16, int8);
                                 // empty for none and topk
  Bytes bytes_sent_per_rank = 0; // counted while moving, the most any rank sent
};

/// All-reduces (sums) `grads[r]` of every rank through the compression;
/// `residuals[r]` (topk with error feedback) is read and updated.
CompressedSum CompressedAllReduce(const CompressionConfig& config,
                                  const std::vector<std::vector<float>>& grads,
                                  std::vector<std::vector<float>>* residuals);

}  // namespace shardlab
