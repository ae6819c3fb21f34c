// Labs 5-7 (tensor parallel, ZeRO memory, data-parallel overlap) graded against
// fresh simulator runs: the key scores full marks, the typical mistakes each lab
// is written to catch lose exactly their questions with the lab's own hint, and
// the key's values agree with the formulas the labs teach.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

Lab RepoLab(const std::string& id) { return LoadLab((fs::path(SHARDLAB_LABS_DIR) / id).string()); }

LabAnswer& Answer(LabAnswers& answers, const std::string& id) {
  for (LabAnswer& a : answers.answers) {
    if (a.question_id == id) return a;
  }
  throw std::runtime_error("no answer " + id);
}

double KeyNumber(const LabAnswers& key, const std::string& id) {
  for (const LabAnswer& a : key.answers) {
    if (a.question_id == id) return a.number;
  }
  throw std::runtime_error("no answer " + id);
}

const LabQuestionResult& Result(const LabGradeReport& report, const std::string& id) {
  for (const LabQuestionResult& r : report.results) {
    if (r.question_id == id) return r;
  }
  throw std::runtime_error("no question " + id);
}

// Grades `answers` and checks that exactly the questions in `wrong` lost their points.
void ExpectExactlyWrong(const Lab& lab, const LabAnswers& answers, const std::set<std::string>& wrong,
                        LabGradeReport* out) {
  const LabGradeReport report = GradeLab(lab, answers);
  int lost = 0;
  for (const LabQuestionResult& r : report.results) {
    const bool should_be_wrong = wrong.count(r.question_id) > 0;
    EXPECT_EQ(r.verdict, should_be_wrong ? LabVerdict::kWrong : LabVerdict::kCorrect)
        << r.question_id << ": " << r.feedback;
    if (should_be_wrong) lost += r.max_points;
  }
  EXPECT_EQ(report.score, report.max_score - lost) << FormatLabReport(report);
  *out = report;
}

void ExpectFeedback(const LabGradeReport& report, const std::string& id, const std::string& part) {
  const std::string& feedback = Result(report, id).feedback;
  EXPECT_NE(feedback.find(part), std::string::npos) << id << ": " << feedback;
}

TEST(LabsFiveToSeven, KeysScoreFullMarks) {
  for (const char* id : {"05-tensor-parallel", "06-zero-memory", "07-dp-overlap"}) {
    SCOPED_TRACE(id);
    const Lab lab = RepoLab(id);
    const LabGradeReport report = GradeLab(lab, LabAnswerKey(lab));
    EXPECT_EQ(report.score, lab.MaxPoints()) << FormatLabReport(report);
    EXPECT_GE(lab.QuestionCount(), 10);
  }
}

TEST(LabsFiveToSeven, TensorParallelMistakes) {
  const Lab lab = RepoLab("05-tensor-parallel");
  const LabAnswers key = LabAnswerKey(lab);
  // What the lab teaches holds in the runs: 2 + 2 all-reduces, the one-way
  // 300 GB/s within 5% of the simulated time, the seed's 4.67 ms about 2x low,
  // and 16 GPUs over InfiniBand slower than 8 in one node.
  EXPECT_EQ(KeyNumber(key, "forward_count"), 2);
  EXPECT_EQ(KeyNumber(key, "backward_count"), 2);
  EXPECT_EQ(KeyNumber(key, "tensor_bytes"), KeyNumber(key, "tensor_bytes_run"));
  EXPECT_NEAR(KeyNumber(key, "measured_ms") / KeyNumber(key, "predict_ms"), 1, 0.05);
  EXPECT_NEAR(KeyNumber(key, "measured_ms") / 4.67, 2, 0.2);
  EXPECT_EQ(KeyNumber(key, "ib_ring_gbps"), 25);
  EXPECT_LT(KeyNumber(key, "speedup"), 1);

  LabAnswers answers = key;
  Answer(answers, "forward_count").number = 1;                 // only the MLP's all-reduce
  Answer(answers, "predict_ms").number *= 0.5;                 // the seed's 600 GB/s
  Answer(answers, "seed_holds").text = "Yes: within 10%";
  Answer(answers, "speedup").number = 2;                       // expected linear scaling
  Answer(answers, "measured_ms").number *= 1.04;               // within 5%
  LabGradeReport report;
  ExpectExactlyWrong(lab, answers, {"forward_count", "predict_ms", "seed_holds", "speedup"},
                     &report);
  ExpectFeedback(report, "forward_count", "Attention and the MLP each end in a row-parallel");
  ExpectFeedback(report, "predict_ms", "Did you use 600 GB/s?");
  ExpectFeedback(report, "predict_ms", "50% low");
  ExpectFeedback(report, "speedup", "Compute halves");
}

TEST(LabsFiveToSeven, ZeroMemoryMistakes) {
  const Lab lab = RepoLab("06-zero-memory");
  const LabAnswers key = LabAnswerKey(lab);
  // The ZeRO paper's 7.5B / 64 GPU figures, and the run holding 16 bytes per parameter.
  EXPECT_DOUBLE_EQ(KeyNumber(key, "stage0_gb"), 120);
  EXPECT_DOUBLE_EQ(KeyNumber(key, "stage1_gb"), 30 + 90.0 / 64);
  EXPECT_DOUBLE_EQ(KeyNumber(key, "stage2_gb"), 15 + 105.0 / 64);
  EXPECT_DOUBLE_EQ(KeyNumber(key, "stage3_gb"), 120.0 / 64);
  EXPECT_DOUBLE_EQ(KeyNumber(key, "engine_agrees"), KeyNumber(key, "stage3_gb"));
  EXPECT_DOUBLE_EQ(KeyNumber(key, "seed_stage0_gb"), 90);
  EXPECT_DOUBLE_EQ(KeyNumber(key, "bytes_per_param"), 16);
  EXPECT_DOUBLE_EQ(KeyNumber(key, "stage3_measured"), KeyNumber(key, "stage3_elements"));
  EXPECT_DOUBLE_EQ(KeyNumber(key, "ratio"), 1.5);
  EXPECT_DOUBLE_EQ(KeyNumber(key, "memory_ratio"), 0.25);

  LabAnswers answers = key;
  Answer(answers, "stage0_gb").number = 90;                     // the seed's 12Ψ
  Answer(answers, "stage1_gb").number = 120.0 / 64;             // sharded everything
  Answer(answers, "which_k").text = "K = 8 (the textbook: m and v only)";
  Answer(answers, "stage3_elements").number *= 2.0 / 3;         // one all-gather only
  Answer(answers, "ratio").number = 1;                          // "about the same as DP"
  Answer(answers, "stage2_gb").number *= 1.009;                 // within 1%
  LabGradeReport report;
  ExpectExactlyWrong(lab, answers, {"stage0_gb", "stage1_gb", "which_k", "stage3_elements", "ratio"},
                     &report);
  ExpectFeedback(report, "stage0_gb", "90 GB is the textbook's 12Ψ");
  ExpectFeedback(report, "stage1_gb", "the fp16 parameters and gradients (4Ψ) stay whole");
  ExpectFeedback(report, "stage3_elements", "Did you count only one all-gather?");
  ExpectFeedback(report, "which_k", "fp32 copy");
}

TEST(LabsFiveToSeven, OverlapMistakes) {
  const Lab lab = RepoLab("07-dp-overlap");
  const LabAnswers key = LabAnswerKey(lab);
  // Without overlap every millisecond is exposed; with it, most hides and what
  // stays is about the last bucket; small buckets cost their latency exactly.
  EXPECT_DOUBLE_EQ(KeyNumber(key, "exposed_share_off"), 1);
  EXPECT_GT(KeyNumber(key, "hidden_share"), 0.8);
  EXPECT_LT(KeyNumber(key, "thin_hidden"), 0.5);
  EXPECT_NEAR(KeyNumber(key, "exposed_on") / KeyNumber(key, "last_bucket"), 1, 0.15);
  EXPECT_NEAR(KeyNumber(key, "latency_measured"), KeyNumber(key, "latency_predict"), 1e-6);
  EXPECT_EQ(KeyNumber(key, "one_count"), 1);
  EXPECT_EQ(KeyNumber(key, "small_count"), 48);

  LabAnswers answers = key;
  Answer(answers, "predict_comm").number *= 0.5;                // the seed's 600 GB/s
  Answer(answers, "hidden_share").number = 0.5;
  Answer(answers, "small_count").number = 1;
  Answer(answers, "best").text = "1 MiB";
  Answer(answers, "exposed_on").number *= 1.08;                 // within 10%
  LabGradeReport report;
  ExpectExactlyWrong(lab, answers, {"predict_comm", "hidden_share", "small_count", "best"},
                     &report);
  ExpectFeedback(report, "predict_comm", "300 GB/s, not 600");
  ExpectFeedback(report, "small_count", "at least one whole layer");
}

}  // namespace
}  // namespace shardlab
