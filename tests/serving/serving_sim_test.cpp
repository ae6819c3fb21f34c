// The serving simulation against hand-computed timings on a tiny trace,
// the continuous policy's promise (no idle slot while a request waits),
// the paged KV cache's prefix sharing, and bad input.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "engine/core/error.h"
#include "engine/serving/arrivals.h"
#include "engine/serving/batcher.h"
#include "engine/serving/kv_cache.h"
#include "engine/serving/serving_sim.h"

namespace shardlab {
namespace {

constexpr TimeNs kMs = 1'000'000;

// A toy step cost: 10 ms a step plus 1 ms per prompt token prefilled.
TimeNs ToyCost(const StepWork& w) { return 10 * kMs + w.prefill_tokens * kMs; }

std::vector<RequestArrival> TinyTrace() {
  // A: prompt 2, 3 tokens out; B: 2, 1; C: 2, 2; all at t = 0.
  return ParseRequestFile("0 2 3\n0 2 1\n0 2 2\n", "tiny.txt", 0);
}

ServingConfig Config(BatchingPolicy policy) {
  ServingConfig c;
  c.batcher.policy = policy;
  c.batcher.max_batch = 2;
  c.record_steps = true;
  return c;
}

TEST(ServingSim, ContinuousBatchingMatchesTheHandCount) {
  // Step 1 prefills A and B (4 tokens, 14 ms): B is done at 14. C takes B's
  // slot: step 2 prefills C and decodes A (12 ms, to 26); step 3 decodes
  // both (10 ms, to 36): A and C are done.
  const ServingResult r = SimulateServing(TinyTrace(), Config(BatchingPolicy::kContinuous), ToyCost);
  ASSERT_EQ(r.requests.size(), 3u);
  EXPECT_EQ(r.requests[0].first_token_ns, 14 * kMs);
  EXPECT_EQ(r.requests[0].finish_ns, 36 * kMs);
  EXPECT_EQ(r.requests[1].finish_ns, 14 * kMs);
  EXPECT_EQ(r.requests[2].first_token_ns, 26 * kMs);
  EXPECT_EQ(r.requests[2].finish_ns, 36 * kMs);
  EXPECT_EQ(r.makespan_ns, 36 * kMs);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 6 / 0.036);
  EXPECT_EQ(r.step_count, 3);
  EXPECT_EQ(r.padded_tokens, 0);
  EXPECT_EQ(r.ttft_ns.p50, 14.0 * kMs);  // 14, 14, 26
  EXPECT_EQ(r.e2e_ns.p99, 36.0 * kMs);
}

TEST(ServingSim, StaticBatchingMatchesTheHandCount) {
  // A and B, padded to prompt 2 and output 3: 14 + 10 + 10 ms (B's row is
  // padding after step 1); then C alone: 12 + 10 ms.
  const ServingResult r = SimulateServing(TinyTrace(), Config(BatchingPolicy::kStatic), ToyCost);
  EXPECT_EQ(r.requests[0].finish_ns, 34 * kMs);
  EXPECT_EQ(r.requests[1].finish_ns, 14 * kMs);
  EXPECT_EQ(r.requests[2].first_token_ns, 46 * kMs);
  EXPECT_EQ(r.requests[2].finish_ns, 56 * kMs);
  EXPECT_EQ(r.makespan_ns, 56 * kMs);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 6 / 0.056);
  EXPECT_EQ(r.computed_tokens, 4 + 2 + 2 + 2 + 1);
  EXPECT_EQ(r.padded_tokens, 2);
  EXPECT_EQ(r.ttft_ns.p99, 46.0 * kMs);
}

TEST(ServingSim, DynamicBatchingClosesABatchAtItsTimeout) {
  // One request at 0, one at 30 ms; max batch 2, timeout 5 ms: the first
  // goes alone at 5 ms (11 ms of prefill: first token at 16 ms).
  ServingConfig c = Config(BatchingPolicy::kDynamic);
  c.batcher.timeout_ns = 5 * kMs;
  const ServingResult r = SimulateServing(ParseRequestFile("0 1 1\n30 1 1\n", "t.txt", 0), c, ToyCost);
  EXPECT_EQ(r.requests[0].admitted_ns, 5 * kMs);
  EXPECT_EQ(r.requests[0].first_token_ns, 16 * kMs);
  // The second is the last: no wait for a batch that cannot fill.
  EXPECT_EQ(r.requests[1].admitted_ns, 30 * kMs);
}

TEST(ServingSim, ContinuousBatchingNeverLeavesASlotIdleWhileARequestWaits) {
  ArrivalSpec spec;
  spec.rate_per_s = 400;
  spec.requests = 300;
  spec.prompt_mean = 20;
  spec.output_mean = 30;
  const auto arrivals = GenerateArrivals(spec);
  ServingConfig c = Config(BatchingPolicy::kContinuous);
  c.batcher.max_batch = 4;
  c.replicas = 2;
  const ServingResult r = SimulateServing(arrivals, c, ToyCost);
  int checked = 0;
  for (const ServingStepRecord& s : r.steps)
    if (s.queued > 0) {
      EXPECT_EQ(s.running, c.batcher.max_batch) << "step at " << s.start_ns << " on replica " << s.replica;
      ++checked;
    }
  EXPECT_GT(checked, 100);  // the trace does load the server
  EXPECT_EQ(r.idle_slot_steps, 0);
  // The same check fails for static batching: finished rows sit idle.
  c.batcher.policy = BatchingPolicy::kStatic;
  const ServingResult s = SimulateServing(arrivals, c, ToyCost);
  int idle = 0;
  for (const ServingStepRecord& step : s.steps) idle += step.queued > 0 && step.running < c.batcher.max_batch;
  EXPECT_GT(idle, 0);
  // And continuous serves the same requests sooner.
  EXPECT_LT(r.e2e_ns.p50, s.e2e_ns.p50);
  EXPECT_GT(r.tokens_per_s, s.tokens_per_s);
}

TEST(PagedKvCache, PrefixSharingHoldsTheSharedBlocksOnce) {
  PagedKvCache cache(100, 4);
  // Three requests of 14 positions whose first 10 are one prefix: 2 full
  // blocks shared (the prefix's partial third block is each one's own).
  for (int seq = 0; seq < 3; ++seq) ASSERT_TRUE(cache.Admit(seq, 14, 0, 10));
  EXPECT_EQ(cache.used_blocks(), 2 + 3 * 2);  // without sharing: 3 × 4 = 12
  int shared = 0;
  for (std::int64_t b = 0; b < static_cast<std::int64_t>(cache.owners().size()); ++b)
    if (cache.owners()[static_cast<std::size_t>(b)] == -2) {
      ++shared;
      EXPECT_EQ(cache.refcount(b), 3);
    }
  EXPECT_EQ(shared, 2);
  EXPECT_DOUBLE_EQ(cache.Occupancy(), (8.0 + 3 * 6) / (8 * 4));
  cache.Release(0);
  cache.Release(1);
  EXPECT_EQ(cache.used_blocks(), 2 + 2);  // the prefix stays while one user holds it
  cache.Release(2);
  EXPECT_EQ(cache.used_blocks(), 0);
  // A sequence grows block by block; a full cache says no.
  PagedKvCache small(3, 4);
  ASSERT_TRUE(small.Admit(7, 5));
  EXPECT_EQ(small.used_blocks(), 2);
  EXPECT_TRUE(small.Grow(7, 12));
  EXPECT_FALSE(small.Grow(7, 13));
  EXPECT_FALSE(small.Admit(8, 1));
}

void ExpectField(const std::function<void()>& f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "no error for " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(ServingSim, BadInputGetsOneLineNamingTheField) {
  ArrivalSpec spec;
  spec.rate_per_s = -5;
  ExpectField([&] { GenerateArrivals(spec); }, "rate: ");
  ServingConfig c = Config(BatchingPolicy::kContinuous);
  c.kv_blocks = 1;  // one block of 16 positions; the request needs 5
  ExpectField([&] { SimulateServing(ParseRequestFile("0 60 10\n", "r.txt", 0), c, ToyCost); }, "kv-cache: ");
  ExpectField([] { ParseRequestFile("0 4 4\n1 x 4\n", "r.txt", 0); }, "r.txt:2:prompt: ");
  ExpectField([] { ParseRequestFile("0 4\n", "r.txt", 0); }, "r.txt:1:request: ");
  ExpectField([] { ParseRequestFile("5 4 4\n1 4 4\n", "r.txt", 0); }, "r.txt:2:arrival_ms: ");
  ExpectField([] { ParseBatchingPolicy("greedy"); }, "batching: ");
}

}  // namespace
}  // namespace shardlab
