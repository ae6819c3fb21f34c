// Builds data-parallel and ZeRO training plans; see zero.h for what each
// stage keeps. Per training step and rank:
//
//   forward   layer 0 .. L-1      (stage 3: copy own chunk, all-gather the layer first)
//   backward  layer L-1 .. 0      (stage 3: gather again); when a unit's lowest
//                                 layer is done, its gradient is reduced:
//                                 stage 0 all-reduce, 1 reduce-scatter in place,
//                                 2-3 reduce-scatter a transient buffer and keep
//                                 the own chunk
//   update    Adam on what the rank owns, then the fp16 copy of it
//                                 (stages 1-2: all-gather the unit's parameters)
//
// Ordering that needs no dependency: ops on one rank's compute lane run in
// plan order (op_kinds.h), so a step's forward follows the previous update
// there; only collectives (other lanes) are waited for explicitly.
#include "engine/algorithms/zero.h"

#include <string>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/group_collective.h"
#include "engine/core/error.h"
#include "engine/plan/kernel.h"

namespace shardlab {
namespace {

constexpr DType kHalf = DType::kF16;

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

// Element-wise kernels take a 32-bit length: longer ranges (a 7.5B model's
// whole master copy) go in pieces.
constexpr std::int64_t kPiece = std::int64_t{1} << 30;

BufferSlice PieceOf(BufferSlice s, std::int64_t at, std::int64_t n) { return {s.buffer, s.offset + at, n}; }

// to = from, in pieces.
std::vector<KernelCall> Copy(BufferSlice from, BufferSlice to) {
  std::vector<KernelCall> calls;
  for (std::int64_t at = 0; at < to.count; at += kPiece) {
    const std::int64_t n = std::min(kPiece, to.count - at);
    calls.push_back(ElementwiseCall(KernelKind::kCopy, PieceOf(from, at, n), {}, PieceOf(to, at, n), 1,
                                    static_cast<int>(n)));
  }
  return calls;
}

// Adam on master (with m, v) from grad, in pieces.
std::vector<KernelCall> Adam(const MlpConfig& m, BufferSlice master, BufferSlice grad, BufferSlice m1,
                             BufferSlice m2, int step) {
  std::vector<KernelCall> calls;
  for (std::int64_t at = 0; at < master.count; at += kPiece) {
    const std::int64_t n = std::min(kPiece, master.count - at);
    calls.push_back(MlpOptimizerCall(m, PieceOf(master, at, n), PieceOf(grad, at, n), PieceOf(m1, at, n),
                                     PieceOf(m2, at, n), step));
  }
  return calls;
}

std::vector<KernelCall> Join(std::initializer_list<std::vector<KernelCall>> parts) {
  std::vector<KernelCall> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

class ZeroBuilder {
 public:
  explicit ZeroBuilder(const ZeroParams& p)
      : p_(p), m_(p.model), n_(p.ranks), h_(p.model.width), hh_(h_ * h_),
        rows_(p.model.batch / p.ranks), units_(ZeroUnits(p)),
        builder_(Name(p), p.ranks) {
    m_.optimizer = OptimizerKind::kAdam;
    unit_of_.assign(static_cast<std::size_t>(m_.layers), 0);
    for (std::size_t u = 0; u < units_.size(); ++u)
      for (int l = units_[u].first_layer; l <= units_[u].last_layer; ++l) unit_of_[l] = static_cast<int>(u);
    shard_offset_.assign(static_cast<std::size_t>(n_), std::vector<std::int64_t>(units_.size(), 0));
    shard_count_.assign(static_cast<std::size_t>(n_), 0);
    for (int r = 0; r < n_; ++r)
      for (std::size_t u = 0; u < units_.size(); ++u) {
        shard_offset_[r][u] = shard_count_[r];
        shard_count_[r] += ChunkCount(units_[u].size(), n_, r);
      }
  }

  ZeroPlan Build() {
    ZeroPlan out;
    out.params = p_;
    out.params.model.optimizer = OptimizerKind::kAdam;
    out.parameter_count = MlpParameterCount(m_);
    out.units = units_;
    out.shard_count = shard_count_;
    AllocateAndLoad();
    param_ready_.assign(units_.size(), std::vector<std::vector<OpId>>(static_cast<std::size_t>(n_)));
    for (int k = 0; k < p_.steps; ++k) TrainStep(k);
    out.collectives_per_step = seq_ / p_.steps;
    for (int r = 0; r < n_; ++r) {
      const RankState& rs = rank_[r];
      std::vector<ZeroPiece> master, working;
      if (p_.stage == 0) {
        master.push_back({0, Whole(rs.master)});
      } else {
        for (std::size_t u = 0; u < units_.size(); ++u)
          master.push_back({ChunkStart(u, r), ShardSlice(rs.master, r, u)});
      }
      if (p_.stage < 3) {
        working.push_back({0, Whole(rs.params)});
      } else {
        working = master;
        for (std::size_t u = 0; u < units_.size(); ++u) working[u].slice = ShardSlice(rs.params, r, u);
      }
      out.master.push_back(std::move(master));
      out.working.push_back(std::move(working));
      out.loss.push_back(rs.loss);
    }
    out.plan = builder_.Finish();
    return out;
  }

 private:
  struct RankState {
    BufferId input = kNoBuffer, target = kNoBuffer, loss = kNoBuffer;
    BufferId params = kNoBuffer, grads = kNoBuffer, master = kNoBuffer, m = kNoBuffer, v = kNoBuffer;
    std::vector<BufferId> z, a, gz, ga;  // [layer], B/N × H activations
  };

  static std::string Name(const ZeroParams& p) {
    return (p.stage == 0 ? std::string("data parallel") : "ZeRO-" + std::to_string(p.stage)) + ", " +
           std::to_string(p.ranks) + " ranks, MLP " + std::to_string(p.model.layers) + "x" +
           std::to_string(p.model.width) + ", adam, " + std::to_string(p.steps) + " step" +
           (p.steps == 1 ? "" : "s");
  }

  // A unit in the labels: stage 3 gathers and reduces a layer ("L3",
  // "layer 3"), stages 0-2 a bucket ("b1", "bucket 1 (layers 1-0)").
  std::string UnitTag(std::size_t u) const {
    return p_.stage == 3 ? "L" + std::to_string(units_[u].first_layer) : "b" + std::to_string(u);
  }
  std::string UnitWords(std::size_t u) const {
    const ZeroUnit& unit = units_[u];
    const std::string layers = unit.first_layer == unit.last_layer
                                   ? "layer " + std::to_string(unit.first_layer)
                                   : "layers " + std::to_string(unit.last_layer) + "-" + std::to_string(unit.first_layer);
    return p_.stage == 3 ? layers : "bucket " + std::to_string(u) + " (" + layers + ")";
  }

  BufferSlice Whole(BufferId id) const { return {id, 0, builder_.buffer(id).count}; }
  std::int64_t ChunkStart(std::size_t u, int r) const {
    return units_[u].begin + ChunkBegin(units_[u].size(), n_, r);
  }
  std::int64_t ChunkLength(std::size_t u, int r) const { return ChunkCount(units_[u].size(), n_, r); }
  BufferSlice ShardSlice(BufferId id, int r, std::size_t u) const {
    return {id, shard_offset_[r][u], ChunkLength(u, r)};
  }
  std::int64_t WeightOffset(int l) const { return ZeroLayerOffset(m_, l); }

  BufferId Add(int rank, const std::string& name, std::int64_t count, DType dtype,
               MemoryCategory category, bool transient = false) {
    Buffer b;
    b.name = name;
    b.rank = rank;
    b.count = count;
    b.dtype = dtype;
    b.category = category;
    b.transient = transient;
    return builder_.AddBuffer(b);
  }

  OpId Compute(int rank, Phase phase, int layer, const std::vector<KernelCall>& kernels,
               const std::vector<OpId>& deps) {
    Op op;
    op.rank = rank;
    op.step = step_;
    op.tags.phase = phase;
    op.tags.layer = layer;
    std::vector<KernelCall> real;
    for (const KernelCall& k : kernels)
      if (k.kind != KernelKind::kCopy || k.c.count > 0) real.push_back(k);
    std::vector<OpId> d;
    for (OpId id : deps)
      if (id != kNoOp) d.push_back(id);
    return builder_.AddCompute(op, real, d);
  }

  std::vector<std::vector<OpId>> Collective(GroupCollectiveKind kind,
                                            const std::vector<BufferSlice>& slices,
                                            const std::vector<std::vector<OpId>>& after, int layer,
                                            CollectiveNote note) {
    GroupCollective g;
    g.kind = kind;
    for (int r = 0; r < n_; ++r) g.ranks.push_back(r);
    g.slices = slices;
    g.after = after;
    g.first_step = step_;
    g.tags.layer = layer;
    g.collective_seq = n_ > 1 ? seq_++ : -1;  // one rank: nothing runs, nothing to count
    builder_.NoteCollective(g.collective_seq, std::move(note));
    const GroupCollectiveOps ops = AppendGroupCollective(builder_, g);
    step_ += ops.steps;
    return ops.done;
  }

  // Copies flat parameters [begin, begin + dst.count) from their initial
  // values: transient buffers holding exactly that part of each tensor's
  // stream (a rank loads only what it keeps, as from a sharded checkpoint).
  void AppendLoad(int rank, std::int64_t begin, BufferSlice dst, std::vector<KernelCall>& kernels) {
    const std::int64_t end = begin + dst.count;
    for (int l = 0; l < m_.layers; ++l) {
      const std::int64_t w0 = WeightOffset(l), b0 = w0 + hh_;
      const std::pair<std::int64_t, std::int64_t> parts[2] = {{w0, hh_}, {b0, h_}};
      for (int t = 0; t < 2; ++t) {
        const std::int64_t lo = std::max(begin, parts[t].first);
        const std::int64_t hi = std::min(end, parts[t].first + parts[t].second);
        if (lo >= hi) continue;
        Buffer init = MlpInitBuffer(rank, (t == 0 ? "init.w" : "init.b") + std::to_string(l), m_,
                                    t == 0 ? MlpTensor::kWeight : MlpTensor::kBias, l, hi - lo);
        init.init_offset = lo - parts[t].first;
        init.transient = true;
        const BufferId id = builder_.AddBuffer(init);
        const std::vector<KernelCall> copy = Copy(Whole(id), {dst.buffer, dst.offset + (lo - begin), hi - lo});
        kernels.insert(kernels.end(), copy.begin(), copy.end());
      }
    }
  }

  void AllocateAndLoad() {
    const std::int64_t psi = MlpParameterCount(m_), act = std::int64_t{rows_} * h_;
    const bool sharded_params = p_.stage == 3, sharded_grads = p_.stage >= 2, sharded_state = p_.stage >= 1;
    rank_.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      RankState& rs = rank_[r];
      Buffer in = MlpInitBuffer(r, "input", m_, MlpTensor::kInput, 0, act);
      in.init_offset = std::int64_t{r} * act;  // this rank's rows of the batch
      rs.input = builder_.AddBuffer(in);
      Buffer target = MlpInitBuffer(r, "target", m_, MlpTensor::kTarget, 0, act);
      target.init_offset = std::int64_t{r} * act;
      rs.target = builder_.AddBuffer(target);
      rs.loss = Add(r, "loss", p_.steps, DType::kF32, MemoryCategory::kOther);
      const std::int64_t own = shard_count_[r];
      rs.params = Add(r, "params.fp16", sharded_params ? own : psi, kHalf, MemoryCategory::kParameters);
      rs.grads = Add(r, "grads.fp16", sharded_grads ? own : psi, kHalf, MemoryCategory::kGradients);
      rs.master = Add(r, "master.fp32", sharded_state ? own : psi, DType::kF32, MemoryCategory::kOptimizerStates);
      rs.m = Add(r, "adam.m", sharded_state ? own : psi, DType::kF32, MemoryCategory::kOptimizerStates);
      rs.v = Add(r, "adam.v", sharded_state ? own : psi, DType::kF32, MemoryCategory::kOptimizerStates);
      for (int l = 0; l < m_.layers; ++l) {
        const bool last = l + 1 == m_.layers;
        const std::string ls = std::to_string(l);
        rs.z.push_back(Add(r, last ? "y" : "z" + ls, act, kHalf, MemoryCategory::kActivations));
        rs.a.push_back(last ? rs.z.back() : Add(r, "a" + ls, act, kHalf, MemoryCategory::kActivations));
        rs.ga.push_back(Add(r, last ? "dy" : "da" + ls, act, kHalf, MemoryCategory::kActivations));
        rs.gz.push_back(last ? rs.ga.back() : Add(r, "dz" + ls, act, kHalf, MemoryCategory::kActivations));
      }
      // Load, one layer per op so that only one layer's fp32 staging
      // buffers are alive at once: the fp16 parameters the rank keeps, then
      // the fp32 master copy of what it owns.
      for (int l = 0; l < m_.layers; ++l) {
        const std::int64_t lo = WeightOffset(l), hi = lo + hh_ + h_;
        std::vector<KernelCall> kernels;
        if (sharded_params) {
          for (std::size_t u = 0; u < units_.size(); ++u) {
            const std::int64_t begin = std::max(lo, ChunkStart(u, r));
            const std::int64_t end = std::min(hi, ChunkStart(u, r) + ChunkLength(u, r));
            if (begin >= end) continue;
            const BufferSlice shard = ShardSlice(rs.params, r, u);
            AppendLoad(r, begin, {shard.buffer, shard.offset + (begin - ChunkStart(u, r)), end - begin}, kernels);
          }
        } else {
          AppendLoad(r, lo, {rs.params, lo, hi - lo}, kernels);
        }
        Compute(r, Phase::kNone, l, kernels, {});
      }
      std::vector<KernelCall> kernels;
      if (!sharded_state) {
        kernels = Copy(Whole(rs.params), Whole(rs.master));
      } else {
        for (std::size_t u = 0; u < units_.size(); ++u) {
          const std::vector<KernelCall> copy = Copy(OwnParams(r, u), ShardSlice(rs.master, r, u));
          kernels.insert(kernels.end(), copy.begin(), copy.end());
        }
      }
      Compute(r, Phase::kNone, -1, kernels, {});
    }
    ++step_;
  }

  // The fp16 parameters of unit u that rank r owns.
  BufferSlice OwnParams(int r, std::size_t u) const {
    if (p_.stage == 3) return ShardSlice(rank_[r].params, r, u);
    return {rank_[r].params, ChunkStart(u, r), ChunkLength(u, r)};
  }

  // Stage 3: layer l's parameters gathered into a transient buffer on every
  // rank; returns the buffers and fills `ready` with what to wait for.
  std::vector<BufferId> Gather(int l, const char* what, std::vector<std::vector<OpId>>& ready) {
    const std::size_t u = static_cast<std::size_t>(unit_of_[l]);
    std::vector<BufferId> gathered;
    std::vector<BufferSlice> slices;
    std::vector<std::vector<OpId>> after;
    for (int r = 0; r < n_; ++r) {
      const BufferId g = Add(r, std::string("gathered.") + what + std::to_string(l), units_[u].size(),
                             kHalf, MemoryCategory::kGatheredParameters, true);
      gathered.push_back(g);
      slices.push_back(Whole(g));
      after.push_back({Compute(r, Phase::kAllGather, l,
                               Copy(OwnParams(r, u), {g, ChunkBegin(units_[u].size(), n_, r), ChunkLength(u, r)}),
                               {})});
    }
    ++step_;
    const bool forward = std::string(what) == "fwd";
    const std::string layer = std::to_string(l);
    ready = Collective(GroupCollectiveKind::kAllGather, slices, after, l,
                       {"AG L" + layer + " " + what,
                        "all-gather of layer " + layer + "'s parameters before its " + (forward ? "forward" : "backward")});
    return gathered;
  }

  // Layer l's weight and bias on rank r: in the fp16 parameters, or in a
  // gathered buffer.
  BufferSlice Weight(int r, int l, const std::vector<BufferId>& gathered) const {
    if (!gathered.empty()) return {gathered[r], 0, hh_};
    return {rank_[r].params, WeightOffset(l), hh_};
  }
  BufferSlice Bias(int r, int l, const std::vector<BufferId>& gathered) const {
    if (!gathered.empty()) return {gathered[r], hh_, h_};
    return {rank_[r].params, WeightOffset(l) + hh_, h_};
  }

  void TrainStep(int k) {
    const int layers = m_.layers;
    const std::int64_t act = std::int64_t{rows_} * h_;
    auto rows = [&](BufferId id) { return BufferSlice{id, 0, act}; };
    const float inv_batch = 1.0f / static_cast<float>(m_.batch);
    // Forward.
    for (int l = 0; l < layers; ++l) {
      std::vector<std::vector<OpId>> ready(static_cast<std::size_t>(n_));
      std::vector<BufferId> gathered;
      if (p_.stage == 3) gathered = Gather(l, "fwd", ready);
      if (p_.stage == 1 || p_.stage == 2) ready = param_ready_[unit_of_[l]];
      for (int r = 0; r < n_; ++r) {
        const RankState& rs = rank_[r];
        const bool last = l + 1 == layers;
        const BufferSlice in = l == 0 ? rows(rs.input) : rows(rs.a[l - 1]);
        std::vector<KernelCall> kernels = {
            MatMulCall(in, Weight(r, l, gathered), rows(rs.z[l]), rows_, h_, h_),
            ElementwiseCall(KernelKind::kAddBias, Bias(r, l, gathered), {}, rows(rs.z[l]), rows_, h_)};
        if (!last) kernels.push_back(ElementwiseCall(KernelKind::kRelu, rows(rs.z[l]), {}, rows(rs.a[l]), rows_, h_));
        if (last) {  // the loss over the global batch, and its gradient
          kernels.push_back(ElementwiseCall(KernelKind::kMseLoss, rows(rs.z[l]), rows(rs.target),
                                            {rs.loss, k, 1}, rows_, h_, 0.5f * inv_batch));
          kernels.push_back(ElementwiseCall(KernelKind::kMseGrad, rows(rs.z[l]), rows(rs.target),
                                            rows(rs.ga[l]), rows_, h_, inv_batch));
        }
        Compute(r, Phase::kForward, l, kernels, ready[r]);
      }
      ++step_;
    }
    // Backward, reducing each unit as its lowest layer finishes.
    std::vector<std::vector<std::vector<OpId>>> reduced(units_.size());
    std::vector<std::size_t> pending;  // units waiting for the end of backward (no overlap)
    std::vector<std::vector<BufferId>> unit_grad(units_.size());  // stages 2-3: transient full gradients
    std::vector<OpId> last_backward(static_cast<std::size_t>(n_), kNoOp);
    for (int l = layers - 1; l >= 0; --l) {
      const std::size_t u = static_cast<std::size_t>(unit_of_[l]);
      std::vector<std::vector<OpId>> ready(static_cast<std::size_t>(n_));
      std::vector<BufferId> gathered;
      if (p_.stage == 3) gathered = Gather(l, "bwd", ready);
      if (p_.stage >= 2 && unit_grad[u].empty())
        for (int r = 0; r < n_; ++r)
          unit_grad[u].push_back(Add(r, "grads.unit" + std::to_string(u) + ".step" + std::to_string(k),
                                     units_[u].size(), kHalf, MemoryCategory::kGradients, true));
      for (int r = 0; r < n_; ++r) {
        const RankState& rs = rank_[r];
        // Where layer l's gradient goes: the full fp16 gradient, or the unit's buffer.
        const BufferId gbuf = p_.stage >= 2 ? unit_grad[u][r] : rs.grads;
        const std::int64_t at = WeightOffset(l) - (p_.stage >= 2 ? units_[u].begin : 0);
        std::vector<KernelCall> kernels;
        if (l + 1 < layers)
          kernels.push_back(ElementwiseCall(KernelKind::kReluBackward, rows(rs.ga[l]), rows(rs.z[l]), rows(rs.gz[l]), rows_, h_));
        const BufferSlice in = l == 0 ? rows(rs.input) : rows(rs.a[l - 1]);
        KernelCall dw = MatMulCall(in, rows(rs.gz[l]), {gbuf, at, hh_}, h_, h_, rows_);
        dw.transpose_a = true;
        kernels.push_back(dw);
        kernels.push_back(ElementwiseCall(KernelKind::kColumnSum, rows(rs.gz[l]), {}, {gbuf, at + hh_, h_}, rows_, h_));
        if (l > 0) {
          KernelCall dx = MatMulCall(rows(rs.gz[l]), Weight(r, l, gathered), rows(rs.ga[l - 1]), rows_, h_, h_);
          dx.transpose_b = true;
          kernels.push_back(dx);
        }
        last_backward[r] = Compute(r, Phase::kBackward, l, kernels, ready[r]);
      }
      ++step_;
      if (l == units_[u].first_layer) {
        if (p_.overlap) reduced[u] = Reduce(u, last_backward, unit_grad[u]);
        else pending.push_back(u);
      }
    }
    for (const std::size_t u : pending) reduced[u] = Reduce(u, last_backward, unit_grad[u]);
    // Update what each rank owns, then share the fp16 parameters.
    if (p_.stage == 0) {
      for (int r = 0; r < n_; ++r) {
        const RankState& rs = rank_[r];
        std::vector<OpId> deps;
        for (const auto& done : reduced) deps.insert(deps.end(), done[r].begin(), done[r].end());
        Compute(r, Phase::kOptimizer, -1,
                Join({Adam(m_, Whole(rs.master), Whole(rs.grads), Whole(rs.m), Whole(rs.v), k + 1),
                      Copy(Whole(rs.master), Whole(rs.params))}),
                deps);
      }
      ++step_;
      return;
    }
    for (std::size_t u = 0; u < units_.size(); ++u) {
      std::vector<std::vector<OpId>> updated(static_cast<std::size_t>(n_));
      for (int r = 0; r < n_; ++r) {
        const RankState& rs = rank_[r];
        const BufferSlice grad = p_.stage == 1 ? BufferSlice{rs.grads, ChunkStart(u, r), ChunkLength(u, r)}
                                               : ShardSlice(rs.grads, r, u);
        std::vector<KernelCall> kernels;
        if (ChunkLength(u, r) > 0)
          kernels = Join({Adam(m_, ShardSlice(rs.master, r, u), grad, ShardSlice(rs.m, r, u),
                               ShardSlice(rs.v, r, u), k + 1),
                          Copy(ShardSlice(rs.master, r, u), OwnParams(r, u))});
        updated[r] = {Compute(r, Phase::kOptimizer, units_[u].first_layer, kernels, reduced[u][r])};
      }
      ++step_;
      if (p_.stage == 3) continue;  // parameters stay sharded; the next forward gathers them
      std::vector<BufferSlice> slices;
      for (int r = 0; r < n_; ++r) slices.push_back({rank_[r].params, units_[u].begin, units_[u].size()});
      param_ready_[u] = Collective(GroupCollectiveKind::kAllGather, slices, updated, units_[u].first_layer,
                                   {"AG " + UnitTag(u) + " upd", "all-gather of the updated parameters of " + UnitWords(u)});
    }
  }

  // Reduces unit u's gradient after `after[r]`; returns each rank's done ops.
  std::vector<std::vector<OpId>> Reduce(std::size_t u, const std::vector<OpId>& after,
                                        const std::vector<BufferId>& unit_grad) {
    std::vector<BufferSlice> slices;
    std::vector<std::vector<OpId>> deps;
    for (int r = 0; r < n_; ++r) {
      slices.push_back(p_.stage >= 2 ? Whole(unit_grad[r])
                                     : BufferSlice{rank_[r].grads, units_[u].begin, units_[u].size()});
      deps.push_back({after[r]});
    }
    const int layer = units_[u].first_layer;
    if (p_.stage == 0)
      return Collective(GroupCollectiveKind::kAllReduce, slices, deps, layer,
                        {"AR " + UnitTag(u), "all-reduce of the gradients of " + UnitWords(u), true});
    auto done = Collective(GroupCollectiveKind::kReduceScatter, slices, deps, layer,
                           {"RS " + UnitTag(u), "reduce-scatter of the gradients of " + UnitWords(u)});
    if (p_.stage == 1) return done;
    // Keep the own chunk; the unit's full gradient is freed after this copy.
    for (int r = 0; r < n_; ++r)
      done[r] = {Compute(r, Phase::kReduceScatter, layer,
                         Copy({unit_grad[r], ChunkBegin(units_[u].size(), n_, r), ChunkLength(u, r)},
                              ShardSlice(rank_[r].grads, r, u)),
                         done[r])};
    ++step_;
    return done;
  }

  ZeroParams p_;
  MlpConfig m_;
  int n_;
  std::int64_t h_, hh_;
  int rows_;
  std::vector<ZeroUnit> units_;
  std::vector<int> unit_of_;                          // [layer]
  std::vector<std::vector<std::int64_t>> shard_offset_;  // [rank][unit]
  std::vector<std::int64_t> shard_count_;             // [rank]
  std::vector<RankState> rank_;
  std::vector<std::vector<std::vector<OpId>>> param_ready_;  // [unit][rank]
  PlanBuilder builder_;
  int step_ = 0;
  int seq_ = 0;
};

}  // namespace

void CheckZeroParams(const ZeroParams& p) {
  CheckMlpConfig(p.model);
  if (p.stage < 0 || p.stage > 3)
    Fail("stage: " + std::to_string(p.stage) + " is not a ZeRO stage (choose 0, 1, 2 or 3)");
  if (p.ranks < 1 || p.ranks > 1024) Fail("ranks: " + std::to_string(p.ranks) + " is outside 1..1024");
  if (p.steps < 1 || p.steps > 1000) Fail("steps: " + std::to_string(p.steps) + " is outside 1..1000");
  if (p.bucket_bytes <= 0)
    Fail("bucket: " + std::to_string(p.bucket_bytes) +
         " bytes; a gradient bucket needs a positive size (PyTorch DDP uses 25 MiB)");
  if (p.model.batch % p.ranks != 0)
    Fail("batch: " + std::to_string(p.model.batch) + " rows do not split into " + std::to_string(p.ranks) +
         " equal shards (one per rank): choose a multiple of " + std::to_string(p.ranks));
}

MlpConfig ZeroDefaultModel() {
  MlpConfig m;
  m.optimizer = OptimizerKind::kAdam;
  m.learning_rate = 1e-3f;
  return m;
}

std::int64_t ZeroLayerOffset(const MlpConfig& model, int layer) {
  const std::int64_t h = model.width;
  return layer * (h * h + h);
}

std::vector<ZeroUnit> ZeroUnits(const ZeroParams& p) {
  CheckZeroParams(p);
  const MlpConfig& m = p.model;
  const std::int64_t layer_size = std::int64_t{m.width} * m.width + m.width;
  std::vector<ZeroUnit> units;
  if (p.stage == 3) {
    for (int l = m.layers - 1; l >= 0; --l)
      units.push_back({ZeroLayerOffset(m, l), ZeroLayerOffset(m, l) + layer_size, l, l});
    return units;
  }
  // Buckets of whole layers from the top, each closed once it holds
  // bucket_bytes of fp16 gradient (a layer larger than that is a bucket alone).
  int top = m.layers - 1;
  while (top >= 0) {
    int low = top;
    Bytes bytes = layer_size * 2;
    while (low > 0 && bytes < p.bucket_bytes) {
      --low;
      bytes += layer_size * 2;
    }
    units.push_back({ZeroLayerOffset(m, low), ZeroLayerOffset(m, top) + layer_size, low, top});
    top = low - 1;
  }
  return units;
}

ZeroPlan BuildZero(const ZeroParams& params) {
  CheckZeroParams(params);
  return ZeroBuilder(params).Build();
}

}  // namespace shardlab
