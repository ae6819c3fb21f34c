// ShardLab's ring all-reduce on the mpi backend against the MPI library's
// own MPI_Allreduce, on the same buffers, sizes 8 B to 256 MiB. Run it
// under mpirun (see docs/benchmarks.md):
//
//   mpirun --oversubscribe -np 4 build/bench/mpi_allreduce_bench [--max 256M] [--iters N]
//
// Rank 0 prints one row per size: each side's time (median of the runs),
// nccl-tests' busbw = size / time x 2(n-1)/n, and the ratio ShardLab /
// MPI. ShardLab's time is its events' span on the aligned clock (first op
// start to last op end: what `run --backend mpi` reports); MPI_Allreduce's
// is the slowest rank's wall time between a barrier and its return.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/fill.h"
#include "engine/core/units.h"
#include "engine/plan/validate.h"
#include "engine/run/backend.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/backends/mpi/process_group.h"
#include "engine/run/vector_sink.h"

namespace {

using namespace shardlab;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Time of one ShardLab ring all-reduce: the span of its events.
class SpanSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
  }
  double first = 1e300, last = -1e300;
};

int Run(int argc, char** argv) {
  Bytes max_bytes = Bytes{256} << 20;
  int iters_override = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max") max_bytes = ParseSize(argv[i + 1], "--max");
    else if (flag == "--iters") iters_override = std::atoi(argv[i + 1]);
    else throw Error("unknown flag " + flag + " (use --max SIZE, --iters N)");
  }
  const ProcessGroupInfo group = JoinProcessGroup("mpi", MpiOptions{});
  const int n = group.size;
  if (group.rank == 0) {
    std::printf("# ring all-reduce (ShardLab mpi backend) vs MPI_Allreduce, %d processes, float sum\n", n);
    std::printf("# %12s %10s %12s %12s %12s %12s %8s\n", "size (B)", "runs", "shardlab us",
                "mpi us", "shardlab bw", "mpi bw", "ratio");
  }
  const double factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  // 8 B, 32 B, ... by x4, and the largest size itself (256 MiB is not a
  // power of 4 times 8).
  for (Bytes size = std::min<Bytes>(8, max_bytes);; size = std::min(size * 4, max_bytes)) {
    const Bytes padded = std::max<Bytes>(size, 4 * n);  // at least one float per rank
    CollectiveScenario scenario;
    scenario.ranks = n;
    scenario.size_bytes = padded;
    scenario.backend = "mpi";
    std::unique_ptr<PreparedCollective> prepared = PrepareCollective(scenario);
    const Plan& plan = prepared->plan;
    ValidatePlan(plan);
    const int iters =
        iters_override > 0 ? iters_override : static_cast<int>(std::clamp<Bytes>((Bytes{64} << 20) / padded, 3, 20));

    std::unique_ptr<Backend> backend = CreateBackend("mpi");
    RunOptions options;
    backend->Load(plan, prepared->topology, options);
    std::atomic<bool> cancel{false};
    std::vector<double> ours, theirs;
    for (int it = 0; it <= iters; ++it) {  // run 0 warms up
      backend->Reset();
      SpanSink span;
      MPI_Barrier(MPI_COMM_WORLD);
      backend->RunThroughStep(plan.num_steps - 1, span, cancel);
      if (it > 0) ours.push_back(plan.num_steps > 0 ? span.last - span.first : 0);
    }
    backend.reset();

    std::vector<float> data(static_cast<std::size_t>(padded / 4));
    for (int it = 0; it <= iters; ++it) {
      FillInputs(data, 1, group.rank);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      double mine = (MPI_Wtime() - t0) * 1e9, slowest = 0;
      MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (it > 0) theirs.push_back(slowest);
    }
    if (group.rank == 0) {
      const double a = Median(ours), b = Median(theirs);
      const double bw_a = a > 0 ? static_cast<double>(padded) / a * factor : 0;  // B/ns = GB/s
      const double bw_b = b > 0 ? static_cast<double>(padded) / b * factor : 0;
      std::printf("  %12lld %10d %12.1f %12.1f %12.3f %12.3f %8.2f\n",
                  static_cast<long long>(padded), iters, a / 1e3, b / 1e3, bw_a, bw_b,
                  bw_b > 0 ? bw_a / bw_b : 0.0);
      std::fflush(stdout);
    }
    if (size >= max_bytes) break;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 0;
  try {
    code = Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_allreduce_bench: error: %s\n", e.what());
    code = 1;
  }
  LeaveProcessGroup(code);
  return code;
}
