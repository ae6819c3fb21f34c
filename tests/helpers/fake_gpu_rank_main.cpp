// An MPI program for tests/mpi_gpu_host: runs a collective on the mpi
// backend with --device gpu semantics, but with a RankDevice that keeps the
// rank's buffers in host memory and finishes its work only after a few
// polls, as a GPU would (its copies and kernels take effect only then). So the mpi backend's GPU mode (staging through
// "pinned" blocks, receives finished on the device, CUDA-event times, NCCL
// bootstrap and a collective that never ends) runs on machines with no GPU.
//
//   mpirun -np N fake_gpu_rank COLLECTIVE ALGO SIZE_BYTES [TIMEOUT_S]
//   mpirun -np N fake_gpu_rank zero STAGE STEPS   (ZeRO training: compute ops too)
//
// Environment: FAKE_GPU_STALL_RANK=r makes rank r's collective ops never
// finish; FAKE_GPU_COUNT=n is each node's GPU count (default: one per
// process).
//   FAKE_GPU_OWN_BUS=1: each process's GPU is its own, whatever the count.
//   FAKE_GPU_LOAD_FAIL_RANK=r: rank r's Load fails (out of memory).
//   FAKE_GPU_CLOCK_SKEW_NS=t: device times come out t late on the host clock.
// Rank 0 prints "ok correct=1 events=E ops=O device_events=D
// held=H order=V placement=..." on stdout (V: ops that started before an
// op they depend on ended); errors go to stderr as
// "fake_gpu_rank: error: ..." (rank 0 alone for job-wide ones).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/plan/host_data.h"
#include "engine/run/backend.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/run/executor.h"
#include "engine/backends/mpi/process_group.h"
#include "engine/backends/mpi/rank_device.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab {
namespace {

constexpr int kPollsUntilDone = 3;  // Done() says no this many times first
std::atomic<int> g_blocks_held{0};
std::atomic<int> g_aborts{0};

class HostRankDevice final : public RankDevice {
 public:
  void Load(const Plan& plan, int rank, int gpu, GpuTransferPath path, TimeNs) override {
    plan_ = &plan;
    rank_ = rank;
    gpu_ = gpu;
    path_ = path;
    work_.assign(plan.ops.size(), {});
    const char* fail = std::getenv("FAKE_GPU_LOAD_FAIL_RANK");
    if (fail != nullptr && std::atoi(fail) == rank)
      throw Error("rank " + std::to_string(rank) + ": cudaMalloc: out of memory (injected)",
                  ErrorKind::kRuntime);
    const char* stall = std::getenv("FAKE_GPU_STALL_RANK");
    stall_collectives_ = stall != nullptr && std::atoi(stall) == rank;
  }
  std::string GpuName() const override { return "host stand-in"; }
  // GPU `gpu` of the node; with FAKE_GPU_OWN_BUS=1 every process has a GPU
  // of its own (one visible device per task, as CUDA_VISIBLE_DEVICES sets).
  std::string GpuBusId(int gpu) override {
    const char* own = std::getenv("FAKE_GPU_OWN_BUS");
    const char* world = std::getenv("OMPI_COMM_WORLD_RANK");
    if (own != nullptr && std::string(own) == "1")
      return "0000:" + std::string(world != nullptr ? world : "?") + "0:00.0";
    return "0000:0" + std::to_string(gpu) + ":00.0";
  }

  void Upload(const HostBuffers& host, bool timing_only) override {
    data_.data.assign(plan_->buffers.size(), {});
    for (std::size_t id = 0; id < plan_->buffers.size(); ++id) {
      if (plan_->buffers[id].rank != rank_) continue;
      if (!timing_only && id < host.data.size()) data_.data[id] = host.data[id];
      data_.data[id].resize(static_cast<std::size_t>(plan_->buffers[id].count), 0.0f);
    }
  }
  void Download(HostBuffers& host) override {
    if (host.data.size() < data_.data.size()) host.data.resize(data_.data.size());
    for (std::size_t id = 0; id < data_.data.size(); ++id)
      if (plan_->buffers[id].rank == rank_) host.data[id] = data_.data[id];
  }
  void StartClock() override {}

  void StartLocal(OpId id) override {
    const Op& op = plan_->ops[id];
    Begin(id);
    if (op.kind == OpKind::kCollective) {
      if (nccl_state_ != 2) throw Error("collective before NCCL was ready", ErrorKind::kRuntime);
      if (stall_collectives_) work_[id].polls_left = -1;  // never
      return;
    }
    work_[id].action = [this, id] { ApplyOpData(*plan_, id, data_); };
  }
  void StartSendStaging(OpId send) override {
    const Op& op = plan_->ops[send];
    Begin(send);
    std::vector<float>& block = Take(send);
    // Garbage until the "copy" completes: MPI must not read it before.
    block.assign(static_cast<std::size_t>(op.src.count), std::nanf(""));
    work_[send].action = [this, send] {
      const Op& o = plan_->ops[send];
      const float* from = data_.data[o.src.buffer].data() + o.src.offset;
      std::copy(from, from + o.src.count, work_[send].blocks.front().begin());
    };
  }
  const void* SendBuffer(OpId send) override {
    const Op& op = plan_->ops[send];
    if (path_ == GpuTransferPath::kDeviceDirect)
      return data_.data[op.src.buffer].data() + op.src.offset;
    if (work_[send].blocks.empty()) throw Error("send before staging", ErrorKind::kRuntime);
    return work_[send].blocks.front().data();
  }
  void* RecvBuffer(OpId recv, std::int64_t count, bool into_place) override {
    const Op& op = plan_->ops[recv];
    work_[recv].in_place = path_ == GpuTransferPath::kDeviceDirect && into_place;
    if (work_[recv].in_place) return data_.data[op.dst.buffer].data() + op.dst.offset;
    std::vector<float>& block = Take(recv);
    block.assign(static_cast<std::size_t>(count), 0.0f);
    return block.data();
  }
  bool FinishRecv(OpId recv) override {
    if (work_[recv].in_place) return false;
    Begin(recv);
    work_[recv].action = [this, recv] {
      const Op& o = plan_->ops[recv];
      const std::vector<float>& block = work_[recv].blocks.front();
      const std::int64_t count = std::min<std::int64_t>(o.dst.count, block.size());
      CombineHostData(o.reduce, block.data(), data_.data[o.dst.buffer].data() + o.dst.offset,
                      count);
    };
    return true;
  }
  bool Done(OpId id) override {
    Work& w = work_[id];
    if (w.polls_left < 0) return false;
    if (w.polls_left > 0) {
      --w.polls_left;
      return false;
    }
    if (w.action) {  // the work takes effect when it completes, as on a GPU
      w.action();
      w.action = nullptr;
    }
    if (w.end_ns == 0) w.end_ns = Now();
    return true;
  }
  // FAKE_GPU_CLOCK_SKEW_NS: device times mapped onto the host clock come
  // out that much late, as an error in the reference event's host time would.
  DeviceTimes Times(OpId id) override {
    const char* skew_text = std::getenv("FAKE_GPU_CLOCK_SKEW_NS");
    const double skew = skew_text != nullptr ? std::atof(skew_text) : 0.0;
    return {work_[id].start_ns + skew, work_[id].end_ns + skew};
  }
  void Release(OpId id) override {
    g_blocks_held -= static_cast<int>(work_[id].blocks.size());
    work_[id].blocks.clear();
  }

  bool HasNccl() const override { return true; }
  std::vector<char> NcclUniqueId() override {
    std::vector<char> id(kNcclUniqueIdBytes);
    for (int i = 0; i < kNcclUniqueIdBytes; ++i) id[i] = static_cast<char>(i * 7 + 1);
    return id;
  }
  void InitNccl(const std::vector<char>& unique_id, int, int) override {
    if (unique_id != NcclUniqueId())
      throw Error("rank " + std::to_string(rank_) + ": the NCCL unique id did not arrive intact",
                  ErrorKind::kRuntime);
    nccl_state_ = 1;
  }
  bool NcclReady() override {
    if (nccl_state_ == 1 && ++nccl_polls_ >= kPollsUntilDone) nccl_state_ = 2;
    return nccl_state_ == 2;
  }
  void Close() override {
    if (nccl_state_ == 0) return;
    nccl_state_ = 0;
    // One write: the processes share stderr, pieces would interleave.
    std::cerr << ("fake_gpu_rank: rank " + std::to_string(rank_) + ": communicator finalized\n")
              << std::flush;
  }
  void Abort() override {
    ++g_aborts;
    std::cerr << ("fake_gpu_rank: rank " + std::to_string(rank_) + ": communicator aborted\n")
              << std::flush;
  }

 private:
  struct Work {
    int polls_left = 0;
    double start_ns = 0;
    double end_ns = 0;
    bool in_place = false;
    std::function<void()> action;  // applied by the Done() that says yes
    std::vector<std::vector<float>> blocks;
  };
  static double Now() {
    return std::chrono::duration<double, std::nano>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void Begin(OpId id) {
    work_[id].polls_left = kPollsUntilDone;
    work_[id].start_ns = Now();
    work_[id].end_ns = 0;
  }
  std::vector<float>& Take(OpId id) {
    ++g_blocks_held;
    work_[id].blocks.emplace_back();
    return work_[id].blocks.back();
  }

  const Plan* plan_ = nullptr;
  int rank_ = 0;
  int gpu_ = 0;
  GpuTransferPath path_ = GpuTransferPath::kStagedPinned;
  bool stall_collectives_ = false;
  int nccl_state_ = 0;  // 0 none, 1 initialising, 2 ready
  int nccl_polls_ = 0;
  HostBuffers data_;
  std::vector<Work> work_;
};

std::size_t DeviceEvents(const std::vector<Event>& events) {
  std::size_t n = 0;
  for (const Event& e : events) n += e.clock == ClockKind::kCudaEvent;
  return n;
}

// Ops that start before an op they depend on ended (same rank, one clock).
std::size_t OrderViolations(const Plan& plan, const std::vector<Event>& events) {
  std::vector<const Event*> of_op(plan.ops.size(), nullptr);
  for (const Event& e : events)
    if (e.op >= 0 && e.op < static_cast<OpId>(of_op.size())) of_op[e.op] = &e;
  std::size_t bad = 0;
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[id];
    for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d)
      if (of_op[id] == nullptr || of_op[*d] == nullptr || of_op[id]->start_ns < of_op[*d]->end_ns)
        ++bad;
  }
  return bad;
}

// ZeRO training through the device: Adam, matrix products and the
// gradient collectives, checked against the single-device model.
int RunZero(char** argv, const ProcessGroupInfo& group) {
  ZeroScenario scenario;
  scenario.params.ranks = group.size;
  scenario.params.stage = std::atoi(argv[2]);
  scenario.params.steps = std::atoi(argv[3]);
  scenario.backend = "mpi";
  std::unique_ptr<PreparedZero> prepared = PrepareZero(scenario);
  const std::size_t ops = prepared->zero.plan.ops.size();
  Executor executor(CreateBackend("mpi"), std::move(prepared->zero.plan), prepared->topology, {});
  VectorSink sink;
  executor.RunToEnd(sink);
  const ZeroSummary summary =
      SummarizeZero(*prepared, sink.events, executor.backend(), &executor.plan());
  if (group.rank == 0)
    std::cout << "ok correct=" << (summary.check.checked && summary.check.correct)
              << " events=" << sink.events.size() << " ops=" << ops
              << " device_events=" << DeviceEvents(sink.events) << " held=" << g_blocks_held.load()
              << " order=" << OrderViolations(executor.plan(), sink.events)
              << " placement=" << executor.backend().placement() << "\n";
  return 0;
}

int Run(int argc, char** argv, ProcessGroupInfo& group) {
  if (argc < 4) throw Error("usage: fake_gpu_rank COLLECTIVE ALGO SIZE_BYTES [TIMEOUT_S]",
                            ErrorKind::kInvalidInput);
  // One GPU per process on the node, unless FAKE_GPU_COUNT says otherwise.
  SetGpuCounter([] {
    const char* count = std::getenv("FAKE_GPU_COUNT");
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    return std::atoi(count != nullptr ? count : local != nullptr ? local : "1");
  });
  SetRankDeviceFactory([] { return std::make_unique<HostRankDevice>(); });
  MpiOptions mpi;
  mpi.device = MpiDevice::kGpu;
  if (argc > 4) mpi.timeout_ns = std::atof(argv[4]) * 1e9;
  group = JoinProcessGroup("mpi", mpi);
  if (std::string(argv[1]) == "zero") return RunZero(argv, group);

  CollectiveScenario scenario;
  scenario.kind = ParseCollectiveKind(argv[1]);
  scenario.algo = ParseCollectiveAlgo(argv[2]);
  scenario.ranks = group.size;
  scenario.size_bytes = std::atoll(argv[3]);
  scenario.backend = "mpi";
  std::unique_ptr<PreparedCollective> prepared = PrepareCollective(scenario);
  Executor executor(CreateBackend("mpi"), prepared->plan, prepared->topology, {});
  VectorSink sink;
  executor.RunToEnd(sink);
  const CollectiveOutcomeSummary summary =
      SummarizeCollective(*prepared, 0, sink.events.size(), executor.backend());
  const std::size_t device_events = DeviceEvents(sink.events);
  if (group.rank == 0)
    std::cout << "ok correct=" << (summary.checked && summary.verify.correct)
              << " events=" << sink.events.size() << " ops=" << prepared->plan.ops.size()
              << " device_events=" << device_events << " held=" << g_blocks_held.load()
              << " order=" << OrderViolations(executor.plan(), sink.events)
              << " placement=" << executor.backend().placement() << "\n";
  return 0;
}

}  // namespace
}  // namespace shardlab

int main(int argc, char** argv) {
  shardlab::ProcessGroupInfo group;
  int code = 0;
  try {
    code = shardlab::Run(argc, argv, group);
  } catch (const shardlab::JobWideError& e) {
    if (group.rank == 0 || shardlab::CurrentProcessGroup().rank == 0)
      std::cerr << "fake_gpu_rank: error: " << e.what() << "\n";
    code = 1;
  } catch (const std::exception& e) {
    std::cerr << "fake_gpu_rank: error: " << e.what() << "\n";
    code = 1;
  }
  std::cout.flush();
  std::cerr.flush();
  shardlab::LeaveProcessGroup(code);
  return code;
}
