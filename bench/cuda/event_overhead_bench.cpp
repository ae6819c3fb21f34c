// What per-op timing costs: a chain of reductions over >= 1 MiB chunks run
// through the CUDA backend (two events per op, dependencies as events)
// against the same kernels launched back to back on one stream with one
// event pair around them. Both times are GPU spans (first start to last
// end). Goal: < 5% overhead at 1 MiB chunks and above.
//
//   event_overhead_bench [--ops N]
#include <cstring>

#include "bench/cuda/bench_util.h"
#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

using namespace shardlab;

namespace {

// One rank: `ops` reductions dst[c] += src[c] over chunks of `chunk` elements,
// one after another on the compute lane.
Plan ChainPlan(int ops, std::int64_t chunk) {
  PlanBuilder b("reduction chain", 1);
  const BufferId src = b.AddBuffer(0, "src", chunk * ops, DType::kF32, BufferInit::kZero);
  const BufferId dst = b.AddBuffer(0, "dst", chunk * ops, DType::kF32, BufferInit::kZero);
  OpId prev = kNoOp;
  for (int i = 0; i < ops; ++i) {
    Op op;
    op.kind = OpKind::kReduce;
    op.reduce = ReduceOp::kSum;
    op.src = BufferSlice{src, i * chunk, chunk};
    op.dst = BufferSlice{dst, i * chunk, chunk};
    op.bytes = chunk * 4;
    prev = prev == kNoOp ? b.AddOp(op) : b.AddOp(op, {prev});
  }
  return b.Finish();
}

}  // namespace

int main(int argc, char** argv) {
  bench::RequireDevices("event_overhead_bench");
  int ops = 256;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--ops")) ops = std::atoi(argv[i + 1]);
  try {
    const Topology topology = MakeUniformRing(1, 100, 1000);
    std::printf("# %d chained reductions; GPU span with per-op events (backend) vs without\n", ops);
    std::printf("%12s %14s %14s %10s\n", "chunk", "events us", "no events us", "overhead");
    for (std::int64_t chunk_bytes : {std::int64_t{64} << 10, std::int64_t{1} << 20,
                                     std::int64_t{4} << 20, std::int64_t{16} << 20}) {
      const std::int64_t chunk = chunk_bytes / 4;
      const Plan plan = ChainPlan(ops, chunk);
      RunOptions options;
      options.timing_only = true;
      Executor ex(CreateCudaBackend(), plan, topology, options);
      double with_events = 1e300;
      for (int rep = 0; rep < 5; ++rep) {
        ex.Reset();
        VectorSink sink;
        ex.RunToEnd(sink);
        TimeNs first = 1e300, last = 0;
        for (const Event& e : sink.events) {
          first = std::min(first, e.start_ns);
          last = std::max(last, e.end_ns);
        }
        with_events = std::min(with_events, last - first);
      }
      cudaStream_t stream;
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), -1);
      float *src = nullptr, *dst = nullptr;
      CUDA_CHECK(cudaMalloc(&src, chunk_bytes * ops), -1);
      CUDA_CHECK(cudaMalloc(&dst, chunk_bytes * ops), -1);
      const double without = bench::BestStreamNs(stream, 5, [&] {
        for (int i = 0; i < ops; ++i)
          cuda::LaunchCombine(ReduceOp::kSum, src + i * chunk, dst + i * chunk, chunk, stream);
      });
      CUDA_CHECK(cudaGetLastError(), -1);
      cudaFree(src);
      cudaFree(dst);
      cudaStreamDestroy(stream);
      std::printf("%12s %14.1f %14.1f %9.1f%%\n", bench::Size(static_cast<double>(chunk_bytes)).c_str(),
                  with_events / 1e3, without / 1e3, 100 * (with_events - without) / without);
    }
    std::printf("# goal: < 5%% from 1 MiB chunks up\n");
  } catch (const Error& e) {
    std::fprintf(stderr, "event_overhead_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
