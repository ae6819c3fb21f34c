// The layers tensor parallelism splits, and their single-device reference.
//
//   column linear   Y[T×F] = X[T×H]·A[H×F] + a        A split by columns
//   row linear      Y[T×H] = X[T×F]·W[F×H] + b        W split by rows, X by columns
//   MLP (Megatron)  Y[T×H] = relu(X·A + a)·B + b       A by columns, B by rows
//
// T = batch × sequence tokens, H the hidden size, F the split width (the
// column layer's outputs, the row layer's inputs, the MLP's inner width,
// 4H by default). The MLP's activation is ReLU where Megatron uses GeLU:
// the split and its communication are the same, and ReLU keeps the kernels
// few. A training step's upstream gradient dY is given (a random tensor),
// so forward and backward are checked without a loss on top.
//
// Every tensor comes from its own input stream (TpLayerStream), so a
// shard built as a block of that stream (Buffer::init_offset/row/stride)
// starts with exactly the values the reference uses.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/plan/op_kinds.h"

namespace shardlab {

enum class TpLayerKind : std::uint8_t { kColumnLinear, kRowLinear, kMlp, kAttention, kTransformer };

/// "column", "row", "mlp", "attention", "transformer" (CLI spelling) and
/// back; the parser throws Error(kInvalidInput) "layer: ..." listing them.
const char* TpLayerKindName(TpLayerKind kind);
TpLayerKind ParseTpLayerKind(std::string_view name);

struct TpLayerConfig {
  TpLayerKind kind = TpLayerKind::kMlp;
  int batch = 1;    // B
  int seq = 64;     // S; the layer sees T = B × S tokens (rows b·S + s)
  int hidden = 64;  // H
  int ffn = 0;      // F; 0: 4H for the MLP, H for the linears
  int heads = 0;    // attention heads; 0: H / 128 (GPT-3's head size)
  int tp = 2;       // ranks the layer is split over
  /// Megatron's sequence parallelism: activations outside the split
  /// linears are sharded by token rows, and each all-reduce becomes a
  /// reduce-scatter and an all-gather (MLP, attention, transformer only).
  bool sequence_parallel = false;
  /// Element type of activations and weights; kF16 (tensor cores in the
  /// simulator) is timing-only: the host kernels compute in float32.
  DType dtype = DType::kF32;

  std::int64_t tokens() const { return std::int64_t{batch} * seq; }
  int split_width() const;  // F with its default applied
  int head_count() const;   // heads with its default applied (0 if none)
  bool has_attention() const {
    return kind == TpLayerKind::kAttention || kind == TpLayerKind::kTransformer;
  }
};

/// Throws Error(kInvalidInput) naming the field: "batch: ", "seq: ",
/// "hidden: ", "ffn: " (F must split evenly over tp, as Megatron requires),
/// "heads: " (heads must divide H, and split evenly over tp), "tp: ",
/// "sequence-parallel: " (T must split evenly over tp; not for one linear).
void CheckTpLayerConfig(const TpLayerConfig& config);

/// The tensors of a layer; the second linear's are the MLP's only.
enum class TpTensor : std::uint8_t { kInput, kWeight1, kBias1, kWeight2, kBias2, kOutputGrad };
/// Input stream and scale of a tensor (weights He-uniform ±sqrt(6/fan-in),
/// biases ±0.1, input and output gradient ±1).
std::int64_t TpLayerStream(TpTensor tensor);
float TpLayerScale(const TpLayerConfig& config, TpTensor tensor);

/// The whole layer on one device, row-major, plain loops (double sums).
struct TpLayerReference {
  TpLayerReference(const TpLayerConfig& config, std::uint64_t seed);

  TpLayerConfig config;
  std::vector<float> x, w1, b1, w2, b2, dy;  // inputs (w2, b2 empty unless MLP)
  std::vector<float> y;                      // forward output
  std::vector<float> dx, dw1, db1, dw2, db2; // gradients
};

}  // namespace shardlab
