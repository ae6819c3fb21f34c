// The elastic-recovery job: its final parameters equal the single-device
// reference that redoes the lost steps (within the reference's derived
// bound, and not equal to one step fewer: the check can fail), the counts
// it reports follow from its parameters, its checkpoints are real files,
// and its timeline puts the failure before the restart.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/plan/op_label.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/elastic_scenario.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"
#include "engine/verify/verdict.h"

namespace shardlab {
namespace {

ElasticScenario Small(bool replace) {
  ElasticScenario sc;
  sc.params.ranks = 4;
  sc.params.steps = 6;
  sc.params.checkpoint_every = 2;
  sc.params.fail_rank = 2;
  sc.params.fail_step = 3;  // restarts from the checkpoint after step 2: 1 step lost
  sc.params.replace = replace;
  sc.params.model.layers = 2;
  sc.params.model.width = 8;
  sc.params.model.batch = 12;
  sc.params.model.learning_rate = 0.05f;
  sc.checkpoint_dir = (std::filesystem::temp_directory_path() /
                       ("shardlab-elastic-test-" + std::to_string(replace)))
                          .string();
  return sc;
}

std::int64_t Psi(const MlpConfig& m) { return std::int64_t{m.layers} * (std::int64_t{m.width} * m.width + m.width); }

TEST(ElasticScenario, AShrunkJobEndsWithTheParametersOfTheSingleDeviceReference) {
  const ElasticScenario sc = Small(false);
  const ElasticPlan job = BuildElastic(sc.params);
  const ElasticOutcome o = RunElastic(sc, job, LoadScenarioTopology("dgx-a100"), {});
  EXPECT_TRUE(o.verdict.correct()) << o.verdict.Text();
  // Counts that follow from the parameters.
  EXPECT_EQ(job.restart_from, 2);
  EXPECT_EQ(job.lost_steps, 1);
  EXPECT_EQ(job.ranks_after, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(job.reshard_bytes, Psi(sc.params.model) * 4 * 2);  // the writer sends to 2 others
  EXPECT_EQ(job.checkpoint_bytes, Psi(sc.params.model) * 4);
  // Checkpoints after 0 and 2 steps (the failure comes in step 3), as files.
  ASSERT_EQ(o.checkpoint_files.size(), 2u);
  for (const std::string& f : o.checkpoint_files) {
    ASSERT_TRUE(std::filesystem::exists(f)) << f;
    EXPECT_GT(std::filesystem::file_size(f), static_cast<std::uintmax_t>(job.checkpoint_bytes));
  }
  EXPECT_EQ(o.reloaded_file, o.checkpoint_files[1]);
  // The timeline: the checkpoint, then the failure, then the recovery.
  EXPECT_GT(o.failure_ns, o.checkpoint_ns);
  EXPECT_EQ(o.lost_ns, o.failure_ns - o.checkpoint_ns);
  EXPECT_GT(o.lost_gpu_ns, 0);
  EXPECT_GT(o.recovery_ns, 0);
  EXPECT_GT(o.job_ns, o.failure_ns + o.recovery_ns);
  // Lost ops say so in their labels; the failed rank has none after it.
  int lost = 0;
  for (std::size_t i = 0; i < job.plan.ops.size(); ++i) {
    const Op& op = job.plan.ops[i];
    if (job.roles[i] == ElasticRole::kLost && op.kind == OpKind::kCompute) {
      ++lost;
      EXPECT_NE(LabelOp(job.plan, static_cast<OpId>(i)).bar.find("lost"), std::string::npos)
          << LabelOp(job.plan, static_cast<OpId>(i)).bar;
    }
    if (static_cast<OpId>(i) > job.reload) {
      EXPECT_NE(op.rank, 2) << "op " << i;
    }
  }
  // Step 2 on 4 ranks (F, B, opt) and step 3's F and B on 3 survivors.
  EXPECT_EQ(lost, 4 * 3 + 3 * 2);
  EXPECT_EQ(LabelOp(job.plan, job.reload).bar, "reload ckpt 2");
}

TEST(ElasticScenario, TheCheckCanFailOneStepShortOfTheJob) {
  // The bound the job is judged by is tight enough to see one SGD step: a
  // reference that trained one step less lies outside it.
  const ElasticScenario sc = Small(false);
  MlpBoundedReference full(sc.params.model, sc.seed, UnitRoundoff(DType::kF32));
  MlpBoundedReference shorter(sc.params.model, sc.seed, UnitRoundoff(DType::kF32));
  for (int t = 0; t < sc.params.steps; ++t) full.TrainStep();
  for (int t = 0; t + 1 < sc.params.steps; ++t) shorter.TrainStep();
  const BoundedTensor& a = full.weight(0);
  const std::vector<double> bound = a.Bound();
  int outside = 0;
  for (std::size_t i = 0; i < a.value.size(); ++i)
    outside += std::abs(a.value[i] - shorter.weight(0).value[i]) > bound[i];
  EXPECT_GT(outside, static_cast<int>(a.value.size()) / 2);
}

TEST(ElasticScenario, AReplacementKeepsEveryRankAndReceivesTheCheckpoint) {
  const ElasticScenario sc = Small(true);
  const ElasticPlan job = BuildElastic(sc.params);
  const ElasticOutcome o = RunElastic(sc, job, LoadScenarioTopology("dgx-a100"), {});
  EXPECT_TRUE(o.verdict.correct()) << o.verdict.Text();
  EXPECT_EQ(job.ranks_after, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(job.reshard_bytes, Psi(sc.params.model) * 4 * 3);
}

TEST(ElasticScenario, AFailureInTheFirstStepRestartsFromTheInitialParameters) {
  ElasticScenario sc = Small(false);
  sc.params.fail_step = 0;
  sc.params.fail_rank = 0;  // the writer moves to rank 1
  const ElasticPlan job = BuildElastic(sc.params);
  EXPECT_EQ(job.writer, 1);
  EXPECT_EQ(job.restart_from, 0);
  EXPECT_EQ(job.lost_steps, 0);
  const ElasticOutcome o = RunElastic(sc, job, LoadScenarioTopology("dgx-a100"), {});
  EXPECT_TRUE(o.verdict.correct()) << o.verdict.Text();
}

TEST(ElasticScenario, BadParametersNameTheirField) {
  auto message = [](ElasticParams p) {
    try {
      CheckElasticParams(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ElasticParams p = Small(false).params;
  p.fail_rank = 4;
  EXPECT_EQ(message(p), "fail_rank: rank 4 is out of range (the run has 4 ranks, 0..3)");
  p = Small(false).params;
  p.fail_step = 6;
  EXPECT_EQ(message(p), "fail_rank: step 6 is past the run's last step (5)");
  p = Small(false).params;
  p.model.batch = 8;  // splits over 4, not over 3
  EXPECT_EQ(message(p).rfind("batch: 8 rows do not split evenly over 4 ranks and, after the failure, 3", 0), 0u)
      << message(p);
}

}  // namespace
}  // namespace shardlab
