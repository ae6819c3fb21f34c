// `shardlab-cli calibrate`: measures one GPU for the simulator's device
// figures. Each rate is the best of several timed repetitions after a
// warm-up (the best, as nccl-tests and cuBLAS benchmarks report, because
// interference only ever slows a run down).
#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/topology/device_profile.h"

namespace shardlab::cuda {
namespace {

constexpr int kRepeats = 10;

// Device memory freed on scope exit.
struct DeviceMemory {
  void* ptr = nullptr;
  explicit DeviceMemory(std::size_t bytes) { CUDA_CHECK(cudaMalloc(&ptr, bytes), -1); }
  ~DeviceMemory() { cudaFree(ptr); }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr); }
};

struct EventPair {
  cudaEvent_t start = nullptr, end = nullptr;
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start), -1);
    CUDA_CHECK(cudaEventCreate(&end), -1);
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(end);
  }
};

// The shortest of kRepeats timed runs of `work` on `stream`, in ns.
template <typename Work>
double BestNs(cudaStream_t stream, Work work) {
  EventPair ev;
  work();  // warm-up
  CUDA_CHECK(cudaStreamSynchronize(stream), -1);
  double best = 1e30;
  for (int i = 0; i < kRepeats; ++i) {
    CUDA_CHECK(cudaEventRecord(ev.start, stream), -1);
    work();
    CUDA_CHECK(cudaEventRecord(ev.end, stream), -1);
    CUDA_CHECK(cudaEventSynchronize(ev.end), -1);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.end), -1);
    best = std::min(best, static_cast<double>(ms) * 1e6);
  }
  return best;
}

double GemmTflops(cublasHandle_t handle, cudaStream_t stream, bool half, int n) {
  const std::size_t elements = static_cast<std::size_t>(n) * n;
  DeviceMemory a(elements * 4), b(elements * 4), c(elements * 4);
  LaunchFill(a.as<float>(), static_cast<std::int64_t>(elements), 0.5f, stream);
  LaunchFill(b.as<float>(), static_cast<std::int64_t>(elements), 0.25f, stream);
  CUDA_CHECK(cudaGetLastError(), -1);
  DeviceMemory ah(half ? elements * 2 : 1), bh(half ? elements * 2 : 1), ch(half ? elements * 2 : 1);
  if (half) {
    LaunchFloatToHalf(a.as<float>(), ah.ptr, static_cast<std::int64_t>(elements), stream);
    LaunchFloatToHalf(b.as<float>(), bh.ptr, static_cast<std::int64_t>(elements), stream);
    CUDA_CHECK(cudaGetLastError(), -1);
  }
  const float alpha = 1.0f, beta = 0.0f;
  const double ns = BestNs(stream, [&] {
    if (half) {
      CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, ah.ptr, CUDA_R_16F,
                                n, bh.ptr, CUDA_R_16F, n, &beta, ch.ptr, CUDA_R_16F, n,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   -1);
    } else {
      CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.as<float>(), n,
                               b.as<float>(), n, &beta, c.as<float>(), n),
                   -1);
    }
  });
  return 2.0 * n * static_cast<double>(n) * n / ns / 1e3;  // flops/ns = GFLOP/s; /1e3 = TFLOP/s
}

DeviceProfile Measure(int gpu) {
  const int count = CudaDeviceCountOrThrow();
  if (gpu < 0 || gpu >= count)
    throw Error("--gpu: " + std::to_string(gpu) + " is not a GPU of this machine (0.." +
                std::to_string(count - 1) + ")");
  CUDA_CHECK(cudaSetDevice(gpu), -1);
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu), -1);
  DeviceProfile p;
  p.model = prop.name;
  p.memory_bytes = static_cast<Bytes>(prop.totalGlobalMem);

  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), -1);
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle), -1);
  CUBLAS_CHECK(cublasSetStream(handle, stream), -1);
  struct Cleanup {
    cudaStream_t s;
    cublasHandle_t h;
    ~Cleanup() {
      cublasDestroy(h);
      cudaStreamDestroy(s);
    }
  } cleanup{stream, handle};

  // Device-to-device copy: 256 MiB, far beyond any cache.
  const std::size_t copy_bytes = std::size_t{256} << 20;
  {
    DeviceMemory src(copy_bytes), dst(copy_bytes);
    CUDA_CHECK(cudaMemsetAsync(src.ptr, 1, copy_bytes, stream), -1);
    const double ns = BestNs(stream, [&] {
      CUDA_CHECK(cudaMemcpyAsync(dst.ptr, src.ptr, copy_bytes, cudaMemcpyDeviceToDevice, stream), -1);
    });
    p.d2d_copy_gbps = static_cast<double>(copy_bytes) / ns;
    p.memory_gbps = 2.0 * static_cast<double>(copy_bytes) / ns;  // read + write
  }
  p.fp32_tflops = GemmTflops(handle, stream, false, 4096);
  p.fp16_tflops = GemmTflops(handle, stream, true, 8192);

  // Launch and event-record costs on the host, per call, over 2,000 calls.
  {
    DeviceMemory one(sizeof(float));
    constexpr int kCalls = 2000;
    using Clock = std::chrono::steady_clock;
    CUDA_CHECK(cudaStreamSynchronize(stream), -1);
    auto t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) LaunchFill(one.as<float>(), 1, 0.0f, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream), -1);
    p.kernel_launch_ns =
        std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kCalls;
    CUDA_CHECK(cudaGetLastError(), -1);
    EventPair ev;
    t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) CUDA_CHECK(cudaEventRecord(ev.start, stream), -1);
    p.event_record_ns =
        std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kCalls;
    CUDA_CHECK(cudaStreamSynchronize(stream), -1);
  }
  // A replayed CUDA graph's dependent nodes: a chain of tiny kernels
  // captured from one stream; the replay's GPU span over the chain's length
  // is one node's end to the next one's start (the model of a graph run
  // charges it per node: this_machine.h, ModelGraphOpNs).
  {
    DeviceMemory one(sizeof(float));
    constexpr int kChain = 256;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), -1);
    for (int i = 0; i < kChain; ++i) LaunchFill(one.as<float>(), 1, 0.0f, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph), -1);
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0), -1);
    struct GraphCleanup {
      cudaGraph_t g;
      cudaGraphExec_t e;
      ~GraphCleanup() {
        cudaGraphExecDestroy(e);
        cudaGraphDestroy(g);
      }
    } graph_cleanup{graph, exec};
    const double ns = BestNs(stream, [&] { CUDA_CHECK(cudaGraphLaunch(exec, stream), -1); });
    p.graph_node_ns = ns / kChain;
  }
  return p;
}

}  // namespace

void InstallCudaCalibrator() { SetDeviceCalibrator(&Measure); }

}  // namespace shardlab::cuda
