#include "engine/train/dp_trainer.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/train/grad_accumulation.h"

namespace shardlab {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

// θ ← θ − lr·g, in double, one rounding.
void Sgd(std::vector<float>& theta, const std::vector<float>& g, double lr) {
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = static_cast<float>(theta[i] - lr * g[i]);
}

// One rank's gradient of step `step`: its K micro-batches, added.
MlpParams RankGradient(const DpTrainConfig& c, const AccumulationSplit& split, const MlpParams& params,
                       const MlpData& data, int rank, float loss_scale, double* loss, std::int64_t* flops) {
  MlpParams grads = MlpParams::ZerosLike(c.model);
  PassOptions options;
  options.recompute = c.recompute;
  options.working = c.precision;
  options.loss_scale = loss_scale;
  for (int j = 0; j < c.accumulate; ++j) {
    const PassResult r = MlpForwardBackward(c.model, params, data, MicrobatchFirstRow(split, rank, j),
                                            split.microbatch_rows, options, &grads);
    *loss += r.loss;
    if (rank == 0) *flops += r.recompute_flops;
  }
  return grads;
}

}  // namespace

int DpTrainResult::skipped_steps() const {
  int n = 0;
  for (const char s : skipped) n += s ? 1 : 0;
  return n;
}

Bytes DpTrainResult::total_bytes() const {
  Bytes n = 0;
  for (const Bytes b : bytes) n += b;
  return n;
}

void CheckDpTrainConfig(const DpTrainConfig& c) {
  CheckMlpConfig(c.model);
  if (c.model.optimizer != OptimizerKind::kSgd) Fail("optimizer: dp-train trains with SGD");
  if (c.ranks < 1 || c.ranks > 64) Fail("ranks: " + std::to_string(c.ranks) + " is outside 1..64");
  if (c.steps < 1 || c.steps > 10000) Fail("steps: " + std::to_string(c.steps) + " is outside 1..10000");
  SplitForAccumulation(c.model.batch, c.ranks, c.accumulate);
  if (!c.recompute.empty() && static_cast<int>(c.recompute.size()) != c.model.layers)
    Fail("recompute: one entry per layer");
  CheckCompressionConfig(c.compression);
  if (c.local_steps < 1) Fail("local_steps: must be at least 1 (got " + std::to_string(c.local_steps) + ")");
  if (c.staleness < 0) Fail("staleness: must be at least 0 (got " + std::to_string(c.staleness) + ")");
  const bool compressed = c.compression.kind != Compression::kNone;
  if (c.local_steps > 1 && c.staleness > 0) Fail("staleness: local SGD (local_steps > 1) and stale-synchronous SGD are two modes; choose one");
  if ((c.local_steps > 1 || c.staleness > 0) && (compressed || c.mixed()))
    Fail(std::string(c.local_steps > 1 ? "local_steps" : "staleness") +
         ": runs in fp32 without gradient compression (set compress = none, precision = fp32)");
  if (c.mixed() && compressed && c.compression.kind != WireCompression(c.precision)) {
    const std::string p = CompressionName(WireCompression(c.precision));
    Fail("compress: with " + p + " mixed precision the gradients are " + p + " already (compress none or " + p +
         "); int8 and topk run in fp32");
  }
  if (c.overflow_rank >= c.ranks) Fail("overflow: rank " + std::to_string(c.overflow_rank) + " is not one of the " + std::to_string(c.ranks) + " ranks");
  if (c.overflow_rank >= 0 && !c.loss_scaled())
    Fail("overflow: an injected overflow needs precision = fp16 (the loss scale; bf16 has none)");
  if (c.overflow_step >= c.steps) Fail("overflow: step " + std::to_string(c.overflow_step) + " is past the last step");
  if (!c.step_time.empty() && static_cast<int>(c.step_time.size()) != c.ranks) Fail("slow_rank: one step time per rank");
}

DpTrainResult RunDpTraining(const DpTrainConfig& c) {
  CheckDpTrainConfig(c);
  const AccumulationSplit split = SplitForAccumulation(c.model.batch, c.ranks, c.accumulate);
  const MlpData data = MlpData::Of(c.model, c.seed);
  const double lr = c.model.learning_rate;
  const int n = c.ranks;
  DpTrainResult out;
  out.params.assign(static_cast<std::size_t>(n), MlpParams::Initial(c.model, c.seed));
  const std::int64_t psi = out.params[0].size();
  CompressionConfig plain;

  if (c.staleness > 0) {  // stale-synchronous: a shared θ, pushes as ranks finish
    std::vector<double> times = c.step_time;
    if (times.empty()) times.assign(static_cast<std::size_t>(n), 1.0);
    out.stale = StaleSyncSchedule(times, c.steps, c.staleness);
    std::vector<float> theta = out.params[0].Flat();
    // Events in time order; a push at time t is seen by a read at t.
    struct Point { double time; int kind; std::size_t step; };  // kind 0: push (end), 1: read (start)
    std::vector<Point> points;
    for (std::size_t i = 0; i < out.stale.size(); ++i) {
      points.push_back({out.stale[i].start, 1, i});
      points.push_back({out.stale[i].end, 0, i});
    }
    std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
      return a.time != b.time ? a.time < b.time : a.kind < b.kind;
    });
    std::vector<std::vector<float>> snapshot(out.stale.size());
    MlpParams view = out.params[0];
    int pushes = 0;
    for (const Point& p : points) {
      const StaleStep& s = out.stale[p.step];
      if (p.kind == 1) {
        snapshot[p.step] = theta;
        continue;
      }
      if (pushes % n == 0) {
        view.SetFlat(theta);
        out.loss.push_back(MlpBatchLoss(c.model, view, data));
      }
      view.SetFlat(snapshot[p.step]);
      double loss = 0;
      std::int64_t flops = 0;
      const MlpParams g = RankGradient(c, split, view, data, s.rank, 1.0f, &loss, &flops);
      Sgd(theta, g.Flat(), lr);
      snapshot[p.step].clear();
      out.max_staleness = std::max(out.max_staleness, s.staleness());
      out.makespan = std::max(out.makespan, s.end);
      ++pushes;
    }
    // Each push sends Ψ gradients to the server (rank 0), which sends Ψ
    // parameters back: the server, the busiest rank, sends (N−1)·4Ψ a step.
    out.bytes.assign(static_cast<std::size_t>(c.steps), Bytes{4} * psi * (n - 1));
    out.communicated.assign(static_cast<std::size_t>(c.steps), 1);
    out.skipped.assign(static_cast<std::size_t>(c.steps), 0);
    out.scale.assign(static_cast<std::size_t>(c.steps), 1.0);
    view.SetFlat(theta);
    out.final_loss = MlpBatchLoss(c.model, view, data);
    for (MlpParams& p : out.params) p = view;
    return out;
  }

  if (c.local_steps > 1) {  // local SGD: own copies, averaged every H steps
    for (int step = 0; step < c.steps; ++step) {
      double loss = 0;
      for (int r = 0; r < n; ++r) {
        const MlpParams g = RankGradient(c, split, out.params[r], data, r, 1.0f, &loss, &out.recompute_flops);
        std::vector<float> theta = out.params[r].Flat();
        Sgd(theta, g.Flat(), lr * n);
        out.params[r].SetFlat(theta);
      }
      out.loss.push_back(loss);
      out.skipped.push_back(0);
      out.scale.push_back(1.0);
      const bool average = LocalSgdAverages(step, c.local_steps, c.steps);
      out.communicated.push_back(average ? 1 : 0);
      out.bytes.push_back(average ? CompressedAllReduceBytes(plain, psi, n) : 0);
      if (!average) continue;
      std::vector<std::vector<float>> copies;
      for (const MlpParams& p : out.params) copies.push_back(p.Flat());
      std::vector<float> mean = CompressedAllReduce(plain, copies, nullptr).sum;
      for (float& v : mean) v = static_cast<float>(static_cast<double>(v) / n);
      for (MlpParams& p : out.params) p.SetFlat(mean);
    }
    out.final_loss = MlpBatchLoss(c.model, out.params[0], data);
    return out;
  }

  // Synchronous data parallel.
  std::vector<float> master = out.params[0].Flat();
  DynamicLossScale scaler(c.loss_scale);
  CompressionConfig wire = c.compression;
  if (c.mixed() && wire.kind == Compression::kNone) wire.kind = WireCompression(c.precision);  // half grads
  std::vector<std::vector<float>> residuals(static_cast<std::size_t>(n), std::vector<float>(static_cast<std::size_t>(psi), 0.0f));
  MlpParams working = out.params[0];
  for (int step = 0; step < c.steps; ++step) {
    std::vector<float> work = master;
    RoundToWorking(c.precision, work);  // the fp16 / bf16 working copy
    working.SetFlat(work);
    const float scale = c.loss_scaled() ? static_cast<float>(scaler.scale()) : 1.0f;
    double loss = 0;
    std::vector<std::vector<float>> grads;
    bool any = false;
    for (int r = 0; r < n; ++r) {
      MlpParams g = RankGradient(c, split, working, data, r, scale, &loss, &out.recompute_flops);
      if (r == c.overflow_rank && step == c.overflow_step) g.w[0][0] = INFINITY;  // the bad batch
      grads.push_back(g.Flat());
      const bool flag = c.loss_scaled() && HasNonFinite(grads.back());
      out.overflow_rank.push_back(flag ? 1 : 0);
      any = any || flag;  // the one-element all-reduce (max) of the flags
    }
    out.loss.push_back(loss);
    out.scale.push_back(scale);
    Bytes bytes = c.loss_scaled() ? CompressedAllReduceBytes(plain, 1, n) : 0;  // the flag
    const bool skip = c.loss_scaled() && scaler.Update(any);
    out.skipped.push_back(skip ? 1 : 0);
    if (skip) {  // every rank skips: nothing is sent, nothing updated
      out.communicated.push_back(0);
      out.bytes.push_back(bytes);
      continue;
    }
    // fp16, bf16: each rank sends g/N (N a power of two keeps it exact), so
    // the ring's partial sums stay within the largest rank's gradient and
    // cannot overflow where no rank did.
    if (c.mixed())
      for (std::vector<float>& g : grads)
        for (float& v : g) v = RoundToWorking(c.precision, static_cast<float>(static_cast<double>(v) / n));
    const CompressedSum sum = CompressedAllReduce(wire, grads, &residuals);
    out.communicated.push_back(1);
    out.bytes.push_back(bytes + sum.bytes_sent_per_rank);
    if (!sum.bound.empty()) {
      for (std::int64_t i = 0; i < psi; ++i) {
        double exact = 0;
        for (int r = 0; r < n; ++r) exact += grads[r][i];
        const double error = std::fabs(sum.sum[i] - exact);
        if (error > 0) out.compression_error_ratio = std::max(out.compression_error_ratio, error / sum.bound[i]);
      }
    }
    std::vector<float> g = sum.sum;
    if (c.mixed())
      for (float& v : g) v = static_cast<float>(static_cast<double>(v) * n / scale);  // unscale, fp32
    if (step == 0) {
      out.first_gradient = MlpParams::ZerosLike(c.model);
      out.first_gradient.SetFlat(g);
    }
    Sgd(master, g, lr);
    if (HasNonFinite(master)) ++out.nonfinite_updates;
  }
  for (MlpParams& p : out.params) p.SetFlat(master);
  out.final_loss = MlpBatchLoss(c.model, out.params[0], data);
  return out;
}

}  // namespace shardlab
