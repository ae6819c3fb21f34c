// `shardlab-cli run tp-LAYER`: one tensor-parallel (Megatron) layer, forward
// and backward, split over --tp ranks and run on a backend. Prints every
// collective the split costs (what it reduces, its bytes, its time), the
// compute/communication split, the seed text's all-reduce estimate beside
// the simulation, and whether the outputs and gradients equal the
// single-device layer.
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

/// Bytes as the seed text writes them: "1.61 GB" (powers of ten).
std::string DecimalBytes(Bytes bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " B";
  return FormatFixed(value, value >= 100 ? 0 : value >= 10 ? 1 : 2) + " " + kUnits[unit];
}

std::string Pad(const std::string& text, std::size_t width, bool left = false) {
  return PadColumns(text, width, left);
}

/// The seed text's estimate and the same formula at its 600 GB/s.
struct TpEstimate {
  TpAllReduceFormula formula;
  Bytes tensor_bytes = 0;
  TimeNs seed_ns = 0;       // at 600 GB/s, the same α
  TimeNs simulated_ns = 0;  // the run's mean time per all-reduce (an RS + AG pair counts once)
};

TpEstimate Estimate(const PreparedTp& prepared, const TpMetrics& m) {
  TpEstimate e;
  const TpLayerConfig& c = prepared.scenario.layer;
  e.formula = TpAllReduceEstimate(prepared.scenario, prepared.topology);
  e.tensor_bytes = c.tokens() * c.hidden * DTypeBytes(c.dtype);
  e.seed_ns = RingAllReduceNs(e.tensor_bytes, c.tp, kSeedNvlink3Gbps, e.formula.alpha_ns);
  const int allreduces = m.forward_allreduces + m.backward_allreduces;
  if (allreduces > 0) e.simulated_ns = m.comm_ns / allreduces;
  return e;
}

/// The step's split; `comm_text` says what the communication was.
std::vector<StepPart> StepParts(const TpMetrics& m, const std::string& comm_text) {
  return {TimePart("compute", "compute_us", m.compute_ns, "the busiest rank's compute ops"),
          TimePart("communication", "comm_us", m.comm_ns, comm_text),
          {"comm share", "comm_share", m.comm_share, FormatFixed(m.comm_share, 3), "of the step"},
          TimePart("step time", "step_time_us", m.step_ns, "forward + backward of the layer")};
}

void PrintText(std::ostream& out, const PreparedTp& prepared, const TpSummary& s,
               const TpEstimate& e) {
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

  const std::string allreduces = std::to_string(m.forward_allreduces) + " forward and " +
                                 std::to_string(m.backward_allreduces) + " backward all-reduce" +
                                 (m.backward_allreduces == 1 ? "" : "s");
  const std::string comm_text =
      ran.empty() ? "none on one rank"
                  : std::to_string(ran.size()) + " collective" + (ran.size() == 1 ? "" : "s") +
                        " (" + allreduces +
                        (c.sequence_parallel ? ", each a reduce-scatter + all-gather" : "") +
                        "); compute waits for each";
  PrintStepParts(out, StepParts(m, comm_text), 16);
  out << "#\n";

  if (c.tp <= 1) {
    out << "# Estimate: one rank, no all-reduce\n";
  } else {
    out << "# Estimate (seed text): ring all-reduce of the " << DecimalBytes(e.tensor_bytes)
        << " tensor M, B = slowest hop of GPUs 0.." << c.tp - 1 << ", per direction\n"
        << "#   " << e.formula.text << "   (simulated: " << FormatTime(e.simulated_ns) << ")\n"
        << "#   The seed's " << FormatGbps(kSeedNvlink3Gbps) << " GB/s (" << FormatTime(e.seed_ns)
        << ") is NVLink3's two directions added; a ring sends each byte one way, at B = "
        << FormatGbps(e.formula.bandwidth_gbps) << " GB/s: " << FormatTime(e.formula.ns) << ".\n";
  }
}

void JsonSetup(JsonWriter& w, const RunView& v) {
  WriteTpShapeFields(w, v.prepared.Detail<PreparedTp>().scenario.layer);
}

void JsonResult(JsonWriter& w, const RunView& v) {
  const PreparedTp& prepared = v.prepared.Detail<PreparedTp>();
  const TpSummary& s = v.summary.Detail<TpSummary>();
  const TpMetrics& m = s.metrics;
  const TpEstimate e = Estimate(prepared, m);
  WriteStepParts(w, StepParts(m, ""));
  w.Field("forward_allreduces", m.forward_allreduces);
  w.Field("backward_allreduces", m.backward_allreduces);
  w.Key("collectives");
  w.BeginArray();
  for (const TpCollectiveTiming& t : m.collectives) {
    w.BeginObject();
    w.Field("seq", t.collective.seq);
    w.Field("pass", t.collective.forward ? "forward" : "backward");
    w.Field("kind", TpCollectiveKindName(t.collective.kind));
    w.Field("what", t.collective.what);
    w.Field("count", t.collective.count);
    w.Field("tensor_bytes", t.tensor_bytes);
    w.Field("sent_per_rank_bytes", t.sent_per_rank);
    w.Field("time_us", t.span_ns / 1e3);
    w.Field("events", t.events);
    w.EndObject();
  }
  w.EndArray();
  w.Key("estimate");
  w.BeginObject();
  w.Field("tensor_bytes", e.tensor_bytes);
  w.Field("formula", e.formula.text);
  w.Field("allreduce_us", e.formula.ns / 1e3);
  w.Field("bandwidth_gbps", e.formula.bandwidth_gbps);
  w.Field("alpha_us", e.formula.alpha_ns / 1e3);
  w.Field("seed_bandwidth_gbps", kSeedNvlink3Gbps);
  w.Field("seed_allreduce_us", e.seed_ns / 1e3);
  w.Field("simulated_allreduce_us", e.simulated_ns / 1e3);
  w.EndObject();
  WriteCheckJson(w, s.check.checked, s.check.correct,
                 {{"output_error", s.check.output_error}, {"gradient_error", s.check.gradient_error}},
                 s.check.not_checked_reason);
  w.Key("worst_tensor");
  if (s.check.checked) w.String(s.check.worst_tensor); else w.Null();
  w.Field("blocks_checked", s.check.checked ? s.check.blocks_checked : 0);

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
    const PreparedTp& prepared = v.prepared.Detail<PreparedTp>();
    const TpSummary& s = v.summary.Detail<TpSummary>();
    PrintText(out, prepared, s, Estimate(prepared, s.metrics));
  };
  c.result = [](const RunView& v) {
    const TpCheck& check = v.summary.Detail<TpSummary>().check;
    return LayerCheckText(check.verdict, check.checked, check.not_checked_reason,
                          "forward and every gradient within their error bounds of the single-device layer in double",
                          "the split layer differs from the single-device layer",
                          "; " + std::to_string(check.blocks_checked) + " blocks");
  };
  c.json_setup = JsonSetup;
  c.json_result = JsonResult;
}

}  // namespace shardlab::cli
