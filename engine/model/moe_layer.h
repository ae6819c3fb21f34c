// A mixture-of-experts (MoE) layer, its routing, and its single-device
// reference.
//
//   x[T×H] ──► router: logits = x·Wr [T×E] ──► top-k experts per token, gates
//          ──► expert e (an MLP H→F→H): y_e(x) = relu(x·W1_e)·W2_e
//          ──► y[t] = Σ_{kept choices j of t} gate[t,j] · y_{e(t,j)}(x[t])
//
// Conventions (each one a choice that real systems make differently):
// - Top-k: the k largest logits of a token, largest first; equal logits go
//   to the lower expert index.
// - Gates: softmax over all E logits, the top k kept and renormalised to sum
//   to 1 (GShard's top-2, Mixtral). That equals a softmax over the k chosen
//   logits, which is how the plan computes it. With k = 1 every gate is 1.
// - Capacity: GShard/Switch groups, one group per rank. Each rank holds
//   T/N tokens (rank r: rows r·T/N ..), and may send each expert at most
//   C = ceil(capacity_factor · k · (T/N) / E) of them, so an expert
//   receives at most N·C rows; the drop is decided on the rank, before the
//   dispatch, with no communication.
// - Priority (GShard): a rank first places every token's first choice in
//   token order, then every second choice, and so on; a choice that finds
//   its expert full is dropped and counted.
// - A dropped choice adds nothing: its gate is not given to the other
//   choices, and a token whose every choice is dropped gets output 0 (the
//   residual connection around the layer, not modelled here, carries it).
// - Experts have no biases; no noise, no auxiliary load-balancing loss, and
//   forward only.
//
// Routing can be forced for tests and demonstrations (MoeSkew, or an
// explicit assignment); the gates are still the router's softmax over the
// forced experts' logits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// Who picks each token's experts.
enum class MoeSkew : std::uint8_t {
  kRouter,   // the router's own top-k (default)
  kUniform,  // token t's choice j is expert (t·k + j) mod E: every expert as busy
  kHot,      // every even token's first choice is expert 0; all other choices go
             // round robin over experts 1..E-1
  kZipf,     // experts drawn (seeded, without repeats) with weight 1/(e+1)
};

/// "router", "uniform", "hot", "zipf" (CLI spelling) and back; the parser
/// throws Error(kInvalidInput) "skew: ..." listing them.
const char* MoeSkewName(MoeSkew skew);
MoeSkew ParseMoeSkew(std::string_view name);

struct MoeLayerConfig {
  int ranks = 4;          // N: expert-parallel ranks, one GPU each
  int experts = 8;        // E, divisible by N: E/N experts per rank
  int top_k = 2;          // k
  int tokens = 1024;      // T over all ranks, divisible by N
  int hidden = 128;       // H
  int ffn = 256;          // F, each expert's inner width
  double capacity_factor = 1.25;
  MoeSkew skew = MoeSkew::kRouter;
  /// When not empty: the experts of every token, T·k entries (token t's
  /// choice j at t·k + j), overriding `skew`.
  std::vector<int> assignment;

  int tokens_per_rank() const { return ranks > 0 ? tokens / ranks : 0; }
  int experts_per_rank() const { return ranks > 0 ? experts / ranks : 0; }
  /// C = ceil(capacity_factor · k · (T/N) / E): tokens one rank may send one expert.
  int capacity_per_rank() const;
};

/// Throws Error(kInvalidInput) naming the field: "ranks: ", "experts: " (E
/// must divide by N), "top-k: " (1 ≤ k ≤ E), "tokens: " (T must divide by
/// N), "hidden: ", "ffn: ", "capacity-factor: " (> 0), "assignment: ".
void CheckMoeLayerConfig(const MoeLayerConfig& config);

/// A tensor of the layer, row-major rows × cols, and the FillInputs stream
/// and scale it starts from: "x" [T×H] (±1), "Wr" [H×E] (±sqrt(6/H)),
/// "W1.e" [H×F] (±sqrt(6/H)), "W2.e" [F×H] (±sqrt(6/F)).
struct MoeTensorSpec {
  std::string name;
  std::int64_t rows = 0, cols = 0;
  std::int64_t stream = 0;
  float scale = 1.0f;
};
MoeTensorSpec MoeTensor(const MoeLayerConfig& config, const std::string& name);

/// A tensor's values as the backends fill them (FillInputs · scale), in double.
std::vector<double> MoeTensorValues(const MoeTensorSpec& spec, std::uint64_t seed);

/// Who went where: every token's k choices, and which of them fit.
struct MoeRouting {
  int tokens = 0, experts = 0, top_k = 0, ranks = 0;
  int capacity_per_rank = 0;
  std::vector<int> expert;           // [t·k + j]: token t's j-th choice
  std::vector<std::uint8_t> kept;    // [t·k + j]: 1 if it fit under the capacity
  std::vector<int> routed;           // [e]: choices that named expert e
  std::vector<int> kept_per_expert;  // [e]: rows expert e computes
  /// [source·N + destination]: rows rank `source` sends rank `destination`
  /// (the kept choices of its tokens for the destination's experts).
  std::vector<std::int64_t> rows;
  std::int64_t dropped = 0;          // choices dropped over all ranks

  int rank_of_expert(int e) const { return e / (experts / ranks); }
  int rank_of_token(int t) const { return t / (tokens / ranks); }
  std::int64_t rows_between(int source, int destination) const {
    return rows[static_cast<std::size_t>(source) * ranks + destination];
  }
};

/// The experts of every token (config.assignment, the skew, or the top-k
/// of `logits` [T×E]), then the capacity applied. `logits` is read only
/// for MoeSkew::kRouter without an assignment (it may be empty otherwise).
MoeRouting RouteMoeTokens(const MoeLayerConfig& config, const std::vector<double>& logits,
                          std::uint64_t seed);

/// Capacity, priority and counts for given choices (`expert`, T·k entries).
MoeRouting ApplyMoeCapacity(const MoeLayerConfig& config, std::vector<int> expert);

/// Whether routing needs the router's logits (skew kRouter, no assignment).
bool MoeRoutingNeedsLogits(const MoeLayerConfig& config);

/// The whole layer on one device, in double: logits, routing, gates and
/// the output y [T×H].
class MoeLayerReference {
 public:
  MoeLayerReference(const MoeLayerConfig& config, std::uint64_t seed);

  const MoeLayerConfig& config() const { return config_; }
  const MoeRouting& routing() const { return routing_; }
  const std::vector<double>& logits() const { return logits_; }  // [T×E]
  const std::vector<double>& gates() const { return gates_; }    // [T·k], renormalised
  const std::vector<double>& output() const { return output_; }  // [T×H]

 private:
  MoeLayerConfig config_;
  std::vector<double> logits_, gates_, output_;
  MoeRouting routing_;
};

/// The router's logits x·Wr [T×E] in double (what RouteMoeTokens reads).
std::vector<double> MoeRouterLogits(const MoeLayerConfig& config, std::uint64_t seed);

}  // namespace shardlab
