// `shardlab-cli run moe`: one expert-parallel mixture-of-experts layer, E
// experts over --ranks GPUs, its dispatch and combine all-to-alls run on a
// backend. Prints the tokens each expert got and dropped, each rank's
// all-to-all bytes beside the hand count, the step split (router, dispatch,
// experts, combine), the straggler rank, and whether the output equals the
// single-device layer.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "app/cli/scenario_run.h"
#include "app/cli/zero_args.h"
#include "engine/core/units.h"
#include "engine/scenarios/fault_params.h"
#include "engine/scenarios/moe_scenario.h"

namespace shardlab::cli {
namespace {

std::string Fixed(double value, int digits) { return FormatFixed(value, digits); }

std::string Pad(const std::string& text, std::size_t width, bool left = false) {
  return PadColumns(text, width, left);
}

// A bar of up to `width` marks for `value` out of `most` (at least one for
// any value above 0).
std::string Bar(std::int64_t value, std::int64_t most, int width, char mark) {
  if (most <= 0 || value <= 0) return "";
  const int n = std::max(1, static_cast<int>(std::lround(static_cast<double>(value) * width / most)));
  return std::string(static_cast<std::size_t>(n), mark);
}

std::vector<StepPart> StepParts(const MoeMetrics& m) {
  return {TimePart("router", "router_us", m.router_ns, "x·Wr, top-k gates"),
          TimePart("dispatch", "dispatch_us", m.dispatch_ns, "pack + all-to-all of the tokens to their experts"),
          TimePart("experts", "experts_us", m.experts_ns, "until the slowest rank's experts finish"),
          TimePart("combine", "combine_us", m.combine_ns, "all-to-all back + gate-weighted sum"),
          TimePart("step time", "step_time_us", m.step_ns)};
}

void PrintText(std::ostream& out, const PreparedMoe& prepared, const MoeSummary& s) {
  const MoeLayerConfig& c = prepared.scenario.layer;
  const MoeRouting& r = prepared.layer.routing;
  const MoeMetrics& m = s.metrics;
  const std::int64_t cap = std::int64_t{r.capacity_per_rank} * c.ranks;
  out << "#\n# Tokens per expert (capacity " << r.capacity_per_rank << " per rank, " << cap
      << " in all; mean load " << Fixed(static_cast<double>(c.tokens) * c.top_k / c.experts, 1)
      << ")\n#  expert  rank   routed     kept  dropped\n";
  const int most = *std::max_element(r.routed.begin(), r.routed.end());
  for (int e = 0; e < c.experts; ++e) {
    out << "# " << Pad(std::to_string(e), 7) << Pad(std::to_string(r.rank_of_expert(e)), 6)
        << Pad(std::to_string(r.routed[e]), 9) << Pad(std::to_string(r.kept_per_expert[e]), 9)
        << Pad(std::to_string(r.routed[e] - r.kept_per_expert[e]), 9) << "  "
        << Bar(r.kept_per_expert[e], most, 30, '#')
        << Bar(r.routed[e] - r.kept_per_expert[e], most, 30, '.') << "\n";
  }
  const std::int64_t choices = std::int64_t{c.tokens} * c.top_k;
  out << "#   dropped " << r.dropped << " of " << choices << " choices ("
      << Fixed(choices > 0 ? 100.0 * r.dropped / choices : 0, 1) << "%); '#' kept, '.' dropped\n";

  out << "#\n# All-to-all bytes per rank (measured; hand count: rows x H x 4 B to other ranks)\n"
      << "#  rank     rows  dispatch sent  dispatch recv   combine sent   combine recv   expert time\n";
  for (int rank = 0; rank < c.ranks; ++rank) {
    const MoeRankMetrics& k = m.ranks[rank];
    out << "# " << Pad(std::to_string(rank), 5) << Pad(std::to_string(k.rows), 9)
        << Pad(std::to_string(k.dispatch_sent), 15) << Pad(std::to_string(k.dispatch_received), 15)
        << Pad(std::to_string(k.combine_sent), 15) << Pad(std::to_string(k.combine_received), 15)
        << Pad(FormatTime(k.expert_ns), 14) << (rank == m.straggler ? "  <- straggler" : "") << "\n";
  }
  out << "#   hand count: " << (s.bytes_match ? "every rank's bytes match" : "MISMATCH") << " ("
      << s.expected.transfers_per_all_to_all << " transfers per all-to-all)\n";

  out << "#\n";
  PrintStepParts(out, StepParts(m), 14);
  if (m.straggler >= 0) {
    out << "# straggler     rank " << m.straggler << ": " << Fixed(m.straggler_load, 2)
        << "x the mean rows, " << Fixed(m.straggler_time, 2) << "x the mean expert time\n";
  }
}

void JsonSetup(JsonWriter& w, const RunView& v) {
  w.Field("capacity_per_rank", v.prepared.Detail<PreparedMoe>().layer.routing.capacity_per_rank);
}

void JsonResult(JsonWriter& w, const RunView& v) {
  const PreparedMoe& prepared = v.prepared.Detail<PreparedMoe>();
  const MoeSummary& s = v.summary.Detail<MoeSummary>();
  const MoeLayerConfig& c = prepared.scenario.layer;
  const MoeRouting& r = prepared.layer.routing;
  const MoeMetrics& m = s.metrics;
  w.Field("dropped", r.dropped);
  w.Key("experts_load");
  w.BeginArray();
  for (int e = 0; e < c.experts; ++e) {
    w.BeginObject();
    w.Field("expert", e);
    w.Field("rank", r.rank_of_expert(e));
    w.Field("routed", r.routed[e]);
    w.Field("kept", r.kept_per_expert[e]);
    w.Field("dropped", r.routed[e] - r.kept_per_expert[e]);
    w.EndObject();
  }
  w.EndArray();
  w.Key("per_rank");
  w.BeginArray();
  for (int rank = 0; rank < c.ranks; ++rank) {
    const MoeRankMetrics& k = m.ranks[rank];
    w.BeginObject();
    w.Field("rank", rank);
    w.Field("rows", k.rows);
    w.Field("expert_us", k.expert_ns / 1e3);
    w.Field("dispatch_sent_bytes", k.dispatch_sent);
    w.Field("dispatch_received_bytes", k.dispatch_received);
    w.Field("combine_sent_bytes", k.combine_sent);
    w.Field("combine_received_bytes", k.combine_received);
    w.Field("expected_dispatch_sent_bytes", s.expected.dispatch_sent[rank]);
    w.Field("expected_dispatch_received_bytes", s.expected.dispatch_received[rank]);
    w.Field("expected_combine_sent_bytes", s.expected.combine_sent[rank]);
    w.Field("expected_combine_received_bytes", s.expected.combine_received[rank]);
    w.EndObject();
  }
  w.EndArray();
  w.Field("bytes_match", s.bytes_match);
  w.Field("transfers", m.transfers);
  WriteStepParts(w, StepParts(m));
  w.Field("straggler", m.straggler);
  w.Field("straggler_load", m.straggler_load);
  w.Field("straggler_time", m.straggler_time);
  WriteCheckJson(w, s.check.checked, s.check.correct,
                 {{"output_error", s.check.output_error}, {"gate_error", s.check.gate_error}},
                 s.check.not_checked_reason);

}

}  // namespace

void MoeRenderers(RunCommand& c) {
  c.bind = [](Prepared& p, const ScenarioParams& params, const std::string& backend, std::optional<std::uint64_t> seed) {
    if (seed && *seed != p.Detail<PreparedMoe>().scenario.seed) {
      // The routing, and with it the all-to-all sizes, follows the seed:
      // the layer is built again for it.
      MoeScenario sc = p.Detail<PreparedMoe>().scenario;
      sc.seed = *seed;
      std::shared_ptr<PreparedMoe> again = PrepareMoe(sc, p.topology);
      p.plan = std::move(again->layer.plan);
      p.detail = std::move(again);
    }
    BindBackendAndSeed<PreparedMoe>(p, params, backend, std::nullopt);
  };
  c.header = [](const PreparedView& v) {
    const MoeScenario& sc = v.prepared.Detail<PreparedMoe>().scenario;
    const MoeLayerConfig& layer = sc.layer;
    return std::vector<std::string>{
        "expert-parallel MoE, " + std::to_string(layer.experts) + " experts over " + std::to_string(layer.ranks) +
            " ranks (" + std::to_string(layer.experts_per_rank()) + " each), top-" + std::to_string(layer.top_k) +
            ", skew " + MoeSkewName(layer.skew) + ", on " + sc.topology,
        "T = " + std::to_string(layer.tokens) + " tokens (" + std::to_string(layer.tokens_per_rank()) +
            " per rank), hidden H " + std::to_string(layer.hidden) + ", expert ffn F " + std::to_string(layer.ffn) +
            ", capacity factor " + (std::ostringstream() << layer.capacity_factor).str()};
  };
  c.tables = [](std::ostream& out, const RunView& v) {
    PrintText(out, v.prepared.Detail<PreparedMoe>(), v.summary.Detail<MoeSummary>());
  };
  c.result = [](const RunView& v) {
    const MoeCheck& check = v.summary.Detail<MoeSummary>().check;
    return LayerCheckText(check.verdict, check.checked, check.not_checked_reason,
                          "every rank's output and gates within their error bounds of the single-device layer in double",
                          "the expert-parallel layer differs from the single-device layer");
  };
  c.json_setup = JsonSetup;
  c.json_result = JsonResult;
}

}  // namespace shardlab::cli
