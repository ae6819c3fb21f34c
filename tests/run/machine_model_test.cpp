// engine/run/machine_model: the model keeps the placement a trace recorded.
// Four ranks on two GPUs, a ring all-reduce, placed in blocks [0,0,1,1] and
// round robin [0,1,0,1]: the simulator's time for each equals one computed
// here from the model's rules alone (a transfer between two ranks of one GPU
// is a device copy through its HBM, 2 x bytes of traffic or 3 x when it
// reduces; a transfer between GPUs crosses the PCIe links, latency + bytes
// at the slowest link's rate, shared by the transfers going the same way at
// once), run over the plan's dependencies. A placement that does not fit the
// plan is refused, naming the field.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/machine_model.h"
#include "engine/run/vector_sink.h"

namespace shardlab {
namespace {

constexpr int kRanks = 4;
constexpr std::int64_t kCount = 4 << 20;  // floats per rank: 16 MiB, chunks of 4 MiB

MachineRecord TwoGpus(std::vector<int> placement) {
  // No launch or event cost: the host issues nothing the test must add.
  const DeviceProfile profile =
      ParseDeviceProfile("[device]\nmodel = \"NVIDIA H200\"\nmemory_gbps = 4000\n", "two.toml");
  MachineRecord record = MachineFromProfile(profile, 2, "test");
  record.rank_to_gpu = std::move(placement);
  return record;
}

Plan RingPlan() {
  CollectiveParams params;
  params.kind = CollectiveKind::kAllReduce;
  params.algo = CollectiveAlgo::kRing;
  params.ranks = kRanks;
  params.count = kCount;
  return BuildCollective(params);
}

TimeNs Simulated(const MachineModel& model) {
  RunOptions options;
  options.timing_only = true;
  Topology topology;
  ApplyMachineModel(model, &options, &topology);
  Executor sim(CreateBackend("sim"), RingPlan(), topology, options);
  VectorSink sink;
  sim.RunToEnd(sink);
  TimeNs end = 0;
  for (const Event& e : sink.events) end = std::max(end, e.end_ns);
  return end;
}

// The end of the run by the model's rules: each transfer starts when what
// it depends on has finished (its ops' dependencies and the op before each
// on its rank's lane; a cross-GPU one then waits the links' latency), and moves its traffic through one resource — its GPU's HBM, or
// the PCIe links in its direction — which the transfers on it at that moment
// share equally. Stepped from one finish to the next.
TimeNs ByTheRules(const MachineModel& model, const std::vector<int>& placement) {
  const Plan plan = RingPlan();
  const Topology& machine = model.machine;
  // Each GPU's PCIe link to the CPU: a cross-GPU transfer takes both.
  Gbps slowest = 1e300;
  TimeNs latency = 0;
  for (const Link& link : machine.links) {
    slowest = std::min(slowest, link.gbps);
    latency += link.latency_ns;
  }
  EXPECT_EQ(machine.links.size(), 2u);
  const double hbm = machine.nodes[static_cast<std::size_t>(machine.gpus[0])].device.memory_gbps;
  EXPECT_DOUBLE_EQ(hbm, 4000);

  struct Transfer {
    std::string resource;   // "hbm G" or "link A>B"
    double traffic = 0;     // bytes through the resource
    double capacity = 0;    // its bytes per ns
    TimeNs latency = 0;
    std::vector<int> deps;  // transfers (by index) it waits for
    TimeNs flow_from = -1;  // when its traffic starts moving; -1: not yet known
    double left = 0;
    TimeNs end = -1;
  };
  std::vector<Transfer> transfers;
  std::map<OpId, int> index;  // send and recv op -> transfer
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    EXPECT_TRUE(op.kind == OpKind::kSend || op.kind == OpKind::kRecv) << "a ring is transfers only";
    if (op.kind != OpKind::kSend) continue;
    const Op& recv = plan.ops[static_cast<std::size_t>(op.match)];
    const int a = placement[static_cast<std::size_t>(op.rank)], b = placement[static_cast<std::size_t>(op.peer)];
    Transfer t;
    if (a == b) {  // a device copy: reads the chunk, writes (or reads and writes) the other's
      t.resource = "hbm " + std::to_string(a);
      t.traffic = static_cast<double>(op.bytes) * (recv.reduce == ReduceOp::kNone ? 2.0 : 3.0);
      t.capacity = hbm;
    } else {
      t.resource = "link " + std::to_string(a) + ">" + std::to_string(b);
      t.traffic = static_cast<double>(op.bytes);
      t.capacity = slowest;
      t.latency = latency;
    }
    t.left = t.traffic;
    index[id] = index[op.match] = static_cast<int>(transfers.size());
    transfers.push_back(t);
  }
  // What an op waits for: its plan dependencies, and the op before it on
  // its rank's lane (a stream runs in order).
  std::map<std::pair<int, int>, OpId> lane_last;
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    std::vector<int>& deps = transfers[static_cast<std::size_t>(index.at(id))].deps;
    for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d) deps.push_back(index.at(*d));
    const auto lane = std::make_pair(static_cast<int>(op.rank), static_cast<int>(op.lane));
    if (lane_last.count(lane)) deps.push_back(index.at(lane_last[lane]));
    lane_last[lane] = id;
  }

  TimeNs now = 0;
  for (std::size_t finished = 0; finished < transfers.size();) {
    // Those whose dependencies are done start now (their flow after the latency).
    for (Transfer& t : transfers) {
      if (t.flow_from >= 0) continue;
      bool ready = true;
      TimeNs at = 0;
      for (int d : t.deps) {
        ready = ready && transfers[static_cast<std::size_t>(d)].end >= 0;
        if (ready) at = std::max(at, transfers[static_cast<std::size_t>(d)].end);
      }
      if (ready) t.flow_from = at + t.latency;
    }
    // Rates: the flows moving now share their resource equally.
    std::map<std::string, int> moving;
    for (const Transfer& t : transfers)
      if (t.end < 0 && t.flow_from >= 0 && t.flow_from <= now) ++moving[t.resource];
    TimeNs next = 1e300;
    for (const Transfer& t : transfers) {
      if (t.end >= 0 || t.flow_from < 0) continue;
      if (t.flow_from > now) {
        next = std::min(next, t.flow_from);
      } else {
        next = std::min(next, now + t.left / (t.capacity / moving[t.resource]));
      }
    }
    EXPECT_LT(next, 1e300) << "nothing can move: the dependencies form a cycle";
    if (next >= 1e300) return -1;
    for (Transfer& t : transfers) {
      if (t.end >= 0 || t.flow_from < 0 || t.flow_from > now) continue;
      t.left -= (next - now) * t.capacity / moving[t.resource];
      if (t.left <= 1e-9 * t.traffic) {
        t.end = next;
        ++finished;
      }
    }
    now = next;
  }
  TimeNs run_end = 0;
  for (const Transfer& t : transfers) run_end = std::max(run_end, t.end);
  return run_end;
}

TEST(MachineModel, TheRecordedPlacementIsTheOneModelled) {
  const std::vector<int> blocks = {0, 0, 1, 1}, round_robin = {0, 1, 0, 1};
  const MachineModel a = BuildMachineModel(TwoGpus(blocks), kRanks);
  const MachineModel b = BuildMachineModel(TwoGpus(round_robin), kRanks);
  EXPECT_EQ(a.record.rank_to_gpu, blocks);
  EXPECT_EQ(b.record.rank_to_gpu, round_robin);
  EXPECT_EQ(a.record.Describe(), "2 NVIDIA H200 (test), 4 ranks as virtual devices (on GPUs 0 0 1 1) sharing their GPU's HBM");
  EXPECT_EQ(a.plan_topology.num_gpus(), kRanks);  // two ranks share a GPU: the virtual devices

  const TimeNs blocks_ns = Simulated(a), round_robin_ns = Simulated(b);
  // In blocks half the ring's hops are HBM copies; round robin sends every
  // hop across the PCIe links, two each way at once.
  EXPECT_NEAR(blocks_ns, ByTheRules(a, blocks), 1e-6 * blocks_ns);
  EXPECT_NEAR(round_robin_ns, ByTheRules(b, round_robin), 1e-6 * round_robin_ns);
  EXPECT_GT(round_robin_ns, 1.5 * blocks_ns);

  // No record of a placement: the CUDA backend's rule, rank r on GPU r mod 2.
  EXPECT_EQ(BuildMachineModel(TwoGpus({}), kRanks).record.rank_to_gpu, round_robin);
}

TEST(MachineModel, APlacementThatDoesNotFitThePlanIsRefusedNamingTheField) {
  auto message = [](std::vector<int> placement) -> std::string {
    try {
      BuildMachineModel(TwoGpus(std::move(placement)), kRanks);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message({0, 0, 1}), "placement: 3 entries (one GPU per rank) for a plan of 4 ranks");
  EXPECT_EQ(message({0, 0, 2, 1}), "placement: rank 2 on GPU 2, not one of the machine's GPUs 0..1");
  EXPECT_EQ(message({0, -1, 1, 1}), "placement: rank 1 on GPU -1, not one of the machine's GPUs 0..1");
}

}  // namespace
}  // namespace shardlab
