#include "engine/plan/validate.h"

#include <sstream>

#include "engine/core/error.h"
#include "engine/plan/op_graph.h"

namespace shardlab {

std::string DescribeOp(const Plan& plan, OpId id) {
  std::ostringstream out;
  out << "op " << id;
  if (id < 0 || id >= static_cast<OpId>(plan.ops.size())) return out.str();
  const Op& op = plan.ops[id];
  out << " (rank " << op.rank << ", " << OpKindName(op.kind);
  if (op.kind == OpKind::kSend) out << "->" << op.peer;
  if (op.kind == OpKind::kRecv) out << "<-" << op.peer;
  out << ", step " << op.step << ")";
  return out.str();
}

namespace {

[[noreturn]] void Fail(const Plan& plan, OpId id, const std::string& what) {
  throw Error(DescribeOp(plan, id) + ": " + what);
}

void CheckSlice(const Plan& plan, OpId id, const BufferSlice& slice, const char* role) {
  const Op& op = plan.ops[id];
  if (!slice.valid()) Fail(plan, id, std::string(role) + " slice is missing");
  if (slice.buffer < 0 || slice.buffer >= static_cast<BufferId>(plan.buffers.size()))
    Fail(plan, id, std::string(role) + " names buffer " + std::to_string(slice.buffer) +
                       ", but the plan has " + std::to_string(plan.buffers.size()));
  const Buffer& b = plan.buffers[slice.buffer];
  if (b.rank != op.rank)
    Fail(plan, id, std::string(role) + " buffer '" + b.name + "' lives on rank " +
                       std::to_string(b.rank) + ", not on the op's rank");
  if (slice.offset < 0 || slice.count < 0 || slice.offset + slice.count > b.count)
    Fail(plan, id, std::string(role) + " [" + std::to_string(slice.offset) + ", " +
                       std::to_string(slice.offset + slice.count) + ") is outside buffer '" +
                       b.name + "' of " + std::to_string(b.count) + " elements");
}

// Each kernel's operands: present when the kind reads them, on the op's
// rank, and long enough for the shape.
void CheckKernels(const Plan& plan, OpId id) {
  const Op& op = plan.ops[id];
  if (op.kernel_count == 0) return;
  if (op.kernel_begin < 0 || op.kernel_count < 0 ||
      static_cast<std::uint64_t>(op.kernel_begin) + op.kernel_count > plan.kernels.size())
    Fail(plan, id, "kernel list runs past the plan's kernels");
  for (std::int32_t k = 0; k < op.kernel_count; ++k) {
    const KernelCall& call = plan.kernels[op.kernel_begin + k];
    const std::string name = std::string("kernel ") + std::to_string(k) + " (" +
                             KernelKindName(call.kind) + ") ";
    if (call.m < 0 || call.n < 0 || call.k < 0) Fail(plan, id, name + "has a negative shape");
    const std::pair<const BufferSlice*, std::int64_t> operands[] = {
        {&call.a, call.a_count()}, {&call.b, call.b_count()},
        {&call.c, call.c_count()}, {&call.d, call.d_count()}};
    const char* roles[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; ++i) {
      const auto [slice, need] = operands[i];
      if (need == 0) continue;
      const std::string role = name + roles[i];
      CheckSlice(plan, id, *slice, role.c_str());
      if (slice->count < need)
        Fail(plan, id, role + " holds " + std::to_string(slice->count) + " elements; the shape needs " +
                           std::to_string(need));
    }
  }
}

void CheckOp(const Plan& plan, OpId id) {
  const Op& op = plan.ops[id];
  const OpId n = static_cast<OpId>(plan.ops.size());
  if (op.rank < 0 || op.rank >= plan.num_ranks)
    Fail(plan, id, "rank out of range [0, " + std::to_string(plan.num_ranks) + ")");
  if (static_cast<int>(op.lane) >= kLaneCount) Fail(plan, id, "unknown lane");
  if (op.step < 0 || op.step >= plan.num_steps)
    Fail(plan, id, "step outside the plan's " + std::to_string(plan.num_steps) + " steps");
  if (op.bytes < 0 || op.flops < 0) Fail(plan, id, "negative bytes or flops");
  if (static_cast<std::uint64_t>(op.dep_begin) + op.dep_count > plan.deps.size())
    Fail(plan, id, "dependency list runs past the plan's deps");
  for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d) {
    if (*d < 0 || *d >= n)
      Fail(plan, id, "depends on op " + std::to_string(*d) + ", which does not exist");
    if (*d == id) Fail(plan, id, "depends on itself");
  }
  switch (op.kind) {
    case OpKind::kSend:
    case OpKind::kRecv: {
      const bool send = op.kind == OpKind::kSend;
      if (op.peer < 0 || op.peer >= plan.num_ranks)
        Fail(plan, id, "peer " + std::to_string(op.peer) + " out of range");
      if (op.peer == op.rank) Fail(plan, id, "sends to its own rank (use a copy)");
      if (op.match < 0 || op.match >= n)
        Fail(plan, id, send ? "no matching recv" : "no matching send");
      const Op& other = plan.ops[op.match];
      if (other.kind != (send ? OpKind::kRecv : OpKind::kSend) || other.match != id)
        Fail(plan, id, "its partner " + DescribeOp(plan, op.match) + " does not pair back");
      if (other.rank != op.peer || other.peer != op.rank)
        Fail(plan, id, "ranks disagree with partner " + DescribeOp(plan, op.match));
      if (other.bytes != op.bytes)
        Fail(plan, id, "moves " + std::to_string(op.bytes) + " B but its partner " +
                           std::to_string(other.bytes) + " B");
      CheckSlice(plan, id, send ? op.src : op.dst, send ? "src" : "dst");
      if (!send && op.dst.count != plan.ops[op.match].src.count)
        Fail(plan, id, "receives " + std::to_string(op.dst.count) + " elements but the send has " +
                           std::to_string(plan.ops[op.match].src.count));
      break;
    }
    case OpKind::kReduce:
    case OpKind::kCopy:
      CheckSlice(plan, id, op.src, "src");
      CheckSlice(plan, id, op.dst, "dst");
      if (op.src.count != op.dst.count) Fail(plan, id, "src and dst differ in length");
      break;
    case OpKind::kCompute:
      CheckKernels(plan, id);
      [[fallthrough]];
    case OpKind::kCollective:
      if (op.src.valid()) CheckSlice(plan, id, op.src, "src");
      if (op.dst.valid()) CheckSlice(plan, id, op.dst, "dst");
      break;
  }
}

// Kahn's algorithm with each Send and its Recv completing together: what is
// left over is a cycle of deps, lane order and rendezvous (a deadlock).
void CheckAcyclic(const Plan& plan) {
  const OpGraph graph = BuildOpGraph(plan);
  std::vector<std::int32_t> pending = graph.pred_count;
  const std::size_t n = plan.ops.size();
  std::vector<char> ready(n, 0), done(n, 0);
  // A FIFO, not a stack: ops are then finished roughly in plan order, which
  // walks the op array nearly sequentially (a stack follows one chunk's
  // chain across the whole plan, a cache miss per op on big plans).
  std::vector<OpId> queue;
  queue.reserve(n);
  auto mark_ready = [&](OpId id) {
    ready[id] = 1;
    const Op& op = plan.ops[id];
    if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) queue.push_back(id);
    else if (ready[op.match]) queue.push_back(op.kind == OpKind::kSend ? id : op.match);
  };
  auto finish = [&](OpId id) {
    done[id] = 1;
    for (const OpId* w = graph.successors_begin(id); w != graph.successors_end(id); ++w)
      if (--pending[*w] == 0) mark_ready(*w);
  };
  for (OpId id = 0; id < static_cast<OpId>(n); ++id)
    if (pending[id] == 0) mark_ready(id);
  std::size_t finished = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const OpId id = queue[head];
    finish(id);
    ++finished;
    if (plan.ops[id].kind == OpKind::kSend) {
      finish(plan.ops[id].match);
      ++finished;
    }
  }
  if (finished == n) return;
  std::size_t stuck = 0;
  OpId first = kNoOp;
  for (OpId id = 0; id < static_cast<OpId>(n); ++id) {
    if (done[id]) continue;
    ++stuck;
    if (first == kNoOp) first = id;
  }
  std::string why = "waits for itself through a cycle of dependencies";
  const Op& op = plan.ops[first];
  for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d)
    if (!done[*d]) {
      why = "is part of a dependency cycle (it waits for " + DescribeOp(plan, *d) + ")";
      break;
    }
  if (pending[first] == 0 && ready[first])
    why = "can never meet its partner " + DescribeOp(plan, op.match) +
          " (the send and recv orders disagree: a deadlock)";
  throw Error(DescribeOp(plan, first) + " " + why + "; " + std::to_string(stuck) +
              " ops can never run");
}

}  // namespace

void ValidatePlan(const Plan& plan) {
  if (plan.num_ranks < 1)
    throw Error("plan '" + plan.name + "': needs at least one rank (has " +
                std::to_string(plan.num_ranks) + ")");
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const Buffer& b = plan.buffers[i];
    if (b.rank < 0 || b.rank >= plan.num_ranks || b.count < 0)
      throw Error("buffer " + std::to_string(i) + " ('" + b.name + "'): rank " +
                  std::to_string(b.rank) + " or count " + std::to_string(b.count) +
                  " out of range");
    if (b.init_offset < 0 || b.init_row < 0 || (b.init_row > 0 && b.init_stride < b.init_row))
      throw Error("buffer " + std::to_string(i) + " ('" + b.name + "'): init block offset " +
                  std::to_string(b.init_offset) + ", row " + std::to_string(b.init_row) +
                  ", stride " + std::to_string(b.init_stride) +
                  " (needs offset >= 0, row >= 0 and stride >= row)");
  }
  if (plan.ops.size() > static_cast<std::size_t>(INT32_MAX))
    throw Error("plan '" + plan.name + "' has more ops than an OpId can name");
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) CheckOp(plan, id);
  CheckAcyclic(plan);
}

}  // namespace shardlab
