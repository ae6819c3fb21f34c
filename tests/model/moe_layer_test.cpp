// The MoE layer's routing and single-device reference: capacity and
// priority give the hand-counted kept and dropped choices of a fixed
// assignment; the skews route as documented; top-k is ordered with the
// lower index winning ties; gates are renormalised over the top k; a
// dropped choice adds nothing; bad configurations name their field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "engine/core/error.h"
#include "engine/model/moe_layer.h"

namespace shardlab {
namespace {

// 2 ranks, 4 experts (0, 1 on rank 0; 2, 3 on rank 1), top-2, 8 tokens (4
// per rank). Capacity factor 1: C = ceil(1 · 2 · 4 / 4) = 2 per rank and expert.
MoeLayerConfig HandConfig() {
  MoeLayerConfig c;
  c.ranks = 2;
  c.experts = 4;
  c.top_k = 2;
  c.tokens = 8;
  c.hidden = 4;
  c.ffn = 8;
  c.capacity_factor = 1.0;
  c.assignment = {0, 2,  0, 3,  0, 1,  2, 0,    // rank 0: tokens 0..3
                  1, 2,  3, 2,  2, 3,  3, 2};   // rank 1: tokens 4..7
  return c;
}

TEST(MoeRouting, FixedAssignmentMatchesTheHandCount) {
  const MoeLayerConfig c = HandConfig();
  const MoeRouting r = RouteMoeTokens(c, {}, 1);
  EXPECT_EQ(r.capacity_per_rank, 2);
  // Rank 0, first choices in token order: t0→0, t1→0, t2→0 (full: dropped),
  // t3→2; then second choices: t0→2, t1→3, t2→1, t3→0 (full: dropped).
  // Rank 1: t4→1, t5→3, t6→2, t7→3; then t4→2, t5→2 (full), t6→3 (full), t7→2 (full).
  const std::vector<std::uint8_t> kept = {1, 1, 1, 1, 0, 1, 1, 0,
                                          1, 1, 1, 0, 1, 0, 1, 0};
  EXPECT_EQ(r.kept, kept);
  EXPECT_EQ(r.routed, (std::vector<int>{4, 2, 6, 4}));
  EXPECT_EQ(r.kept_per_expert, (std::vector<int>{2, 2, 4, 3}));
  EXPECT_EQ(r.dropped, 5);
  // rows[s·N + d]: rank 0 keeps 2 + 1 for its own experts, 2 + 1 for rank 1's;
  // rank 1 keeps 1 for rank 0's expert 1, 2 + 2 for its own.
  EXPECT_EQ(r.rows, (std::vector<std::int64_t>{3, 3, 1, 4}));
}

TEST(MoeRouting, FirstChoicesComeBeforeSecondChoices) {
  // One rank, 2 experts, top-2, 2 tokens, C = ceil(0.5 · 2 · 2 / 2) = 1:
  // token 1's first choice (expert 1) must win over token 0's second.
  MoeLayerConfig c;
  c.ranks = 1;
  c.experts = 2;
  c.top_k = 2;
  c.tokens = 2;
  c.capacity_factor = 0.5;
  c.assignment = {0, 1, 1, 0};
  const MoeRouting r = RouteMoeTokens(c, {}, 1);
  EXPECT_EQ(r.capacity_per_rank, 1);
  EXPECT_EQ(r.kept, (std::vector<std::uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(r.dropped, 2);
}

TEST(MoeRouting, UniformSkewGivesEveryExpertTheSameLoad) {
  MoeLayerConfig c;
  c.ranks = 4;
  c.experts = 8;
  c.top_k = 2;
  c.tokens = 64;
  c.skew = MoeSkew::kUniform;
  c.capacity_factor = 1.0;
  const MoeRouting r = RouteMoeTokens(c, {}, 1);
  for (int e = 0; e < 8; ++e) EXPECT_EQ(r.routed[e], 16) << e;
  EXPECT_EQ(r.dropped, 0);  // capacity 1 is exactly the even share
}

TEST(MoeRouting, HotSkewSendsHalfTheTokensToExpertZeroFirst) {
  MoeLayerConfig c;
  c.ranks = 2;
  c.experts = 4;
  c.top_k = 1;
  c.tokens = 16;
  c.skew = MoeSkew::kHot;
  c.capacity_factor = 4;  // E/k: nothing dropped
  const MoeRouting r = RouteMoeTokens(c, {}, 1);
  for (int t = 0; t < c.tokens; t += 2) EXPECT_EQ(r.expert[t], 0) << t;
  // The 8 odd tokens go round robin over experts 1, 2, 3.
  EXPECT_EQ(r.routed, (std::vector<int>{8, 3, 3, 2}));
  EXPECT_EQ(r.dropped, 0);
}

TEST(MoeRouting, ZipfSkewFavoursLowExpertsWithoutRepeats) {
  MoeLayerConfig c;
  c.ranks = 2;
  c.experts = 8;
  c.top_k = 2;
  c.tokens = 2048;
  c.skew = MoeSkew::kZipf;
  const MoeRouting r = RouteMoeTokens(c, {}, 5);
  for (int t = 0; t < c.tokens; ++t) EXPECT_NE(r.expert[2 * t], r.expert[2 * t + 1]) << t;
  EXPECT_GT(r.routed[0], r.routed[3]);
  EXPECT_GT(r.routed[3], r.routed[7]);
  EXPECT_EQ(std::accumulate(r.routed.begin(), r.routed.end(), 0), 2 * c.tokens);
  // Seeded: the same seed routes the same way.
  EXPECT_EQ(RouteMoeTokens(c, {}, 5).expert, r.expert);
}

TEST(MoeRouting, RouterTopKIsOrderedAndTiesGoToTheLowerExpert) {
  MoeLayerConfig c;
  c.ranks = 1;
  c.experts = 4;
  c.top_k = 2;
  c.tokens = 2;
  c.capacity_factor = 2;
  const std::vector<double> logits = {0.5, 2.0, 2.0, -1.0,   // tie between 1 and 2
                                      3.0, 0.0, 0.0, 4.0};
  const MoeRouting r = RouteMoeTokens(c, logits, 1);
  EXPECT_EQ(r.expert, (std::vector<int>{1, 2, 3, 0}));
}

TEST(MoeReference, GatesAreTheTopKRenormalised) {
  MoeLayerConfig c;
  c.ranks = 2;
  c.experts = 8;
  c.top_k = 3;
  c.tokens = 16;
  c.hidden = 16;
  c.ffn = 8;
  const MoeLayerReference ref(c, 7);
  for (int t = 0; t < c.tokens; ++t) {
    // The full softmax's top k, renormalised.
    const double* row = &ref.logits()[static_cast<std::size_t>(t) * c.experts];
    double top_sum = 0;
    for (int j = 0; j < c.top_k; ++j) top_sum += std::exp(row[ref.routing().expert[t * 3 + j]]);
    double gate_sum = 0;
    for (int j = 0; j < c.top_k; ++j) {
      const double g = ref.gates()[t * 3 + j];
      EXPECT_NEAR(g, std::exp(row[ref.routing().expert[t * 3 + j]]) / top_sum, 1e-12);
      if (j > 0) {
        EXPECT_LE(g, ref.gates()[t * 3 + j - 1]);  // largest first
      }
      gate_sum += g;
    }
    EXPECT_NEAR(gate_sum, 1.0, 1e-12);
  }
}

TEST(MoeReference, TopOneIsTheExpertItselfAndADroppedTokenIsZero) {
  // k = 1: gate 1. Tokens 0 and 1 both go to expert 0 with C = 1: token 1
  // is dropped and its output is 0; token 0's output is expert 0's MLP.
  MoeLayerConfig c;
  c.ranks = 1;
  c.experts = 2;
  c.top_k = 1;
  c.tokens = 2;
  c.hidden = 4;
  c.ffn = 6;
  c.capacity_factor = 1;
  c.assignment = {0, 0};
  const MoeLayerReference ref(c, 3);
  EXPECT_EQ(ref.routing().dropped, 1);
  EXPECT_DOUBLE_EQ(ref.gates()[0], 1.0);
  const std::vector<double> x = MoeTensorValues(MoeTensor(c, "x"), 3);
  const std::vector<double> w1 = MoeTensorValues(MoeTensor(c, "W1.0"), 3);
  const std::vector<double> w2 = MoeTensorValues(MoeTensor(c, "W2.0"), 3);
  for (int a = 0; a < c.hidden; ++a) {
    double want = 0;
    for (int b = 0; b < c.ffn; ++b) {
      double z = 0;
      for (int i = 0; i < c.hidden; ++i) z += x[i] * w1[i * c.ffn + b];
      want += std::max(z, 0.0) * w2[b * c.hidden + a];
    }
    EXPECT_NEAR(ref.output()[a], want, 1e-12) << a;
    EXPECT_EQ(ref.output()[c.hidden + a], 0.0) << a;
  }
}

// The message of the Error that `c` is rejected with.
std::string Rejection(const MoeLayerConfig& c) {
  try {
    CheckMoeLayerConfig(c);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "(accepted)";
}

TEST(MoeLayerConfig, BadInputIsRejectedNamingTheField) {
  MoeLayerConfig c;
  c.ranks = 3;  // 8 experts over 3 ranks
  EXPECT_EQ(Rejection(c).rfind("experts: 8 experts do not split evenly over 3 ranks", 0), 0u)
      << Rejection(c);
  c = MoeLayerConfig{};
  c.top_k = 9;
  EXPECT_EQ(Rejection(c).rfind("top-k: must be between 1 and the 8 experts (got 9)", 0), 0u)
      << Rejection(c);
  c.top_k = 0;
  EXPECT_EQ(Rejection(c).rfind("top-k:", 0), 0u) << Rejection(c);
  c = MoeLayerConfig{};
  c.capacity_factor = 0;
  EXPECT_EQ(Rejection(c).rfind("capacity-factor: must be a number above 0", 0), 0u) << Rejection(c);
  c.capacity_factor = -1.5;
  EXPECT_EQ(Rejection(c).rfind("capacity-factor:", 0), 0u) << Rejection(c);
  c = MoeLayerConfig{};
  c.tokens = 10;  // over 4 ranks
  EXPECT_EQ(Rejection(c).rfind("tokens: 10 tokens do not split evenly over 4 ranks", 0), 0u)
      << Rejection(c);
  c = MoeLayerConfig{};
  c.ranks = 0;
  EXPECT_EQ(Rejection(c).rfind("ranks: must be at least 1", 0), 0u) << Rejection(c);
  c = MoeLayerConfig{};
  c.hidden = 0;
  EXPECT_EQ(Rejection(c).rfind("hidden:", 0), 0u) << Rejection(c);
  c = HandConfig();
  c.assignment[3] = 0;  // token 1 names expert 0 twice
  EXPECT_EQ(Rejection(c), "assignment: token 1 names expert 0 twice");
  c = HandConfig();
  c.assignment[5] = 4;
  EXPECT_EQ(Rejection(c).rfind("assignment: token 2 choice 1 names expert 4", 0), 0u) << Rejection(c);
  c = HandConfig();
  c.assignment.pop_back();
  EXPECT_EQ(Rejection(c).rfind("assignment: 15 entries", 0), 0u) << Rejection(c);
  EXPECT_EQ(Rejection(HandConfig()), "(accepted)");
  EXPECT_THROW(ParseMoeSkew("skewed"), Error);
}

}  // namespace
}  // namespace shardlab
