// The metrics panel of a tensor-parallel layer: how the step splits into
// compute and communication, the all-reduces counted and sized beside the
// ring formula, every collective's span, and whether each output and
// gradient block equals the single-device layer's.
//
//   MLP · tp 4 · B 2 × S 8 = 16 tokens · H 32 · F 128 · dgx-a100 · sim
//   step         9.81 µs     simulated clock, forward + backward
//   compute      6.02 µs     the busiest GPU
//   comm         3.79 µs     while any collective runs
//   comm share   38.6%       comm / step
//   all-reduces  1 fwd + 1 bwd    each T×H×4 B = 2 KiB
//   formula      1.62 µs     per all-reduce (ring)
//   result       correct     within 1.2e-07 of one GPU (16 blocks)
//   collective   carries                  sent/GPU   span
//   AR1 fwd      MLP output (g)           1.5 KiB    1.71 µs
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"
#include "engine/core/units.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/tp_scenario.h"

namespace shardlab::gui {
namespace {

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
  return text;
}

const char* LayerWords(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear: return "column linear";
    case TpLayerKind::kRowLinear: return "row linear";
    case TpLayerKind::kMlp: return "MLP";
    case TpLayerKind::kAttention: return "attention";
    case TpLayerKind::kTransformer: return "transformer layer";
  }
  return "?";
}

std::string ScenarioLine(const PreparedTp& p) {
  const TpLayerConfig& c = p.layer.config;
  const std::string dot = " \xC2\xB7 ";
  const std::string times = " \xC3\x97 ";
  std::string line = std::string(LayerWords(c.kind)) + dot + "tp " + std::to_string(c.tp) + dot + "B " +
                     std::to_string(c.batch) + times + "S " + std::to_string(c.seq) + " = " +
                     std::to_string(c.tokens()) + " tokens" + dot + "H " + std::to_string(c.hidden);
  if (c.kind != TpLayerKind::kAttention) line += dot + "F " + std::to_string(c.split_width());
  if (c.has_attention()) line += dot + std::to_string(c.head_count()) + " heads";
  if (c.sequence_parallel) line += dot + "sequence parallel";
  return line + dot + p.topology.name + dot + p.scenario.backend;
}

/// The ring formula for the layer's T × H all-reduce, once per run.
const TpAllReduceFormula& CachedFormula(const Session& session, const PreparedTp& p) {
  static std::uint64_t run_id = 0;
  static TpAllReduceFormula formula;
  if (run_id != session.run_id()) {
    run_id = session.run_id();
    try {
      formula = TpAllReduceEstimate(p.scenario, p.topology);
    } catch (const std::exception& e) {
      formula = TpAllReduceFormula{};
      formula.text = std::string("no formula: ") + e.what();
    }
  }
  return formula;
}

/// What a collective carries without the kind its name already says:
/// "MLP input, all-gather (g)" -> "MLP input (g)" beside AG2.
std::string CarriesWords(const std::string& what) {
  std::string text = what;
  for (const char* kind : {", all-gather", ", reduce-scatter", ", all-reduce"}) {
    const std::size_t at = text.find(kind);
    if (at != std::string::npos) text.erase(at, std::string(kind).size());
  }
  return text;
}

/// One row per collective: its name, what it carries, bytes and span.
void CollectiveTable(const std::vector<TpCollectiveName>& names, const TpMetrics& m) {
  if (m.collectives.empty()) return;
  // Three columns, the words wrapped: a right column 300 px wide has no
  // room for a fourth; what each GPU sent is in the row's tooltip.
  if (!ImGui::BeginTable("##tp_collectives", 3,
                         ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    return;
  }
  ImGui::TableSetupColumn(Tr("collective"));
  ImGui::TableSetupColumn(Tr("carries"), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(Tr("span"));
  ImGui::TableHeadersRow();
  for (const TpCollectiveTiming& t : m.collectives) {
    const TpCollectiveName* n = FindTpCollective(names, t.collective.seq);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(n != nullptr ? n->name.c_str() : "?");
    bool hovered = ImGui::IsItemHovered();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", CarriesWords(t.collective.what).c_str());
    hovered = hovered || ImGui::IsItemHovered();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(FormatRunTime(t.span_ns).c_str());
    if (hovered || ImGui::IsItemHovered()) {
      ImGui::SetTooltip(Tr("%s: %s\nthe whole tensor: %s (T x H); each GPU sent %s\n%d ops, %s from the first to the last"),
                        n != nullptr ? n->name.c_str() : "?", t.collective.what.c_str(),
                        FormatBytes(t.tensor_bytes).c_str(), FormatBytes(t.sent_per_rank).c_str(), t.events,
                        FormatRunTime(t.span_ns).c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace

void DrawTpMetrics(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedTp& prepared = session.prepared()->Detail<PreparedTp>();
  const Plan& plan = *session.plan();
  const TpLayerPlan& layer = prepared.layer;
  const TpLayerConfig& c = layer.config;
  ImGui::TextWrapped("%s", ScenarioLine(prepared).c_str());

  const bool done = session.state() == SessionState::kDone;
  const TpSummary& out = SummaryDetail<TpSummary>(session);
  const TpMetrics& m = out.metrics;
  const TpCheck& check = out.check;
  const Bytes tensor_bytes = layer.allreduce_count * Bytes{DTypeBytes(c.dtype)};
  const TpAllReduceFormula& formula = CachedFormula(session, prepared);
  const bool split = c.sequence_parallel;
  if (ImGui::BeginTable("##tp_metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 6.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    if (done) {
      MetricsRow(Tr("step"), FormatRunTime(m.step_ns), Format(Tr("%s clock, forward + backward"), ClockOf(session)));
      MetricsRow(Tr("compute"), FormatRunTime(m.compute_ns), Tr("the busiest GPU"));
      MetricsRow(Tr("comm"), FormatRunTime(m.comm_ns), Tr("while any collective runs"));
      MetricsRow(Tr("comm share"), Percent(m.comm_share), Tr("comm / step: the GPUs wait for it"));
    } else {
      MetricsRow(Tr("step"), Format(Tr("recording step %d of %d"), session.steps_done(), session.num_steps()), "");
    }
    // Counted from the events when done (the plan's counts before).
    const int fwd = done ? m.forward_allreduces : layer.forward_allreduces;
    const int bwd = done ? m.backward_allreduces : layer.backward_allreduces;
    MetricsRow(Tr("all-reduces"), Format(Tr("%d fwd + %d bwd"), fwd, bwd),
               std::string(split ? Tr("each an RS + AG pair of ") : Tr("each sums ")) + "T\xC3\x97H\xC3\x97" +
                   std::to_string(DTypeBytes(c.dtype)) + " B = " + std::to_string(c.tokens()) + "\xC3\x97" +
                   std::to_string(c.hidden) + "\xC3\x97" + std::to_string(DTypeBytes(c.dtype)) + " B");
    MetricsRow(Tr("size"), FormatBytes(tensor_bytes), Format(Tr("per all-reduce (%s values)"), Grouped(layer.allreduce_count).c_str()));
    if (formula.ns > 0) {
      std::string note = Tr("per all-reduce, ring formula");
      if (done && !m.collectives.empty() && fwd + bwd > 0) {
        // An all-reduce is one collective, or with SP a reduce-scatter and an all-gather.
        TimeNs measured = 0;
        for (const TpCollectiveTiming& t : m.collectives) measured += t.span_ns;
        measured /= static_cast<double>(fwd + bwd);
        note = Format(split ? Tr("per all-reduce; measured %s per RS + AG pair") : Tr("per all-reduce; measured %s on average"),
                      FormatRunTime(measured).c_str());
      }
      MetricsRow(Tr("formula"), FormatRunTime(formula.ns), note);
    }
    if (done) {
      if (check.checked) {
        MetricsRow(Tr("result"), VerdictWords(check.verdict.kind),
                   check.verdict.Detail() +
                       Format(Tr(" (outputs and gradients against their error bounds from one GPU in double; %d blocks)"),
                              static_cast<int>(check.blocks_checked)),
                   check.correct ? theme.PhaseColor(Phase::kBroadcast) : theme.error);
      } else {
        MetricsRow(Tr("result"), Tr("not checked"), "");
      }
    }
    MetricsRow(Tr("ticks"), std::to_string(plan.num_steps),
               Format(Tr("%s ops, %s events"), Grouped(static_cast<std::int64_t>(plan.ops.size())).c_str(),
                      Grouped(static_cast<std::int64_t>(session.store().event_count())).c_str()));
    DroppedEventsRow(session, theme);
    ImGui::EndTable();
  }
  if (const std::string reason = session.NotCheckedReason(check.not_checked_reason);
      done && !check.checked && !reason.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
    ImGui::TextWrapped("%s", reason.c_str());
    ImGui::PopStyleColor();
  }
  if (done && check.checked && !check.correct) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.error), Tr("worst tensor: %s"), check.worst_tensor.c_str());
  }
  if (done) {
    ImGui::Spacing();
    CollectiveTable(NameTpCollectives(layer.collectives), m);
  }
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  if (!formula.text.empty()) ImGui::TextWrapped("%s", formula.text.c_str());
  const int total = layer.forward_allreduces + layer.backward_allreduces;
  const std::string why =
      Format(total == 1 ? Tr("Every all-reduce carries the whole T x H activation (%s), however many GPUs share "
                             "the layer: tp cuts each GPU's arithmetic by 1/tp, not the %d all-reduce.")
                        : Tr("Every all-reduce carries the whole T x H activation (%s), however many GPUs share "
                             "the layer: tp cuts each GPU's arithmetic by 1/tp, not the %d all-reduces."),
             FormatBytes(tensor_bytes).c_str(), total) +
      (split ? Tr(" Sequence parallelism sends the same bytes as a reduce-scatter and an all-gather, "
                  "and keeps only T/tp rows of the activations per GPU between them.")
             : "");
  ImGui::TextWrapped("%s", why.c_str());
  if (done && m.comm_share > 0.5) {
    // The lesson of a small layer: the all-reduce does not shrink with it as fast.
    ImGui::TextWrapped(Tr("Communication dominates here: per GPU the arithmetic grows as T x H x F / tp, "
                       "an all-reduce only as T x H, and each ring step pays a link's latency. A "
                       "bigger layer (hidden 4096, sequence 2048, timing only) turns the share around."));
  }
  ImGui::PopStyleColor();
}

}  // namespace shardlab::gui
