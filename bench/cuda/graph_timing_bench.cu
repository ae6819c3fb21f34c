// What timing each op costs inside a CUDA graph, on the shape of a small
// ring all-reduce: R streams (virtual ranks on one GPU), S steps, one tiny
// kernel per rank and step that waits for its left neighbour's previous
// step (cudaStreamWaitEvent). Each variant is captured once and replayed;
// the GPU span of a replay is timed by one event pair outside the graph.
//
//   bare        no timing inside the graph                (the floor)
//   events      start and end cudaEventRecordExternal per op (ShardLab's CUDA backend today)
//   end-only    one external event per op (its end)
//   globaltimer each kernel writes %globaltimer at its start and end into a device array
//
// Prints each variant's span per replay and its ratio to bare, and checks
// that the globaltimer stamps are ordered as the dependencies require.
// Self-contained (CUDA runtime only):
//   nvcc -O2 -arch=sm_90 bench/cuda/graph_timing_bench.cu -o graph_timing_bench
//   ./graph_timing_bench [ranks] [steps] [replays]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                   cudaGetErrorString(e_));                                           \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__device__ __forceinline__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One "transfer": add the left neighbour's value into ours (8 bytes).
__global__ void Step(const float* left, float* mine, unsigned long long* stamps) {
  if (threadIdx.x != 0) return;
  if (stamps) stamps[0] = GlobalTimer();
  mine[0] += left[0];
  mine[1] += left[1];
  if (stamps) {
    __threadfence();
    stamps[1] = GlobalTimer();
  }
}

enum Variant { kBare, kEvents, kEndOnly, kGlobalTimer, kVariants };
const char* kNames[] = {"bare", "events", "end-only", "globaltimer"};

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 8;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 14;
  const int replays = argc > 3 ? std::atoi(argv[3]) : 200;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d virtual ranks x %d steps = %d tiny kernels per graph, %d replays\n",
              prop.name, ranks, steps, ranks * steps, replays);

  std::vector<cudaStream_t> streams(ranks);
  for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float* data = nullptr;
  CHECK(cudaMalloc(&data, sizeof(float) * 2 * ranks));
  CHECK(cudaMemset(data, 0, sizeof(float) * 2 * ranks));
  unsigned long long* stamps = nullptr;
  CHECK(cudaMalloc(&stamps, sizeof(unsigned long long) * 2 * ranks * steps));
  const int units = ranks * steps;
  std::vector<cudaEvent_t> dep(units), start(units), end(units);
  for (int u = 0; u < units; ++u) {
    CHECK(cudaEventCreateWithFlags(&dep[u], cudaEventDisableTiming));
    CHECK(cudaEventCreate(&start[u]));
    CHECK(cudaEventCreate(&end[u]));
  }
  cudaEvent_t fork, t0, t1;
  std::vector<cudaEvent_t> join(ranks);
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  for (auto& j : join) CHECK(cudaEventCreateWithFlags(&j, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));

  double span_us[kVariants] = {};
  for (int v = 0; v < kVariants; ++v) {
    cudaStream_t origin = streams[0];
    CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
    CHECK(cudaEventRecord(fork, origin));
    for (int r = 1; r < ranks; ++r) CHECK(cudaStreamWaitEvent(streams[r], fork, 0));
    for (int s = 0; s < steps; ++s) {
      for (int r = 0; r < ranks; ++r) {
        const int u = s * ranks + r;
        cudaStream_t st = streams[r];
        if (s > 0) CHECK(cudaStreamWaitEvent(st, dep[(s - 1) * ranks + (r + ranks - 1) % ranks], 0));
        if (v == kEvents) CHECK(cudaEventRecordWithFlags(start[u], st, cudaEventRecordExternal));
        const int left = (r + ranks - 1) % ranks;
        Step<<<1, 32, 0, st>>>(data + 2 * left, data + 2 * r, v == kGlobalTimer ? stamps + 2 * u : nullptr);
        CHECK(cudaGetLastError());
        if (v == kEvents || v == kEndOnly)
          CHECK(cudaEventRecordWithFlags(end[u], st, cudaEventRecordExternal));
        CHECK(cudaEventRecord(dep[u], st));
      }
    }
    for (int r = 1; r < ranks; ++r) {
      CHECK(cudaEventRecord(join[r], streams[r]));
      CHECK(cudaStreamWaitEvent(origin, join[r], 0));
    }
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(origin, &graph));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphUpload(exec, origin));
    for (int w = 0; w < 5; ++w) CHECK(cudaGraphLaunch(exec, origin));  // warm-up
    CHECK(cudaStreamSynchronize(origin));
    std::vector<float> each;
    for (int k = 0; k < replays; ++k) {
      CHECK(cudaEventRecord(t0, origin));
      CHECK(cudaGraphLaunch(exec, origin));
      CHECK(cudaEventRecord(t1, origin));
      CHECK(cudaEventSynchronize(t1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, t0, t1));
      each.push_back(ms * 1000.0f);
    }
    std::sort(each.begin(), each.end());
    span_us[v] = each[each.size() / 2];  // the median replay
    if (v == kGlobalTimer) {
      std::vector<unsigned long long> h(2 * units);
      CHECK(cudaMemcpy(h.data(), stamps, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost));
      int bad = 0;
      unsigned long long lo = ~0ull, hi = 0;
      for (int s = 0; s < steps; ++s)
        for (int r = 0; r < ranks; ++r) {
          const int u = s * ranks + r;
          lo = std::min(lo, h[2 * u]);
          hi = std::max(hi, h[2 * u + 1]);
          if (h[2 * u + 1] < h[2 * u]) ++bad;
          if (s > 0 && h[2 * u] < h[2 * ((s - 1) * ranks + (r + ranks - 1) % ranks) + 1]) ++bad;
        }
      std::printf("# globaltimer stamps of the last replay: first start to last end %.1f us, %d out of order\n",
                  (hi - lo) / 1000.0, bad);
    }
    if (v == kEvents) {
      float first_to_last = 0;
      CHECK(cudaEventElapsedTime(&first_to_last, start[0], end[units - 1]));
      std::printf("# events of the last replay: op 0's start to op %d's end %.1f us\n", units - 1,
                  first_to_last * 1000.0f);
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
  }
  std::printf("%-12s %12s %10s %14s\n", "variant", "span us", "x bare", "us per op");
  for (int v = 0; v < kVariants; ++v)
    std::printf("%-12s %12.1f %10.2f %14.2f\n", kNames[v], span_us[v], span_us[v] / span_us[kBare],
                (span_us[v] - span_us[kBare]) / units);
  return 0;
}
