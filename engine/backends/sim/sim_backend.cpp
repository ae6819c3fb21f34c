#include "engine/backends/sim/sim_backend.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "engine/backends/sim/event_queue.h"
#include "engine/backends/sim/flow_network.h"
#include "engine/backends/sim/library_calls.h"
#include "engine/core/error.h"
#include "engine/plan/host_data.h"
#include "engine/plan/op_graph.h"
#include "engine/plan/validate.h"

namespace shardlab {
namespace {

// The resources a route crosses, cached per (src GPU, dst GPU).
// Map nodes never move, so flows may keep a span of `resources`.
struct RouteResources {
  std::vector<std::int32_t> resources;
  TimeNs latency_ns = 0;
  bool local = false;  // both ranks on one GPU: a copy in device memory
};

class SimBackend final : public Backend {
 public:
  std::string name() const override { return "sim"; }

  void Load(const Plan& plan, const Topology& topology, const RunOptions& options) override {
    plan_ = &plan;
    topology_ = &topology;
    options_ = options;
    MapRanks();
    library_.Load(plan, topology, rank_gpu_node_);  // kCollective ops: the NCCL model
    graph_ = BuildOpGraph(plan);

    // Resources: both directions of every link, then nodes that limit what
    // passes through them.
    capacities_.clear();
    for (const Link& link : topology.links) {
      capacities_.push_back(link.gbps);
      capacities_.push_back(link.gbps);
    }
    node_resource_.assign(topology.nodes.size(), -1);
    for (std::size_t n = 0; n < topology.nodes.size(); ++n) {
      if (topology.nodes[n].forward_gbps > 0) {
        node_resource_[n] = static_cast<std::int32_t>(capacities_.size());
        capacities_.push_back(topology.nodes[n].forward_gbps);
      }
    }
    // The model of a real machine: one HBM resource per GPU node, and the
    // time by which the host has issued each op (a transfer is one unit).
    hbm_resource_.assign(topology.nodes.size(), -1);
    if (options.shared_device_memory) {
      for (std::int32_t node : topology.gpus) {
        hbm_resource_[node] = static_cast<std::int32_t>(capacities_.size());
        capacities_.push_back(topology.nodes[node].device.memory_gbps);
      }
    }
    issue_ready_ns_.assign(plan.ops.size(), 0);
    host_spans_.clear();
    if (options.op_issue_ns > 0) {
      double issued = 0;
      for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
        const Op& op = plan.ops[id];
        const bool transfer = op.kind == OpKind::kSend || op.kind == OpKind::kRecv;
        const bool second_half = transfer && op.match >= 0 && op.match < id;
        if (second_half) {
          issue_ready_ns_[id] = issue_ready_ns_[op.match];
        } else {
          // The host lane: this unit's issue, on the row of the rank whose
          // op it is (a transfer is named by its send, as the device
          // backends name it); one thread, so the spans are back to back.
          const OpId unit = transfer && op.kind == OpKind::kRecv && op.match >= 0 ? op.match : id;
          host_spans_.push_back({unit, plan.ops[unit].rank, issued, issued + options.op_issue_ns});
          issued += options.op_issue_ns;
          issue_ready_ns_[id] = issued;
        }
      }
    }
    hbm_resource_index_.resize(capacities_.size());
    for (std::size_t i = 0; i < hbm_resource_index_.size(); ++i)
      hbm_resource_index_[i] = static_cast<std::int32_t>(i);
    route_cache_.clear();
    routes_ = std::make_unique<RouteTable>(topology);
    last_route_.assign(static_cast<std::size_t>(plan.num_ranks), LastRoute{});
    memory_.Load(plan);
    Reset();
  }

  void Reset() override {
    const Plan& plan = *plan_;
    const std::size_t n = plan.ops.size();
    pending_ = graph_.pred_count;
    ready_.assign(n, 0);
    start_ns_.assign(n, 0);
    flow_op_.clear();
    held_.clear();
    done_.assign(n, 0);
    completed_ = 0;
    now_ = 0;
    seq_ = 0;
    heap_.clear();
    network_.Reset(capacities_);
    remaining_per_step_.assign(static_cast<std::size_t>(std::max(plan.num_steps, 0)), 0);
    for (const Op& op : plan.ops) ++remaining_per_step_[op.step];
    lowest_open_step_ = 0;
    AdvanceOpenStep();
    started_ = false;
    memory_.Reset();
    library_.Reset();
    if (!options_.timing_only) {
      AllocateHostBuffers(plan, options_.seed, data_);
    } else {
      data_.data.clear();
    }
  }

  void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>& cancel) override {
    sink_ = &sink;
    if (!started_) {
      started_ = true;
      for (OpId id = 0; id < static_cast<OpId>(plan_->ops.size()); ++id)
        if (pending_[id] == 0) MarkReady(id);
    }
    std::uint32_t poll = 0;
    while (lowest_open_step_ <= last_step && lowest_open_step_ < plan_->num_steps) {
      if ((++poll & 1023) == 0 && cancel.load(std::memory_order_relaxed))
        throw Error("run cancelled", ErrorKind::kCancelled);
      if (heap_.empty()) {
        if (!held_.empty()) throw Error(FaultReport(), ErrorKind::kRuntime);
        throw Error("simulation stalled at " + std::to_string(now_) + " ns with step " +
                        std::to_string(lowest_open_step_) + " unfinished (plan deadlock)",
                    ErrorKind::kRuntime);
      }
      const SimEvent ev = heap_.Take();
      now_ = ev.time;
      switch (ev.kind) {
        case SimEventKind::kOpEnd: FinishOp(ev.id, start_ns_[ev.id]); break;
        case SimEventKind::kLatencyDone: StartFlow(ev.id); break;
        case SimEventKind::kFlowEnd:
          if (ev.version == network_.version(ev.id)) EndFlow(ev.id);
          break;
        case SimEventKind::kIssued: Begin(ev.id); break;
      }
      heap_.Settle();
    }
    sink_ = nullptr;
  }

  std::span<const float> BufferData(BufferId id) const override {
    if (options_.timing_only || id < 0 || id >= static_cast<BufferId>(data_.data.size()))
      return {};
    return data_.data[id];
  }

  std::size_t completed_ops() const override { return completed_; }
  const MemoryUsage* memory() const override { return &memory_.usage(); }

  // The modelled host lane (RunOptions::op_issue_ns): the issues the host
  // has begun by the current simulated time; after a whole run, all.
  std::vector<HostEnqueueSpan> host_lane() const override {
    std::vector<HostEnqueueSpan> out;
    if (!started_) return out;
    for (const HostEnqueueSpan& s : host_spans_)
      if (s.start_ns < now_ || completed_ == plan_->ops.size()) out.push_back(s);
    return out;
  }

 private:
  void MapRanks() {
    const int gpus = topology_->num_gpus();
    rank_gpu_node_.assign(plan_->num_ranks, -1);
    rank_gpu_index_.assign(plan_->num_ranks, -1);
    for (int r = 0; r < plan_->num_ranks; ++r) {
      const int gpu = options_.rank_to_gpu.empty() ? r : options_.rank_to_gpu.at(r);
      if (gpu < 0 || gpu >= gpus)
        throw Error("the plan has " + std::to_string(plan_->num_ranks) + " ranks but topology '" +
                    topology_->name + "' has " + std::to_string(gpus) + " GPUs (rank " +
                    std::to_string(r) + " has no GPU)");
      rank_gpu_node_[r] = topology_->gpus[gpu];
      rank_gpu_index_[r] = gpu;
    }
  }

  const DeviceSpec& DeviceOf(int rank) const {
    return topology_->nodes[rank_gpu_node_[rank]].device;
  }

  void Push(TimeNs time, SimEventKind kind, std::int32_t id, std::uint32_t version = 0) {
    heap_.Push(SimEvent{time, seq_++, kind, id, version});
  }

  void AdvanceOpenStep() {
    while (lowest_open_step_ < static_cast<int>(remaining_per_step_.size()) &&
           remaining_per_step_[lowest_open_step_] == 0)
      ++lowest_open_step_;
  }

  // Time an op takes on its own rank's device: the roofline of the whole
  // op, max(flops / rate, bytes / memory bandwidth). A compute op's kernels
  // are summed first, so a memory-bound softmax inside a GEMM-heavy op is
  // hidden under the GEMMs' time.
  TimeNs LocalOpNs(const Op& op) const {
    const DeviceSpec& dev = DeviceOf(op.rank);
    // Half precision runs on tensor cores: judged by what the op writes
    // (a compute op's first kernel output when it names no dst).
    BufferSlice written = op.dst;
    if (!written.valid() && op.kernel_count > 0) written = plan_->kernels[op.kernel_begin].c;
    const bool half = written.valid() && plan_->buffers[written.buffer].dtype != DType::kF32;
    const double tflops = half ? dev.fp16_tflops : dev.fp32_tflops;
    const TimeNs compute_ns = op.flops > 0 && tflops > 0 ? op.flops / (tflops * 1e3) : 0;
    // Memory traffic: a copy reads and writes, a reduction reads two and writes one.
    double touched = static_cast<double>(op.bytes);
    if (op.kind == OpKind::kCopy) touched *= 2;
    if (op.kind == OpKind::kReduce) touched *= 3;
    const TimeNs memory_ns = dev.memory_gbps > 0 ? touched / dev.memory_gbps : 0;
    return std::max(compute_ns, memory_ns);
  }

  void MarkReady(OpId id) {
    const Op& op = plan_->ops[id];
    ready_[id] = 1;
    if (HeldByFault(id)) return;
    if (op.kind == OpKind::kCollective) {
      StartLibraryCall(id);
      return;
    }
    if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
      if (ready_[op.match]) TryStart(op.kind == OpKind::kSend ? id : op.match);
      return;
    }
    TryStart(id);
  }

  // Starts a ready op (a transfer by its send) once the host has issued it.
  void TryStart(OpId id) {
    TimeNs at = issue_ready_ns_[id];
    // A graph replay: the GPU starts a dependent op a little after its inputs are done.
    if (options_.graph_op_ns > 0 && graph_.pred_count[id] > 0) at = std::max(at, now_ + options_.graph_op_ns);
    if (at > now_) {
      Push(at, SimEventKind::kIssued, id);
      return;
    }
    Begin(id);
  }

  void Begin(OpId id) {
    const Op& op = plan_->ops[id];
    if (op.kind == OpKind::kSend) {
      StartTransfer(id);
      return;
    }
    start_ns_[id] = now_;
    memory_.OnOpStart(id);
    const std::int32_t hbm = hbm_resource_[rank_gpu_node_[op.rank]];
    if (hbm >= 0) {
      const double touched = MemoryTraffic(op);
      const DeviceSpec& dev = DeviceOf(op.rank);
      const TimeNs memory_ns = dev.memory_gbps > 0 ? touched / dev.memory_gbps : 0;
      // Memory-bound: the op's traffic shares the GPU's HBM with the others.
      if (touched > 0 && memory_ns >= LocalOpNs(op)) {
        StartMemoryFlow(id, touched * options_.faults.SlowFactor(op.rank), hbm);
        return;
      }
    }
    Push(now_ + LocalOpNs(op) * options_.faults.SlowFactor(op.rank), SimEventKind::kOpEnd, id);
  }

  // A library collective (--algo nccl): each rank's op starts when the rank
  // issues it; the call ends the NCCL model's time after the last arrives.
  void StartLibraryCall(OpId id) {
    start_ns_[id] = now_;
    memory_.OnOpStart(id);
    if (!library_.Arrive(id)) return;
    for (OpId member : library_.members(id))
      Push(now_ + library_.duration_ns(id), SimEventKind::kOpEnd, member);
  }

  // Bytes an op reads and writes in device memory.
  static double MemoryTraffic(const Op& op) {
    double touched = static_cast<double>(op.bytes);
    if (op.kind == OpKind::kCopy) touched *= 2;
    if (op.kind == OpKind::kReduce) touched *= 3;
    return touched;
  }

  // A flow of `bytes` through one GPU's HBM, on behalf of op `id` (a send:
  // the whole transfer).
  void StartMemoryFlow(OpId id, double bytes, std::int32_t hbm) {
    changed_.clear();
    const std::int32_t flow = network_.Add(
        now_, bytes, std::span<const std::int32_t>(&hbm_resource_index_[static_cast<std::size_t>(hbm)], 1),
        changed_);
    if (static_cast<std::size_t>(flow) >= flow_op_.size()) flow_op_.resize(flow + 1, kNoOp);
    flow_op_[flow] = id;
    Reschedule();
  }

  const RouteResources& RouteOf(int src_rank, int dst_rank) {
    // Most ranks send to the same peer step after step (a ring): remember
    // each rank's last route before hashing. Map nodes never move.
    LastRoute& last = last_route_[src_rank];
    if (last.peer == dst_rank) return *last.route;
    const RouteResources& found = LookUpRoute(src_rank, dst_rank);
    last = LastRoute{dst_rank, &found};
    return found;
  }

  const RouteResources& LookUpRoute(int src_rank, int dst_rank) {
    const std::int32_t a = rank_gpu_node_[src_rank], b = rank_gpu_node_[dst_rank];
    const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
    auto it = route_cache_.find(key);
    if (it != route_cache_.end()) return it->second;
    RouteResources rr;
    if (a == b) {
      rr.local = true;
    } else {
      // The table keeps the routing graph: building it per pair dominated
      // paper-sized 3D runs, which use thousands of pairs.
      const Route& route = routes_->Between(rank_gpu_index_[src_rank], rank_gpu_index_[dst_rank]);
      for (const LinkHop& hop : route.hops)
        rr.resources.push_back(2 * hop.link + (hop.forward ? 0 : 1));
      for (std::int32_t node : route.via_nodes)
        if (node_resource_[node] >= 0) rr.resources.push_back(node_resource_[node]);
      rr.latency_ns = route.latency_ns;
    }
    return route_cache_.emplace(key, rr).first->second;
  }

  void StartTransfer(OpId send) {
    const Op& op = plan_->ops[send];
    start_ns_[send] = start_ns_[op.match] = now_;
    memory_.OnOpStart(send);
    memory_.OnOpStart(op.match);
    const RouteResources& rr = RouteOf(op.rank, op.peer);
    if (rr.local) {  // two ranks sharing one GPU: a device-to-device copy
      const std::int32_t hbm = hbm_resource_[rank_gpu_node_[op.rank]];
      if (hbm >= 0) {  // reads the source, writes (or reads and writes) the destination
        const Op& recv = plan_->ops[op.match];
        const double traffic =
            static_cast<double>(op.bytes) * (recv.reduce == ReduceOp::kNone ? 2.0 : 3.0);
        StartMemoryFlow(send, traffic * options_.faults.SlowFactor(op.rank), hbm);
        return;
      }
      const DeviceSpec& dev = DeviceOf(op.rank);
      const TimeNs ns = (dev.memory_gbps > 0 ? 2.0 * static_cast<double>(op.bytes) / dev.memory_gbps : 0) *
                        options_.faults.SlowFactor(op.rank);
      Push(now_ + ns, SimEventKind::kOpEnd, op.match);  // the recv's end completes both
      return;
    }
    Push(now_ + rr.latency_ns, SimEventKind::kLatencyDone, send);
  }

  void StartFlow(OpId send) {
    const Op& op = plan_->ops[send];
    const RouteResources& rr = RouteOf(op.rank, op.peer);
    changed_.clear();
    // A slow sender's transfer moves FACTOR times its bytes through its links.
    const std::int32_t flow = network_.Add(
        now_, static_cast<double>(op.bytes) * options_.faults.SlowFactor(op.rank), rr.resources,
        changed_);
    if (static_cast<std::size_t>(flow) >= flow_op_.size()) flow_op_.resize(flow + 1, kNoOp);
    flow_op_[flow] = send;
    Reschedule();
  }

  void EndFlow(std::int32_t flow) {
    const OpId id = flow_op_[flow];
    changed_.clear();
    network_.Remove(now_, flow, changed_);
    Reschedule();
    const Op& op = plan_->ops[id];
    if (op.kind == OpKind::kSend) {
      FinishOp(op.match, start_ns_[id]);
    } else {
      FinishOp(id, start_ns_[id]);
    }
  }

  void Reschedule() {
    for (std::int32_t f : changed_)
      Push(network_.FinishTime(f), SimEventKind::kFlowEnd, f, network_.version(f));
  }

  // --- faults (faults.h) ---------------------------------------------------

  // A failed rank runs nothing from its failure's step on, and a transfer
  // whose route crosses a failed link never starts: both are held, and the
  // run stalls once everything else has finished.
  bool HeldByFault(OpId id) {
    const Faults& f = options_.faults;
    if (f.failed_ranks.empty() && f.failed_links.empty()) return false;
    const Op& op = plan_->ops[id];
    bool held = f.RankFailedAt(op.rank, op.step);
    if (!held && (op.kind == OpKind::kSend || op.kind == OpKind::kRecv)) {
      held = f.RankFailedAt(op.peer, op.step);
      const OpId send = op.kind == OpKind::kSend ? id : op.match;
      const Op& s = plan_->ops[send];
      if (!held && !f.failed_links.empty() && !RouteOf(s.rank, s.peer).local) {
        const Route& route = routes_->Between(rank_gpu_index_[s.rank], rank_gpu_index_[s.peer]);
        for (const LinkFailure& lf : f.failed_links)
          for (const LinkHop& hop : route.hops)
            held = held || (hop.link == lf.link.link && op.step >= lf.step);
      }
    }
    if (held) held_.push_back(id);
    return held;
  }

  // What the run was waiting for when it stopped: the failure and the
  // first op it held (a collective's number when it has one), who waited.
  std::string FaultReport() const {
    const Faults& f = options_.faults;
    // The first collective call it held (what the others never got to
    // finish: "never joined collective #3"), else the first op it held.
    OpId first = held_.front();
    for (OpId id : held_) {
      const Op& o = plan_->ops[id];
      const Op& f = plan_->ops[first];
      const bool call = o.collective_seq >= 0, first_call = f.collective_seq >= 0;
      if ((call && !first_call) || (call == first_call && o.step < f.step)) first = id;
    }
    const Op& op = plan_->ops[first];
    auto where = [](const Op& o) {
      std::string w = "step " + std::to_string(o.step);
      if (o.collective_seq >= 0) w = "collective #" + std::to_string(o.collective_seq) + " (" + w + ")";
      return w;
    };
    std::string cause;
    for (const RankFailure& rf : f.failed_ranks) {
      const bool this_one = (op.rank == rf.rank || ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) &&
                                                    op.peer == rf.rank)) &&
                            op.step >= rf.step;
      if (this_one && cause.empty())
        cause = "rank " + std::to_string(rf.rank) + " failed at step " + std::to_string(rf.step) +
                " (fail_rank " + std::to_string(rf.rank) + "@" + std::to_string(rf.step) +
                ") and never joined " + where(op);
    }
    if (cause.empty()) {
      for (const LinkFailure& lf : f.failed_links)
        if (cause.empty() && op.step >= lf.step)
          cause = "link " + lf.link.a + "-" + lf.link.b + " failed at step " +
                  std::to_string(lf.step) + " (fail_link), and the transfer " +
                  std::to_string(op.kind == OpKind::kSend ? op.rank : op.peer) + " -> " +
                  std::to_string(op.kind == OpKind::kSend ? op.peer : op.rank) + " of " + where(op) +
                  " needs it";
    }
    // Ranks left with unfinished work of their own: they waited.
    std::vector<char> waiting(static_cast<std::size_t>(plan_->num_ranks), 0);
    for (OpId id = 0; id < static_cast<OpId>(plan_->ops.size()); ++id) {
      const Op& o = plan_->ops[id];
      if (!done_[id] && !f.RankFailedAt(o.rank, o.step)) waiting[static_cast<std::size_t>(o.rank)] = 1;
    }
    std::string ranks;
    int count = 0;
    for (int r = 0; r < plan_->num_ranks; ++r) {
      if (!waiting[static_cast<std::size_t>(r)]) continue;
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
      ++count;
    }
    std::string report = cause;
    if (count > 0) report += "; " + std::string(count == 1 ? "rank " : "ranks ") + ranks + " waited for it";
    report += "; the run stopped at " + FormatTime(now_) + " with " + std::to_string(completed_) +
              " of " + std::to_string(plan_->ops.size()) + " ops done";
    return report;
  }

  // Completes an op (for a recv: the whole transfer, send included).
  void FinishOp(OpId id, TimeNs start_ns) {
    const Op& op = plan_->ops[id];
    if (!options_.timing_only) ApplyOpData(*plan_, id, data_);
    if (!options_.timing_only && op.kind == OpKind::kCollective) library_.ApplyData(*plan_, id, data_);
    if (op.kind == OpKind::kRecv) Complete(op.match, start_ns);
    Complete(id, start_ns);
  }

  void Complete(OpId id, TimeNs start_ns) {
    const Op& op = plan_->ops[id];
    Event e;
    e.op = id;
    e.rank = op.rank;
    e.peer = op.peer;
    e.step = op.step;
    e.collective_seq = op.collective_seq;
    e.lane = op.lane;
    e.kind = op.kind;
    e.clock = ClockKind::kSimulated;
    e.start_ns = start_ns;
    e.end_ns = now_;
    e.bytes = op.bytes;
    sink_->OnEvent(e);
    memory_.OnOpEnd(id);
    done_[id] = 1;
    ++completed_;
    if (--remaining_per_step_[op.step] == 0) AdvanceOpenStep();
    for (const OpId* w = graph_.successors_begin(id); w != graph_.successors_end(id); ++w)
      if (--pending_[*w] == 0) MarkReady(*w);
  }

  const Plan* plan_ = nullptr;
  const Topology* topology_ = nullptr;
  RunOptions options_;
  OpGraph graph_;
  std::vector<std::int32_t> rank_gpu_node_;
  std::vector<Gbps> capacities_;
  std::vector<std::int32_t> node_resource_;
  std::unordered_map<std::uint64_t, RouteResources> route_cache_;
  std::unique_ptr<RouteTable> routes_;  // routes between GPUs, graph built once
  std::vector<int> rank_gpu_index_;     // per rank: index into topology.gpus
  struct LastRoute {
    std::int32_t peer = -1;
    const RouteResources* route = nullptr;
  };
  std::vector<LastRoute> last_route_;
  std::vector<OpId> held_;  // ops a fault holds back, in the order they became ready
  std::vector<char> done_;  // per op: completed (for the fault report)  // per source rank: its last route looked up
  std::vector<std::int32_t> hbm_resource_;        // per node: its HBM resource, or -1
  std::vector<std::int32_t> hbm_resource_index_;  // i -> i: stable storage for flow spans
  std::vector<TimeNs> issue_ready_ns_;            // per op: when the host has issued it
  std::vector<HostEnqueueSpan> host_spans_;       // the issues of the host lane, in order

  // Run state (reset by Reset()).
  std::vector<std::int32_t> pending_;
  std::vector<char> ready_;
  std::vector<TimeNs> start_ns_;
  std::vector<OpId> flow_op_;
  std::vector<std::int32_t> changed_;
  std::vector<std::int64_t> remaining_per_step_;
  int lowest_open_step_ = 0;
  bool started_ = false;
  EventQueue heap_;
  FlowNetwork network_;
  LibraryCalls library_;
  HostBuffers data_;
  MemoryTracker memory_;
  TimeNs now_ = 0;
  std::uint64_t seq_ = 0;
  std::size_t completed_ = 0;
  EventSink* sink_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> CreateSimBackend() { return std::make_unique<SimBackend>(); }

}  // namespace shardlab
