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

/// "data parallel" for stage 0, else "ZeRO-1" .. "ZeRO-3".
std::string ZeroStageName(int stage);

/// What the stage shards: "nothing sharded: every rank holds all model
/// states", "optimizer states sharded", ... (stages outside 0..3: "").
std::string ZeroStageSharding(int stage);

/// A parameter count as people write it: "1.007B", "175B", "350M", "16.64k";
/// four significant digits, trailing zeros dropped.
std::string ParameterCountText(double count);

/// Bytes in powers of ten with four significant digits, as the ZeRO paper
/// writes them: "120.0 GB", "31.41 GB", "1.875 GB", "512 B".
std::string ModelBytesText(double bytes);

}  // namespace shardlab
