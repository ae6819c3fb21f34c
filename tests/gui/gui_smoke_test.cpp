// The desktop app end to end: each test runs the real `shardlab` binary
// (SHARDLAB_APP_PATH) as a user or a slide script would, in scripted mode
// (--frames N --screenshot FILE), then reads the PNG back with stb_image
// and looks at the pixels where the panels are (ComputePanelLayout, with
// the menu bar height the app pins). Window tests need an X display
// (scripts/test.sh starts Xvfb); without DISPLAY they are skipped. The
// bad-flag tests exit before any window opens, so they always run.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "app/gui/app/fonts.h"
#include "app/gui/app/menu_bar.h"
#include "app/gui/app/theme.h"
#include "app/gui/model/panel_layout.h"
#include "app/gui/views/draw_util.h"
#include "tests/common/run_program.h"

namespace shardlab::gui {
namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 1280;
constexpr int kHeight = 800;

using AppResult = test_util::ProgramResult;
using ScratchDir = test_util::TempDir;

std::string Slurp(const fs::path& path) { return test_util::ReadWholeFile(path); }

/// Runs shardlab with `args`, stdout and stderr into files of `dir`.
AppResult RunApp(const std::vector<std::string>& args, const fs::path& dir) {
  return test_util::RunProgram(SHARDLAB_APP_PATH, args, dir);
}

bool HaveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display != nullptr && display[0] != '\0';
}

#define SKIP_WITHOUT_DISPLAY()                                                                  \
  if (!HaveDisplay())                                                                           \
  GTEST_SKIP() << "no X display (DISPLAY is unset): run under xvfb-run, or use "                \
                  "scripts/test.sh, which starts Xvfb"

/// An RGB image read back from a PNG.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> rgb;

  static Image Load(const fs::path& path) {
    Image image;
    int channels = 0;
    unsigned char* data = stbi_load(path.c_str(), &image.width, &image.height, &channels, 3);
    if (data == nullptr) return image;
    image.rgb.assign(data, data + static_cast<std::size_t>(image.width) * image.height * 3);
    stbi_image_free(data);
    return image;
  }
  const unsigned char* At(int x, int y) const {
    return &rgb[(static_cast<std::size_t>(y) * width + x) * 3];
  }
};

/// The red, green and blue bytes of a Theme colour (ImGui's ABGR packing).
struct Rgb {
  int r, g, b;
};
Rgb Channels(Color color) {
  return {static_cast<int>(color & 0xFF), static_cast<int>((color >> 8) & 0xFF),
          static_cast<int>((color >> 16) & 0xFF)};
}

/// Pixels inside `rect` within `tolerance` (per channel) of `color`.
int CountNear(const Image& image, const Rect& rect, Color color, int tolerance = 10) {
  const Rgb want = Channels(color);
  int count = 0;
  for (int y = static_cast<int>(rect.min.y); y < static_cast<int>(rect.max.y); ++y) {
    for (int x = static_cast<int>(rect.min.x); x < static_cast<int>(rect.max.x); ++x) {
      const unsigned char* p = image.At(x, y);
      if (std::abs(p[0] - want.r) <= tolerance && std::abs(p[1] - want.g) <= tolerance &&
          std::abs(p[2] - want.b) <= tolerance) {
        ++count;
      }
    }
  }
  return count;
}

std::size_t DistinctColors(const Image& image) {
  std::unordered_set<std::uint32_t> colors;
  for (std::size_t i = 0; i + 2 < image.rgb.size(); i += 3) {
    colors.insert(static_cast<std::uint32_t>(image.rgb[i]) << 16 |
                  static_cast<std::uint32_t>(image.rgb[i + 1]) << 8 | image.rgb[i + 2]);
  }
  return colors.size();
}

/// The panels of a kWidth x kHeight window at font scale 1, as the app places them.
PanelLayout Layout() {
  return ComputePanelLayout(kWidth, kHeight, MenuBarHeightPx(FontPixels(1.0f)));
}

/// The scripted screenshot of `args` plus the common flags; fails the test
/// when the app does not exit 0 or writes no PNG.
Image Screenshot(const ScratchDir& dir, std::vector<std::string> args) {
  const fs::path png = dir.path() / "shot.png";
  for (const char* extra : {"--window-width", "1280", "--window-height", "800", "--screenshot"}) args.push_back(extra);
  args.push_back(png.string());
  const AppResult result = RunApp(args, dir.path());
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::exists(png)) << "no screenshot at " << png;
  return Image::Load(png);
}

/// What every screenshot must show: the window's size, a real picture, GPU
/// tiles in the topology region and op boxes in the Gantt region.
void ExpectPanelsDrawn(const Image& image, ThemeKind kind, bool pipeline = false) {
  ASSERT_EQ(image.width, kWidth);
  ASSERT_EQ(image.height, kHeight);
  // A blank or one-colour window has a handful; text, tiles and gradients give hundreds.
  EXPECT_GT(DistinctColors(image), 200u);

  const Theme& theme = GetTheme(kind);
  const PanelLayout layout = Layout();
  // Eight GPU tiles, each far more than 100 px of tile colour.
  EXPECT_GT(CountNear(image, layout.topology, theme.tile_gpu), 8 * 100)
      << "no GPU tiles in the topology region";
  if (pipeline) {
    // Micro-batch 0's forward boxes on every stage.
    EXPECT_GT(CountNear(image, layout.gantt, theme.MicrobatchColor(Phase::kForward, 0)), 400)
        << "no forward of micro-batch 0 in the Gantt region";
  } else {
    // Op boxes of the first steps: reduce-scatter sends and receives.
    EXPECT_GT(CountNear(image, layout.gantt, theme.PhaseColor(Phase::kReduceScatter)), 2000)
        << "no reduce-scatter ops in the Gantt region";
  }
  // The menu bar is where the layout says: its band differs from the panels below.
  EXPECT_LT(layout.menu_bar.max.y, layout.scenario.max.y);
}

TEST(GuiApp, PlaysRingAllReduceOnDgxA100AndSavesTheWindow) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const Image image = Screenshot(dir, {"--scenario", "allreduce", "--algo", "ring", "--ranks", "8",
                                       "--size", "64M", "--topology", "dgx-a100", "--play",
                                       "--frames", "120"});
  ExpectPanelsDrawn(image, ThemeKind::kDark);
}

TEST(GuiApp, StepsThreeTimesOnTheDgx1CubeMesh) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const Image image = Screenshot(dir, {"--ranks", "8", "--size", "64M", "--topology", "dgx1-v100",
                                       "--step", "3", "--frames", "30"});
  ExpectPanelsDrawn(image, ThemeKind::kDark);
}

TEST(GuiApp, LightThemeIsLightAndStillShowsEveryPanel) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const Image image = Screenshot(dir, {"--theme", "light", "--step", "2", "--frames", "30"});
  ExpectPanelsDrawn(image, ThemeKind::kLight);
  // High contrast for projectors: the panels are mostly white.
  const PanelLayout layout = Layout();
  const Rect& scenario = layout.scenario;
  const int area = static_cast<int>(scenario.width() * scenario.height());
  EXPECT_GT(CountNear(image, scenario, GetTheme(ThemeKind::kLight).background, 4), area / 2);
}

TEST(GuiApp, TrainsAPipelineAndShowsEveryPanel) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const fs::path trace = dir.path() / "pipeline.json";
  const Image image = Screenshot(dir, {"--scenario", "pipeline", "--schedule", "1f1b", "--stages",
                                       "4", "--microbatches", "8", "--play", "--frames", "90",
                                       "--trace", trace.string()});
  ExpectPanelsDrawn(image, ThemeKind::kDark, /*pipeline=*/true);
  const std::string json = Slurp(trace);
  EXPECT_NE(json.find("forward mb7"), std::string::npos) << "every micro-batch's forward";
  EXPECT_NE(json.find("1F1B"), std::string::npos) << "the schedule in the trace's title";
}

TEST(GuiApp, SplitsATensorParallelMlpAndDrawsItsWeightBlocks) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const fs::path trace = dir.path() / "tp.json";
  // To the end of the run: no GPU computes, so every block shows its full colour.
  const Image image = Screenshot(dir, {"--scenario", "tp", "--layer", "mlp", "--tp", "4", "--batch", "2",
                                       "--seq", "8", "--hidden", "32", "--step", "1000", "--frames", "10",
                                       "--trace", trace.string()});
  ASSERT_EQ(image.width, kWidth);
  ASSERT_EQ(image.height, kHeight);
  EXPECT_GT(DistinctColors(image), 200u);
  const Theme& theme = GetTheme(ThemeKind::kDark);
  const PanelLayout layout = ComputePanelLayout(kWidth, kHeight, MenuBarHeightPx(FontPixels(1.0f)),
                                                kTpMetricsShare, kTpWeightsShare);
  EXPECT_GT(CountNear(image, layout.topology, theme.tile_gpu), 8 * 100) << "no GPU tiles";
  EXPECT_GT(CountNear(image, layout.gantt, theme.PhaseColor(Phase::kForward)), 200) << "no forward compute";
  EXPECT_GT(CountNear(image, layout.gantt, theme.PhaseColor(Phase::kReduceScatter)), 200) << "no all-reduce";
  // Every GPU's blocks of A and B, in that GPU's colour, in the weights panel.
  for (int r = 0; r < 4; ++r) {
    EXPECT_GT(CountNear(image, layout.weights, theme.RankColor(r), 6), 400) << "no blocks of GPU " << r;
  }
  const std::string json = Slurp(trace);
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("GPU 3"), std::string::npos) << "a process per rank";
}

/// The panels of a ZeRO run at kWidth x kHeight: the memory chart beside the Gantt.
PanelLayout ZeroLayout() {
  return ComputePanelLayout(kWidth, kHeight, MenuBarHeightPx(FontPixels(1.0f)), kZeroMetricsShare, kZeroMemoryShare);
}

TEST(GuiApp, TrainsWithZeroAndStacksEachGpusMemoryByKind) {
  SKIP_WITHOUT_DISPLAY();
  const Theme& theme = GetTheme(ThemeKind::kDark);
  const PanelLayout layout = ZeroLayout();
  // Pixels of a category's colour in the memory chart, at the end of a run of `stage`.
  auto memory_pixels = [&](const std::string& stage, MemoryCategory category) {
    ScratchDir dir;
    const Image image = Screenshot(dir, {"--scenario", "zero", "--stage", stage, "--ranks", "4", "--layers", "4",
                                         "--model-width", "64", "--batch", "32", "--steps", "2", "--step", "1000",
                                         "--frames", "10"});
    EXPECT_EQ(image.width, kWidth);
    if (image.width != kWidth) return 0;
    EXPECT_GT(DistinctColors(image), 200u);
    EXPECT_GT(CountNear(image, layout.topology, theme.tile_gpu), 8 * 100) << "no GPU tiles";
    EXPECT_GT(CountNear(image, layout.gantt, theme.PhaseColor(Phase::kReduceScatter)), 200) << "no reduce-scatters";
    for (const MemoryCategory c : {MemoryCategory::kParameters, MemoryCategory::kGradients,
                                   MemoryCategory::kActivations}) {
      EXPECT_GT(CountNear(image, layout.weights, theme.MemoryColor(c), 6), 100)
          << "stage " << stage << ": no " << MemoryCategoryName(c);
    }
    return CountNear(image, layout.weights, theme.MemoryColor(category), 6);
  };
  // The optimizer states fill most of a stage-0 bar and a quarter as much at stage 1.
  const int stage0 = memory_pixels("0", MemoryCategory::kOptimizerStates);
  const int stage1 = memory_pixels("1", MemoryCategory::kOptimizerStates);
  EXPECT_GT(stage0, 3000);
  EXPECT_LT(stage1 * 2, stage0) << "stage 1 shards the optimizer states";
}

TEST(GuiApp, WritesTheChromeTraceOfTheRun) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const fs::path trace = dir.path() / "run.json";
  const AppResult result = RunApp({"--ranks", "4", "--size", "1M", "--frames", "2", "--trace",
                                   trace.string()},
                                  dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string json = Slurp(trace);
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("GPU 3"), std::string::npos) << "a process per rank";
}

TEST(GuiApp, AFailedScreenshotExitsOneWithOneLine) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const AppResult result = RunApp({"--ranks", "2", "--size", "1K", "--frames", "2", "--screenshot",
                                   (dir.path() / "no-such-dir" / "shot.png").string()},
                                  dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.rfind("shardlab: error: ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find("shot.png"), std::string::npos) << result.err;
}

// --- Bad input: exit 2 and one line on stderr, before any window opens ---------

void ExpectUsageError(const std::vector<std::string>& args, const std::string& mentions) {
  ScratchDir dir;
  const AppResult result = RunApp(args, dir.path());
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(result.err.rfind("shardlab: error: ", 0), 0u) << result.err;
  ASSERT_FALSE(result.err.empty());
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << "more than one line: " << result.err;
  EXPECT_NE(result.err.find(mentions), std::string::npos) << result.err;
}

/// Pixels of `rect` near the compare overlay's outline colours from
/// `from_shade` to 1 (the model 1.4x .. 4x off and beyond).
int CountNearErrorShades(const Image& image, const Rect& rect, const Theme& theme, double from_shade) {
  int count = 0;
  std::vector<Rgb> shades;
  for (int k = 0; k <= 32; ++k) {
    const double shade = from_shade + (1.0 - from_shade) * k / 32.0;
    shades.push_back(Channels(ErrorShadeColor(theme, shade)));
  }
  for (int y = static_cast<int>(rect.min.y); y < static_cast<int>(rect.max.y); ++y) {
    for (int x = static_cast<int>(rect.min.x); x < static_cast<int>(rect.max.x); ++x) {
      const unsigned char* p = image.At(x, y);
      for (const Rgb& want : shades) {
        if (std::abs(p[0] - want.r) <= 6 && std::abs(p[1] - want.g) <= 6 && std::abs(p[2] - want.b) <= 6) {
          ++count;
          break;
        }
      }
    }
  }
  return count;
}

// A recorded H200 trace with the model of its machine laid over it: the
// measured bars solid, the model's as coloured outlines, both in the Gantt.
TEST(GuiApp, ComparesARecordedH200TraceWithTheModelOfItsMachine) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const std::string data = SHARDLAB_TEST_DATA_DIR;
  const std::string model = (dir.path() / "model.json").string();
  const AppResult made = test_util::RunProgram(
      SHARDLAB_CLI_PATH, {"run", "allreduce", "--ranks", "8", "--size", "64M", "--topology", "this", "--device-profile",
                          data + "/traces/h200.toml", "--timing-only", "--trace", model}, dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::vector<std::string> shown = {"--open-trace", data + "/traces/h200-ring8-64M-warm.json", "--step", "14",
                                          "--frames", "20"};
  std::vector<std::string> with = shown;
  with.insert(with.end(), {"--compare-trace", model});
  const Image compared = Screenshot(dir, with);
  const Theme& theme = GetTheme(ThemeKind::kDark);
  // The rows only: below the panel's title, toolbar, legend and ruler.
  Rect gantt = Layout().gantt;
  gantt.min.y += 5.0f * FontPixels(1.0f);
  EXPECT_GT(CountNear(compared, gantt, theme.PhaseColor(Phase::kReduceScatter)), 1000) << "no measured (solid) bars";
  EXPECT_GT(CountNear(compared, gantt, theme.PhaseColor(Phase::kAllGather)), 500) << "no measured (solid) bars";
  const int outlines = CountNearErrorShades(compared, gantt, theme, 0.3);
  EXPECT_GT(outlines, 1000) << "no model outlines";
  // Without the second run: the same solid bars, no outlines.
  const Image alone = Screenshot(dir, shown);
  EXPECT_LT(CountNearErrorShades(alone, gantt, theme, 0.3), outlines / 10);
  EXPECT_GT(CountNear(alone, gantt, theme.PhaseColor(Phase::kReduceScatter)), 1000);
  // A trace of another plan is refused with the reason.
  const AppResult refused = RunApp({"--open-trace", data + "/traces/h200-ring8-64M-warm.json", "--compare-trace",
                                    data + "/traces/h200-1f1b.json", "--frames", "2"}, dir.path());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("not runs of one plan: op 0"), std::string::npos) << refused.err;
}

TEST(GuiAppFlags, ZeroRanksIsAUsageError) {
  ExpectUsageError({"--ranks", "0", "--frames", "1"}, "--ranks");
}

TEST(GuiAppFlags, UnknownTopologyIsAUsageError) {
  ExpectUsageError({"--topology", "nope", "--frames", "1"}, "--topology");
}

TEST(GuiAppFlags, NegativeFramesIsAUsageError) {
  ExpectUsageError({"--frames", "-1"}, "--frames");
}

TEST(GuiAppFlags, UnknownFlagIsAUsageErrorWithASuggestion) {
  ExpectUsageError({"--rank", "8"}, "did you mean --ranks?");
}

TEST(GuiAppFlags, MoreRanksThanGpusIsAUsageError) {
  ExpectUsageError({"--ranks", "16", "--topology", "dgx-a100", "--frames", "1"}, "only 8 GPUs");
}

TEST(GuiAppFlags, BadThemeAndSizeAreUsageErrors) {
  ExpectUsageError({"--theme", "pink"}, "--theme");
  ExpectUsageError({"--size", "12Q"}, "--size");
}

TEST(GuiAppFlags, PipelineFieldsAreCheckedAndNamedAsFlags) {
  ExpectUsageError({"--scenario", "pipeline", "--stages", "16", "--frames", "1"}, "--stages: ");
  ExpectUsageError({"--scenario", "pipeline", "--microbatches", "5", "--frames", "1"},
                   "--microbatches: ");
  ExpectUsageError({"--scenario", "pipeline", "--schedule", "zigzag"}, "--schedule: ");
  ExpectUsageError({"--scenario", "pipeline", "--width", "0"}, "--width");
  ExpectUsageError({"--scenario", "pipeline", "--stages", "8", "--layers", "4", "--frames", "1"},
                   "--stages: 8 stages but the model has only 4 layers");
}

TEST(GuiAppFlags, TensorParallelFieldsAreCheckedAndNamedAsFlags) {
  ExpectUsageError({"--scenario", "tp", "--tp", "16", "--frames", "1"}, "--tp: ");
  ExpectUsageError({"--scenario", "tp", "--layer", "conv"}, "--layer: ");
  ExpectUsageError({"--scenario", "tp", "--layer", "attention", "--heads", "3", "--frames", "1"}, "--heads: ");
  // tp 4 (the app's default before the specs unified it to 2): 30 does not split into 4.
  ExpectUsageError({"--scenario", "tp", "--tp", "4", "--ffn", "30", "--frames", "1"}, "--ffn: ");
  ExpectUsageError({"--scenario", "tp", "--layer", "row", "--sequence-parallel", "--frames", "1"},
                   "--sequence-parallel: ");
  ExpectUsageError({"--scenario", "tp", "--hidden", "0"}, "--hidden");
}

TEST(GuiAppFlags, ZeroFieldsAreCheckedAndNamedAsFlags) {
  ExpectUsageError({"--scenario", "zero", "--zero-stage", "4"}, "--zero-stage: ");
  ExpectUsageError({"--scenario", "zero", "--k", "10"}, "--k: ");
  ExpectUsageError({"--scenario", "zero", "--bucket", "lots"}, "--bucket: ");
  ExpectUsageError({"--scenario", "zero", "--batch", "30", "--frames", "1"}, "--batch: 30 rows do not split into 4");
  ExpectUsageError({"--scenario", "zero", "--ranks", "16", "--frames", "1"}, "only 8 GPUs");
  ExpectUsageError({"--scenario", "zero", "--steps", "0"}, "--steps");
}

// The reliability check of the event stream: a producer floods the app's
// queue while it draws; the report must count every event (produced =
// ingested + dropped) and memory must stay flat, else the app exits 1.
TEST(GuiApp, EventFloodCountsEveryEventAndKeepsMemoryFlat) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const fs::path png = dir.path() / "flood.png";
  const AppResult result =
      RunApp({"--ranks", "8", "--size", "64M", "--window-width", "1280", "--window-height", "800",
              "--event-flood", "3", "--screenshot", png.string()},
             dir.path());
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("event flood: 3 s while drawing"), std::string::npos) << result.out;
  // 8 ranks x 2(8-1) steps x (send + recv) = 224 events per round.
  EXPECT_NE(result.out.find("re-emitting the 224 events of"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(" dropped "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("resident memory"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("FAIL"), std::string::npos) << result.out;
  const Image image = Image::Load(png);
  EXPECT_EQ(image.width, kWidth);
  EXPECT_EQ(image.height, kHeight);
}

TEST(GuiAppFlags, EventFloodFlagsAreChecked) {
  ExpectUsageError({"--event-flood", "0"}, "--event-flood");
  ExpectUsageError({"--event-flood", "2", "--frames", "10"}, "--event-flood");
}

TEST(GuiAppFlags, ScreenshotNeedsFrames) {
  ExpectUsageError({"--screenshot", "x.png"}, "--frames");
}

TEST(GuiAppFlags, HelpAndVersionExitZero) {
  ScratchDir dir;
  const AppResult help = RunApp({"--help"}, dir.path());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--screenshot"), std::string::npos);
  const AppResult version = RunApp({"--version"}, dir.path());
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("shardlab ", 0), 0u) << version.out;
}

}  // namespace
}  // namespace shardlab::gui

namespace shardlab::gui {
namespace {

TEST(GuiApp, Runs3dAndColoursTilesByGroupWithTheLinksOfEachKind) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const Image image = Screenshot(dir, {"--scenario", "3d", "--dp", "2", "--pp", "2", "--tp", "2", "--microbatches",
                                       "4", "--layers", "4", "--model-width", "64", "--batch", "32", "--step", "1000",
                                       "--frames", "20"});
  const Theme& theme = GetTheme(ThemeKind::kDark);
  const PanelLayout layout = ComputePanelLayout(kWidth, kHeight, MenuBarHeightPx(FontPixels(1.0f)), kTpMetricsShare);
  // TP groups 0..3 wear rank colours 0..3 on the tiles; the TP links are lit.
  for (int group = 0; group < 4; ++group) {
    EXPECT_GT(CountNear(image, layout.topology, theme.RankColor(group)), 40) << "TP group " << group;
  }
  EXPECT_GT(CountNear(image, layout.topology, theme.PhaseColor(Phase::kAllGather)), 40) << "TP links";
}

TEST(GuiApp, MoeHotExpertShowsItsPhasesOnTheGantt) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const Image image = Screenshot(dir, {"--scenario", "moe", "--ranks", "4", "--experts", "8", "--skew", "hot",
                                       "--capacity-factor", "4", "--step", "1000", "--frames", "20"});
  const Theme& theme = GetTheme(ThemeKind::kDark);
  const PanelLayout layout = ComputePanelLayout(kWidth, kHeight, MenuBarHeightPx(FontPixels(1.0f)), kTpMetricsShare);
  EXPECT_GT(CountNear(image, layout.gantt, theme.PhaseColor(Phase::kExpert)), 200) << "expert boxes";
  EXPECT_GT(CountNear(image, layout.gantt, theme.PhaseColor(Phase::kDispatch)), 50) << "dispatch boxes";
}

TEST(GuiAppFlags, ThreeDAndMoeFieldsAreNamedAsFlags) {
  ExpectUsageError({"--scenario", "3d", "--dp", "4", "--frames", "1"}, "--dp/--pp/--tp: ");
  ExpectUsageError({"--scenario", "moe", "--experts", "6", "--frames", "1"}, "--experts: ");
  ExpectUsageError({"--scenario", "moe", "--skew", "spiky"}, "--skew: ");
}


// --- Why is it slow? -----------------------------------------------------------

/// A rank-order ring on a DGX-1 (GPU3 -> GPU4 crosses PCIe and the CPUs),
/// recorded to its end, with `extra` flags; the window's picture.
Image WhyShot(const ScratchDir& dir, const std::string& name, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--topology", "dgx1-v100", "--ring-order", "0,1,2,3,4,5,6,7", "--size", "1M",
                                   "--step", "14", "--frames", "2", "--window-width", std::to_string(kWidth),
                                   "--window-height", std::to_string(kHeight), "--screenshot",
                                   (dir.path() / name).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const AppResult result = RunApp(args, dir.path());
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return Image::Load(dir.path() / name);
}

// The critical path outlines ops in the timeline in its own colour; a
// selected op frames its bars and lights its route on the machine and its
// chunk in the buffers in the selection colour. Without the flags, neither
// colour is on screen.
TEST(GuiWhy, TheCriticalPathAndASelectedOpAreDrawn) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  const Theme& theme = GetTheme(ThemeKind::kDark);
  const PanelLayout layout = Layout();
  const Image plain = WhyShot(dir, "plain.png", {});
  const Image marked = WhyShot(dir, "marked.png", {"--critical-path", "--select-op", "23"});
  ASSERT_EQ(marked.width, kWidth);
  EXPECT_LT(CountNear(plain, layout.gantt, theme.path, 6), 50);
  EXPECT_GT(CountNear(marked, layout.gantt, theme.path, 6), 2000) << "the path's outlines";
  EXPECT_LT(CountNear(plain, layout.topology, theme.selected, 6), 50);
  EXPECT_GT(CountNear(marked, layout.topology, theme.selected, 6), 500) << "the lit route";
  EXPECT_GT(CountNear(marked, layout.buffers, theme.selected, 6), 40) << "the lit chunk";
}

TEST(GuiWhy, AnOpOrLinkTheRunLacksIsOneLineAndExitOne) {
  SKIP_WITHOUT_DISPLAY();
  ScratchDir dir;
  AppResult result = RunApp({"--ranks", "2", "--size", "1K", "--frames", "2", "--select-op", "999"}, dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("shardlab: error: --select-op: the run has ops 0-"), std::string::npos) << result.err;
  result = RunApp({"--ranks", "2", "--size", "1K", "--frames", "2", "--select-link", "gpu0-cpu7"}, dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("--select-link: no link 'gpu0-cpu7'"), std::string::npos) << result.err;
}

TEST(GuiWhy, ASelectLinkWithoutTwoEndsIsAUsageError) {
  ExpectUsageError({"--select-link", "gpu0"}, "--select-link: expected A-B");
  ExpectUsageError({"--select-op", "-3"}, "--select-op");
}

}  // namespace
}  // namespace shardlab::gui
