#include "engine/plan/host_data.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "engine/core/error.h"
#include "engine/core/fill.h"
#include "engine/plan/host_kernels.h"
#include "engine/plan/op_graph.h"
#include "engine/plan/validate.h"

namespace shardlab {

void AllocateHostBuffers(const Plan& plan, std::uint64_t seed, HostBuffers& buffers,
                         int only_rank) {
  buffers.data.resize(plan.buffers.size());
  for (std::size_t id = 0; id < plan.buffers.size(); ++id) {
    const Buffer& b = plan.buffers[id];
    std::vector<float>& data = buffers.data[id];
    if (only_rank >= 0 && b.rank != only_rank) {
      std::vector<float>().swap(data);
      continue;
    }
    data.assign(static_cast<std::size_t>(b.count), 0.0f);
    if (b.init != BufferInit::kRandom) continue;
    const std::int64_t stream = b.init_stream >= 0 ? b.init_stream : static_cast<std::int64_t>(id);
    if (b.init_offset == 0 && b.init_row == 0) {
      FillInputs(data, seed, stream);
    } else {
      for (std::int64_t i = 0; i < b.count; ++i) {
        const std::int64_t index =
            b.init_row > 0 ? b.init_offset + (i / b.init_row) * b.init_stride + i % b.init_row
                           : b.init_offset + i;
        data[static_cast<std::size_t>(i)] = InputValue(seed, stream, index);
      }
    }
    if (b.init_scale != 1.0f)
      for (float& x : data) x *= b.init_scale;
  }
}

void CombineHostData(ReduceOp op, const float* src, float* dst, std::int64_t count) {
  switch (op) {
    case ReduceOp::kNone: std::copy(src, src + count, dst); break;
    case ReduceOp::kSum:
      for (std::int64_t i = 0; i < count; ++i) dst[i] += src[i];
      break;
    case ReduceOp::kMax:
      for (std::int64_t i = 0; i < count; ++i) dst[i] = std::max(dst[i], src[i]);
      break;
    case ReduceOp::kMin:
      for (std::int64_t i = 0; i < count; ++i) dst[i] = std::min(dst[i], src[i]);
      break;
  }
}

void ApplyOpData(const Plan& plan, OpId id, HostBuffers& buffers) {
  const Op& op = plan.ops[id];
  const BufferSlice* src = nullptr;
  ReduceOp reduce = op.reduce;
  switch (op.kind) {
    case OpKind::kRecv: src = &plan.ops[op.match].src; break;
    case OpKind::kReduce: src = &op.src; break;
    case OpKind::kCopy: src = &op.src; reduce = ReduceOp::kNone; break;
    case OpKind::kCompute:
      for (std::int32_t k = 0; k < op.kernel_count; ++k)
        RunHostKernel(plan.kernels[op.kernel_begin + k], buffers.data);
      return;
    default: return;  // Send and Collective carry no host data here
  }
  if (!src->valid() || !op.dst.valid()) return;
  const std::int64_t count = std::min(src->count, op.dst.count);
  const float* from = buffers.data[src->buffer].data() + src->offset;
  float* to = buffers.data[op.dst.buffer].data() + op.dst.offset;
  if (src->buffer == op.dst.buffer && reduce == ReduceOp::kNone) {
    std::memmove(to, from, static_cast<std::size_t>(count) * sizeof(float));  // may overlap
    return;
  }
  CombineHostData(reduce, from, to, count);
}

void ExecutePlanInOrder(const Plan& plan, HostBuffers& buffers) {
  // Kahn's algorithm over the op graph; a Send and its Recv run together
  // when both are ready, as the rendezvous in the backends.
  const OpGraph graph = BuildOpGraph(plan);
  std::vector<std::int32_t> pending = graph.pred_count;
  const std::size_t n = plan.ops.size();
  std::vector<char> ready(n, 0), done(n, 0);
  std::deque<OpId> queue;
  auto mark_ready = [&](OpId id) {
    ready[id] = 1;
    const Op& op = plan.ops[id];
    const bool paired = op.kind == OpKind::kSend || op.kind == OpKind::kRecv;
    if (!paired) {
      queue.push_back(id);
    } else if (ready[op.match]) {
      queue.push_back(op.kind == OpKind::kSend ? id : op.match);  // the pair, once
    }
  };
  for (OpId id = 0; id < static_cast<OpId>(n); ++id)
    if (pending[id] == 0) mark_ready(id);

  std::size_t finished = 0;
  auto finish = [&](OpId id) {
    done[id] = 1;
    ++finished;
    for (const OpId* w = graph.successors_begin(id); w != graph.successors_end(id); ++w)
      if (--pending[*w] == 0) mark_ready(*w);
  };
  while (!queue.empty()) {
    const OpId id = queue.front();
    queue.pop_front();
    const Op& op = plan.ops[id];
    if (op.kind == OpKind::kSend) {
      ApplyOpData(plan, op.match, buffers);
      finish(id);
      finish(op.match);
    } else {
      ApplyOpData(plan, id, buffers);
      finish(id);
    }
  }
  if (finished != n) {
    for (OpId id = 0; id < static_cast<OpId>(n); ++id)
      if (!done[id])
        throw Error("plan deadlocks: " + DescribeOp(plan, id) + " never runs");
  }
}

}  // namespace shardlab
