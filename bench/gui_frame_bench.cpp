// How long the app's CPU side takes to build one frame of the topology and
// Gantt views with a run of more than 100,000 events: NewFrame, the two
// views, Render (ImGui's vertex generation), no GL. The goal is a
// median under 8 ms on the reference machine.
//
//   Session (simulator, timing only): ring all-reduce, 160 ranks on
//   20x-dgx-a100-ib  ->  4·160·159 = 101,760 ops, one event each
//   headless ImGui 1600x1000 ── per frame ──► NewFrame
//                                             DrawTopologyView (no LinkRenderer: lines)
//                                             DrawGanttView
//                                             Render
//
// Each case runs a fixed number of frames and reports, besides Google
// Benchmark's mean, the median and the 99th percentile of the frame times
// (median_ms, p99_ms), which is what a user feels as smoothness.
//
//   BM_FrameBuild/vtx_offset:1/playing:0   the whole run shown (cursor at its end),
//                                          as with the GL3 backend (large meshes allowed)
//   BM_FrameBuild/vtx_offset:0/playing:0   the same without vertex offsets: the Gantt
//                                          splits its rows over child windows
//   BM_FrameBuild/vtx_offset:1/playing:1   replaying: the cursor sweeps the run in
//                                          5 s of frames, chunks in flight animate
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <imgui.h>

#include "app/gui/app/theme.h"
#include "app/gui/views/views.h"

namespace shardlab::gui {
namespace {

constexpr int kFramesPerCase = 300;
constexpr float kDisplayWidthPx = 1600;
constexpr float kDisplayHeightPx = 1000;
constexpr float kTopologyHeightPx = 520;
constexpr double kFrameSeconds = 1.0 / 60.0;

/// One finished run, shared by every case (simulating it takes seconds).
struct RecordedRun {
  Session session;
  std::vector<TimeNs> step_end_ns;
};

RecordedRun& Run() {
  static RecordedRun* run = [] {
    auto* r = new RecordedRun;
    ScenarioSettings settings;
    settings.scenario = "allreduce";
    settings.SetParam("algo", "ring");
    settings.SetParam("ranks", "160");
    settings.SetParam("size", "64M");
    settings.topology = "20x-dgx-a100-ib";
    settings.SetParam("timing_only", "true");
    if (!r->session.Start(settings)) throw std::runtime_error("gui_frame_bench: " + r->session.error());
    while (r->session.state() == SessionState::kRunning) {
      r->session.Poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (r->session.state() != SessionState::kDone) {
      throw std::runtime_error("gui_frame_bench: run failed: " + r->session.error());
    }
    const TimelineStore& store = r->session.store();
    for (int s = 0; s < store.steps_seen(); ++s) r->step_end_ns.push_back(store.StepEndNs(s));
    return r;
  }();
  return *run;
}

/// A headless ImGui context: a font atlas built but never uploaded.
class HeadlessImGui {
 public:
  explicit HeadlessImGui(bool vtx_offset) {
    context_ = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(kDisplayWidthPx, kDisplayHeightPx);
    io.DeltaTime = static_cast<float>(kFrameSeconds);
    unsigned char* pixels = nullptr;
    int width = 0;
    int height = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
    io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(1)));
    // What ImGui_ImplOpenGL3_Init sets on a GL >= 3.2 context.
    if (vtx_offset) io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
    // The mouse rests on the Gantt, so hover tests and a tooltip are paid for.
    io.MousePos = ImVec2(kDisplayWidthPx * 0.5f, kTopologyHeightPx + 200);
  }
  ~HeadlessImGui() { ImGui::DestroyContext(context_); }
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;

 private:
  ImGuiContext* context_ = nullptr;
};

/// Builds one frame with both views; returns the vertex count.
int BuildFrame(ViewContext& ctx, TopologyViewState& topology_state, GanttViewState& gantt_state) {
  ImGui::NewFrame();
  constexpr ImGuiWindowFlags kPanel = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                      ImGuiWindowFlags_NoCollapse;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(kDisplayWidthPx, kTopologyHeightPx));
  ImGui::Begin("Topology", nullptr, kPanel);
  DrawTopologyView(ctx, topology_state);
  ImGui::End();
  ImGui::SetNextWindowPos(ImVec2(0, kTopologyHeightPx));
  ImGui::SetNextWindowSize(ImVec2(kDisplayWidthPx, kDisplayHeightPx - kTopologyHeightPx));
  ImGui::Begin("Timeline", nullptr, kPanel);
  DrawGanttView(ctx, gantt_state);
  ImGui::End();
  ImGui::Render();
  return ImGui::GetDrawData()->TotalVtxCount;
}

double Percentile(std::vector<double> sorted_ms, double fraction) {
  std::sort(sorted_ms.begin(), sorted_ms.end());
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(sorted_ms.size() - 1) + 0.5);
  return sorted_ms[std::min(index, sorted_ms.size() - 1)];
}

void BM_FrameBuild(benchmark::State& state) {
  const bool vtx_offset = state.range(0) != 0;
  const bool playing = state.range(1) != 0;
  RecordedRun& run = Run();
  const TimelineStore& store = run.session.store();
  HeadlessImGui imgui(vtx_offset);

  ReplayClock clock;
  clock.SetSteps(run.step_end_ns, store.end_ns());
  if (playing) {
    clock.set_speed(ReplayClock::SpeedForDuration(store.end_ns(), kFramesPerCase * kFrameSeconds));
    clock.Play();
  } else {
    clock.SeekNs(store.end_ns());
  }
  ViewContext ctx{run.session, clock, GetTheme(ThemeKind::kDark)};
  TopologyViewState topology_state;
  GanttViewState gantt_state;
  // Two warm-up frames: the first lays out the topology and fits the Gantt.
  BuildFrame(ctx, topology_state, gantt_state);
  BuildFrame(ctx, topology_state, gantt_state);

  std::vector<double> frame_ms;
  frame_ms.reserve(kFramesPerCase);
  int vertices = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    vertices = BuildFrame(ctx, topology_state, gantt_state);
    const auto end = std::chrono::steady_clock::now();
    frame_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    ctx.time_s += kFrameSeconds;
    clock.Advance(kFrameSeconds);
  }
  state.counters["median_ms"] = Percentile(frame_ms, 0.5);
  state.counters["p99_ms"] = Percentile(frame_ms, 0.99);
  state.counters["events"] = static_cast<double>(store.event_count());
  state.counters["rows"] = static_cast<double>(store.rows().size());
  state.counters["vertices"] = vertices;
}

BENCHMARK(BM_FrameBuild)
    ->ArgNames({"vtx_offset", "playing"})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Args({1, 1})
    ->Iterations(kFramesPerCase)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace shardlab::gui

BENCHMARK_MAIN();
