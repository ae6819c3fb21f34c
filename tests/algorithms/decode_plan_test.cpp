// The served decoder (decode_plan.h) against the single-device decoder
// recomputed without a cache (decoder_bounds.h): every request's logits at
// every position, for every layout; and the plan's all-reduces counted.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "engine/algorithms/decode_plan.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/memory_tracker.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"
#include "engine/verify/bounds.h"
#include "engine/verify/decoder_bounds.h"
#include "engine/verify/verdict.h"

namespace shardlab {
namespace {

constexpr std::uint64_t kSeed = 7;

DecoderConfig SmallModel() {
  DecoderConfig m;
  m.layers = 2;
  m.hidden = 32;
  m.heads = 4;
  m.ffn = 64;
  m.vocab = 40;
  m.max_context = 16;
  return m;
}

// Three requests of unequal prompts and outputs, so passes shrink.
std::vector<ServedRequest> Requests(const DecoderConfig& m, int count = 3) {
  const int prompts[] = {3, 5, 2, 4}, steps[] = {4, 2, 5, 3};
  std::vector<ServedRequest> out;
  for (int i = 0; i < count; ++i) {
    ServedRequest q;
    q.prompt = prompts[i % 4];
    q.tokens = DecoderTokens(kSeed, i, prompts[i % 4] + steps[i % 4], m.vocab);
    out.push_back(q);
  }
  return out;
}

struct Ran {
  DecodePlan decode;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
};

std::unique_ptr<Ran> Serve(const DecodePlanConfig& c) {
  auto ran = std::make_unique<Ran>();
  ran->decode = BuildDecodePlan(c);
  RunOptions options;
  options.seed = kSeed;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->decode.plan,
                                             MakeTopologyPreset("dgx-a100"), options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  return ran;
}

Verdict JudgeLogits(const Ran& ran) {
  const DecodePlanConfig& c = ran.decode.config;
  VerdictJudge judge;
  for (const DecodeLogitsBuffer& b : ran.decode.logits) {
    const DecoderLogits ref = DecoderReferenceLogits(
        c.model, kSeed, c.requests[static_cast<std::size_t>(b.request)].tokens, UnitRoundoff(DType::kF32));
    judge.Compare("logits of request " + std::to_string(b.request) + " (rank " + std::to_string(b.rank) + ")",
                  ran.executor->backend().BufferData(b.buffer), ref.value, ref.bound);
  }
  return judge.Finish();
}

class DecodeLayouts : public ::testing::TestWithParam<std::tuple<int, int, int, int>> {};

TEST_P(DecodeLayouts, LogitsEqualTheSingleDeviceDecoderAtEveryPosition) {
  const auto [tp, pp, replicas, microbatches] = GetParam();
  DecodePlanConfig c;
  c.model = SmallModel();
  c.layout = {tp, pp, replicas};
  c.microbatches = microbatches;
  c.requests = Requests(c.model, 4);
  const auto ran = Serve(c);
  const Verdict v = JudgeLogits(*ran);
  EXPECT_TRUE(v.correct()) << v.Detail();
  // Every request's logits are on every tp rank of its replica's last stage.
  EXPECT_EQ(ran->decode.logits.size(), c.requests.size() * static_cast<std::size_t>(tp));
}

INSTANTIATE_TEST_SUITE_P(Serving, DecodeLayouts,
                         ::testing::Values(std::make_tuple(1, 1, 1, 1), std::make_tuple(2, 1, 1, 1),
                                           std::make_tuple(4, 1, 1, 1), std::make_tuple(1, 2, 1, 2),
                                           std::make_tuple(2, 2, 1, 2), std::make_tuple(2, 1, 2, 1),
                                           std::make_tuple(2, 2, 2, 2), std::make_tuple(4, 1, 2, 1)));

TEST(DecodePlan, AWrongCacheRowIsCaught) {
  // The check can fail: feed the plan other ids than the reference reads.
  DecodePlanConfig c;
  c.model = SmallModel();
  c.layout = {2, 1, 1};
  c.requests = Requests(c.model, 2);
  auto ran = Serve(c);
  auto& tokens = ran->decode.config.requests[1].tokens;
  tokens.back() = (tokens.back() + 1) % c.model.vocab;  // the last decode step's input differs
  const Verdict v = JudgeLogits(*ran);
  EXPECT_FALSE(v.correct());
  EXPECT_NE(v.Detail().find("request 1"), std::string::npos) << v.Detail();
}

TEST(DecodePlan, EachPassSendsTwoAllReducesPerLayerOfTokensTimesHiddenTimesDtype) {
  DecodePlanConfig c;
  c.model = SmallModel();
  c.layout = {4, 1, 1};
  c.requests = Requests(c.model, 3);
  const auto ran = Serve(c);
  const DecodePlan& d = ran->decode;
  // Hand count per pass: prefill T = 3 + 5 + 2 prompt tokens; decode step j
  // T = the requests with more than j − 1 steps left (4, 2, 5 steps).
  const std::map<int, std::int64_t> tokens = {{0, 10}, {1, 3}, {2, 3}, {3, 2}, {4, 2}, {5, 1}};
  std::map<int, int> per_pass;
  for (const DecodeAllReduce& a : d.allreduces) {
    ++per_pass[a.pass];
    EXPECT_EQ(a.tokens, tokens.at(a.pass)) << "pass " << a.pass;
    EXPECT_EQ(a.bytes, tokens.at(a.pass) * c.model.hidden * 4) << "pass " << a.pass;
  }
  ASSERT_EQ(per_pass.size(), tokens.size());
  for (const auto& [pass, n] : per_pass) EXPECT_EQ(n, 2 * c.model.layers) << "pass " << pass;
  // From the events: each all-reduce's ring sends 2(tp − 1) chunks from every
  // rank, T·H·4/tp bytes each.
  std::map<int, Bytes> sent;  // collective seq -> bytes from rank 0
  std::map<int, int> sends;
  for (const Event& e : ran->sink.events) {
    if (e.kind != OpKind::kSend || e.rank != 0) continue;
    const Op& op = ran->executor->plan().ops[static_cast<std::size_t>(e.op)];
    sent[op.collective_seq] += e.bytes;
    ++sends[op.collective_seq];
  }
  ASSERT_EQ(sent.size(), d.allreduces.size());
  for (const DecodeAllReduce& a : d.allreduces) {
    EXPECT_EQ(sends[a.seq], 2 * (c.layout.tp - 1));
    EXPECT_EQ(sent[a.seq], 2 * (c.layout.tp - 1) * a.bytes / c.layout.tp);
  }
}

TEST(DecodePlan, OneRankHasNoAllReduceAndPipelineStagesPassActivations) {
  DecodePlanConfig c;
  c.model = SmallModel();
  c.layout = {1, 2, 1};
  c.requests = Requests(c.model, 2);
  const DecodePlan d = BuildDecodePlan(c);
  EXPECT_TRUE(d.allreduces.empty());
  const PlanTraffic traffic = CountTraffic(d.plan);
  // Stage 0 → 1: every pass's T × H activations; 1 → 0: the sampled ids (4 B each).
  // Prefill 3 + 5 tokens, then decode passes of 2, 2 and 1 tokens (4 and 2 steps).
  EXPECT_EQ(traffic.sent_bytes[0], (8 + 2 + 2 + 1 + 1) * 32 * 4);
  EXPECT_EQ(traffic.sent_bytes[1], (2 + 2 + 1 + 1) * 4);
}

TEST(DecodePlan, KvCacheIsShardedByHeads) {
  DecodePlanConfig c;
  c.model = SmallModel();
  c.requests = Requests(c.model, 3);
  for (int tp : {1, 2, 4}) {
    c.layout = {tp, 1, 1};
    const DecodePlan d = BuildDecodePlan(c);
    // 2 (K, V) × layers × requests × max_context × H/tp × 4 bytes on each rank.
    for (Bytes b : d.kv_cache_bytes) EXPECT_EQ(b, 2 * 2 * 3 * 16 * (32 / tp) * 4) << "tp " << tp;
  }
  // The memory tracker of a run counts the same bytes, on every rank.
  c.layout = {2, 1, 1};
  const auto ran = Serve(c);
  const MemoryUsage* memory = ran->executor->backend().memory();
  ASSERT_NE(memory, nullptr);
  ASSERT_EQ(memory->ranks.size(), 2u);
  for (const RankMemory& r : memory->ranks)
    EXPECT_EQ(r.peak[static_cast<int>(MemoryCategory::kActivations)], 2 * 2 * 3 * 16 * 16 * 4);
}

TEST(DecodePlan, BadLayoutsAreRefusedWithTheField) {
  DecodePlanConfig c;
  c.model = SmallModel();
  c.requests = Requests(c.model, 1);
  c.layout = {3, 1, 1};
  try {
    BuildDecodePlan(c);
    FAIL() << "tp 3 does not divide 4 heads";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("heads: ", 0), 0u) << e.what();
  }
  c.layout = {1, 3, 1};
  EXPECT_THROW(BuildDecodePlan(c), Error);
  c.layout = {1, 1, 1};
  c.model.max_context = 4;  // request 0 needs 3 + 4 = 7 positions
  try {
    BuildDecodePlan(c);
    FAIL() << "a request longer than the cache";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("max-context: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace shardlab
