// How fast the simulator, the trace writer and the buffer view handle
// paper-sized plans. Every benchmark times the engine, not the network: the
// simulated time and bus bandwidth are reported beside it as counters so a
// run can be checked against the cost formulas (see docs/benchmarks.md).
//
//   BM_RingAllReduce/ranks       timing-only ring all-reduce, 1 GiB per rank,
//                                8 .. 1,024 ranks on 128 DGX A100 over IB
//   BM_RingAllReduce26GB         the paper case: a 26 GB gradient, 1,024 ranks
//   BM_TreeAllReduceChunks/k     tree all-reduce, 64 ranks, k pipeline chunks
//   BM_WriteChromeTrace/ranks    trace export of a simulated ring all-reduce
//   BM_ChunkState/ranks          the buffer view applying every event
//   BM_Ring1024Phases/phase      where a 1,024-rank run goes: 0 build the plan,
//                                1 validate, 2 load (op graph, routes), 3 run
//   BM_BarePriorityQueue1024     the floor: a bare std::priority_queue loop
//                                pushing and popping one event per transfer of
//                                the same run; BM_RingAllReduce/1024 over it is
//                                the simulator's overhead ratio (goal <= 10)
//
// Ops grow as 4n^2 for a ring (2(n-1) steps of n transfers, two ops each),
// so the sweeps fit their time against the op count: linear means the
// engine costs the same per op at every scale.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <malloc.h>
#include <queue>
#include <ostream>
#include <streambuf>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/plan/validate.h"
#include "engine/run/chunk_state.h"
#include "engine/run/executor.h"
#include "engine/run/metrics.h"
#include "engine/io/trace_writer.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

constexpr const char* kCluster = "128x-dgx-a100-ib";  // 1,024 A100s

// A stream that throws bytes away and counts them: the writer's own cost.
class CountingBuffer : public std::streambuf {
 public:
  std::int64_t bytes = 0;

 protected:
  int_type overflow(int_type c) override {
    ++bytes;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += n;
    return n;
  }
};

const Topology& Cluster() {
  static const Topology topology = MakeTopologyPreset(kCluster);
  return topology;
}

CollectiveParams RingAllReduce(int ranks, std::int64_t count) {
  CollectiveParams params;
  params.kind = CollectiveKind::kAllReduce;
  params.algo = CollectiveAlgo::kRing;
  params.ranks = ranks;
  params.count = count;
  return params;
}

// Runs `params` timing-only once per iteration (the executor is reset
// between them, outside the timed region) and reports the counters.
void RunCollective(benchmark::State& state, const CollectiveParams& params) {
  RunOptions options;
  options.timing_only = true;
  Executor executor(CreateBackend("sim"), BuildCollective(params), Cluster(), options);
  const auto ops = static_cast<std::int64_t>(executor.plan().ops.size());

  CountingSink sink;
  std::int64_t events = 0;
  for (auto _ : state) {
    state.PauseTiming();
    executor.Reset();
    sink = CountingSink{};
    state.ResumeTiming();
    executor.RunToEnd(sink);
    events += static_cast<std::int64_t>(sink.count);
  }

  const CollectiveMetrics metrics = ComputeCollectiveMetrics(
      params.kind, params.ranks, CollectiveSizeBytes(params), sink.end_ns);
  state.SetComplexityN(ops);
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                  benchmark::Counter::kIsRate);
  state.counters["sim_ms"] = metrics.time_ns / 1e6;
  state.counters["busbw_GBps"] = metrics.busbw_gbps;
}

void BM_RingAllReduce(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  RunCollective(state, RingAllReduce(ranks, std::int64_t{1} << 28));  // 1 GiB of float
}
BENCHMARK(BM_RingAllReduce)
    ->RangeMultiplier(2)
    ->Range(8, 1024)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

void BM_RingAllReduce26GB(benchmark::State& state) {
  RunCollective(state, RingAllReduce(1024, 26'000'000'000 / 4));  // float32 gradient
}
BENCHMARK(BM_RingAllReduce26GB)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_TreeAllReduceChunks(benchmark::State& state) {
  CollectiveParams params;
  params.kind = CollectiveKind::kAllReduce;
  params.algo = CollectiveAlgo::kTree;
  params.ranks = 64;
  params.count = std::int64_t{1} << 26;  // 256 MiB of float
  params.tree_chunks = static_cast<int>(state.range(0));
  RunCollective(state, params);
  state.counters["chunks"] = static_cast<double>(params.tree_chunks);
}
BENCHMARK(BM_TreeAllReduceChunks)
    ->RangeMultiplier(4)
    ->Range(1, 1024)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

// The events of one simulated run, made once per rank count.
struct RecordedRun {
  CollectiveParams params;
  Plan plan;
  std::vector<Event> events;
};

RecordedRun Record(int ranks) {
  RecordedRun run;
  run.params = RingAllReduce(ranks, std::int64_t{1} << 28);
  RunOptions options;
  options.timing_only = true;
  Executor executor(CreateBackend("sim"), BuildCollective(run.params), Cluster(), options);
  VectorSink sink;
  executor.RunToEnd(sink);
  run.plan = executor.plan();
  run.events = std::move(sink.events);
  return run;
}

void BM_WriteChromeTrace(benchmark::State& state) {
  const RecordedRun run = Record(static_cast<int>(state.range(0)));
  const TraceInfo info{"sim_bench", "sim", {}};
  std::int64_t bytes = 0;
  for (auto _ : state) {
    CountingBuffer buffer;
    std::ostream out(&buffer);
    WriteChromeTrace(out, run.plan, Cluster(), run.events, info);
    bytes += buffer.bytes;
  }
  const auto events = static_cast<double>(run.events.size());
  state.SetComplexityN(static_cast<std::int64_t>(run.events.size()));
  state.counters["events"] = events;
  state.counters["events/s"] = benchmark::Counter(events * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(bytes) / 1e6,
                                              benchmark::Counter::kIsRate);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6 / static_cast<double>(state.iterations());
}
BENCHMARK(BM_WriteChromeTrace)
    ->RangeMultiplier(4)
    ->Range(64, 1024)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

void BM_ChunkState(benchmark::State& state) {
  const RecordedRun run = Record(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    ChunkState chunks(run.params, run.plan);
    for (const Event& event : run.events) chunks.OnEvent(event);
    benchmark::DoNotOptimize(chunks);
  }
  const auto events = static_cast<double>(run.events.size());
  state.SetComplexityN(static_cast<std::int64_t>(run.events.size()));
  state.counters["events/s"] = benchmark::Counter(events * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ChunkState)
    ->RangeMultiplier(4)
    ->Range(16, 256)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

// One phase of a timing-only 1,024-rank ring all-reduce of 1 GiB, timed
// alone: 0 builds the plan, 1 validates it, 2 loads it on the simulator
// (op graph, routes, memory tracker), 3 runs it. Their sum is what
// `shardlab-cli run allreduce --ranks 1024 --size 1G --timing-only` spends.
void BM_Ring1024Phases(benchmark::State& state) {
  const int phase = static_cast<int>(state.range(0));
  const CollectiveParams params = RingAllReduce(1024, std::int64_t{1} << 28);
  RunOptions options;
  options.timing_only = true;
  Plan plan = BuildCollective(params);
  const auto ops = static_cast<double>(plan.ops.size());
  std::unique_ptr<Backend> backend = CreateBackend("sim");
  if (phase == 3) backend->Load(plan, Cluster(), options);
  for (auto _ : state) {
    switch (phase) {
      case 0: benchmark::DoNotOptimize(BuildCollective(params)); break;
      case 1: ValidatePlan(plan); break;
      case 2: backend->Load(plan, Cluster(), options); break;
      default: {
        state.PauseTiming();
        backend->Reset();
        CountingSink sink;
        const std::atomic<bool> cancel{false};
        state.ResumeTiming();
        backend->RunThroughStep(plan.num_steps - 1, sink, cancel);
        benchmark::DoNotOptimize(sink.end_ns);
      }
    }
  }
  static const char* const kNames[] = {"build", "validate", "load", "run"};
  state.SetLabel(kNames[phase]);
  if (phase == 2) {
    // Memory per op: the plan itself, and what the simulator holds beside
    // it once loaded (op graph, per-op run state, routes), from malloc's
    // own count of bytes in use, measured around a fresh Load.
    auto in_use = [] {
      const struct mallinfo2 m = mallinfo2();
      return static_cast<double>(m.uordblks + m.hblkhd);
    };
    backend.reset();
    const double before = in_use();
    backend = CreateBackend("sim");
    backend->Load(plan, Cluster(), options);
    const double after = in_use();
    state.counters["sim_B/op"] = (after - before) / ops;
    const double plan_bytes = static_cast<double>(plan.ops.capacity() * sizeof(Op) +
                                                  plan.deps.capacity() * sizeof(OpId));
    state.counters["plan_B/op"] = plan_bytes / ops;
  }
  state.counters["ns/op"] = benchmark::Counter(
      ops * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Ring1024Phases)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

// The floor the simulator is measured against: the same number of events
// (one per transfer of the 1,024-rank ring: 2(n-1) steps of n transfers)
// through a bare std::priority_queue of (time, seq, id), with as many in
// flight as the ring has (one per rank). Each pop pushes its successor.
void BM_BarePriorityQueue1024(benchmark::State& state) {
  constexpr int kRanks = 1024;
  const std::int64_t transfers = std::int64_t{2} * (kRanks - 1) * kRanks;
  struct Item {
    double time;
    std::uint64_t seq;
    std::int32_t id;
    bool operator>(const Item& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  for (auto _ : state) {
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    std::uint64_t seq = 0;
    for (int r = 0; r < kRanks; ++r) heap.push(Item{1000.0 + r * 0.5, seq++, r});
    std::int64_t popped = 0;
    double sum = 0;
    while (!heap.empty()) {
      const Item item = heap.top();
      heap.pop();
      sum += item.time;
      if (++popped + static_cast<std::int64_t>(heap.size()) < transfers + 1)
        heap.push(Item{item.time + 45'000.0 + (item.id & 7), seq++, item.id});
    }
    benchmark::DoNotOptimize(sum);
    state.counters["events"] = static_cast<double>(popped);
  }
}
BENCHMARK(BM_BarePriorityQueue1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace shardlab

BENCHMARK_MAIN();
