// The CUDA backend; the design is described in cuda_backend.h.
#include "engine/backends/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <cstring>
#include <queue>
#include <tuple>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/device_ops.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/backends/cuda/nccl_collective.h"
#include "engine/core/error.h"
#include "engine/plan/host_data.h"
#include "engine/plan/op_graph.h"
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

class CudaBackend final : public Backend {
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
    BuildOrder();
    SetUpDevices();
    SetUpStreams();
    AllocateBuffers();
    SetUpNccl();
    Reset();
  }

  void Reset() override {
    SyncAll();
    cursor_ = 0;
    completed_ = 0;
    started_ = false;
    std::fill(enqueued_.begin(), enqueued_.end(), 0);
    waiting_collective_.clear();
    std::fill(last_on_lane_.begin(), last_on_lane_.end(), kNoOp);
    remaining_per_step_.assign(static_cast<std::size_t>(std::max(plan_->num_steps, 0)), 0);
    for (const Op& op : plan_->ops) ++remaining_per_step_[static_cast<std::size_t>(op.step)];
    lowest_open_step_ = 0;
    AdvanceOpenStep();
    // Inputs as the simulator makes them, uploaded.
    if (!options_.timing_only) {
      AllocateHostBuffers(*plan_, options_.seed, mirror_);
      for (std::size_t id = 0; id < plan_->buffers.size(); ++id) {
        const int rank = plan_->buffers[id].rank;
        CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
        CUDA_CHECK(cudaMemcpy(device_[id], mirror_.data[id].data(),
                              mirror_.data[id].size() * sizeof(float), cudaMemcpyHostToDevice),
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
    if (!started_) StartClock();
    const std::size_t first = cursor_;
    // Enqueue in topological order while an op of a step <= last_step is
    // left; ops of later steps that come earlier in the order go too.
    while (cursor_ < order_.size() && OpenStepAtMost(last_step)) {
      EnqueueUnit(order_[cursor_]);
      ++cursor_;
      if ((cursor_ & 255) == 0 && cancel.load(std::memory_order_relaxed)) break;
    }
    // Report in enqueue order as each op's end event completes.
    for (std::size_t i = first; i < cursor_; ++i) {
      if (cancel.load(std::memory_order_relaxed)) {
        SyncAll();
        throw Error("run cancelled", ErrorKind::kCancelled);
      }
      Report(order_[i], sink);
    }
    if (cancel.load(std::memory_order_relaxed)) {
      SyncAll();
      throw Error("run cancelled", ErrorKind::kCancelled);
    }
    std::fill(mirror_fresh_.begin(), mirror_fresh_.end(), 0);
  }

  std::span<const float> BufferData(BufferId id) const override {
    if (options_.timing_only || id < 0 || id >= static_cast<BufferId>(mirror_.data.size()))
      return {};
    if (!mirror_fresh_[id]) {  // read back on first look after a step
      const int rank = plan_->buffers[id].rank;
      CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
      CUDA_CHECK(cudaMemcpy(mirror_.data[id].data(), device_[id],
                            mirror_.data[id].size() * sizeof(float), cudaMemcpyDeviceToHost),
                 rank);
      mirror_fresh_[id] = 1;
    }
    return mirror_.data[id];
  }

  std::size_t completed_ops() const override { return completed_; }

  std::string placement() const override { return DescribePlacement(gpu_, device_count_); }

 private:
  // A unit of work: one op, or a Send with its Recv (named by the send).
  struct Timing {
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
  };

  int GpuOf(int rank) const { return gpu_[static_cast<std::size_t>(rank)]; }
  std::size_t LaneIndex(int rank, Lane lane) const {
    return static_cast<std::size_t>(rank) * kLaneCount + static_cast<std::size_t>(lane);
  }
  cudaStream_t StreamOf(int rank, Lane lane) const { return streams_[LaneIndex(rank, lane)]; }
  std::size_t BufferBytes(std::size_t id) const {
    return static_cast<std::size_t>(plan_->buffers[id].count) * sizeof(float);
  }
  float* Ptr(const BufferSlice& s) const { return device_[s.buffer] + s.offset; }

  // Whether an op of a step <= last_step is still to be enqueued.
  bool OpenStepAtMost(int last_step) const {
    return lowest_open_step_ <= std::min(last_step, plan_->num_steps - 1);
  }

  void AdvanceOpenStep() {
    while (lowest_open_step_ < static_cast<int>(remaining_per_step_.size()) &&
           remaining_per_step_[static_cast<std::size_t>(lowest_open_step_)] == 0)
      ++lowest_open_step_;
  }

  // Topological order over the op graph (explicit deps + lane order), a
  // Send and its Recv as one unit once both are ready, lowest step first.
  void BuildOrder() {
    const Plan& plan = *plan_;
    const OpGraph graph = BuildOpGraph(plan);
    std::vector<std::int32_t> pending = graph.pred_count;
    const std::size_t n = plan.ops.size();
    std::vector<char> ready(n, 0);
    using Key = std::tuple<int, OpId>;
    std::priority_queue<Key, std::vector<Key>, std::greater<Key>> queue;
    auto mark_ready = [&](OpId id) {
      ready[static_cast<std::size_t>(id)] = 1;
      const Op& op = plan.ops[static_cast<std::size_t>(id)];
      if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) {
        queue.emplace(op.step, id);
      } else if (ready[static_cast<std::size_t>(op.match)]) {
        const OpId send = op.kind == OpKind::kSend ? id : op.match;
        queue.emplace(op.step, send);
      }
    };
    for (OpId id = 0; id < static_cast<OpId>(n); ++id)
      if (pending[static_cast<std::size_t>(id)] == 0) mark_ready(id);
    order_.clear();
    std::size_t finished = 0;
    auto finish = [&](OpId id) {
      ++finished;
      for (const OpId* w = graph.successors_begin(id); w != graph.successors_end(id); ++w)
        if (--pending[static_cast<std::size_t>(*w)] == 0) mark_ready(*w);
    };
    while (!queue.empty()) {
      const OpId id = std::get<1>(queue.top());
      queue.pop();
      order_.push_back(id);
      const Op& op = plan.ops[static_cast<std::size_t>(id)];
      finish(id);
      if (op.kind == OpKind::kSend) finish(op.match);
    }
    if (finished != n) throw Error("plan deadlocks (cuda backend could not order its ops)");
    enqueued_.assign(n, 0);
    timing_.resize(n);
  }

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
    last_on_lane_.assign(streams_.size(), kNoOp);
    // One cuBLAS handle per rank, made on its first product: a handle's
    // workspace must not be shared by streams that run at the same time
    // (virtual devices on one GPU).
    cublas_.assign(static_cast<std::size_t>(ranks), nullptr);
    for (int r = 0; r < ranks; ++r) {
      CUDA_CHECK(cudaSetDevice(GpuOf(r)), r);
      for (int l = 0; l < kLaneCount; ++l)
        CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[LaneIndex(r, static_cast<Lane>(l))],
                                             cudaStreamNonBlocking),
                   r);
    }
    for (std::size_t id = 0; id < plan_->ops.size(); ++id) {
      const Op& op = plan_->ops[id];
      if (op.kind == OpKind::kSend) continue;  // shares its recv's events
      CUDA_CHECK(cudaSetDevice(GpuOf(op.rank)), op.rank);
      CUDA_CHECK(cudaEventCreate(&timing_[id].start), op.rank);
      CUDA_CHECK(cudaEventCreate(&timing_[id].end), op.rank);
    }
  }

  void AllocateBuffers() {
    const Plan& plan = *plan_;
    device_.assign(plan.buffers.size(), nullptr);
    for (std::size_t id = 0; id < plan.buffers.size(); ++id) {
      const int rank = plan.buffers[id].rank;
      CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
      CUDA_CHECK(cudaMalloc(&device_[id], std::max<std::size_t>(BufferBytes(id), sizeof(float))), rank);
    }
    // Staging per rank: reducing receives from a GPU without peer access,
    // and copies whose source and destination overlap.
    std::vector<std::int64_t> need(static_cast<std::size_t>(plan.num_ranks), 0);
    for (const Op& op : plan.ops) {
      if (op.kind == OpKind::kRecv && op.reduce != ReduceOp::kNone && !DirectRead(op.peer, op.rank))
        need[static_cast<std::size_t>(op.rank)] =
            std::max(need[static_cast<std::size_t>(op.rank)], op.dst.count);
      if (op.kind == OpKind::kCopy && op.src.buffer == op.dst.buffer)
        need[static_cast<std::size_t>(op.rank)] =
            std::max(need[static_cast<std::size_t>(op.rank)], op.dst.count);
    }
    staging_.assign(static_cast<std::size_t>(plan.num_ranks), nullptr);
    for (int r = 0; r < plan.num_ranks; ++r) {
      if (need[static_cast<std::size_t>(r)] == 0) continue;
      CUDA_CHECK(cudaSetDevice(GpuOf(r)), r);
      CUDA_CHECK(cudaMalloc(&staging_[static_cast<std::size_t>(r)],
                            static_cast<std::size_t>(need[static_cast<std::size_t>(r)]) *
                                sizeof(float)),
                 r);
    }
    mirror_fresh_.assign(plan.buffers.size(), 0);
  }

  // Whether `reader`'s GPU can load `owner`'s memory in a kernel.
  bool DirectRead(int owner, int reader) const {
    const int a = GpuOf(reader), b = GpuOf(owner);
    return a == b || peer_ok_[static_cast<std::size_t>(a * device_count_ + b)];
  }

  // One origin event per GPU, recorded back to back while the GPUs are idle;
  // the host clock between the records aligns the GPUs' time bases (to the
  // microseconds a record takes).
  void StartClock() {
    SyncAll();
    const Clock::time_point t0 = Clock::now();
    for (int g : used_gpus_) {
      CUDA_CHECK(cudaSetDevice(g), -1);
      const double offset =
          std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
      CUDA_CHECK(cudaEventRecord(origin_[static_cast<std::size_t>(g)], StreamOf(FirstRankOn(g), Lane::kCompute)), -1);
      origin_offset_ns_[static_cast<std::size_t>(g)] = offset;
    }
    started_ = true;
  }

  int FirstRankOn(int gpu) const {
    for (int r = 0; r < plan_->num_ranks; ++r)
      if (GpuOf(r) == gpu) return r;
    return 0;
  }

  void WaitFor(cudaStream_t stream, OpId dep, int rank) {
    if (dep == kNoOp) return;
    const Op& d = plan_->ops[static_cast<std::size_t>(dep)];
    if (!enqueued_[static_cast<std::size_t>(dep)])
      throw Error(DescribeOp(*plan_, dep) + ": needed before every rank joined collective #" +
                  std::to_string(d.collective_seq) + " (NCCL launches all ranks' parts together)");
    const OpId timed = d.kind == OpKind::kSend ? d.match : dep;
    CUDA_CHECK(cudaStreamWaitEvent(stream, timing_[static_cast<std::size_t>(timed)].end, 0), rank);
  }

  void EnqueueUnit(OpId id) {
    const Op& op = plan_->ops[static_cast<std::size_t>(id)];
    if (op.kind == OpKind::kSend) {
      EnqueueTransfer(id);
    } else {
      EnqueueLocal(id);
    }
  }

  void EnqueueLocal(OpId id) {
    const Op& op = plan_->ops[static_cast<std::size_t>(id)];
    const int rank = op.rank;
    cudaStream_t stream = StreamOf(rank, op.lane);
    CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
    for (const OpId* d = plan_->deps_begin(op); d != plan_->deps_end(op); ++d)
      WaitFor(stream, *d, rank);
    Timing& t = timing_[static_cast<std::size_t>(id)];
    CUDA_CHECK(cudaEventRecord(t.start, stream), rank);
    switch (op.kind) {
      case OpKind::kCompute:
        for (std::int32_t k = 0; k < op.kernel_count; ++k)
          RunKernel(plan_->kernels[static_cast<std::size_t>(op.kernel_begin + k)], rank, stream);
        break;
      case OpKind::kReduce:
        LaunchCombineChecked(op.reduce, Ptr(op.src), Ptr(op.dst),
                             std::min(op.src.count, op.dst.count), stream, rank);
        break;
      case OpKind::kCopy: CopyLocal(op, stream); break;
      case OpKind::kCollective:
        // Enqueued with the other ranks' parts once they have all arrived.
        DeferCollective(id);
        return;
      case OpKind::kSend:
      case OpKind::kRecv: break;  // transfers are enqueued from their send
    }
    CUDA_CHECK(cudaEventRecord(t.end, stream), rank);
    Mark(id);
  }

  void SetUpNccl() {
    nccl_.reset();
    collective_size_.clear();
    for (const Op& op : plan_->ops)
      if (op.kind == OpKind::kCollective) ++collective_size_[op.collective_seq];
    if (collective_size_.empty()) return;
    nccl_ = cuda::NcclCommunicators::Create(gpu_, device_count_);
  }

  // A collective op's start is recorded; the NCCL call waits until every
  // rank's op of the same collective_seq has arrived, then all go in one group.
  void DeferCollective(OpId id) {
    const Op& op = plan_->ops[static_cast<std::size_t>(id)];
    std::vector<OpId>& parts = waiting_collective_[op.collective_seq];
    parts.push_back(id);
    if (static_cast<int>(parts.size()) < collective_size_[op.collective_seq]) return;
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
      c.count = o.src.count;
      c.stream = StreamOf(o.rank, o.lane);
      calls.push_back(c);
    }
    nccl_->Launch(calls);
    for (OpId part : parts) {
      const Op& o = plan_->ops[static_cast<std::size_t>(part)];
      CUDA_CHECK(cudaSetDevice(GpuOf(o.rank)), o.rank);
      CUDA_CHECK(cudaEventRecord(timing_[static_cast<std::size_t>(part)].end,
                                 StreamOf(o.rank, o.lane)),
                 o.rank);
      Mark(part);
    }
    waiting_collective_.erase(op.collective_seq);
  }

  void LaunchCombineChecked(ReduceOp reduce, const float* src, float* dst, std::int64_t count,
                            cudaStream_t stream, int rank) {
    cuda::CombineOnDevice(reduce, src, dst, count, stream, rank);
  }

  cuda::SlicePointer SlicePtr() const {
    return [this](const BufferSlice& s) { return Ptr(s); };
  }

  void CopyLocal(const Op& op, cudaStream_t stream) {
    cuda::CopySliceOnDevice(op, SlicePtr(), staging_[static_cast<std::size_t>(op.rank)], stream);
  }

  void RunKernel(const KernelCall& call, int rank, cudaStream_t stream) {
    cuda::RunKernelOnDevice(call, SlicePtr(), cublas_[static_cast<std::size_t>(rank)], stream, rank);
  }

  // The modelled time of a transfer on the topology's route (link
  // emulation): latency plus bytes over the route's slowest hop. Two ranks
  // on one model GPU take a device copy's time, as in the simulator.
  TimeNs EmulatedNs(const Op& send) const {
    const int gpus = topology_->num_gpus();
    auto model = [&](int rank) {
      return options_.rank_to_gpu.empty() ? rank : options_.rank_to_gpu[static_cast<std::size_t>(rank)];
    };
    const int a = model(send.rank), b = model(send.peer);
    if (a < 0 || b < 0 || a >= gpus || b >= gpus) return 0;
    const std::int32_t na = topology_->gpus[static_cast<std::size_t>(a)];
    const std::int32_t nb = topology_->gpus[static_cast<std::size_t>(b)];
    if (na == nb) {
      const Gbps mem = topology_->nodes[static_cast<std::size_t>(na)].device.memory_gbps;
      return mem > 0 ? 2.0 * static_cast<double>(send.bytes) / mem : 0;
    }
    const Route route = FindRoute(*topology_, na, nb);
    return route.latency_ns + TransferNs(send.bytes, route.bottleneck_gbps);
  }

  void EnqueueTransfer(OpId send_id) {
    const Op& send = plan_->ops[static_cast<std::size_t>(send_id)];
    const OpId recv_id = send.match;
    const Op& recv = plan_->ops[static_cast<std::size_t>(recv_id)];
    const int rank = recv.rank;
    cudaStream_t stream = StreamOf(rank, recv.lane);
    CUDA_CHECK(cudaSetDevice(GpuOf(rank)), rank);
    for (const OpId* d = plan_->deps_begin(recv); d != plan_->deps_end(recv); ++d)
      WaitFor(stream, *d, rank);
    for (const OpId* d = plan_->deps_begin(send); d != plan_->deps_end(send); ++d)
      WaitFor(stream, *d, rank);
    // The send lane is an in-order queue too: after whatever it ran last.
    WaitFor(stream, last_on_lane_[LaneIndex(send.rank, send.lane)], rank);
    Timing& t = timing_[static_cast<std::size_t>(recv_id)];
    CUDA_CHECK(cudaEventRecord(t.start, stream), rank);
    if (options_.emulate_links) {
      const TimeNs ns = EmulatedNs(send);
      cuda::LaunchSpin(static_cast<std::uint64_t>(ns), stream);
      CUDA_CHECK(cudaGetLastError(), rank);
    }
    const std::int64_t count = std::min(send.src.count, recv.dst.count);
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
    const int src_gpu = GpuOf(send.rank), dst_gpu = GpuOf(rank);
    if (bytes > 0) {
      if (recv.reduce == ReduceOp::kNone) {
        if (src_gpu == dst_gpu) {
          CUDA_CHECK(cudaMemcpyAsync(Ptr(recv.dst), Ptr(send.src), bytes, cudaMemcpyDeviceToDevice,
                                     stream),
                     rank);
        } else {
          CUDA_CHECK(cudaMemcpyPeerAsync(Ptr(recv.dst), dst_gpu, Ptr(send.src), src_gpu, bytes,
                                         stream),
                     rank);
        }
      } else if (DirectRead(send.rank, rank)) {
        LaunchCombineChecked(recv.reduce, Ptr(send.src), Ptr(recv.dst), count, stream, rank);
      } else {  // no peer access: stage the peer's data locally, then reduce
        float* tmp = staging_[static_cast<std::size_t>(rank)];
        CUDA_CHECK(cudaMemcpyPeerAsync(tmp, dst_gpu, Ptr(send.src), src_gpu, bytes, stream), rank);
        LaunchCombineChecked(recv.reduce, tmp, Ptr(recv.dst), count, stream, rank);
      }
    }
    CUDA_CHECK(cudaEventRecord(t.end, stream), rank);
    // Later ops on the sender's send lane wait for this transfer.
    if (StreamOf(send.rank, send.lane) != stream) {
      CUDA_CHECK(cudaSetDevice(src_gpu), send.rank);
      CUDA_CHECK(cudaStreamWaitEvent(StreamOf(send.rank, send.lane), t.end, 0), send.rank);
    }
    Mark(send_id);
    Mark(recv_id);
  }

  void Mark(OpId id) {
    const Op& op = plan_->ops[static_cast<std::size_t>(id)];
    enqueued_[static_cast<std::size_t>(id)] = 1;
    last_on_lane_[LaneIndex(op.rank, op.lane)] = id;
    if (--remaining_per_step_[static_cast<std::size_t>(op.step)] == 0) AdvanceOpenStep();
  }

  TimeNs SinceOrigin(int gpu, cudaEvent_t event, int rank) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, origin_[static_cast<std::size_t>(gpu)], event), rank);
    return static_cast<double>(ms) * 1e6 + origin_offset_ns_[static_cast<std::size_t>(gpu)];
  }

  void Report(OpId unit, EventSink& sink) {
    const Op& op = plan_->ops[static_cast<std::size_t>(unit)];
    const OpId timed = op.kind == OpKind::kSend ? op.match : unit;
    const Op& timed_op = plan_->ops[static_cast<std::size_t>(timed)];
    const Timing& t = timing_[static_cast<std::size_t>(timed)];
    CUDA_CHECK(cudaEventSynchronize(t.end), timed_op.rank);
    const int gpu = GpuOf(timed_op.rank);
    const TimeNs start = SinceOrigin(gpu, t.start, timed_op.rank);
    const TimeNs end = std::max(start, SinceOrigin(gpu, t.end, timed_op.rank));
    const bool transfer = op.kind == OpKind::kSend;
    const ClockKind clock =
        transfer && options_.emulate_links ? ClockKind::kEmulated : ClockKind::kCudaEvent;
    auto emit = [&](OpId id) {
      const Op& o = plan_->ops[static_cast<std::size_t>(id)];
      Event e;
      e.op = id;
      e.rank = o.rank;
      e.peer = o.peer;
      e.step = o.step;
      e.collective_seq = o.collective_seq;
      e.lane = o.lane;
      e.kind = o.kind;
      e.clock = clock;
      e.start_ns = start;
      e.end_ns = end;
      e.bytes = o.bytes;
      sink.OnEvent(e);
      ++completed_;
    };
    if (transfer) emit(unit);  // the send, then its recv, as the simulator does
    emit(timed);
  }

  void SyncAll() {
    for (int g : used_gpus_) {
      CUDA_CHECK(cudaSetDevice(g), -1);
      CUDA_CHECK(cudaDeviceSynchronize(), -1);
    }
  }

  // Frees everything Load made; errors here are ignored (a sticky error
  // must not turn a destructor into a crash).
  void Release() {
    nccl_.reset();
    for (Timing& t : timing_) {
      if (t.start) cudaEventDestroy(t.start);
      if (t.end) cudaEventDestroy(t.end);
    }
    timing_.clear();
    for (cudaStream_t s : streams_)
      if (s) cudaStreamDestroy(s);
    streams_.clear();
    for (float* p : device_)
      if (p) cudaFree(p);
    device_.clear();
    for (float* p : staging_)
      if (p) cudaFree(p);
    staging_.clear();
    for (cublasHandle_t h : cublas_)
      if (h) cublasDestroy(h);
    cublas_.clear();
    for (cudaEvent_t e : origin_)
      if (e) cudaEventDestroy(e);
    origin_.clear();
  }

  const Plan* plan_ = nullptr;
  const Topology* topology_ = nullptr;
  RunOptions options_;
  int device_count_ = 0;
  std::vector<int> gpu_;        // physical GPU of each rank
  std::vector<int> used_gpus_;
  std::vector<char> peer_ok_;   // [a * devices + b]: a's kernels may read b's memory
  std::vector<OpId> order_;     // units in a topological order
  std::vector<cudaStream_t> streams_;       // [rank * lanes + lane]
  std::vector<cublasHandle_t> cublas_;      // per rank
  std::vector<cudaEvent_t> origin_;         // per physical GPU
  std::vector<double> origin_offset_ns_;
  std::vector<Timing> timing_;              // per op (a send uses its recv's)
  std::vector<float*> device_;              // per buffer
  std::vector<float*> staging_;             // per rank
  mutable HostBuffers mirror_;
  mutable std::vector<char> mirror_fresh_;

  std::size_t cursor_ = 0;
  std::vector<char> enqueued_;
  std::vector<OpId> last_on_lane_;
  std::vector<std::int64_t> remaining_per_step_;
  int lowest_open_step_ = 0;
  std::size_t completed_ = 0;
  bool started_ = false;
  std::unique_ptr<cuda::NcclCommunicators> nccl_;
  std::map<int, int> collective_size_;                  // ops per collective_seq
  std::map<int, std::vector<OpId>> waiting_collective_;  // arrived, not launched
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
  RegisterBackend("cuda",
                  "NVIDIA GPUs: streams and events, peer copies, cuBLAS, NCCL; virtual devices "
                  "when ranks outnumber GPUs",
                  [] { return CreateCudaBackend(); });
}

}  // namespace shardlab
