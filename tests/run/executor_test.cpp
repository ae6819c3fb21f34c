// The Executor: stepping equals running, and play/pause/cancel/reset from
// another thread leave it consistent.
#include <gtest/gtest.h>

#include <thread>

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"

namespace shardlab {
namespace {

DeviceSpec TestDevice() {
  DeviceSpec d;
  d.model = "test";
  d.fp32_tflops = 10;
  d.fp16_tflops = 100;
  d.memory_gbps = 1000;
  return d;
}

// N GPUs on one switch; links of 10 GB/s and 5 ns.
Topology Star(int gpus) {
  Topology t;
  t.name = "star";
  for (int i = 0; i < gpus; ++i) {
    Node n;
    n.name = "gpu" + std::to_string(i);
    n.device = TestDevice();
    t.nodes.push_back(n);
    t.gpus.push_back(i);
  }
  Node sw;
  sw.name = "switch";
  sw.kind = NodeKind::kNvSwitch;
  t.nodes.push_back(sw);
  for (int i = 0; i < gpus; ++i) t.links.push_back(Link{i, gpus, LinkKind::kNvLink3, 10, 5, 1});
  return t;
}

// `steps` rounds in which every rank sends a slice to the next rank (sizes
// vary by rank so ranks drift apart and steps overlap in time).
Plan PassAround(int ranks, int steps, std::int64_t count) {
  PlanBuilder b("pass-around", ranks);
  for (int r = 0; r < ranks; ++r) b.AddBuffer(r, "data", count * (r + 1), DType::kF32, BufferInit::kRandom);
  std::vector<OpId> last_recv(ranks, kNoOp), last_send(ranks, kNoOp);
  for (int s = 0; s < steps; ++s) {
    std::vector<OpId> recv(ranks), send(ranks);
    for (int r = 0; r < ranks; ++r) {
      const int to = (r + 1) % ranks;
      std::vector<OpId> send_deps, recv_deps;
      if (last_recv[r] != kNoOp) send_deps.push_back(last_recv[r]);
      const auto t = b.AddTransfer(r, to, {r, 0, count}, {to, 0, count}, ReduceOp::kSum, s, {},
                                   send_deps, recv_deps);
      send[r] = t.send;
      recv[to] = t.recv;
    }
    last_recv = recv;
    last_send = send;
  }
  return b.Finish();
}

TEST(Executor, SteppingGivesTheSameTimelineAsRunning) {
  const Plan plan = PassAround(4, 6, 1000);
  Executor run(CreateBackend("sim"), plan, Star(4));
  VectorSink all;
  run.RunToEnd(all);

  Executor step(CreateBackend("sim"), plan, Star(4));
  VectorSink stepped;
  int steps = 0;
  while (step.StepOnce(stepped)) {
    ++steps;
    EXPECT_EQ(step.steps_done(), steps);
    // After step k every op of steps <= k has finished.
    std::size_t through_k = 0;
    for (const Event& e : stepped.events) through_k += e.step < steps ? 1 : 0;
    EXPECT_EQ(through_k, 8u * steps);
  }
  EXPECT_EQ(steps, plan.num_steps);
  EXPECT_EQ(step.state(), ExecutorState::kDone);
  ASSERT_EQ(stepped.events.size(), all.events.size());
  for (std::size_t i = 0; i < all.events.size(); ++i) {
    EXPECT_EQ(stepped.events[i].op, all.events[i].op);
    EXPECT_DOUBLE_EQ(stepped.events[i].end_ns, all.events[i].end_ns);
  }
  // Every op reported exactly once.
  std::vector<int> seen(plan.ops.size(), 0);
  for (const Event& e : all.events) ++seen[e.op];
  for (int n : seen) EXPECT_EQ(n, 1);
}

TEST(Executor, ResetReplaysTheSameRunAndRestoresTheInputs) {
  const Plan plan = PassAround(3, 4, 100);
  Executor ex(CreateBackend("sim"), plan, Star(3));
  const std::vector<float> input(ex.backend().BufferData(0).begin(), ex.backend().BufferData(0).end());
  VectorSink first, second;
  ex.RunToEnd(first);
  EXPECT_NE(std::vector<float>(ex.backend().BufferData(1).begin(), ex.backend().BufferData(1).end()),
            std::vector<float>());
  ex.Reset();
  EXPECT_EQ(ex.state(), ExecutorState::kReady);
  EXPECT_EQ(ex.steps_done(), 0);
  EXPECT_EQ(std::vector<float>(ex.backend().BufferData(0).begin(), ex.backend().BufferData(0).end()),
            input);
  ex.RunToEnd(second);
  ASSERT_EQ(first.events.size(), second.events.size());
  for (std::size_t i = 0; i < first.events.size(); ++i)
    EXPECT_DOUBLE_EQ(first.events[i].end_ns, second.events[i].end_ns);
}

TEST(Executor, PlayPauseResumeFromAnotherThreadRunsEveryOpOnce) {
  const Plan plan = PassAround(16, 200, 64);
  Executor ex(CreateBackend("sim"), plan, Star(16));
  VectorSink sink;
  ex.Play(sink);
  ex.Pause();
  ex.Wait();
  const ExecutorState paused = ex.state();
  EXPECT_TRUE(paused == ExecutorState::kPaused || paused == ExecutorState::kDone)
      << ExecutorStateName(paused);
  if (paused == ExecutorState::kPaused) {
    EXPECT_LT(ex.steps_done(), plan.num_steps);
    ex.Play(sink);
    ex.Wait();
  }
  EXPECT_EQ(ex.state(), ExecutorState::kDone);
  EXPECT_EQ(sink.events.size(), plan.ops.size());
}

TEST(Executor, CancelStopsARunAndResetMakesItUsableAgain) {
  const Plan plan = PassAround(32, 400, 64);
  Executor ex(CreateBackend("sim"), plan, Star(32));
  VectorSink sink;
  ex.Play(sink);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ex.Cancel();
  const ExecutorState s = ex.state();
  EXPECT_TRUE(s == ExecutorState::kCancelled || s == ExecutorState::kDone) << ExecutorStateName(s);
  if (s == ExecutorState::kCancelled) {
    EXPECT_NE(ex.error().find("cancelled"), std::string::npos);
    VectorSink more;
    EXPECT_THROW(ex.StepOnce(more), Error);
  }
  ex.Reset();
  VectorSink again;
  ex.RunToEnd(again);
  EXPECT_EQ(again.events.size(), plan.ops.size());
}

TEST(Executor, RejectsAnInvalidPlanAndAnUnknownBackend) {
  Plan bad = PassAround(2, 1, 4);
  bad.ops[0].match = kNoOp;
  EXPECT_THROW(Executor(CreateBackend("sim"), bad, Star(2)), Error);
  try {
    CreateBackend("warp-drive");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("available: sim"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace shardlab
