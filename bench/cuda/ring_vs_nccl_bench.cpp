// Hand-written ring all-reduce (the cuda backend running ShardLab's plan)
// against NCCL's (--algo nccl: one ncclAllReduce per rank) from 8 B to
// 1 GiB, in nccl-tests' columns: time is the GPU span of the run (first op
// start to last op end, best of 5), busbw = 2(n-1)/n x size / time.
//
// With one GPU the ring runs on virtual devices (--ranks, default 4, all
// on GPU 0) and NCCL at one rank: the two rows then measure different
// things, and the table says so.
//
//   ring_vs_nccl_bench [--ranks N] [--max BYTES]
#include <cstring>

#include "bench/cuda/bench_util.h"
#include "engine/algorithms/collective.h"
#include "engine/backends/cuda/cuda_backend.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

using namespace shardlab;

namespace {

// GPU span of the best of `repeats` runs, or -1 when the backend refuses.
double BestSpanNs(const Plan& plan, const Topology& topology, int repeats, std::string* why) {
  try {
    RunOptions options;
    options.timing_only = true;
    Executor ex(CreateCudaBackend(), plan, topology, options);
    double best = 1e300;
    for (int rep = 0; rep < repeats; ++rep) {
      ex.Reset();
      VectorSink sink;
      ex.RunToEnd(sink);
      TimeNs first = 1e300, last = 0;
      for (const Event& e : sink.events) {
        first = std::min(first, e.start_ns);
        last = std::max(last, e.end_ns);
      }
      best = std::min(best, sink.events.empty() ? 0.0 : last - first);
    }
    return best;
  } catch (const Error& e) {
    *why = e.what();
    return -1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int devices = bench::RequireDevices("ring_vs_nccl_bench");
  int ranks = devices > 1 ? devices : 4;
  std::int64_t max_bytes = std::int64_t{1} << 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--ranks")) ranks = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max")) max_bytes = std::strtoll(argv[i + 1], nullptr, 10);
  }
  const int nccl_ranks = devices >= ranks ? ranks : 1;
  const Topology topology = MakeTopologyPreset("dgx-h100");
  std::printf("# all-reduce, float32 sum: ring = ShardLab's plan on %d rank%s (%s), nccl = %d rank%s\n",
              ranks, ranks == 1 ? "" : "s",
              DescribePlacement(PhysicalGpus(ranks, {}, devices), devices).c_str(), nccl_ranks,
              nccl_ranks == 1 ? "" : "s");
  if (nccl_ranks != ranks)
    std::printf("# one GPU: NCCL cannot put %d ranks on it, so its row is one rank (a local copy)\n",
                ranks);
  std::printf("%12s %12s %12s %12s %12s %12s\n", "size", "ring us", "ring busbw", "nccl us",
              "nccl busbw", "ring/nccl");
  for (std::int64_t bytes = 8; bytes <= max_bytes; bytes *= 4) {
    CollectiveParams ring;
    ring.ranks = ranks;
    ring.count = bytes / 4;
    CollectiveParams nccl = ring;
    nccl.algo = CollectiveAlgo::kNccl;
    nccl.ranks = nccl_ranks;
    std::string why_ring, why_nccl;
    const double ring_ns = BestSpanNs(BuildCollective(ring), topology, 5, &why_ring);
    const double nccl_ns = BestSpanNs(BuildCollective(nccl), topology, 5, &why_nccl);
    auto busbw = [&](double ns, int n) {
      return ns > 0 ? BusBandwidthFactor(CollectiveKind::kAllReduce, n) * bytes / ns : 0.0;
    };
    std::printf("%12s %12.1f %12.2f %12.1f %12.2f %11.2fx\n",
                bench::Size(static_cast<double>(bytes)).c_str(), ring_ns / 1e3, busbw(ring_ns, ranks),
                nccl_ns / 1e3, busbw(nccl_ns, nccl_ranks), nccl_ns > 0 ? nccl_ns / ring_ns : 0.0);
    if (!why_ring.empty()) std::printf("#   ring failed: %s\n", why_ring.c_str());
    if (!why_nccl.empty()) std::printf("#   nccl failed: %s\n", why_nccl.c_str());
  }
  return 0;
}
