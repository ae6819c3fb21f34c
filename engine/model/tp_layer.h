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

namespace shardlab {

enum class TpLayerKind : std::uint8_t { kColumnLinear, kRowLinear, kMlp };

/// "column", "row", "mlp" (CLI spelling) and back; the parser throws
/// Error(kInvalidInput) "layer: ..." listing them.
const char* TpLayerKindName(TpLayerKind kind);
TpLayerKind ParseTpLayerKind(std::string_view name);

struct TpLayerConfig {
  TpLayerKind kind = TpLayerKind::kMlp;
  int tokens = 64;  // T
  int hidden = 64;  // H
  int ffn = 0;      // F; 0: 4H for the MLP, H for the linears
  int tp = 2;       // ranks the layer is split over

  int split_width() const;  // F with its default applied
};

/// Throws Error(kInvalidInput) naming the field: "tokens: ", "hidden: ",
/// "ffn: " (F must split evenly over tp, as Megatron requires), "tp: ".
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
