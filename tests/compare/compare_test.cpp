// engine/compare: a recorded H200 trace against the simulator's run of the
// same plan, checked against numbers computed here from the raw events;
// plans that differ are refused; the explanation names the right group.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>

#include "engine/algorithms/collective.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/compare/compare.h"
#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

const std::string kData = SHARDLAB_TEST_DATA_DIR;

Plan RingPlan(int ranks, Bytes bytes) {
  CollectiveParams params;
  params.kind = CollectiveKind::kAllReduce;
  params.algo = CollectiveAlgo::kRing;
  params.ranks = ranks;
  params.count = bytes / 4;
  return BuildCollective(params);
}

std::vector<Event> Simulate(const Plan& plan, const Topology& topology) {
  auto backend = CreateSimBackend();
  RunOptions options;
  options.timing_only = true;
  backend->Load(plan, topology, options);
  VectorSink sink;
  std::atomic<bool> cancel{false};
  backend->RunThroughStep(plan.num_steps - 1, sink, cancel);
  return sink.events;
}

struct Span {
  TimeNs first = 1e300, last = -1e300;
  void Add(TimeNs s, TimeNs e) { first = std::min(first, s); last = std::max(last, e); }
  TimeNs length() const { return last - first; }
};

TEST(CompareRuns, RecordedH200RingAgainstTheSimulatorGivesThePhaseSpansOfTheRawEvents) {
  const LoadedTrace trace = ReadChromeTraceFile(kData + "/traces/h200-ring8-64M-warm.json");
  const Plan plan = RingPlan(8, Bytes{64} << 20);
  const std::vector<Event> sim = Simulate(plan, MakeTopologyPreset("dgx-a100"));
  const Comparison c = CompareRuns(RunFromTrace(trace), RunFromEvents(plan, sim, "simulator", "sim"));

  // Independently: spans per phase and per step, and the summed receive
  // time, straight from the events.
  std::map<std::string, Span> a_phase, b_phase;
  std::map<int, Span> a_step, b_step;
  TimeNs a_recv = 0, b_recv = 0;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    a_phase[PhaseName(trace.plan.ops[i].tags.phase)].Add(e.start_ns, e.end_ns);
    a_step[e.step].Add(e.start_ns, e.end_ns);
    if (e.kind == OpKind::kRecv) a_recv += e.duration_ns();
  }
  for (const Event& e : sim) {
    b_phase[PhaseName(plan.ops[static_cast<std::size_t>(e.op)].tags.phase)].Add(e.start_ns, e.end_ns);
    b_step[e.step].Add(e.start_ns, e.end_ns);
    if (e.kind == OpKind::kRecv) b_recv += e.duration_ns();
  }
  ASSERT_EQ(c.phases.size(), 2u);
  EXPECT_EQ(c.phases[0].name, "reduce-scatter");  // first to start
  EXPECT_EQ(c.phases[1].name, "all-gather");
  for (const CompareRow& row : c.phases) {
    EXPECT_DOUBLE_EQ(row.a_ns, a_phase.at(row.name).length()) << row.name;
    EXPECT_DOUBLE_EQ(row.b_ns, b_phase.at(row.name).length()) << row.name;
    EXPECT_EQ(row.ops, 112);
  }
  ASSERT_EQ(c.steps.size(), 14u);
  for (std::size_t s = 0; s < c.steps.size(); ++s) {
    EXPECT_DOUBLE_EQ(c.steps[s].a_ns, a_step.at(static_cast<int>(s)).length());
    EXPECT_DOUBLE_EQ(c.steps[s].b_ns, b_step.at(static_cast<int>(s)).length());
  }
  EXPECT_NEAR(c.communication.a_ns, a_recv, 1e-6 * a_recv);
  EXPECT_NEAR(c.communication.b_ns, b_recv, 1e-6 * b_recv);
  EXPECT_TRUE(c.stages.empty());  // not a pipeline
  // The recorded run: 1.58 ms in the file (ts of the last end), never the sim's.
  EXPECT_NEAR(c.run.a_ns, 1580.9e3, 1e3);
  EXPECT_DOUBLE_EQ(c.run.ratio(), c.run.b_ns / c.run.a_ns);
  // The two groups of 8 MiB receives (plain and reducing), and a sentence.
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_NE(c.explanation.find("of 8 MiB"), std::string::npos) << c.explanation;
}

TEST(CompareRuns, TheRingTraceAgainstThe1F1BTraceIsRefusedNamingOpZero) {
  const RunRecord ring = RunFromTrace(ReadChromeTraceFile(kData + "/traces/h200-ring8-64M-warm.json"));
  const RunRecord pipe = RunFromTrace(ReadChromeTraceFile(kData + "/traces/h200-1f1b.json"));
  try {
    CompareRuns(ring, pipe);
    FAIL() << "compared a ring with a pipeline";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(m.find("op 0: A has send of 8 MiB on rank 0 (peer 1), B has compute"), std::string::npos) << m;
  }
}

TEST(CompareRuns, OneChangedOpIsNamedByIdKindRankAndBytes) {
  const RunRecord a = RunFromTrace(ReadChromeTraceFile(kData + "/traces/h200-ring8-64M-warm.json"));
  RunRecord b = a;
  EXPECT_EQ(FirstPlanDifference(a, b), "");
  b.ops[17].bytes += 4;
  const std::string m = FirstPlanDifference(a, b);
  EXPECT_NE(m.find("op 17:"), std::string::npos) << m;
  EXPECT_NE(m.find("on rank " + std::to_string(a.ops[17].rank)), std::string::npos) << m;
  b = a;
  b.ops.pop_back();
  EXPECT_NE(FirstPlanDifference(a, b).find("op 223"), std::string::npos) << FirstPlanDifference(a, b);
}

// Two ranks, ten 8 MiB copies and ten small computes each. A runs the
// copies one after another, 12 us each; B runs them all at once, each
// taking `b_copy_ns`.
RunRecord Synthetic(bool model, TimeNs b_copy_ns) {
  RunRecord run;
  run.clock = model ? "simulated" : "cuda-event";
  run.num_ranks = 2;
  std::int32_t id = 0;
  for (int i = 0; i < 10; ++i) {
    RunOp copy;
    copy.id = id++;
    copy.kind = OpKind::kCopy;
    copy.rank = i % 2;
    copy.bytes = Bytes{8} << 20;
    copy.start_ns = model ? 0 : 12'000.0 * i;
    copy.end_ns = copy.start_ns + (model ? b_copy_ns : 12'000.0);
    run.ops.push_back(copy);
  }
  for (int i = 0; i < 10; ++i) {
    RunOp small;
    small.id = id++;
    small.kind = OpKind::kCompute;
    small.rank = i % 2;
    small.bytes = 4096;
    small.start_ns = 2'000'000.0 + 5'000.0 * i;
    small.end_ns = small.start_ns + (model ? 4'000.0 : 5'000.0);
    run.ops.push_back(small);
  }
  return run;
}

TEST(CompareRuns, TheExplanationNamesTheGroupWithTheLargestGapAndOverlapAsItsCause) {
  // B: ten copies at once, each 100 us (the bandwidth shared ten ways).
  const Comparison c = CompareRuns(Synthetic(false, 0), Synthetic(true, 100'000));
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_EQ(c.groups[0].name, "copy of 8 MiB");
  EXPECT_DOUBLE_EQ(c.groups[0].gap_ns(), 10 * (100'000.0 - 12'000.0));
  EXPECT_DOUBLE_EQ(c.groups[0].b_concurrency, 10.0);  // all at once
  EXPECT_DOUBLE_EQ(c.groups[0].a_concurrency, 1.0);   // one after another
  const std::string& x = c.explanation;
  EXPECT_NE(x.find("copy of 8 MiB (10 ops) take " + FormatTime(12'000) + " in cuda-event vs " +
                   FormatTime(100'000) + " in simulated each, 99% of the summed op-time gap"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("simulated runs 10.0 of them at once, sharing the bandwidth, where cuda-event ran 1.0"),
            std::string::npos) << x;
  EXPECT_NE(x.find("8.3x longer in simulated"), std::string::npos) << x;
  EXPECT_DOUBLE_EQ(c.ops[0].error, (100.0 - 12.0) / 12.0);
  // Nothing runs between the copies and the small computes: 2,000 - 120 us
  // in A, 2,000 - 100 us plus the 1 us between B's shorter computes.
  EXPECT_DOUBLE_EQ(c.a_gaps_ns, 1'880'000.0);
  EXPECT_DOUBLE_EQ(c.b_gaps_ns, 1'900'000.0 + 9 * 1'000.0);
}

TEST(CompareRuns, WhenOverlapDoesNotExplainItTheRateIsNamed) {
  // B runs them at once and each is still faster: the rate, not the overlap.
  const Comparison c = CompareRuns(Synthetic(false, 0), Synthetic(true, 6'000));
  ASSERT_EQ(c.groups[0].name, "copy of 8 MiB");
  const std::string& x = c.explanation;
  EXPECT_NE(x.find("86% of the summed op-time gap"), std::string::npos) << x;  // 60 of 70 us
  // 8 MiB / 12 us and / 6 us.
  EXPECT_NE(x.find("moves its bytes at 699 GB/s in cuda-event and 1398 GB/s in simulated"), std::string::npos) << x;
  EXPECT_EQ(x.find("at once"), std::string::npos) << x;
}

TEST(CompareRuns, ASlowRateKeepsItsDigitsAndTheOverlapIsStatedOnce) {
  // B's copies take 40 ms each, all at once: far more than ten-way sharing
  // explains, so the rate is named: 8 MiB / 40 ms = 0.21 GB/s, not "0 GB/s".
  const Comparison c = CompareRuns(Synthetic(false, 0), Synthetic(true, 40'000'000));
  ASSERT_EQ(c.groups[0].name, "copy of 8 MiB");
  const std::string& x = c.explanation;
  EXPECT_NE(x.find("moves its bytes at 699 GB/s in cuda-event and 0.21 GB/s in simulated"), std::string::npos) << x;
  EXPECT_NE(x.find("(1.0 and 10.0 of them in flight on average)"), std::string::npos) << x;
  EXPECT_EQ(x.find("one op at a time"), std::string::npos) << x;
}

TEST(CompareRuns, IdleIsTheTimeEachRankHasNothingRunningSummedOverRanks) {
  RunRecord a;
  a.num_ranks = 2;
  a.clock = "cuda-event";
  a.ops = {RunOp{}, RunOp{}, RunOp{}};
  a.ops[0].id = 0; a.ops[0].rank = 0; a.ops[0].start_ns = 0; a.ops[0].end_ns = 10;
  a.ops[1].id = 1; a.ops[1].rank = 1; a.ops[1].start_ns = 5; a.ops[1].end_ns = 7;
  a.ops[2].id = 2; a.ops[2].rank = 1; a.ops[2].start_ns = 6; a.ops[2].end_ns = 9;  // overlaps op 1
  RunRecord b = a;
  b.clock = "simulated";
  b.ops[1].start_ns = 0;
  const Comparison c = CompareRuns(a, b);
  EXPECT_DOUBLE_EQ(c.idle.a_ns, 0 + (10 - 4));  // rank 1 busy 5..9
  EXPECT_DOUBLE_EQ(c.idle.b_ns, 0 + (10 - 9));  // rank 1 busy 0..9
  EXPECT_DOUBLE_EQ(c.compute.a_ns, 10 + 2 + 3);
  // Spans run from the earliest start to the latest end, whatever the ids' order.
  EXPECT_DOUBLE_EQ(c.run.a_ns, 10);
  EXPECT_DOUBLE_EQ(c.run.b_ns, 10);
  ASSERT_EQ(c.phases.size(), 1u);
  EXPECT_DOUBLE_EQ(c.phases[0].b_ns, 10);
}

}  // namespace
}  // namespace shardlab
