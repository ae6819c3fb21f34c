// Checking a collective's result against a single-buffer reference.
//
// Inputs are FillInputs values (multiples of 1/1024 in [-1, 1)), so sums of
// up to 2^13 of them are exact in float32 in any order, as nccl-tests
// chooses its data: a correct result has max_abs_err == 0.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/core/fill.h"

namespace shardlab {


struct VerifyResult {
  bool correct = false;
  double max_abs_err = 0;
  std::int64_t wrong = 0;      // elements off by more than the tolerance
  std::int64_t checked = 0;    // elements compared
};

/// Reads a buffer's data after the run (from any backend).
using BufferReader = std::function<std::span<const float>(BufferId)>;

/// Recomputes the expected output on one host buffer from the inputs
/// (regenerated from `seed`) and compares every rank's output region.
/// `computed`: the dtype the backend holds the data in (verify/bounds.h's
/// ComputeDType). fp32 compares exactly (to 1e-6 relative); a 16-bit
/// backend rounds every input into the dtype and every partial result of
/// a reduction, so an element of a reduction over n ranks may be off by
/// (u + γ_n)·Σ|x_i| and a moved element by u·|x| (u: the dtype's unit
/// round-off); anything beyond is wrong.
VerifyResult VerifyCollective(const CollectiveParams& params, const Plan& plan,
                              std::uint64_t seed, const BufferReader& read,
                              DType computed = DType::kF32);

}  // namespace shardlab
