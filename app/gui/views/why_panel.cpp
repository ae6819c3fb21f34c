// "Why is it slow?": the critical path's summary in the metrics panel and
// the details panel of the selection (run_insight.h prepares both).
//
//   Critical path  [compute|communication|link wait|idle]   [x] show in timeline
//   compute        1.20 ms  40%
//   ...
//   slowest hop GPU3 -> GPU2 (402 µs on the path)
//
//   Details (Esc clears)
//   recv of chunk C ... GPU2 -> GPU3
//   bytes 8 MiB · start 12 µs · duration 40 µs · 210 GB/s
//   t = α + n/β = 700 ns + 8 MiB / 240 GB/s = 35.7 µs   measured / formula 1.12
//   route: NVLink2 GPU2 <-> GPU3: 210 GB/s (88%) at its midpoint
//   waited for: > op 811 recv GPU2 <- GPU1 (RS·B)  ends 11.9 µs   (click: follow)
#include <algorithm>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/gui/i18n/language.h"
#include "app/gui/views/draw_util.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"

namespace shardlab::gui {
namespace {

std::string Percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", 100.0 * share);
  return text;
}

std::string GbpsText(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, gbps >= 100 ? "%.0f GB/s" : gbps >= 1 ? "%.1f GB/s" : "%.3f GB/s", gbps);
  return text;
}

/// The four parts' colours: compute and communication as the Gantt's
/// phases, link wait as a loaded link, idle as a bubble.
Color PartColor(const Theme& theme, int part) {
  switch (part) {
    case 0: return theme.PhaseColor(Phase::kForward);
    case 1: return theme.PhaseColor(Phase::kReduceScatter);
    case 2: return theme.link_busy;
    default: return WithAlpha(theme.bubble, 0.55f);
  }
}

void DrawOpDetails(ViewContext& ctx, RunInsight& insight) {
  const Theme& theme = ctx.theme;
  const OpDetails& d = insight.details();
  if (d.op == kNoOp) {
    ImGui::TextDisabled(Tr("op %d: no event recorded for it yet"), insight.selection().op);
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.selected), Tr("op %d  %s"), d.op, d.where.c_str());
  ImGui::TextUnformatted(d.title.c_str());
  if (insight.critical() != nullptr && insight.critical()->OnPath(d.op)) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.path), "%s", Tr("on the critical path"));
  }
  if (ImGui::BeginTable("##op_details", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 5.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    MetricsRow(Tr("bytes"), FormatBytes(d.bytes), "");
    MetricsRow(Tr("start"), FormatRunTime(d.start_ns), "");
    MetricsRow(Tr("duration"), FormatRunTime(d.duration_ns), "");
    if (d.achieved_gbps > 0) MetricsRow(Tr("achieved"), GbpsText(d.achieved_gbps), Tr("bytes / duration"));
    if (d.formula_ns > 0 && d.duration_ns > 0) {
      char ratio[48];
      std::snprintf(ratio, sizeof ratio, "%.2f", d.duration_ns / d.formula_ns);
      MetricsRow(Tr("vs formula"), ratio, Tr("measured / formula: above 1, it waited for a shared link or memory"));
    }
    ImGui::EndTable();
  }
  if (!d.formula.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
    ImGui::TextUnformatted(d.formula.c_str());
    ImGui::PopStyleColor();
  }
  if (!d.route.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted(Tr("route (load at the op's midpoint):"));
    const Topology* topology = ctx.session.topology();
    for (const LitLink& l : d.route) {
      if (topology == nullptr) break;
      const Link& link = topology->links[static_cast<std::size_t>(l.link)];
      const std::string& a = topology->nodes[static_cast<std::size_t>(l.forward ? link.a : link.b)].name;
      const std::string& b = topology->nodes[static_cast<std::size_t>(l.forward ? link.b : link.a)].name;
      ImGui::Text(Tr("  %s -> %s (%s): %s of %s, %s"), a.c_str(), b.c_str(), LinkKindName(link.kind),
                  GbpsText(l.load_gbps).c_str(), GbpsText(link.gbps).c_str(), Percent(l.utilization).c_str());
    }
  }
  if (!d.waited_for.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted(Tr("waited for (click to follow):"));
    OpId follow = kNoOp;
    if (ImGui::BeginTable("##waited", 2, ImGuiTableFlags_SizingFixedFit)) {
      ImGui::TableSetupColumn("op", ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableSetupColumn("ends", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize(Format(Tr("ends %s"), "999.99 ms").c_str()).x);
      for (const WaitedFor& w : d.waited_for) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        char line[256];
        std::snprintf(line, sizeof line, "%s%s##wait%d", w.last ? "> " : "  ", w.label.c_str(), w.op);
        if (w.last) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.path));
        if (ImGui::Selectable(line, false, ImGuiSelectableFlags_SpanAllColumns)) follow = w.op;
        if (w.last) ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) {
          ImGui::SetTooltip("%s%s", w.last ? Tr("ended last: this is what the op waited for\n") : "",
                            w.dependency ? Tr("a dependency in the plan")
                                         : Tr("the op before it on its lane (a stream runs in order)"));
        }
        ImGui::TableNextColumn();
        ImGui::TextDisabled(Tr("ends %s"), FormatRunTime(w.end_ns).c_str());
      }
      ImGui::EndTable();
    }
    if (follow != kNoOp) insight.SelectOp(follow);
  } else {
    ImGui::TextDisabled("%s", Tr("waited for nothing: it starts the run"));
  }
  ImGui::PopTextWrapPos();
}

void DrawLinkDetails(ViewContext& ctx, RunInsight& insight) {
  const Theme& theme = ctx.theme;
  const Topology* topology = ctx.session.topology();
  const int link = insight.selection().link;
  if (topology == nullptr) return;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.selected), "%s", LinkWords(*topology, link).c_str());
  ImGui::PopTextWrapPos();
  if (insight.usage() == nullptr) {
    ImGui::TextDisabled("%s", Tr("the run is still recording"));
    return;
  }
  const std::vector<LinkCrossing> crossings = insight.usage()->CrossingsOf(link);
  Bytes total = 0;
  for (const LinkCrossing& c : crossings) total += c.bytes;
  ImGui::Text(Tr("%zu transfers crossed it, %s in all; busiest first (click: select)"), crossings.size(),
              FormatBytes(total).c_str());
  OpId pick = kNoOp;
  if (ImGui::BeginTable("##crossings", 5,
                        ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg,
                        ImVec2(0, 0))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn(Tr("op"));
    ImGui::TableSetupColumn(Tr("from -> to"));
    ImGui::TableSetupColumn(Tr("bytes"));
    ImGui::TableSetupColumn(Tr("start"));
    ImGui::TableSetupColumn(Tr("duration"));
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(crossings.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const LinkCrossing& c = crossings[static_cast<std::size_t>(i)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        char id[32];
        std::snprintf(id, sizeof id, "%d##x%d", c.op, i);
        if (ImGui::Selectable(id, false, ImGuiSelectableFlags_SpanAllColumns)) pick = c.op;
        ImGui::TableNextColumn();
        ImGui::Text("GPU%d -> GPU%d", c.from_rank, c.to_rank);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(FormatBytes(c.bytes).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(FormatRunTime(c.start_ns).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(FormatRunTime(c.end_ns - c.start_ns).c_str());
      }
    }
    ImGui::EndTable();
  }
  if (pick != kNoOp) insight.SelectOp(pick);
}

}  // namespace

void DrawDetailsPanel(ViewContext& ctx) {
  if (ctx.insight == nullptr) return;
  RunInsight& insight = *ctx.insight;
  if (ImGui::SmallButton(Tr("Clear"))) {
    insight.Clear();
    return;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%s", Tr("Esc clears"));
  if (insight.selection().op != kNoOp) {
    DrawOpDetails(ctx, insight);
  } else if (insight.selection().link >= 0) {
    DrawLinkDetails(ctx, insight);
  }
}

void DrawCriticalPathSummary(ViewContext& ctx) {
  if (ctx.insight == nullptr) return;
  RunInsight& insight = *ctx.insight;
  const CriticalPathView* view = insight.critical();
  const Theme& theme = ctx.theme;
  ImGui::Separator();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.path), "%s", Tr("Critical path"));
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s", Tr("The chain of ops that sets the run's end: from the op that ends last, back through\n"
                            "what each one waited for (a dependency, or the op before it on its lane).\n"
                            "Shortening anything off this chain does not end the run sooner."));
  }
  if (view == nullptr) {
    ImGui::TextDisabled("%s", ctx.session.state() == SessionState::kRunning ? Tr("once the run is recorded")
                                                                             : Tr("no events to follow"));
    return;
  }
  ImGui::SameLine();
  ImGui::Checkbox(Tr("show in timeline"), &insight.show_critical_path);

  // The four parts as one bar.
  const float width = std::max(40.0f, ImGui::GetContentRegionAvail().x);
  const float height = ImGui::GetTextLineHeight() * 0.9f;
  const ImVec2 min = ImGui::GetCursorScreenPos();
  ImDrawList* list = ImGui::GetWindowDrawList();
  float x = min.x;
  for (std::size_t i = 0; i < view->parts.size(); ++i) {
    const float w = static_cast<float>(view->parts[i].share) * width;
    if (w <= 0) continue;
    list->AddRectFilled(ImVec2(x, min.y), ImVec2(std::min(x + w, min.x + width), min.y + height),
                        PartColor(theme, static_cast<int>(i)));
    x += w;
  }
  list->AddRect(min, ImVec2(min.x + width, min.y + height), theme.grid);
  ImGui::Dummy(ImVec2(width, height + 2));

  const char* const names[] = {Tr("compute"), Tr("communication"), Tr("link wait"), Tr("idle")};
  const char* const help[] = {
      Tr("compute, reduce and copy ops on the path"),
      Tr("transfers at their route's speed (latency + bytes / slowest link), and library calls"),
      Tr("what transfers took beyond their route's speed: they shared a link (modelled links only)"),
      Tr("gaps on the path where nothing on it ran: a pipeline's bubble, a host's launch")};
  float name_px = 0;
  for (const char* name : names) name_px = std::max(name_px, ImGui::CalcTextSize(name).x);
  if (ImGui::BeginTable("##critical", 3, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("part", ImGuiTableColumnFlags_WidthFixed,
                            ImGui::GetTextLineHeight() + name_px + 4.0f);
    ImGui::TableSetupColumn("time", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 5.0f);
    ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_WidthStretch);
    for (std::size_t i = 0; i < view->parts.size(); ++i) {
      const PathPart& part = view->parts[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const ImVec2 at = ImGui::GetCursorScreenPos();
      const float h = ImGui::GetTextLineHeight();
      ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(at.x, at.y + 2), ImVec2(at.x + h - 4, at.y + h - 2),
                                                PartColor(theme, static_cast<int>(i)));
      ImGui::Dummy(ImVec2(h - 2, h));
      ImGui::SameLine();
      ImGui::TextUnformatted(i < 4 ? names[i] : part.name);
      if (i < 4 && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", help[i]);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatRunTime(part.ns).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(Percent(part.share).c_str());
    }
    ImGui::EndTable();
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::Text(Tr("%zu ops long; %s"), view->path.steps.size(), view->bound.c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace shardlab::gui
