// Error bounds derived from the computation, for judging a backend's result
// against a reference computed in double precision.
//
// Why not a fixed tolerance. A fixed relative tolerance is wrong in both
// directions: it fails correct runs whose reduction length grows (a width of
// 512 sums 512 products per element, each rounding adds its share), and it
// passes wrong runs whose error happens to be small. A bound must grow with
// the reduction length k, with the unit round-off u of the dtype the backend
// really computes in, and with the size of the terms summed (not of the
// result: a sum that cancels keeps the rounding of its terms).
//
// One product (worst case). For C = A·B with reduction length k, computed
// in any order in a dtype with unit round-off u (fp32 2^-24, fp16 2^-11,
// bf16 2^-8; inputs already in that dtype),
//
//     |C − C_ref| ≤ γ_k · (|A|·|B|),      γ_k = k·u / (1 − k·u),
//
// element by element (Higham, Accuracy and Stability, §3.5). This holds for
// every summation order (recursive, blocked, tree, a ring across ranks) and
// is what the product tests check. With inputs rounded to a 16-bit dtype
// first, the rounding of each input adds 2u relative to each term: γ_{k+2}.
//
// Many layers (probabilistic). The worst case does not compose usefully: an
// error vector e entering the next layer is bounded by |e|·|W|, which grows
// by Σ|w| ≈ sqrt(6H)/2 ≈ 27 per layer at H = 512 (He-uniform weights), while
// the errors themselves grow by about ‖W‖ ≈ 1.4. After 8 layers forward and
// 8 back the worst case exceeds the values and catches no bug. So across
// layers the bound is the probabilistic one of Higham & Mary (SIAM J. Sci.
// Comput. 41(5), 2019): the rounding errors δ (|δ| ≤ u) are independent and
// of mean zero, so an element's error is a sum of independent bounded terms
// and, by Hoeffding's inequality,
//
//     P(|error| > λ·σ) ≤ 2·exp(−λ²/2),     σ² = Σ (bound of each term)².
//
// Each tensor element carries σ²; σ² composes through a product as
// variances do (e·W has σ² = σ_e²·W², with the signs of W, not |W|), and the
// rounding of a length-k dot product adds k·u²·(Σ|terms|)² ≤ k²·u²·Σterms²
// (Cauchy–Schwarz, so that one squared product gives it). The judge uses
// λ = kSigmas = 9: a correct element lands outside λσ with probability
// below 5e-18, so a run of 10^9 checked elements cries wolf less than once
// in 10^8 runs, while the bound stays near 1e-4 of the values, tight enough
// to catch a gradient scaled by 1 + 1e-3.
//
// Where an error is not small but discrete (a ReLU whose input is within
// its bound of 0 may switch; Adam's step for a gradient within rounding of
// zero may take either sign), the bound holds that whole switch: see
// mlp_bounds.h.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/op_kinds.h"

namespace shardlab {

/// Unit round-off of a dtype: fp32 2^-24, fp16 2^-11, bf16 2^-8.
double UnitRoundoff(DType dtype);

/// γ_k = k·u/(1 − k·u); +infinity when k·u ≥ 1 (no bound).
double Gamma(std::int64_t k, double unit_roundoff);

/// How many σ the probabilistic bound allows (see above).
inline constexpr double kSigmas = 9.0;

/// The dtype a backend really computes a buffer of `stored` dtype in
/// (BackendTraits::computes_in_float32): the simulator and the mpi backend
/// on the host hold every buffer as fp32; a GPU holds half buffers as half,
/// and so does an undeclared name.
DType ComputeDType(const char* backend_name, DType stored);

/// `value` rounded to nearest even in `dtype` (the host emulation of a
/// 16-bit store; fp32 rounds to float). Overflow gives ±infinity.
double RoundTo(DType dtype, double value);

/// The worst-case bound of every element of C = op(A)·B (row-major,
/// A m×k, B k×n): γ_k·(|A|·|B|), in double.
std::vector<double> ProductBound(std::span<const double> a, std::span<const double> b,
                                 std::int64_t m, std::int64_t k, std::int64_t n,
                                 double unit_roundoff);

}  // namespace shardlab
