// The reference for every collective, computed element by element from the
// inputs (regenerated with InputValue, never read back from the backend),
// without holding a reference buffer: time is linear in the elements
// checked times the ranks that contribute to each, memory is constant.
// Which output region should hold what is the kind's def's `reference`
// (collectives/*.cpp); this file compares each region it names.
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
  const bool separate_output = CollectiveDefOf(params.kind).separate_output();
  const std::size_t expected = static_cast<std::size_t>(params.ranks) * (separate_output ? 2 : 1);
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

// Compares each region the def's reference names with the inputs it
// regenerates, reading a rank's output buffer when a region first names it.
class Checker : public ReferenceSink {
 public:
  Checker(const CollectiveParams& params, std::uint64_t seed, const BufferReader& read,
          DType computed)
      : params_(params), seed_(seed), read_(read),
        first_output_(CollectiveDefOf(params.kind).separate_output() ? params.ranks : 0),
        out_(static_cast<std::size_t>(params.ranks)),
        fetched_(static_cast<std::size_t>(params.ranks), 0) {
    if (computed != DType::kF32) {
      tally_.unit_roundoff = UnitRoundoff(computed);
      // max and min pick an input: only its own rounding.
      tally_.reduce_factor = params.op == ReduceOp::kSum
                                 ? tally_.unit_roundoff + Gamma(params.ranks, tally_.unit_roundoff)
                                 : tally_.unit_roundoff;
    }
  }

  void Reduced(int rank, std::int64_t begin, std::int64_t end) override {
    const std::span<const float> out = Output(rank, begin, end);
    for (std::int64_t i = begin; i < end; ++i)
      tally_.Compare(out[i], ReducedInput(params_, seed_, i),
                     tally_.unit_roundoff > 0 ? InputMagnitude(params_, seed_, i) : 0.0, true);
  }
  void Copied(int rank, std::int64_t begin, std::int64_t end, int from,
              std::int64_t from_begin) override {
    const std::span<const float> out = Output(rank, begin, end);
    if (from < 0 || from >= params_.ranks || from_begin < 0 ||
        from_begin + (end - begin) > params_.count)
      throw Error("verify: the reference copies from outside the inputs (rank " +
                  std::to_string(from) + ", element " + std::to_string(from_begin) + ")");
    for (std::int64_t i = begin; i < end; ++i)
      tally_.Compare(out[i], InputValue(seed_, from, from_begin + (i - begin)));
  }
  void Zero(int rank, std::int64_t begin, std::int64_t end) override {
    const std::span<const float> out = Output(rank, begin, end);
    for (std::int64_t i = begin; i < end; ++i) tally_.Compare(out[i], 0.0f);
  }

  const Tally& tally() const { return tally_; }

 private:
  // The output buffer of `rank` ("data", or "recv" when the kind has one),
  // whose elements [begin, end) a region names.
  std::span<const float> Output(int rank, std::int64_t begin, std::int64_t end) {
    if (rank < 0 || rank >= params_.ranks || begin < 0 || end > params_.count)
      throw Error("verify: the reference names elements [" + std::to_string(begin) + ", " +
                  std::to_string(end) + ") of rank " + std::to_string(rank) + ", outside " +
                  std::to_string(params_.ranks) + " ranks of " + std::to_string(params_.count) +
                  " elements");
    const std::size_t r = static_cast<std::size_t>(rank);
    if (!fetched_[r]) {
      const BufferId id = first_output_ + rank;
      out_[r] = read_(id);
      if (static_cast<std::int64_t>(out_[r].size()) != params_.count)
        throw Error("verify: buffer " + std::to_string(id) + " of rank " + std::to_string(rank) +
                    " holds " + std::to_string(out_[r].size()) + " elements, expected " +
                    std::to_string(params_.count) +
                    (out_[r].empty() ? " (a timing-only run has no data)" : ""));
      fetched_[r] = 1;
    }
    return out_[r];
  }

  const CollectiveParams& params_;
  std::uint64_t seed_;
  const BufferReader& read_;
  BufferId first_output_;
  std::vector<std::span<const float>> out_;
  std::vector<char> fetched_;
  Tally tally_;
};

}  // namespace

VerifyResult VerifyCollective(const CollectiveParams& params, const Plan& plan,
                              std::uint64_t seed, const BufferReader& read, DType computed) {
  CheckCollectiveParams(params);
  CheckPlanLayout(params, plan);
  Checker checker(params, seed, read, computed);
  CollectiveDefOf(params.kind).reference(params, checker);
  const Tally& tally = checker.tally();

  VerifyResult result;
  result.wrong = tally.wrong;
  result.checked = tally.checked;
  result.max_abs_err = tally.max_abs_err;
  result.correct = tally.wrong == 0;
  return result;
}

}  // namespace shardlab
