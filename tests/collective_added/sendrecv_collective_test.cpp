// A collective added from this one file: nccl-tests' sendrecv (rank r sends
// its buffer to rank r+1 and receives rank r-1's), registered as a def of
// the collectives' table under a kind the enum does not name. Nothing else
// changes, and it parses, builds, checks its parameters, runs on the
// simulator, verifies, shows its chunks, times itself with a formula and
// runs through the "collective" scenario like the built-in ones: proof that
// a collective is one file filling one table (docs/architecture.md,
// "Adding a collective"). A built-in one is the same file in
// engine/algorithms/collectives/ with an enum value instead of the cast,
// and the generated list calling its Register function instead of the
// static initializer below (test executables link their objects whole).
// It is its own executable (tests/CMakeLists.txt), so the kind is in no
// other test's lists; the table walk (algorithms/collective_table_test.cpp)
// runs in it too, over sendrecv as over the built-in kinds.
#include <gtest/gtest.h>

#include <string>

#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/collective_internal.h"
#include "engine/core/error.h"
#include "engine/run/chunk_state.h"
#include "engine/run/executor.h"
#include "engine/run/metrics.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/scenario.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

constexpr auto kSendRecv = static_cast<CollectiveKind>(200);

// ---- the def: everything a built-in collective's file holds ------------------

// One step: every rank sends its "send" to the next rank's "recv" (one
// rank: a local copy).
Plan BuildRingSendRecv(const CollectiveParams& p) {
  PlanBuilder builder(detail::CollectivePlanName(p), p.ranks);
  detail::AddCollectiveBuffers(builder, p);  // "send" and "recv", as the def's layout says
  const int n = p.ranks;
  const Bytes bytes = p.count * DTypeBytes(p.dtype);
  if (n == 1) {
    Op copy;
    copy.kind = OpKind::kCopy;
    copy.lane = Lane::kCopy;
    copy.rank = 0;
    copy.step = 0;
    copy.collective_seq = p.collective_seq;
    copy.src = BufferSlice{0, 0, p.count};
    copy.dst = BufferSlice{1, 0, p.count};
    copy.bytes = bytes;
    builder.AddOp(copy);
    return builder.Finish();
  }
  const std::vector<OpId> none;
  for (int r = 0; r < n; ++r) {
    const int next = (r + 1) % n;
    builder.AddTransfer(r, next, BufferSlice{r, 0, p.count}, BufferSlice{n + next, 0, p.count},
                        ReduceOp::kNone, 0, OpTags{}, none, none, p.collective_seq);
  }
  return builder.Finish();
}

void RegisterSendRecv() {
  CollectiveDef d;
  d.kind = kSendRecv;
  d.name = "sendrecv";
  d.title = "send-receive";
  d.tag = "SR";
  d.nccl_tests = "sendrecv_perf";
  d.busbw_factor = [](int) { return 1.0; };
  d.busbw_formula = "1";
  d.layout = CollectiveLayout::kSendRecv;
  d.algos = {
      {CollectiveAlgo::kRing, BuildRingSendRecv, [](const CollectiveParams&) { return 1; },
       [](const CollectiveParams& p) -> std::int64_t { return p.ranks == 1 ? 1 : 2 * p.ranks; },
       [](const CollectiveParams& p, TimeNs alpha, Gbps b) {
         CollectiveCost cost;
         const double m = static_cast<double>(CollectiveSizeBytes(p));
         cost.ns = alpha + m / b;
         cost.formula = "α + M/B = " + FormatTime(alpha) + " + " + FormulaBytes(m) + " / " +
                        FormulaGbps(b) + " = " + FormatTime(cost.ns);
         return cost;
       }},
  };
  d.input = detail::WholeInput;
  d.final_contributors = [](const CollectiveParams& p, int rank, int) {
    return std::vector<int>{(rank + p.ranks - 1) % p.ranks};
  };
  d.reference = [](const CollectiveParams& p, ReferenceSink& out) {
    for (int r = 0; r < p.ranks; ++r) out.Copied(r, 0, p.count, (r + p.ranks - 1) % p.ranks, 0);
  };
  // NCCL has no one call for it (ncclSend/ncclRecv pairs): no nccl algorithm.
  RegisterCollective(std::move(d));
}

// Before main, so the "collective" scenario's kinds list it too.
const bool registered = (RegisterSendRecv(), true);

// ---- what the rest of the project does with it, unchanged --------------------

CollectiveParams Params(int ranks, std::int64_t count) {
  CollectiveParams p;
  p.kind = ParseCollectiveKind("sendrecv");
  p.algo = DefaultAlgo(p.kind);
  p.ranks = ranks;
  p.count = count;
  return p;
}

TEST(SendRecvCollective, IsInTheTableWithItsNamesAndFactor) {
  ASSERT_TRUE(registered);
  EXPECT_EQ(ParseCollectiveKind("Send-Recv"), kSendRecv);
  EXPECT_STREQ(CollectiveKindName(kSendRecv), "sendrecv");
  EXPECT_STREQ(CollectiveTitle(kSendRecv), "send-receive");
  EXPECT_EQ(DefaultAlgo(kSendRecv), CollectiveAlgo::kRing);
  EXPECT_EQ(CollectiveAlgoList(kSendRecv), "ring");
  EXPECT_FALSE(CollectiveHasAlgo(kSendRecv, CollectiveAlgo::kNccl));
  EXPECT_FALSE(CollectiveHasRoot(kSendRecv));
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(kSendRecv, 8), 1.0);
  const CollectiveMetrics m = ComputeCollectiveMetrics(kSendRecv, 8, 1000, 1000);
  EXPECT_DOUBLE_EQ(m.busbw_gbps, m.algbw_gbps);
  bool listed = false;
  for (const CollectiveDef* def : Collectives()) listed = listed || def->kind == kSendRecv;
  EXPECT_TRUE(listed);
  // Its parameters are checked like any kind's.
  CollectiveParams tree = Params(4, 16);
  tree.algo = CollectiveAlgo::kTree;
  try {
    BuildCollective(tree);
    FAIL() << "a tree sendrecv was built";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "sendrecv has no 'tree' algorithm (valid for sendrecv: ring)");
  }
}

TEST(SendRecvCollective, RunsOnTheSimulatorAndVerifies) {
  for (const int n : {1, 2, 5}) {
    const CollectiveParams p = Params(n, 1001);
    const Plan plan = BuildCollective(p);
    EXPECT_EQ(plan.num_steps, ExpectedSteps(p));
    ASSERT_EQ(plan.collectives.size(), 1u);
    EXPECT_EQ(plan.collectives[0].tag, "SR");
    EXPECT_EQ(plan.collectives[0].what, "send-receive (ring)");
    RunOptions options;
    options.seed = 4;
    Executor ex(CreateBackend("sim"), plan, MakeSharedBus(n, 100, 500), options);
    ChunkState chunks(p, ex.plan());
    EXPECT_EQ(chunks.FormatRanks()[0], n == 1 ? "GPU0: [_]" : "GPU0: [_, _" + std::string(n > 2 ? ", _, _, _" : "") + "]");
    ex.RunToEnd(chunks);
    ASSERT_EQ(ex.state(), ExecutorState::kDone) << ex.error();
    const VerifyResult v = VerifyCollective(p, ex.plan(), 4, [&ex](BufferId id) { return ex.backend().BufferData(id); });
    EXPECT_TRUE(v.correct) << n;
    EXPECT_EQ(v.checked, n * 1001);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) EXPECT_EQ(chunks.Contributors(r, c), std::vector<int>{(r + n - 1) % n});
    // A wrong result is caught: rank 0's output zeroed.
    const VerifyResult zero = VerifyCollective(p, ex.plan(), 4, [&ex, n](BufferId id) {
      static const std::vector<float> zeros(1001, 0.0f);
      return id == n ? std::span<const float>(zeros) : ex.backend().BufferData(id);
    });
    EXPECT_FALSE(zero.correct);
  }
}

TEST(SendRecvCollective, RunsThroughTheCollectiveScenario) {
  ScenarioParams params(*FindScenario("collective"));
  params.Set("kind", "sendrecv");
  params.Set("ranks", "4");
  params.Set("size", "64K");
  const ScenarioOutcome out = RunScenario(params);
  EXPECT_TRUE(out.summary.verdict.correct()) << out.summary.verdict.reason;
  EXPECT_EQ(out.summary.values.at("steps"), 1);
  EXPECT_DOUBLE_EQ(out.summary.values.at("busbw_gbps"), out.summary.values.at("algbw_gbps"));
  const PreparedCollective& detail = out.prepared->Detail<PreparedCollective>();
  EXPECT_EQ(detail.formula.rfind("α + M/B = ", 0), 0u) << detail.formula;
  EXPECT_GT(detail.predicted_ns, 0);
  EXPECT_EQ(out.summary.line.rfind("ring send-receive of 64 KiB on 4 ranks", 0), 0u) << out.summary.line;
}

}  // namespace
}  // namespace shardlab
