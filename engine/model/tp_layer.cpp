#include "engine/model/tp_layer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/fill.h"

namespace shardlab {
namespace {

constexpr int kMaxDim = 1 << 16;
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;
// Streams far from the collectives' (buffer ids) and the MLP's (2^40 + ...).
constexpr std::int64_t kStreamBase = std::int64_t{1} << 41;
constexpr double kLayerNormEpsilon = 1e-5;

[[noreturn]] void Fail(const std::string& message) {
  throw Error(message, ErrorKind::kInvalidInput);
}

// ---- double-precision building blocks, row-major -------------------------

using Mat = std::vector<double>;

// c[m×n] = a[m×k]·b[k×n]; ta/tb read a as [k×m] / b as [n×k].
Mat MatMul(const Mat& a, const Mat& b, std::int64_t m, std::int64_t n, std::int64_t k,
           bool ta = false, bool tb = false) {
  Mat c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) {
      const double a_ip = ta ? a[p * m + i] : a[i * k + p];
      if (a_ip == 0.0) continue;
      double* row = &c[i * n];
      for (std::int64_t j = 0; j < n; ++j) row[j] += a_ip * (tb ? b[j * k + p] : b[p * n + j]);
    }
  return c;
}

void AddRow(Mat& a, const Mat& row) {
  const std::size_t n = row.size();
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += row[i % n];
}

Mat Add(const Mat& a, const Mat& b) {
  Mat c = a;
  for (std::size_t i = 0; i < c.size(); ++i) c[i] += b[i];
  return c;
}

Mat ColumnSum(const Mat& a, std::int64_t m, std::int64_t n) {
  Mat s(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) s[j] += a[i * n + j];
  return s;
}

// Mean and 1/sqrt(var + epsilon) of row i.
std::pair<double, double> RowStats(const Mat& x, std::int64_t i, std::int64_t n) {
  double mean = 0, var = 0;
  for (std::int64_t j = 0; j < n; ++j) mean += x[i * n + j];
  mean /= n;
  for (std::int64_t j = 0; j < n; ++j) var += (x[i * n + j] - mean) * (x[i * n + j] - mean);
  return {mean, 1.0 / std::sqrt(var / n + kLayerNormEpsilon)};
}

// Rows normalized to mean 0 and variance 1 (no learned scale or shift).
Mat LayerNorm(const Mat& x, std::int64_t m, std::int64_t n) {
  Mat y(x.size());
  for (std::int64_t i = 0; i < m; ++i) {
    const auto [mean, rstd] = RowStats(x, i, n);
    for (std::int64_t j = 0; j < n; ++j) y[i * n + j] = (x[i * n + j] - mean) * rstd;
  }
  return y;
}

// dx = rstd·(dy − mean(dy) − x̂·mean(dy·x̂)), row by row.
Mat LayerNormBackward(const Mat& dy, const Mat& x, std::int64_t m, std::int64_t n) {
  const Mat xh = LayerNorm(x, m, n);
  Mat dx(x.size());
  for (std::int64_t i = 0; i < m; ++i) {
    const double rstd = RowStats(x, i, n).second;
    double mean_dy = 0, mean_dy_xh = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      mean_dy += dy[i * n + j];
      mean_dy_xh += dy[i * n + j] * xh[i * n + j];
    }
    mean_dy /= n;
    mean_dy_xh /= n;
    for (std::int64_t j = 0; j < n; ++j)
      dx[i * n + j] = rstd * (dy[i * n + j] - mean_dy - xh[i * n + j] * mean_dy_xh);
  }
  return dx;
}

// Block [r0, r0+rows) × [c0, c0+cols) of a matrix with `stride` columns.
Mat Block(const Mat& a, std::int64_t stride, std::int64_t r0, std::int64_t rows, std::int64_t c0,
          std::int64_t cols) {
  Mat out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) out[i * cols + j] = a[(r0 + i) * stride + c0 + j];
  return out;
}

void AddBlock(Mat& a, std::int64_t stride, std::int64_t r0, std::int64_t c0, const Mat& block,
              std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) a[(r0 + i) * stride + c0 + j] += block[i * cols + j];
}

// ---- the layers -----------------------------------------------------------

using Tensors = std::vector<std::pair<std::string, Mat>>;

const Mat& Get(const Tensors& t, const std::string& name) {
  for (const auto& [n, m] : t)
    if (n == name) return m;
  throw std::out_of_range("tensor-parallel reference has no tensor '" + name + "'");
}

struct Shape {
  std::int64_t b, s, t, h, f, heads, d;
};

// The MLP on input u: y = relu(u·A + a)·B + b.
struct MlpPass {
  Mat z, act, y;
  void Forward(const Tensors& w, const Mat& u, const Shape& s) {
    z = MatMul(u, Get(w, "A"), s.t, s.f, s.h);
    AddRow(z, Get(w, "a"));
    act = z;
    for (double& v : act) v = v > 0 ? v : 0;
    y = MatMul(act, Get(w, "B"), s.t, s.h, s.f);
    AddRow(y, Get(w, "b"));
  }
  // Adds the weight gradients to `grads`; returns du.
  Mat Backward(const Tensors& w, const Mat& u, const Mat& dy, const Shape& s, Tensors& grads) {
    grads.emplace_back("dB", MatMul(act, dy, s.f, s.h, s.t, true));
    grads.emplace_back("db", ColumnSum(dy, s.t, s.h));
    Mat dz = MatMul(dy, Get(w, "B"), s.t, s.f, s.h, false, true);
    for (std::size_t i = 0; i < dz.size(); ++i)
      if (!(z[i] > 0)) dz[i] = 0;
    grads.emplace_back("dA", MatMul(u, dz, s.h, s.f, s.t, true));
    grads.emplace_back("da", ColumnSum(dz, s.t, s.f));
    return MatMul(dz, Get(w, "A"), s.t, s.h, s.f, false, true);
  }
};

// Self-attention on input u, heads over columns of Q, K, V.
struct AttentionPass {
  Mat q, k, v, o, y;
  std::vector<Mat> p;  // [b·heads + g]: S × S probabilities

  void Forward(const Tensors& w, const Mat& u, const Shape& s) {
    auto project = [&](const char* wn, const char* bn) {
      Mat out = MatMul(u, Get(w, wn), s.t, s.h, s.h);
      AddRow(out, Get(w, bn));
      return out;
    };
    q = project("Wq", "bq");
    k = project("Wk", "bk");
    v = project("Wv", "bv");
    o.assign(static_cast<std::size_t>(s.t * s.h), 0.0);
    p.clear();
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
    for (std::int64_t b = 0; b < s.b; ++b)
      for (std::int64_t g = 0; g < s.heads; ++g) {
        const Mat qb = Block(q, s.h, b * s.s, s.s, g * s.d, s.d);
        const Mat kb = Block(k, s.h, b * s.s, s.s, g * s.d, s.d);
        const Mat vb = Block(v, s.h, b * s.s, s.s, g * s.d, s.d);
        Mat scores = MatMul(qb, kb, s.s, s.s, s.d, false, true);
        for (std::int64_t i = 0; i < s.s; ++i) {
          double top = -INFINITY, sum = 0;
          for (std::int64_t j = 0; j < s.s; ++j) top = std::max(top, scale * scores[i * s.s + j]);
          for (std::int64_t j = 0; j < s.s; ++j) {
            scores[i * s.s + j] = std::exp(scale * scores[i * s.s + j] - top);
            sum += scores[i * s.s + j];
          }
          for (std::int64_t j = 0; j < s.s; ++j) scores[i * s.s + j] /= sum;
        }
        AddBlock(o, s.h, b * s.s, g * s.d, MatMul(scores, vb, s.s, s.d, s.s), s.s, s.d);
        p.push_back(std::move(scores));
      }
    y = MatMul(o, Get(w, "Wo"), s.t, s.h, s.h);
    AddRow(y, Get(w, "bo"));
  }

  Mat Backward(const Tensors& w, const Mat& u, const Mat& dy, const Shape& s, Tensors& grads) {
    grads.emplace_back("dWo", MatMul(o, dy, s.h, s.h, s.t, true));
    grads.emplace_back("dbo", ColumnSum(dy, s.t, s.h));
    const Mat d_o = MatMul(dy, Get(w, "Wo"), s.t, s.h, s.h, false, true);
    Mat dq(q.size(), 0.0), dk(k.size(), 0.0), dv(v.size(), 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
    for (std::int64_t b = 0; b < s.b; ++b)
      for (std::int64_t g = 0; g < s.heads; ++g) {
        const Mat& pb = p[static_cast<std::size_t>(b * s.heads + g)];
        const Mat qb = Block(q, s.h, b * s.s, s.s, g * s.d, s.d);
        const Mat kb = Block(k, s.h, b * s.s, s.s, g * s.d, s.d);
        const Mat vb = Block(v, s.h, b * s.s, s.s, g * s.d, s.d);
        const Mat dob = Block(d_o, s.h, b * s.s, s.s, g * s.d, s.d);
        Mat dp = MatMul(dob, vb, s.s, s.s, s.d, false, true);
        AddBlock(dv, s.h, b * s.s, g * s.d, MatMul(pb, dob, s.s, s.d, s.s, true), s.s, s.d);
        for (std::int64_t i = 0; i < s.s; ++i) {  // softmax backward, times the 1/√d scale
          double dot = 0;
          for (std::int64_t j = 0; j < s.s; ++j) dot += dp[i * s.s + j] * pb[i * s.s + j];
          for (std::int64_t j = 0; j < s.s; ++j)
            dp[i * s.s + j] = scale * pb[i * s.s + j] * (dp[i * s.s + j] - dot);
        }
        AddBlock(dq, s.h, b * s.s, g * s.d, MatMul(dp, kb, s.s, s.d, s.s), s.s, s.d);
        AddBlock(dk, s.h, b * s.s, g * s.d, MatMul(dp, qb, s.s, s.d, s.s, true), s.s, s.d);
      }
    Mat du(u.size(), 0.0);
    for (const auto& [name, grad] : {std::pair<const char*, const Mat*>{"q", &dq}, {"k", &dk}, {"v", &dv}}) {
      const std::string wn = std::string("W") + name, bn = std::string("b") + name;
      grads.emplace_back("d" + wn, MatMul(u, *grad, s.h, s.h, s.t, true));
      grads.emplace_back("d" + bn, ColumnSum(*grad, s.t, s.h));
      du = Add(du, MatMul(*grad, Get(w, wn), s.t, s.h, s.h, false, true));
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

// Forward and, when dy is given, backward of the whole layer; returns y
// and appends "dx" and the weight gradients to `grads`.
Mat RunLayer(const TpLayerConfig& c, const Tensors& w, const Mat& x, const Mat* dy,
             Tensors* grads) {
  const Shape s = ShapeOf(c);
  switch (c.kind) {
    case TpLayerKind::kColumnLinear:
    case TpLayerKind::kRowLinear: {
      const bool row = c.kind == TpLayerKind::kRowLinear;
      const std::int64_t in = row ? s.f : s.h, out = row ? s.h : s.f;
      const char* wn = row ? "W" : "A";
      const char* bn = row ? "b" : "a";
      Mat y = MatMul(x, Get(w, wn), s.t, out, in);
      AddRow(y, Get(w, bn));
      if (dy != nullptr) {
        grads->emplace_back(std::string("d") + wn, MatMul(x, *dy, in, out, s.t, true));
        grads->emplace_back(std::string("d") + bn, ColumnSum(*dy, s.t, out));
        grads->emplace_back("dx", MatMul(*dy, Get(w, wn), s.t, in, out, false, true));
      }
      return y;
    }
    case TpLayerKind::kMlp: {
      MlpPass mlp;
      mlp.Forward(w, x, s);
      if (dy != nullptr) grads->emplace_back("dx", mlp.Backward(w, x, *dy, s, *grads));
      return mlp.y;
    }
    case TpLayerKind::kAttention: {
      AttentionPass attn;
      attn.Forward(w, x, s);
      if (dy != nullptr) grads->emplace_back("dx", attn.Backward(w, x, *dy, s, *grads));
      return attn.y;
    }
    case TpLayerKind::kTransformer: {
      const Mat u = LayerNorm(x, s.t, s.h);
      AttentionPass attn;
      attn.Forward(w, u, s);
      const Mat h = Add(x, attn.y);
      const Mat v = LayerNorm(h, s.t, s.h);
      MlpPass mlp;
      mlp.Forward(w, v, s);
      const Mat y = Add(h, mlp.y);
      if (dy != nullptr) {
        const Mat dv = mlp.Backward(w, v, *dy, s, *grads);
        const Mat dh = Add(*dy, LayerNormBackward(dv, h, s.t, s.h));
        const Mat du = attn.Backward(w, u, dh, s, *grads);
        grads->emplace_back("dx", Add(dh, LayerNormBackward(du, x, s.t, s.h)));
      }
      return y;
    }
  }
  return {};
}

TpTensorSpec Spec(const char* name, std::int64_t rows, std::int64_t cols, int index, double scale,
                  bool weight) {
  return TpTensorSpec{name, rows, cols, kStreamBase + index, static_cast<float>(scale), weight};
}

}  // namespace

const char* TpLayerKindName(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear: return "column";
    case TpLayerKind::kRowLinear: return "row";
    case TpLayerKind::kMlp: return "mlp";
    case TpLayerKind::kAttention: return "attention";
    case TpLayerKind::kTransformer: return "transformer";
  }
  return "?";
}

TpLayerKind ParseTpLayerKind(std::string_view name) {
  for (TpLayerKind k : {TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear, TpLayerKind::kMlp,
                        TpLayerKind::kAttention, TpLayerKind::kTransformer})
    if (name == TpLayerKindName(k)) return k;
  Fail("layer: unknown layer '" + std::string(name) +
       "' (choose column, row, mlp, attention, transformer)");
}

int TpLayerConfig::split_width() const {
  if (ffn > 0) return ffn;
  return kind == TpLayerKind::kMlp || kind == TpLayerKind::kTransformer ? 4 * hidden : hidden;
}

int TpLayerConfig::head_count() const {
  if (!has_attention()) return 0;
  if (heads > 0) return heads;
  return hidden % 128 == 0 ? hidden / 128 : 0;
}

void CheckTpLayerConfig(const TpLayerConfig& c) {
  auto range = [&](const char* field, std::int64_t value) {
    if (value < 1 || value > kMaxDim)
      Fail(std::string(field) + ": " + std::to_string(value) + " is outside 1.." +
           std::to_string(kMaxDim));
  };
  range("batch", c.batch);
  range("seq", c.seq);
  if (c.tokens() > kMaxTokens)
    Fail("batch: batch × seq = " + std::to_string(c.tokens()) + " tokens is more than " +
         std::to_string(kMaxTokens));
  range("hidden", c.hidden);
  if (c.ffn != 0) range("ffn", c.ffn);
  // Element-wise kernels take a 32-bit length: one T × H activation must fit.
  const std::int64_t activation = c.tokens() * c.hidden;
  if (activation > std::int64_t{2147483647})
    Fail("batch: " + std::to_string(c.tokens()) + " tokens × hidden " + std::to_string(c.hidden) +
         " = " + std::to_string(activation) + " elements in one activation, more than 2^31 - 1");
  if (c.tp < 1 || c.tp > 4096) Fail("tp: " + std::to_string(c.tp) + " is outside 1..4096");
  if (c.kind != TpLayerKind::kAttention) {
    const int f = c.split_width();
    if (f % c.tp != 0) {
      const char* what = c.kind == TpLayerKind::kColumnLinear ? "output features"
                         : c.kind == TpLayerKind::kRowLinear  ? "input features"
                                                              : "inner (ffn) features";
      Fail(std::string(c.ffn != 0 ? "ffn" : "hidden") + ": " + std::to_string(f) + " " + what +
           " do not split evenly over tp " + std::to_string(c.tp) +
           " (Megatron requires it): choose a multiple of " + std::to_string(c.tp));
    }
  }
  if (c.has_attention()) {
    const int heads = c.head_count();
    if (heads == 0)
      Fail("heads: hidden " + std::to_string(c.hidden) +
           " is not a multiple of 128 (the default head size): give the number of heads");
    if (heads < 1 || heads > c.hidden || c.hidden % heads != 0)
      Fail("heads: " + std::to_string(heads) + " heads do not divide hidden " +
           std::to_string(c.hidden) + " into equal head sizes");
    // Each (sequence, head) is a few kernel calls in the plan; past this the
    // plan itself grows to gigabytes.
    if (std::int64_t{c.batch} * heads > 65536)
      Fail("heads: batch × heads = " + std::to_string(std::int64_t{c.batch} * heads) +
           " per-head products per pass, more than 65536; use fewer sequences or heads");
    if (heads % c.tp != 0)
      Fail("heads: " + std::to_string(heads) + " heads do not split evenly over tp " +
           std::to_string(c.tp) + " (Megatron gives each rank whole heads): choose a multiple of " +
           std::to_string(c.tp));
  }
  if (c.sequence_parallel) {
    if (c.kind == TpLayerKind::kColumnLinear || c.kind == TpLayerKind::kRowLinear)
      Fail("sequence-parallel: applies to the mlp, attention and transformer layers, not to a "
           "lone linear");
    if (c.tokens() % c.tp != 0)
      Fail("sequence-parallel: " + std::to_string(c.tokens()) +
           " tokens (batch × seq) do not split evenly over tp " + std::to_string(c.tp));
  }
}

std::vector<TpTensorSpec> TpLayerTensors(const TpLayerConfig& c) {
  const std::int64_t t = c.tokens(), h = c.hidden, f = c.split_width();
  const double bias = 0.1;
  auto he = [](std::int64_t fan_in) { return std::sqrt(6.0 / static_cast<double>(fan_in)); };
  std::vector<TpTensorSpec> specs;
  const bool row = c.kind == TpLayerKind::kRowLinear;
  const std::int64_t in = row ? f : h, out = c.kind == TpLayerKind::kColumnLinear ? f : h;
  specs.push_back(Spec("x", t, in, 0, 1.0, false));
  specs.push_back(Spec("dy", t, out, 1, 1.0, false));
  switch (c.kind) {
    case TpLayerKind::kColumnLinear:
      specs.push_back(Spec("A", h, f, 2, he(h), true));
      specs.push_back(Spec("a", 1, f, 3, bias, true));
      break;
    case TpLayerKind::kRowLinear:
      specs.push_back(Spec("W", f, h, 6, he(f), true));
      specs.push_back(Spec("b", 1, h, 7, bias, true));
      break;
    case TpLayerKind::kAttention:
    case TpLayerKind::kTransformer:
      specs.push_back(Spec("Wq", h, h, 8, he(h), true));
      specs.push_back(Spec("bq", 1, h, 9, bias, true));
      specs.push_back(Spec("Wk", h, h, 10, he(h), true));
      specs.push_back(Spec("bk", 1, h, 11, bias, true));
      specs.push_back(Spec("Wv", h, h, 12, he(h), true));
      specs.push_back(Spec("bv", 1, h, 13, bias, true));
      specs.push_back(Spec("Wo", h, h, 14, he(h), true));
      specs.push_back(Spec("bo", 1, h, 15, bias, true));
      if (c.kind == TpLayerKind::kAttention) break;
      [[fallthrough]];
    case TpLayerKind::kMlp:
      specs.push_back(Spec("A", h, f, 2, he(h), true));
      specs.push_back(Spec("a", 1, f, 3, bias, true));
      specs.push_back(Spec("B", f, h, 4, he(f), true));
      specs.push_back(Spec("b", 1, h, 5, bias, true));
      break;
  }
  return specs;
}

const TpTensorSpec& FindTpTensor(const std::vector<TpTensorSpec>& specs, const std::string& name) {
  for (const TpTensorSpec& s : specs)
    if (s.name == name) return s;
  throw std::out_of_range("tensor-parallel layer has no tensor '" + name + "'");
}

TpLayerReference::TpLayerReference(const TpLayerConfig& c, std::uint64_t seed) : config_(c) {
  CheckTpLayerConfig(c);
  Tensors inputs;
  for (const TpTensorSpec& spec : TpLayerTensors(c)) {
    Mat m(static_cast<std::size_t>(spec.rows * spec.cols));
    for (std::size_t i = 0; i < m.size(); ++i)  // the float the buffers hold, widened
      m[i] = static_cast<double>(spec.scale * InputValue(seed, spec.stream, static_cast<std::int64_t>(i)));
    inputs.emplace_back(spec.name, std::move(m));
  }
  Tensors grads;
  const Mat y = RunLayer(c, inputs, Get(inputs, "x"), &Get(inputs, "dy"), &grads);
  const std::vector<TpTensorSpec> specs = TpLayerTensors(c);
  auto keep = [&](const std::string& name, const Mat& m, std::int64_t rows, std::int64_t cols) {
    TpRefTensor t{rows, cols, std::vector<float>(m.begin(), m.end())};
    tensors_.emplace_back(name, std::move(t));
  };
  for (const auto& [name, m] : inputs) {
    const TpTensorSpec& spec = FindTpTensor(specs, name);
    keep(name, m, spec.rows, spec.cols);
  }
  const TpTensorSpec& dy = FindTpTensor(specs, "dy");
  keep("y", y, dy.rows, dy.cols);
  for (const auto& [name, m] : grads) {
    const TpTensorSpec& spec = FindTpTensor(specs, name.substr(1));
    keep(name, m, spec.rows, spec.cols);
  }
}

bool TpLayerReference::has(const std::string& name) const {
  for (const auto& [n, t] : tensors_)
    if (n == name) return true;
  return false;
}

const TpRefTensor& TpLayerReference::tensor(const std::string& name) const {
  for (const auto& [n, t] : tensors_)
    if (n == name) return t;
  throw std::out_of_range("tensor-parallel reference has no tensor '" + name + "'");
}

std::vector<double> TpLayerReference::Forward(const std::vector<double>& x) const {
  Tensors inputs;
  for (const auto& [name, t] : tensors_) inputs.emplace_back(name, Mat(t.data.begin(), t.data.end()));
  return RunLayer(config_, inputs, x, nullptr, nullptr);
}

}  // namespace shardlab
