// Int8 weights with one scale per output channel, for the decode matmuls:
//
//   W[K×N] (column j = output channel j)   s_j = max_i |W_ij| / 127
//   q_ij = round(W_ij / s_j) ∈ [−127, 127]  W'_ij = q_ij · s_j
//
// Memory: K·N bytes plus N scales (fp16) instead of 2·K·N (fp16) or 4·K·N
// (fp32). The error of one weight is at most s_j / 2, a relative error of
// at most 1/254 of the channel's largest weight. Decode reads every weight
// once per step and is bound by memory bandwidth, so halving the bytes
// (fp16 → int8) nearly halves the step (step_cost.h prices it).
#pragma once

#include <cstdint>
#include <vector>

namespace shardlab {

/// Quantises row-major w[rows×cols] per column and returns W' (the values
/// an int8 kernel multiplies by, dequantised). `scales` receives s_j.
std::vector<double> QuantizeInt8PerChannel(const std::vector<double>& w, std::int64_t rows, std::int64_t cols,
                                           std::vector<double>* scales = nullptr);

/// Bytes of an int8 matrix with fp16 per-channel scales.
std::int64_t Int8MatrixBytes(std::int64_t rows, std::int64_t cols);

}  // namespace shardlab
