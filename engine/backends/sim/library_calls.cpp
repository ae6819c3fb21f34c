#include "engine/backends/sim/library_calls.h"

#include <algorithm>
#include <map>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/plan/validate.h"

namespace shardlab {

namespace {

float Combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
    case ReduceOp::kSum:
    case ReduceOp::kNone: return a + b;
  }
  return a + b;
}

float* Elements(HostBuffers& data, const BufferSlice& s) {
  return data.data[static_cast<std::size_t>(s.buffer)].data() + s.offset;
}

}  // namespace

void LibraryCalls::Load(const Plan& plan, const Topology& topology,
                        std::span<const std::int32_t> rank_gpu_node) {
  calls_.clear();
  call_of_.assign(plan.ops.size(), -1);
  std::map<std::int32_t, std::int32_t> by_seq;
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[id];
    if (op.kind != OpKind::kCollective) continue;
    auto [it, fresh] = by_seq.emplace(op.collective_seq, static_cast<std::int32_t>(calls_.size()));
    if (fresh) calls_.emplace_back();
    Call& call = calls_[static_cast<std::size_t>(it->second)];
    for (OpId other : call.ops)
      if (plan.ops[other].rank == op.rank)
        throw Error(DescribeOp(plan, id) + ": rank " + std::to_string(op.rank) +
                    " joins library call " + std::to_string(op.collective_seq) +
                    " twice (a call needs one op per rank)");
    call.ops.push_back(id);
    call_of_[id] = it->second;
  }
  // Time each call; calls over the same GPUs share the machine's reading.
  std::map<std::vector<std::int32_t>, NcclMachine> machines;
  for (Call& call : calls_) {
    std::vector<std::int32_t> gpus;
    for (OpId id : call.ops) gpus.push_back(rank_gpu_node[static_cast<std::size_t>(plan.ops[id].rank)]);
    auto it = machines.find(gpus);
    if (it == machines.end()) it = machines.emplace(gpus, DescribeNcclMachine(topology, gpus)).first;
    const Op& first = plan.ops[call.ops.front()];
    const double size = static_cast<double>(first.src.count) *
                        DTypeBytes(plan.buffers[static_cast<std::size_t>(first.src.buffer)].dtype);
    const NcclPrediction p = PredictNccl(first.library, size, it->second);
    call.duration_ns = p.chosen.time_ns;
    call.choice = p.Describe();
  }
}

void LibraryCalls::Reset() {
  for (Call& call : calls_) {
    call.arrived = 0;
    call.applied = false;
  }
}

bool LibraryCalls::Arrive(OpId id) {
  Call& call = calls_[static_cast<std::size_t>(call_of_[id])];
  return ++call.arrived == static_cast<int>(call.ops.size());
}

// What the library leaves in each rank's buffers (the same layout as the
// hand-written algorithms, so VerifyCollective checks both alike): ops are
// in place on src (= dst), all-to-all writes the recv buffer (dst).
void LibraryCalls::ApplyData(const Plan& plan, OpId id, HostBuffers& data) {
  Call& call = calls_[static_cast<std::size_t>(call_of_[id])];
  if (call.applied) return;
  call.applied = true;
  std::vector<OpId> ops = call.ops;
  std::sort(ops.begin(), ops.end(),
            [&](OpId a, OpId b) { return plan.ops[a].rank < plan.ops[b].rank; });
  const int n = static_cast<int>(ops.size());
  const Op& first = plan.ops[ops.front()];
  int root = 0;  // position of the root rank (broadcast, reduce) in the call
  for (int r = 0; r < n; ++r)
    if (plan.ops[ops[r]].rank == first.peer) root = r;
  const std::int64_t count = first.src.count;
  auto reduced = [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> acc(Elements(data, first.src) + begin, Elements(data, first.src) + end);
    for (int r = 1; r < n; ++r) {
      const float* x = Elements(data, plan.ops[ops[r]].src);
      for (std::int64_t i = begin; i < end; ++i) acc[i - begin] = Combine(first.reduce, acc[i - begin], x[i]);
    }
    return acc;
  };
  switch (first.library) {
    case LibraryCollective::kAllReduce: {
      const std::vector<float> sum = reduced(0, count);
      for (OpId op : ops) std::copy(sum.begin(), sum.end(), Elements(data, plan.ops[op].dst));
      break;
    }
    case LibraryCollective::kReduceScatter:
      for (int r = 0; r < n; ++r) {
        const std::int64_t begin = ChunkBegin(count, n, r);
        const std::vector<float> part = reduced(begin, begin + ChunkCount(count, n, r));
        std::copy(part.begin(), part.end(), Elements(data, plan.ops[ops[r]].dst) + begin);
      }
      break;
    case LibraryCollective::kAllGather:
      for (int c = 0; c < n; ++c) {
        const std::int64_t begin = ChunkBegin(count, n, c), len = ChunkCount(count, n, c);
        const float* from = Elements(data, plan.ops[ops[c]].src) + begin;
        for (int r = 0; r < n; ++r)
          if (r != c) std::copy(from, from + len, Elements(data, plan.ops[ops[r]].dst) + begin);
      }
      break;
    case LibraryCollective::kBroadcast: {
      const float* from = Elements(data, plan.ops[ops[root]].src);
      for (int r = 0; r < n; ++r)
        if (r != root) std::copy(from, from + count, Elements(data, plan.ops[ops[r]].dst));
      break;
    }
    case LibraryCollective::kReduce: {
      const std::vector<float> sum = reduced(0, count);
      std::copy(sum.begin(), sum.end(), Elements(data, plan.ops[ops[root]].dst));
      break;
    }
    case LibraryCollective::kAllToAll: {
      // Block i of rank j's recv is block j of rank i's send.
      const std::int64_t block = count / n;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const float* from = Elements(data, plan.ops[ops[i]].src) + j * block;
          std::copy(from, from + block, Elements(data, plan.ops[ops[j]].dst) + i * block);
        }
      break;
    }
    case LibraryCollective::kNone: break;
  }
}

}  // namespace shardlab
