// The transport bar, one line:
//
//   [▶ Play] [Step →] [← Back] [Reset]  [10 µs of run = 0.5 s]  after step 3 of 14 · reduce-scatter   86 µs / 401 µs
//
// Real runs take microseconds, so the replay shows recorded events in slow
// motion: the speed slider is logarithmic over "the whole run in 0.5 s" to
// "the whole run in 10 minutes", and labelled in words.
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/app/test_log.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/run_key.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

constexpr double kFastestWholeRunS = 0.5;
constexpr double kSlowestWholeRunS = 600.0;

/// Where the replay cursor is, in words: `text` for a wide bar ("after
/// step 3 of 14 · reduce-scatter", "3 of 14 steps done · all-gather"),
/// `brief` and `phase` for a narrow one ("after 3/14", "3/14 done").
struct Where {
  std::string text;
  std::string brief;
  std::string phase;  // of the step just shown or in progress; may be empty
};

Where Locate(const Session& session, const ReplayClock& clock, const std::vector<Phase>& phases) {
  const int n = clock.num_steps();
  const int shown = clock.steps_shown();
  const std::string over_n = "/" + std::to_string(n);
  const auto phase_of = [&](int step) -> std::string {
    if (step < 0 || step >= static_cast<int>(phases.size())) return "";
    const Phase p = phases[static_cast<std::size_t>(step)];
    return p == Phase::kNone ? "" : PhaseName(p);
  };
  Where w;
  if (n == 0) {
    w.text = w.brief = Tr("no steps");
  } else if (clock.at_end() && shown >= n) {
    w.text = Format(Tr("all %d steps done"), n);
    w.brief = Format(Tr("done %d/%d"), n, n);
  } else if (clock.cursor_ns() <= 0) {
    w.text = Format(Tr("before step 1 of %d"), n);
    w.brief = "0" + over_n;
    w.phase = phase_of(0);
  } else if (shown > 0 && session.store().StepEndNs(shown - 1) == clock.cursor_ns()) {
    w.text = Format(Tr("after step %d of %d"), shown, n);
    w.brief = Format(Tr("after %d/%d"), shown, n);
    w.phase = phase_of(shown - 1);
  } else {
    // Counted as the other views count: steps fully shown (the next one is moving).
    w.text = Format(Tr("%d of %d steps done"), shown, n);
    w.brief = Format(Tr("%d/%d done"), shown, n);
    w.phase = phase_of(shown);
  }
  if (!w.phase.empty()) w.text += " \xC2\xB7 " + w.phase;
  return w;
}

void SpeedSlider(ReplayClock& clock, float width_px) {
  const TimeNs run_ns = clock.run_end_ns();
  ImGui::SetNextItemWidth(width_px);
  if (!(run_ns > 0)) {
    ImGui::BeginDisabled();
    float none = 0;
    ImGui::SliderFloat("##speed", &none, 0, 1, Tr("speed"));
    ImGui::EndDisabled();
    return;
  }
  const auto slowest = static_cast<float>(run_ns / kSlowestWholeRunS);
  const auto fastest = static_cast<float>(run_ns / kFastestWholeRunS);
  float speed = std::clamp(static_cast<float>(clock.speed()), slowest, fastest);
  // The format is the words themselves (a literal '%' would need escaping);
  // "of run" goes when the slider is too narrow for it.
  std::string words = SpeedInWords(clock.speed());
  if (ImGui::CalcTextSize(words.c_str()).x > width_px - 2.0f * ImGui::GetStyle().FramePadding.x) {
    words = SpeedInWords(clock.speed(), true);
  }
  if (ImGui::SliderFloat("##speed", &speed, slowest, fastest, words.c_str(),
                         ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_NoRoundToFormat)) {
    clock.set_speed(speed);
  }
  if (ImGui::IsItemHovered()) {
    char tip[400];
    std::snprintf(tip, sizeof tip,
                  Tr("Replay speed: %s.\nThe whole run (%s) plays in %.1f s. Drag right to play faster.\n"
                     "Only the replay is slowed down, never the run."),
                  SpeedInWords(clock.speed()).c_str(), FormatRunTime(run_ns).c_str(),
                  run_ns / clock.speed());
    ImGui::SetTooltip("%s", tip);
  }
}

/// The first of `candidates` (longest first) that fits `width_px`, else the last.
const std::string& Fitting(const std::vector<std::string>& candidates, float width_px) {
  for (const std::string& c : candidates) {
    if (ImGui::CalcTextSize(c.c_str()).x <= width_px) return c;
  }
  return candidates.back();
}

}  // namespace

void DrawTransportBar(ViewContext& ctx, TransportBarState& state) {
  ReplayClock& clock = ctx.clock;
  Session& session = ctx.session;
  const PreparedCollective* prepared = CollectiveOf(session.prepared());
  if (const Plan* plan = session.plan()) {
    if (session.run_id() != state.run_id ||
        state.step_phase.size() != static_cast<std::size_t>(plan->num_steps)) {
      state.run_id = session.run_id();
      state.step_phase = StepPhases(*plan);
    }
  } else {
    state.step_phase.clear();
  }

  const bool have_run = clock.run_end_ns() > 0;
  ImGui::BeginDisabled(!have_run);
  // Fixed width and ID: the label changes, the layout must not jump.
  const float play_w = std::max(ImGui::CalcTextSize(Tr("Pause")).x, ImGui::CalcTextSize(Tr("Play")).x) +
                       ImGui::GetFontSize() * 1.6f;
  const std::string play_label = clock.playing() ? std::string(Tr("Pause")) + "###play"
                                                 : std::string(Tr("Play")) + " \xE2\x96\xB6###play";
  if (ImGui::Button(play_label.c_str(), ImVec2(play_w, 0))) {
    clock.playing() ? clock.Pause() : clock.Play();
  }
  test_log::MarkItem("play");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(Tr("Play or pause the replay (Space)"));
  ImGui::SameLine();
  if (ImGui::Button(Tr("Step \xE2\x86\x92"))) clock.Step();
  test_log::MarkItem("step");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(Tr("Show one more logical step of the algorithm (Right arrow)"));
  ImGui::SameLine();
  if (ImGui::Button(Tr("\xE2\x86\x90 Back"))) clock.StepBack();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(Tr("Back to the end of the previous step (Left arrow)"));
  ImGui::SameLine();
  if (ImGui::Button(Tr("Reset"))) clock.Reset();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(Tr("Back to the start, before any data moved (R)"));
  ImGui::EndDisabled();

  ImGui::SameLine();
  const float font = ImGui::GetFontSize();
  SpeedSlider(clock, std::clamp(ImGui::GetContentRegionAvail().x * 0.28f, font * 7.0f, font * 11.0f));

  ImGui::SameLine();
  ImGui::AlignTextToFramePadding();
  if (session.state() == SessionState::kRunning) {
    // Recording: progress of the run itself (the replay can already play).
    const int total = std::max(session.num_steps(), 1);
    char overlay[64];
    std::snprintf(overlay, sizeof overlay, Tr("recording step %d of %d"), session.steps_done(),
                  session.num_steps());
    ImGui::ProgressBar(static_cast<float>(session.steps_done()) / static_cast<float>(total),
                       ImVec2(ImGui::GetFontSize() * 12.0f, 0), overlay);
    ImGui::SameLine();
  }
  if (!have_run) {
    ImGui::TextDisabled(session.state() == SessionState::kFailed ? Tr("no run (see the scenario panel)")
                                                                  : Tr("waiting for the run..."));
    return;
  }
  // Longest first; the bar keeps what fits its width (1280 px windows are tight).
  // With a second run laid over the first, the replay runs to whichever ends
  // later, and the end says it is both runs' (not the shown run's length).
  const bool both_runs = session.replay_end_ns() > session.store().end_ns();
  const std::string when = FormatRunTime(clock.cursor_ns()) + " / " + FormatRunTime(clock.run_end_ns()) +
                           (both_runs ? Tr(" (both runs)") : "");
  const float room = ImGui::GetContentRegionAvail().x;
  if (clock.cursor_ns() <= 0 && !clock.playing()) {
    // The first thing a newcomer needs: what to press.
    const bool ring = prepared != nullptr && prepared->scenario.algo == CollectiveAlgo::kRing;
    const char* what = ring                                     ? Tr("the ring")
                       : RunHasPanel(session, "pipeline_metrics") ? Tr("the schedule")
                       : RunHasPanel(session, "zero_metrics")     ? Tr("the training")
                                                                  : Tr("the algorithm");
    const std::vector<std::string> hints = {
        Format(Tr("Press Step \xE2\x86\x92 to watch %s step by step, or Play   %s"), what, when.c_str()),
        Format(Tr("Press Step \xE2\x86\x92 to watch %s step by step   %s"), what, when.c_str()),
        Format(Tr("Press Step \xE2\x86\x92 (Right arrow) to watch %s"), what),
        Format(Tr("Press Step \xE2\x86\x92 to watch %s"), what),
        Tr("Press Step \xE2\x86\x92"),
    };
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ctx.theme.PhaseColor(Phase::kAllGather)), "%s",
                       Fitting(hints, room).c_str());
    return;
  }
  const Where where = Locate(session, clock, state.step_phase);
  const std::string dot = " \xC2\xB7 ";
  const std::vector<std::string> infos = {
      where.text + "   " + when,
      where.brief + (where.phase.empty() ? "" : dot + where.phase) + dot + when,
      where.brief + dot + when,
      when,
  };
  ImGui::TextUnformatted(Fitting(infos, room).c_str());
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(both_runs ? Tr("%s\nreplay cursor %s of the two runs' %s: the later one ends there (run "
                                     "time, not wall time)")
                                : Tr("%s\nreplay cursor %s of the run's %s (run time, not wall time)"),
                      where.text.c_str(), FormatRunTime(clock.cursor_ns()).c_str(),
                      FormatRunTime(clock.run_end_ns()).c_str());
  }
}

}  // namespace shardlab::gui
