// `shardlab-cli run 3d`'s table of traffic per group kind (the grid, the
// step, memory and MFU around it are the Summary's rows) and the flags the
// spec cannot check.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli/scenario_run.h"
#include "engine/core/units.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab::cli {
namespace {

/// What the spec cannot check: flags of the other kind of model, a real
/// step too large for the host.
void CheckFlags(const ParsedArgs& args, const std::string&, ScenarioParams& params) {
  const ThreeDScenario s = ThreeDFromParams(params);
  if (!s.timing_only())
    for (const char* flag : {"micro-batch", "global-batch", "buckets"})
      if (args.Has(flag))
        throw UsageError(args.Spelling(flag) + ": only for a --model preset (the small model uses --batch and --microbatches)");
  if (s.timing_only()) {
    for (const char* flag : {"layers", "width", "batch", "microbatches", "optimizer", "lr"})
      if (args.Has(flag))
        throw UsageError(args.Spelling(flag) + ": only for --model small (" + s.model +
                         " brings its own shape and batch)");
  }
  if (s.timing_only()) params.Set("timing_only", "true");  // a preset runs without data
  if (!s.timing_only()) {
    const double flops = 6.0 * s.mlp.batch * double(s.mlp.width) * s.mlp.width * s.mlp.layers;
    if (flops > kMaxHostFlops)
      throw Error("width: one real step is " + FormatFixed(flops / 1e9, 0) +
                  " GFLOP of host arithmetic, above the 20 GFLOP this command computes "
                  "(choose a smaller --width, --layers or --batch, or a --model preset)");
  }
}

void GroupTable(std::ostream& out, const PreparedThreeD& p, const ThreeDSummary& s) {
  out << "# group  bytes sent per GPU  send time per GPU   (busiest GPU of each kind)\n";
  const char* what[kGroupKindCount] = {"TP all-reduces of activations and their gradients",
                                       "activations and gradients between stages",
                                       p.three_d.params.zero_stage ? "ZeRO-1 gradient reduce-scatter + parameter all-gather"
                                                                   : "gradient all-reduce"};
  for (int k = 0; k < kGroupKindCount; ++k) {
    const ThreeDGroupTraffic& t = s.traffic[k];
    out << "# " << std::left << std::setw(5) << GroupKindName(GroupKind(k)) << std::right
        << std::setw(20) << FormatBytes(t.max_sent_bytes_per_rank) << std::setw(19)
        << FormatTime(t.max_busy_ns_per_rank) << "   " << what[k] << "\n";
  }
}

}  // namespace

void ThreeDRenderers(RunCommand& c) {
  c.adjust = CheckFlags;
  c.bind = BindBackendAndSeed<PreparedThreeD>;
  c.tables = [](std::ostream& out, const RunView& v) {
    GroupTable(out, v.prepared.Detail<PreparedThreeD>(), v.summary.Detail<ThreeDSummary>());
  };
  c.rank_labels = [](const Prepared& p) {
    const ParallelGrid& g = p.Detail<PreparedThreeD>().three_d.params.grid;
    std::vector<std::string> labels;
    for (int r = 0; r < g.ranks(); ++r) labels.push_back(GridCoordText(g, r));
    return labels;
  };
}

}  // namespace shardlab::cli
