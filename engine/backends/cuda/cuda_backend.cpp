// The CUDA backend; the design is described in cuda_backend.h.
#include "engine/backends/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/device_layout.h"
#include "engine/backends/cuda/device_ops.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/backends/cuda/nccl_collective.h"
#include "engine/backends/device/emulated_windows.h"
#include "engine/backends/device/plan_enqueuer.h"
#include "engine/core/error.h"
#include "engine/plan/host_data.h"
#include "engine/plan/validate.h"
#include "engine/topology/topology.h"

namespace shardlab {

int CudaDeviceCountOrThrow() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear it: the process stays usable for the simulator
    const std::string why = status != cudaSuccess
                                ? std::string(cudaGetErrorName(status)) + " (" +
                                      cudaGetErrorString(status) + ")"
                                : std::string("0 devices");
    throw Error("no CUDA device: cudaGetDeviceCount returned " + why +
                    "; the simulator (--backend sim) is the default",
                ErrorKind::kRuntime);
  }
  return count;
}

namespace {

using Clock = std::chrono::steady_clock;
using device::EventId;
using device::StreamId;

// The backend is the DeviceApi of its PlanEnqueuer: the enqueuer decides
// what is enqueued when (and is tested without a GPU); the calls below
// only translate each decision into the runtime's calls.
class CudaBackend final : public Backend, private device::DeviceApi {
 public:
  ~CudaBackend() override { Release(); }

  std::string name() const override { return "cuda"; }

  void Load(const Plan& plan, const Topology& topology, const RunOptions& options) override {
    const int devices = CudaDeviceCountOrThrow();
    Release();
    plan_ = &plan;
    topology_ = &topology;
    options_ = options;
    device_count_ = devices;
    const int ranks = plan.num_ranks;
    if (!options.rank_to_gpu.empty() && static_cast<int>(options.rank_to_gpu.size()) != ranks)
      throw Error("rank_to_gpu has " + std::to_string(options.rank_to_gpu.size()) +
                  " entries for " + std::to_string(ranks) + " ranks");
    gpu_ = PhysicalGpus(ranks, options.rank_to_gpu, devices);
    // Stragglers and failures (faults.h): a slow rank spins, the rest is
    // refused in one line.
    if (const std::string refusal = FaultRefusal(options.faults, "cuda"); !refusal.empty())
      throw Error(refusal);
    for (const SlowRank& slow : options.faults.slow_ranks)
      if (slow.factor < 1)
        throw Error("slow_rank: the cuda backend can only slow a rank down (FACTOR of at least 1, got " +
                    std::to_string(slow.factor) + ")");
    // SHARDLAB_CUDA_GRAPH=0 enqueues every run op by op (for comparison).
    const char* graph_env = std::getenv("SHARDLAB_CUDA_GRAPH");
    const bool use_graph = !(graph_env && std::string(graph_env) == "0");
    enqueuer_.Load(plan, use_graph);
    SetUpDevices();
    SetUpStreams();
    AllocateBuffers();
    SetUpNccl();
    Reset();
  }

  void Reset() override {
    SyncAll();
    enqueuer_.Reset();
    // Inputs as the simulator makes them, uploaded.
    if (!options_.timing_only) {
      // A 16-bit buffer is packed into its dtype (rounded to nearest even)
      // and its mirror holds what the device holds.
      AllocateHostBuffers(*plan_, options_.seed, mirror_);
      std::vector<unsigned char> packed;
      for (std::size_t id = 0; id < plan_->buffers.size(); ++id) {
        const Buffer& buffer = plan_->buffers[id];
        const int rank = buffer.rank;
        std::vector<float>& values = mirror_.data[id];
        packed.resize(values.size() * cuda::DeviceElementBytes(buffer.dtype));
        cuda::PackDType(buffer.dtype, values, packed.data());
        if (buffer.dtype != DType::kF32) cuda::UnpackDType(buffer.dtype, packed.data(), values);
        CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
        CUDA_CHECK(cudaMemcpy(device_[id], packed.data(), packed.size(), cudaMemcpyHostToDevice),
                   rank);
      }
      mirror_fresh_.assign(plan_->buffers.size(), 1);
    } else {
      mirror_.data.clear();
      for (std::size_t id = 0; id < plan_->buffers.size(); ++id) {
        const int rank = plan_->buffers[id].rank;
        CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
        CUDA_CHECK(cudaMemset(device_[id], 0, BufferBytes(id)), rank);
      }
    }
    SyncAll();
  }

  void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>& cancel) override {
    current_gpu_ = -1;
    enqueuer_.RunThroughStep(last_step, *this, sink, cancel,
                             options_.emulate_links ? ClockKind::kEmulated : ClockKind::kCudaEvent);
    std::fill(mirror_fresh_.begin(), mirror_fresh_.end(), 0);
  }

  std::span<const float> BufferData(BufferId id) const override {
    if (options_.timing_only || id < 0 || id >= static_cast<BufferId>(mirror_.data.size()))
      return {};
    if (!mirror_fresh_[id]) {  // read back on first look after a step
      const Buffer& buffer = plan_->buffers[id];
      const int rank = buffer.rank;
      std::vector<float>& values = mirror_.data[id];
      CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
      if (buffer.dtype == DType::kF32) {
        CUDA_CHECK(cudaMemcpy(values.data(), device_[id], values.size() * sizeof(float),
                              cudaMemcpyDeviceToHost),
                   rank);
      } else {  // unpacked exactly into the float mirror
        std::vector<unsigned char> packed(values.size() * cuda::DeviceElementBytes(buffer.dtype));
        CUDA_CHECK(cudaMemcpy(packed.data(), device_[id], packed.size(), cudaMemcpyDeviceToHost),
                   rank);
        cuda::UnpackDType(buffer.dtype, packed.data(), values);
      }
      mirror_fresh_[id] = 1;
    }
    return mirror_.data[id];
  }

  std::size_t completed_ops() const override { return enqueuer_.completed_ops(); }

  std::vector<HostEnqueueSpan> host_lane() const override { return enqueuer_.host_spans(); }

  std::string placement() const override {
    std::string line = DescribePlacement(gpu_, device_count_);
    if (!enqueuer_.graph_note().empty()) line += "; " + enqueuer_.graph_note();
    return line;
  }

 private:
  int GpuOf(int rank) const { return gpu_[static_cast<std::size_t>(rank)]; }
  int GpuOfStream(StreamId s) const { return GpuOf(device::RankOfStream(s)); }
  int RankOfEvent(EventId e) const {
    return plan_->ops[static_cast<std::size_t>(enqueuer_.events().OpOf(e))].rank;
  }
  std::size_t LaneIndex(int rank, Lane lane) const {
    return static_cast<std::size_t>(device::StreamOf(rank, lane));
  }
  cudaStream_t StreamOf(int rank, Lane lane) const { return streams_[LaneIndex(rank, lane)]; }
  cudaStream_t Stream(StreamId s) const { return streams_[static_cast<std::size_t>(s)]; }
  // DTypeBytes × count: a 16-bit buffer is 16-bit on the device.
  std::size_t BufferBytes(std::size_t id) const { return cuda::DeviceBufferBytes(plan_->buffers[id]); }
  DType DTypeOf(const BufferSlice& s) const { return plan_->buffers[static_cast<std::size_t>(s.buffer)].dtype; }
  void* Ptr(const BufferSlice& s) const {
    return static_cast<char*>(device_[static_cast<std::size_t>(s.buffer)]) +
           static_cast<std::size_t>(s.offset) * cuda::DeviceElementBytes(DTypeOf(s));
  }
  cuda::DeviceSlice Slice(const BufferSlice& s) const { return {Ptr(s), DTypeOf(s)}; }

  // cudaSetDevice only when the GPU changes: the host's enqueue rate is
  // what paces short ops when a run is not a graph.
  void UseGpu(int gpu, int rank) {
    if (gpu == current_gpu_) return;
    CUDA_CHECK(cudaSetDevice(gpu), rank);
    current_gpu_ = gpu;
  }

  // --- DeviceApi -------------------------------------------------------

  // One origin event per GPU, recorded back to back while the GPUs are idle;
  // the host clock between the records aligns the GPUs' time bases (to the
  // microseconds a record takes).
  void StartClock() override {
    SyncAll();
    clock_t0_ = Clock::now();
    for (int g : used_gpus_) {
      UseGpu(g, -1);
      const double offset =
          std::chrono::duration<double, std::nano>(Clock::now() - clock_t0_).count();
      CUDA_CHECK(cudaEventRecord(origin_[static_cast<std::size_t>(g)],
                                 StreamOf(FirstRankOn(g), Lane::kCompute)),
                 -1);
      // The same origin on the GPU's global timer, for a graph's stamps.
      if (!stamps_.empty() && stamps_[static_cast<std::size_t>(g)])
        cuda::LaunchStamp(stamps_[static_cast<std::size_t>(g)] + StampOriginSlot(),
                          StreamOf(FirstRankOn(g), Lane::kCompute));
      origin_offset_ns_[static_cast<std::size_t>(g)] = offset;
    }
    graph_ran_ = false;
    stamps_read_ = false;
  }

  bool HasStamps() const override { return stamps_enabled_; }

  void RecordStamp(EventId event, StreamId stream) override {
    const int rank = device::RankOfStream(stream);
    const int gpu = GpuOf(rank);
    UseGpu(gpu, rank);
    cuda::LaunchStamp(stamps_[static_cast<std::size_t>(gpu)] + event, Stream(stream));
  }

  // The slot after every event's: each GPU's origin stamp.
  std::size_t StampOriginSlot() const { return enqueuer_.events().count(); }

  // Reads every GPU's stamps once per graph run (after the run has ended).
  void ReadStamps() {
    if (stamps_read_) return;
    SyncAll();
    stamps_host_.assign(stamps_.size(), {});
    for (int g : used_gpus_) {
      std::vector<unsigned long long>& host = stamps_host_[static_cast<std::size_t>(g)];
      host.assign(StampOriginSlot() + 1, 0);
      CUDA_CHECK(cudaSetDevice(g), -1);
      CUDA_CHECK(cudaMemcpy(host.data(), stamps_[static_cast<std::size_t>(g)],
                            host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
                 -1);
    }
    current_gpu_ = -1;
    stamps_read_ = true;
  }

  bool TimedByStamps(EventId event) const {
    return graph_ran_ && stamps_enabled_ && enqueuer_.events().IsTiming(event);
  }

  void RecordEvent(EventId event, StreamId stream, bool timing) override {
    const int rank = device::RankOfStream(stream);
    UseGpu(GpuOf(rank), rank);
    cudaEvent_t e = events_[static_cast<std::size_t>(event)];
    if (capturing_ && timing) {
      // An event record node: the graph records it on every launch.
      CUDA_CHECK(cudaEventRecordWithFlags(e, Stream(stream), cudaEventRecordExternal), rank);
    } else {
      CUDA_CHECK(cudaEventRecord(e, Stream(stream)), rank);
    }
  }

  void WaitEvent(StreamId stream, EventId event) override {
    const int rank = device::RankOfStream(stream);
    UseGpu(GpuOf(rank), rank);
    CUDA_CHECK(cudaStreamWaitEvent(Stream(stream), events_[static_cast<std::size_t>(event)], 0),
               rank);
  }

  void LaunchWork(OpId unit, StreamId s) override {
    const Op& op = plan_->ops[static_cast<std::size_t>(unit)];
    const int rank = device::RankOfStream(s);
    UseGpu(GpuOf(rank), rank);
    cudaStream_t stream = Stream(s);
    switch (op.kind) {
      case OpKind::kCompute:
        for (std::int32_t k = 0; k < op.kernel_count; ++k)
          RunKernel(static_cast<std::size_t>(op.kernel_begin + k), rank, s, stream);
        break;
      case OpKind::kReduce:
        cuda::CombineOnDevice(op.reduce, Slice(op.src), Slice(op.dst),
                              std::min(op.src.count, op.dst.count), stream, rank);
        break;
      case OpKind::kCopy: CopyLocal(op, stream); break;
      case OpKind::kSend: TransferWork(unit, s); break;
      case OpKind::kRecv:
      case OpKind::kCollective: return;  // from their send / LaunchCollective
    }
    // A slow rank's work (a send: its transfer) lasts FACTOR times longer.
    const double factor = options_.faults.SlowFactor(op.rank);
    if (factor > 1 && !slow_ns_.empty()) {
      cuda::LaunchSpin(static_cast<std::uint64_t>((factor - 1) * slow_ns_[static_cast<std::size_t>(unit)]),
                       stream);
      CUDA_CHECK(cudaGetLastError(), rank);
    }
  }

  void LaunchCollective(std::span<const OpId> parts) override {
    std::vector<cuda::NcclRankCall> calls;
    for (OpId part : parts) {
      const Op& o = plan_->ops[static_cast<std::size_t>(part)];
      cuda::NcclRankCall c;
      c.rank = o.rank;
      c.call = o.library;
      c.reduce = o.reduce;
      c.root = o.peer;
      c.src = Ptr(o.src);
      c.dst = Ptr(o.dst);
      c.dtype = DTypeOf(o.src);
      c.count = o.src.count;
      c.stream = StreamOf(o.rank, o.lane);
      calls.push_back(c);
    }
    nccl_->Launch(calls);
    current_gpu_ = -1;  // NCCL switched devices
  }

  // Capture: the origin stream begins; every other stream joins through a
  // fork event recorded on it, and is joined back before the capture ends
  // (a stream left unjoined fails the capture).
  void BeginCapture(std::span<const StreamId> streams) override {
    capture_streams_.assign(streams.begin(), streams.end());
    const StreamId origin = capture_streams_.front();
    const int rank = device::RankOfStream(origin);
    UseGpu(GpuOf(rank), rank);
    CUDA_CHECK(cudaStreamBeginCapture(Stream(origin), cudaStreamCaptureModeThreadLocal), rank);
    capturing_ = true;
    CUDA_CHECK(cudaEventRecord(fork_[static_cast<std::size_t>(origin)], Stream(origin)), rank);
    for (std::size_t i = 1; i < capture_streams_.size(); ++i) {
      const StreamId s = capture_streams_[i];
      const int r = device::RankOfStream(s);
      UseGpu(GpuOf(r), r);
      CUDA_CHECK(cudaStreamWaitEvent(Stream(s), fork_[static_cast<std::size_t>(origin)], 0), r);
    }
  }

  void EndCapture() override {
    const StreamId origin = capture_streams_.front();
    for (std::size_t i = 1; i < capture_streams_.size(); ++i) {
      const StreamId s = capture_streams_[i];
      const int r = device::RankOfStream(s);
      UseGpu(GpuOf(r), r);
      CUDA_CHECK(cudaEventRecord(join_[static_cast<std::size_t>(s)], Stream(s)), r);
      UseGpu(GpuOfStream(origin), device::RankOfStream(origin));
      CUDA_CHECK(cudaStreamWaitEvent(Stream(origin), join_[static_cast<std::size_t>(s)], 0), r);
    }
    const int rank = device::RankOfStream(origin);
    UseGpu(GpuOf(rank), rank);
    cudaGraph_t graph = nullptr;
    capturing_ = false;
    CUDA_CHECK(cudaStreamEndCapture(Stream(origin), &graph), rank);
    const cudaError_t status = cudaGraphInstantiate(&graph_exec_, graph, 0);
    cudaGraphDestroy(graph);
    CUDA_CHECK(status, rank);
    graph_stream_ = Stream(origin);
    graph_gpu_ = GpuOf(rank);
  }

  void AbortCapture() override {
    if (capturing_ && !capture_streams_.empty()) {
      const StreamId origin = capture_streams_.front();
      cudaSetDevice(GpuOfStream(origin));
      cudaGraph_t graph = nullptr;
      cudaStreamEndCapture(Stream(origin), &graph);  // ends it for every joined stream
      if (graph) cudaGraphDestroy(graph);
    }
    capturing_ = false;
    cudaGetLastError();
    current_gpu_ = -1;
  }

  void LaunchGraph() override {
    UseGpu(graph_gpu_, -1);
    CUDA_CHECK(cudaGraphLaunch(graph_exec_, graph_stream_), -1);
    graph_ran_ = true;
  }

  void SynchronizeEvent(EventId event) override {
    if (TimedByStamps(event)) {  // the graph's stamps: read once the whole graph is done
      ReadStamps();
      return;
    }
    CUDA_CHECK(cudaEventSynchronize(events_[static_cast<std::size_t>(event)]), RankOfEvent(event));
  }

  void SynchronizeAll() override { SyncAll(); }

  TimeNs EventTimeNs(EventId event) override {
    const int rank = RankOfEvent(event);
    const int gpu = GpuOf(rank);
    if (TimedByStamps(event)) {
      ReadStamps();
      const std::vector<unsigned long long>& host = stamps_host_[static_cast<std::size_t>(gpu)];
      const double since_origin = static_cast<double>(host[static_cast<std::size_t>(event)]) -
                                  static_cast<double>(host[StampOriginSlot()]);
      return std::max(0.0, since_origin) + origin_offset_ns_[static_cast<std::size_t>(gpu)];
    }
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, origin_[static_cast<std::size_t>(gpu)],
                                    events_[static_cast<std::size_t>(event)]),
               rank);
    return static_cast<double>(ms) * 1e6 + origin_offset_ns_[static_cast<std::size_t>(gpu)];
  }

  TimeNs HostNowNs() override {
    return std::chrono::duration<double, std::nano>(Clock::now() - clock_t0_).count();
  }

  // --- set-up ----------------------------------------------------------

  void SetUpDevices() {
    used_gpus_.clear();
    for (int g : gpu_)
      if (std::find(used_gpus_.begin(), used_gpus_.end(), g) == used_gpus_.end())
        used_gpus_.push_back(g);
    std::sort(used_gpus_.begin(), used_gpus_.end());
    peer_ok_.assign(static_cast<std::size_t>(device_count_ * device_count_), 0);
    // Peer access where the hardware allows it; elsewhere transfers go
    // through cudaMemcpyPeerAsync, which stages through host memory.
    for (int a : used_gpus_) {
      for (int b : used_gpus_) {
        if (a == b) continue;
        int can = 0;
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b), -1);
        if (!can) continue;
        CUDA_CHECK(cudaSetDevice(a), -1);
        const cudaError_t status = cudaDeviceEnablePeerAccess(b, 0);
        if (status == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();
        } else {
          CUDA_CHECK(status, -1);
        }
        peer_ok_[static_cast<std::size_t>(a * device_count_ + b)] = 1;
      }
    }
    origin_.assign(static_cast<std::size_t>(device_count_), nullptr);
    origin_offset_ns_.assign(static_cast<std::size_t>(device_count_), 0.0);
    for (int g : used_gpus_) {
      CUDA_CHECK(cudaSetDevice(g), -1);
      CUDA_CHECK(cudaEventCreate(&origin_[static_cast<std::size_t>(g)]), -1);
    }
  }

  void SetUpStreams() {
    const int ranks = plan_->num_ranks;
    streams_.assign(static_cast<std::size_t>(ranks) * kLaneCount, nullptr);
    fork_.assign(streams_.size(), nullptr);
    join_.assign(streams_.size(), nullptr);
    emulation_stream_.assign(streams_.size(), nullptr);
    cublas_.assign(static_cast<std::size_t>(ranks), nullptr);
    for (int r = 0; r < ranks; ++r) {
      CUDA_CHECK(cudaSetDevice(GpuOf(r)), r);
      for (int l = 0; l < kLaneCount; ++l) {
        const std::size_t s = LaneIndex(r, static_cast<Lane>(l));
        CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[s], cudaStreamNonBlocking), r);
        CUDA_CHECK(cudaEventCreateWithFlags(&fork_[s], cudaEventDisableTiming), r);
        CUDA_CHECK(cudaEventCreateWithFlags(&join_[s], cudaEventDisableTiming), r);
      }
    }
    // Per op: start and end (timed; a send uses its recv's) and the
    // dependency event a graph orders streams by (untimed).
    const device::EventIds& ids = enqueuer_.events();
    events_.assign(static_cast<std::size_t>(ids.count()), nullptr);
    emulation_events_.assign(plan_->ops.size() * 2, nullptr);
    for (std::size_t id = 0; id < plan_->ops.size(); ++id) {
      const Op& op = plan_->ops[id];
      if (op.kind == OpKind::kSend) continue;
      const OpId o = static_cast<OpId>(id);
      CUDA_CHECK(cudaSetDevice(GpuOf(op.rank)), op.rank);
      CUDA_CHECK(cudaEventCreate(&events_[static_cast<std::size_t>(ids.Start(o))]), op.rank);
      CUDA_CHECK(cudaEventCreate(&events_[static_cast<std::size_t>(ids.End(o))]), op.rank);
      CUDA_CHECK(cudaEventCreateWithFlags(&events_[static_cast<std::size_t>(ids.Dependency(o))],
                                          cudaEventDisableTiming),
                 op.rank);
      if (op.kind == OpKind::kRecv && options_.emulate_links) {
        // The hold's fork and join beside the copy (TransferWork).
        const std::size_t s = LaneIndex(op.rank, op.lane);
        if (!emulation_stream_[s])
          CUDA_CHECK(cudaStreamCreateWithFlags(&emulation_stream_[s], cudaStreamNonBlocking),
                     op.rank);
        for (int k = 0; k < 2; ++k)
          CUDA_CHECK(cudaEventCreateWithFlags(&emulation_events_[id * 2 + k], cudaEventDisableTiming),
                     op.rank);
      }
    }
    // A graph's stamps: one slot per event and one for the origin, per GPU.
    // SHARDLAB_CUDA_STAMPS=0 times graphs with event records instead (to
    // compare the two).
    const char* stamps_env = std::getenv("SHARDLAB_CUDA_STAMPS");
    stamps_enabled_ = !(stamps_env && std::string(stamps_env) == "0");
    stamps_.assign(static_cast<std::size_t>(device_count_), nullptr);
    if (stamps_enabled_) {
      for (int g : used_gpus_) {
        CUDA_CHECK(cudaSetDevice(g), -1);
        CUDA_CHECK(cudaMalloc(&stamps_[static_cast<std::size_t>(g)],
                              (StampOriginSlot() + 1) * sizeof(unsigned long long)),
                   -1);
        CUDA_CHECK(cudaMemset(stamps_[static_cast<std::size_t>(g)], 0,
                              (StampOriginSlot() + 1) * sizeof(unsigned long long)),
                   -1);
      }
    }
    // cuBLAS handles now, not on the first product: creating one allocates,
    // which a graph capture does not allow. One per rank, since a handle's
    // workspace must not be shared by streams that run at the same time
    // (virtual devices on one GPU).
    for (const Op& op : plan_->ops) {
      if (op.kind != OpKind::kCompute || cublas_[static_cast<std::size_t>(op.rank)]) continue;
      for (std::int32_t k = 0; k < op.kernel_count; ++k) {
        if (plan_->kernels[static_cast<std::size_t>(op.kernel_begin + k)].kind != KernelKind::kMatMul)
          continue;
        CUDA_CHECK(cudaSetDevice(GpuOf(op.rank)), op.rank);
        CUBLAS_CHECK(cublasCreate(&cublas_[static_cast<std::size_t>(op.rank)]), op.rank);
        break;
      }
    }
    if (options_.emulate_links) emulated_ns_ = EmulatedWindows();
    // slow_rank: every op of a slow rank is followed, on its stream, by a
    // spin of FACTOR - 1 times its modelled (simulator) time.
    slow_ns_.clear();
    for (const SlowRank& slow : options_.faults.slow_ranks)
      if (slow.factor > 1 && slow_ns_.empty()) slow_ns_ = EmulatedWindows();
  }

  void AllocateBuffers() {
    const Plan& plan = *plan_;
    device_.assign(plan.buffers.size(), nullptr);
    for (std::size_t id = 0; id < plan.buffers.size(); ++id) {
      const int rank = plan.buffers[id].rank;
      CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
      CUDA_CHECK(cudaMalloc(&device_[id], std::max<std::size_t>(BufferBytes(id), sizeof(float))), rank);
    }
    // Staging per rank (bytes): reducing receives from a GPU without peer
    // access and casting receives (the sender's data, in its dtype), and
    // copies whose source and destination overlap.
    std::vector<std::size_t> need(static_cast<std::size_t>(plan.num_ranks), 0);
    for (const Op& op : plan.ops) {
      std::size_t& slot = need[static_cast<std::size_t>(op.rank)];
      if (op.kind == OpKind::kRecv && !DirectRead(op.peer, op.rank)) {
        const Op& send = plan.ops[static_cast<std::size_t>(op.match)];
        if (op.reduce != ReduceOp::kNone || DTypeOf(send.src) != DTypeOf(op.dst))
          slot = std::max(slot, cuda::TransferDeviceBytes(plan, send));
      }
      if (op.kind == OpKind::kCopy && op.src.buffer == op.dst.buffer)
        slot = std::max(slot, static_cast<std::size_t>(op.dst.count) *
                                  cuda::DeviceElementBytes(DTypeOf(op.dst)));
    }
    staging_.assign(static_cast<std::size_t>(plan.num_ranks), nullptr);
    for (int r = 0; r < plan.num_ranks; ++r) {
      if (need[static_cast<std::size_t>(r)] == 0) continue;
      CUDA_CHECK(cudaSetDevice(GpuOf(r)), r);
      CUDA_CHECK(cudaMalloc(&staging_[static_cast<std::size_t>(r)], need[static_cast<std::size_t>(r)]),
                 r);
    }
    // Per kernel: the 16-bit operands it stages in fp32; per stream (the
    // lanes of one rank may run at once): the fp32 scratch that holds them,
    // allocated now (a graph capture cannot).
    staged_.assign(plan.kernels.size(), {});
    for (std::size_t k = 0; k < plan.kernels.size(); ++k)
      staged_[k] = cuda::StagedRegions(plan, plan.kernels[k]);
    std::vector<std::int64_t> scratch(static_cast<std::size_t>(plan.num_ranks) * kLaneCount, 0);
    for (const Op& op : plan.ops) {
      if (op.kind != OpKind::kCompute) continue;
      std::int64_t& slot = scratch[LaneIndex(op.rank, op.lane)];
      for (std::int32_t k = 0; k < op.kernel_count; ++k)
        slot = std::max(slot, cuda::StagingFloats(staged_[static_cast<std::size_t>(op.kernel_begin + k)]));
    }
    scratch_.assign(scratch.size(), nullptr);
    for (int r = 0; r < plan.num_ranks; ++r) {
      for (int l = 0; l < kLaneCount; ++l) {
        const std::size_t s = LaneIndex(r, static_cast<Lane>(l));
        if (scratch[s] == 0) continue;
        CUDA_CHECK(cudaSetDevice(GpuOf(r)), r);
        CUDA_CHECK(cudaMalloc(&scratch_[s], static_cast<std::size_t>(scratch[s]) * sizeof(float)), r);
      }
    }
    mirror_fresh_.assign(plan.buffers.size(), 0);
  }

  // Whether `reader`'s GPU can load `owner`'s memory in a kernel.
  bool DirectRead(int owner, int reader) const {
    const int a = GpuOf(reader), b = GpuOf(owner);
    return a == b || peer_ok_[static_cast<std::size_t>(a * device_count_ + b)];
  }

  int FirstRankOn(int gpu) const {
    for (int r = 0; r < plan_->num_ranks; ++r)
      if (GpuOf(r) == gpu) return r;
    return 0;
  }

  void SetUpNccl() {
    nccl_.reset();
    bool any = false;
    for (const Op& op : plan_->ops) any = any || op.kind == OpKind::kCollective;
    if (!any) return;
    nccl_ = cuda::NcclCommunicators::Create(gpu_, device_count_);
  }

  void CopyLocal(const Op& op, cudaStream_t stream) {
    cuda::CopySliceOnDevice(op, [this](const BufferSlice& s) { return Slice(s); },
                            staging_[static_cast<std::size_t>(op.rank)], stream);
  }

  void RunKernel(std::size_t kernel, int rank, StreamId s, cudaStream_t stream) {
    cuda::RunKernelOnDevice(plan_->kernels[kernel], [this](const BufferSlice& b) { return Slice(b); },
                            cublas_[static_cast<std::size_t>(rank)], stream, rank, staged_[kernel],
                            scratch_[static_cast<std::size_t>(s)]);
  }

  // The modelled window of every transfer (link emulation): the simulator's
  // time for it on the same plan and topology, contention included
  // (emulated_windows.h).
  std::vector<TimeNs> EmulatedWindows() const {
    return device::EmulatedTransferWindows(*plan_, *topology_, options_.rank_to_gpu);
  }

  // A Send's transfer into its Recv, on the recv's stream. Under link
  // emulation the stream is held for the modelled window with the copy
  // inside it: a one-thread spin on a side stream forks from the stream and
  // joins back after the copy, so the transfer lasts max(window, copy).
  void TransferWork(OpId send_id, StreamId s) {
    const Op& send = plan_->ops[static_cast<std::size_t>(send_id)];
    const OpId recv_id = send.match;
    const Op& recv = plan_->ops[static_cast<std::size_t>(recv_id)];
    const int rank = recv.rank;
    cudaStream_t stream = Stream(s);
    const bool hold = options_.emulate_links && !emulated_ns_.empty();
    cudaEvent_t fork = nullptr, join = nullptr;
    if (hold) {
      fork = emulation_events_[static_cast<std::size_t>(recv_id) * 2];
      join = emulation_events_[static_cast<std::size_t>(recv_id) * 2 + 1];
      cudaStream_t side = emulation_stream_[static_cast<std::size_t>(s)];
      CUDA_CHECK(cudaEventRecord(fork, stream), rank);
      CUDA_CHECK(cudaStreamWaitEvent(side, fork, 0), rank);
      cuda::LaunchSpin(static_cast<std::uint64_t>(emulated_ns_[static_cast<std::size_t>(recv_id)]),
                       side);
      CUDA_CHECK(cudaGetLastError(), rank);
      CUDA_CHECK(cudaEventRecord(join, side), rank);
    }
    // The bytes the plan reports (Op::bytes): the source's dtype.
    const std::int64_t count = std::min(send.src.count, recv.dst.count);
    const std::size_t bytes = cuda::TransferDeviceBytes(*plan_, send);
    const int src_gpu = GpuOf(send.rank), dst_gpu = GpuOf(rank);
    const bool cast = DTypeOf(send.src) != DTypeOf(recv.dst);
    if (bytes > 0) {
      if (recv.reduce == ReduceOp::kNone && !cast) {
        if (src_gpu == dst_gpu) {
          CUDA_CHECK(cudaMemcpyAsync(Ptr(recv.dst), Ptr(send.src), bytes, cudaMemcpyDeviceToDevice,
                                     stream),
                     rank);
        } else {
          CUDA_CHECK(cudaMemcpyPeerAsync(Ptr(recv.dst), dst_gpu, Ptr(send.src), src_gpu, bytes,
                                         stream),
                     rank);
        }
      } else if (DirectRead(send.rank, rank)) {  // reduced (or cast) in fp32, stored in the dtype
        cuda::CombineOnDevice(recv.reduce, Slice(send.src), Slice(recv.dst), count, stream, rank);
      } else {  // no peer access: stage the peer's data locally, then reduce
        void* tmp = staging_[static_cast<std::size_t>(rank)];
        CUDA_CHECK(cudaMemcpyPeerAsync(tmp, dst_gpu, Ptr(send.src), src_gpu, bytes, stream), rank);
        cuda::CombineOnDevice(recv.reduce, cuda::DeviceSlice{tmp, DTypeOf(send.src)}, Slice(recv.dst),
                              count, stream, rank);
      }
    }
    if (hold) CUDA_CHECK(cudaStreamWaitEvent(stream, join, 0), rank);
  }

  void SyncAll() {
    for (int g : used_gpus_) {
      CUDA_CHECK(cudaSetDevice(g), -1);
      CUDA_CHECK(cudaDeviceSynchronize(), -1);
    }
    current_gpu_ = -1;
  }

  // Frees everything Load made; errors here are ignored (a sticky error
  // must not turn a destructor into a crash).
  void Release() {
    nccl_.reset();
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    graph_exec_ = nullptr;
    for (std::vector<cudaEvent_t>* list : {&events_, &emulation_events_, &fork_, &join_})
      for (cudaEvent_t e : *list)
        if (e) cudaEventDestroy(e);
    events_.clear();
    emulation_events_.clear();
    fork_.clear();
    join_.clear();
    for (std::vector<cudaStream_t>* list : {&streams_, &emulation_stream_})
      for (cudaStream_t s : *list)
        if (s) cudaStreamDestroy(s);
    streams_.clear();
    emulation_stream_.clear();
    for (void* p : device_)
      if (p) cudaFree(p);
    device_.clear();
    for (void* p : staging_)
      if (p) cudaFree(p);
    staging_.clear();
    for (float* p : scratch_)
      if (p) cudaFree(p);
    scratch_.clear();
    staged_.clear();
    for (cublasHandle_t h : cublas_)
      if (h) cublasDestroy(h);
    cublas_.clear();
    for (cudaEvent_t e : origin_)
      if (e) cudaEventDestroy(e);
    origin_.clear();
    for (unsigned long long* p : stamps_)
      if (p) cudaFree(p);
    stamps_.clear();
    stamps_host_.clear();
    current_gpu_ = -1;
  }

  const Plan* plan_ = nullptr;
  const Topology* topology_ = nullptr;
  RunOptions options_;
  int device_count_ = 0;
  device::PlanEnqueuer enqueuer_;
  std::vector<int> gpu_;        // physical GPU of each rank
  std::vector<int> used_gpus_;
  std::vector<char> peer_ok_;   // [a * devices + b]: a's kernels may read b's memory
  std::vector<cudaStream_t> streams_;       // [rank * lanes + lane]
  std::vector<cudaStream_t> emulation_stream_;  // per stream: link emulation's holds
  std::vector<cudaEvent_t> fork_, join_;    // per stream: a graph capture's fork and join
  std::vector<cublasHandle_t> cublas_;      // per rank
  std::vector<cudaEvent_t> origin_;         // per physical GPU
  std::vector<double> origin_offset_ns_;
  std::vector<unsigned long long*> stamps_;  // per physical GPU: a graph's %globaltimer stamps
  std::vector<std::vector<unsigned long long>> stamps_host_;
  bool stamps_enabled_ = false;
  bool graph_ran_ = false;    // this clock segment ran the graph (its times are stamps)
  bool stamps_read_ = false;
  std::vector<cudaEvent_t> events_;         // device::EventIds (a send's stay null)
  std::vector<cudaEvent_t> emulation_events_;  // per op: fork and join of a hold
  std::vector<TimeNs> emulated_ns_;         // per op: the modelled window of a recv
  std::vector<TimeNs> slow_ns_;             // per op: its modelled time (slow_rank's spin)
  std::vector<void*> device_;               // per buffer, in its dtype
  std::vector<void*> staging_;              // per rank (bytes)
  std::vector<float*> scratch_;             // per stream: 16-bit operands staged in fp32
  std::vector<std::vector<cuda::StagedRegion>> staged_;  // per kernel
  mutable HostBuffers mirror_;
  mutable std::vector<char> mirror_fresh_;

  Clock::time_point clock_t0_ = Clock::now();
  int current_gpu_ = -1;
  bool capturing_ = false;
  std::vector<StreamId> capture_streams_;
  cudaGraphExec_t graph_exec_ = nullptr;
  cudaStream_t graph_stream_ = nullptr;
  int graph_gpu_ = 0;
  std::unique_ptr<cuda::NcclCommunicators> nccl_;
};

}  // namespace

std::unique_ptr<Backend> CreateCudaBackend() { return std::make_unique<CudaBackend>(); }

namespace cuda {
void InstallCudaMachineProbe();  // device_query.cpp
void InstallCudaCalibrator();    // calibrate.cpp
}  // namespace cuda

void RegisterCudaBackend() {
  cuda::InstallCudaMachineProbe();
  cuda::InstallCudaCalibrator();
  RegisterBackend(CudaBackendDeclaration(), [] { return CreateCudaBackend(); });
}

}  // namespace shardlab
