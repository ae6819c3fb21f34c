#include "engine/run/zero_scenario.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/run/collective_scenario.h"
#include "engine/run/metrics.h"

namespace shardlab {
namespace {

// Real runs hold every buffer as float on the host; past this many bytes
// over all ranks, ask for timing-only.
constexpr double kMaxRealBytes = 2.0 * (1 << 30);

double HostBytesOf(const ZeroParams& p) {
  // Every buffer is a float on the host for the whole run, transient ones
  // included: per rank the model states (5 copies of Ψ or of Ψ/N, bounded
  // by 5Ψ), and per step stage 2's bucket gradients (Ψ) or stage 3's two
  // gathers and layer gradients (3Ψ).
  const double psi = static_cast<double>(MlpParameterCount(p.model));
  const double per_step = p.stage == 3 ? 3 * psi : p.stage == 2 ? psi : 0;
  const double activations = 4.0 * p.model.layers * p.model.batch * p.model.width;
  return 4.0 * p.ranks * (5 * psi + p.steps * per_step) + 4.0 * activations;
}

}  // namespace

double ZeroRealRunHostBytes(const ZeroParams& params) { return HostBytesOf(params); }
double ZeroMaxRealRunBytes() { return kMaxRealBytes; }

MlpConfig MlpForParameterCount(double parameters) {
  MlpConfig m;
  const double ideal = std::sqrt(std::max(parameters, 1.0) / 16.0);
  int width = 64;
  while (width < 16384 && width * 2 <= ideal * 1.41) width *= 2;
  m.width = width;
  const double layer = static_cast<double>(width) * width + width;
  m.layers = static_cast<int>(std::clamp(std::llround(parameters / layer), 1LL, 4096LL));
  m.optimizer = OptimizerKind::kAdam;
  m.learning_rate = 1e-3f;
  return m;
}

void CheckZeroScenario(const ZeroScenario& scenario, const Topology& topology) {
  CheckScenarioBackend(scenario.backend);
  CheckZeroParams(scenario.params);
  CheckRanksFitTopology("ranks", scenario.params.ranks, "rank", scenario.topology, topology);
  if (!scenario.timing_only && ZeroRealRunHostBytes(scenario.params) > kMaxRealBytes)
    throw Error("params: a real run of " + std::to_string(MlpParameterCount(scenario.params.model)) +
                " parameters on " + std::to_string(scenario.params.ranks) +
                " ranks would hold about " + FormatBytes(static_cast<Bytes>(ZeroRealRunHostBytes(scenario.params))) +
                " of host memory; use --timing-only for models this large");
}

std::unique_ptr<PreparedZero> PrepareZero(const ZeroScenario& scenario) {
  return PrepareZero(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedZero> PrepareZero(const ZeroScenario& scenario, const Topology& topology) {
  CheckZeroScenario(scenario, topology);
  auto p = std::make_unique<PreparedZero>();
  p->scenario = scenario;
  p->topology = topology;
  p->zero = BuildZero(scenario.params);
  return p;
}

ZeroSummary SummarizeZero(const PreparedZero& prepared, std::span<const Event> events,
                          const Backend& backend, const Plan* ran) {
  const ZeroParams& p = prepared.scenario.params;
  const Plan& plan = ran != nullptr ? *ran : prepared.zero.plan;
  ZeroSummary s;
  s.parameter_count = static_cast<double>(prepared.zero.parameter_count);
  s.formula = ZeroMemoryPerGpu(s.parameter_count, p.ranks, p.stage, 12);
  s.formula_seed = ZeroMemoryPerGpu(s.parameter_count, p.ranks, p.stage, 8);
  if (const MemoryUsage* usage = backend.memory()) s.memory = usage->ranks;
  s.sent_bytes.assign(static_cast<std::size_t>(plan.num_ranks), 0);
  for (const Event& e : events)
    if (e.kind == OpKind::kSend && e.rank >= 0 && e.rank < plan.num_ranks) s.sent_bytes[e.rank] += e.bytes;
  const Bytes most = s.sent_bytes.empty() ? 0 : *std::max_element(s.sent_bytes.begin(), s.sent_bytes.end());
  s.sent_elements_per_step = static_cast<double>(most) / DTypeBytes(DType::kF16) / p.steps;
  s.formula_elements_per_step =
      (p.stage == 3 ? 3.0 : 2.0) * (p.ranks - 1) / p.ranks * s.parameter_count;
  s.step_ns = RunSpanNs(events) / p.steps;
  s.collectives_per_step = prepared.zero.collectives_per_step;
  s.events = events.size();
  if (prepared.scenario.timing_only) {
    s.check.not_checked_reason = "timing only: the data was not computed";
    return s;
  }
  // The fp32 master parameters, put together from the ranks, against the
  // single-device model after the same number of Adam steps.
  ZeroCheck& check = s.check;
  check.checked = true;
  MlpConfig m = p.model;
  m.optimizer = OptimizerKind::kAdam;
  MlpReference reference(m, prepared.scenario.seed);
  for (int k = 0; k < p.steps; ++k) reference.TrainStep();
  check.reference_loss = reference.loss();
  std::vector<float> want;
  for (int l = 0; l < m.layers; ++l) {
    want.insert(want.end(), reference.weight(l).begin(), reference.weight(l).end());
    want.insert(want.end(), reference.bias(l).begin(), reference.bias(l).end());
  }
  std::vector<float> got(want.size(), NAN);
  const int ranks = p.stage == 0 ? 1 : p.ranks;  // stage 0: rank 0 holds it all
  for (int r = 0; r < ranks; ++r)
    for (const ZeroPiece& piece : prepared.zero.master[r]) {
      const auto data = backend.BufferData(piece.slice.buffer);
      for (std::int64_t i = 0; i < piece.slice.count; ++i)
        got[static_cast<std::size_t>(piece.begin + i)] = data[static_cast<std::size_t>(piece.slice.offset + i)];
    }
  double diff = 0, scale = 1e-3;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  check.parameter_error = diff / scale;
  for (const BufferId id : prepared.zero.loss) {
    const auto data = backend.BufferData(id);
    if (!data.empty()) check.loss += data[static_cast<std::size_t>(p.steps - 1)];
  }
  const double loss_error = std::fabs(check.loss - check.reference_loss) /
                            std::max(1e-30, std::fabs(check.reference_loss));
  // Adam divides by sqrt(v): a gradient element near zero, summed in another
  // order, can flip an update's sign, so after many steps single parameters
  // drift apart while the loss agrees. Past a few steps the parameters get
  // a looser bound; the loss always the tight one.
  check.parameter_tolerance = p.steps <= ZeroCheck::kTightSteps ? ZeroCheck::kTolerance : 0.1;
  check.correct = check.parameter_error <= check.parameter_tolerance && loss_error <= ZeroCheck::kTolerance;
  return s;
}

}  // namespace shardlab
