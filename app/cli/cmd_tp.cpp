// `shardlab-cli run tp-LAYER`'s table: every collective the split costs (what
// it reduces, its bytes, its time); the step split and the seed text's
// estimate under it are the Summary's rows. Also the layer's own flags.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <vector>

#include "app/cli/output.h"
#include "app/cli/scenario_run.h"
#include "app/cli/tp_args.h"
#include "app/cli/zero_args.h"
#include "engine/core/units.h"
#include "engine/scenarios/tp_scenario.h"

namespace shardlab::cli {
namespace {

/// A time column in microseconds: two decimals while they mean something.
std::string Micros(TimeNs ns) {
  const double us = ns / 1e3;
  return FormatFixed(us, us >= 10000 ? 0 : us >= 100 ? 1 : 2);
}

std::string Pad(const std::string& text, std::size_t width, bool left = false) {
  return PadColumns(text, width, left);
}

void PrintText(std::ostream& out, const PreparedTp& prepared, const TpSummary& s) {
  const TpMetrics& m = s.metrics;
  const TpLayerConfig& c = prepared.scenario.layer;
  // A layer on one rank keeps its collectives in the plan's list but runs
  // none of them: only those that ran are shown.
  std::vector<const TpCollectiveTiming*> ran;
  std::size_t what_width = 4;
  for (const TpCollectiveTiming& t : m.collectives) {
    if (t.events == 0) continue;
    ran.push_back(&t);
    what_width = std::max(what_width, TextColumns(t.collective.what));
  }
  what_width += 2;
  out << "#\n#  seq  pass      collective      " << Pad("what", what_width, true)
      << Pad("tensor (B)", 12) << Pad("sent/rank (B)", 15) << Pad("time (us)", 12) << "\n";
  for (const TpCollectiveTiming* p : ran) {
    const TpCollectiveTiming& t = *p;
    out << "# " << Pad(std::to_string(t.collective.seq), 4) << "  "
        << Pad(t.collective.forward ? "forward" : "backward", 10, true)
        << Pad(TpCollectiveKindName(t.collective.kind), 16, true)
        << Pad(t.collective.what, what_width, true) << Pad(std::to_string(t.tensor_bytes), 12)
        << Pad(std::to_string(t.sent_per_rank), 15) << Pad(Micros(t.span_ns), 12) << "\n";
  }
  if (ran.empty()) {
    out << "#    (none: one rank has nothing to exchange)\n#\n";
  } else {
    out << "#   tensor = T x H x " << DTypeBytes(c.dtype) << " B (" << TpDTypeName(c.dtype) << "); "
        << (c.sequence_parallel ? "a ring reduce-scatter or all-gather sends (n-1)/n"
                                : "a ring all-reduce sends 2(n-1)/n")
        << " of it from every rank\n#\n";
  }

}

void JsonSetup(JsonWriter& w, const RunView& v) {
  WriteTpShapeFields(w, v.prepared.Detail<PreparedTp>().scenario.layer);
}

}  // namespace

void TpRenderers(RunCommand& c) {
  c.check_flags = [](const ParsedArgs& args, const std::string& word) {
    if (const std::string text = args.Get("tp"); text.find(',') != std::string::npos) {
      throw UsageError(args.Spelling("tp") + ": one size per run (got '" + text + "'); 'shardlab-cli sweep " +
                       (word == "tp" ? "tp-mlp" : word) + " --tp " + text + "' runs a list");
    }
  };
  c.adjust = [](const ParsedArgs& args, const std::string& word, ScenarioParams& params) {
    const std::string layer_word = word.find('-') == std::string::npos ? "tp-" + params.Text("layer") : word;
    const TpLayerKind kind = TpLayerFromWord("run", layer_word);
    params.Set("layer", TpLayerKindName(kind));
    // A flag the layer has no use for is a mistake, not a no-op.
    if (!TpFromParams(params).layer.has_attention() && args.Has("heads")) {
      throw UsageError(args.Spelling("heads") + ": the " + TpLayerKindName(kind) +
                       " layer has no attention heads (tp-attention and tp-transformer do)");
    }
    if (kind == TpLayerKind::kAttention && args.Has("ffn")) {
      throw UsageError(args.Spelling("ffn") + ": the attention layer has no ffn width (its "
                       "projections are H x H; tp-transformer adds the MLP)");
    }
  };
  c.flag_error = [](const Error& e, const ParsedArgs& args) { return TpFlagError(e, args); };
  c.bind = BindBackendAndSeed<PreparedTp>;
  c.header = [](const PreparedView& v) {
    const TpScenario& sc = v.prepared.Detail<PreparedTp>().scenario;
    const TpLayerConfig& layer = sc.layer;
    return std::vector<std::string>{std::string("tensor-parallel ") + TpLayerTitle(layer.kind) + ", tp " +
                                        std::to_string(layer.tp) + ", " + TpDTypeName(layer.dtype) +
                                        ", sequence parallelism " + (layer.sequence_parallel ? "on" : "off") +
                                        ", on " + sc.topology,
                                    TpShapeText(layer)};
  };
  c.tables = [](std::ostream& out, const RunView& v) {
    PrintText(out, v.prepared.Detail<PreparedTp>(), v.summary.Detail<TpSummary>());
  };
  c.json_setup = JsonSetup;
}

}  // namespace shardlab::cli
