// The MoE layer's (engine/model/moe_layer.h) outputs and gates with a bound
// per element, in the σ model of bounds.h. The inputs and weights are exact
// (every backend starts from the same floats); the routing is decided on
// the host from double logits, so the plan and the reference route alike.
//
//   logits  l = x·Wr (k = H):             σl² = c_H·Σ x²·Wr²
//   gates   g = softmax of the k chosen:  dg_j = g_j·(dl_j − Σ_i g_i·dl_i), so
//           σg_j² = g_j²·((1 − g_j)²·σl_j² + Σ_{i≠j} g_i²·σl_i²) + ((k + 5)·u·g_j)²
//   expert  z = x·W1 (k = H), a = relu(z): σa = σz where z > −λσz, else 0
//           y_e = a·W2 (k = F):           σ² = σa²·W2² + c_F·Σ a²·W2²
//   combine y = Σ_j g_j·y_e,j (k terms):  σy² = Σ_j (y_e²·σg² + g²·σy_e²) + c_k·Σ_j (g·y_e)²
//
// with c_k = (k + 1)·k·u² the rounding of a length-k sum (bounds.h).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/moe_layer.h"

namespace shardlab {

struct MoeBounds {
  std::vector<double> output_bound;  // [T×H], beside reference.output()
  std::vector<double> gates_bound;   // [T·k], beside reference.gates()
};

/// `unit_roundoff`: of the dtype the backend computes in.
MoeBounds BoundMoeLayer(const MoeLayerReference& reference, std::uint64_t seed, double unit_roundoff);

}  // namespace shardlab
