#include "engine/model/moe_layer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/core/error.h"
#include "engine/core/fill.h"

namespace shardlab {
namespace {

// Streams far from the collectives' (buffer ids), the MLP's (2^40 + ...)
// and the tensor-parallel layer's (2^41 + ...).
constexpr std::int64_t kStreamBase = std::int64_t{1} << 42;
constexpr int kMaxDim = 1 << 16;
constexpr int kMaxExperts = 1 << 12;
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 22;

[[noreturn]] void Fail(const std::string& message) {
  throw Error(message, ErrorKind::kInvalidInput);
}

void CheckPositive(const char* field, std::int64_t value, std::int64_t max) {
  if (value < 1) Fail(std::string(field) + ": must be at least 1 (got " + std::to_string(value) + ")");
  if (value > max)
    Fail(std::string(field) + ": at most " + std::to_string(max) + " (got " + std::to_string(value) + ")");
}

// A counter-based hash to a uniform double in [0, 1): the Zipf skew's draws.
double Uniform01(std::uint64_t seed, std::uint64_t token, std::uint64_t choice) {
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ (token << 20) ^ choice;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / 9007199254740992.0;  // 2^53
}

// Token t's choices under a forced skew.
void SkewChoices(const MoeLayerConfig& c, std::uint64_t seed, int t, int* out) {
  const int k = c.top_k, e_count = c.experts;
  if (c.skew == MoeSkew::kZipf) {
    std::vector<double> weight(static_cast<std::size_t>(e_count));
    for (int e = 0; e < e_count; ++e) weight[e] = 1.0 / (e + 1);
    for (int j = 0; j < k; ++j) {
      const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
      double u = Uniform01(seed, static_cast<std::uint64_t>(t), static_cast<std::uint64_t>(j)) * total;
      int pick = -1;
      for (int e = 0; e < e_count; ++e) {
        if (weight[e] <= 0) continue;
        pick = e;  // the last expert still in play takes what rounding leaves
        if (u < weight[e]) break;
        u -= weight[e];
      }
      out[j] = pick;
      weight[pick] = 0;  // without repeats
    }
    return;
  }
  if (c.skew == MoeSkew::kUniform || k == e_count) {  // (k = E: every token takes every expert)
    for (int j = 0; j < k; ++j) out[j] = static_cast<int>((std::int64_t{t} * k + j) % e_count);
    if (c.skew == MoeSkew::kHot && t % 2 == 0) std::rotate(out, std::find(out, out + k, 0), out + k);
    return;
  }
  // Hot: expert 0 first for even tokens; every other choice takes the next
  // of experts 1..E-1 in turn (a count over the choices before it, so
  // consecutive choices of one token differ).
  const std::int64_t forced_before = (std::int64_t{t} + 1) / 2;  // even tokens before t
  std::int64_t turn = std::int64_t{t} * k - forced_before;
  int j = 0;
  if (t % 2 == 0) out[j++] = 0;
  for (; j < k; ++j) out[j] = 1 + static_cast<int>(turn++ % (e_count - 1));
}

}  // namespace

const char* MoeSkewName(MoeSkew skew) {
  switch (skew) {
    case MoeSkew::kRouter: return "router";
    case MoeSkew::kUniform: return "uniform";
    case MoeSkew::kHot: return "hot";
    case MoeSkew::kZipf: return "zipf";
  }
  return "?";
}

MoeSkew ParseMoeSkew(std::string_view name) {
  for (MoeSkew s : {MoeSkew::kRouter, MoeSkew::kUniform, MoeSkew::kHot, MoeSkew::kZipf})
    if (name == MoeSkewName(s)) return s;
  Fail("skew: unknown skew '" + std::string(name) + "' (use router, uniform, hot or zipf)");
}

int MoeLayerConfig::capacity_per_rank() const {
  if (experts <= 0 || ranks <= 0 || !(capacity_factor > 0)) return 0;
  // The ceiling of a product that may carry rounding (1.1 · 2 · 50 / 11).
  const double share = capacity_factor * top_k * tokens_per_rank() / experts;
  const double c = std::max(1.0, std::ceil(share * (1 - 1e-12)));
  // More than every token of the rank can never be used.
  return static_cast<int>(std::min<double>(c, tokens_per_rank()));
}

void CheckMoeLayerConfig(const MoeLayerConfig& c) {
  CheckPositive("ranks", c.ranks, kMaxDim);
  CheckPositive("experts", c.experts, kMaxExperts);
  if (c.experts % c.ranks != 0)
    Fail("experts: " + std::to_string(c.experts) + " experts do not split evenly over " +
         std::to_string(c.ranks) + " ranks (E must be a multiple of N)");
  if (c.top_k < 1 || c.top_k > c.experts)
    Fail("top-k: must be between 1 and the " + std::to_string(c.experts) + " experts (got " +
         std::to_string(c.top_k) + ")");
  CheckPositive("tokens", c.tokens, kMaxTokens);
  if (c.tokens % c.ranks != 0)
    Fail("tokens: " + std::to_string(c.tokens) + " tokens do not split evenly over " +
         std::to_string(c.ranks) + " ranks (each rank holds T/N of them)");
  CheckPositive("hidden", c.hidden, kMaxDim);
  CheckPositive("ffn", c.ffn, kMaxDim);
  if (!(c.capacity_factor > 0) || !std::isfinite(c.capacity_factor))
    Fail("capacity-factor: must be a number above 0 (got " + std::to_string(c.capacity_factor) +
         "); 1 gives each expert its even share, E/k or more never drops a token");
  if (!c.assignment.empty()) {
    const std::size_t want = static_cast<std::size_t>(c.tokens) * c.top_k;
    if (c.assignment.size() != want)
      Fail("assignment: " + std::to_string(c.assignment.size()) + " entries, want tokens × top-k = " +
           std::to_string(want));
    for (int t = 0; t < c.tokens; ++t)
      for (int j = 0; j < c.top_k; ++j) {
        const int e = c.assignment[static_cast<std::size_t>(t) * c.top_k + j];
        if (e < 0 || e >= c.experts)
          Fail("assignment: token " + std::to_string(t) + " choice " + std::to_string(j) +
               " names expert " + std::to_string(e) + " (experts are 0.." +
               std::to_string(c.experts - 1) + ")");
        for (int i = 0; i < j; ++i)
          if (c.assignment[static_cast<std::size_t>(t) * c.top_k + i] == e)
            Fail("assignment: token " + std::to_string(t) + " names expert " + std::to_string(e) +
                 " twice");
      }
  }
}

MoeTensorSpec MoeTensor(const MoeLayerConfig& c, const std::string& name) {
  const double h = c.hidden, f = c.ffn;
  if (name == "x") return {name, c.tokens, c.hidden, kStreamBase, 1.0f};
  if (name == "Wr") return {name, c.hidden, c.experts, kStreamBase + 1, static_cast<float>(std::sqrt(6 / h))};
  const bool first = name.rfind("W1.", 0) == 0, second = name.rfind("W2.", 0) == 0;
  if (first || second) {
    const std::int64_t e = std::stoll(name.substr(3));
    if (e >= 0 && e < c.experts) {
      if (first)
        return {name, c.hidden, c.ffn, kStreamBase + 2 + 2 * e, static_cast<float>(std::sqrt(6 / h))};
      return {name, c.ffn, c.hidden, kStreamBase + 3 + 2 * e, static_cast<float>(std::sqrt(6 / f))};
    }
  }
  throw Error("MoE layer has no tensor '" + name + "'", ErrorKind::kRuntime);
}

std::vector<double> MoeTensorValues(const MoeTensorSpec& spec, std::uint64_t seed) {
  std::vector<float> values(static_cast<std::size_t>(spec.rows * spec.cols));
  FillInputs(values, seed, spec.stream);
  std::vector<double> out(values.size());
  // As the backends fill buffers: the float value times the float scale, in float.
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<double>(values[i] * spec.scale);
  return out;
}

bool MoeRoutingNeedsLogits(const MoeLayerConfig& c) {
  return c.assignment.empty() && c.skew == MoeSkew::kRouter;
}

std::vector<double> MoeRouterLogits(const MoeLayerConfig& c, std::uint64_t seed) {
  const std::vector<double> x = MoeTensorValues(MoeTensor(c, "x"), seed);
  const std::vector<double> wr = MoeTensorValues(MoeTensor(c, "Wr"), seed);
  const std::int64_t t_count = c.tokens, h = c.hidden, e_count = c.experts;
  std::vector<double> logits(static_cast<std::size_t>(t_count * e_count), 0.0);
  for (std::int64_t t = 0; t < t_count; ++t)
    for (std::int64_t i = 0; i < h; ++i) {
      const double xv = x[t * h + i];
      for (std::int64_t e = 0; e < e_count; ++e) logits[t * e_count + e] += xv * wr[i * e_count + e];
    }
  return logits;
}

MoeRouting ApplyMoeCapacity(const MoeLayerConfig& c, std::vector<int> expert) {
  MoeRouting r;
  r.tokens = c.tokens;
  r.experts = c.experts;
  r.top_k = c.top_k;
  r.ranks = c.ranks;
  r.capacity_per_rank = c.capacity_per_rank();
  r.expert = std::move(expert);
  r.kept.assign(r.expert.size(), 0);
  r.routed.assign(static_cast<std::size_t>(c.experts), 0);
  r.kept_per_expert.assign(static_cast<std::size_t>(c.experts), 0);
  r.rows.assign(static_cast<std::size_t>(c.ranks) * c.ranks, 0);
  const int per_rank = c.tokens_per_rank(), k = c.top_k;
  for (int src = 0; src < c.ranks; ++src) {
    // This rank's group: its own count per expert, choice-major priority.
    std::vector<int> used(static_cast<std::size_t>(c.experts), 0);
    for (int j = 0; j < k; ++j)
      for (int t = src * per_rank; t < (src + 1) * per_rank; ++t) {
        const std::size_t i = static_cast<std::size_t>(t) * k + j;
        const int e = r.expert[i];
        ++r.routed[e];
        if (used[e] >= r.capacity_per_rank) {
          ++r.dropped;
          continue;
        }
        ++used[e];
        r.kept[i] = 1;
        ++r.kept_per_expert[e];
        ++r.rows[static_cast<std::size_t>(src) * c.ranks + r.rank_of_expert(e)];
      }
  }
  return r;
}

MoeRouting RouteMoeTokens(const MoeLayerConfig& c, const std::vector<double>& logits,
                          std::uint64_t seed) {
  CheckMoeLayerConfig(c);
  if (!c.assignment.empty()) return ApplyMoeCapacity(c, c.assignment);
  const int k = c.top_k, e_count = c.experts;
  std::vector<int> expert(static_cast<std::size_t>(c.tokens) * k);
  std::vector<int> order(static_cast<std::size_t>(e_count));
  for (int t = 0; t < c.tokens; ++t) {
    int* out = &expert[static_cast<std::size_t>(t) * k];
    if (c.skew != MoeSkew::kRouter) {
      SkewChoices(c, seed, t, out);
      continue;
    }
    if (logits.size() != static_cast<std::size_t>(c.tokens) * e_count)
      throw Error("MoE routing: the router's logits are missing", ErrorKind::kRuntime);
    const double* row = &logits[static_cast<std::size_t>(t) * e_count];
    std::iota(order.begin(), order.end(), 0);
    // Largest first; equal logits: the lower expert index first.
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [row](int a, int b) {
      return row[a] != row[b] ? row[a] > row[b] : a < b;
    });
    std::copy(order.begin(), order.begin() + k, out);
  }
  return ApplyMoeCapacity(c, std::move(expert));
}

MoeLayerReference::MoeLayerReference(const MoeLayerConfig& c, std::uint64_t seed) : config_(c) {
  CheckMoeLayerConfig(c);
  logits_ = MoeRouterLogits(c, seed);
  routing_ = RouteMoeTokens(c, logits_, seed);
  const int k = c.top_k, e_count = c.experts;
  const std::int64_t h = c.hidden, f = c.ffn;
  // Gates: softmax over the k chosen logits (= the top-k of the full
  // softmax, renormalised).
  gates_.assign(static_cast<std::size_t>(c.tokens) * k, 0.0);
  for (int t = 0; t < c.tokens; ++t) {
    const double* row = &logits_[static_cast<std::size_t>(t) * e_count];
    double top = -INFINITY, sum = 0;
    for (int j = 0; j < k; ++j) top = std::max(top, row[routing_.expert[static_cast<std::size_t>(t) * k + j]]);
    for (int j = 0; j < k; ++j) {
      const std::size_t i = static_cast<std::size_t>(t) * k + j;
      gates_[i] = std::exp(row[routing_.expert[i]] - top);
      sum += gates_[i];
    }
    for (int j = 0; j < k; ++j) gates_[static_cast<std::size_t>(t) * k + j] /= sum;
  }
  const std::vector<double> x = MoeTensorValues(MoeTensor(c, "x"), seed);
  output_.assign(static_cast<std::size_t>(c.tokens * h), 0.0);
  std::vector<double> z(static_cast<std::size_t>(f));
  for (int e = 0; e < e_count; ++e) {
    const std::vector<double> w1 = MoeTensorValues(MoeTensor(c, "W1." + std::to_string(e)), seed);
    const std::vector<double> w2 = MoeTensorValues(MoeTensor(c, "W2." + std::to_string(e)), seed);
    for (int t = 0; t < c.tokens; ++t)
      for (int j = 0; j < k; ++j) {
        const std::size_t i = static_cast<std::size_t>(t) * k + j;
        if (routing_.expert[i] != e || !routing_.kept[i]) continue;
        std::fill(z.begin(), z.end(), 0.0);
        for (std::int64_t a = 0; a < h; ++a) {
          const double xv = x[t * h + a];
          for (std::int64_t b = 0; b < f; ++b) z[b] += xv * w1[a * f + b];
        }
        double* y = &output_[static_cast<std::size_t>(t * h)];
        for (std::int64_t b = 0; b < f; ++b) {
          const double act = z[b] > 0 ? z[b] : 0;
          if (act == 0) continue;
          for (std::int64_t a = 0; a < h; ++a) y[a] += gates_[i] * act * w2[b * h + a];
        }
      }
  }
}

}  // namespace shardlab
