// "Why is it slow?" in the app: the critical path the Gantt highlights,
// a click on a bar lighting exactly its route's links, a click on a link
// listing the transfers that crossed it, the details of an op, and the
// ring drawn over the machine's real links.
#include "app/gui/model/run_insight.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>
#include <utility>

#include "app/gui/model/fault_marks.h"
#include "app/gui/model/scenario_fields.h"
#include "engine/topology/presets.h"
#include "tests/gui_model/ring_settings.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab::gui {
namespace {

bool PollUntilDone(Session& session) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (session.state() == SessionState::kRunning) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    session.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return session.state() == SessionState::kDone;
}

/// A ring all-reduce of 1 MiB over the 8 GPUs of a DGX-1's cube-mesh, the
/// ring order chosen by the app (auto).
ScenarioSettings RingOnDgx1() {
  ScenarioSettings s = test::RingAllReduce4x1K();
  s.SetParam("ranks", "8");
  s.SetParam("size", "1M");
  s.topology = "dgx1-v100";
  s.SetParam("ring_order", "auto");
  return s;
}

using LinkSet = std::set<std::pair<int, bool>>;

LinkSet AsSet(const std::vector<LinkHop>& hops) {
  LinkSet set;
  for (const LinkHop& h : hops) set.insert({h.link, h.forward});
  return set;
}

// Clicking a bar (through the Gantt's own hit test, at the bar's centre)
// selects exactly the links of its transfer's route, as the router gives
// it: for every transfer of the run, from its Recv row and its Send row.
TEST(RunInsight, ClickingABarSelectsExactlyItsRoutesLinks) {
  Session session;
  ASSERT_TRUE(session.Start(RingOnDgx1())) << session.error();
  ASSERT_TRUE(PollUntilDone(session)) << session.error();
  RunInsight insight;
  insight.Refresh(session);
  ASSERT_NE(insight.usage(), nullptr);
  const Plan& plan = *session.plan();
  RouteTable router(*session.topology());
  GanttFrame frame = FitGantt(session.store().end_ns(), 4000.0);
  frame.cursor_ns = 1e300;
  int clicked = 0;
  const std::vector<TimelineRow>& rows = session.store().rows();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (const Event& e : rows[r].events) {
      if (e.kind != OpKind::kRecv && e.kind != OpKind::kSend) continue;
      const double x = frame.TimeToPx(0.5 * (e.start_ns + e.end_ns));
      const OpId op = OpAtGanttPoint(session.store(), frame, static_cast<int>(r), x);
      ASSERT_EQ(op, e.op) << "the bar under its own centre";
      insight.SelectOp(op);
      const OpId recv = e.kind == OpKind::kRecv ? e.op : plan.ops[static_cast<std::size_t>(e.op)].match;
      EXPECT_EQ(insight.selection().op, recv) << "a Send selects its transfer";
      const int from = plan.ops[static_cast<std::size_t>(recv)].peer;
      const int to = plan.ops[static_cast<std::size_t>(recv)].rank;
      const LinkSet expected = AsSet(router.Between(from, to).hops);
      ASSERT_FALSE(expected.empty());
      LinkSet lit;
      for (const LitLink& l : insight.details().route) lit.insert({l.link, l.forward});
      EXPECT_EQ(lit, expected) << "op " << op << " GPU" << from << " -> GPU" << to;
      for (const LitLink& l : insight.details().route) {
        // Its own transfer runs at the op's midpoint: the link carries at least its rate.
        EXPECT_GE(l.load_gbps, 0.999 * static_cast<double>(e.bytes) / e.duration_ns());
      }
      ++clicked;
    }
  }
  EXPECT_EQ(clicked, static_cast<int>(session.store().event_count()));
  insight.Clear();
  EXPECT_TRUE(insight.selection().empty());
  EXPECT_EQ(insight.details().op, kNoOp);
}

// A click beside every bar selects nothing; a folded block neither.
TEST(RunInsight, ClickingEmptySpaceSelectsNothing) {
  Session session;
  ASSERT_TRUE(session.Start(RingOnDgx1())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  GanttFrame frame = FitGantt(session.store().end_ns(), 1000.0);
  frame.cursor_ns = 1e300;
  EXPECT_EQ(OpAtGanttPoint(session.store(), frame, 0, frame.TimeToPx(session.store().end_ns() * 1.02)), kNoOp);
  EXPECT_EQ(OpAtGanttPoint(session.store(), frame, 999, 10.0), kNoOp);
}

// A link lists exactly the transfers whose routes cross it, most bytes first.
TEST(RunInsight, ALinkListsTheTransfersThatCrossedItBusiestFirst) {
  Session session;
  ScenarioSettings s = RingOnDgx1();
  s.SetParam("ring_order", "0,1,2,3,4,5,6,7");  // 3 -> 4 and 7 -> 0 are not NVLinks: routes of two hops
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session)) << session.error();
  RunInsight insight;
  insight.Refresh(session);
  const LinkUsage& usage = *insight.usage();
  const Topology& topology = *session.topology();
  RouteTable router(topology);
  int crossings_seen = 0;
  for (std::size_t link = 0; link < topology.links.size(); ++link) {
    std::set<OpId> expected;
    for (const TimelineRow& row : session.store().rows()) {
      for (const Event& e : row.events) {
        if (e.kind != OpKind::kRecv) continue;
        for (const LinkHop& h : router.Between(e.peer, e.rank).hops) {
          if (h.link == static_cast<int>(link)) expected.insert(e.op);
        }
      }
    }
    const std::vector<LinkCrossing> crossings = usage.CrossingsOf(static_cast<int>(link));
    std::set<OpId> got;
    for (std::size_t i = 0; i < crossings.size(); ++i) {
      got.insert(crossings[i].op);
      if (i > 0) EXPECT_GE(crossings[i - 1].bytes, crossings[i].bytes);
    }
    EXPECT_EQ(got, expected) << LinkWords(topology, static_cast<int>(link));
    crossings_seen += static_cast<int>(crossings.size());
  }
  EXPECT_GT(crossings_seen, 56) << "8 ranks x 14 steps of transfers, some over two links";
}

// The details of one transfer: its numbers from its event, and the
// alpha-beta formula from the route the router gives (an independent
// reckoning here); what it waited for ends no later than it starts.
TEST(RunInsight, DetailsGiveTheTransfersFormulaAndWhatItWaitedFor) {
  Session session;
  ASSERT_TRUE(session.Start(RingOnDgx1())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  RunInsight insight;
  insight.Refresh(session);
  const Plan& plan = *session.plan();
  RouteTable router(*session.topology());
  // The last transfer to end: it waited for earlier steps.
  const Event* last = nullptr;
  for (const TimelineRow& row : session.store().rows()) {
    for (const Event& e : row.events) {
      if (e.kind == OpKind::kRecv && (last == nullptr || e.end_ns > last->end_ns)) last = &e;
    }
  }
  ASSERT_NE(last, nullptr);
  insight.SelectOp(last->op);
  const OpDetails& d = insight.details();
  EXPECT_EQ(d.op, last->op);
  EXPECT_EQ(d.bytes, last->bytes);
  EXPECT_DOUBLE_EQ(d.start_ns, last->start_ns);
  EXPECT_DOUBLE_EQ(d.duration_ns, last->duration_ns());
  EXPECT_NEAR(d.achieved_gbps, static_cast<double>(last->bytes) / last->duration_ns(), 1e-9);
  const Route& route = router.Between(last->peer, last->rank);
  EXPECT_NEAR(d.formula_ns, route.latency_ns + static_cast<double>(last->bytes) / route.bottleneck_gbps, 1e-6);
  EXPECT_NE(d.formula.find("\xCE\xB1 + n/\xCE\xB2"), std::string::npos) << d.formula;
  // An uncontended ring hop takes its formula's time in the simulator.
  EXPECT_NEAR(d.duration_ns, d.formula_ns, 0.01 * d.formula_ns);
  ASSERT_FALSE(d.waited_for.empty());
  EXPECT_TRUE(d.waited_for.front().last);
  for (const WaitedFor& w : d.waited_for) {
    EXPECT_LE(w.end_ns, d.start_ns + 1.0) << w.label;
    EXPECT_LE(w.end_ns, d.waited_for.front().end_ns);
    EXPECT_NE(w.op, d.op);
  }
  // Following the one it waited for selects that op.
  const OpId followed = d.waited_for.front().op;
  insight.SelectOp(followed);
  EXPECT_EQ(insight.selection().op, followed);
  EXPECT_LT(insight.details().start_ns + insight.details().duration_ns, last->end_ns);
  (void)plan;
}

// The critical path the Gantt outlines: its parts add up to the run's
// end, the op that ends last is on it, and a new run forgets the selection.
TEST(RunInsight, CriticalPathCoversTheRunAndANewRunClearsTheSelection) {
  Session session;
  ASSERT_TRUE(session.Start(RingOnDgx1())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  RunInsight insight;
  insight.Refresh(session);
  const CriticalPathView* path = insight.critical();
  ASSERT_NE(path, nullptr);
  TimeNs sum = 0;
  ASSERT_EQ(path->parts.size(), 4u);
  for (const PathPart& part : path->parts) sum += part.ns;
  EXPECT_NEAR(sum, session.store().end_ns(), 1.0);
  const Event* last = nullptr;
  for (const TimelineRow& row : session.store().rows()) {
    for (const Event& e : row.events) {
      if (last == nullptr || e.end_ns > last->end_ns) last = &e;
    }
  }
  EXPECT_TRUE(path->OnPath(last->op));
  EXPECT_NE(path->bound.find("slowest hop GPU"), std::string::npos) << path->bound;
  insight.SelectOp(last->op);
  ASSERT_TRUE(session.Start(test::RingAllReduce4x1K())) << session.error();
  insight.Refresh(session);
  EXPECT_TRUE(insight.selection().empty());
  EXPECT_EQ(insight.critical(), nullptr) << "no path while the new run records";
  ASSERT_TRUE(PollUntilDone(session));
  insight.Refresh(session);
  ASSERT_NE(insight.critical(), nullptr);
}

// A straggler: the path runs through its sends, and the slow rank's
// transfers expect FACTOR times the formula (so they are not "link wait").
TEST(RunInsight, AStragglersSlownessIsExpectedNotLinkWait) {
  Session session;
  ScenarioSettings s = test::RingAllReduce4x1K();
  s.SetParam("size", "4M");
  s.params[std::string(kCollectiveSpec) + ".slow_rank"] = "2:4";
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session)) << session.error();
  ASSERT_EQ(session.faults().slow_ranks.size(), 1u);
  EXPECT_EQ(session.faults().slow_ranks[0].rank, 2);
  RunInsight insight;
  insight.Refresh(session);
  const CriticalPathView* path = insight.critical();
  ASSERT_NE(path, nullptr);
  EXPECT_LT(path->path.link_wait_ns, 0.01 * path->path.end_ns);
  EXPECT_NE(path->bound.find("slowest hop GPU2 -> GPU3"), std::string::npos) << path->bound;
  // Another run names no faults.
  ASSERT_TRUE(session.Start(test::RingAllReduce4x1K()));
  EXPECT_TRUE(session.faults().empty());
}

// The ring on the machine: each logical hop of the ring the app chose on a
// DGX-1's cube-mesh runs along the links the router says, in ring order.
TEST(CommPattern, ARingOnACubeMeshCrossesTheLinksTheRouterSays) {
  Session session;
  ASSERT_TRUE(session.Start(RingOnDgx1())) << session.error();
  RunInsight insight;
  insight.Refresh(session);
  const std::vector<int>& order = test::PreparedAs<PreparedCollective>(session, "collective")->ring_order;
  ASSERT_EQ(order.size(), 8u);
  const CommPattern& p = insight.pattern();
  ASSERT_EQ(p.hops.size(), 8u);
  RouteTable router(*session.topology());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const PatternHop& hop = p.hops[i];
    EXPECT_EQ(hop.from_rank, order[i]);
    EXPECT_EQ(hop.to_rank, order[(i + 1) % order.size()]);
    EXPECT_EQ(hop.order, static_cast<int>(i) + 1);
    EXPECT_EQ(AsSet(hop.route.hops), AsSet(router.Between(hop.from_rank, hop.to_rank).hops));
  }
  // The auto ring stays on NVLink: every hop one link.
  for (const PatternHop& hop : p.hops) EXPECT_EQ(hop.route.hops.size(), 1u);
  // The rank-order ring crosses PCIe and the CPUs' link at 3 -> 4 and 7 -> 0.
  const Topology dgx1 = MakeTopologyPreset("dgx1-v100");
  const CommPattern naive = RingPattern(dgx1, {0, 1, 2, 3, 4, 5, 6, 7}, "ring (rank order)");
  RouteTable naive_router(dgx1);
  int long_hops = 0;
  for (const PatternHop& hop : naive.hops) {
    EXPECT_EQ(AsSet(hop.route.hops), AsSet(naive_router.Between(hop.from_rank, hop.to_rank).hops));
    long_hops += hop.route.hops.size() > 1;
  }
  EXPECT_LT(naive.SlowestGbps(), p.SlowestGbps());
  (void)long_hops;
}

// Both trees of the double binary tree: each spans every rank (n-1 edges,
// every rank but the root has one parent), and no rank is inner in both.
TEST(CommPattern, DoubleBinaryTreeDrawsBothTrees) {
  const Topology topology = MakeTopologyPreset("dgx-a100");
  const CommPattern p = DoubleTreePattern(topology, {0, 1, 2, 3, 4, 5, 6, 7});
  ASSERT_EQ(p.groups.size(), 2u);
  std::vector<std::vector<int>> children(2, std::vector<int>(8, 0));
  for (int t = 0; t < 2; ++t) {
    std::set<int> reached;
    int edges = 0;
    for (const PatternHop& hop : p.hops) {
      if (hop.group != t) continue;
      ++edges;
      EXPECT_TRUE(reached.insert(hop.to_rank).second) << "one parent each";
      ++children[static_cast<std::size_t>(t)][static_cast<std::size_t>(hop.from_rank)];
      EXPECT_FALSE(hop.route.hops.empty());
    }
    EXPECT_EQ(edges, 7);
  }
  for (int r = 0; r < 8; ++r) EXPECT_FALSE(children[0][r] > 0 && children[1][r] > 0) << "rank " << r;
}

TEST(CommPattern, MeshPipelineAndGridGroups) {
  const Topology topology = MakeTopologyPreset("dgx-a100");
  EXPECT_EQ(MeshPattern(topology, 4).hops.size(), 12u);
  const CommPattern chain = StageChainPattern(topology, 4);
  ASSERT_EQ(chain.hops.size(), 3u);
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(chain.hops[static_cast<std::size_t>(s)].from_rank, s);
    EXPECT_EQ(chain.hops[static_cast<std::size_t>(s)].to_rank, s + 1);
  }
  ParallelGrid grid;
  grid.dp = 2;
  grid.pp = 2;
  grid.tp = 2;
  const CommPattern g = GridPattern(topology, grid);
  // 4 TP groups of 2 (both directions), 4 PP chains of 1 hop, 4 DP groups of 2.
  EXPECT_EQ(g.groups.size(), 12u);
  EXPECT_EQ(g.hops.size(), 4u * 2 + 4u * 1 + 4u * 2);
  for (const PatternHop& hop : g.hops) {
    const GridCoord a = grid.CoordOf(hop.from_rank);
    const GridCoord b = grid.CoordOf(hop.to_rank);
    const int kind = g.groups[static_cast<std::size_t>(hop.group)].kind;
    const int same = (a.dp == b.dp) + (a.pp == b.pp) + (a.tp == b.tp);
    EXPECT_EQ(same, 2) << "a group's hop changes one coordinate";
    if (kind == 0) EXPECT_NE(a.tp, b.tp);
    if (kind == 1) EXPECT_NE(a.pp, b.pp);
    if (kind == 2) EXPECT_NE(a.dp, b.dp);
  }
}


// The Faults panel's switches are the spec's fault parameters, and the
// views mark exactly the rank and the link they name (nothing else).
TEST(FaultMarks, TheViewsMarkExactlyTheNamedRankAndLink) {
  const ScenarioSpec* spec = FindScenario(kCollectiveSpec);
  ASSERT_NE(spec, nullptr);
  int switches = 0;
  for (const ParamSpec& p : spec->params) switches += IsFaultParam(p.name);
  EXPECT_EQ(switches, 4);
  EXPECT_FALSE(IsFaultParam("ranks"));

  Session session;
  ScenarioSettings s = RingOnDgx1();
  s.params[std::string(kCollectiveSpec) + ".slow_rank"] = "2:4";
  s.params[std::string(kCollectiveSpec) + ".throttle_link"] = "0-3:5";
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session)) << session.error();
  const Topology& topology = *session.topology();
  const FaultMarks marks = MarkFaults(session.faults(), topology, session.plan()->num_ranks);
  EXPECT_TRUE(marks.any);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(marks.RankMarked(r), r == 2) << r;
  EXPECT_EQ(RankFaultText(marks, 2), "x4 slow");
  const int gpu0 = topology.gpus[0];
  const int gpu3 = topology.gpus[3];
  int marked = 0;
  for (std::size_t i = 0; i < topology.links.size(); ++i) {
    const Link& l = topology.links[i];
    const bool named = (l.a == gpu0 && l.b == gpu3) || (l.a == gpu3 && l.b == gpu0);
    EXPECT_EQ(marks.LinkMarked(static_cast<int>(i)), named) << LinkWords(topology, static_cast<int>(i));
    if (named) {
      EXPECT_DOUBLE_EQ(l.gbps, 5.0) << "the machine the run used has the throttled link";
      EXPECT_EQ(LinkFaultText(marks, static_cast<int>(i)), "throttled to 5 GB/s");
    }
    marked += marks.LinkMarked(static_cast<int>(i));
  }
  EXPECT_EQ(marked, 1);
  // The links a teacher picks from: every link with a GPU at an end, by name.
  const std::vector<FaultLinkChoice> choices = FaultLinkChoices(topology);
  bool found = false;
  for (const FaultLinkChoice& c : choices) {
    const Link& l = topology.links[static_cast<std::size_t>(c.link)];
    EXPECT_TRUE(topology.nodes[static_cast<std::size_t>(l.a)].kind == NodeKind::kGpu ||
                topology.nodes[static_cast<std::size_t>(l.b)].kind == NodeKind::kGpu);
    found = found || c.ref == "gpu0-gpu3";
  }
  EXPECT_TRUE(found);
}


// A trace read back from a file pairs no Send with its Recv: the path is
// paired again from the events, and still names the ring's slowest hop.
TEST(RunInsight, ATracesUnpairedTransfersArePairedByTheirEvents) {
  Session session;
  ScenarioSettings s = RingOnDgx1();
  s.SetParam("ring_order", "0,1,2,3,4,5,6,7");
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  Plan unpaired = *session.plan();
  for (Op& op : unpaired.ops) op.match = kNoOp;
  const CriticalPathView paired = PrepareCriticalPath(*session.plan(), session.store(), session.topology(), nullptr, false);
  const CriticalPathView view = PrepareCriticalPath(unpaired, session.store(), session.topology(), nullptr, false);
  ASSERT_FALSE(view.empty());
  EXPECT_DOUBLE_EQ(view.path.end_ns, paired.path.end_ns);
  int transfers = 0;
  for (const CriticalPathStep& step : view.path.steps) transfers += step.peer >= 0;
  EXPECT_GT(transfers, 0) << "the path reaches senders through their transfers";
  EXPECT_NE(view.bound.find("slowest hop GPU"), std::string::npos) << view.bound;
  // The hop the ring waits on crosses PCIe and the CPUs' link: 3 -> 4 or 7 -> 0.
  const CriticalPathHop hop = view.path.slowest_hop;
  EXPECT_TRUE((hop.src == 3 && hop.dst == 4) || (hop.src == 7 && hop.dst == 0)) << hop.src << " -> " << hop.dst;
}

}  // namespace
}  // namespace shardlab::gui
