// Stragglers and failures: the switches' syntax and checks, and what the
// simulator makes of them against the formula.
#include <gtest/gtest.h>

#include <map>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/faults.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"
#include "engine/topology/ring_order.h"

namespace shardlab {
namespace {

std::string MessageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Faults, SwitchesParse) {
  const SlowRank s = ParseSlowRank("3:2.5");
  EXPECT_EQ(s.rank, 3);
  EXPECT_DOUBLE_EQ(s.factor, 2.5);
  const LinkThrottle t = ParseLinkThrottle("gpu2-gpu3:10");
  EXPECT_EQ(t.link.a, "gpu2");
  EXPECT_EQ(t.link.b, "gpu3");
  EXPECT_DOUBLE_EQ(t.gbps, 10);
  const LinkFailure lf = ParseLinkFailure("1-2@4");
  EXPECT_EQ(lf.step, 4);
  const RankFailure rf = ParseRankFailure("5@0");
  EXPECT_EQ(rf.rank, 5);
  EXPECT_EQ(rf.step, 0);
}

TEST(Faults, BadSwitchesSayWhatIsWrongInOneLine) {
  EXPECT_EQ(MessageOf([] { ParseSlowRank("3:0"); }), "slow_rank: FACTOR must be more than 0 (got 0)");
  EXPECT_EQ(MessageOf([] { ParseSlowRank("3"); }), "slow_rank: '3' is not R:FACTOR (as in 3:2)");
  EXPECT_EQ(MessageOf([] { ParseSlowRank("x:2"); }),
            "slow_rank: 'x' is not a rank (a whole number from 0)");
  EXPECT_EQ(MessageOf([] { ParseLinkThrottle("gpu2:10"); }),
            "throttle_link: 'gpu2' names no link (write A-B, as in gpu2-gpu3:10)");
  EXPECT_EQ(MessageOf([] { ParseRankFailure("2@-1"); }),
            "fail_rank: '-1' is not a step (a whole number from 0)");
  const Topology dgx = MakeTopologyPreset("dgx-a100");
  Faults f;
  f.failed_links.push_back(ParseLinkFailure("gpu2-gpu5@1"));
  const std::string no_link = MessageOf([&] { ResolveFaults(f, dgx, 8); });
  EXPECT_NE(no_link.find("fail_link: no link between gpu2 and gpu5 in dgx-a100 (gpu2 links to "
                         "nvswitch"),
            std::string::npos)
      << no_link;
  Faults g;
  g.slow_ranks.push_back(ParseSlowRank("8:2"));
  EXPECT_EQ(MessageOf([&] { ResolveFaults(g, dgx, 8); }),
            "slow_rank: rank 8 is out of range (the run has 8 ranks, 0..7)");
  Faults h;
  h.throttles.push_back(ParseLinkThrottle("gpu2-gpux:10"));
  EXPECT_NE(MessageOf([&] { ResolveFaults(h, dgx, 8); }).find("does not name two nodes of dgx-a100"),
            std::string::npos);
  CollectiveParams c;
  c.ranks = 4;
  c.count = 64;
  const Plan plan = BuildCollective(c);  // 6 steps: 0..5
  Faults k;
  k.failed_ranks.push_back(ParseRankFailure("1@6"));
  EXPECT_EQ(MessageOf([&] { CheckFaultSteps(k, plan); }),
            "fail_rank: step 6 is past the run's last step (5)");
}

TEST(Faults, LinksResolveByNodeNameOrGpuRank) {
  const Topology ring = MakeUniformRing(4, 100, 1000);
  Faults f;
  f.throttles.push_back(ParseLinkThrottle("1-2:5"));
  f.throttles.push_back(ParseLinkThrottle(ring.nodes[static_cast<std::size_t>(ring.gpus[3])].name +
                                          "-" + ring.nodes[static_cast<std::size_t>(ring.gpus[0])].name +
                                          ":7"));
  ResolveFaults(f, ring, 4);
  Topology slowed = ring;
  ApplyLinkThrottles(f, slowed);
  const Link& a = slowed.links[static_cast<std::size_t>(f.throttles[0].link.link)];
  EXPECT_TRUE((a.a == ring.gpus[1] && a.b == ring.gpus[2]) || (a.a == ring.gpus[2] && a.b == ring.gpus[1]));
  EXPECT_DOUBLE_EQ(a.gbps, 5);
  EXPECT_DOUBLE_EQ(slowed.links[static_cast<std::size_t>(f.throttles[1].link.link)].gbps, 7);
}

struct SimRun {
  std::vector<Event> events;
  std::string error;
  std::map<int, TimeNs> finish;  // per rank: its last op's end
};

SimRun Simulate(const Plan& plan, const Topology& topology, Faults faults) {
  ResolveFaults(faults, topology, plan.num_ranks);
  CheckFaultSteps(faults, plan);
  RunOptions options;
  options.timing_only = true;
  options.faults = faults;
  Executor exec(CreateBackend("sim"), plan, topology, options);
  SimRun run;
  VectorSink sink;
  try {
    exec.RunToEnd(sink);
  } catch (const Error& e) {
    run.error = e.what();
  }
  run.events = sink.events;
  for (const Event& e : sink.events) run.finish[e.rank] = std::max(run.finish[e.rank], e.end_ns);
  return run;
}

// A ring all-reduce of 2(n-1) steps, in which each send waits for the
// receive of the step before. Rank R's sends take F times as long (T a
// step's transfer at full speed); its send lane runs them one after the
// other, so its last send ends at 2(n-1)·F·T, and rank R+1+j (j hops
// downstream) receives its last chunk at (2(n-1) - j)·F·T + j·T: the chain
// leaves R's lane j steps early and crosses j full-speed hops. The
// latency (10 ns against T = 80 us here) is not slowed.
TEST(Faults, ASlowRankSlowsEveryRanksFinishAsTheChainFormulaSays) {
  const int n = 4, slow_rank = 2;
  const double factor = 2.0;
  const Topology ring = MakeUniformRing(n, 100, 10);
  CollectiveParams c;
  c.ranks = n;
  c.count = 8 << 20;
  c.ring_order = {0, 1, 2, 3};
  const Plan plan = BuildCollective(c);
  const SimRun base = Simulate(plan, ring, {});
  Faults slow;
  slow.slow_ranks.push_back({slow_rank, factor});
  const SimRun slowed = Simulate(plan, ring, slow);
  ASSERT_TRUE(base.error.empty() && slowed.error.empty()) << base.error << slowed.error;
  const double steps = 2.0 * (n - 1);
  for (int j = 0; j < n; ++j) {
    const int r = (slow_rank + 1 + j) % n;
    const double expected = r == slow_rank ? factor : ((steps - j) * factor + j) / steps;
    EXPECT_NEAR(slowed.finish.at(r) / base.finish.at(r), expected, 0.01) << "rank " << r;
  }
}

// On a DGX-1V, throttling a link the automatic ring uses moves the ring off it.
TEST(Faults, AThrottledLinkOnACubeMeshChangesTheAutomaticRing) {
  const Topology dgx1 = MakeTopologyPreset("dgx1-v100");
  const std::vector<int> before = ChooseRingOrder(dgx1, 8);
  // The first hop of the chosen ring, throttled to PCIe speed and below.
  const std::string hop = std::to_string(before[0]) + "-" + std::to_string(before[1]);
  Faults f;
  f.throttles.push_back(ParseLinkThrottle(hop + ":1"));
  ResolveFaults(f, dgx1, 8);
  Topology throttled = dgx1;
  ApplyLinkThrottles(f, throttled);
  const std::vector<int> after = ChooseRingOrder(throttled, 8);
  EXPECT_NE(after, before);
  EXPECT_GT(RingBottleneckGbps(throttled, after), 1.0);
  bool uses_hop = false;
  for (std::size_t i = 0; i < after.size(); ++i) {
    const int a = after[i], b = after[(i + 1) % after.size()];
    uses_hop = uses_hop || (a == before[0] && b == before[1]) || (a == before[1] && b == before[0]);
  }
  EXPECT_FALSE(uses_hop);
}

TEST(Faults, AFailedRankEndsTheRunNamingTheCollectiveItNeverJoined) {
  const Topology ring = MakeUniformRing(4, 100, 10);
  CollectiveParams c;
  c.ranks = 4;
  c.count = 1024;
  const Plan plan = BuildCollective(c);
  Faults f;
  f.failed_ranks.push_back({3, 2});
  const SimRun run = Simulate(plan, ring, f);
  EXPECT_NE(run.error.find("rank 3 failed at step 2 (fail_rank 3@2) and never joined collective #0 "
                           "(step 2); ranks 0, 1, 2 waited for it; the run stopped at"),
            std::string::npos)
      << run.error;
  for (const Event& e : run.events) {
    if (e.rank == 3) {
      EXPECT_LT(e.step, 2);
    }
  }
  EXPECT_FALSE(run.events.empty());
}

TEST(Faults, AFailedLinkHoldsTheTransfersThatCrossIt) {
  const Topology ring = MakeUniformRing(4, 100, 10);
  CollectiveParams c;
  c.ranks = 4;
  c.count = 1024;
  c.ring_order = {0, 1, 2, 3};
  const Plan plan = BuildCollective(c);
  Faults f;
  f.failed_links.push_back(ParseLinkFailure("1-2@3"));
  const SimRun run = Simulate(plan, ring, f);
  EXPECT_NE(run.error.find("failed at step 3 (fail_link), and the transfer 1 -> 2 of collective #0 "
                           "(step 3) needs it"),
            std::string::npos)
      << run.error;
  for (const Event& e : run.events) {
    const bool crosses = e.kind == OpKind::kRecv && e.peer == 1 && e.rank == 2;
    EXPECT_FALSE(crosses && e.step >= 3) << "op " << e.op << " crossed the failed link";
  }
  EXPECT_LT(run.events.size(), plan.ops.size());
}

}  // namespace
}  // namespace shardlab
