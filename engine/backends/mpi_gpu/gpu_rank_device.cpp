#include "engine/backends/mpi_gpu/gpu_rank_device.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/device_ops.h"
#include "engine/backends/mpi_gpu/rank_nccl.h"
#include "engine/backends/mpi_gpu/staging_pool.h"
#include "engine/core/error.h"

namespace shardlab {
namespace {

using mpi_gpu::RankNccl;
using mpi_gpu::StagingMemory;
using mpi_gpu::StagingPool;

double HostNowNs() {  // the clock of mpi::NowNs
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class GpuRankDevice final : public RankDevice {
 public:
  ~GpuRankDevice() override { Release(); }

  void Load(const Plan& plan, int rank, int gpu, GpuTransferPath path, TimeNs timeout_ns) override {
    Release();
    plan_ = &plan;
    rank_ = rank;
    gpu_ = gpu;
    path_ = path;
    timeout_ns_ = timeout_ns;
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    cudaDeviceProp props{};
    CUDA_CHECK(cudaGetDeviceProperties(&props, gpu_), rank_);
    gpu_name_ = props.name;
    for (cudaStream_t& s : streams_)
      CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), rank_);
    CUDA_CHECK(cudaEventCreate(&reference_), rank_);
    CUDA_CHECK(cudaEventCreateWithFlags(&fence_, cudaEventDisableTiming), rank_);
    timing_.assign(plan.ops.size(), {});
    for (std::size_t id = 0; id < plan.ops.size(); ++id) {
      if (plan.ops[id].rank != rank_) continue;
      CUDA_CHECK(cudaEventCreate(&timing_[id].start), rank_);
      CUDA_CHECK(cudaEventCreate(&timing_[id].end), rank_);
    }
    device_.assign(plan.buffers.size(), nullptr);
    std::array<std::int64_t, kLaneCount> copy_staging{};
    for (std::size_t id = 0; id < plan.buffers.size(); ++id) {
      if (plan.buffers[id].rank != rank_) continue;
      CUDA_CHECK(cudaMalloc(&device_[id], std::max<std::size_t>(BufferBytes(id), sizeof(float))),
                 rank_);
    }
    // Per lane: copies on two streams may run at once.
    for (const Op& op : plan.ops)
      if (op.rank == rank_ && op.kind == OpKind::kCopy && op.src.buffer == op.dst.buffer) {
        std::int64_t& most = copy_staging[static_cast<std::size_t>(op.lane)];
        most = std::max(most, op.dst.count);
      }
    for (std::size_t lane = 0; lane < copy_staging.size(); ++lane)
      if (copy_staging[lane] > 0)
        CUDA_CHECK(cudaMalloc(&copy_staging_[lane],
                              static_cast<std::size_t>(copy_staging[lane]) * sizeof(float)),
                   rank_);
    pinned_ = std::make_unique<StagingPool>(StagingMemory::kPinnedHost, rank_);
    device_staging_ = std::make_unique<StagingPool>(StagingMemory::kDevice, rank_);
    held_.assign(plan.ops.size(), {});
    enqueued_.assign(plan.ops.size(), 0);
    received_count_.assign(plan.ops.size(), 0);
    in_place_.assign(plan.ops.size(), 0);
  }

  std::string GpuName() const override { return gpu_name_; }

  std::string GpuBusId(int gpu) override {
    char id[64] = {};
    if (cudaDeviceGetPCIBusId(id, static_cast<int>(sizeof(id)), gpu) != cudaSuccess) {
      cudaGetLastError();  // unknown: the caller does not compare it
      return "";
    }
    return id;
  }

  void Upload(const HostBuffers& host, bool timing_only) override {
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    WaitIdle("before the inputs are uploaded");
    for (std::size_t id = 0; id < device_.size(); ++id) {
      if (device_[id] == nullptr) continue;
      const bool have = !timing_only && id < host.data.size() &&
                        host.data[id].size() * sizeof(float) >= BufferBytes(id);
      if (have) {
        CUDA_CHECK(cudaMemcpyAsync(device_[id], host.data[id].data(), BufferBytes(id),
                                   cudaMemcpyHostToDevice, Stream(Lane::kCompute)),
                   rank_);
      } else {
        CUDA_CHECK(cudaMemsetAsync(device_[id], 0, BufferBytes(id), Stream(Lane::kCompute)), rank_);
      }
    }
    WaitIdle("uploading the inputs");
  }

  void Download(HostBuffers& host) override {
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    WaitIdle("before the buffers are read back");
    if (host.data.size() < device_.size()) host.data.resize(device_.size());
    for (std::size_t id = 0; id < device_.size(); ++id) {
      if (device_[id] == nullptr) continue;
      host.data[id].resize(static_cast<std::size_t>(plan_->buffers[id].count));
      if (BufferBytes(id) == 0) continue;
      CUDA_CHECK(cudaMemcpyAsync(host.data[id].data(), device_[id], BufferBytes(id),
                                 cudaMemcpyDeviceToHost, Stream(Lane::kCompute)),
                 rank_);
    }
    WaitIdle("reading the buffers back");
  }

  // The reference event is recorded on an idle device and polled without
  // yielding; its host time is the midpoint between the last poll that
  // found it pending and the one that found it done.
  void StartClock() override {
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    WaitIdle("before the run's clock starts");
    // The event cannot complete before it is recorded: that is the first
    // "not ready" time; each poll that finds it not ready moves it on.
    double not_ready = HostNowNs();
    CUDA_CHECK(cudaEventRecord(reference_, Stream(Lane::kCompute)), rank_);
    const double start = not_ready;
    while (true) {
      const double before = HostNowNs();
      if (Query(reference_)) break;
      not_ready = before;
      if (before - start > timeout_ns_) TimedOut("starting the run's clock");
    }
    reference_host_ns_ = ReferenceHostNs(not_ready, HostNowNs());
  }

  // Each start is enqueued at once unless the lane's stream (or, for a
  // collective, the communicator) waits for an NCCL call still being
  // issued: then it waits in deferred_ and Done() enqueues it later.
  void StartLocal(OpId id) override { StartOrDefer(id, Start::kLocal); }
  void StartSendStaging(OpId send) override { StartOrDefer(send, Start::kSendStaging); }
  bool FinishRecv(OpId recv) override {
    if (in_place_[static_cast<std::size_t>(recv)]) return false;
    StartOrDefer(recv, Start::kRecvFinishing);
    return true;
  }

  const void* SendBuffer(OpId send) override {
    const Op& op = plan_->ops[static_cast<std::size_t>(send)];
    if (path_ == GpuTransferPath::kDeviceDirect) return Ptr(op.src);
    const auto& held = held_[static_cast<std::size_t>(send)];
    if (held.empty())
      throw Error(DescribeOp(send) + ": sent before its data was staged", ErrorKind::kRuntime);
    return held.front().ptr;
  }

  void* RecvBuffer(OpId recv, std::int64_t count, bool into_place) override {
    const Op& op = plan_->ops[static_cast<std::size_t>(recv)];
    const std::size_t i = static_cast<std::size_t>(recv);
    received_count_[i] = count;
    in_place_[i] = path_ == GpuTransferPath::kDeviceDirect && into_place;
    if (in_place_[i]) return Ptr(op.dst);
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
    const StagingMemory memory = path_ == GpuTransferPath::kDeviceDirect
                                     ? StagingMemory::kDevice
                                     : StagingMemory::kPinnedHost;
    void* block = Pool(memory).Take(bytes);
    held_[i].push_back({block, memory});
    return block;
  }

  // Polled by the mpi backend's progress loop for every op it started here:
  // moves NCCL issuing and the deferred starts on, then asks the op's end
  // event (an op not enqueued yet is not done).
  bool Done(OpId id) override {
    Advance();
    const std::size_t i = static_cast<std::size_t>(id);
    return enqueued_[i] && Query(timing_[i].end);
  }

  DeviceTimes Times(OpId id) override {
    const Timing& t = timing_[static_cast<std::size_t>(id)];
    float start_ms = 0, end_ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&start_ms, reference_, t.start), rank_);
    CUDA_CHECK(cudaEventElapsedTime(&end_ms, reference_, t.end), rank_);
    DeviceTimes times;
    times.start_ns = DeviceEventHostNs(reference_host_ns_, start_ms);
    times.end_ns = std::max(times.start_ns, DeviceEventHostNs(reference_host_ns_, end_ms));
    return times;
  }

  void Release(OpId id) override {
    auto& held = held_[static_cast<std::size_t>(id)];
    for (const Held& h : held) Pool(h.memory).Give(h.ptr);
    held.clear();
  }

  bool HasNccl() const override { return RankNccl::Available(); }

  std::vector<char> NcclUniqueId() override {
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    return RankNccl::UniqueId(rank_);
  }

  void InitNccl(const std::vector<char>& unique_id, int rank, int size) override {
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    nccl_ = RankNccl::Start(unique_id, rank, size);
  }

  bool NcclReady() override { return nccl_ != nullptr && nccl_->Ready(); }

  void Close() override {
    if (nccl_ == nullptr) return;
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    nccl_->Close(timeout_ns_);
    nccl_.reset();
  }

  void Abort() override {
    if (nccl_) nccl_->Abort();
  }

 private:
  struct Timing {
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
  };
  struct Held {
    void* ptr = nullptr;
    StagingMemory memory = StagingMemory::kPinnedHost;
  };

  cudaStream_t Stream(Lane lane) const { return streams_[static_cast<std::size_t>(lane)]; }
  std::size_t BufferBytes(std::size_t id) const {
    return static_cast<std::size_t>(plan_->buffers[id].count) * sizeof(float);
  }
  StagingPool& Pool(StagingMemory memory) {
    return memory == StagingMemory::kPinnedHost ? *pinned_ : *device_staging_;
  }

  float* Ptr(const BufferSlice& s) const {
    float* base = device_[static_cast<std::size_t>(s.buffer)];
    if (base == nullptr)
      throw Error("rank " + std::to_string(rank_) + ": buffer " + std::to_string(s.buffer) +
                      " belongs to rank " + std::to_string(plan_->buffers[s.buffer].rank) +
                      ", not to this process",
                  ErrorKind::kRuntime);
    return base + s.offset;
  }

  std::string DescribeOp(OpId id) const {
    return "rank " + std::to_string(rank_) + ": op " + std::to_string(id);
  }

  // One NCCL call; false while NCCL is still issuing it (issuing_ = id:
  // Advance() records its end event once it is issued). StartOrDefer never
  // calls it while another call is being issued: a non-blocking
  // communicator takes its next call only after that.
  bool LaunchCollective(OpId id, cudaStream_t stream) {
    const Op& op = plan_->ops[static_cast<std::size_t>(id)];
    if (nccl_ == nullptr)
      throw Error("rank " + std::to_string(rank_) + ": collective #" +
                      std::to_string(op.collective_seq) + " before NCCL was set up",
                  ErrorKind::kRuntime);
    cuda::NcclRankCall call;
    call.rank = rank_;
    call.call = op.library;
    call.reduce = op.reduce;
    call.root = op.peer;
    call.src = Ptr(op.src);
    call.dst = Ptr(op.dst);
    call.count = op.src.count;
    call.stream = stream;
    if (nccl_->Launch(call)) return true;
    issuing_ = id;
    return false;
  }

  // The enqueueing itself: events and work on the op's lane stream.
  void EnqueueLocal(OpId id) {
    const Op& op = plan_->ops[static_cast<std::size_t>(id)];
    cudaStream_t stream = Stream(op.lane);
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    const Timing& t = timing_[static_cast<std::size_t>(id)];
    CUDA_CHECK(cudaEventRecord(t.start, stream), rank_);
    // Buffers are fp32 here (verify/bounds.h's ComputeDType("mpi")).
    const cuda::SlicePointer ptr = [this](const BufferSlice& s) {
      return cuda::DeviceSlice{Ptr(s), DType::kF32};
    };
    switch (op.kind) {
      case OpKind::kCompute:
        for (std::int32_t k = 0; k < op.kernel_count; ++k)
          cuda::RunKernelOnDevice(plan_->kernels[static_cast<std::size_t>(op.kernel_begin + k)], ptr,
                                  cublas_[static_cast<std::size_t>(op.lane)], stream, rank_);
        break;
      case OpKind::kReduce:
        cuda::CombineOnDevice(op.reduce, Ptr(op.src), Ptr(op.dst),
                              std::min(op.src.count, op.dst.count), stream, rank_);
        break;
      case OpKind::kCopy:
        cuda::CopySliceOnDevice(op, ptr, copy_staging_[static_cast<std::size_t>(op.lane)], stream);
        break;
      case OpKind::kCollective:
        if (!LaunchCollective(id, stream)) return;  // Advance() records the end once issued
        break;
      case OpKind::kSend:
      case OpKind::kRecv:
        throw Error(DescribeOp(id) + ": a transfer is not a local op", ErrorKind::kRuntime);
    }
    CUDA_CHECK(cudaEventRecord(t.end, stream), rank_);
    enqueued_[static_cast<std::size_t>(id)] = 1;
  }

  void EnqueueSendStaging(OpId send) {
    const Op& op = plan_->ops[static_cast<std::size_t>(send)];
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    const std::size_t bytes = static_cast<std::size_t>(op.src.count) * sizeof(float);
    void* block = pinned_->Take(bytes);
    held_[static_cast<std::size_t>(send)].push_back({block, StagingMemory::kPinnedHost});
    cudaStream_t stream = Stream(op.lane);
    const Timing& t = timing_[static_cast<std::size_t>(send)];
    CUDA_CHECK(cudaEventRecord(t.start, stream), rank_);
    if (bytes > 0)
      CUDA_CHECK(cudaMemcpyAsync(block, Ptr(op.src), bytes, cudaMemcpyDeviceToHost, stream), rank_);
    CUDA_CHECK(cudaEventRecord(t.end, stream), rank_);
    enqueued_[static_cast<std::size_t>(send)] = 1;
  }

  void EnqueueRecvFinishing(OpId recv) {
    const Op& op = plan_->ops[static_cast<std::size_t>(recv)];
    const std::size_t i = static_cast<std::size_t>(recv);
    CUDA_CHECK(cudaSetDevice(gpu_), rank_);
    cudaStream_t stream = Stream(op.lane);
    const Timing& t = timing_[i];
    CUDA_CHECK(cudaEventRecord(t.start, stream), rank_);
    const std::int64_t count = std::min(op.dst.count, received_count_[i]);
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
    const float* from = static_cast<const float*>(held_[i].front().ptr);
    if (bytes > 0 && path_ == GpuTransferPath::kStagedPinned) {
      if (op.reduce == ReduceOp::kNone) {
        CUDA_CHECK(cudaMemcpyAsync(Ptr(op.dst), from, bytes, cudaMemcpyHostToDevice, stream), rank_);
      } else {  // to the device first: the combine kernel reads device memory
        void* block = device_staging_->Take(bytes);
        held_[i].push_back({block, StagingMemory::kDevice});
        CUDA_CHECK(cudaMemcpyAsync(block, from, bytes, cudaMemcpyHostToDevice, stream), rank_);
        cuda::CombineOnDevice(op.reduce, static_cast<const float*>(block), Ptr(op.dst), count,
                              stream, rank_);
      }
    } else if (bytes > 0) {  // direct: received into device staging
      cuda::CombineOnDevice(op.reduce, from, Ptr(op.dst), count, stream, rank_);
    }
    CUDA_CHECK(cudaEventRecord(t.end, stream), rank_);
    enqueued_[i] = 1;
  }

  enum class Start : std::uint8_t { kLocal, kSendStaging, kRecvFinishing };
  struct Deferred {
    OpId op = kNoOp;
    Start start = Start::kLocal;
  };

  // Whether `id` must wait: its lane's stream has an NCCL call still being
  // issued (nothing may go on that stream after it before it is), or a
  // deferred op of `ahead` shares its lane (streams keep issue order), or
  // it is a collective and another NCCL call is being issued or waits
  // ahead of it (one call at a time, in order).
  bool MustWait(OpId id, std::size_t ahead) const {
    const Op& op = plan_->ops[static_cast<std::size_t>(id)];
    const bool collective = op.kind == OpKind::kCollective;
    if (issuing_ != kNoOp &&
        (collective || plan_->ops[static_cast<std::size_t>(issuing_)].lane == op.lane))
      return true;
    for (std::size_t k = 0; k < ahead; ++k) {
      const Op& other = plan_->ops[static_cast<std::size_t>(deferred_[k].op)];
      if (other.lane == op.lane || (collective && other.kind == OpKind::kCollective)) return true;
    }
    return false;
  }

  void StartOrDefer(OpId id, Start start) {
    enqueued_[static_cast<std::size_t>(id)] = 0;
    if (MustWait(id, deferred_.size())) {
      deferred_.push_back({id, start});
      return;
    }
    Enqueue(id, start);
  }

  void Enqueue(OpId id, Start start) {
    switch (start) {
      case Start::kLocal: EnqueueLocal(id); break;
      case Start::kSendStaging: EnqueueSendStaging(id); break;
      case Start::kRecvFinishing: EnqueueRecvFinishing(id); break;
    }
  }

  // An NCCL call that is now issued gets its end event; deferred starts
  // that no longer wait are enqueued, in order. Non-blocking: an NCCL call
  // that never gets issued is caught by the progress loop's timeout, which
  // names it and aborts the communicator.
  void Advance() {
    if (issuing_ != kNoOp) {
      if (!nccl_->Issued()) return;
      const std::size_t i = static_cast<std::size_t>(issuing_);
      issuing_ = kNoOp;
      CUDA_CHECK(cudaSetDevice(gpu_), rank_);
      CUDA_CHECK(cudaEventRecord(timing_[i].end, Stream(plan_->ops[i].lane)), rank_);
      enqueued_[i] = 1;
    }
    for (std::size_t k = 0; k < deferred_.size();) {
      if (MustWait(deferred_[k].op, k)) {
        ++k;
        continue;
      }
      const Deferred next = deferred_[k];
      deferred_.erase(deferred_.begin() + static_cast<std::ptrdiff_t>(k));
      Enqueue(next.op, next.start);
    }
  }

  // Whether `event` completed; false while it has not (errors throw).
  bool Query(cudaEvent_t event) const {
    const cudaError_t status = cudaEventQuery(event);
    if (status == cudaSuccess) return true;
    if (status == cudaErrorNotReady) {
      cudaGetLastError();  // not an error: clear it so later checks do not see it
      return false;
    }
    CUDA_CHECK(status, rank_);
    return false;
  }

  // Every lane's stream drained, polled against the timeout: a fence event
  // per stream, in turn.
  void WaitIdle(const char* what) {
    const double start = HostNowNs();
    for (cudaStream_t s : streams_) {
      CUDA_CHECK(cudaEventRecord(fence_, s), rank_);
      std::uint32_t polls = 0;
      while (!Query(fence_)) {
        if (HostNowNs() - start > timeout_ns_) TimedOut(what);
        if (++polls % 64 == 0) std::this_thread::yield();
      }
    }
  }

  [[noreturn]] void TimedOut(const char* what) const {
    throw Error("rank " + std::to_string(rank_) + ": GPU " + std::to_string(gpu_) +
                    " did not finish " + what + " within --mpi-timeout (" +
                    std::to_string(timeout_ns_ / 1e9) + " s)",
                ErrorKind::kRuntime);
  }

  // Frees everything Load made; errors ignored (a sticky error must not
  // turn a destructor into a crash). NCCL first: its kernels use the streams.
  void Release() {
    if (plan_ != nullptr) cudaSetDevice(gpu_);  // the caller's thread may have another current
    nccl_.reset();
    issuing_ = kNoOp;
    deferred_.clear();
    pinned_.reset();
    device_staging_.reset();
    for (Timing& t : timing_) {
      if (t.start) cudaEventDestroy(t.start);
      if (t.end) cudaEventDestroy(t.end);
    }
    timing_.clear();
    for (float* p : device_)
      if (p) cudaFree(p);
    device_.clear();
    for (float*& p : copy_staging_) {
      if (p) cudaFree(p);
      p = nullptr;
    }
    for (cublasHandle_t& h : cublas_) {
      if (h) cublasDestroy(h);
      h = nullptr;
    }
    if (reference_) cudaEventDestroy(reference_);
    reference_ = nullptr;
    if (fence_) cudaEventDestroy(fence_);
    fence_ = nullptr;
    for (cudaStream_t& s : streams_) {
      if (s) cudaStreamDestroy(s);
      s = nullptr;
    }
  }

  const Plan* plan_ = nullptr;
  int rank_ = 0;
  int gpu_ = 0;
  GpuTransferPath path_ = GpuTransferPath::kStagedPinned;
  TimeNs timeout_ns_ = 30e9;
  std::string gpu_name_;
  std::array<cudaStream_t, kLaneCount> streams_{};
  // Per lane: a cuBLAS handle's workspace serves one stream at a time.
  std::array<cublasHandle_t, kLaneCount> cublas_{};
  cudaEvent_t reference_ = nullptr;  // the run's time origin on the GPU
  cudaEvent_t fence_ = nullptr;      // WaitIdle's marker
  double reference_host_ns_ = 0;     // host time when reference_ completed
  std::vector<Timing> timing_;       // per op of this rank
  std::vector<float*> device_;       // per buffer of this rank (null: another rank's)
  std::array<float*, kLaneCount> copy_staging_{};  // per lane: overlapping local copies
  std::unique_ptr<StagingPool> pinned_;
  std::unique_ptr<StagingPool> device_staging_;
  std::vector<std::vector<Held>> held_;      // per op: staging blocks it holds
  std::vector<std::int64_t> received_count_; // per recv: floats MPI delivered
  std::vector<char> in_place_;               // per recv: MPI wrote the destination itself
  std::unique_ptr<RankNccl> nccl_;
  OpId issuing_ = kNoOp;                     // the collective NCCL is still issuing
  std::vector<Deferred> deferred_;           // started, waiting for issuing_ (in start order)
  std::vector<char> enqueued_;               // per op: its end event is on its stream
};

}  // namespace

std::unique_ptr<RankDevice> CreateGpuRankDevice() { return std::make_unique<GpuRankDevice>(); }

void RegisterMpiGpuDevice() { SetRankDeviceFactory([] { return CreateGpuRankDevice(); }); }

}  // namespace shardlab
