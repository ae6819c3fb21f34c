#include "engine/verify/tp_bounds.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/core/fill.h"
#include "engine/verify/bounds.h"

namespace shardlab {
namespace {

constexpr double kLayerNormEpsilon = 1e-5;  // as tp_layer.cpp and the host kernel

// Values and σ² of their errors, row-major.
struct BMat {
  std::vector<double> v, var;
  BMat() = default;
  explicit BMat(std::size_t n) : v(n, 0.0), var(n, 0.0) {}
  std::size_t size() const { return v.size(); }
};

struct Ctx {
  double u = 0;
  double c(std::int64_t k) const { return static_cast<double>(k + 1) * static_cast<double>(k) * u * u; }
};

// c[m×n] = a[m×k]·b[k×n]; ta/tb read a as [k×m] / b as [n×k].
BMat MatMul(const Ctx& cx, const BMat& a, const BMat& b, std::int64_t m, std::int64_t n, std::int64_t k,
            bool ta = false, bool tb = false) {
  BMat c(static_cast<std::size_t>(m * n));
  std::vector<double> rounding(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) {
      const std::size_t ai = static_cast<std::size_t>(ta ? p * m + i : i * k + p);
      const double av = a.v[ai], avar = a.var[ai];
      if (av == 0.0 && avar == 0.0) continue;
      double* row = &c.v[i * n];
      double* row_var = &c.var[i * n];
      double* row_round = &rounding[i * n];
      for (std::int64_t j = 0; j < n; ++j) {
        const std::size_t bi = static_cast<std::size_t>(tb ? j * k + p : p * n + j);
        const double bv = b.v[bi], bvar = b.var[bi];
        row[j] += av * bv;
        row_var[j] += avar * bv * bv + av * av * bvar + avar * bvar;
        row_round[j] += av * av * bv * bv;
      }
    }
  const double ck = cx.c(k);
  for (std::size_t i = 0; i < c.size(); ++i) c.var[i] += ck * rounding[i];
  return c;
}

void AddRow(const Ctx& cx, BMat& a, const BMat& row) {
  const std::size_t n = row.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    a.v[i] += row.v[i % n];
    a.var[i] += row.var[i % n] + cx.u * cx.u * a.v[i] * a.v[i];
  }
}

BMat Add(const Ctx& cx, const BMat& a, const BMat& b) {
  BMat c = a;
  for (std::size_t i = 0; i < c.size(); ++i) {
    c.v[i] += b.v[i];
    c.var[i] += b.var[i] + cx.u * cx.u * c.v[i] * c.v[i];
  }
  return c;
}

BMat ColumnSum(const Ctx& cx, const BMat& a, std::int64_t m, std::int64_t n) {
  BMat s(static_cast<std::size_t>(n));
  std::vector<double> squares(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      s.v[j] += a.v[i * n + j];
      s.var[j] += a.var[i * n + j];
      squares[j] += a.v[i * n + j] * a.v[i * n + j];
    }
  for (std::int64_t j = 0; j < n; ++j) s.var[j] += cx.c(m) * squares[j];
  return s;
}

// Mean and 1/sqrt(var + epsilon) of row i (values only).
std::pair<double, double> RowStats(const BMat& x, std::int64_t i, std::int64_t n) {
  double mean = 0, var = 0;
  for (std::int64_t j = 0; j < n; ++j) mean += x.v[i * n + j];
  mean /= n;
  for (std::int64_t j = 0; j < n; ++j) var += (x.v[i * n + j] - mean) * (x.v[i * n + j] - mean);
  return {mean, 1.0 / std::sqrt(var / n + kLayerNormEpsilon)};
}

BMat LayerNorm(const Ctx& cx, const BMat& x, std::int64_t m, std::int64_t n) {
  BMat y(x.size());
  for (std::int64_t i = 0; i < m; ++i) {
    const auto [mean, rstd] = RowStats(x, i, n);
    double sum_var = 0, sum_yvar = 0, sum_x2 = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const double yj = (x.v[i * n + j] - mean) * rstd;
      y.v[i * n + j] = yj;
      sum_var += x.var[i * n + j];
      sum_yvar += yj * yj * x.var[i * n + j];
      sum_x2 += x.v[i * n + j] * x.v[i * n + j];
    }
    const double nn = static_cast<double>(n) * n;
    // The kernel's rounding: the mean (a length-n sum), the variance (another,
    // relative), the square root and the products.
    const double mean_round = cx.c(n) * sum_x2 / nn;
    const double rel_round = cx.c(n) / 4 + 6 * cx.u * cx.u;
    for (std::int64_t j = 0; j < n; ++j) {
      const double yj = y.v[i * n + j];
      y.var[i * n + j] = 3 * rstd * rstd * (x.var[i * n + j] + sum_var / nn + yj * yj * sum_yvar / nn) +
                         rstd * rstd * mean_round + yj * yj * rel_round;
    }
  }
  return y;
}

// dx = rstd·(dy − mean(dy) − x̂·mean(dy·x̂)), row by row; x̂ and rstd carry
// the error of the forward input x.
BMat LayerNormBackward(const Ctx& cx, const BMat& dy, const BMat& x, std::int64_t m, std::int64_t n) {
  const BMat xh = LayerNorm(cx, x, m, n);
  BMat dx(x.size());
  const double nn = static_cast<double>(n) * n;
  for (std::int64_t i = 0; i < m; ++i) {
    const double rstd = RowStats(x, i, n).second;
    double mean_dy = 0, mean_dy_xh = 0, sum_dy_var = 0, sum_xh_dy_var = 0, sum_dy2 = 0, sum_dyxh2 = 0,
           sum_dy2_xhvar = 0, sum_xvar = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t at = static_cast<std::size_t>(i * n + j);
      mean_dy += dy.v[at];
      mean_dy_xh += dy.v[at] * xh.v[at];
      sum_dy_var += dy.var[at];
      sum_xh_dy_var += xh.v[at] * xh.v[at] * dy.var[at];
      sum_dy2 += dy.v[at] * dy.v[at];
      sum_dyxh2 += dy.v[at] * dy.v[at] * xh.v[at] * xh.v[at];
      sum_dy2_xhvar += dy.v[at] * dy.v[at] * xh.var[at];
      sum_xvar += x.var[at];
    }
    mean_dy /= n;
    mean_dy_xh /= n;
    const double var_mean_dy = (sum_dy_var + cx.c(n) * sum_dy2) / nn;
    const double var_mean_dy_xh = (sum_xh_dy_var + sum_dy2_xhvar + cx.c(n) * sum_dyxh2) / nn;
    // rstd's relative error from the input's: at most that of the row's scale.
    const double rstd_rel_var = rstd * rstd * sum_xvar / n + cx.c(n) / 4;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t at = static_cast<std::size_t>(i * n + j);
      const double inner = dy.v[at] - mean_dy - xh.v[at] * mean_dy_xh;
      dx.v[at] = rstd * inner;
      const double inner_var = 3 * (dy.var[at] + var_mean_dy + xh.v[at] * xh.v[at] * var_mean_dy_xh) +
                               3 * mean_dy_xh * mean_dy_xh * xh.var[at];
      dx.var[at] = 2 * (rstd * rstd * inner_var + dx.v[at] * dx.v[at] * rstd_rel_var) +
                   9 * cx.u * cx.u * dx.v[at] * dx.v[at];
    }
  }
  return dx;
}

BMat Block(const BMat& a, std::int64_t stride, std::int64_t r0, std::int64_t rows, std::int64_t c0,
           std::int64_t cols) {
  BMat out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      out.v[i * cols + j] = a.v[(r0 + i) * stride + c0 + j];
      out.var[i * cols + j] = a.var[(r0 + i) * stride + c0 + j];
    }
  return out;
}

void AddBlock(BMat& a, std::int64_t stride, std::int64_t r0, std::int64_t c0, const BMat& block,
              std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      a.v[(r0 + i) * stride + c0 + j] += block.v[i * cols + j];
      a.var[(r0 + i) * stride + c0 + j] += block.var[i * cols + j];
    }
}

using Tensors = std::vector<std::pair<std::string, BMat>>;

const BMat& Get(const Tensors& t, const std::string& name) {
  for (const auto& [n, m] : t)
    if (n == name) return m;
  throw std::out_of_range("tensor-parallel reference has no tensor '" + name + "'");
}

struct Shape {
  std::int64_t b, s, t, h, f, heads, d;
};

struct MlpPass {
  BMat z, act, y;
  void Forward(const Ctx& cx, const Tensors& w, const BMat& u, const Shape& s) {
    z = MatMul(cx, u, Get(w, "A"), s.t, s.f, s.h);
    AddRow(cx, z, Get(w, "a"));
    act = z;
    for (std::size_t i = 0; i < act.size(); ++i) {
      if (act.v[i] <= -kSigmas * std::sqrt(act.var[i])) act.var[i] = 0;
      act.v[i] = std::max(act.v[i], 0.0);
    }
    y = MatMul(cx, act, Get(w, "B"), s.t, s.h, s.f);
    AddRow(cx, y, Get(w, "b"));
  }
  BMat Backward(const Ctx& cx, const Tensors& w, const BMat& u, const BMat& dy, const Shape& s, Tensors& grads) {
    grads.emplace_back("dB", MatMul(cx, act, dy, s.f, s.h, s.t, true));
    grads.emplace_back("db", ColumnSum(cx, dy, s.t, s.h));
    BMat dz = MatMul(cx, dy, Get(w, "B"), s.t, s.f, s.h, false, true);
    for (std::size_t i = 0; i < dz.size(); ++i) {
      const double zi = z.v[i], sz = std::sqrt(z.var[i]);
      if (zi > kSigmas * sz) continue;
      const double g = dz.v[i], g_var = dz.var[i];
      dz.v[i] = zi > 0 ? g : 0.0;
      if (zi < -kSigmas * sz || sz == 0) {
        dz.var[i] = 0;
        continue;
      }
      const double jump = std::fabs(g) + kSigmas * std::sqrt(g_var);
      dz.var[i] = (zi > 0 ? g_var : 0.0) + jump * jump;  // one jump: counted in full
    }
    grads.emplace_back("dA", MatMul(cx, u, dz, s.h, s.f, s.t, true));
    grads.emplace_back("da", ColumnSum(cx, dz, s.t, s.f));
    return MatMul(cx, dz, Get(w, "A"), s.t, s.h, s.f, false, true);
  }
};

struct AttentionPass {
  BMat q, k, v, o, y;
  std::vector<BMat> p;

  void Forward(const Ctx& cx, const Tensors& w, const BMat& u, const Shape& s) {
    auto project = [&](const char* wn, const char* bn) {
      BMat out = MatMul(cx, u, Get(w, wn), s.t, s.h, s.h);
      AddRow(cx, out, Get(w, bn));
      return out;
    };
    q = project("Wq", "bq");
    k = project("Wk", "bk");
    v = project("Wv", "bv");
    o = BMat(static_cast<std::size_t>(s.t * s.h));
    p.clear();
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
    for (std::int64_t b = 0; b < s.b; ++b)
      for (std::int64_t g = 0; g < s.heads; ++g) {
        const BMat qb = Block(q, s.h, b * s.s, s.s, g * s.d, s.d);
        const BMat kb = Block(k, s.h, b * s.s, s.s, g * s.d, s.d);
        const BMat vb = Block(v, s.h, b * s.s, s.s, g * s.d, s.d);
        BMat scores = MatMul(cx, qb, kb, s.s, s.s, s.d, false, true);
        for (std::int64_t i = 0; i < s.s; ++i) {
          double top = -INFINITY, sum = 0;
          for (std::int64_t j = 0; j < s.s; ++j) top = std::max(top, scale * scores.v[i * s.s + j]);
          for (std::int64_t j = 0; j < s.s; ++j) {
            scores.v[i * s.s + j] = std::exp(scale * scores.v[i * s.s + j] - top);
            sum += scores.v[i * s.s + j];
          }
          double weighted = 0;
          for (std::int64_t j = 0; j < s.s; ++j) {
            scores.v[i * s.s + j] /= sum;
            const double pj = scores.v[i * s.s + j];
            weighted += pj * pj * scale * scale * scores.var[i * s.s + j];
          }
          for (std::int64_t j = 0; j < s.s; ++j) {
            const double pj = scores.v[i * s.s + j];
            const double rounding = (s.s + 5) * cx.u * pj;
            scores.var[i * s.s + j] =
                2 * pj * pj * (scale * scale * scores.var[i * s.s + j] + weighted) + rounding * rounding;
          }
        }
        AddBlock(o, s.h, b * s.s, g * s.d, MatMul(cx, scores, vb, s.s, s.d, s.s), s.s, s.d);
        p.push_back(std::move(scores));
      }
    y = MatMul(cx, o, Get(w, "Wo"), s.t, s.h, s.h);
    AddRow(cx, y, Get(w, "bo"));
  }

  BMat Backward(const Ctx& cx, const Tensors& w, const BMat& u, const BMat& dy, const Shape& s, Tensors& grads) {
    grads.emplace_back("dWo", MatMul(cx, o, dy, s.h, s.h, s.t, true));
    grads.emplace_back("dbo", ColumnSum(cx, dy, s.t, s.h));
    const BMat d_o = MatMul(cx, dy, Get(w, "Wo"), s.t, s.h, s.h, false, true);
    BMat dq(q.size()), dk(k.size()), dv(v.size());
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
    for (std::int64_t b = 0; b < s.b; ++b)
      for (std::int64_t g = 0; g < s.heads; ++g) {
        const BMat& pb = p[static_cast<std::size_t>(b * s.heads + g)];
        const BMat qb = Block(q, s.h, b * s.s, s.s, g * s.d, s.d);
        const BMat kb = Block(k, s.h, b * s.s, s.s, g * s.d, s.d);
        const BMat vb = Block(v, s.h, b * s.s, s.s, g * s.d, s.d);
        const BMat dob = Block(d_o, s.h, b * s.s, s.s, g * s.d, s.d);
        BMat dp = MatMul(cx, dob, vb, s.s, s.s, s.d, false, true);
        AddBlock(dv, s.h, b * s.s, g * s.d, MatMul(cx, pb, dob, s.s, s.d, s.s, true), s.s, s.d);
        for (std::int64_t i = 0; i < s.s; ++i) {
          double dot = 0, dot_var = 0, dot_sq = 0;
          for (std::int64_t j = 0; j < s.s; ++j) {
            const std::size_t at = static_cast<std::size_t>(i * s.s + j);
            dot += dp.v[at] * pb.v[at];
            dot_var += pb.v[at] * pb.v[at] * dp.var[at] + dp.v[at] * dp.v[at] * pb.var[at];
            dot_sq += dp.v[at] * dp.v[at] * pb.v[at] * pb.v[at];
          }
          dot_var += cx.c(s.s) * dot_sq;
          for (std::int64_t j = 0; j < s.s; ++j) {
            const std::size_t at = static_cast<std::size_t>(i * s.s + j);
            const double pj = pb.v[at], diff = dp.v[at] - dot;
            const double value = scale * pj * diff;
            dp.var[at] = scale * scale * 3 * (pj * pj * (dp.var[at] + dot_var) + diff * diff * pb.var[at]) +
                         (3 * cx.u * value) * (3 * cx.u * value);
            dp.v[at] = value;
          }
        }
        AddBlock(dq, s.h, b * s.s, g * s.d, MatMul(cx, dp, kb, s.s, s.d, s.s), s.s, s.d);
        AddBlock(dk, s.h, b * s.s, g * s.d, MatMul(cx, dp, qb, s.s, s.d, s.s, true), s.s, s.d);
      }
    BMat du(u.size());
    for (const auto& [name, grad] : {std::pair<const char*, const BMat*>{"q", &dq}, {"k", &dk}, {"v", &dv}}) {
      const std::string wn = std::string("W") + name, bn = std::string("b") + name;
      grads.emplace_back("d" + wn, MatMul(cx, u, *grad, s.h, s.h, s.t, true));
      grads.emplace_back("d" + bn, ColumnSum(cx, *grad, s.t, s.h));
      du = Add(cx, du, MatMul(cx, *grad, Get(w, wn), s.t, s.h, s.h, false, true));
    }
    return du;
  }
};

Shape ShapeOf(const TpLayerConfig& c) {
  Shape s;
  s.b = c.batch;
  s.s = c.seq;
  s.t = c.tokens();
  s.h = c.hidden;
  s.f = c.split_width();
  s.heads = c.head_count();
  s.d = s.heads > 0 ? s.h / s.heads : 0;
  return s;
}

BMat RunLayer(const Ctx& cx, const TpLayerConfig& c, const Tensors& w, const BMat& x, const BMat& dy,
              Tensors& grads) {
  const Shape s = ShapeOf(c);
  switch (c.kind) {
    case TpLayerKind::kColumnLinear:
    case TpLayerKind::kRowLinear: {
      const bool row = c.kind == TpLayerKind::kRowLinear;
      const std::int64_t in = row ? s.f : s.h, out = row ? s.h : s.f;
      const char* wn = row ? "W" : "A";
      const char* bn = row ? "b" : "a";
      BMat y = MatMul(cx, x, Get(w, wn), s.t, out, in);
      AddRow(cx, y, Get(w, bn));
      grads.emplace_back(std::string("d") + wn, MatMul(cx, x, dy, in, out, s.t, true));
      grads.emplace_back(std::string("d") + bn, ColumnSum(cx, dy, s.t, out));
      grads.emplace_back("dx", MatMul(cx, dy, Get(w, wn), s.t, in, out, false, true));
      return y;
    }
    case TpLayerKind::kMlp: {
      MlpPass mlp;
      mlp.Forward(cx, w, x, s);
      grads.emplace_back("dx", mlp.Backward(cx, w, x, dy, s, grads));
      return mlp.y;
    }
    case TpLayerKind::kAttention: {
      AttentionPass attn;
      attn.Forward(cx, w, x, s);
      grads.emplace_back("dx", attn.Backward(cx, w, x, dy, s, grads));
      return attn.y;
    }
    case TpLayerKind::kTransformer: {
      const BMat u = LayerNorm(cx, x, s.t, s.h);
      AttentionPass attn;
      attn.Forward(cx, w, u, s);
      const BMat h = Add(cx, x, attn.y);
      const BMat v = LayerNorm(cx, h, s.t, s.h);
      MlpPass mlp;
      mlp.Forward(cx, w, v, s);
      const BMat y = Add(cx, h, mlp.y);
      const BMat dv = mlp.Backward(cx, w, v, dy, s, grads);
      const BMat dh = Add(cx, dy, LayerNormBackward(cx, dv, h, s.t, s.h));
      const BMat du = attn.Backward(cx, w, u, dh, s, grads);
      grads.emplace_back("dx", Add(cx, dh, LayerNormBackward(cx, du, x, s.t, s.h)));
      return y;
    }
  }
  return {};
}

TpBoundedTensor Finish(const BMat& m, std::int64_t rows, std::int64_t cols) {
  TpBoundedTensor t;
  t.rows = rows;
  t.cols = cols;
  t.value = m.v;
  t.bound.resize(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) t.bound[i] = kSigmas * std::sqrt(m.var[i]);
  return t;
}

}  // namespace

TpBoundedReference::TpBoundedReference(const TpLayerConfig& c, std::uint64_t seed, double unit_roundoff) {
  CheckTpLayerConfig(c);
  Ctx cx;
  cx.u = unit_roundoff;
  Tensors inputs;
  const std::vector<TpTensorSpec> specs = TpLayerTensors(c);
  for (const TpTensorSpec& spec : specs) {
    BMat m(static_cast<std::size_t>(spec.rows * spec.cols));
    for (std::size_t i = 0; i < m.size(); ++i)  // the floats the buffers hold, exact
      m.v[i] = static_cast<double>(spec.scale * InputValue(seed, spec.stream, static_cast<std::int64_t>(i)));
    inputs.emplace_back(spec.name, std::move(m));
  }
  Tensors grads;
  const BMat y = RunLayer(cx, c, inputs, Get(inputs, "x"), Get(inputs, "dy"), grads);
  const TpTensorSpec& dy = FindTpTensor(specs, "dy");
  tensors_.emplace_back("y", Finish(y, dy.rows, dy.cols));
  for (const auto& [name, m] : grads) {
    const TpTensorSpec& spec = FindTpTensor(specs, name.substr(1));
    tensors_.emplace_back(name, Finish(m, spec.rows, spec.cols));
  }
}

const TpBoundedTensor& TpBoundedReference::tensor(const std::string& name) const {
  for (const auto& [n, t] : tensors_)
    if (n == name) return t;
  throw std::out_of_range("tensor-parallel reference has no tensor '" + name + "'");
}

}  // namespace shardlab
