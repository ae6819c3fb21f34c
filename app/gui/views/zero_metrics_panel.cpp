// The metrics panel of a ZeRO run: memory per GPU measured beside the
// formula (for the chosen K and the other), traffic per step beside 2Ψ or
// 3Ψ, the collectives a step runs, the step's time, and whether the
// trained weights equal one GPU's; then GPU 0's model states one by one.
//
//   ZeRO-2 · N = 4 · MLP 4×64 · batch 32 (8 a GPU) · Adam × 2 · 2 buckets ...
//   Ψ            16,640      parameters: 4 × (64² + 64)
//   memory/GPU   91.5 kB     model states, measured
//   formula      91.5 kB     2Ψ + (2+12)Ψ/N, K = 12 (the paper)
//   K = 8        74.9 kB     2Ψ + (2+8)Ψ/N: Adam m, v only
//   peak/GPU     127 kB      + activations, inputs, transient peak
//   sent/step    24,960      elements, by the busiest GPU
//   2Ψ(N−1)/N    24,960      the formula; measured ×1.000
//   collectives  4 a step    2 reduce-scatters, 2 all-gathers
//   step         8.70 µs     simulated clock, per Adam step
//   result       correct     fp32 parameters within 9.7e-08 of one GPU's
//   GPU 0        measured    formula
//   params       33.3 kB     2Ψ = 33.3 kB
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include <imgui.h>

#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"
#include "engine/core/units.h"
#include "engine/model/zero_memory.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::gui {
namespace {

std::string Fixed(double value, const char* format) {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}


std::string ScenarioLine(const PreparedZero& z, const std::string& title) {
  const ZeroParams& p = z.scenario.params;
  const std::string dot = " \xC2\xB7 ";
  std::string line = title + dot + "N = " + std::to_string(p.ranks) + dot + "MLP " + std::to_string(p.model.layers) +
                     "\xC3\x97" + std::to_string(p.model.width) + dot +
                     Format(Tr("batch %d (%d a GPU)"), p.model.batch, p.model.batch / std::max(p.ranks, 1)) + dot +
                     "Adam \xC3\x97 " + std::to_string(p.steps);
  if (p.stage < 3) {
    const int buckets = static_cast<int>(z.zero.units.size());
    line += dot + Format(buckets == 1 ? Tr("%d bucket") : Tr("%d buckets"), buckets) +
            (p.overlap ? Tr(", overlapped") : Tr(", after backward"));
  }
  return line + dot + z.topology.name + dot + z.scenario.backend;
}

/// "2 reduce-scatters, 2 all-gathers" from the names of one training step.
std::string CollectiveCounts(const std::vector<ZeroCollectiveName>& names) {
  std::map<std::string, int> count;
  for (const ZeroCollectiveName& n : names) {
    if (n.training_step != 0) continue;
    switch (n.kind) {
      case ZeroCollectiveKind::kAllReduceGradients: ++count["all-reduce"]; break;
      case ZeroCollectiveKind::kReduceScatterGradients: ++count["reduce-scatter"]; break;
      case ZeroCollectiveKind::kGatherForward:
      case ZeroCollectiveKind::kGatherBackward:
      case ZeroCollectiveKind::kGatherUpdated: ++count["all-gather"]; break;
    }
  }
  std::string text;
  for (const char* kind : {"all-reduce", "reduce-scatter", "all-gather"}) {
    const int n = count[kind];
    if (n == 0) continue;
    // The collectives' names stay as the seed texts write them; the count is the app's language.
    text += (text.empty() ? "" : Tr(", ")) + Format(n == 1 ? Tr("%d %s") : Tr("%d %ss"), n, kind);
  }
  return text;
}

/// What each stage teaches, in two sentences.
const char* StageLesson(int stage) {
  switch (stage) {
    case 0:
      return Tr("Plain data parallelism: every GPU keeps all 16\xCE\xA8 bytes of model state and an all-reduce "
                "sums the gradients, 2\xCE\xA8 elements sent per GPU a step. Stage 1 keeps the traffic and cuts "
                "the optimizer states to 1/N.");
    case 1:
      return Tr("Stage 1: each GPU updates only its 1/N of the parameters, so it keeps only that much fp32 master "
                "copy and Adam state. A reduce-scatter and an all-gather send the same 2\xCE\xA8 as an all-reduce.");
    case 2:
      return Tr("Stage 2: a bucket's full gradient lives only until its reduce-scatter (the hatched block), so "
                "each GPU keeps 1/N of the gradients too, still for 2\xCE\xA8 a step.");
    case 3:
      return Tr("Stage 3: each GPU keeps 1/N of the parameters as well, and all-gathers every layer before its "
                "forward and again before its backward: 3\xCE\xA8 a step, 1.5\xC3\x97 the traffic, for (4+K)\xCE\xA8/N "
                "of model state.");
  }
  return "";
}

/// Measured bytes of each model state on `m` beside the formula's.
void CategoryTable(const RankMemory& m, const ZeroMemoryFormula& formula, int k, int stage) {
  if (!ImGui::BeginTable("##zero_categories", 3,
                         ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    return;
  }
  ImGui::TableSetupColumn("GPU 0");
  ImGui::TableSetupColumn(Tr("measured"));
  ImGui::TableSetupColumn(Tr("formula"), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  const std::string n = stage >= 1 ? "/N" : "";
  // Short names: the right column is narrow at 1280 pixels.
  const struct {
    MemoryCategory category;
    const char* name;
    double want;
    std::string text;
  } rows[] = {
      {MemoryCategory::kParameters, Tr("params"), formula.parameters, stage == 3 ? "2\xCE\xA8/N" : "2\xCE\xA8"},
      {MemoryCategory::kGradients, Tr("grads"), formula.gradients, stage >= 2 ? "2\xCE\xA8/N" : "2\xCE\xA8"},
      {MemoryCategory::kOptimizerStates, Tr("optimizer"), formula.optimizer_states, std::to_string(k) + "\xCE\xA8" + n},
  };
  for (const auto& row : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.name);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ZeroBytesText(static_cast<double>(m.persistent[static_cast<std::size_t>(row.category)])).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s = %s", row.text.c_str(), ZeroBytesText(row.want).c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void DrawZeroMetrics(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedZero& prepared = session.prepared()->Detail<PreparedZero>();
  const Plan& plan = *session.plan();
  const ZeroParams& p = prepared.scenario.params;
  const int k = static_cast<int>(session.run_params()->Int("k"));
  const std::string title = p.stage == 0 ? Tr("data parallel (stage 0)") : "ZeRO-" + std::to_string(p.stage);
  ImGui::TextWrapped("%s", ScenarioLine(prepared, title).c_str());

  const bool done = session.state() == SessionState::kDone;
  const ZeroSummary& out = SummaryDetail<ZeroSummary>(session);
  const double psi = static_cast<double>(prepared.zero.parameter_count);
  const ZeroMemoryFormula formula = ZeroMemoryPerGpu(psi, p.ranks, p.stage, k);
  const ZeroMemoryFormula other_k = ZeroMemoryPerGpu(psi, p.ranks, p.stage, k == 12 ? 8 : 12);
  const std::vector<ZeroCollectiveName> names = NameZeroCollectives(prepared.zero, plan);
  if (ImGui::BeginTable("##zero_metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 6.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    const int other = k == 12 ? 8 : 12;
    MetricsRow(Tr("\xCE\xA8"), Grouped(prepared.zero.parameter_count),
               Format(Tr("parameters: %d \xC3\x97 (%d\xC2\xB2 + %d)"), p.model.layers, p.model.width, p.model.width));
    if (done && !out.memory.empty()) {
      Bytes states = 0, peak = 0;
      for (std::size_t r = 0; r < out.memory.size(); ++r) {
        const ZeroMemoryBar bar = ZeroPeakBar(static_cast<int>(r), out.memory[r]);
        states = std::max(states, bar.model_states);
        peak = std::max(peak, bar.total);
      }
      const bool equal = std::abs(static_cast<double>(states) - formula.total()) < 0.001 * formula.total() + 8;
      MetricsRow(Tr("memory/GPU"), ZeroBytesText(static_cast<double>(states)), Tr("model states, measured"),
                 k == 12 ? (equal ? theme.PhaseColor(Phase::kBroadcast) : theme.error) : 0);
    }
    MetricsRow(Tr("formula"), ZeroBytesText(formula.total()),
               ZeroMemoryFormulaText(p.stage, k) + ", K = " + std::to_string(k) +
                   (k == 12 ? Tr(" (the paper)") : Tr(" (seed texts)")));
    MetricsRow(("K = " + std::to_string(other)).c_str(), ZeroBytesText(other_k.total()),
               ZeroMemoryFormulaText(p.stage, other) +
                   (other == 12 ? Tr(": with the fp32 master copy") : Tr(": Adam m, v only")));
    if (done && !out.memory.empty()) {
      Bytes peak = 0;
      for (std::size_t r = 0; r < out.memory.size(); ++r) {
        peak = std::max(peak, ZeroPeakBar(static_cast<int>(r), out.memory[r]).total);
      }
      MetricsRow(Tr("peak/GPU"), ZeroBytesText(static_cast<double>(peak)), Tr("+ activations, inputs, transient peak"));
      const double ratio = out.formula_elements_per_step > 0 ? out.sent_elements_per_step / out.formula_elements_per_step : 0;
      MetricsRow(Tr("sent/step"), Grouped(static_cast<std::int64_t>(out.sent_elements_per_step + 0.5)),
                 Tr("elements, by the busiest GPU"));
      MetricsRow(p.stage == 3 ? "3\xCE\xA8(N\xE2\x88\x92" "1)/N" : "2\xCE\xA8(N\xE2\x88\x92" "1)/N",
                 Grouped(static_cast<std::int64_t>(out.formula_elements_per_step + 0.5)),
                 Format(Tr("the formula; measured \xC3\x97%s"), Fixed(ratio, "%.3f").c_str()));
    } else {
      MetricsRow(Tr("run"), Format(Tr("recording step %d of %d"), session.steps_done(), session.num_steps()), "");
    }
    MetricsRow(Tr("collectives"), Format(Tr("%d a step"), static_cast<int>(prepared.zero.collectives_per_step)),
               CollectiveCounts(names));
    if (done) {
      MetricsRow(Tr("step"), FormatRunTime(out.step_ns), Format(Tr("%s clock, per Adam step"), ClockOf(session)));
      const ZeroCheck& check = out.check;
      if (check.checked) {
        MetricsRow(Tr("result"), VerdictWords(check.verdict.kind),
                   check.verdict.Detail() +
                       Format(Tr(" (fp32 parameters against their error bounds from one GPU in double); loss %s vs %s"),
                              Fixed(check.loss, "%.5g").c_str(), Fixed(check.reference_loss, "%.5g").c_str()),
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
  if (const std::string reason = session.NotCheckedReason(out.check.not_checked_reason);
      done && !out.check.checked && !reason.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
    ImGui::TextWrapped("%s", reason.c_str());
    ImGui::PopStyleColor();
  }
  if (done && !out.memory.empty()) {
    ImGui::Spacing();
    CategoryTable(out.memory.front(), formula, k, p.stage);
  }
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  ImGui::TextWrapped("%s", StageLesson(p.stage));
  if (k == 8) {
    ImGui::TextWrapped(Tr("K = 8 counts Adam's m and v only, as the seed texts do; this run also keeps an fp32 "
                       "master copy of what each GPU updates (4 bytes a parameter more: the paper's K = 12)."));
  }
  ImGui::PopStyleColor();
}

}  // namespace shardlab::gui
