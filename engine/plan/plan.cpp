#include "engine/plan/plan.h"

#include <algorithm>

namespace shardlab {

PlanBuilder::PlanBuilder(std::string name, int num_ranks) {
  plan_.name = std::move(name);
  plan_.num_ranks = num_ranks;
}

BufferId PlanBuilder::AddBuffer(int rank, std::string name, std::int64_t count, DType dtype,
                                BufferInit init) {
  Buffer buffer;
  buffer.name = std::move(name);
  buffer.rank = rank;
  buffer.count = count;
  buffer.dtype = dtype;
  buffer.init = init;
  return AddBuffer(std::move(buffer));
}

BufferId PlanBuilder::AddBuffer(Buffer buffer) {
  plan_.buffers.push_back(std::move(buffer));
  return static_cast<BufferId>(plan_.buffers.size() - 1);
}

OpId PlanBuilder::AddCompute(Op op, const std::vector<KernelCall>& kernels,
                             const std::vector<OpId>& deps) {
  op.kind = OpKind::kCompute;
  op.kernel_begin = static_cast<std::int32_t>(plan_.kernels.size());
  op.kernel_count = static_cast<std::int32_t>(kernels.size());
  for (const KernelCall& call : kernels) {
    op.flops += KernelFlops(call);
    // Operands in the element type of what the kernel writes.
    const bool typed = call.c.buffer >= 0 && call.c.buffer < static_cast<BufferId>(plan_.buffers.size());
    op.bytes += KernelBytes(call, typed ? DTypeBytes(plan_.buffers[call.c.buffer].dtype) : 4);
  }
  plan_.kernels.insert(plan_.kernels.end(), kernels.begin(), kernels.end());
  return AddOp(op, deps);
}

void PlanBuilder::NoteCollective(int seq, CollectiveNote note) {
  if (seq < 0) return;
  if (static_cast<std::size_t>(seq) >= plan_.collectives.size()) plan_.collectives.resize(seq + 1);
  plan_.collectives[seq] = std::move(note);
}

// Grows geometrically: generators that append many small collectives call
// Reserve once per collective with the running total, and an exact reserve
// would copy the whole plan each time (quadratic in its size).
void PlanBuilder::Reserve(std::size_t ops, std::size_t deps) {
  if (ops > plan_.ops.capacity()) plan_.ops.reserve(std::max(ops, 2 * plan_.ops.capacity()));
  if (deps > plan_.deps.capacity()) plan_.deps.reserve(std::max(deps, 2 * plan_.deps.capacity()));
}

OpId PlanBuilder::AddOp(Op op, std::initializer_list<OpId> deps) {
  op.dep_begin = static_cast<std::uint32_t>(plan_.deps.size());
  op.dep_count = static_cast<std::uint32_t>(deps.size());
  plan_.deps.insert(plan_.deps.end(), deps.begin(), deps.end());
  plan_.ops.push_back(op);
  return static_cast<OpId>(plan_.ops.size() - 1);
}

OpId PlanBuilder::AddOp(Op op, const std::vector<OpId>& deps) {
  op.dep_begin = static_cast<std::uint32_t>(plan_.deps.size());
  op.dep_count = static_cast<std::uint32_t>(deps.size());
  plan_.deps.insert(plan_.deps.end(), deps.begin(), deps.end());
  plan_.ops.push_back(op);
  return static_cast<OpId>(plan_.ops.size() - 1);
}

PlanBuilder::Transfer PlanBuilder::AddTransfer(int from, int to, BufferSlice src, BufferSlice dst,
                                               ReduceOp reduce, int step, OpTags tags,
                                               const std::vector<OpId>& send_deps,
                                               const std::vector<OpId>& recv_deps,
                                               int collective_seq) {
  const OpId send_id = static_cast<OpId>(plan_.ops.size());
  const OpId recv_id = send_id + 1;
  const Bytes bytes = src.count * DTypeBytes(plan_.buffers.at(src.buffer).dtype);

  Op send;
  send.kind = OpKind::kSend;
  send.lane = Lane::kSend;
  send.rank = from;
  send.peer = to;
  send.match = recv_id;
  send.step = step;
  send.collective_seq = collective_seq;
  send.src = src;
  send.bytes = bytes;
  send.tags = tags;
  AddOp(send, send_deps);

  Op recv;
  recv.kind = OpKind::kRecv;
  recv.lane = Lane::kRecv;
  recv.reduce = reduce;
  recv.rank = to;
  recv.peer = from;
  recv.match = send_id;
  recv.step = step;
  recv.collective_seq = collective_seq;
  recv.dst = dst;
  recv.bytes = bytes;
  recv.tags = tags;
  AddOp(recv, recv_deps);
  return {send_id, recv_id};
}

Plan PlanBuilder::Finish() {
  std::int32_t max_step = -1;
  for (const Op& op : plan_.ops) max_step = std::max(max_step, op.step);
  plan_.num_steps = max_step + 1;
  return std::move(plan_);
}

PlanTraffic CountTraffic(const Plan& plan) {
  PlanTraffic t;
  t.sent_bytes.assign(plan.num_ranks, 0);
  t.received_bytes.assign(plan.num_ranks, 0);
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::kSend) {
      t.sent_bytes[op.rank] += op.bytes;
      ++t.transfers;
    } else if (op.kind == OpKind::kRecv) {
      t.received_bytes[op.rank] += op.bytes;
    }
  }
  return t;
}

std::vector<Phase> StepPhases(const Plan& plan) {
  std::vector<Phase> phases(static_cast<std::size_t>(std::max(plan.num_steps, 0)), Phase::kNone);
  for (const Op& op : plan.ops) {
    if (op.step < 0 || op.step >= plan.num_steps) continue;
    Phase& p = phases[static_cast<std::size_t>(op.step)];
    if (p == Phase::kNone) p = op.tags.phase;
  }
  return phases;
}

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kNone: return "";
    case Phase::kReduceScatter: return "reduce-scatter";
    case Phase::kAllGather: return "all-gather";
    case Phase::kBroadcast: return "broadcast";
    case Phase::kReduce: return "reduce";
    case Phase::kAllToAll: return "all-to-all";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kWeightGrad: return "weight-grad";
    case Phase::kRouter: return "router";
    case Phase::kDispatch: return "dispatch";
    case Phase::kExpert: return "expert";
    case Phase::kCombine: return "combine";
  }
  return "?";
}

const char* MemoryCategoryName(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::kOther: return "other";
    case MemoryCategory::kParameters: return "parameters";
    case MemoryCategory::kGradients: return "gradients";
    case MemoryCategory::kOptimizerStates: return "optimizer states";
    case MemoryCategory::kActivations: return "activations";
    case MemoryCategory::kGatheredParameters: return "gathered parameters";
  }
  return "?";
}

}  // namespace shardlab
