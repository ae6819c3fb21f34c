// Theme: every colour the views use, in one place, so the dark theme and the
// light high-contrast theme (for projectors) differ in data only.
#pragma once

#include <cstdint>

#include "engine/plan/plan.h"

namespace shardlab::gui {

/// Colours are ImGui's packed ABGR (IM_COL32 layout), kept free of imgui.h
/// so model code can use them too.
using Color = std::uint32_t;

enum class ThemeKind { kDark, kLight };

struct Theme {
  ThemeKind kind = ThemeKind::kDark;
  Color background = 0;       // view backgrounds
  Color text = 0;
  Color text_dim = 0;
  Color grid = 0;             // ruler ticks, row separators
  Color tile_gpu = 0;
  Color tile_switch = 0;      // NVSwitch, PCIe switch, net switch
  Color tile_cpu = 0;
  Color tile_nic = 0;
  Color tile_border = 0;
  Color host_frame = 0;
  Color link_idle = 0;        // a link carrying nothing
  Color link_busy = 0;        // a link at full bandwidth (load ramps idle -> busy)
  Color cursor = 0;           // the replay cursor line
  Color folded = 0;           // folded blocks of tiny ops in the Gantt
  Color bubble = 0;           // a pipeline stage's idle time (hatched in the Gantt)
  Color error = 0;
  Color path = 0;             // the critical path's outline (Gantt)
  Color selected = 0;         // the selected op, its route and chunk, a selected link
  Color fault = 0;            // a straggler, a throttled or failed link or rank

  /// Op colour by phase (reduce-scatter, all-gather, forward, ...).
  Color PhaseColor(Phase phase) const;
  /// Pipeline op colour: the micro-batch picks the hue (F3, B3 and W3 share
  /// one), the pass the shade (forward light, backward deep, weight gradient
  /// greyed); see pipeline_gantt.h. Other phases: PhaseColor.
  Color MicrobatchColor(Phase phase, int microbatch) const;
  /// The colour of rank (GPU) `rank` wherever the views name a rank: the
  /// GPU tiles, the Gantt's row labels, a tensor-parallel weight's blocks.
  /// Eight distinct hues, then they repeat.
  Color RankColor(int rank) const;
  /// The colour of a kind of device memory in the ZeRO memory chart.
  /// Parameters share the all-gather's hue and gradients the
  /// reduce-scatter's, since those are the collectives that move them.
  Color MemoryColor(MemoryCategory category) const;
  /// Link colour for a utilization in [0, 1].
  Color LinkLoadColor(double utilization) const;
};

const Theme& GetTheme(ThemeKind kind);

}  // namespace shardlab::gui
