// The app with a lab open (--lab), end to end: the real `shardlab` binary
// in scripted mode, its screenshot read back. The lab panel stands at the
// window's right and the views keep the rest; a saved step is resumed and
// its run is the one the views (and --trace) show. Window tests need an X
// display and are skipped without one; the bad-flag tests always run.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/gui/app/fonts.h"
#include "app/gui/app/menu_bar.h"
#include "app/gui/app/theme.h"
#include "app/gui/model/lab_panel_model.h"
#include "app/gui/model/panel_layout.h"
#include "engine/lab/progress.h"
#include "tests/common/run_program.h"

namespace shardlab::gui {
namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 1280;
constexpr int kHeight = 800;
const std::string kRingLab = SHARDLAB_TEST_DATA_DIR "/lab_panel/01-mini-ring";

bool HaveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display != nullptr && display[0] != '\0';
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Shot {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> rgb;
  /// Pixels in [x0, x1) x [y0, y1) within 40 per channel of `color`.
  int CountNear(float x0, float y0, float x1, float y1, Color color) const {
    const int r = static_cast<int>(color & 0xFF), g = static_cast<int>((color >> 8) & 0xFF),
              b = static_cast<int>((color >> 16) & 0xFF);
    int count = 0;
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1) && y < height; ++y) {
      for (int x = static_cast<int>(x0); x < static_cast<int>(x1) && x < width; ++x) {
        const unsigned char* p = &rgb[(static_cast<std::size_t>(y) * width + x) * 3];
        if (std::abs(p[0] - r) <= 40 && std::abs(p[1] - g) <= 40 && std::abs(p[2] - b) <= 40) ++count;
      }
    }
    return count;
  }
};

Shot LoadPng(const fs::path& path) {
  Shot shot;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &shot.width, &shot.height, &channels, 3);
  if (data == nullptr) return shot;
  shot.rgb.assign(data, data + static_cast<std::size_t>(shot.width) * shot.height * 3);
  stbi_image_free(data);
  return shot;
}

test_util::ProgramResult RunApp(const std::vector<std::string>& args, const fs::path& dir) {
  return test_util::RunProgram(SHARDLAB_APP_PATH, args, dir);
}

TEST(GuiLabPanel, StandsBesideTheViewsAndResumesTheSavedStepWithItsRun) {
  if (!HaveDisplay()) GTEST_SKIP() << "no X display (DISPLAY is unset): run under xvfb-run";
  test_util::TempDir dir;
  const fs::path progress = dir.path() / "progress";
  fs::create_directories(progress);
  // A student left the lab on its second step (the ring on 4 GPUs).
  LabProgress saved;
  saved.lab_id = "01-mini-ring";
  saved.step = 1;
  saved.completed = {"intro"};
  std::ofstream(progress / "01-mini-ring.progress.toml") << WriteLabProgress(saved);

  const fs::path png = dir.path() / "lab.png";
  const fs::path trace = dir.path() / "lab.json";
  const test_util::ProgramResult result =
      RunApp({"--lab", kRingLab, "--progress-dir", progress.string(), "--frames", "20", "--window-width",
              std::to_string(kWidth), "--window-height", std::to_string(kHeight), "--screenshot", png.string(),
              "--trace", trace.string()},
             dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Shot shot = LoadPng(png);
  ASSERT_EQ(shot.width, kWidth);
  ASSERT_EQ(shot.height, kHeight);

  // The lab panel's column holds text; the views keep the rest of the window.
  const Theme& theme = GetTheme(ThemeKind::kDark);
  const float menu_px = MenuBarHeightPx(FontPixels(1.0f));
  const float lab_w = std::floor(LabPanelWidthPx(kWidth, FontPixels(1.0f)));
  EXPECT_GT(shot.CountNear(kWidth - lab_w, menu_px, kWidth, kHeight, theme.text), 1500)
      << "no text in the lab panel's column";
  const PanelLayout layout = ComputePanelLayout(kWidth - lab_w, kHeight, menu_px);
  EXPECT_GT(shot.CountNear(layout.topology.min.x, layout.topology.min.y, layout.topology.max.x,
                           layout.topology.max.y, theme.tile_gpu),
            4 * 100)
      << "no GPU tiles in the topology view beside the panel";

  // The views show the resumed step's run: a ring of 4 GPUs, not the app's default 8.
  const std::string json = test_util::ReadWholeFile(trace);
  EXPECT_TRUE(Contains(json, "\"name\":\"GPU 3\"")) << "GPU 3 missing from the trace";
  EXPECT_FALSE(Contains(json, "\"name\":\"GPU 4\"")) << "the trace is not the step's 4-GPU run";

  // Opening saved nothing new: the progress file still says step 2.
  const std::string text = test_util::ReadWholeFile(progress / "01-mini-ring.progress.toml");
  EXPECT_EQ(ParseLabProgress(text, "progress").step, 1);
}

TEST(GuiLabPanelFlags, ALabThatDoesNotLoadIsAUsageError) {
  test_util::TempDir dir;
  const test_util::ProgramResult missing = RunApp({"--lab", (dir.path() / "no-such-lab").string()}, dir.path());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(Contains(missing.err, "shardlab: error: --lab: ")) << missing.err;

  fs::create_directories(dir.path() / "09-bad");
  std::ofstream(dir.path() / "09-bad" / "lab.toml") << "format = 1\ntitle = \"Bad\"\nminutes = 0\n";
  const test_util::ProgramResult bad = RunApp({"--lab", (dir.path() / "09-bad").string()}, dir.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "lab.toml")) << bad.err;
  EXPECT_TRUE(Contains(bad.err, "minutes")) << bad.err;
}

TEST(GuiLabPanelFlags, EmptyLabFoldersAreUsageErrors) {
  test_util::TempDir dir;
  for (const char* flag : {"--labs-dir", "--progress-dir", "--lab"}) {
    const test_util::ProgramResult result = RunApp({flag, ""}, dir.path());
    EXPECT_EQ(result.exit_code, 2) << flag;
    EXPECT_TRUE(Contains(result.err, flag)) << result.err;
  }
}

}  // namespace
}  // namespace shardlab::gui
