// Builds the expert-parallel MoE layer described in moe.h. Every weight is
// a buffer that starts as its tensor of the single-device layer
// (MoeTensor's stream and scale), so the plan and MoeLayerReference start
// from the same model.
#include "engine/algorithms/moe.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"
#include "engine/plan/kernel.h"

namespace shardlab {
namespace {

constexpr int kElementBytes = 4;  // fp32: the host kernels compute in float32

class MoeBuilder {
 public:
  MoeBuilder(const MoeLayerConfig& c, const MoeRouting& r)
      : c_(c), r_(r), n_(c.ranks), tl_(c.tokens_per_rank()), k_(c.top_k), h_(c.hidden), f_(c.ffn),
        epr_(c.experts_per_rank()), steps_(std::max(c.ranks - 1, 1)),
        builder_("expert-parallel MoE, " + std::to_string(c.experts) + " experts over " +
                     std::to_string(c.ranks) + " ranks, top-" + std::to_string(c.top_k) + ", " +
                     std::to_string(c.tokens) + " tokens x " + std::to_string(c.hidden),
                 c.ranks) {}

  MoeLayerPlan Build() {
    out_.config = c_;
    out_.routing = r_;
    Layout();
    for (int rank = 0; rank < n_; ++rank) AddBuffers(rank);
    out_.dispatch_first_step = 2;
    out_.expert_step = 2 + steps_;
    out_.combine_first_step = 3 + steps_;
    out_.sum_step = 3 + 2 * steps_;

    std::vector<OpId> packed(static_cast<std::size_t>(n_));
    for (int rank = 0; rank < n_; ++rank) {
      const OpId routed = Router(rank);
      packed[rank] = Pack(rank, routed);
    }
    // Dispatch: rows of s's dispatch.send to d's dispatch.recv.
    const auto dispatched = AllToAll(Phase::kDispatch, out_.dispatch_seq, out_.dispatch_first_step,
                                     dispatch_send_, send_offset_, dispatch_recv_, recv_offset_,
                                     [&](int s) { return std::vector<OpId>{packed[s]}; });
    std::vector<std::vector<OpId>> experts(static_cast<std::size_t>(n_));
    for (int d = 0; d < n_; ++d)
      for (int i = 0; i < epr_; ++i) experts[d].push_back(Expert(d, d * epr_ + i, dispatched[d]));
    // Combine: the same blocks the other way, combine.send (dispatch.recv's
    // layout) back to combine.recv (dispatch.send's).
    const auto combined = AllToAll(Phase::kCombine, out_.combine_seq, out_.combine_first_step,
                                   combine_send_, recv_offset_, combine_recv_, send_offset_,
                                   [&](int d) { return experts[d]; }, /*reverse=*/true);
    for (int rank = 0; rank < n_; ++rank) WeightedSum(rank, combined[rank]);
    out_.plan = builder_.Finish();
    return std::move(out_);
  }

 private:
  // ---- layout -----------------------------------------------------------

  // Row of each kept choice in its rank's dispatch.send, and the offsets of
  // every (source, destination) block on both sides.
  void Layout() {
    const std::size_t nn = static_cast<std::size_t>(n_);
    row_of_choice_.assign(r_.expert.size(), -1);
    send_offset_.assign(nn * nn, 0);  // [s·N + d]: block s→d in s's dispatch.send
    recv_offset_.assign(nn * nn, 0);  // [s·N + d]: block s→d in d's dispatch.recv
    block_rows_.assign(nn * static_cast<std::size_t>(c_.experts), 0);  // [s·E + e]
    send_rows_.assign(nn, 0);
    recv_rows_.assign(nn, 0);
    for (int s = 0; s < n_; ++s) {
      std::int64_t row = 0;
      for (int d = 0; d < n_; ++d) {
        send_offset_[s * nn + d] = row;
        for (int e = d * epr_; e < (d + 1) * epr_; ++e)
          for (int t = s * tl_; t < (s + 1) * tl_; ++t)
            for (int j = 0; j < k_; ++j) {
              const std::size_t i = static_cast<std::size_t>(t) * k_ + j;
              if (r_.expert[i] != e || !r_.kept[i]) continue;
              row_of_choice_[i] = row++;
              ++block_rows_[s * static_cast<std::size_t>(c_.experts) + e];
            }
      }
      send_rows_[s] = row;
    }
    for (int d = 0; d < n_; ++d) {
      std::int64_t row = 0;
      for (int s = 0; s < n_; ++s) {
        recv_offset_[s * nn + d] = row;
        row += r_.rows_between(s, d);
      }
      recv_rows_[d] = row;
    }
  }

  // ---- buffers ----------------------------------------------------------

  BufferId Tensor(int rank, const std::string& name, std::int64_t row0, std::int64_t rows,
                  MemoryCategory category) {
    const MoeTensorSpec spec = MoeTensor(c_, name);
    Buffer b{name, rank, rows * spec.cols, DType::kF32, BufferInit::kRandom, spec.stream, spec.scale};
    b.init_offset = row0 * spec.cols;
    b.category = category;
    return builder_.AddBuffer(b);
  }

  BufferId Zeros(int rank, const std::string& name, std::int64_t count) {
    Buffer b{name, rank, count, DType::kF32, BufferInit::kZero};
    b.category = MemoryCategory::kActivations;
    return builder_.AddBuffer(b);
  }

  void AddBuffers(int rank) {
    x_.push_back(Tensor(rank, "x", std::int64_t{rank} * tl_, tl_, MemoryCategory::kActivations));
    wr_.push_back(Tensor(rank, "Wr", 0, h_, MemoryCategory::kParameters));
    for (int e = rank * epr_; e < (rank + 1) * epr_; ++e) {
      w1_.push_back(Tensor(rank, "W1." + std::to_string(e), 0, h_, MemoryCategory::kParameters));
      w2_.push_back(Tensor(rank, "W2." + std::to_string(e), 0, f_, MemoryCategory::kParameters));
    }
    logits_.push_back(Zeros(rank, "logits", std::int64_t{tl_} * c_.experts));
    out_.gates.push_back(Zeros(rank, "gates", std::int64_t{tl_} * k_));
    dispatch_send_.push_back(Zeros(rank, "dispatch.send", send_rows_[rank] * h_));
    dispatch_recv_.push_back(Zeros(rank, "dispatch.recv", recv_rows_[rank] * h_));
    // Scratch for the busiest of this rank's experts: its rows gathered, its
    // hidden activations, its output (the experts run one after another).
    std::int64_t largest = 0;
    for (int e = rank * epr_; e < (rank + 1) * epr_; ++e) largest = std::max<std::int64_t>(largest, r_.kept_per_expert[e]);
    expert_in_.push_back(Zeros(rank, "expert.in", largest * h_));
    hidden_.push_back(Zeros(rank, "expert.hidden", largest * f_));
    expert_out_.push_back(Zeros(rank, "expert.out", largest * h_));
    combine_send_.push_back(Zeros(rank, "combine.send", recv_rows_[rank] * h_));
    combine_recv_.push_back(Zeros(rank, "combine.recv", send_rows_[rank] * h_));
    out_.output.push_back(Zeros(rank, "y", std::int64_t{tl_} * h_));
  }

  std::int64_t BlockRows(int s, int e) const {
    return block_rows_[static_cast<std::size_t>(s) * c_.experts + e];
  }

  BufferSlice Rows(BufferId id, std::int64_t row0, std::int64_t rows, std::int64_t width) const {
    return BufferSlice{id, row0 * width, rows * width};
  }

  OpId Compute(int rank, Phase phase, int step, int expert, const std::vector<KernelCall>& kernels,
               const std::vector<OpId>& deps) {
    Op op;
    op.kind = OpKind::kCompute;
    op.lane = Lane::kCompute;
    op.rank = rank;
    op.step = step;
    op.tags.phase = phase;
    op.tags.chunk = expert;
    op.tags.layer = 0;
    return builder_.AddCompute(op, kernels, deps);
  }

  static KernelCall Copy(BufferSlice from, BufferSlice to) {
    return ElementwiseCall(KernelKind::kCopy, from, {}, to, 1, static_cast<int>(to.count));
  }

  // ---- phases -------------------------------------------------------------

  // logits = x·Wr; each token's chosen logits gathered; gates = their softmax.
  OpId Router(int rank) {
    const std::int64_t e_count = c_.experts;
    const BufferId logits = logits_[rank], gates = out_.gates[rank];
    std::vector<KernelCall> kernels;
    kernels.push_back(MatMulCall(BufferSlice{x_[rank], 0, std::int64_t{tl_} * h_},
                                 BufferSlice{wr_[rank], 0, h_ * e_count},
                                 BufferSlice{logits, 0, std::int64_t{tl_} * e_count}, tl_,
                                 static_cast<int>(e_count), static_cast<int>(h_)));
    for (int i = 0; i < tl_; ++i)
      for (int j = 0; j < k_; ++j) {
        const int e = r_.expert[static_cast<std::size_t>(rank * tl_ + i) * k_ + j];
        kernels.push_back(Copy(BufferSlice{logits, std::int64_t{i} * e_count + e, 1},
                               BufferSlice{gates, std::int64_t{i} * k_ + j, 1}));
      }
    const BufferSlice all_gates{gates, 0, std::int64_t{tl_} * k_};
    kernels.push_back(ElementwiseCall(KernelKind::kSoftmax, all_gates, {}, all_gates, tl_, k_));
    return Compute(rank, Phase::kRouter, 0, -1, kernels, {});
  }

  // Each kept choice's token row into its place in dispatch.send.
  OpId Pack(int rank, OpId routed) {
    std::vector<KernelCall> kernels;
    for (int i = 0; i < tl_; ++i)
      for (int j = 0; j < k_; ++j) {
        const std::int64_t row = row_of_choice_[static_cast<std::size_t>(rank * tl_ + i) * k_ + j];
        if (row < 0) continue;  // dropped
        kernels.push_back(Copy(Rows(x_[rank], i, 1, h_), Rows(dispatch_send_[rank], row, 1, h_)));
      }
    return Compute(rank, Phase::kDispatch, 1, -1, kernels, {routed});
  }

  // A variable-size all-to-all: block s→d from `from[s]` at from_offset[s·N+d]
  // to `to[d]` at to_offset[s·N+d] (rows). `reverse` swaps the roles: the
  // block for pair (s, d) then goes from d back to s. Returns, per rank,
  // every op that writes its `to` buffer.
  template <typename After>
  std::vector<std::vector<OpId>> AllToAll(Phase phase, int seq, int first_step,
                                          const std::vector<BufferId>& from,
                                          const std::vector<std::int64_t>& from_offset,
                                          const std::vector<BufferId>& to,
                                          const std::vector<std::int64_t>& to_offset, After after,
                                          bool reverse = false) {
    const std::size_t nn = static_cast<std::size_t>(n_);
    std::vector<std::vector<OpId>> written(nn);
    builder_.NoteCollective(seq, phase == Phase::kDispatch
                                     ? CollectiveNote{"dispatch", "all-to-all dispatch of the tokens to their experts' GPUs"}
                                     : CollectiveNote{"combine", "all-to-all combine: the experts' outputs back to their tokens' GPUs"});
    // The block a pair exchanges: (source s, destination d) of the dispatch.
    auto block = [&](int sender, int receiver) {
      const int s = reverse ? receiver : sender, d = reverse ? sender : receiver;
      const std::size_t pair = static_cast<std::size_t>(s) * nn + d;
      return std::pair<std::int64_t, std::size_t>{r_.rows_between(s, d), pair};
    };
    for (int rank = 0; rank < n_; ++rank) {  // the local block: a copy
      const auto [rows, pair] = block(rank, rank);
      if (rows == 0) continue;
      Op copy;
      copy.kind = OpKind::kCopy;
      copy.lane = Lane::kCopy;
      copy.rank = rank;
      copy.step = first_step;
      copy.collective_seq = seq;
      copy.src = Rows(from[rank], from_offset[pair], rows, h_);
      copy.dst = Rows(to[rank], to_offset[pair], rows, h_);
      copy.bytes = copy.src.count * kElementBytes;
      copy.tags = OpTags{phase, rank, -1, 0};
      written[rank].push_back(builder_.AddOp(copy, after(rank)));
    }
    const std::vector<OpId> none;
    for (int step = 0; step < n_ - 1; ++step)
      for (int sender = 0; sender < n_; ++sender) {
        const int receiver = (sender + step + 1) % n_;
        const auto [rows, pair] = block(sender, receiver);
        if (rows == 0) continue;
        const auto t = builder_.AddTransfer(
            sender, receiver, Rows(from[sender], from_offset[pair], rows, h_),
            Rows(to[receiver], to_offset[pair], rows, h_), ReduceOp::kNone, first_step + step,
            OpTags{phase, receiver, -1, 0}, after(sender), none, seq);
        written[receiver].push_back(t.recv);
      }
    return written;
  }

  // Expert e on rank d: its rows of every source block gathered into one
  // block (Megatron's sort of the received chunks by expert), its MLP on
  // that block as one pair of matmuls, and the results scattered back into
  // the same rows of combine.send.
  OpId Expert(int d, int e, const std::vector<OpId>& received) {
    const std::size_t local = static_cast<std::size_t>(e - d * epr_);
    const BufferId w1 = w1_[static_cast<std::size_t>(d) * epr_ + local];
    const BufferId w2 = w2_[static_cast<std::size_t>(d) * epr_ + local];
    std::vector<KernelCall> gather, scatter;
    std::int64_t rows = 0;
    for (int s = 0; s < n_; ++s) {
      const std::int64_t block = BlockRows(s, e);
      if (block == 0) continue;
      std::int64_t row0 = recv_offset_[static_cast<std::size_t>(s) * n_ + d];
      for (int before = d * epr_; before < e; ++before) row0 += BlockRows(s, before);
      gather.push_back(Copy(Rows(dispatch_recv_[d], row0, block, h_), Rows(expert_in_[d], rows, block, h_)));
      scatter.push_back(Copy(Rows(expert_out_[d], rows, block, h_), Rows(combine_send_[d], row0, block, h_)));
      rows += block;
    }
    std::vector<KernelCall> kernels = gather;
    if (rows > 0) {
      const int m = static_cast<int>(rows), h = static_cast<int>(h_), f = static_cast<int>(f_);
      const BufferSlice hidden = Rows(hidden_[d], 0, rows, f_);
      kernels.push_back(MatMulCall(Rows(expert_in_[d], 0, rows, h_), BufferSlice{w1, 0, h_ * f_},
                                   hidden, m, f, h));
      kernels.push_back(ElementwiseCall(KernelKind::kRelu, hidden, {}, hidden, m, f));
      kernels.push_back(MatMulCall(hidden, BufferSlice{w2, 0, f_ * h_}, Rows(expert_out_[d], 0, rows, h_),
                                   m, h, f));
    }
    kernels.insert(kernels.end(), scatter.begin(), scatter.end());
    return Compute(d, Phase::kExpert, out_.expert_step, e, kernels, received);
  }

  // y[t] += gate[t, j] · (expert output of choice j), over t's kept choices.
  void WeightedSum(int rank, const std::vector<OpId>& received) {
    std::vector<KernelCall> kernels;
    for (int i = 0; i < tl_; ++i)
      for (int j = 0; j < k_; ++j) {
        const std::int64_t row = row_of_choice_[static_cast<std::size_t>(rank * tl_ + i) * k_ + j];
        if (row < 0) continue;
        // A 1×1 by 1×H product: the gate read from the plan's own softmax.
        KernelCall call = MatMulCall(BufferSlice{out_.gates[rank], std::int64_t{i} * k_ + j, 1},
                                     Rows(combine_recv_[rank], row, 1, h_),
                                     Rows(out_.output[rank], i, 1, h_), 1, static_cast<int>(h_), 1);
        call.accumulate = true;
        kernels.push_back(call);
      }
    // The gates come from the router, earlier on the same compute lane.
    Compute(rank, Phase::kCombine, out_.sum_step, -1, kernels, received);
  }

  MoeLayerConfig c_;
  const MoeRouting& r_;
  int n_, tl_, k_;
  std::int64_t h_, f_;
  int epr_, steps_;
  PlanBuilder builder_;
  MoeLayerPlan out_;

  std::vector<std::int64_t> row_of_choice_, send_offset_, recv_offset_, block_rows_;
  std::vector<std::int64_t> send_rows_, recv_rows_;
  std::vector<BufferId> x_, wr_, w1_, w2_, logits_, expert_in_, hidden_, expert_out_;
  std::vector<BufferId> dispatch_send_, dispatch_recv_, combine_send_, combine_recv_;
};

}  // namespace

MoeLayerPlan BuildMoeLayer(const MoeLayerConfig& config, const MoeRouting& routing) {
  CheckMoeLayerConfig(config);
  const std::size_t choices = static_cast<std::size_t>(config.tokens) * config.top_k;
  if (routing.expert.size() != choices || routing.kept.size() != choices ||
      routing.ranks != config.ranks || routing.experts != config.experts ||
      routing.rows.size() != static_cast<std::size_t>(config.ranks) * config.ranks)
    throw Error("MoE plan: the routing is for another layer shape (tokens, top-k, ranks or experts)");
  return MoeBuilder(config, routing).Build();
}

MoeAllToAllBytes ExpectedMoeAllToAllBytes(const MoeLayerConfig& config, const MoeRouting& routing) {
  MoeAllToAllBytes b;
  const int n = config.ranks;
  const std::size_t nn = static_cast<std::size_t>(n);
  b.dispatch_sent.assign(nn, 0);
  b.dispatch_received.assign(nn, 0);
  b.combine_sent.assign(nn, 0);
  b.combine_received.assign(nn, 0);
  const Bytes row_bytes = std::int64_t{config.hidden} * kElementBytes;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      const Bytes bytes = routing.rows_between(s, d) * row_bytes;
      if (bytes > 0) ++b.transfers_per_all_to_all;
      b.dispatch_sent[s] += bytes;
      b.dispatch_received[d] += bytes;
      b.combine_sent[d] += bytes;
      b.combine_received[s] += bytes;
    }
  return b;
}

std::vector<std::int64_t> MoeRowsPerRank(const MoeRouting& routing) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(std::max(routing.ranks, 0)), 0);
  for (int e = 0; e < routing.experts; ++e) rows[routing.rank_of_expert(e)] += routing.kept_per_expert[e];
  return rows;
}

}  // namespace shardlab
