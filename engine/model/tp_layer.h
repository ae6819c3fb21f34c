// The layers tensor parallelism splits, and their single-device reference.
//
//   column linear   Y[T×F] = X[T×H]·A[H×F] + a        A split by columns
//   row linear      Y[T×H] = X[T×F]·W[F×H] + b        W split by rows, X by columns
//   MLP (Megatron)  Y[T×H] = relu(X·A + a)·B + b       A by columns, B by rows
//   attention       Q, K, V = X·Wq + bq, ...; per head softmax(QKᵀ/√d)·V; ·Wo + bo
//                   Wq, Wk, Wv by columns (whole heads per rank), Wo by rows
//   transformer     pre-norm: h = X + attention(LN(X)); Y = h + MLP(LN(h))
//
// T = batch × sequence tokens, H the hidden size, F the split width (the
// column layer's outputs, the row layer's inputs, the MLP's inner width,
// 4H by default). Simplifications, none of which changes the split or its
// communication: ReLU where Megatron uses GeLU, no causal mask, LayerNorm
// without learned scale and shift, no dropout. A training step's upstream
// gradient dY is given (a random tensor), so forward and backward are
// checked without a loss on top.
//
// Every tensor comes from its own input stream (TpTensorSpec), so a shard
// built as a block of that stream (Buffer::init_offset/row/stride) starts
// with exactly the values the reference uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/op_kinds.h"

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
  /// Element type of activations and weights; kF16 or kBF16 (tensor cores in the
  /// simulator) are timing-only: the host kernels compute in float32.
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

/// A tensor of the single-device layer, row-major rows × cols, and the
/// FillInputs stream and scale it starts from (weights He-uniform
/// ±sqrt(6/fan-in), biases ±0.1, the input and the output gradient ±1).
/// Biases are one row.
struct TpTensorSpec {
  std::string name;  // "x", "dy", "A", "a", "B", "b", "W", "Wq", "bq", ... "Wo", "bo"
  std::int64_t rows = 0, cols = 0;
  std::int64_t stream = 0;
  float scale = 1.0f;
  bool weight = false;  // a parameter (its gradient is "d" + name)
};

/// The layer's input "x" and upstream gradient "dy", then its weights in
/// order. The MLP's are A[H×F], a[F], B[F×H], b[H]; a lone linear's A, a
/// (column) or W, b (row); attention's Wq, Wk, Wv [H×H] with bq, bk, bv and
/// Wo [H×H] with bo; the transformer's are attention's then the MLP's.
std::vector<TpTensorSpec> TpLayerTensors(const TpLayerConfig& config);
const TpTensorSpec& FindTpTensor(const std::vector<TpTensorSpec>& specs, const std::string& name);

struct TpRefTensor {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> data;
};

/// The whole layer on one device, row-major, plain loops with double
/// sums: the inputs and weights, the output "y", and the gradients "dx" and
/// "d" + each weight's name, for the upstream gradient "dy".
///
///   attention   per batch b and head g (head size d = H/heads):
///               Q = x·Wq + bq, K, V alike; P = softmax(Q_bg·K_bgᵀ/√d) (no
///               causal mask); O_bg = P·V_bg; y = O·Wo + bo
///   transformer pre-norm, as GPT and Megatron:  h = x + attention(LN(x)),
///               y = h + MLP(LN(h)); LN without learned scale and shift
class TpLayerReference {
 public:
  TpLayerReference(const TpLayerConfig& config, std::uint64_t seed);

  const TpLayerConfig& config() const { return config_; }
  /// Throws std::out_of_range for a name the layer does not have.
  const TpRefTensor& tensor(const std::string& name) const;
  bool has(const std::string& name) const;

  /// The forward output for another input of the same shape (for
  /// finite-difference checks of the gradients).
  std::vector<double> Forward(const std::vector<double>& x) const;

 private:
  TpLayerConfig config_;
  std::vector<std::pair<std::string, TpRefTensor>> tensors_;
};

}  // namespace shardlab
