#include "engine/backends/mpi/mpi_backend.h"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support (OpenMPI)
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <limits>
#include <thread>

#include "engine/backends/mpi/mpi_runtime.h"
#include "engine/core/error.h"
#include "engine/plan/host_data.h"
#include "engine/plan/op_graph.h"
#include "engine/plan/validate.h"
#include "engine/backends/mpi/desync_report.h"
#include "engine/backends/mpi/nccl_call_order.h"
#include "engine/backends/mpi/process_group.h"
#include "engine/backends/mpi/rank_device.h"

namespace shardlab {
namespace {

constexpr int kClockTag = 1;     // ping-pongs on the control communicator
constexpr int kStatusTag = 2;    // stall statuses on the side channel
constexpr int kClockRounds = 8;  // samples per rank; the shortest round trip wins
constexpr std::uint32_t kPollsPerYield = 1024;  // idle polls between sched_yields
constexpr std::int64_t kMaxMpiCount = std::int64_t{1} << 30;  // elements per MPI call

void Check(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error("rank " + std::to_string(mpi::WorldRank()) + ": " + what + " failed: " +
                  std::string(text, static_cast<std::size_t>(length)),
              ErrorKind::kRuntime);
}

// Whether the MPI library passes device pointers through (CUDA-aware):
// built so (compile time) and, when it was, what it says at run time.
bool MpiBuiltCudaAware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return true;
#else
  return false;
#endif
}

int MpiCudaAwareAtRunTime() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support();
#else
  return -1;
#endif
}

std::string Seconds(TimeNs ns) {
  std::string s = std::to_string(ns / 1e9);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + " s";
}

class MpiBackend final : public Backend {
 public:
  ~MpiBackend() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized || mpi::Broken()) return;  // pending requests may still name them
    if (device_) {  // a clean end: NCCL finalized, not aborted (a failed run aborted it)
      try {
        device_->Close();
      } catch (const Error& e) {
        std::cerr << "shardlab-cli: " << e.what() << "\n" << std::flush;
      }
    }
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    if (side_ != MPI_COMM_NULL) MPI_Comm_free(&side_);
  }

  std::string name() const override { return "mpi"; }

  void Load(const Plan& plan, const Topology& topology, const RunOptions& options) override {
    if (!mpi::Started()) mpi::Start(MpiOptions{});
    plan_ = &plan;
    options_ = options;
    timeout_ns_ = mpi::Options().timeout_ns;
    fault_ = mpi::Options().fault;
    rank_ = mpi::WorldRank();
    size_ = mpi::WorldSize();
    if (size_ != plan.num_ranks)
      throw Error("the plan has " + std::to_string(plan.num_ranks) + " ranks (--ranks " +
                  std::to_string(plan.num_ranks) + ") but mpirun started " +
                  std::to_string(size_) + " process" + (size_ == 1 ? "" : "es") +
                  "; the mpi backend runs one rank per process (mpirun -np " +
                  std::to_string(plan.num_ranks) + ")");
    for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
      const Op& op = plan.ops[id];
      if (op.kind == OpKind::kCollective && mpi::Options().device != MpiDevice::kGpu)
        throw Error("--algo nccl with --backend mpi needs --device gpu: NCCL works on GPU "
                    "buffers (host buffers run --algo ring or tree)");
      for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d)
        if (plan.ops[*d].rank != op.rank)
          throw Error(DescribeOp(plan, id) + " waits for " + DescribeOp(plan, *d) +
                      " of another rank; the mpi backend needs every dependency on the op's "
                      "own rank (transfers are the only links between ranks)");
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) &&
          (op.bytes > INT_MAX || op.src.count > INT_MAX))
        throw Error(DescribeOp(plan, id) + ": transfers above 2 GiB are not supported by the "
                    "mpi backend");
    }
    // Stragglers and failures (faults.h): a slow rank really waits, a failed
    // rank really stops; the rest is refused in one line.
    if (const std::string refusal = FaultRefusal(options.faults, "mpi"); !refusal.empty())
      throw Error(refusal);
    slow_factor_ = options.faults.SlowFactor(rank_);
    if (slow_factor_ < 1)
      throw Error("slow_rank: the mpi backend can only slow a rank down (FACTOR of at least 1, got " +
                  std::to_string(slow_factor_) + ")");
    if (slow_factor_ > 1 && mpi::Options().device == MpiDevice::kGpu)
      throw Error("slow_rank: the mpi backend delays a rank's host work and sends; with --device gpu its "
                  "kernels run on the GPU, which it cannot slow (use --device host)");
    fail_step_ = -1;
    for (const RankFailure& f : options.faults.failed_ranks)
      if (f.rank == rank_ && (fail_step_ < 0 || f.step < fail_step_)) fail_step_ = f.step;
    graph_ = BuildOpGraph(plan);
    if (mpi::Options().device == MpiDevice::kGpu) CheckNcclCallOrder(plan, graph_);
    seq_span_ = 1;
    for (const Op& op : plan.ops) seq_span_ = std::max<std::int64_t>(seq_span_, op.collective_seq + 1);

    Check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    Check(MPI_Comm_dup(MPI_COMM_WORLD, &side_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(side_, MPI_ERRORS_RETURN);
    void* attr = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(comm_, MPI_TAG_UB, &attr, &flag);
    tag_ub_ = flag ? *static_cast<int*>(attr) : 32767;
    if (mpi::Options().device == MpiDevice::kGpu) SetUpGpu();

    AlignClock();
    memory_.Load(plan);
    spare_staging_.clear();  // another plan's block sizes
    Reset();
  }

  void Reset() override {
    const Plan& plan = *plan_;
    pending_ = graph_.pred_count;
    ready_.clear();
    deferred_.clear();
    start_ns_.assign(plan.ops.size(), 0);
    end_ns_.assign(plan.ops.size(), 0);
    requests_.clear();
    request_ops_.clear();
    staging_.clear();
    device_work_.clear();
    received_.clear();
    recv_blocked_.clear();
    events_.clear();
    remaining_per_step_.assign(static_cast<std::size_t>(std::max(plan.num_steps, 0)), 0);
    for (const Op& op : plan.ops)
      if (op.rank == rank_) ++remaining_per_step_[op.step];
    open_step_ = 0;
    AdvanceOpenStep();
    completed_ = 0;
    started_ = false;
    skipping_ = false;
    origin_set_ = false;
    memory_.Reset();
    if (options_.timing_only) {
      data_.data.assign(plan.buffers.size(), {});
    } else {
      AllocateHostBuffers(plan, options_.seed, data_, rank_);
    }
    if (device_) device_->Upload(data_, options_.timing_only);
  }

  void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>& cancel) override {
    if (!started_) {
      started_ = true;
      ++run_index_;
      skipping_ = fault_.kind == MpiFaultKind::kSkip && fault_.rank == rank_ &&
                  fault_.iter == run_index_;
      if (skipping_) {
        std::cerr << "shardlab-cli: rank " << rank_ << ": injected fault "
                  << DescribeMpiFault(fault_) << ": skipping collective #" << Seq(0) << "\n"
                  << std::flush;
      }
      for (OpId id = 0; id < static_cast<OpId>(plan_->ops.size()); ++id)
        if (plan_->ops[id].rank == rank_ && pending_[id] == 0) ready_.push_back(id);
      if (device_) device_->StartClock();
    }
    // A rank that skips a run behaves as one whose code never made that
    // collective call: no ops, no gathers.
    if (skipping_) return;

    last_step_ = last_step;
    for (OpId id : deferred_) ready_.push_back(id);
    deferred_.clear();
    last_progress_ns_ = mpi::NowNs();
    std::uint32_t idle_polls = 0;
    while (true) {
      while (!ready_.empty()) {
        const OpId id = ready_.front();
        ready_.pop_front();
        if (plan_->ops[id].step > last_step) deferred_.push_back(id);
        else StartOp(id);
      }
      if ((open_step_ > last_step || open_step_ >= plan_->num_steps) && requests_.empty() &&
          device_work_.empty() && recv_blocked_.empty())
        break;
      if (TestRequests() || PollDevice()) {
        last_progress_ns_ = mpi::NowNs();
        idle_polls = 0;
        continue;
      }
      if (cancel.load(std::memory_order_relaxed)) {
        mpi::MarkBroken();  // the other ranks are left waiting for this one
        throw Error("run cancelled", ErrorKind::kCancelled);
      }
      if (requests_.empty() && ready_.empty() && device_work_.empty() && recv_blocked_.empty())
        throw Error("rank " + std::to_string(rank_) + ": plan deadlock: step " +
                        std::to_string(open_step_) + " has ops that never become ready",
                    ErrorKind::kRuntime);
      if (mpi::NowNs() - last_progress_ns_ > timeout_ns_) StallInOps();
      // Large messages move in fragments, each needing a poll: yielding on
      // every idle poll hands the core to another rank for a whole time
      // slice per fragment when ranks outnumber cores.
      if (++idle_polls % kPollsPerYield == 0) std::this_thread::yield();
    }
    if (device_ && !options_.timing_only) device_->Download(data_);  // for BufferData
    GatherEvents(sink);
    if (last_step >= plan_->num_steps - 1 && !options_.timing_only) GatherResults();
  }

  std::span<const float> BufferData(BufferId id) const override {
    if (options_.timing_only || id < 0 || id >= static_cast<BufferId>(data_.data.size()))
      return {};
    return data_.data[id];
  }

  std::size_t completed_ops() const override { return completed_; }
  const MemoryUsage* memory() const override { return &memory_.usage(); }
  std::string placement() const override { return gpu_line_; }

 private:
  // Sequence number of an op's collective call, 1-based and counting on
  // across runs of the plan (run 3 of a one-collective plan is #3).
  std::int64_t Seq(std::int32_t collective_seq) const {
    return (run_index_ - 1) * seq_span_ + std::max(collective_seq, 0) + 1;
  }

  // The pair's tag: its send op, shifted per run of the plan so that a rank
  // one run ahead never matches the others' messages.
  int Tag(OpId send) const {
    const std::int64_t ops = static_cast<std::int64_t>(plan_->ops.size());
    const std::int64_t limit = std::int64_t{tag_ub_} + 1;
    if (ops >= limit) return static_cast<int>(send % limit);
    const std::int64_t cycle = limit / ops;
    return static_cast<int>(((run_index_ - 1) % cycle) * ops + send);
  }

  void AdvanceOpenStep() {
    while (open_step_ < static_cast<int>(remaining_per_step_.size()) &&
           remaining_per_step_[open_step_] == 0)
      ++open_step_;
  }

  void InjectFault() {
    if (fault_.rank != rank_ || ops_started_ != fault_.op) return;
    if (fault_.kind != MpiFaultKind::kExit && fault_.kind != MpiFaultKind::kKill &&
        fault_.kind != MpiFaultKind::kStall)
      return;
    std::cerr << "shardlab-cli: rank " << rank_ << ": injected fault " << DescribeMpiFault(fault_)
              << "\n"
              << std::flush;
    std::cout.flush();
    if (fault_.kind == MpiFaultKind::kExit) std::_Exit(3);
    if (fault_.kind == MpiFaultKind::kKill) std::raise(SIGKILL);
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // stall: never answers
  }

  // fail_rank R@STEP: rank R stops before its first op of that step, as a
  // process that hangs: it withholds its sends (and everything after), so
  // the others run out of --mpi-timeout and rank 0 names the collective it
  // never joined.
  void FailHere(const Op& op) {
    std::cerr << "shardlab-cli: rank " << rank_ << ": fail_rank " << rank_ << "@" << fail_step_
              << ": stops before its ops of step " << op.step << " (its sends are withheld)\n"
              << std::flush;
    std::cout.flush();
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }

  // slow_rank R:FACTOR: rank R's host thread waits (FACTOR - 1) times `ns`
  // more, busy, as a slower GPU or host would.
  void SlowDown(double ns) const {
    if (slow_factor_ <= 1 || ns <= 0) return;
    const double until = mpi::NowNs() + (slow_factor_ - 1) * ns;
    while (mpi::NowNs() < until) {
    }
  }

  void StartOp(OpId id) {
    const Op& op = plan_->ops[id];
    ++ops_started_;
    InjectFault();
    if (fail_step_ >= 0 && op.step >= fail_step_) FailHere(op);
    // A slow rank's send leaves (FACTOR - 1) times its last send's time late.
    if (op.kind == OpKind::kSend) SlowDown(last_send_ns_);
    start_ns_[id] = mpi::NowNs();
    switch (op.kind) {
      case OpKind::kSend: {
        if (OnGpuData()) {  // staged: device -> pinned first; direct: the device slice
          if (transfer_path_ == GpuTransferPath::kStagedPinned) {
            device_->StartSendStaging(id);
            device_work_.push_back({id, DevicePhase::kSendStaging});
          } else {
            IssueSend(id, device_->SendBuffer(id));
          }
          return;
        }
        MPI_Request request;
        if (options_.timing_only) {
          if (scratch_.size() < static_cast<std::size_t>(op.bytes)) scratch_.resize(op.bytes);
          Check(MPI_Isend(scratch_.data(), static_cast<int>(op.bytes), MPI_BYTE, op.peer, Tag(id),
                          comm_, &request),
                "MPI_Isend");
        } else {
          const float* from = data_.data[op.src.buffer].data() + op.src.offset;
          Check(MPI_Isend(from, static_cast<int>(op.src.count), MPI_FLOAT, op.peer, Tag(id), comm_,
                          &request),
                "MPI_Isend");
        }
        AddRequest(request, id, {});
        return;
      }
      case OpKind::kRecv: {
        const Op& send = plan_->ops[op.match];
        MPI_Request request;
        std::vector<float> staging;
        if (OnGpuData()) {
          const bool into_place = op.reduce == ReduceOp::kNone && op.dst.count == send.src.count &&
                                  !SendInFlightReads(op.dst);
          void* into = device_->RecvBuffer(id, send.src.count, into_place);
          Check(MPI_Irecv(into, static_cast<int>(send.src.count), MPI_FLOAT, op.peer,
                          Tag(op.match), comm_, &request),
                "MPI_Irecv");
          AddRequest(request, id, {});
          return;
        }
        if (options_.timing_only) {
          staging = TakeStaging((static_cast<std::size_t>(op.bytes) + 3) / 4);
          Check(MPI_Irecv(staging.data(), static_cast<int>(op.bytes), MPI_BYTE, op.peer,
                          Tag(op.match), comm_, &request),
                "MPI_Irecv");
        } else {
          float* into = nullptr;
          if (op.reduce == ReduceOp::kNone && op.dst.count == send.src.count &&
              !SendInFlightReads(op.dst)) {
            into = data_.data[op.dst.buffer].data() + op.dst.offset;  // straight into place
          } else {
            staging = TakeStaging(static_cast<std::size_t>(send.src.count));
            into = staging.data();
          }
          Check(MPI_Irecv(into, static_cast<int>(send.src.count), MPI_FLOAT, op.peer,
                          Tag(op.match), comm_, &request),
                "MPI_Irecv");
        }
        AddRequest(request, id, std::move(staging));
        return;
      }
      default:
        if (device_) {  // kernels on the GPU, timed by CUDA events
          device_->StartLocal(id);
          device_work_.push_back({id, DevicePhase::kLocal});
          return;
        }
        if (!options_.timing_only) ApplyOpData(*plan_, id, data_);
        SlowDown(mpi::NowNs() - start_ns_[id]);  // a slow rank's work takes FACTOR times as long
        Complete(id);
        return;
    }
  }

  // Data on the GPU (timing-only runs move host scratch bytes instead).
  bool OnGpuData() const { return device_ != nullptr && !options_.timing_only; }

  void IssueSend(OpId id, const void* from) {
    const Op& op = plan_->ops[id];
    MPI_Request request;
    Check(MPI_Isend(from, static_cast<int>(op.src.count), MPI_FLOAT, op.peer, Tag(id), comm_,
                    &request),
          "MPI_Isend");
    AddRequest(request, id, {});
  }

  // A received message goes on to the device (copy or combine into the
  // destination), unless a send of this rank still stages from the region
  // it would overwrite: then it waits for that copy to finish.
  void FinishRecvOnDevice(OpId id) {
    if (StagingSendReads(plan_->ops[id].dst)) {
      recv_blocked_.push_back(id);
      return;
    }
    if (device_->FinishRecv(id)) device_work_.push_back({id, DevicePhase::kRecvFinishing});
    else Complete(id);
  }

  bool StagingSendReads(const BufferSlice& dst) const {
    for (const DeviceWork& w : device_work_) {
      if (w.phase != DevicePhase::kSendStaging) continue;
      if (Overlaps(plan_->ops[w.op].src, dst)) return true;
    }
    return false;
  }

  static bool Overlaps(const BufferSlice& a, const BufferSlice& b) {
    return a.buffer == b.buffer && a.offset < b.offset + b.count && b.offset < a.offset + a.count;
  }

  // Polls the device's pending work; moves finished work on. True on progress.
  bool PollDevice() {
    if (!device_) return false;
    bool progress = false;
    for (std::size_t i = 0; i < recv_blocked_.size();) {
      if (StagingSendReads(plan_->ops[recv_blocked_[i]].dst)) {
        ++i;
        continue;
      }
      const OpId id = recv_blocked_[i];
      recv_blocked_.erase(recv_blocked_.begin() + static_cast<std::ptrdiff_t>(i));
      FinishRecvOnDevice(id);
      progress = true;
    }
    if (device_work_.empty()) return progress;
    device_done_.clear();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < device_work_.size(); ++i) {
      if (device_->Done(device_work_[i].op)) device_done_.push_back(device_work_[i]);
      else device_work_[kept++] = device_work_[i];  // issue order kept: the oldest is named
    }
    device_work_.resize(kept);
    for (const DeviceWork& w : device_done_) {
      switch (w.phase) {
        case DevicePhase::kLocal:
          Complete(w.op, device_->Times(w.op), ClockKind::kCudaEvent);
          break;
        case DevicePhase::kSendStaging: IssueSend(w.op, device_->SendBuffer(w.op)); break;
        case DevicePhase::kRecvFinishing: Complete(w.op); break;
      }
    }
    return progress || !device_done_.empty();
  }

  // A direct receive must not overwrite data an unfinished Isend of this
  // rank still reads (the simulator moves a send's data at its end).
  bool SendInFlightReads(const BufferSlice& dst) const {
    for (OpId id : request_ops_) {
      const Op& other = plan_->ops[id];
      if (other.kind == OpKind::kSend && other.src.buffer == dst.buffer &&
          other.src.offset < dst.offset + dst.count && dst.offset < other.src.offset + other.src.count)
        return true;
    }
    return false;
  }

  // A block for received data that must not land in place (a reducing receive,
  // timing-only). Blocks come back when their receive finishes and are reused,
  // across runs too: a fresh vector per receive costs a page fault per 4 KiB and
  // a zero fill, which made large all-reduces a third slower than MPI_Allreduce.
  std::vector<float> TakeStaging(std::size_t count) {
    std::size_t best = spare_staging_.size();  // the smallest block that fits
    for (std::size_t i = 0; i < spare_staging_.size(); ++i) {
      const std::size_t capacity = spare_staging_[i].capacity();
      if (capacity >= count && (best == spare_staging_.size() ||
                                capacity < spare_staging_[best].capacity()))
        best = i;
    }
    if (best == spare_staging_.size()) return std::vector<float>(count);
    std::swap(spare_staging_[best], spare_staging_.back());
    std::vector<float> block = std::move(spare_staging_.back());
    spare_staging_.pop_back();
    block.resize(count);  // within capacity: no allocation
    return block;
  }

  void AddRequest(MPI_Request request, OpId id, std::vector<float> staging) {
    requests_.push_back(request);
    request_ops_.push_back(id);
    staging_.push_back(std::move(staging));
  }

  // Tests every pending request; finishes those done. True on progress.
  bool TestRequests() {
    if (requests_.empty()) return false;
    int done = 0;
    indices_.resize(requests_.size());
    Check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &done,
                       indices_.data(), MPI_STATUSES_IGNORE),
          "MPI_Testsome");
    if (done == MPI_UNDEFINED || done == 0) return false;
    std::sort(indices_.begin(), indices_.begin() + done);
    finished_.clear();
    for (int k = 0; k < done; ++k) {
      const int i = indices_[k];
      const OpId id = request_ops_[i];
      const Op& op = plan_->ops[id];
      if (op.kind == OpKind::kRecv && OnGpuData()) {
        received_.push_back(id);  // on to the device below, not yet complete
        request_ops_[i] = kNoOp;
        continue;
      }
      if (op.kind == OpKind::kRecv && !options_.timing_only && !staging_[i].empty()) {
        const std::int64_t count = std::min<std::int64_t>(op.dst.count, staging_[i].size());
        CombineHostData(op.reduce, staging_[i].data(),
                        data_.data[op.dst.buffer].data() + op.dst.offset, count);
      }
      if (!staging_[i].empty()) spare_staging_.push_back(std::move(staging_[i]));
      finished_.push_back(id);
      request_ops_[i] = kNoOp;
    }
    // Keep the rest in issue order: the oldest names whom a stall waits for.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (request_ops_[i] == kNoOp) continue;
      if (kept != i) {  // a vector moved onto itself would come out empty
        requests_[kept] = requests_[i];
        request_ops_[kept] = request_ops_[i];
        staging_[kept] = std::move(staging_[i]);  // the heap block (MPI's target) moves along
      }
      ++kept;
    }
    requests_.resize(kept);
    request_ops_.resize(kept);
    staging_.resize(kept);
    for (OpId id : finished_) Complete(id);
    std::vector<OpId> received;
    received.swap(received_);
    for (OpId id : received) FinishRecvOnDevice(id);
    return true;
  }

  // Transfers (and host ops) are timed by the host clock around the MPI
  // request; ops the GPU ran by their CUDA events. A host-timed op starts
  // no earlier than its dependencies ended: a device op's end, mapped from
  // its event onto the host clock, may come out a little late.
  void Complete(OpId id) {
    double deps_end = 0;
    const Op& op = plan_->ops[id];
    for (const OpId* d = plan_->deps_begin(op); d != plan_->deps_end(op); ++d)
      deps_end = std::max(deps_end, end_ns_[*d]);
    Complete(id, HostOpTimes(start_ns_[id], mpi::NowNs(), deps_end), ClockKind::kHostMpiAligned);
  }

  void Complete(OpId id, const DeviceTimes& times, ClockKind clock) {
    const Op& op = plan_->ops[id];
    if (OnGpuData() && (op.kind == OpKind::kSend || op.kind == OpKind::kRecv))
      device_->Release(id);
    Event e;
    e.op = id;
    e.rank = op.rank;
    e.peer = op.peer;
    e.step = op.step;
    e.collective_seq = op.collective_seq;
    e.lane = op.lane;
    e.kind = op.kind;
    e.clock = clock;
    end_ns_[id] = times.end_ns;
    if (op.kind == OpKind::kSend) last_send_ns_ = times.end_ns - times.start_ns;
    e.start_ns = times.start_ns - offset_ns_;
    e.end_ns = times.end_ns - offset_ns_;
    e.bytes = op.bytes;
    events_.push_back(e);
    last_done_seq_ = std::max(last_done_seq_, Seq(op.collective_seq));
    ++completed_;
    if (--remaining_per_step_[op.step] == 0) AdvanceOpenStep();
    for (const OpId* w = graph_.successors_begin(id); w != graph_.successors_end(id); ++w)
      if (plan_->ops[*w].rank == rank_ && --pending_[*w] == 0) ready_.push_back(*w);
  }

  // Waits for one request, bounded by the timeout.
  void Wait(MPI_Request& request, StallPhase phase) {
    const double start = mpi::NowNs();
    std::uint32_t polls = 0;
    while (true) {
      int done = 0;
      Check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      if (mpi::NowNs() - start > timeout_ns_) Stall(phase, RankStallFor(phase));
      if (++polls % kPollsPerYield == 0) std::this_thread::yield();
    }
  }

  void WaitAll(std::vector<MPI_Request>& requests, StallPhase phase) {
    const double start = mpi::NowNs();
    std::uint32_t polls = 0;
    while (true) {
      int done = 0;
      Check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                        MPI_STATUSES_IGNORE),
            "MPI_Testall");
      if (done) return;
      if (mpi::NowNs() - start > timeout_ns_) Stall(phase, RankStallFor(phase));
      if (++polls % kPollsPerYield == 0) std::this_thread::yield();
    }
  }

  RankStall RankStallFor(StallPhase phase) const {
    RankStall s;
    s.rank = rank_;
    s.answered = true;
    s.phase = phase;
    s.seq = last_done_seq_;
    s.last_done_seq = last_done_seq_;
    s.step = phase == StallPhase::kEventGather ? last_step_ : -1;
    return s;
  }

  // The oldest unfinished op is named: an MPI request, else the device's
  // (an NCCL collective that never completed: NCCL has no timeout of its
  // own, so its communicator is aborted first).
  void StallInOps() {
    RankStall s = RankStallFor(StallPhase::kOps);
    OpId oldest = kNoOp;
    if (!request_ops_.empty()) oldest = request_ops_.front();
    else if (!device_work_.empty()) oldest = device_work_.front().op;
    else if (!recv_blocked_.empty()) oldest = recv_blocked_.front();
    if (oldest != kNoOp) {
      const Op& op = plan_->ops[oldest];
      s.waiting_on = op.kind == OpKind::kCollective ? -1 : op.peer;
      s.op = oldest;
      s.seq = Seq(op.collective_seq);
      s.step = op.step;
    }
    if (device_) device_->Abort();
    Stall(StallPhase::kOps, s);
  }

  // A wait ran out of time. Every rank sends its status to rank 0 over the
  // side channel; rank 0 waits a grace period for them and names the rank
  // that is out of step. Marks the job broken: it ends with MPI_Abort.
  [[noreturn]] void Stall(StallPhase phase, const RankStall& mine) {
    (void)phase;
    mpi::MarkBroken();
    const std::string head = "rank " + std::to_string(rank_) + ": no progress for " +
                             Seconds(timeout_ns_) + " (--mpi-timeout): " + mine.Describe();
    const double grace_ns = std::min(timeout_ns_, 3e9);
    std::int64_t status[7] = {mine.rank, static_cast<std::int64_t>(mine.phase), mine.waiting_on,
                              mine.op,   mine.seq, mine.last_done_seq, mine.step};
    if (rank_ != 0) {
      MPI_Request request;
      MPI_Isend(status, 7, MPI_INT64_T, 0, kStatusTag, side_, &request);
      const double start = mpi::NowNs();
      int done = 0;
      while (!done && mpi::NowNs() - start < grace_ns) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        std::this_thread::yield();
      }
      throw Error(head + "; rank 0 reports which rank is out of step", ErrorKind::kRuntime);
    }
    std::vector<RankStall> all(static_cast<std::size_t>(size_));
    all[0] = mine;
    std::vector<std::array<std::int64_t, 7>> received(static_cast<std::size_t>(size_));
    std::vector<MPI_Request> requests(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
    for (int r = 1; r < size_; ++r) {
      all[r].rank = r;
      MPI_Irecv(received[r].data(), 7, MPI_INT64_T, r, kStatusTag, side_, &requests[r]);
    }
    const double start = mpi::NowNs();
    std::vector<char> answered(static_cast<std::size_t>(size_), 0);
    int answers = 0;
    while (answers < size_ - 1 && mpi::NowNs() - start < grace_ns) {
      for (int r = 1; r < size_; ++r) {
        if (answered[r]) continue;
        int done = 0;
        MPI_Test(&requests[r], &done, MPI_STATUS_IGNORE);
        if (!done) continue;
        answered[r] = 1;
        ++answers;
        const auto& v = received[r];
        all[r] = RankStall{static_cast<std::int32_t>(v[0]), true, static_cast<StallPhase>(v[1]),
                           static_cast<std::int32_t>(v[2]), static_cast<std::int32_t>(v[3]),
                           v[4], v[5], static_cast<std::int32_t>(v[6])};
      }
      std::this_thread::yield();
    }
    throw Error("no progress for " + Seconds(timeout_ns_) + " (--mpi-timeout): " +
                    DescribeDesync(all),
                ErrorKind::kRuntime);
  }

  // --device gpu: every rank counts the GPUs it sees and the counts are
  // shared, so that a job where some rank has none ends with one message
  // (rank 0's) on every rank alike rather than with the others waiting for
  // it until --mpi-timeout. The GPU is the node-local rank modulo the
  // count; the rank's buffers are allocated there, and NCCL is set up when
  // the plan has collective ops.
  void SetUpGpu() {
    int count = 0;
    std::string why;
    try {
      count = CountGpusOrThrow();
    } catch (const Error& e) {
      why = e.what();
    }
    std::vector<int> counts(static_cast<std::size_t>(size_), 0);
    MPI_Request request;
    Check(MPI_Iallgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_, &request),
          "MPI_Iallgather");
    Wait(request, StallPhase::kDeviceSetUp);
    for (int r = 0; r < size_; ++r) {
      if (counts[r] > 0) continue;
      if (r == rank_ && !why.empty()) throw JobWideError(why, ErrorKind::kRuntime);
      throw JobWideError("no CUDA device on rank " + std::to_string(r) + " (--device gpu needs one "
                         "GPU per process; the host buffers run without --device gpu)",
                         ErrorKind::kRuntime);
    }
    const bool collectives = std::any_of(plan_->ops.begin(), plan_->ops.end(), [](const Op& op) {
      return op.kind == OpKind::kCollective;
    });
    std::string path_why;
    try {  // the same on every rank of a job: reported once
      transfer_path_ = ChooseGpuTransferPath(MpiBuiltCudaAware(), MpiCudaAwareAtRunTime(),
                                             std::getenv("SHARDLAB_MPI_GPU_TRANSFER"), path_why);
      device_ = CreateRankDevice();
      if (collectives && !device_->HasNccl())
        throw Error("--algo nccl --device gpu: this build has no NCCL (install NCCL and configure "
                    "with SHARDLAB_WITH_NCCL=ON)",
                    ErrorKind::kRuntime);
    } catch (const JobWideError&) {
      throw;
    } catch (const Error& e) {
      device_.reset();
      throw JobWideError(e.what(), e.kind());
    }
    const int gpu = GpuForLocalRank(LocalRank(), counts[rank_]);
    if (collectives) RefuseSharedGpus(gpu);
    std::string load_error;
    try {
      device_->Load(*plan_, rank_, gpu, transfer_path_, timeout_ns_);
    } catch (const Error& e) {
      load_error = e.what();
    }
    AgreeOnLoad(load_error);
    gpu_line_ = DescribeGpuRun(rank_, gpu, counts[rank_], device_->GpuName(), transfer_path_,
                               path_why);
    if (collectives) SetUpNccl();
  }

  // A rank whose device Load failed (cudaMalloc out of memory, say) would
  // leave the others waiting for it until --mpi-timeout: every rank learns
  // the lowest failing rank (a bounded all-reduce) and its message (a
  // bounded broadcast), and all end with it alike.
  void AgreeOnLoad(const std::string& error) {
    constexpr int kMessageBytes = 1024;
    const int mine = error.empty() ? size_ : rank_;
    int failing = size_;
    MPI_Request request;
    Check(MPI_Iallreduce(&mine, &failing, 1, MPI_INT, MPI_MIN, comm_, &request), "MPI_Iallreduce");
    Wait(request, StallPhase::kDeviceSetUp);
    if (failing == size_) return;
    std::vector<char> message(kMessageBytes, '\0');
    if (rank_ == failing) error.copy(message.data(), kMessageBytes - 1);
    Check(MPI_Ibcast(message.data(), kMessageBytes, MPI_CHAR, failing, comm_, &request),
          "MPI_Ibcast");
    Wait(request, StallPhase::kDeviceSetUp);
    device_.reset();
    throw JobWideError(std::string(message.data(), strnlen(message.data(), kMessageBytes)),
                       ErrorKind::kRuntime);
  }

  // This process's rank among those sharing its node, from MPI itself, so
  // it holds under any launcher (mpirun, srun, MPICH's hydra).
  // MPI_Comm_split_type is a blocking collective: it runs once at start,
  // when every process has just come through MPI_Init, so it is not
  // bounded by --mpi-timeout as the later waits are.
  int LocalRank() {
    MPI_Comm node = MPI_COMM_NULL;
    Check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    int local = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    return local;
  }

  // NCCL does not support two ranks of a communicator on one GPU (it may
  // hang): every process's host and GPU bus id to every process, and a job
  // where two match ends with one message naming both. Processes that each
  // see one GPU of their own (CUDA_VISIBLE_DEVICES per task) pass.
  void RefuseSharedGpus(int gpu) {
    constexpr int kHost = MPI_MAX_PROCESSOR_NAME, kBus = 64;
    std::vector<char> mine(kHost + kBus, '\0');
    int length = 0;
    MPI_Get_processor_name(mine.data(), &length);
    std::string bus;
    try {
      bus = device_->GpuBusId(gpu);
    } catch (const Error&) {
      bus.clear();  // unknown: not compared
    }
    bus.copy(mine.data() + kHost, std::min<std::size_t>(bus.size(), kBus - 1));
    std::vector<char> all(mine.size() * static_cast<std::size_t>(size_), '\0');
    MPI_Request request;
    Check(MPI_Iallgather(mine.data(), kHost + kBus, MPI_CHAR, all.data(), kHost + kBus, MPI_CHAR,
                         comm_, &request),
          "MPI_Iallgather");
    Wait(request, StallPhase::kDeviceSetUp);
    std::vector<GpuIdentity> identities(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      const char* at = all.data() + static_cast<std::size_t>(r) * (kHost + kBus);
      identities[r].host.assign(at, strnlen(at, kHost - 1));
      identities[r].bus_id.assign(at + kHost, strnlen(at + kHost, kBus - 1));
    }
    const std::string shared = DescribeSharedGpu(identities);
    if (!shared.empty())
      throw JobWideError("--algo nccl --device gpu: " + shared + "; NCCL needs one GPU per process "
                         "(give each process its own GPU, or run --algo ring or tree)",
                         ErrorKind::kRuntime);
  }

  // NCCL over MPI: rank 0's unique id to every rank (a non-blocking
  // broadcast, bounded like every wait), then a non-blocking
  // ncclCommInitRankConfig polled against --mpi-timeout.
  void SetUpNccl() {
    std::vector<char> id(static_cast<std::size_t>(kNcclUniqueIdBytes), 0);
    if (rank_ == 0) id = device_->NcclUniqueId();
    if (static_cast<int>(id.size()) != kNcclUniqueIdBytes)
      throw Error("rank 0: NCCL's unique id has " + std::to_string(id.size()) + " bytes",
                  ErrorKind::kRuntime);
    MPI_Request request;
    Check(MPI_Ibcast(id.data(), kNcclUniqueIdBytes, MPI_BYTE, 0, comm_, &request), "MPI_Ibcast");
    Wait(request, StallPhase::kDeviceSetUp);
    device_->InitNccl(id, rank_, size_);
    const double start = mpi::NowNs();
    std::uint32_t polls = 0;
    while (!device_->NcclReady()) {
      if (mpi::NowNs() - start > timeout_ns_) {
        device_->Abort();
        Stall(StallPhase::kDeviceSetUp, RankStallFor(StallPhase::kDeviceSetUp));
      }
      if (++polls % kPollsPerYield == 0) std::this_thread::yield();
    }
  }

  // Offsets of every rank's clock to rank 0's: rank 0 pings each rank in
  // turn; the reply with the shortest round trip gives offset = remote time
  // - midpoint of the round trip.
  void AlignClock() {
    offset_ns_ = 0;
    double ping = 0, reply = 0;
    for (int r = 1; r < size_; ++r) {
      if (rank_ != 0 && rank_ != r) continue;
      double best_rtt = std::numeric_limits<double>::infinity(), best_offset = 0;
      for (int k = 0; k < kClockRounds; ++k) {
        MPI_Request requests[2];
        if (rank_ == 0) {
          const double t0 = mpi::NowNs();
          Check(MPI_Irecv(&reply, 1, MPI_DOUBLE, r, kClockTag, comm_, &requests[0]), "MPI_Irecv");
          Check(MPI_Isend(&t0, 1, MPI_DOUBLE, r, kClockTag, comm_, &requests[1]), "MPI_Isend");
          std::vector<MPI_Request> both(requests, requests + 2);
          WaitAll(both, StallPhase::kClockAlignment);
          const double t1 = mpi::NowNs();
          if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            best_offset = reply - (t0 + t1) / 2;
          }
        } else {
          Check(MPI_Irecv(&ping, 1, MPI_DOUBLE, 0, kClockTag, comm_, &requests[0]), "MPI_Irecv");
          Wait(requests[0], StallPhase::kClockAlignment);
          const double now = mpi::NowNs();
          Check(MPI_Isend(&now, 1, MPI_DOUBLE, 0, kClockTag, comm_, &requests[1]), "MPI_Isend");
          Wait(requests[1], StallPhase::kClockAlignment);
        }
      }
      MPI_Request request;
      if (rank_ == 0) {
        Check(MPI_Isend(&best_offset, 1, MPI_DOUBLE, r, kClockTag, comm_, &request), "MPI_Isend");
        Wait(request, StallPhase::kClockAlignment);
      } else {
        Check(MPI_Irecv(&offset_ns_, 1, MPI_DOUBLE, 0, kClockTag, comm_, &request), "MPI_Irecv");
        Wait(request, StallPhase::kClockAlignment);
      }
    }
  }

  // Every rank's events of this call to every process, on rank 0's clock
  // from the run's first event, in end order.
  void GatherEvents(EventSink& sink) {
    const int mine = static_cast<int>(events_.size() * sizeof(Event));
    std::vector<int> bytes(static_cast<std::size_t>(size_));
    MPI_Request request;
    Check(MPI_Iallgather(&mine, 1, MPI_INT, bytes.data(), 1, MPI_INT, comm_, &request),
          "MPI_Iallgather");
    Wait(request, StallPhase::kEventGather);
    std::vector<int> displs(static_cast<std::size_t>(size_), 0);
    std::int64_t total = 0;
    for (int r = 0; r < size_; ++r) {
      displs[r] = static_cast<int>(total);
      total += bytes[r];
    }
    if (total > INT_MAX)
      throw Error("rank " + std::to_string(rank_) + ": more than 2 GiB of events in one step",
                  ErrorKind::kRuntime);
    std::vector<Event> all(static_cast<std::size_t>(total) / sizeof(Event));
    Check(MPI_Iallgatherv(events_.data(), mine, MPI_BYTE, all.data(), bytes.data(), displs.data(),
                          MPI_BYTE, comm_, &request),
          "MPI_Iallgatherv");
    Wait(request, StallPhase::kEventGather);
    events_.clear();
    if (all.empty()) return;
    if (!origin_set_) {
      origin_ns_ = all.front().start_ns;
      for (const Event& e : all) origin_ns_ = std::min(origin_ns_, e.start_ns);
      origin_set_ = true;
    }
    for (Event& e : all) {
      e.start_ns -= origin_ns_;
      e.end_ns -= origin_ns_;
    }
    std::stable_sort(all.begin(), all.end(), [](const Event& a, const Event& b) {
      return a.end_ns != b.end_ns ? a.end_ns < b.end_ns : a.op < b.op;
    });
    ReplayMemory(all);
    for (const Event& e : all) sink.OnEvent(e);
  }

  // The memory tracker follows ops as they start and end, in time order
  // (ends first at a tie, as a buffer freed at t is free for an op at t).
  void ReplayMemory(const std::vector<Event>& events) {
    struct Point { TimeNs t; bool start; OpId op; };
    std::vector<Point> points;
    points.reserve(events.size() * 2);
    for (const Event& e : events) {
      points.push_back({e.start_ns, true, e.op});
      points.push_back({e.end_ns, false, e.op});
    }
    std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
      return a.t != b.t ? a.t < b.t : (!a.start && b.start);
    });
    for (const Point& p : points) {
      if (p.start) memory_.OnOpStart(p.op);
      else memory_.OnOpEnd(p.op);
    }
  }

  // After the last step: every buffer from its owner to every process, so
  // that the scenario's check reads any rank's data here.
  void GatherResults() {
    std::vector<MPI_Request> requests;
    for (BufferId id = 0; id < static_cast<BufferId>(plan_->buffers.size()); ++id) {
      const Buffer& b = plan_->buffers[id];
      std::vector<float>& data = data_.data[id];
      if (b.rank != rank_) data.assign(static_cast<std::size_t>(b.count), 0.0f);
      for (std::int64_t at = 0; at < b.count; at += kMaxMpiCount) {
        const int count = static_cast<int>(std::min(kMaxMpiCount, b.count - at));
        requests.emplace_back();
        Check(MPI_Ibcast(data.data() + at, count, MPI_FLOAT, b.rank, comm_, &requests.back()),
              "MPI_Ibcast");
      }
    }
    WaitAll(requests, StallPhase::kResultGather);
  }

  const Plan* plan_ = nullptr;
  RunOptions options_;
  TimeNs timeout_ns_ = kDefaultMpiTimeoutNs;
  MpiFault fault_;
  int rank_ = 0;
  int size_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL;  // transfers, gathers, clock ping-pongs
  MPI_Comm side_ = MPI_COMM_NULL;  // stall statuses only: never blocked by a stuck transfer
  int tag_ub_ = 32767;
  OpGraph graph_;
  std::int64_t seq_span_ = 1;      // collective calls per run of the plan
  double offset_ns_ = 0;           // this rank's clock minus rank 0's

  // Across runs (not reset).
  std::int64_t run_index_ = 0;     // runs of the plan started (1-based once started)
  std::int64_t ops_started_ = 0;   // for the injected faults
  double slow_factor_ = 1;         // slow_rank: this rank's FACTOR
  int fail_step_ = -1;             // fail_rank: the step this rank stops before (-1: never)
  double last_send_ns_ = 0;        // the last send's time, for a slow rank's delay
  std::int64_t last_done_seq_ = 0;

  // Run state (reset by Reset()).
  std::vector<std::int32_t> pending_;
  std::deque<OpId> ready_;
  std::vector<OpId> deferred_;     // ready, but of a later step than asked for
  std::vector<double> start_ns_;
  std::vector<double> end_ns_;     // this process's clock, as start_ns_
  std::vector<MPI_Request> requests_;
  std::vector<OpId> request_ops_;
  std::vector<std::vector<float>> staging_;  // per request: received data to combine
  std::vector<std::vector<float>> spare_staging_;  // finished receives' blocks (kept by Reset)
  std::vector<int> indices_;
  std::vector<OpId> finished_;
  std::vector<Event> events_;      // this rank's, since the last gather
  std::vector<std::int64_t> remaining_per_step_;
  int open_step_ = 0;
  int last_step_ = -1;             // of the current RunThroughStep
  bool started_ = false;
  bool skipping_ = false;
  bool origin_set_ = false;
  double origin_ns_ = 0;
  double last_progress_ns_ = 0;
  std::vector<char> scratch_;      // timing-only sends
  // --device gpu: the rank's buffers and local ops on its GPU (null: host).
  enum class DevicePhase : std::uint8_t {
    kLocal,          // a kernel, copy, combine or NCCL call; its events time the op
    kSendStaging,    // the send's slice on its way to pinned memory; MPI_Isend next
    kRecvFinishing,  // received; copy or combine into the destination
  };
  struct DeviceWork {
    OpId op = kNoOp;
    DevicePhase phase = DevicePhase::kLocal;
  };
  std::unique_ptr<RankDevice> device_;
  GpuTransferPath transfer_path_ = GpuTransferPath::kStagedPinned;
  std::string gpu_line_;           // placement(): the run's header line
  std::vector<DeviceWork> device_work_;  // started on the device, in issue order
  std::vector<DeviceWork> device_done_;
  std::vector<OpId> received_;     // MPI done this poll, on to the device
  std::vector<OpId> recv_blocked_; // received; a staging send still reads the destination
  HostBuffers data_;
  MemoryTracker memory_;
  std::size_t completed_ = 0;
};

}  // namespace

std::unique_ptr<Backend> CreateMpiBackend() { return std::make_unique<MpiBackend>(); }

}  // namespace shardlab
