// The reference for every collective, computed element by element from the
// inputs (regenerated with InputValue, never read back from the backend),
// without holding a reference buffer: time is linear in the elements
// checked times the ranks that contribute to each, memory is constant.
#include "engine/algorithms/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/algorithms/collective_internal.h"
#include "engine/core/error.h"
#include "engine/verify/bounds.h"

namespace shardlab {

namespace {

// Counts and measures mismatches. In fp32 the tolerance only guards against
// backends that reduce in another precision; exact inputs give exact sums.
// In a 16-bit dtype it is the rounding bound of VerifyCollective (verify.h),
// from the sum of the magnitudes that made the element (`magnitude`).
struct Tally {
  std::int64_t wrong = 0;
  std::int64_t checked = 0;
  double max_abs_err = 0;
  double unit_roundoff = 0;  // 0: fp32, exact
  double reduce_factor = 0;  // u + γ_n: a reduction's bound per unit of Σ|x_i|

  void Compare(float out, float ref) { Compare(out, ref, std::fabs(static_cast<double>(ref)), false); }
  void Compare(float out, float ref, double magnitude, bool reduced) {
    const double err = std::fabs(static_cast<double>(out) - static_cast<double>(ref));
    double tolerance = 1e-6 * std::max(1.0, std::fabs(static_cast<double>(ref)));
    if (unit_roundoff > 0)
      tolerance = std::max(tolerance, (reduced ? reduce_factor : unit_roundoff) * magnitude);
    ++checked;
    if (!(err <= tolerance)) ++wrong;  // NaN counts as wrong
    if (std::isnan(err)) max_abs_err = std::numeric_limits<double>::infinity();
    else max_abs_err = std::max(max_abs_err, err);
  }
};

float Combine(ReduceOp op, float acc, float x) {
  switch (op) {
    case ReduceOp::kMax: return std::max(acc, x);
    case ReduceOp::kMin: return std::min(acc, x);
    case ReduceOp::kSum:
    case ReduceOp::kNone: return acc + x;
  }
  return acc + x;
}

// Element `index` of the reduction over every rank's input (buffer ids
// 0..ranks-1).
float ReducedInput(const CollectiveParams& params, std::uint64_t seed, std::int64_t index) {
  float acc = InputValue(seed, 0, index);
  for (int r = 1; r < params.ranks; ++r) acc = Combine(params.op, acc, InputValue(seed, r, index));
  return acc;
}

// Σ|x_i| over the ranks' inputs at `index` (a 16-bit reduction's bound).
double InputMagnitude(const CollectiveParams& params, std::uint64_t seed, std::int64_t index) {
  double sum = 0;
  for (int r = 0; r < params.ranks; ++r) sum += std::fabs(static_cast<double>(InputValue(seed, r, index)));
  return sum;
}

// The plan must be the one BuildCollective made from `params`: checks the
// buffer layout the reference relies on.
void CheckPlanLayout(const CollectiveParams& params, const Plan& plan) {
  const bool all_to_all = params.kind == CollectiveKind::kAllToAll;
  const std::size_t expected = static_cast<std::size_t>(params.ranks) * (all_to_all ? 2 : 1);
  if (plan.num_ranks != params.ranks || plan.buffers.size() < expected)
    throw Error("verify: plan '" + plan.name + "' does not match the parameters (" +
                std::to_string(plan.num_ranks) + " ranks and " +
                std::to_string(plan.buffers.size()) + " buffers; expected " +
                std::to_string(params.ranks) + " ranks and " + std::to_string(expected) +
                " buffers)");
  for (std::size_t id = 0; id < expected; ++id) {
    const Buffer& b = plan.buffers[id];
    const int rank = static_cast<int>(id % static_cast<std::size_t>(params.ranks));
    if (b.rank != rank || b.count != params.count)
      throw Error("verify: buffer " + std::to_string(id) + " ('" + b.name + "') of plan '" +
                  plan.name + "' should be rank " + std::to_string(rank) + "'s buffer of " +
                  std::to_string(params.count) + " elements");
  }
}

}  // namespace

VerifyResult VerifyCollective(const CollectiveParams& params, const Plan& plan,
                              std::uint64_t seed, const BufferReader& read, DType computed) {
  CheckCollectiveParams(params);
  CheckPlanLayout(params, plan);
  const int n = params.ranks;
  const std::int64_t count = params.count;

  // The output buffer of each rank: "data", or "recv" for all-to-all.
  const BufferId first_output = params.kind == CollectiveKind::kAllToAll ? n : 0;
  std::vector<std::span<const float>> out(static_cast<std::size_t>(n));
  auto fetch = [&](int rank) {
    const BufferId id = first_output + rank;
    out[rank] = read(id);
    if (static_cast<std::int64_t>(out[rank].size()) != count)
      throw Error("verify: buffer " + std::to_string(id) + " of rank " + std::to_string(rank) +
                  " holds " + std::to_string(out[rank].size()) + " elements, expected " +
                  std::to_string(count) + (out[rank].empty() ? " (a timing-only run has no data)" : ""));
  };

  Tally tally;
  if (computed != DType::kF32) {
    tally.unit_roundoff = UnitRoundoff(computed);
    // max and min pick an input: only its own rounding.
    tally.reduce_factor = params.op == ReduceOp::kSum
                              ? tally.unit_roundoff + Gamma(n, tally.unit_roundoff)
                              : tally.unit_roundoff;
  }
  auto reduced = [&](float got, std::int64_t i) {
    tally.Compare(got, ReducedInput(params, seed, i),
                  tally.unit_roundoff > 0 ? InputMagnitude(params, seed, i) : 0.0, true);
  };
  switch (params.kind) {
    case CollectiveKind::kAllReduce: {
      for (int r = 0; r < n; ++r) fetch(r);
      for (std::int64_t i = 0; i < count; ++i)
        for (int r = 0; r < n; ++r) reduced(out[r][i], i);
      break;
    }
    case CollectiveKind::kReduceScatter: {
      for (int r = 0; r < n; ++r) {
        fetch(r);
        const std::int64_t begin = ChunkBegin(count, n, r);
        const std::int64_t end = begin + ChunkCount(count, n, r);
        for (std::int64_t i = begin; i < end; ++i) reduced(out[r][i], i);
      }
      break;
    }
    case CollectiveKind::kAllGather: {
      for (int r = 0; r < n; ++r) fetch(r);
      for (int c = 0; c < n; ++c) {
        const std::int64_t begin = ChunkBegin(count, n, c);
        const std::int64_t end = begin + ChunkCount(count, n, c);
        for (std::int64_t i = begin; i < end; ++i) {
          const float ref = InputValue(seed, c, i);  // rank c's input chunk c
          for (int r = 0; r < n; ++r) tally.Compare(out[r][i], ref);
        }
      }
      break;
    }
    case CollectiveKind::kBroadcast: {
      for (int r = 0; r < n; ++r) fetch(r);
      for (std::int64_t i = 0; i < count; ++i) {
        const float ref = InputValue(seed, params.root, i);
        for (int r = 0; r < n; ++r) tally.Compare(out[r][i], ref);
      }
      break;
    }
    case CollectiveKind::kReduce: {
      fetch(params.root);
      for (std::int64_t i = 0; i < count; ++i) reduced(out[params.root][i], i);
      break;
    }
    case CollectiveKind::kAllToAll: {
      // Block i of rank j's recv is block j of rank i's send (buffer id i);
      // the tail past n blocks is never written and stays zero.
      const std::int64_t block = detail::AllToAllBlockCount(count, n);
      for (int j = 0; j < n; ++j) {
        fetch(j);
        for (int i = 0; i < n; ++i)
          for (std::int64_t t = 0; t < block; ++t)
            tally.Compare(out[j][i * block + t], InputValue(seed, i, j * block + t));
        for (std::int64_t t = n * block; t < count; ++t) tally.Compare(out[j][t], 0.0f);
      }
      break;
    }
  }

  VerifyResult result;
  result.wrong = tally.wrong;
  result.checked = tally.checked;
  result.max_abs_err = tally.max_abs_err;
  result.correct = tally.wrong == 0;
  return result;
}

}  // namespace shardlab
