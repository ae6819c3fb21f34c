// Model-state memory per GPU under data parallelism and ZeRO, as formulas:
// what DeepSpeed's estimators print, and what the seed texts teach.
//
//   stage 0   (2 + 2 + K)·Ψ           fp16 parameters, fp16 gradients, K bytes of
//   stage 1   4·Ψ + K·Ψ/N             optimizer state per parameter
//   stage 2   2·Ψ + (2 + K)·Ψ/N
//   stage 3   (4 + K)·Ψ/N
//
// K = 12 (the ZeRO paper: fp32 master copy, Adam m and v) or K = 8 (the seed
// texts: Adam m and v only, 12Ψ in all for stage 0). Activations and
// temporary buffers come on top and depend on the model and batch.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/units.h"

namespace shardlab {

struct ZeroMemoryFormula {
  double parameters = 0, gradients = 0, optimizer_states = 0;  // bytes per GPU
  double total() const { return parameters + gradients + optimizer_states; }
};

/// Per-GPU model-state bytes of `stage` (0-3) for Ψ parameters over N ranks
/// with K bytes of optimizer state per parameter.
ZeroMemoryFormula ZeroMemoryPerGpu(double parameters, int ranks, int stage, int k_bytes);

/// "(2+2+K)Ψ" ... with K spelled out: the formula's text for `stage`.
std::string ZeroMemoryFormulaText(int stage, int k_bytes);

/// Parses a parameter count: "175B", "7.5B", "1.3b", "350M", "125k", or a
/// plain integer. Throws Error(kInvalidInput) "params: ...".
double ParseParameterCount(const std::string& text);

}  // namespace shardlab
