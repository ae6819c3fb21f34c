#include "app/gui/model/soak_driver.h"

#include <bit>
#include <chrono>
#include <iterator>
#include <thread>

#include "app/gui/model/scenario_fields.h"
#include "engine/core/error.h"

namespace shardlab::gui {
namespace {

constexpr double kFrameSeconds = 1.0 / 60.0;
constexpr double kGanttWidthPx = 1200.0;

/// Small collectives, so a change takes milliseconds even on a sanitizer
/// build (some share a run shape to exercise re-starts), then every other
/// scenario the app runs a plan of at its spec's defaults.
std::vector<ScenarioSettings> SoakScenarios() {
  std::vector<ScenarioSettings> out;
  auto collective = [&](const char* kind, const char* algo, int ranks, const char* size) {
    ScenarioSettings s;
    s.scenario = kind;
    s.SetParam("algo", algo);
    s.SetParam("ranks", std::to_string(ranks));
    s.SetParam("size", size);
    out.push_back(s);
  };
  collective("allreduce", "ring", 4, "1K");
  collective("allreduce", "ring", 8, "64K");
  collective("allreduce", "tree", 8, "16K");
  collective("allreduce", "tree", 2, "4K");
  collective("reducescatter", "ring", 4, "8K");
  collective("allgather", "ring", 6, "8K");
  for (const ScenarioChoice& c : ScenarioChoices()) {
    const ScenarioSpec* spec = FindScenario(c.name);
    if (spec != nullptr && spec->prepare != nullptr && spec->name != kCollectiveSpec) out.push_back(DefaultSettings(c.name));
  }
  return out;
}

/// Settings the scenario panel must refuse with a message.
std::vector<ScenarioSettings> BadScenarios() {
  std::vector<ScenarioSettings> out(4);
  out[0].SetParam("ranks", "-1");  // (0 is the spec's "all": every GPU)
  out[1].SetParam("ranks", "64");  // dgx-a100 has 8 GPUs
  out[2].scenario = "allreduse";
  out[3].SetParam("size", "lots");
  return out;
}

}  // namespace

const char* SoakCommandName(SoakCommand command) {
  switch (command) {
    case SoakCommand::kStep: return "step";
    case SoakCommand::kStepBack: return "step-back";
    case SoakCommand::kPlay: return "play";
    case SoakCommand::kPause: return "pause";
    case SoakCommand::kReset: return "reset";
    case SoakCommand::kFrame: return "frame";
    case SoakCommand::kChangeScenario: return "change-scenario";
    case SoakCommand::kBadScenario: return "bad-scenario";
    case SoakCommand::kZoom: return "zoom";
    case SoakCommand::kFit: return "fit";
  }
  return "?";
}

SoakDriver::SoakDriver(std::uint64_t seed) : rng_(seed) {
  // The seed itself is not hashed: two seeds differ only by what they did.
  StartRun(SoakScenarios()[0]);
}

std::uint64_t SoakDriver::Next() {
  // Frames are what a running app does most; scenario changes are rare.
  static constexpr SoakCommand kWeighted[] = {
      SoakCommand::kStep,  SoakCommand::kStep,           SoakCommand::kStepBack,
      SoakCommand::kPlay,  SoakCommand::kPause,          SoakCommand::kReset,
      SoakCommand::kFrame, SoakCommand::kFrame,          SoakCommand::kFrame,
      SoakCommand::kFrame, SoakCommand::kZoom,           SoakCommand::kZoom,
      SoakCommand::kFit,   SoakCommand::kChangeScenario, SoakCommand::kBadScenario,
  };
  const SoakCommand command = kWeighted[rng_() % std::size(kWeighted)];
  ++counts_.commands;
  ++counts_.by_command[static_cast<int>(command)];
  Mix(static_cast<std::uint64_t>(command));
  Apply(command);
  MixState();
  return hash_;
}

void SoakDriver::Apply(SoakCommand command) {
  switch (command) {
    case SoakCommand::kStep: clock_.Step(); break;
    case SoakCommand::kStepBack: clock_.StepBack(); break;
    case SoakCommand::kPlay: clock_.Play(); break;
    case SoakCommand::kPause: clock_.Pause(); break;
    case SoakCommand::kReset: clock_.Reset(); break;
    case SoakCommand::kFrame: clock_.Advance(kFrameSeconds); break;
    case SoakCommand::kChangeScenario: {
      static const std::vector<ScenarioSettings> kScenarios = SoakScenarios();
      StartRun(kScenarios[rng_() % kScenarios.size()]);
      break;
    }
    case SoakCommand::kBadScenario: {
      static const std::vector<ScenarioSettings> kBad = BadScenarios();
      const ScenarioSettings& bad = kBad[rng_() % kBad.size()];
      if (session_.Check(bad).empty())
        throw Error("soak: a bad scenario passed Check", ErrorKind::kRuntime);
      ++counts_.rejected;
      break;
    }
    case SoakCommand::kZoom: {
      static constexpr double kFactors[] = {0.5, 0.8, 1.25, 2.0, 4.0};
      const double factor = kFactors[rng_() % std::size(kFactors)];
      const double anchor = static_cast<double>(rng_() % static_cast<std::uint64_t>(kGanttWidthPx));
      frame_ = ZoomGantt(frame_, factor, anchor);
      break;
    }
    case SoakCommand::kFit: frame_ = FitGantt(session_.store().end_ns(), kGanttWidthPx); break;
  }
  if (clock_.cursor_ns() < 0 || clock_.cursor_ns() > clock_.run_end_ns()) {
    throw Error("soak: the replay cursor left the run", ErrorKind::kRuntime);
  }
  // Lay out every Gantt row as the view would this frame.
  frame_.cursor_ns = clock_.cursor_ns();
  for (const TimelineRow& row : session_.store().rows()) {
    const std::vector<GanttBox> boxes = PrepareGanttRow(row, frame_);
    counts_.boxes += boxes.size();
    Mix(boxes.size());
    for (const GanttBox& box : boxes) {
      if (box.x0_px < 0 || box.x1_px > frame_.width_px) {
        throw Error("soak: a Gantt box outside the view", ErrorKind::kRuntime);
      }
    }
  }
}

void SoakDriver::StartRun(const ScenarioSettings& settings) {
  if (!session_.Start(settings))
    throw Error("soak: a good scenario was refused: " + session_.error(), ErrorKind::kRuntime);
  while (session_.state() == SessionState::kRunning) {
    session_.Poll();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  session_.Poll();
  if (session_.state() != SessionState::kDone) {
    throw Error("soak: run '" + session_.Title() + "' failed: " + session_.error(),
                ErrorKind::kRuntime);
  }
  if (session_.dropped_events() != 0)
    throw Error("soak: a paced run dropped events", ErrorKind::kRuntime);
  const TimelineStore& store = session_.store();
  std::vector<TimeNs> step_end_ns;
  for (int s = 0; s < store.steps_seen(); ++s) step_end_ns.push_back(store.StepEndNs(s));
  clock_.SetSteps(std::move(step_end_ns), store.end_ns());
  clock_.Reset();
  clock_.set_speed(ReplayClock::SpeedForDuration(store.end_ns(), 2.0));
  frame_ = FitGantt(store.end_ns(), kGanttWidthPx);
  ++counts_.runs;
}

void SoakDriver::Mix(std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    hash_ ^= (value >> (8 * i)) & 0xff;
    hash_ *= 1099511628211ull;  // FNV-1a prime
  }
}

void SoakDriver::MixState() {
  const TimelineStore& store = session_.store();
  Mix(static_cast<std::uint64_t>(session_.state()));
  Mix(store.event_count());
  Mix(std::bit_cast<std::uint64_t>(static_cast<double>(store.end_ns())));
  Mix(std::bit_cast<std::uint64_t>(static_cast<double>(clock_.cursor_ns())));
  Mix(clock_.playing() ? 1 : 0);
  Mix(static_cast<std::uint64_t>(clock_.steps_shown()));
  Mix(std::bit_cast<std::uint64_t>(static_cast<double>(frame_.view_start_ns)));
  Mix(std::bit_cast<std::uint64_t>(frame_.ns_per_px));
}

}  // namespace shardlab::gui
