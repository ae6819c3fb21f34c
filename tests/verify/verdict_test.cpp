// The three-valued verdict: correct within every bound (with the margin),
// WRONG naming the tensor, element, value, reference and bound, not checked
// with its reason; NaN and a broken zero bound are WRONG.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "engine/verify/verdict.h"

namespace shardlab {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Verdict, CorrectSaysHowCloseTheWorstCame) {
  VerdictJudge judge;
  const std::vector<float> got = {1.0f, 2.0f, 3.0f};
  const std::vector<double> want = {1.0, 2.01, 3.0}, bound = {0.1, 0.1, 0.1};
  judge.Compare("dw3 (stage 1)", got, want, bound);
  judge.CompareScalar("loss", 5.0, 5.0, 0.0);  // exact, zero bound: fine
  const Verdict v = judge.Finish();
  EXPECT_EQ(v.kind, VerdictKind::kCorrect);
  EXPECT_NEAR(v.worst.ratio, 0.1, 1e-6);
  EXPECT_EQ(v.worst.tensor, "dw3 (stage 1)");
  EXPECT_EQ(v.worst.worst_index, 1);
  EXPECT_EQ(v.tensors, 2);
  EXPECT_EQ(v.elements, 4);
  EXPECT_EQ(v.Text(), "correct (max error 0.10 of its bound, dw3 (stage 1))");
}

TEST(Verdict, WrongNamesTheElement) {
  VerdictJudge judge;
  judge.Compare("w0", std::vector<float>{1.0f, 1.0f}, std::vector<double>{1.0, 1.0}, std::vector<double>{1e-6, 1e-6});
  judge.Compare("db2", std::vector<float>{0.5f, 0.25f, 0.0f}, std::vector<double>{0.5, 0.5, 0.0},
                std::vector<double>{1e-3, 1e-3, 1e-3});
  const Verdict v = judge.Finish();
  EXPECT_EQ(v.kind, VerdictKind::kWrong);
  EXPECT_EQ(v.worst.tensor, "db2");
  EXPECT_EQ(v.worst.worst_index, 1);
  EXPECT_EQ(v.worst.value, 0.25);
  EXPECT_EQ(v.worst.reference, 0.5);
  EXPECT_EQ(v.worst.bound, 1e-3);
  EXPECT_NEAR(v.worst.ratio, 250, 1e-9);
  EXPECT_TRUE(Contains(v.Text(), "WRONG: db2 element 1 is 0.25, reference 0.5, bound 0.001")) << v.Text();
}

TEST(Verdict, NanAndABrokenZeroBoundAreWrong) {
  VerdictJudge nan;
  nan.Compare("y", std::vector<float>{NAN}, std::vector<double>{1.0}, std::vector<double>{1e9});
  EXPECT_EQ(nan.Finish().kind, VerdictKind::kWrong);
  VerdictJudge zero;
  zero.CompareScalar("loss", 1.0 + 1e-12, 1.0, 0.0);
  EXPECT_EQ(zero.Finish().kind, VerdictKind::kWrong);
  VerdictJudge size;
  size.Compare("w", std::vector<float>{1.0f}, std::vector<double>{1.0, 2.0}, std::vector<double>{1.0, 1.0});
  EXPECT_EQ(size.Finish().kind, VerdictKind::kWrong);
  EXPECT_TRUE(Contains(size.Finish().Text(), "w holds 1 elements, the reference 2"));
}

TEST(Verdict, NotCheckedSaysWhy) {
  const Verdict v = NotChecked("timing only: the data was not computed");
  EXPECT_FALSE(v.checked());
  EXPECT_EQ(v.Text(), "not checked (timing only: the data was not computed)");
  EXPECT_EQ(VerdictJudge().Finish().kind, VerdictKind::kNotChecked);
}

TEST(Verdict, JsonCarriesTheWorstElement) {
  VerdictJudge judge;
  judge.Compare("w1", std::vector<float>{2.0f}, std::vector<double>{1.0}, std::vector<double>{0.5});
  std::ostringstream out;
  JsonWriter w(out);
  w.BeginObject();
  WriteVerdictJson(w, judge.Finish());
  w.EndObject();
  const std::string json = out.str();
  EXPECT_TRUE(Contains(json, "\"result\":\"WRONG\"")) << json;
  EXPECT_TRUE(Contains(json, "\"tensor\":\"w1\"")) << json;
  EXPECT_TRUE(Contains(json, "\"element\":0")) << json;
  EXPECT_TRUE(Contains(json, "\"margin\":2")) << json;
}

TEST(RelativeTensorError, LargestErrorOverLargestValue) {
  EXPECT_NEAR(RelativeTensorError(std::vector<float>{1.0f, 4.5f}, std::vector<double>{1.0, 4.0}), 0.125, 1e-12);
  EXPECT_TRUE(std::isinf(RelativeTensorError(std::vector<float>{NAN}, std::vector<double>{1.0})));
}

}  // namespace
}  // namespace shardlab
