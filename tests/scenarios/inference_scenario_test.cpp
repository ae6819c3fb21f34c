// The inference scenario: the real run's logits and all-reduce count for a
// TP × replicas layout, the policies side by side on one trace, the KV
// cache's prefix sharing in the serving simulation, and the lab runner
// reading its measured quantities.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"
#include "engine/scenarios/inference_scenario.h"

namespace shardlab {
namespace {

InferenceScenario Small() {
  InferenceScenario s;
  s.serve_model = "small";
  s.model.layers = 2;
  s.model.hidden = 32;
  s.model.heads = 4;
  s.model.vocab = 40;
  s.model.max_context = 64;
  s.arrivals.requests = 60;
  s.arrivals.rate_per_s = 2000;
  s.arrivals.prompt_mean = 8;
  s.arrivals.output_mean = 8;
  s.kv_cache_bytes = 1 << 20;
  s.check_requests = 3;
  return s;
}

TEST(InferenceScenario, RealRunIsCorrectWithTwoAllReducesPerLayerPerPass) {
  InferenceScenario s = Small();
  s.layout = {2, 1, 2};
  const InferenceRun run = RunInference(s);
  ASSERT_TRUE(run.check.checked);
  EXPECT_TRUE(run.check.verdict.correct()) << run.check.verdict.Detail();
  EXPECT_GT(run.check.allreduces, 0);
  EXPECT_EQ(run.check.allreduces, run.check.allreduces_expected);
  EXPECT_TRUE(run.check.allreduce_bytes_ok);
  // A decode all-reduce on the simulator takes at least the ring's 2(n−1) latencies.
  EXPECT_GE(run.check.decode_allreduce_ns, 2 * run.cost.ring_alpha_ns);
}

TEST(InferenceScenario, ContinuousBeatsStaticOnTheSameArrivals) {
  InferenceScenario s = Small();
  s.all_policies = true;
  s.timing_only = true;
  const InferenceRun run = RunInference(s);
  ASSERT_EQ(run.results.size(), 3u);
  const ServingResult* st = run.Find(BatchingPolicy::kStatic);
  const ServingResult* co = run.Find(BatchingPolicy::kContinuous);
  ASSERT_NE(st, nullptr);
  ASSERT_NE(co, nullptr);
  EXPECT_LT(co->e2e_ns.p50, st->e2e_ns.p50);
  EXPECT_LT(co->ttft_ns.p99, st->ttft_ns.p99);
  EXPECT_EQ(co->padded_tokens, 0);
  EXPECT_GT(st->padded_tokens, 0);
  EXPECT_EQ(co->idle_slot_steps, 0);
  // Every request of the trace was served by every policy.
  for (const ServingResult& r : run.results)
    for (const ServedRequestTiming& t : r.requests) EXPECT_GE(t.finish_ns, t.first_token_ns);
}

TEST(InferenceScenario, ASharedPrefixLowersTheKvPeakByItsBlocks) {
  InferenceScenario s = Small();
  s.timing_only = true;
  const InferenceRun run = RunInference(s);
  // Four requests at once whose 33-token prompts start with one 32-token
  // prefix (2 full blocks of 16), 2 tokens out: 35 positions, 3 blocks each.
  const std::string four = "0 33 2 sys\n0 33 2 sys\n0 33 2 sys\n0 33 2 sys\n";
  const auto shared = ParseRequestFile(four, "shared.txt", 32);
  std::vector<RequestArrival> alone = shared;
  for (RequestArrival& a : alone) a.prefix_group = -1;
  ServingConfig c;
  c.batcher.max_batch = 4;
  c.kv_blocks = run.kv_blocks;
  const StepCostFn cost = [&](const StepWork& w) { return run.cost.StepNs(w); };
  const ServingResult with = SimulateServing(shared, c, cost), without = SimulateServing(alone, c, cost);
  EXPECT_EQ(with.peak_kv_blocks, 2 + 4 * 1);
  EXPECT_EQ(without.peak_kv_blocks, 4 * 3);
  // The saving is the shared blocks held once instead of four times.
  EXPECT_EQ(without.peak_kv_blocks - with.peak_kv_blocks, (4 - 1) * 2);
}

TEST(InferenceScenario, Int8WeightsHalveTheBytesAndCostALittleAccuracy) {
  InferenceScenario s = Small();
  s.serve_model = "llama-7b-ish";
  s.kv_cache_bytes = 0;
  s.int8_weights = true;
  const InferenceRun run = RunInference(s);
  const Int8Report& q = run.int8;
  // fp16 → one byte and an fp16 scale per output channel: 1 + 2/H of half.
  EXPECT_NEAR(static_cast<double>(q.weight_bytes_int8) / q.weight_bytes_fp, (1 + 2.0 / 4096) / 2, 1e-6);
  // Decode at batch 1 reads the weights and little else: nearly 2x faster.
  EXPECT_GT(q.speedup, 1.9);
  EXPECT_LT(q.speedup, 2.0);
  // The small decoder's logits move, a little; the top token mostly stays.
  ASSERT_TRUE(q.accuracy_checked);
  EXPECT_GT(q.logit_error, 1e-4);
  EXPECT_LT(q.logit_error, 0.05);
  EXPECT_GT(q.top1_agreement, 0.9);
  EXPECT_GT(q.positions, 0);
}

TEST(InferenceScenario, TheLabRunnerReadsItsMeasuredQuantities) {
  std::vector<LabParam> params;
  auto number = [&](const char* name, double v) {
    LabParam p;
    p.name = name;
    p.type = LabParamType::kNumber;
    p.number = v;
    params.push_back(p);
  };
  auto text = [&](const char* name, const char* v) {
    LabParam p;
    p.name = name;
    p.type = LabParamType::kString;
    p.text = v;
    params.push_back(p);
  };
  number("tp", 4);
  number("requests", 100);
  text("batching", "all");
  const LabRunResult r = RunLabScenario("inference", params);
  for (const char* q : {"tokens_per_s", "decode_step_us", "decode_allreduce_us", "kv_cache_peak_bytes",
                        "static_tokens_per_s", "continuous_tokens_per_s", "static_e2e_p50_ms",
                        "continuous_e2e_p50_ms", "correct", "allreduces"})
    EXPECT_EQ(r.measured.count(q), 1u) << q;
  EXPECT_EQ(r.measured.at("correct"), 1);
  EXPECT_GT(r.measured.at("decode_allreduce_us"), 0);
}

}  // namespace
}  // namespace shardlab
