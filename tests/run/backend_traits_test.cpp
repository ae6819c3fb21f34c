// What a backend declares it can do (BackendTraits, engine/core/backend_traits.h):
// the simulator's declaration against what it does when it runs a plan,
// and a backend registered here with traits of its own, seen by every
// question that once compared a backend's name (default warm-up, fault
// refusal, link emulation, dtype, the machine model, the host lane's clock).
// The CUDA and mpi backends' declarations are checked where they run
// (tests/backends/cuda, tests/mpi).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/backends/mpi/process_group.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/io/trace_writer.h"
#include "engine/run/executor.h"
#include "engine/run/faults.h"
#include "engine/run/iterations.h"
#include "engine/run/machine_model.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/presets.h"
#include "engine/topology/this_machine.h"
#include "engine/verify/bounds.h"

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

bool Listed(const std::vector<BackendInfo>& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(), [&](const BackendInfo& b) { return b.name == name; });
}

CollectiveParams Tiny(DType dtype = DType::kF32) {
  CollectiveParams p;
  p.ranks = 2;
  p.count = 64;
  p.dtype = dtype;
  return p;
}

struct SimRun {
  std::vector<Event> events;
  std::vector<float> rank0;  // rank 0's buffer after the all-reduce
  std::vector<HostEnqueueSpan> host_lane;
  TimeNs end_ns = 0;
};

SimRun RunOnSim(const CollectiveParams& p, RunOptions options = {}) {
  Executor ex(CreateBackend("sim"), BuildCollective(p), MakeTopologyPreset("dgx-a100"), options);
  VectorSink sink;
  ex.RunToEnd(sink);
  SimRun run;
  run.events = sink.events;
  const std::span<const float> data = ex.backend().BufferData(0);
  run.rank0.assign(data.begin(), data.end());
  run.host_lane = ex.backend().host_lane();
  for (const Event& e : sink.events) run.end_ns = std::max(run.end_ns, e.end_ns);
  return run;
}

MachineModel TwoGpuModel() {
  const DeviceProfile profile =
      ParseDeviceProfile("[device]\nmodel = \"NVIDIA H200\"\nmemory_gbps = 4000\n", "two.toml");
  return BuildMachineModel(MachineFromProfile(profile, 2, "test"), 2);
}

// The host lane's clock as a trace written for `backend` says it.
std::string TracedHostClock(const std::string& backend) {
  const CollectiveParams p = Tiny();
  const Plan plan = BuildCollective(p);
  const Topology topology = MakeTopologyPreset("dgx-a100");
  const SimRun run = RunOnSim(p);
  TraceInfo info;
  info.backend = backend;
  info.host_lane.push_back({0, 0, 0.0, 500.0});
  std::ostringstream out;
  WriteChromeTrace(out, plan, topology, run.events, info);
  return ReadChromeTrace(out.str(), "t.json").host_clock;
}

TEST(BackendTraits, TheSimulatorsEventsCarryTheClockItDeclares) {
  const BackendTraits sim = BackendTraitsOf("sim");
  EXPECT_EQ(sim.event_clock, ClockKind::kSimulated);
  const SimRun run = RunOnSim(Tiny());
  ASSERT_FALSE(run.events.empty());
  for (const Event& e : run.events) EXPECT_EQ(e.clock, sim.event_clock) << "op " << e.op;
  // Its host lane (the model's issues) is on that clock too.
  EXPECT_EQ(ClockKindName(sim.host_lane_clock()), TracedHostClock("sim"));
}

TEST(BackendTraits, TheSimulatorComputesHalfBuffersInFloat32AsItDeclares) {
  ASSERT_TRUE(BackendTraitsOf("sim").computes_in_float32);
  // Sums of eight fp16 inputs (k/1024 each) kept in fp32: those of 2 or
  // more need finer steps than fp16 has there.
  CollectiveParams eight = Tiny(DType::kF16);
  eight.ranks = 8;
  const SimRun run = RunOnSim(eight);
  ASSERT_EQ(run.rank0.size(), 64u);
  const bool wider_than_half = std::any_of(run.rank0.begin(), run.rank0.end(),
                                           [](float v) { return RoundTo(DType::kF16, v) != v; });
  EXPECT_TRUE(wider_than_half);
  EXPECT_EQ(ComputeDType("sim", DType::kF16), DType::kF32);
}

TEST(BackendTraits, TheSimulatorModelsTheFaultsAndTheMachineItSaysItModels) {
  const BackendTraits sim = BackendTraitsOf("sim");
  EXPECT_EQ(sim.slow_rank, FaultSupport::kModelled);
  EXPECT_EQ(sim.failed_rank, FaultSupport::kModelled);
  EXPECT_EQ(sim.failed_link, FaultSupport::kModelled);
  // A slow rank is modelled: the run takes longer.
  RunOptions slow;
  slow.timing_only = true;
  slow.faults.slow_ranks.push_back(ParseSlowRank("1:4"));
  ResolveFaults(slow.faults, MakeTopologyPreset("dgx-a100"), 2);
  RunOptions plain;
  plain.timing_only = true;
  EXPECT_GT(RunOnSim(Tiny(), slow).end_ns, RunOnSim(Tiny(), plain).end_ns);
  Faults all;
  all.slow_ranks.push_back(ParseSlowRank("1:4"));
  all.failed_ranks.push_back(ParseRankFailure("1@0"));
  all.failed_links.push_back(ParseLinkFailure("0-1@0"));
  EXPECT_EQ(FaultRefusal(all, "sim"), "");

  // It models a machine: --topology this changes its run's options.
  ASSERT_TRUE(sim.models_machine);
  RunOptions options;
  Topology topology;
  ApplyMachineModelOn("sim", TwoGpuModel(), &options, &topology);
  EXPECT_TRUE(options.shared_device_memory);
  EXPECT_EQ(topology.num_gpus(), 2);

  // A simulator: the same run takes the same time every time.
  ASSERT_TRUE(sim.simulator);
  EXPECT_EQ(DefaultWarmup("sim"), sim.default_warmup);
  EXPECT_EQ(RunOnSim(Tiny(), plain).end_ns, RunOnSim(Tiny(), plain).end_ns);
  EXPECT_FALSE(sim.emulates_links);
  EXPECT_FALSE(sim.needs_worker);
}

TEST(BackendTraits, EveryBuiltInIsDeclaredAndOnlyThoseThisProgramRunsAreListed) {
  const std::vector<BackendInfo> declared = ListDeclaredBackends();
  for (const char* name : {"sim", "mpi", "cuda"}) EXPECT_TRUE(Listed(declared, name)) << name;
  for (const BackendInfo& b : ListBackends()) EXPECT_TRUE(Listed(declared, b.name)) << b.name;
  EXPECT_EQ(ListBackends().front().name, "sim");
  // This test program does not link the CUDA backend: its traits are
  // known (the app's worker runs it), but it cannot be made here.
  EXPECT_FALSE(Listed(ListBackends(), "cuda"));
  EXPECT_EQ(BackendTraitsOf("cuda").default_warmup, 1);
  EXPECT_EQ(MessageOf([] { CreateBackend("cuda"); }).rfind("unknown backend 'cuda' (available: sim", 0), 0u);

  EXPECT_FALSE(FindBackendTraits("no-such-backend").has_value());
  EXPECT_FALSE(FindBackend("no-such-backend").has_value());
  EXPECT_EQ(MessageOf([] { BackendTraitsOf("no-such-backend"); }).rfind(
                "unknown backend 'no-such-backend' (available: sim, ", 0),
            0u);
  // An undeclared name gets the defaults: nothing special.
  EXPECT_EQ(DefaultWarmup("no-such-backend"), 0);
  EXPECT_FALSE(BackendEmulatesLinks("no-such-backend"));
  EXPECT_EQ(ComputeDType("no-such-backend", DType::kF16), DType::kF16);
}

TEST(BackendTraits, TheDeclarationsGiveTheAnswersTheNamesOnceDid) {
  EXPECT_EQ(DefaultWarmup("cuda"), 1);
  EXPECT_EQ(DefaultWarmup("mpi"), 0);
  EXPECT_TRUE(BackendEmulatesLinks("cuda"));
  EXPECT_FALSE(BackendEmulatesLinks("mpi"));
  EXPECT_EQ(ComputeDType("mpi", DType::kBF16), DType::kF32);
  EXPECT_EQ(ComputeDType("cuda", DType::kF16), DType::kF16);
  EXPECT_TRUE(IsProcessBackend("mpi"));
  EXPECT_FALSE(IsProcessBackend("cuda"));
  EXPECT_TRUE(BackendTraitsOf("mpi").needs_worker);
  EXPECT_TRUE(BackendTraitsOf("mpi").TakesWorkerFlag("mpi-timeout"));
  EXPECT_TRUE(BackendTraitsOf("cuda").runs_on_local_gpus);
  Faults failed_rank;
  failed_rank.failed_ranks.push_back(ParseRankFailure("1@0"));
  EXPECT_EQ(FaultRefusal(failed_rank, "mpi"), "");
  EXPECT_EQ(FaultRefusal(failed_rank, "cuda").rfind("fail_rank: the cuda backend runs real hardware, where a "
                                                   "stopped GPU would hang the whole process",
                                                   0),
            0u);
  EXPECT_EQ(TracedHostClock("cuda"), "host");
  EXPECT_EQ(TracedHostClock("mpi"), "host");
  // A worker flag's value is checked by the backend that takes it.
  EXPECT_EQ(MessageOf([] { CheckBackendWorkerFlag("mpi-timeout", "--mpi-timeout", "soon"); })
                .rfind("--mpi-timeout", 0),
            0u);
  EXPECT_EQ(MessageOf([] { CheckBackendWorkerFlag("mpi-timeout", "--mpi-timeout", "5s"); }), "(no error)");
}

// The simulator under another name, for the registered test backend.
class RenamedSim final : public Backend {
 public:
  explicit RenamedSim(std::string name) : name_(std::move(name)), sim_(CreateSimBackend()) {}
  std::string name() const override { return name_; }
  void Load(const Plan& plan, const Topology& topology, const RunOptions& options) override {
    sim_->Load(plan, topology, options);
  }
  void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>& cancel) override {
    sim_->RunThroughStep(last_step, sink, cancel);
  }
  void Reset() override { sim_->Reset(); }
  std::span<const float> BufferData(BufferId id) const override { return sim_->BufferData(id); }
  std::size_t completed_ops() const override { return sim_->completed_ops(); }

 private:
  std::string name_;
  std::unique_ptr<Backend> sim_;
};

void CheckFlag(const std::string& spelling, const std::string& value) {
  if (value != "ok") throw Error(spelling + ": not ok");
}

BackendDeclaration TestBackend(int warmup) {
  BackendDeclaration d;
  d.name = "traits-test";
  d.description = "a test's backend";
  BackendTraits& t = d.traits;
  t.event_clock = ClockKind::kSimulated;
  t.computes_in_float32 = true;
  t.slow_rank = FaultSupport::kRefused;
  t.failed_rank = FaultSupport::kRefused;
  t.failed_rank_refusal = "which the test forbids";
  t.failed_link = FaultSupport::kReal;
  t.emulates_links = true;
  t.default_warmup = warmup;
  t.under_mpirun = true;
  t.worker_flags = {{"traits-test-flag", CheckFlag}};
  t.models_machine = true;
  return d;
}

TEST(BackendTraits, ABackendRegisteredHereIsSeenByEveryQuestion) {
  RegisterBackend(TestBackend(3), [] { return std::make_unique<RenamedSim>("traits-test"); });
  EXPECT_TRUE(Listed(ListBackends(), "traits-test"));
  ASSERT_TRUE(FindBackend("traits-test").has_value());
  EXPECT_EQ(FindBackend("traits-test")->description, "a test's backend");

  EXPECT_EQ(DefaultWarmup("traits-test"), 3);
  EXPECT_TRUE(BackendEmulatesLinks("traits-test"));
  EXPECT_EQ(ComputeDType("traits-test", DType::kF16), DType::kF32);
  EXPECT_TRUE(IsProcessBackend("traits-test"));
  EXPECT_EQ(TracedHostClock("traits-test"), "simulated");

  Faults slow;
  slow.slow_ranks.push_back(ParseSlowRank("1:2"));
  EXPECT_EQ(FaultRefusal(slow, "traits-test"),
            "slow_rank: the traits-test backend runs real hardware, which it cannot slow on request; only "
            "the simulator (backend sim) applies it");
  Faults failed;
  failed.failed_ranks.push_back(ParseRankFailure("1@0"));
  EXPECT_EQ(FaultRefusal(failed, "traits-test").rfind("fail_rank: the traits-test backend runs real hardware, "
                                                      "which the test forbids;",
                                                      0),
            0u);
  Faults link;
  link.failed_links.push_back(ParseLinkFailure("0-1@0"));
  EXPECT_EQ(FaultRefusal(link, "traits-test"), "");

  RunOptions options;
  Topology topology;
  ApplyMachineModelOn("traits-test", TwoGpuModel(), &options, &topology);
  EXPECT_TRUE(options.shared_device_memory);

  EXPECT_EQ(MessageOf([] { CheckBackendWorkerFlag("traits-test-flag", "--traits-test-flag", "bad"); }),
            "--traits-test-flag: not ok");

  // It runs, and its events are what it declared.
  Executor ex(CreateBackend("traits-test"), BuildCollective(Tiny()), MakeTopologyPreset("dgx-a100"));
  VectorSink sink;
  ex.RunToEnd(sink);
  ASSERT_FALSE(sink.events.empty());
  EXPECT_EQ(sink.events.front().clock, BackendTraitsOf("traits-test").event_clock);

  // Registering the name again replaces it, in place.
  const std::size_t count = ListDeclaredBackends().size();
  RegisterBackend(TestBackend(5), [] { return std::make_unique<RenamedSim>("traits-test"); });
  EXPECT_EQ(DefaultWarmup("traits-test"), 5);
  EXPECT_EQ(ListDeclaredBackends().size(), count);

  // Declared without a factory: known, not runnable here.
  RegisterBackend(TestBackend(5), nullptr);
  EXPECT_FALSE(Listed(ListBackends(), "traits-test"));
  EXPECT_EQ(DefaultWarmup("traits-test"), 5);
  EXPECT_EQ(MessageOf([] { CreateBackend("traits-test"); }).rfind("unknown backend 'traits-test'", 0), 0u);
}

}  // namespace
}  // namespace shardlab
