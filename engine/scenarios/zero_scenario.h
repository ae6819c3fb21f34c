// ZeroScenario: data-parallel / ZeRO training of the small MLP, from named
// parameters to a plan, and from its run to memory per rank by category
// (what the backend allocated, beside the formulas), communication per
// step (beside 2Ψ and 3Ψ), and the trained parameters checked against the
// single-device reference. Shared by the CLI and the app.
//
// Errors are shardlab::Error (kInvalidInput) whose message starts with the
// field: "stage: ", "ranks: ", "steps: ", "bucket: ", "batch: ", "layers: ",
// "width: ", "params: ", "topology: ", "backend: ".
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/zero.h"
#include "engine/core/event.h"
#include "engine/model/zero_memory.h"
#include "engine/run/backend.h"
#include "engine/topology/topology.h"
#include "engine/verify/verdict.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

struct ZeroScenario {
  ZeroParams params;
  std::string topology = "dgx-a100";  // rank r on GPU r
  std::string backend = "sim";
  std::uint64_t seed = 1;
  bool timing_only = false;
};

/// The scenario the "zero" spec's parameters describe (backend "sim", seed
/// 1). params > 0 builds the nearest MLP (MlpForParameterCount) in place of
/// layers x width; batch 0: 8 rows per rank. Adam always.
ZeroScenario ZeroFromParams(const ScenarioParams& params);

/// Rows per rank of the "zero" scenario's default batch (batch = 0).
inline constexpr int kZeroDefaultRowsPerRank = 8;

/// K, bytes of optimizer state per parameter in the formulas: the ZeRO
/// paper's 12 (fp32 master copy, Adam m and v) and the seed texts' 8 (m
/// and v only).
inline constexpr int kZeroPaperK = 12;
inline constexpr int kSeedTextK = 8;

/// The "zero" spec's rule for its parameter k: 12 or 8, nothing else.
/// Throws Error(kInvalidInput) "k: must be 12 (...) or 8 (...) (got 10)".
/// The spec's check and Prepare apply it; the CLI's `memory --k` too.
void CheckZeroK(std::int64_t k);

struct PreparedZero {
  ZeroScenario scenario;
  Topology topology;
  ZeroPlan zero;  // its plan is moved out when an Executor takes it
  double asked_parameters = 0;  // the count `params` asked for (0: none); the run builds the nearest MLP
};

/// "2 layers x 64 = 8.32k parameters".
std::string ZeroModelText(const MlpConfig& model);

/// An MLP of about `parameters` parameters: a power-of-two width near
/// sqrt(Ψ/16) (64 .. 16384) and as many layers as make up Ψ (for
/// `--params 1B` in timing-only runs). Below ~50k or above ~1T parameters
/// the nearest such MLP is far from Ψ: callers compare MlpParameterCount.
MlpConfig MlpForParameterCount(double parameters);

/// Host memory a real (not timing-only) run would hold, about;
/// CheckZeroScenario rejects real runs above ZeroMaxRealRunBytes().
double ZeroRealRunHostBytes(const ZeroParams& params);
double ZeroMaxRealRunBytes();

void CheckZeroScenario(const ZeroScenario& scenario, const Topology& topology);
std::unique_ptr<PreparedZero> PrepareZero(const ZeroScenario& scenario);
std::unique_ptr<PreparedZero> PrepareZero(const ZeroScenario& scenario, const Topology& topology);

/// The fp32 master parameters and the last step's loss against the
/// double-precision MlpBoundedReference after the same Adam steps, each
/// element within its bound (engine/verify/mlp_bounds.h; no step-count
/// special case).
struct ZeroCheck {
  bool checked = false;
  std::string not_checked_reason;
  bool correct = false;        // verdict.correct()
  Verdict verdict;
  /// For display: max |ours − reference| / max |reference| over the fp32
  /// master, beyond what Adam's sign switches of near-zero gradients allow.
  double parameter_error = 0;
  double loss = 0, reference_loss = 0;  // of the last step
};

struct ZeroSummary {
  double parameter_count = 0;            // Ψ
  std::vector<RankMemory> memory;        // what the backend allocated, per rank
  ZeroMemoryFormula formula;             // K = 12: what the run holds (master, m, v)
  ZeroMemoryFormula formula_seed;        // K = 8: the seed texts' count
  std::vector<Bytes> sent_bytes;         // per rank, over all steps
  double sent_elements_per_step = 0;     // the most any rank sent, per step
  double formula_elements_per_step = 0;  // 2(N−1)/N·Ψ, or 3(N−1)/N·Ψ for stage 3
  TimeNs step_ns = 0;                    // run span / steps
  int collectives_per_step = 0;
  std::size_t events = 0;
  ZeroCheck check;
};

/// `ran` is the plan the backend ran when it was moved out of
/// prepared.zero.plan; null means that plan.
ZeroSummary SummarizeZero(const PreparedZero& prepared, std::span<const Event> events,
                          const Backend& backend, const Plan* ran = nullptr);

}  // namespace shardlab
