// The reduction kernel (dst += src, what every reducing receive runs)
// against a device-to-device copy of the same bytes, in one run. Both are
// bound by memory bandwidth: the copy moves 2 bytes (read + write) for each
// byte, the reduction 3 (two reads, one write), so the fair comparison is
// memory traffic per second. Goal: the reduction reaches >= 85% of the copy.
//
//   reduce_vs_copy_bench [--min BYTES] [--max BYTES]
#include <cstring>
#include <vector>

#include "bench/cuda/bench_util.h"
#include "engine/backends/cuda/kernels.h"

using namespace shardlab;

int main(int argc, char** argv) {
  bench::RequireDevices("reduce_vs_copy_bench");
  std::size_t min_bytes = std::size_t{1} << 20, max_bytes = std::size_t{1} << 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--min")) min_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--max")) max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  try {
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), -1);
    float *src = nullptr, *dst = nullptr;
    CUDA_CHECK(cudaMalloc(&src, max_bytes), -1);
    CUDA_CHECK(cudaMalloc(&dst, max_bytes), -1);
    cuda::LaunchFill(src, static_cast<std::int64_t>(max_bytes / 4), 1.0f, stream);
    cuda::LaunchFill(dst, static_cast<std::int64_t>(max_bytes / 4), 0.0f, stream);
    CUDA_CHECK(cudaGetLastError(), -1);
    std::printf("# reduction (dst += src, float32) vs device-to-device copy; GB/s of memory traffic\n");
    std::printf("%12s %12s %12s %12s %8s\n", "size", "copy us", "copy GB/s", "reduce GB/s",
                "ratio");
    double worst = 1e9;
    for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
      const std::int64_t count = static_cast<std::int64_t>(bytes / 4);
      const double copy_ns = bench::BestStreamNs(stream, 20, [&] {
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream), -1);
      });
      const double reduce_ns = bench::BestStreamNs(stream, 20, [&] {
        cuda::LaunchCombine(ReduceOp::kSum, src, dst, count, stream);
      });
      CUDA_CHECK(cudaGetLastError(), -1);
      const double copy_gbps = 2.0 * bytes / copy_ns;
      const double reduce_gbps = 3.0 * bytes / reduce_ns;
      const double ratio = reduce_gbps / copy_gbps;
      if (bytes >= (std::size_t{16} << 20)) worst = std::min(worst, ratio);
      std::printf("%12s %12.1f %12.1f %12.1f %7.0f%%\n", bench::Size(bytes).c_str(),
                  copy_ns / 1e3, copy_gbps, reduce_gbps, 100 * ratio);
    }
    std::printf("# goal: reduction >= 85%% of copy from 16 MiB up; worst there: %.0f%%\n",
                100 * worst);
    cudaFree(src);
    cudaFree(dst);
    cudaStreamDestroy(stream);
  } catch (const Error& e) {
    std::fprintf(stderr, "reduce_vs_copy_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
