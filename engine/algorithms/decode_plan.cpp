#include "engine/algorithms/decode_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "engine/algorithms/group_collective.h"
#include "engine/core/error.h"
#include "engine/plan/kernel.h"

namespace shardlab {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

KernelCall Mm(BufferSlice a, BufferSlice b, BufferSlice c, std::int64_t m, std::int64_t n, std::int64_t k,
              bool tb = false) {
  KernelCall call = MatMulCall(a, b, c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
  call.transpose_b = tb;
  return call;
}

KernelCall Ew(KernelKind kind, BufferSlice a, BufferSlice c, std::int64_t m, std::int64_t n, float alpha = 1.0f) {
  return ElementwiseCall(kind, a, {}, c, static_cast<int>(m), static_cast<int>(n), alpha);
}

KernelCall Norm(BufferSlice a, BufferSlice c, std::int64_t rows, std::int64_t cols) {
  KernelCall call = Ew(KernelKind::kLayerNorm, a, c, rows, cols);
  call.epsilon = 1e-5f;
  return call;
}

// c += a over c.count elements.
KernelCall AddInto(BufferSlice a, BufferSlice c) { return Ew(KernelKind::kAxpy, a, c, 1, c.count); }

struct RankMb {
  BufferId x = kNoBuffer, u = kNoBuffer, q = kNoBuffer, o = kNoBuffer, partial = kNoBuffer,
           z = kNoBuffer, act = kNoBuffer, scores = kNoBuffer, probs = kNoBuffer, sampled = kNoBuffer;
  std::vector<OpId> last;  // what this micro-batch's next op on the rank waits for
};

struct LayerWeights {
  BufferId wq, bq, wk, bk, wv, bv, wo, bo, a_w, a_b, b_w, b_b;
};

class DecodeBuilder {
 public:
  explicit DecodeBuilder(const DecodePlanConfig& c)
      : c_(c), l_(c.layout), h_(c.model.hidden), w_(c.model.hidden / c.layout.tp),
        fs_(c.model.ffn_width() / c.layout.tp), d_(c.model.head_size()),
        hr_(c.model.heads / c.layout.tp), specs_(DecoderTensors(c.model)),
        builder_("serving a " + std::to_string(c.model.layers) + "-layer decoder, tp " +
                     std::to_string(c.layout.tp) + " x pp " + std::to_string(c.layout.pp) + " x " +
                     std::to_string(c.layout.replicas) + " replicas, " +
                     std::to_string(c.requests.size()) + " requests",
                 c.layout.ranks()) {}

  DecodePlan Build() {
    out_.config = c_;
    const int n = static_cast<int>(c_.requests.size());
    out_.kv_cache_bytes.assign(static_cast<std::size_t>(l_.ranks()), 0);
    out_.weight_bytes.assign(static_cast<std::size_t>(l_.ranks()), 0);
    // The router: request i to replica i mod k; in it, micro-batches round-robin.
    std::vector<std::vector<int>> of_replica(static_cast<std::size_t>(l_.replicas));
    for (int i = 0; i < n; ++i) {
      out_.replica_of.push_back(i % l_.replicas);
      of_replica[static_cast<std::size_t>(i % l_.replicas)].push_back(i);
    }
    out_.microbatch_of.assign(static_cast<std::size_t>(n), 0);
    slot_.assign(static_cast<std::size_t>(n), 0);
    mbs_.assign(static_cast<std::size_t>(l_.replicas), {});
    for (int r = 0; r < l_.replicas; ++r) {
      const auto& list = of_replica[static_cast<std::size_t>(r)];
      const int m = std::max(1, std::min(c_.microbatches, static_cast<int>(list.size())));
      mbs_[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(m), {});
      for (std::size_t j = 0; j < list.size(); ++j) {
        out_.microbatch_of[static_cast<std::size_t>(list[j])] = static_cast<int>(j) % m;
        slot_[static_cast<std::size_t>(list[j])] = static_cast<int>(j);
        mbs_[static_cast<std::size_t>(r)][j % static_cast<std::size_t>(m)].push_back(list[j]);
      }
    }
    for (int r = 0; r < l_.replicas; ++r) BuildReplicaBuffers(r, static_cast<int>(of_replica[static_cast<std::size_t>(r)].size()));
    int passes = 0;
    for (const ServedRequest& q : c_.requests) passes = std::max(passes, 1 + q.decode_steps());
    out_.passes = passes;
    for (int pass = 0; pass < passes; ++pass)
      for (int r = 0; r < l_.replicas; ++r)
        for (int mb = 0; mb < static_cast<int>(mbs_[static_cast<std::size_t>(r)].size()); ++mb)
          if (!Rows(r, mb, pass).empty()) Pass(r, mb, pass);
    out_.plan = builder_.Finish();
    return std::move(out_);
  }

 private:
  // A row of one pass: which request, which position.
  struct Row {
    int request;
    int pos;
  };

  std::vector<Row> Rows(int replica, int mb, int pass) const {
    std::vector<Row> rows;
    for (int i : mbs_[static_cast<std::size_t>(replica)][static_cast<std::size_t>(mb)]) {
      const ServedRequest& q = c_.requests[static_cast<std::size_t>(i)];
      if (pass == 0) {
        for (int p = 0; p < q.prompt; ++p) rows.push_back({i, p});
      } else if (pass <= q.decode_steps()) {
        rows.push_back({i, q.prompt + pass - 1});
      }
    }
    return rows;
  }

  int StageOfLayer(int layer) const { return static_cast<int>(std::int64_t{layer} * l_.pp / c_.model.layers); }

  BufferId Weight(int rank, const char* name, int layer, std::int64_t row0, std::int64_t rows,
                  std::int64_t col0, std::int64_t cols) {
    const DecoderTensor& t = FindDecoderTensor(specs_, name, layer);
    Buffer b{std::string(name) + (layer >= 0 ? ".L" + std::to_string(layer) : ""), rank, rows * cols,
             c_.dtype, BufferInit::kRandom, t.stream, t.scale};
    b.init_offset = row0 * t.cols + col0;
    b.init_row = cols;
    b.init_stride = t.cols;
    b.category = MemoryCategory::kParameters;
    out_.weight_bytes[static_cast<std::size_t>(rank)] += b.size_bytes();
    return builder_.AddBuffer(b);
  }

  // The memory tracker's activations are exactly the KV cache; working
  // buffers (hidden states, scores, logits) count as other.
  BufferId Scratch(int rank, const std::string& name, std::int64_t count,
                   MemoryCategory category = MemoryCategory::kOther) {
    Buffer b{name, rank, std::max<std::int64_t>(count, 1), c_.dtype};
    b.category = category;
    return builder_.AddBuffer(b);
  }

  BufferSlice S(BufferId id, std::int64_t offset, std::int64_t count) const { return BufferSlice{id, offset, count}; }

  void BuildReplicaBuffers(int replica, int slots) {
    const DecoderConfig& m = c_.model;
    const auto& mbs = mbs_[static_cast<std::size_t>(replica)];
    for (int s = 0; s < l_.pp; ++s)
      for (int t = 0; t < l_.tp; ++t) {
        const int rank = l_.rank(replica, s, t);
        if (s == 0) {
          embed_[rank] = Weight(rank, "embed", -1, 0, m.vocab, 0, h_);
          pos_[rank] = Weight(rank, "pos", -1, 0, m.max_context, 0, h_);
        }
        if (s == l_.pp - 1) head_[rank] = Weight(rank, "head", -1, 0, h_, 0, m.vocab);
        for (int l = 0; l < m.layers; ++l) {
          if (StageOfLayer(l) != s) continue;
          LayerWeights w{};
          w.wq = Weight(rank, "Wq", l, 0, h_, t * w_, w_);
          w.bq = Weight(rank, "bq", l, 0, 1, t * w_, w_);
          w.wk = Weight(rank, "Wk", l, 0, h_, t * w_, w_);
          w.bk = Weight(rank, "bk", l, 0, 1, t * w_, w_);
          w.wv = Weight(rank, "Wv", l, 0, h_, t * w_, w_);
          w.bv = Weight(rank, "bv", l, 0, 1, t * w_, w_);
          w.wo = Weight(rank, "Wo", l, t * w_, w_, 0, h_);
          w.bo = Weight(rank, "bo", l, 0, 1, 0, h_);
          w.a_w = Weight(rank, "A", l, 0, h_, t * fs_, fs_);
          w.a_b = Weight(rank, "a", l, 0, 1, t * fs_, fs_);
          w.b_w = Weight(rank, "B", l, t * fs_, fs_, 0, h_);
          w.b_b = Weight(rank, "b", l, 0, 1, 0, h_);
          weights_[{rank, l}] = w;
          // The KV cache: every request of the replica a slot of max_context rows × H/tp.
          const std::int64_t count = std::int64_t{slots} * m.max_context * w_;
          kcache_[{rank, l}] = Scratch(rank, "kv.K.L" + std::to_string(l), count, MemoryCategory::kActivations);
          vcache_[{rank, l}] = Scratch(rank, "kv.V.L" + std::to_string(l), count, MemoryCategory::kActivations);
          out_.kv_cache_bytes[static_cast<std::size_t>(rank)] += 2 * count * DTypeBytes(c_.dtype);
        }
        for (int mb = 0; mb < static_cast<int>(mbs.size()); ++mb) {
          std::int64_t rows = 0;
          for (int i : mbs[static_cast<std::size_t>(mb)]) rows += c_.requests[static_cast<std::size_t>(i)].prompt;
          const std::string tag = ".mb" + std::to_string(mb);
          RankMb& b = rank_mb_[{rank, mb}];
          b.x = Scratch(rank, "x" + tag, rows * h_);
          b.u = Scratch(rank, "ln" + tag, rows * h_);
          b.q = Scratch(rank, "q" + tag, rows * w_);
          b.o = Scratch(rank, "attn" + tag, rows * w_);
          b.partial = Scratch(rank, "partial" + tag, rows * h_);
          b.z = Scratch(rank, "mlp.z" + tag, rows * fs_);
          b.act = Scratch(rank, "mlp.relu" + tag, rows * fs_);
          b.scores = Scratch(rank, "scores" + tag, m.max_context);
          b.probs = Scratch(rank, "probs" + tag, m.max_context);
          b.sampled = Scratch(rank, "sampled" + tag, static_cast<std::int64_t>(mbs[static_cast<std::size_t>(mb)].size()));
        }
        if (s == l_.pp - 1)
          for (int i = 0; i < static_cast<int>(c_.requests.size()); ++i) {
            if (out_.replica_of[static_cast<std::size_t>(i)] != replica) continue;
            const std::int64_t rows = static_cast<std::int64_t>(c_.requests[static_cast<std::size_t>(i)].tokens.size());
            const BufferId id = Scratch(rank, "logits.r" + std::to_string(i), rows * m.vocab);
            logits_[{rank, i}] = id;
            out_.logits.push_back({i, rank, id, rows});
          }
      }
  }

  OpId Compute(int rank, int mb, int layer, const std::vector<KernelCall>& kernels) {
    Op op;
    op.kind = OpKind::kCompute;
    op.lane = Lane::kCompute;
    op.rank = rank;
    op.step = step_;
    op.tags.phase = Phase::kForward;
    op.tags.layer = layer;
    op.tags.microbatch = mb;
    RankMb& b = rank_mb_[{rank, mb}];
    const OpId id = builder_.AddCompute(op, kernels, b.last);
    b.last = {id};
    return id;
  }

  // All-reduce of the micro-batch's partial (T × H) among the stage's tp ranks.
  void AllReduce(int replica, int stage, int mb, int layer, int pass, int which, std::int64_t tokens) {
    ++step_;
    if (l_.tp == 1) return;
    GroupCollective g;
    for (int t = 0; t < l_.tp; ++t) {
      const int rank = l_.rank(replica, stage, t);
      RankMb& b = rank_mb_[{rank, mb}];
      g.ranks.push_back(rank);
      g.slices.push_back(S(b.partial, 0, tokens * h_));
      g.after.push_back(b.last);
    }
    g.first_step = step_;
    g.tags.layer = layer;
    g.tags.microbatch = mb;
    g.collective_seq = seq_;
    CollectiveNote note;
    note.tag = std::string(pass == 0 ? "AR prefill L" : "AR decode L") + std::to_string(layer) + (which == 0 ? "a" : "m");
    note.what = std::string("all-reduce of layer ") + std::to_string(layer) + "'s " +
                (which == 0 ? "attention" : "MLP") + " output, " +
                (pass == 0 ? "prefill" : "decode step " + std::to_string(pass)) + " of micro-batch " +
                std::to_string(mb) + " (" + std::to_string(tokens) + " tokens)";
    note.two_passes = true;
    builder_.NoteCollective(seq_, note);
    out_.allreduces.push_back({seq_, replica, stage, layer, mb, pass, which, tokens,
                               tokens * h_ * DTypeBytes(c_.dtype)});
    ++seq_;
    const GroupCollectiveOps ops = AppendGroupCollective(builder_, g);
    for (int t = 0; t < l_.tp; ++t) rank_mb_[{l_.rank(replica, stage, t), mb}].last = ops.done[static_cast<std::size_t>(t)];
    step_ += ops.steps;
  }

  void Transfer(int from, int to, int mb, BufferSlice src, BufferSlice dst, int layer) {
    RankMb& a = rank_mb_[{from, mb}];
    RankMb& b = rank_mb_[{to, mb}];
    OpTags tags;
    tags.phase = Phase::kForward;
    tags.layer = layer;
    tags.microbatch = mb;
    const auto tr = builder_.AddTransfer(from, to, src, dst, ReduceOp::kNone, step_, tags, a.last, b.last);
    a.last.push_back(tr.send);
    b.last = {tr.recv};
    ++step_;
  }

  void Pass(int replica, int mb, int pass) {
    const DecoderConfig& m = c_.model;
    const std::vector<Row> rows = Rows(replica, mb, pass);
    const std::int64_t t_rows = static_cast<std::int64_t>(rows.size());
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_)));
    for (int s = 0; s < l_.pp; ++s) {
      if (s == 0) {
        for (int t = 0; t < l_.tp; ++t) {
          const int rank = l_.rank(replica, 0, t);
          const RankMb& b = rank_mb_[{rank, mb}];
          std::vector<KernelCall> k;
          for (std::int64_t r = 0; r < t_rows; ++r) {
            const Row& row = rows[static_cast<std::size_t>(r)];
            const int tok = c_.requests[static_cast<std::size_t>(row.request)].tokens[static_cast<std::size_t>(row.pos)];
            k.push_back(Ew(KernelKind::kCopy, S(embed_[rank], std::int64_t{tok} * h_, h_), S(b.x, r * h_, h_), 1, h_));
            k.push_back(AddInto(S(pos_[rank], std::int64_t{row.pos} * h_, h_), S(b.x, r * h_, h_)));
          }
          Compute(rank, mb, -1, k);
        }
        ++step_;
      }
      for (int l = 0; l < m.layers; ++l) {
        if (StageOfLayer(l) != s) continue;
        // Attention, up to the partial output.
        for (int t = 0; t < l_.tp; ++t) {
          const int rank = l_.rank(replica, s, t);
          const RankMb& b = rank_mb_[{rank, mb}];
          const LayerWeights& w = weights_[{rank, l}];
          const BufferId kc = kcache_[{rank, l}], vc = vcache_[{rank, l}];
          std::vector<KernelCall> k;
          k.push_back(Norm(S(b.x, 0, t_rows * h_), S(b.u, 0, t_rows * h_), t_rows, h_));
          k.push_back(Mm(S(b.u, 0, t_rows * h_), S(w.wq, 0, h_ * w_), S(b.q, 0, t_rows * w_), t_rows, w_, h_));
          k.push_back(Ew(KernelKind::kAddBias, S(w.bq, 0, w_), S(b.q, 0, t_rows * w_), t_rows, w_));
          // New K and V rows into each request's cache slot, a run of rows at a time.
          for (std::size_t r0 = 0; r0 < rows.size();) {
            std::size_t r1 = r0 + 1;
            while (r1 < rows.size() && rows[r1].request == rows[r0].request) ++r1;
            const std::int64_t n = static_cast<std::int64_t>(r1 - r0);
            const std::int64_t at = (std::int64_t{slot_[static_cast<std::size_t>(rows[r0].request)]} * m.max_context + rows[r0].pos) * w_;
            const BufferSlice u = S(b.u, static_cast<std::int64_t>(r0) * h_, n * h_);
            k.push_back(Mm(u, S(w.wk, 0, h_ * w_), S(kc, at, n * w_), n, w_, h_));
            k.push_back(Ew(KernelKind::kAddBias, S(w.bk, 0, w_), S(kc, at, n * w_), n, w_));
            k.push_back(Mm(u, S(w.wv, 0, h_ * w_), S(vc, at, n * w_), n, w_, h_));
            k.push_back(Ew(KernelKind::kAddBias, S(w.bv, 0, w_), S(vc, at, n * w_), n, w_));
            r0 = r1;
          }
          // Each row attends to its request's cache rows 0..pos, head by head.
          for (std::int64_t r = 0; r < t_rows; ++r) {
            const Row& row = rows[static_cast<std::size_t>(r)];
            const std::int64_t base = std::int64_t{slot_[static_cast<std::size_t>(row.request)]} * m.max_context * w_;
            const std::int64_t len = row.pos + 1;
            for (int g = 0; g < hr_; ++g) {
              KernelCall sc = Mm(S(b.q, r * w_ + g * d_, d_), S(kc, base + g * d_, (len - 1) * w_ + d_),
                                 S(b.scores, 0, len), 1, len, d_, true);
              sc.ldb = static_cast<std::int32_t>(w_);
              k.push_back(sc);
              k.push_back(Ew(KernelKind::kSoftmax, S(b.scores, 0, len), S(b.probs, 0, len), 1, len, scale));
              KernelCall pv = Mm(S(b.probs, 0, len), S(vc, base + g * d_, (len - 1) * w_ + d_),
                                 S(b.o, r * w_ + g * d_, d_), 1, d_, len);
              pv.ldb = static_cast<std::int32_t>(w_);
              k.push_back(pv);
            }
          }
          k.push_back(Mm(S(b.o, 0, t_rows * w_), S(w.wo, 0, w_ * h_), S(b.partial, 0, t_rows * h_), t_rows, h_, w_));
          Compute(rank, mb, l, k);
        }
        AllReduce(replica, s, mb, l, pass, 0, t_rows);
        // Residual and bias, then the MLP up to its partial output.
        for (int t = 0; t < l_.tp; ++t) {
          const int rank = l_.rank(replica, s, t);
          const RankMb& b = rank_mb_[{rank, mb}];
          const LayerWeights& w = weights_[{rank, l}];
          const BufferSlice x = S(b.x, 0, t_rows * h_), u = S(b.u, 0, t_rows * h_), p = S(b.partial, 0, t_rows * h_);
          const BufferSlice z = S(b.z, 0, t_rows * fs_), act = S(b.act, 0, t_rows * fs_);
          Compute(rank, mb, l,
                  {AddInto(p, x), Ew(KernelKind::kAddBias, S(w.bo, 0, h_), x, t_rows, h_), Norm(x, u, t_rows, h_),
                   Mm(u, S(w.a_w, 0, h_ * fs_), z, t_rows, fs_, h_),
                   Ew(KernelKind::kAddBias, S(w.a_b, 0, fs_), z, t_rows, fs_),
                   Ew(KernelKind::kRelu, z, act, t_rows, fs_), Mm(act, S(w.b_w, 0, fs_ * h_), p, t_rows, h_, fs_)});
        }
        AllReduce(replica, s, mb, l, pass, 1, t_rows);
        for (int t = 0; t < l_.tp; ++t) {
          const int rank = l_.rank(replica, s, t);
          const RankMb& b = rank_mb_[{rank, mb}];
          const LayerWeights& w = weights_[{rank, l}];
          const BufferSlice x = S(b.x, 0, t_rows * h_);
          Compute(rank, mb, l, {AddInto(S(b.partial, 0, t_rows * h_), x), Ew(KernelKind::kAddBias, S(w.b_b, 0, h_), x, t_rows, h_)});
        }
        ++step_;
      }
      if (s + 1 < l_.pp) {
        for (int t = 0; t < l_.tp; ++t) {
          const int from = l_.rank(replica, s, t), to = l_.rank(replica, s + 1, t);
          Transfer(from, to, mb, S(rank_mb_[{from, mb}].x, 0, t_rows * h_), S(rank_mb_[{to, mb}].x, 0, t_rows * h_), -1);
        }
        continue;
      }
      // The last stage: final LayerNorm and the LM head, into each request's logits rows.
      for (int t = 0; t < l_.tp; ++t) {
        const int rank = l_.rank(replica, s, t);
        const RankMb& b = rank_mb_[{rank, mb}];
        std::vector<KernelCall> k{Norm(S(b.x, 0, t_rows * h_), S(b.u, 0, t_rows * h_), t_rows, h_)};
        for (std::size_t r0 = 0; r0 < rows.size();) {
          std::size_t r1 = r0 + 1;
          while (r1 < rows.size() && rows[r1].request == rows[r0].request) ++r1;
          const std::int64_t n = static_cast<std::int64_t>(r1 - r0);
          const BufferId lg = logits_[{rank, rows[r0].request}];
          k.push_back(Mm(S(b.u, static_cast<std::int64_t>(r0) * h_, n * h_), S(head_[rank], 0, h_ * m.vocab),
                         S(lg, std::int64_t{rows[r0].pos} * m.vocab, n * m.vocab), n, m.vocab, h_));
          r0 = r1;
        }
        Compute(rank, mb, -1, k);
      }
      ++step_;
      // The sampled ids (teacher-forced: their values are the seeded ones)
      // go back to stage 0 before the next decode step may start.
      const std::int64_t next = static_cast<std::int64_t>(Rows(replica, mb, pass + 1).size());
      if (l_.pp > 1 && next > 0)
        for (int t = 0; t < l_.tp; ++t) {
          const int from = l_.rank(replica, s, t), to = l_.rank(replica, 0, t);
          Transfer(from, to, mb, S(rank_mb_[{from, mb}].sampled, 0, next), S(rank_mb_[{to, mb}].sampled, 0, next), -1);
        }
    }
  }

  const DecodePlanConfig& c_;
  ServingLayout l_;
  std::int64_t h_, w_, fs_, d_;
  int hr_;
  std::vector<DecoderTensor> specs_;
  PlanBuilder builder_;
  DecodePlan out_;
  std::vector<std::vector<std::vector<int>>> mbs_;  // [replica][mb] -> requests
  std::vector<int> slot_;                           // per request: its KV slot in its replica
  std::map<int, BufferId> embed_, pos_, head_;
  std::map<std::pair<int, int>, LayerWeights> weights_;
  std::map<std::pair<int, int>, BufferId> kcache_, vcache_, logits_;
  std::map<std::pair<int, int>, RankMb> rank_mb_;
  int step_ = 0;
  int seq_ = 0;
};

}  // namespace

void CheckServingLayout(const ServingLayout& l, const DecoderConfig& model) {
  if (l.tp < 1 || l.tp > 4096) Fail("tp: " + std::to_string(l.tp) + " is outside 1..4096");
  if (l.pp < 1) Fail("pp: " + std::to_string(l.pp) + " must be at least 1");
  if (l.replicas < 1) Fail("replicas: " + std::to_string(l.replicas) + " must be at least 1");
  if (l.pp > model.layers)
    Fail("pp: " + std::to_string(l.pp) + " stages for " + std::to_string(model.layers) +
         " layers: every stage needs at least one layer");
  CheckDecoderConfig(model, l.tp);
}

DecodePlan BuildDecodePlan(const DecodePlanConfig& c) {
  CheckServingLayout(c.layout, c.model);
  if (c.requests.empty()) Fail("requests: there must be at least one request");
  if (c.microbatches < 1) Fail("microbatches: " + std::to_string(c.microbatches) + " must be at least 1");
  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    const ServedRequest& q = c.requests[i];
    const std::string who = "request " + std::to_string(i) + ": ";
    if (q.prompt < 1 || q.prompt > static_cast<int>(q.tokens.size()))
      Fail("prompt: " + who + "prompt of " + std::to_string(q.prompt) + " tokens, " +
           std::to_string(q.tokens.size()) + " fed");
    if (static_cast<int>(q.tokens.size()) > c.model.max_context)
      Fail("max-context: " + who + std::to_string(q.tokens.size()) + " positions, more than the " +
           std::to_string(c.model.max_context) + " the KV cache holds per request");
    for (int id : q.tokens)
      if (id < 0 || id >= c.model.vocab) Fail("vocab: " + who + "token id " + std::to_string(id) + " outside 0..V-1");
  }
  return DecodeBuilder(c).Build();
}

}  // namespace shardlab
