// `shardlab-cli run moe`'s tables: the tokens each expert got and dropped,
// each rank's all-to-all bytes beside the hand count (the step split and the
// straggler under them are the Summary's rows).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "app/cli/scenario_run.h"
#include "app/cli/zero_args.h"
#include "engine/core/units.h"
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
  c.tables = [](std::ostream& out, const RunView& v) {
    PrintText(out, v.prepared.Detail<PreparedMoe>(), v.summary.Detail<MoeSummary>());
  };
}

}  // namespace shardlab::cli
