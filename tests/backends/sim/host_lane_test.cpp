// The simulator's host lane (RunOptions::op_issue_ns): the one host thread
// of the model issues the plan's units in order, one op_issue_ns each; the
// lane must show exactly the issue times the model waits for. Bounds come
// from the model's definition (units x issue cost), not from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/this_machine.h"

namespace shardlab {
namespace {

const std::string kProfile = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml";

struct Modelled {
  std::vector<Event> events;          // as reported
  std::vector<HostEnqueueSpan> lane;  // Backend::host_lane() after the run
  TimeNs run_ns = 0;
};

// An 8-rank ring all-reduce of `count` floats, every rank a virtual device
// of one H200 (the recorded profile), host issue cost `issue_ns`.
Modelled RunRing(std::int64_t count, TimeNs issue_ns, const Plan** plan_out = nullptr) {
  static std::deque<Plan> plans;  // kept alive (and in place) for plan_out
  const DeviceProfile profile = LoadDeviceProfile(kProfile);
  const MachineRecord record = MachineFromProfile(profile, 1, "test");
  const Topology topology = BuildMachineTopology(record);
  CollectiveParams p;
  p.ranks = 8;
  p.count = count;
  plans.push_back(BuildCollective(p));
  const Plan& plan = plans.back();
  if (plan_out) *plan_out = &plan;
  RunOptions options;
  options.timing_only = true;
  options.rank_to_gpu.assign(8, 0);
  options.shared_device_memory = true;
  options.op_issue_ns = issue_ns;
  Executor ex(CreateSimBackend(), plan, topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  EXPECT_EQ(ex.state(), ExecutorState::kDone);
  Modelled m;
  m.events = sink.events;
  m.lane = ex.backend().host_lane();
  for (const Event& e : sink.events) m.run_ns = std::max(m.run_ns, e.end_ns);
  return m;
}

// Units the host issues: every op, a send with its receive counted once.
std::size_t Units(const Plan& plan) {
  std::size_t transfers = 0, others = 0;
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::kSend) ++transfers;
    else if (op.kind != OpKind::kRecv) ++others;
  }
  return transfers + others;
}

TimeNs ProfileIssueNs() { return OpIssueNs(LoadDeviceProfile(kProfile)); }

TEST(SimHostLane, OneBackToBackSpanPerIssuedUnit) {
  const TimeNs issue = ProfileIssueNs();
  ASSERT_GT(issue, 0);
  const Plan* plan = nullptr;
  const Modelled m = RunRing(2, issue, &plan);
  ASSERT_EQ(m.lane.size(), Units(*plan));
  TimeNs expect_start = 0;
  std::vector<int> seen(plan->ops.size(), 0);
  for (const HostEnqueueSpan& s : m.lane) {
    EXPECT_NEAR(s.start_ns, expect_start, 1e-6);
    EXPECT_NEAR(s.end_ns - s.start_ns, issue, 1e-6);
    expect_start = s.end_ns;
    ASSERT_GE(s.unit, 0);
    ASSERT_LT(static_cast<std::size_t>(s.unit), plan->ops.size());
    const Op& op = plan->ops[static_cast<std::size_t>(s.unit)];
    EXPECT_NE(op.kind, OpKind::kRecv) << "a transfer is named by its send";
    EXPECT_EQ(s.rank, op.rank);
    EXPECT_EQ(seen[static_cast<std::size_t>(s.unit)]++, 0) << "unit " << s.unit << " issued twice";
  }
}

TEST(SimHostLane, NoOpStartsBeforeTheHostHasIssuedIt) {
  const TimeNs issue = ProfileIssueNs();
  const Plan* plan = nullptr;
  const Modelled m = RunRing(1 << 16, issue, &plan);
  std::vector<TimeNs> issued(plan->ops.size(), -1);
  for (const HostEnqueueSpan& s : m.lane) {
    issued[static_cast<std::size_t>(s.unit)] = s.end_ns;
    const Op& op = plan->ops[static_cast<std::size_t>(s.unit)];
    if (op.kind == OpKind::kSend) issued[static_cast<std::size_t>(op.match)] = s.end_ns;
  }
  ASSERT_EQ(m.events.size(), plan->ops.size());
  for (const Event& e : m.events) {
    const TimeNs at = issued[static_cast<std::size_t>(e.op)];
    ASSERT_GE(at, 0) << "op " << e.op << " has no span";
    EXPECT_GE(e.start_ns, at - 1e-6) << "op " << e.op;
  }
}

TEST(SimHostLane, ASmallRingIsBoundedByTheHostAndALargeOneByBandwidth) {
  const TimeNs issue = ProfileIssueNs();
  const Plan* plan = nullptr;
  // 8 bytes per rank: the data is nothing, the host's issues are all.
  const Modelled tiny = RunRing(2, issue, &plan);
  const double host_total = static_cast<double>(Units(*plan)) * issue;  // one host thread
  EXPECT_GE(tiny.run_ns, host_total - 1e-6);
  EXPECT_LE(tiny.run_ns, 1.05 * host_total) << "an 8-byte ring should be host-bound";
  // Free issue: the same ring takes a small fraction of that.
  const Modelled free_issue = RunRing(2, 0);
  EXPECT_TRUE(free_issue.lane.empty());
  EXPECT_LT(free_issue.run_ns, 0.1 * host_total);
  // 1 GiB per rank: the HBM traffic dominates; the host lane is a small
  // part. (At 64 MiB, eight virtual ranks of one H200 need about as long
  // to move the data as the one host thread needs to issue the 112 units.)
  const Modelled big = RunRing(std::int64_t{256} << 20, issue);
  TimeNs lane_total = 0;
  for (const HostEnqueueSpan& s : big.lane) lane_total += s.end_ns - s.start_ns;
  EXPECT_NEAR(lane_total, host_total, 1e-3);
  EXPECT_GT(big.run_ns, 5 * lane_total);
}

}  // namespace
}  // namespace shardlab
