#include "engine/verify/decoder_bounds.h"

#include <algorithm>
#include <cmath>

#include "engine/model/quantize.h"
#include "engine/verify/bounds.h"

namespace shardlab {
namespace {

constexpr double kEpsilon = 1e-5;  // LayerNorm, as the host kernel

struct BMat {
  std::vector<double> v, var;
  BMat() = default;
  explicit BMat(std::size_t n) : v(n, 0.0), var(n, 0.0) {}
};

class Forward {
 public:
  Forward(const DecoderConfig& c, std::uint64_t seed, double u, bool int8)
      : c_(c), seed_(seed), u_(u), int8_(int8), tensors_(DecoderTensors(c)) {}

  DecoderLogits Run(const std::vector<int>& tokens) {
    const std::int64_t t = static_cast<std::int64_t>(tokens.size()), h = c_.hidden;
    BMat x(static_cast<std::size_t>(t * h));
    const DecoderTensor& embed = Find("embed", -1);
    const DecoderTensor& pos = Find("pos", -1);
    for (std::int64_t i = 0; i < t; ++i)
      for (std::int64_t j = 0; j < h; ++j) {
        const std::size_t at = static_cast<std::size_t>(i * h + j);
        x.v[at] = DecoderWeight(seed_, embed, tokens[static_cast<std::size_t>(i)] * h + j) +
                  DecoderWeight(seed_, pos, i * h + j);
        x.var[at] = u_ * u_ * x.v[at] * x.v[at];
      }
    for (int l = 0; l < c_.layers; ++l) x = Layer(l, x, t);
    const BMat y = LayerNorm(x, t, h);
    const BMat logits = MatMul(y, Weight("head", -1), t, c_.vocab, h);
    DecoderLogits out;
    out.rows = t;
    out.cols = c_.vocab;
    out.value = logits.v;
    out.bound.resize(logits.var.size());
    for (std::size_t i = 0; i < logits.var.size(); ++i) out.bound[i] = kSigmas * std::sqrt(logits.var[i]);
    return out;
  }

 private:
  const DecoderTensor& Find(const char* name, int layer) const {
    return FindDecoderTensor(tensors_, name, layer);
  }

  BMat Weight(const char* name, int layer) const {
    const DecoderTensor& w = Find(name, layer);
    BMat m(static_cast<std::size_t>(w.rows * w.cols));
    for (std::size_t i = 0; i < m.v.size(); ++i) m.v[i] = DecoderWeight(seed_, w, static_cast<std::int64_t>(i));
    if (int8_ && w.rows > 1 && w.name != "embed" && w.name != "pos") m.v = QuantizeInt8PerChannel(m.v, w.rows, w.cols);
    return m;
  }

  double c(std::int64_t k) const { return static_cast<double>(k + 1) * static_cast<double>(k) * u_ * u_; }

  // c[m×n] = a[m×k]·b[k×n] (tb: b stored [n×k]); a's and b's errors and the rounding.
  BMat MatMul(const BMat& a, const BMat& b, std::int64_t m, std::int64_t n, std::int64_t k,
              bool tb = false, std::int64_t a0 = 0, std::int64_t lda = -1, std::int64_t b0 = 0,
              std::int64_t ldb = -1) const {
    if (lda < 0) lda = k;
    if (ldb < 0) ldb = tb ? k : n;
    BMat out(static_cast<std::size_t>(m * n));
    std::vector<double> squares(out.v.size(), 0.0);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p < k; ++p) {
        const std::size_t ai = static_cast<std::size_t>(a0 + i * lda + p);
        const double av = a.v[ai], avar = a.var[ai];
        for (std::int64_t j = 0; j < n; ++j) {
          const std::size_t bi = static_cast<std::size_t>(b0 + (tb ? j * ldb + p : p * ldb + j));
          const double bv = b.v[bi], bvar = b.var[bi];
          const std::size_t ci = static_cast<std::size_t>(i * n + j);
          out.v[ci] += av * bv;
          out.var[ci] += avar * bv * bv + av * av * bvar + avar * bvar;
          squares[ci] += av * av * bv * bv;
        }
      }
    for (std::size_t i = 0; i < out.v.size(); ++i) out.var[i] += c(k) * squares[i];
    return out;
  }

  void AddRow(BMat& a, const BMat& row) const {
    const std::size_t n = row.v.size();
    for (std::size_t i = 0; i < a.v.size(); ++i) {
      a.v[i] += row.v[i % n];
      a.var[i] += row.var[i % n] + u_ * u_ * a.v[i] * a.v[i];
    }
  }

  void AddInto(BMat& a, const BMat& b) const {
    for (std::size_t i = 0; i < a.v.size(); ++i) {
      a.v[i] += b.v[i];
      a.var[i] += b.var[i] + u_ * u_ * a.v[i] * a.v[i];
    }
  }

  BMat LayerNorm(const BMat& x, std::int64_t m, std::int64_t n) const {
    BMat y(x.v.size());
    for (std::int64_t i = 0; i < m; ++i) {
      const double* row = &x.v[static_cast<std::size_t>(i * n)];
      const double* rvar = &x.var[static_cast<std::size_t>(i * n)];
      double mean = 0, var = 0;
      for (std::int64_t j = 0; j < n; ++j) mean += row[j];
      mean /= n;
      for (std::int64_t j = 0; j < n; ++j) var += (row[j] - mean) * (row[j] - mean);
      const double rstd = 1.0 / std::sqrt(var / n + kEpsilon);
      double sum_var = 0, sum_yvar = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double yh = (row[j] - mean) * rstd;
        sum_var += rvar[j];
        sum_yvar += yh * yh * rvar[j];
      }
      const double nn = static_cast<double>(n) * n;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::size_t at = static_cast<std::size_t>(i * n + j);
        const double yh = (row[j] - mean) * rstd;
        y.v[at] = yh;
        const double round = (2.0 * n + 10) * u_ * (std::abs(yh) + 1);
        y.var[at] = 3 * rstd * rstd * (rvar[j] + sum_var / nn + yh * yh * sum_yvar / nn) + round * round;
      }
    }
    return y;
  }

  void Relu(BMat& z) const {
    for (std::size_t i = 0; i < z.v.size(); ++i) {
      const double s = std::sqrt(z.var[i]);
      if (z.v[i] > kSigmas * s) continue;
      if (z.v[i] < -kSigmas * s) {
        z.v[i] = 0;
        z.var[i] = 0;
        continue;
      }
      const double worst = (std::abs(z.v[i]) + kSigmas * s) / kSigmas;
      z.v[i] = std::max(z.v[i], 0.0);
      z.var[i] = worst * worst;
    }
  }

  // Softmax of alpha·s over n values, in place.
  void Softmax(BMat& s, double alpha) const {
    const std::size_t n = s.v.size();
    double top = -INFINITY, sum = 0;
    for (std::size_t j = 0; j < n; ++j) top = std::max(top, alpha * s.v[j]);
    std::vector<double> p(n);
    for (std::size_t j = 0; j < n; ++j) sum += p[j] = std::exp(alpha * s.v[j] - top);
    double spread = 0;
    for (std::size_t j = 0; j < n; ++j) {
      p[j] /= sum;
      spread += p[j] * p[j] * alpha * alpha * s.var[j];
    }
    for (std::size_t j = 0; j < n; ++j) {
      const double round = (static_cast<double>(n) + 5) * u_ * p[j];
      s.var[j] = 2 * p[j] * p[j] * (alpha * alpha * s.var[j] + spread) + round * round;
      s.v[j] = p[j];
    }
  }

  BMat Layer(int l, const BMat& x, std::int64_t t) {
    const std::int64_t h = c_.hidden, f = c_.ffn_width(), d = c_.head_size();
    BMat out = x;
    // Attention: each position p attends to 0..p.
    const BMat u = LayerNorm(x, t, h);
    auto project = [&](const char* w, const char* b) {
      BMat m = MatMul(u, Weight(w, l), t, h, h);
      AddRow(m, Weight(b, l));
      return m;
    };
    const BMat q = project("Wq", "bq"), k = project("Wk", "bk"), v = project("Wv", "bv");
    BMat o(static_cast<std::size_t>(t * h));
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    for (int g = 0; g < c_.heads; ++g)
      for (std::int64_t p = 0; p < t; ++p) {
        BMat s = MatMul(q, k, 1, p + 1, d, true, p * h + g * d, h, g * d, h);
        Softmax(s, scale);
        const BMat og = MatMul(s, v, 1, d, p + 1, false, 0, p + 1, g * d, h);
        for (std::int64_t j = 0; j < d; ++j) {
          o.v[static_cast<std::size_t>(p * h + g * d + j)] = og.v[static_cast<std::size_t>(j)];
          o.var[static_cast<std::size_t>(p * h + g * d + j)] = og.var[static_cast<std::size_t>(j)];
        }
      }
    const BMat attn = MatMul(o, Weight("Wo", l), t, h, h);
    AddInto(out, attn);
    AddRow(out, Weight("bo", l));
    // MLP.
    const BMat w = LayerNorm(out, t, h);
    BMat z = MatMul(w, Weight("A", l), t, f, h);
    AddRow(z, Weight("a", l));
    Relu(z);
    const BMat mlp = MatMul(z, Weight("B", l), t, h, f);
    AddInto(out, mlp);
    AddRow(out, Weight("b", l));
    return out;
  }

  DecoderConfig c_;
  std::uint64_t seed_;
  double u_;
  bool int8_;
  std::vector<DecoderTensor> tensors_;
};

}  // namespace

DecoderLogits DecoderReferenceLogits(const DecoderConfig& config, std::uint64_t seed,
                                     const std::vector<int>& tokens, double unit_roundoff, bool int8_weights) {
  return Forward(config, seed, unit_roundoff, int8_weights).Run(tokens);
}

}  // namespace shardlab
