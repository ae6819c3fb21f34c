// compare of two 100k-op traces: the time `shardlab-cli compare A B` takes,
// reading both files included, against the goal of 2 s (issue 24).
//
//   compare_bench [--ranks N]   ring all-reduce on N ranks: 4N(N-1) ops
//                               (160 ranks: 101,760 ops per trace)
//
// Both traces are written first (not timed): the simulator's run, and the
// same run with every op stretched by a deterministic factor (a "measured"
// stand-in). Prints the times and the ratio to the goal; exits 0.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/compare/compare.h"
#include "engine/io/trace_reader.h"
#include "engine/io/trace_writer.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

int main(int argc, char** argv) {
  using namespace shardlab;
  using Clock = std::chrono::steady_clock;
  int ranks = 160;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--ranks") ranks = std::atoi(argv[i + 1]);
  constexpr double kGoalS = 2.0;

  CollectiveParams params;
  params.ranks = ranks;
  params.count = std::int64_t{1} << 20;
  const Plan plan = BuildCollective(params);
  const Topology topology = MakeTopologyPreset("128x-dgx-a100-ib");
  auto backend = CreateSimBackend();
  RunOptions options;
  options.timing_only = true;
  backend->Load(plan, topology, options);
  VectorSink sink;
  std::atomic<bool> cancel{false};
  backend->RunThroughStep(plan.num_steps - 1, sink, cancel);

  std::vector<Event> stretched = sink.events;
  for (std::size_t i = 0; i < stretched.size(); ++i) {
    Event& e = stretched[i];
    const double factor = 1.0 + 0.25 * static_cast<double>(e.op % 7) / 7.0;
    e.start_ns *= 1.1;
    e.end_ns = e.start_ns + (sink.events[i].end_ns - sink.events[i].start_ns) * factor;
    e.clock = ClockKind::kCudaEvent;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string a_path = (dir / "shardlab-compare-bench-a.json").string();
  const std::string b_path = (dir / "shardlab-compare-bench-b.json").string();
  TraceInfo info;
  info.title = "compare bench";
  info.backend = "cuda";
  WriteChromeTraceFile(a_path, plan, topology, stretched, info);
  info.backend = "sim";
  WriteChromeTraceFile(b_path, plan, topology, sink.events, info);

  const auto t0 = Clock::now();
  const RunRecord a = RunFromTrace(ReadChromeTraceFile(a_path));
  const RunRecord b = RunFromTrace(ReadChromeTraceFile(b_path));
  const auto t1 = Clock::now();
  const Comparison c = CompareRuns(a, b);
  const std::string text = FormatComparison(c);
  const auto t2 = Clock::now();
  const double read_s = std::chrono::duration<double>(t1 - t0).count();
  const double compare_s = std::chrono::duration<double>(t2 - t1).count();
  const double total_s = read_s + compare_s;
  std::printf("# compare of two traces of %zu ops each (ring all-reduce, %d ranks), %.1f MiB per file\n",
              a.ops.size(), ranks, static_cast<double>(std::filesystem::file_size(a_path)) / (1 << 20));
  std::printf("  read both      %8.3f s\n  compare+format %8.3f s\n  total          %8.3f s\n", read_s,
              compare_s, total_s);
  std::printf("# goal < %.1f s: total / goal = %.2f (%s)\n", kGoalS, total_s / kGoalS,
              total_s < kGoalS ? "met" : "NOT met");
  std::printf("# run ratio B/A %.3f (the stand-in stretched starts by 1.1): %s\n", c.run.ratio(),
              text.empty() ? "?" : "ok");
  std::filesystem::remove(a_path);
  std::filesystem::remove(b_path);
  return 0;
}
