#include "engine/plan/dump.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "engine/plan/op_label.h"
#include "engine/plan/validate.h"

namespace shardlab {

static void DumpSlice(std::ostream& out, const Plan& plan, const BufferSlice& s) {
  out << plan.buffers[s.buffer].name << "@r" << plan.buffers[s.buffer].rank << "[" << s.offset
      << ":" << s.offset + s.count << "]";
}

std::string DumpPlan(const Plan& plan, std::size_t max_ops) {
  std::ostringstream out;
  out << "plan: " << plan.name << "\n"
      << "  ranks " << plan.num_ranks << ", steps " << plan.num_steps << ", ops "
      << plan.ops.size() << ", buffers " << plan.buffers.size() << "\n";
  // Stable order by step, so the dump reads like the algorithm.
  std::vector<OpId> order(plan.ops.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](OpId a, OpId b) { return plan.ops[a].step < plan.ops[b].step; });
  int current_step = -1;
  std::size_t shown = 0;
  for (OpId id : order) {
    if (shown == max_ops) break;
    const Op& op = plan.ops[id];
    if (op.step != current_step) {
      current_step = op.step;
      out << "step " << current_step << ":\n";
    }
    out << "  " << DescribeOp(plan, id) << " lane " << LaneName(op.lane);
    if (op.tags.phase != Phase::kNone) out << " " << PhaseName(op.tags.phase);
    if (op.tags.microbatch >= 0) out << " mb " << op.tags.microbatch;
    if (op.tags.chunk >= 0) out << " chunk " << op.tags.chunk;
    if (op.kind == OpKind::kSend || op.kind == OpKind::kCopy || op.kind == OpKind::kReduce) {
      out << " src ";
      DumpSlice(out, plan, op.src);
    }
    if (op.dst.valid()) {
      out << (op.reduce == ReduceOp::kNone ? " dst " : " dst+= ");
      DumpSlice(out, plan, op.dst);
    }
    out << " " << op.bytes << " B";
    if (op.flops > 0) out << " " << op.flops << " flop";
    if (op.dep_count > 0) {
      out << " after";
      for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d) out << " " << *d;
    }
    out << "  # " << LabelOp(plan, id).text << "\n";
    for (std::int32_t k = 0; k < op.kernel_count; ++k) {
      const KernelCall& call = plan.kernels[op.kernel_begin + k];
      out << "      " << KernelKindName(call.kind) << " " << call.m << "x" << call.n;
      if (call.kind == KernelKind::kMatMul) out << "x" << call.k;
      out << " -> ";
      DumpSlice(out, plan, call.c);
      out << "\n";
    }
    ++shown;
  }
  if (shown < plan.ops.size()) out << "  ... " << plan.ops.size() - shown << " more ops\n";
  return out.str();
}

}  // namespace shardlab
