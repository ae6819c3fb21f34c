// The "moe" lab scenario: parameters onto MoeScenario, and one run reduced
// to the quantities of the spec's table (moe_scenario.cpp), each from the
// routing (the hand count) or from the run's events (MeasureMoe).
#include "engine/lab/lab_scenario_moe.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/moe_scenario.h"

namespace shardlab {
namespace {

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

/// The engine spells fields as the CLI does ("top-k: "); a lab file says top_k.
Error InLabSpelling(const Error& e) {
  std::string message = e.what();
  for (const auto& [cli, lab] : {std::pair<const char*, const char*>{"top-k: ", "top_k: "},
                                 {"capacity-factor: ", "capacity_factor: "}}) {
    const std::string from = cli;
    if (message.rfind(from, 0) == 0) message = lab + message.substr(from.size());
  }
  return Error(message, ErrorKind::kInvalidInput);
}

MoeScenario MoeFromLab(const ScenarioParams& p) {
  try {
    return MoeFromParams(p);
  } catch (const Error& e) {
    throw InLabSpelling(e);
  }
}

}  // namespace

void CheckMoeLab(const ScenarioParams& p) {
  const MoeScenario sc = MoeFromLab(p);
  try {
    CheckMoeScenario(sc, LoadScenarioTopology(sc.topology));
  } catch (const Error& e) {
    throw InLabSpelling(e);
  }
}

LabRunResult RunMoeLab(const ScenarioParams& p) {
  const MoeScenario sc = MoeFromLab(p);
  std::unique_ptr<PreparedMoe> prepared;
  try {
    prepared = PrepareMoe(sc);
  } catch (const Error& e) {
    throw InLabSpelling(e);
  }
  RunOptions options;
  options.timing_only = sc.timing_only;
  options.seed = sc.seed;
  Executor executor(CreateBackend("sim"), std::move(prepared->layer.plan), prepared->topology,
                    options);
  VectorSink sink;
  executor.RunToEnd(sink);
  if (executor.state() != ExecutorState::kDone) {
    throw Error("the run failed: " + executor.error(), ErrorKind::kRuntime);
  }
  const MoeSummary s = SummarizeMoe(*prepared, sink.events, executor.backend(), &executor.plan());
  if (s.check.checked && !s.check.correct) {
    throw Error("the MoE layer's output differs from the single-device layer (rank " +
                    std::to_string(s.check.worst_rank) + "): a bug in the engine, please report it",
                ErrorKind::kRuntime);
  }
  if (!s.bytes_match) {
    throw Error("the all-to-all bytes of the run differ from the count from the routing: a bug in "
                "the engine, please report it",
                ErrorKind::kRuntime);
  }
  const MoeLayerConfig& c = sc.layer;
  const MoeRouting& routing = prepared->layer.routing;
  const MoeMetrics& m = s.metrics;
  double dispatch_total = 0, dispatch_max = 0, combine_total = 0, rows_max = 0, rows_sum = 0;
  for (const MoeRankMetrics& r : m.ranks) {
    dispatch_total += static_cast<double>(r.dispatch_sent);
    dispatch_max = std::max(dispatch_max, static_cast<double>(r.dispatch_sent));
    combine_total += static_cast<double>(r.combine_sent);
    rows_max = std::max(rows_max, static_cast<double>(r.rows));
    rows_sum += static_cast<double>(r.rows);
  }
  const double rows_mean = m.ranks.empty() ? 0.0 : rows_sum / static_cast<double>(m.ranks.size());
  const int expert_max =
      routing.kept_per_expert.empty()
          ? 0
          : *std::max_element(routing.kept_per_expert.begin(), routing.kept_per_expert.end());
  const double choices = static_cast<double>(c.tokens) * c.top_k;
  const double step = static_cast<double>(m.step_ns);
  LabRunResult out;
  out.measured = {
      {"time_us", step / 1e3},
      {"time_ms", step / 1e6},
      {"router_us", m.router_ns / 1e3},
      {"dispatch_us", m.dispatch_ns / 1e3},
      {"experts_us", m.experts_ns / 1e3},
      {"combine_us", m.combine_ns / 1e3},
      {"capacity_per_rank", static_cast<double>(routing.capacity_per_rank)},
      {"dropped", static_cast<double>(routing.dropped)},
      {"dropped_fraction", choices > 0 ? static_cast<double>(routing.dropped) / choices : 0.0},
      {"kept", static_cast<double>(rows_sum)},
      {"max_expert_rows", static_cast<double>(expert_max)},
      {"max_rank_rows", rows_max},
      {"mean_rank_rows", rows_mean},
      {"dispatch_bytes", dispatch_total},
      {"dispatch_bytes_per_rank", dispatch_max},
      {"combine_bytes", combine_total},
      {"straggler", static_cast<double>(m.straggler)},
      {"straggler_load", m.straggler_load},
      {"straggler_time", m.straggler_time},
  };
  out.summary = "MoE layer, " + std::to_string(c.experts) + " experts on " +
                std::to_string(c.ranks) + " ranks, top-" + std::to_string(c.top_k) + ", " +
                std::to_string(c.tokens) + " tokens, skew " + MoeSkewName(c.skew) + " (" +
                sc.topology + "): " + FormatTime(m.step_ns) + ", dropped " +
                std::to_string(routing.dropped) + " of " + Fixed(choices, 0) +
                " choices, all-to-all " + FormatBytes(static_cast<Bytes>(dispatch_total)) +
                " each way, straggler rank " + std::to_string(m.straggler) + " (" +
                Fixed(m.straggler_load, 2) + "x the mean rows)";
  return out;
}

}  // namespace shardlab
