// The memory view of a ZeRO run: one bar per GPU, stacked by what the
// bytes hold, measured from what the backend allocated; the formula's
// model states as a line across the bars.
//
//   now: t = 41.2 µs, live memory (hatched: buffers that come and go)
//   300 kB ┤ ·· stage 0: (2+2+12)Ψ = 266 kB ·······    GPU 0
//          │                                           ■ parameters     8.32 kB
//   200 kB ┤                                           ■ gradients      8.32 kB
//          │   ░░    ░░    ░░    ░░                    ■ optimizer st.  49.9 kB
//   100 kB ┤ ─ ██ ── ██ ── ██ ── ██ ─ (4+12)Ψ/N = ...  ░ gathered       8.32 kB
//          │   ██    ██    ██    ██                    total            ...
//        0 ┴──GPU0──GPU1──GPU2──GPU3─
//
// Every stage of one model shares the byte axis (up to what stage 0
// holds), so switching stage 0 -> 3 shows the optimizer states, then the
// gradients, then the parameters fall to 1/N. Before the replay starts
// and once it ends the bars show each category's peak; while it plays,
// what is live at the cursor, with the peak outlined. Hover a segment for
// its bytes and what it is; hover a bar to list its GPU on the right.
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/views/draw_util.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"
#include "engine/model/zero_memory.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::gui {
namespace {

constexpr float kTickLabelGapPx = 6.0f;
constexpr float kSwatchPx = 11.0f;
constexpr float kMinPlotPx = 80.0f;

const char* CategoryTitle(MemoryCategory c, bool transient, int stage) {
  if (transient) {
    switch (c) {
      case MemoryCategory::kGradients: return stage == 3 ? Tr("layer gradient") : Tr("gradient bucket");
      case MemoryCategory::kGatheredParameters: return Tr("gathered params");
      default: break;
    }
  }
  switch (c) {
    case MemoryCategory::kOther: return Tr("other");
    case MemoryCategory::kParameters: return Tr("parameters");
    case MemoryCategory::kGradients: return Tr("gradients");
    case MemoryCategory::kOptimizerStates: return Tr("optimizer states");
    case MemoryCategory::kActivations: return Tr("activations");
    case MemoryCategory::kGatheredParameters: return Tr("gathered parameters");
  }
  return MemoryCategoryName(c);
}

/// What a segment holds, in a sentence for its tooltip.
std::string CategorySentence(MemoryCategory c, bool transient, const ZeroParams& p) {
  if (transient) {
    switch (c) {
      case MemoryCategory::kGradients:
        return p.stage == 3 ? Format(Tr("A layer's full fp16 gradient, from its backward until its reduce-scatter;\n"
                                        "then only this GPU's 1/%d chunk is kept."), p.ranks)
                            : Format(Tr("A bucket's full fp16 gradient, from its layers' backward until its\n"
                                        "reduce-scatter; then only this GPU's 1/%d chunk is kept."), p.ranks);
      case MemoryCategory::kGatheredParameters:
        return Tr("A layer's full fp16 parameters, all-gathered from every GPU's shard before\n"
                  "its forward (and again before its backward), freed after its last product.");
      default: return Tr("Buffers that come and go.");
    }
  }
  switch (c) {
    case MemoryCategory::kParameters:
      return p.stage == 3 ? Format(Tr("fp16 parameters: this GPU's 1/%d shard of each layer (2\xCE\xA8/N)."), p.ranks)
                          : Tr("fp16 parameters: all of them, on every GPU (2\xCE\xA8).");
    case MemoryCategory::kGradients:
      return p.stage >= 2 ? Format(Tr("fp16 gradients: this GPU's 1/%d shard of the summed gradients (2\xCE\xA8/N)."),
                                   p.ranks)
                          : Tr("fp16 gradients: all of them, on every GPU (2\xCE\xA8).");
    case MemoryCategory::kOptimizerStates:
      return p.stage >= 1 ? Format(Tr("fp32 master copy and Adam's m and v of this GPU's 1/%d shard (12\xCE\xA8/N)."),
                                   p.ranks)
                          : Tr("fp32 master copy and Adam's m and v of every parameter (12\xCE\xA8).");
    case MemoryCategory::kActivations:
      return Format(Tr("Each layer's outputs and their gradients for this GPU's %d rows, kept for\n"
                       "backward (fp16): they grow with the batch, not with ZeRO."),
                    static_cast<int>(p.model.batch / p.ranks));
    case MemoryCategory::kOther: return Tr("This GPU's input rows and targets (fp32) and the loss of each step.");
    case MemoryCategory::kGatheredParameters: return Tr("Gathered parameters.");
  }
  return "";
}

/// A tick's bytes without trailing zeros: "50 kB", "1.5 MB".
std::string TickText(double bytes) {
  std::string text = ZeroBytesText(bytes);
  const std::size_t space = text.find(' ');
  const std::size_t dot = text.find('.');
  if (dot != std::string::npos && dot < space) {
    std::size_t end = space;
    while (end > dot + 1 && text[end - 1] == '0') --end;
    if (end == dot + 1) end = dot;
    text.erase(end, space - end);
  }
  return text;
}

/// "t = 41.2 µs: live memory ..." or what the peak view shows.
std::string HeaderLine(bool live, bool at_end, TimeNs cursor_ns) {
  if (live) {
    return Format(Tr("t = %s: memory live now (hatched: buffers that come and go; outline: their peak)"),
                  FormatRunTime(cursor_ns).c_str());
  }
  if (at_end) return Tr("Done: each GPU's memory at its peak (hatched: buffers that come and go)");
  return Tr("Each GPU's memory at its peak; Step or Play to watch the hatched part come and go");
}

/// Draws a dashed horizontal line from x0 to x1 at y.
void DashedLine(ImDrawList* list, float x0, float x1, float y, Color color, float thickness, float dash_px) {
  for (float x = x0; x < x1; x += 2 * dash_px) {
    list->AddLine(ImVec2(x, y), ImVec2(std::min(x + dash_px, x1), y), color, thickness);
  }
}

/// What the chart's two lines mean, for the key line over it.
struct LineKey {
  std::string formula;    // "(4+12)Ψ/N = 66.6 kB"
  std::string k_words;    // "K = 12: fp32 master, Adam m, v"
  std::string stage0;     // "stage 0: (2+2+12)Ψ = 266 kB", or empty
};

/// The key line over the chart: the formula's dashed line and stage 0's
/// dotted one, each beside its words, as far as the width allows.
void DrawLineKey(const LineKey& key, const Theme& theme) {
  const float line_h = ImGui::GetTextLineHeight();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImDrawList* list = ImGui::GetWindowDrawList();
  const std::string formula = key.formula + ", " + key.k_words;
  const std::string formula_choices[] = {formula, key.formula};
  const std::string* first = FitText(formula_choices, 2, width - 30);
  float x = at.x;
  DashedLine(list, x, x + 22, at.y + line_h * 0.5f, theme.text, 2.0f, 4.0f);
  x += 28;
  if (first != nullptr) {
    list->AddText(ImVec2(x, at.y), theme.text, first->c_str());
    x += ImGui::CalcTextSize(first->c_str()).x + 18;
  }
  if (!key.stage0.empty() && first != nullptr) {
    const float room = at.x + width - x - 28;
    if (room > ImGui::CalcTextSize(key.stage0.c_str()).x) {
      DashedLine(list, x, x + 22, at.y + line_h * 0.5f, theme.text_dim, 1.0f, 2.0f);
      list->AddText(ImVec2(x + 28, at.y), theme.text_dim, key.stage0.c_str());
    }
  }
  ImGui::Dummy(ImVec2(width, line_h));
}

/// Height the right column takes for `bar`: a header, its segments, the
/// total and a note.
float CategoryTableHeight(const ZeroMemoryBar& bar) {
  return ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(bar.segments.size() + 3) + 4;
}

/// The right column: each segment of `bar` with its bytes, then the total.
void CategoryTable(ImDrawList* list, ImVec2 origin, float width, const ZeroMemoryBar& bar, bool live,
                   const ZeroParams& p, const Theme& theme, int hovered_segment, const std::string& note) {
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  float y = origin.y;
  const std::string head = Format(live ? Tr("GPU %d now") : Tr("GPU %d at peak"), bar.rank);
  list->AddRectFilled(ImVec2(origin.x, y + 2), ImVec2(origin.x + 4, y + line_h - 2), theme.RankColor(bar.rank));
  list->AddText(ImVec2(origin.x + 8, y), theme.text, head.c_str());
  y += line_h;
  // Top of the bar first, as the stack reads.
  for (int i = static_cast<int>(bar.segments.size()) - 1; i >= 0; --i) {
    const ZeroMemorySegment& s = bar.segments[static_cast<std::size_t>(i)];
    const Color fill = theme.MemoryColor(s.category);
    const ImVec2 sw0(origin.x, y + (line_h - kSwatchPx) * 0.5f);
    const ImVec2 sw1(sw0.x + kSwatchPx, sw0.y + kSwatchPx);
    list->AddRectFilled(sw0, sw1, s.transient ? WithAlpha(fill, 0.35f) : fill);
    if (s.transient) Hatch(list, sw0, sw1, sw0.x, fill, 3.5f);
    const Color ink = i == hovered_segment ? theme.text : theme.text_dim;
    list->AddText(ImVec2(sw1.x + 5, y), ink, CategoryTitle(s.category, s.transient, p.stage));
    const std::string bytes = ZeroBytesText(s.bytes);
    const float w = ImGui::CalcTextSize(bytes.c_str()).x;
    list->AddText(ImVec2(origin.x + width - w, y), ink, bytes.c_str());
    y += line_h;
  }
  list->AddLine(ImVec2(origin.x, y + 1), ImVec2(origin.x + width, y + 1), theme.grid);
  const std::string total = ZeroBytesText(bar.total);
  list->AddText(ImVec2(origin.x + kSwatchPx + 5, y + 2), theme.text, Tr("total"));
  list->AddText(ImVec2(origin.x + width - ImGui::CalcTextSize(total.c_str()).x, y + 2), theme.text, total.c_str());
  if (!note.empty()) list->AddText(ImVec2(origin.x, y + 2 + line_h), theme.text_dim, note.c_str());
}

void SegmentTooltip(const ZeroMemoryBar& bar, const ZeroMemorySegment& s, bool live, const ZeroParams& p,
                    const ZeroMemoryFormula& formula, int k) {
  ImGui::BeginTooltip();
  ImGui::Text(Tr("GPU %d \xC2\xB7 %s: %s%s"), bar.rank, CategoryTitle(s.category, s.transient, p.stage),
              ZeroBytesText(s.bytes).c_str(), s.transient ? (live ? Tr(" live now") : Tr(" at its peak")) : "");
  ImGui::TextUnformatted(CategorySentence(s.category, s.transient, p).c_str());
  if (!s.transient) {
    double want = -1;
    if (s.category == MemoryCategory::kParameters) want = formula.parameters;
    if (s.category == MemoryCategory::kGradients) want = formula.gradients;
    if (s.category == MemoryCategory::kOptimizerStates) want = formula.optimizer_states;
    if (want >= 0) {
      ImGui::Separator();
      ImGui::TextDisabled(Tr("the formula (K = %d): %s"), k, ZeroBytesText(want).c_str());
    }
  }
  ImGui::EndTooltip();
}

}  // namespace

void DrawZeroMemoryView(ViewContext& ctx, ZeroMemoryViewState& state) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedZero* zero = PreparedDetail<PreparedZero>(session, "zero_memory");
  if (zero == nullptr) {
    ImGui::TextDisabled(Tr("Only a ZeRO / data-parallel run has a memory chart."));
    return;
  }
  const ZeroParams& p = zero->scenario.params;
  const int k = static_cast<int>(session.run_params()->Int("k"));
  const TimelineStore& store = session.store();
  if (state.run_id != session.run_id() || state.timeline_events != store.event_count()) {
    state.run_id = session.run_id();
    state.timeline_events = store.event_count();
    state.timeline.Build(*session.plan(), store);
  }

  const bool done = session.state() == SessionState::kDone;
  const TimeNs cursor_ns = ctx.clock.cursor_ns();
  const bool at_end = done && cursor_ns >= ctx.clock.run_end_ns();
  const bool live = cursor_ns > 0 && !at_end;
  // The peaks: the backend's measurement once the run is over, the
  // timeline's (the same rule) while it is still recording.
  const int ranks = state.timeline.ranks();
  std::vector<ZeroMemoryBar> peaks, bars;
  for (int r = 0; r < ranks; ++r) {
    const auto index = static_cast<std::size_t>(r);
    if (const ZeroSummary& out = SummaryDetail<ZeroSummary>(session); done && index < out.memory.size()) {
      peaks.push_back(ZeroPeakBar(r, out.memory[index]));
    } else {
      const CategoryBytes peak = state.timeline.Peak(r);
      CategoryBytes above{};
      for (std::size_t c = 0; c < above.size(); ++c) above[c] = peak[c] - state.timeline.persistent(r)[c];
      peaks.push_back(StackZeroMemory(r, state.timeline.persistent(r), above));
    }
    bars.push_back(live ? ZeroLiveBar(r, state.timeline, cursor_ns) : peaks.back());
  }
  if (bars.empty()) {
    ImGui::TextDisabled(Tr("No memory recorded yet."));
    return;
  }

  const double psi = static_cast<double>(zero->zero.parameter_count);
  const ZeroMemoryFormula formula = ZeroMemoryPerGpu(psi, p.ranks, p.stage, k);
  // A little headroom over stage 0's bars.
  const double axis = 1.06 * ZeroChartAxisBytes(psi, peaks, formula.total());

  const Bytes left_out = std::max_element(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) {
                           return a.left_out < b.left_out;
                         })->left_out;
  const std::string left_out_words =
      Format(Tr("Left out: %s a GPU of fp32 staging that only the load step, before training, uses."),
             ZeroBytesText(static_cast<double>(left_out)).c_str());
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(live ? theme.text : theme.text_dim), "%s",
                     HeaderLine(live, at_end, cursor_ns).c_str());
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(Tr("Measured: the bytes the simulator allocated for each GPU's buffers, by what they hold.\n"
                      "Persistent buffers are solid; hatched ones live only from the first op that\n"
                      "touches them to the last.%s%s"),
                      left_out > 0 ? "\n" : "", left_out > 0 ? left_out_words.c_str() : "");
  }
  LineKey key;
  key.formula = ZeroMemoryFormulaText(p.stage, k) + " = " + ZeroBytesText(formula.total());
  key.k_words = k == 12 ? Tr("K = 12: fp32 master, Adam m, v") : Tr("K = 8: Adam m, v only (seed texts)");
  const double stage0 = ZeroMemoryPerGpu(psi, p.ranks, 0, k).total();
  if (p.stage > 0) {
    key.stage0 = Format(Tr("stage 0: %s = %s"), ZeroMemoryFormulaText(0, k).c_str(), ZeroBytesText(stage0).c_str());
  }
  DrawLineKey(key, theme);

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float line_h = ImGui::GetTextLineHeight();
  // The footnote only where the column's table leaves room for it (else
  // the header's tooltip says it).
  float tallest_table = 0;
  for (const ZeroMemoryBar& bar : bars) tallest_table = std::max(tallest_table, CategoryTableHeight(bar));
  const float foot_line = ImGui::GetTextLineHeightWithSpacing();
  const float foot_h = left_out > 0 && avail.y - foot_line >= tallest_table ? foot_line : 0.0f;
  const float table_w = std::clamp(avail.x * 0.34f, 150.0f, 230.0f);
  const std::vector<double> ticks = ZeroChartTicks(axis, std::max(2, static_cast<int>((avail.y - foot_h) / (3 * line_h))));
  float tick_w = 0;
  for (double t : ticks) tick_w = std::max(tick_w, ImGui::CalcTextSize(TickText(t).c_str()).x);
  const Rect plot{{origin.x + tick_w + kTickLabelGapPx + 4, origin.y + line_h + 4},
                  {origin.x + avail.x - table_w - 16, origin.y + avail.y - foot_h - line_h - 8}};
  if (plot.width() < kMinPlotPx || plot.height() < kMinPlotPx * 0.5f) {
    ImGui::TextDisabled(Tr("Too small to draw: make the window larger."));
    return;
  }
  ImGui::InvisibleButton("##zero_memory_canvas", ImVec2(avail.x, avail.y - foot_h));
  const bool hovered_canvas = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ZeroChartLayout layout = LayoutZeroMemoryChart(bars, axis, plot);
  const ZeroChartLayout peak_layout = LayoutZeroMemoryChart(peaks, axis, plot);

  // Axis and grid.
  for (double t : ticks) {
    const float y = layout.YOf(t);
    list->AddLine(ImVec2(plot.min.x, y), ImVec2(plot.max.x, y), WithAlpha(theme.grid, t == 0 ? 1.0f : 0.45f));
    const std::string text = TickText(t);
    const float w = ImGui::CalcTextSize(text.c_str()).x;
    list->AddText(ImVec2(plot.min.x - kTickLabelGapPx - w, y - line_h * 0.5f), theme.text_dim, text.c_str());
  }

  // Bars: persistent solid, transient paler and hatched; live mode outlines the peak.
  int hovered_bar = -1, hovered_segment = -1;
  for (std::size_t b = 0; b < layout.shown.size(); ++b) {
    const ZeroMemoryBar& bar = bars[static_cast<std::size_t>(layout.shown[b])];
    const Rect& column = layout.bars[b];
    if (live && b < peak_layout.bars.size()) {
      const Rect& peak = peak_layout.bars[b];
      if (peak.min.y < column.min.y - 0.5f) {
        list->AddRect(ImVec2(peak.min.x - 1, peak.min.y), ImVec2(peak.max.x + 1, column.min.y + 1),
                      WithAlpha(theme.text_dim, 0.8f), 0, 0, 1.0f);
      }
    }
    for (std::size_t i = 0; i < bar.segments.size(); ++i) {
      const ZeroMemorySegment& s = bar.segments[i];
      const Rect& r = layout.segments[b][i];
      const ImVec2 min(r.min.x, r.min.y), max(r.max.x, r.max.y);
      const Color fill = theme.MemoryColor(s.category);
      if (s.transient) {
        list->AddRectFilled(min, max, WithAlpha(fill, 0.30f));
        Hatch(list, min, max, min.x, fill, 5.0f);
        list->AddRect(min, max, fill, 0, 0, 1.0f);
      } else {
        list->AddRectFilled(min, max, fill);
      }
      // A seam keeps neighbouring segments apart.
      if (max.y - min.y >= 3) list->AddLine(ImVec2(min.x, min.y), ImVec2(max.x, min.y), theme.background);
      if (hovered_canvas && mouse.x >= min.x && mouse.x < max.x && mouse.y >= min.y - 1 && mouse.y < max.y + 1) {
        hovered_bar = static_cast<int>(b);
        hovered_segment = static_cast<int>(i);
      }
    }
    if (hovered_canvas && hovered_bar < 0 && mouse.x >= column.min.x && mouse.x < column.max.x &&
        mouse.y >= plot.min.y && mouse.y < plot.max.y) {
      hovered_bar = static_cast<int>(b);
    }
    // The GPU under its bar, in its colour.
    const std::string name = "GPU" + std::to_string(bar.rank);
    const std::string short_name = std::to_string(bar.rank);
    const std::string* label = FitText(&name, 1, column.width() + 12) != nullptr ? &name : &short_name;
    const float cx = (column.min.x + column.max.x) * 0.5f;
    const float w = ImGui::CalcTextSize(label->c_str()).x;
    list->AddText(ImVec2(cx - w * 0.5f, plot.max.y + 4), theme.text, label->c_str());
    list->AddRectFilled(ImVec2(column.min.x, plot.max.y + 4 + line_h + 1), ImVec2(column.max.x, plot.max.y + 4 + line_h + 4),
                        theme.RankColor(bar.rank));
  }
  std::string hidden_words;
  if (layout.hidden > 0 && layout.bars.size() >= 2) {
    // The ranks between the last two bars hold the same, within a chunk's
    // rounding: a dotted seam marks where they would stand.
    const Rect& a = layout.bars[layout.bars.size() - 2];
    const Rect& b = layout.bars.back();
    const float x = (a.max.x + b.min.x) * 0.5f;
    for (float y = plot.min.y; y < plot.max.y; y += 6) list->AddLine(ImVec2(x, y), ImVec2(x, y + 3), theme.text_dim);
    const int first = layout.shown[layout.shown.size() - 2] + 1;
    hidden_words = Format(Tr("GPUs %d-%d not drawn: alike"), first, first + layout.hidden - 1);
  }

  // The formula's line, and stage 0's for comparison.
  const float formula_y = layout.YOf(formula.total());
  DashedLine(list, plot.min.x, plot.max.x, formula_y, theme.text, 2.0f, 7.0f);
  if (p.stage > 0) {
    const float y = layout.YOf(stage0);
    DashedLine(list, plot.min.x, plot.max.x, y, theme.text_dim, 1.0f, 2.0f);
    // Sharded stages stand well below it: room for its words over the bars.
    const std::string words[] = {Format(Tr("plain data parallel (%s)"), key.stage0.c_str()), key.stage0, Tr("stage 0")};
    const std::string* fits = FitText(words, 3, plot.width() - 8);
    if (fits != nullptr && y - line_h - 1 >= plot.min.y - line_h) {
      list->AddText(ImVec2(plot.min.x + 4, y - line_h - 1), theme.text_dim, fits->c_str());
    }
  }
  // The right column lists the hovered GPU, else GPU 0.
  const std::size_t listed = hovered_bar >= 0 ? static_cast<std::size_t>(layout.shown[static_cast<std::size_t>(hovered_bar)]) : 0;
  CategoryTable(list, ImVec2(origin.x + avail.x - table_w, origin.y), table_w, bars[listed], live, p, theme,
                hovered_bar >= 0 ? hovered_segment : -1, hidden_words);

  if (foot_h > 0) {
    const std::string bytes = ZeroBytesText(static_cast<double>(left_out));
    const std::string words[] = {left_out_words,
                                 Format(Tr("Left out: %s a GPU of fp32 staging for loading the weights."), bytes.c_str()),
                                 Format(Tr("Left out: %s of staging (load step)."), bytes.c_str())};
    if (const std::string* fits = FitText(words, 3, ImGui::GetContentRegionAvail().x)) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim), "%s", fits->c_str());
    }
  }
  if (hovered_bar >= 0 && hovered_segment >= 0) {
    const ZeroMemoryBar& bar = bars[listed];
    const Rect& r = layout.segments[static_cast<std::size_t>(hovered_bar)][static_cast<std::size_t>(hovered_segment)];
    list->AddRect(ImVec2(r.min.x - 1, r.min.y - 1), ImVec2(r.max.x + 1, r.max.y + 1), theme.cursor, 0, 0, 2.0f);
    SegmentTooltip(bar, bar.segments[static_cast<std::size_t>(hovered_segment)], live, p, formula, k);
  }
}

}  // namespace shardlab::gui
