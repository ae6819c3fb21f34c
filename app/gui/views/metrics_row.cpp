#include "app/gui/views/metrics_row.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {

void MetricsRow(const char* name, const std::string& value, const std::string& note, ImU32 value_color) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", name);
  ImGui::TableNextColumn();
  if (value_color != 0) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(value_color), "%s", value.c_str());
  } else {
    ImGui::TextUnformatted(value.c_str());
  }
  if (note.empty()) return;
  const bool hovered = ImGui::IsItemHovered();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  ImGui::SameLine();
  if (ImGui::CalcTextSize(note.c_str()).x <= ImGui::GetContentRegionAvail().x - spacing) {
    ImGui::TextDisabled("%s", note.c_str());
  } else {
    ImGui::TextDisabled("(?)");
    if (hovered || ImGui::IsItemHovered()) ImGui::SetTooltip("%s", note.c_str());
  }
}

void DroppedEventsRow(const Session& session, const Theme& theme) {
  const std::uint64_t dropped = session.dropped_events();
  if (dropped == 0) return;
  MetricsRow(Tr("dropped"), Format(Tr("%s events"), Grouped(static_cast<std::int64_t>(dropped)).c_str()),
             Tr("the views miss them"), theme.error);
}

const char* VerdictWords(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kCorrect: return Tr("correct");
    case VerdictKind::kWrong: return Tr("WRONG");
    case VerdictKind::kNotChecked: break;
  }
  return Tr("not checked");
}

const char* ClockOf(const Session& session) {
  for (const TimelineRow& row : session.store().rows()) {
    if (row.events.empty()) continue;
    switch (row.events.front().clock) {  // in the app's language; an emulated time says so in both
      case ClockKind::kSimulated: return Tr("simulated");
      case ClockKind::kEmulated: return Tr("emulated");
      case ClockKind::kHost: return Tr("host");
      case ClockKind::kHostMpiAligned: return Tr("host (MPI, aligned)");
      default: return ClockKindName(row.events.front().clock);
    }
  }
  return "-";
}

ClockKind RunClockKind(const Session& session, ClockKind fallback) {
  for (const TimelineRow& row : session.store().rows()) {
    if (!row.events.empty()) return row.events.front().clock;
  }
  return fallback;
}

std::string Grouped(std::int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out = value < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace shardlab::gui
