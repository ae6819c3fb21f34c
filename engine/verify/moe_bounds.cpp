#include "engine/verify/moe_bounds.h"

#include <cmath>

#include "engine/verify/bounds.h"

namespace shardlab {

MoeBounds BoundMoeLayer(const MoeLayerReference& reference, std::uint64_t seed, double u) {
  const MoeLayerConfig& c = reference.config();
  const MoeRouting& routing = reference.routing();
  const int k = c.top_k, e_count = c.experts;
  const std::int64_t h = c.hidden, f = c.ffn, tokens = c.tokens;
  const double u2 = u * u, lambda = kSigmas;
  const double c_h = static_cast<double>(h + 1) * static_cast<double>(h) * u2;
  const double c_f = static_cast<double>(f + 1) * static_cast<double>(f) * u2;
  const double c_k = static_cast<double>(k + 2) * static_cast<double>(k + 1) * u2;  // k terms, accumulated into 0
  const std::vector<double> x = MoeTensorValues(MoeTensor(c, "x"), seed);
  const std::vector<double> wr = MoeTensorValues(MoeTensor(c, "Wr"), seed);
  const std::vector<double>& gates = reference.gates();

  // Gates: σ² of each chosen logit, then the softmax's linearisation.
  std::vector<double> gate_var(static_cast<std::size_t>(tokens * k), 0.0);
  std::vector<double> logit_var(static_cast<std::size_t>(k));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (int j = 0; j < k; ++j) {
      const int e = routing.expert[static_cast<std::size_t>(t * k + j)];
      double sum = 0;
      for (std::int64_t a = 0; a < h; ++a) sum += x[t * h + a] * x[t * h + a] * wr[a * e_count + e] * wr[a * e_count + e];
      logit_var[j] = c_h * sum;
    }
    for (int j = 0; j < k; ++j) {
      const double g = gates[static_cast<std::size_t>(t * k + j)];
      double var = (1 - g) * (1 - g) * logit_var[j];
      for (int i = 0; i < k; ++i)
        if (i != j) {
          const double gi = gates[static_cast<std::size_t>(t * k + i)];
          var += gi * gi * logit_var[i];
        }
      const double rounding = (k + 5) * u * g;
      gate_var[static_cast<std::size_t>(t * k + j)] = g * g * var + rounding * rounding;
    }
  }

  // Experts and the weighted sum, per kept choice.
  std::vector<double> out_var(static_cast<std::size_t>(tokens * h), 0.0);
  std::vector<double> z(static_cast<std::size_t>(f)), z_var(static_cast<std::size_t>(f));
  std::vector<double> ye(static_cast<std::size_t>(h)), ye_var(static_cast<std::size_t>(h));
  for (int e = 0; e < e_count; ++e) {
    const std::vector<double> w1 = MoeTensorValues(MoeTensor(c, "W1." + std::to_string(e)), seed);
    const std::vector<double> w2 = MoeTensorValues(MoeTensor(c, "W2." + std::to_string(e)), seed);
    for (std::int64_t t = 0; t < tokens; ++t)
      for (int j = 0; j < k; ++j) {
        const std::size_t i = static_cast<std::size_t>(t * k + j);
        if (routing.expert[i] != e || !routing.kept[i]) continue;
        std::fill(z.begin(), z.end(), 0.0);
        std::fill(z_var.begin(), z_var.end(), 0.0);
        for (std::int64_t a = 0; a < h; ++a) {
          const double xv = x[t * h + a];
          for (std::int64_t b = 0; b < f; ++b) {
            z[b] += xv * w1[a * f + b];
            z_var[b] += xv * xv * w1[a * f + b] * w1[a * f + b];
          }
        }
        std::fill(ye.begin(), ye.end(), 0.0);
        std::fill(ye_var.begin(), ye_var.end(), 0.0);
        for (std::int64_t b = 0; b < f; ++b) {
          const double var_z = c_h * z_var[b];
          const double act = std::max(z[b], 0.0);
          const double var_a = z[b] > -lambda * std::sqrt(var_z) ? var_z : 0.0;
          if (act == 0 && var_a == 0) continue;
          for (std::int64_t a = 0; a < h; ++a) {
            const double w = w2[b * h + a];
            ye[a] += act * w;
            ye_var[a] += var_a * w * w + c_f * act * act * w * w;
          }
        }
        const double g = gates[i], g_var = gate_var[i];
        for (std::int64_t a = 0; a < h; ++a)
          out_var[static_cast<std::size_t>(t * h + a)] +=
              ye[a] * ye[a] * g_var + g * g * ye_var[a] + c_k * g * g * ye[a] * ye[a];
      }
  }
  MoeBounds bounds;
  bounds.gates_bound.resize(gate_var.size());
  for (std::size_t i = 0; i < gate_var.size(); ++i) bounds.gates_bound[i] = lambda * std::sqrt(gate_var[i]);
  bounds.output_bound.resize(out_var.size());
  for (std::size_t i = 0; i < out_var.size(); ++i) bounds.output_bound[i] = lambda * std::sqrt(out_var[i]);
  return bounds;
}

}  // namespace shardlab
