// The buffer view: what every rank's buffer holds after the step the
// replay shows, as the seed texts draw it (`GPU0: [A0+A1+A2+A3, _, ...]`):
//
//   after step 3 of 14 · reduce-scatter
//            A        B        C        D   ...
//   GPU0  [A0     ][B0+B7  ][C0..7  ]...        fill: how many ranks' parts
//   GPU1  [A0+A1  ][B1     ][ ...                a chunk holds (more = deeper)
//                                                green: final, outlined: changed
//
// A cell too narrow for its label shows "3/8" (parts held of all) or just
// its letter; hovering shows everything.
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cfloat>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/views/draw_util.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/pipeline_scenario.h"

namespace shardlab::gui {
namespace {

constexpr float kMinCellPx = 6.0f;     // below this, scroll instead of squeezing
constexpr float kCellGapPx = 2.0f;

/// The snapshot after `steps` steps, or the latest one before it while the
/// run is still recording; null when there is none.
const BufferSnapshot* SnapshotAt(const std::vector<BufferSnapshot>& snapshots, int steps) {
  const BufferSnapshot* best = nullptr;
  for (const BufferSnapshot& s : snapshots) {
    if (s.step <= steps && (best == nullptr || s.step > best->step)) best = &s;
  }
  return best;
}

const BufferSnapshot* SnapshotExactly(const std::vector<BufferSnapshot>& snapshots, int step) {
  if (step >= 0 && step < static_cast<int>(snapshots.size()) &&
      snapshots[static_cast<std::size_t>(step)].step == step) {
    return &snapshots[static_cast<std::size_t>(step)];
  }
  for (const BufferSnapshot& s : snapshots) {
    if (s.step == step) return &s;
  }
  return nullptr;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += ", ";
    if (i == 12 && ranks.size() > 14) {
      text += Format(Tr("... (%d in all)"), static_cast<int>(ranks.size()));
      break;
    }
    text += std::to_string(ranks[i]);
  }
  return text;
}

void CellTooltip(const ChunkCell& cell, int rank, int chunk, int ranks, bool changed,
                 int step) {
  ImGui::BeginTooltip();
  ImGui::Text(Tr("GPU%d, chunk %s: %s"), rank, ChunkLetter(chunk).c_str(), cell.label.c_str());
  if (cell.contributors.empty()) {
    ImGui::TextUnformatted(cell.label == "_" ? Tr("empty: no data yet") : Tr("mixed contents"));
  } else {
    ImGui::Text(Tr("holds the part of GPU %s (%zu of %d)"), RankList(cell.contributors).c_str(),
                cell.contributors.size(), ranks);
  }
  if (cell.complete) ImGui::TextUnformatted(Tr("final: what this rank holds at the end"));
  if (changed) ImGui::Text(Tr("changed in step %d"), step);
  ImGui::EndTooltip();
}

}  // namespace

void DrawBufferView(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  if (const PreparedPipeline* pipeline = PreparedDetail<PreparedPipeline>(ctx.session, "pipeline_metrics")) {
    // A pipeline's buffers are activations and weights, not chunks of one
    // vector: the Gantt and the metrics say what moved and what it held.
    const PipelineShape& shape = pipeline->pipeline.params.shape;
    ImGui::TextWrapped(Tr("Pipeline training holds no shared buffer to draw chunk by chunk: each GPU keeps its own "
        "layers' weights, and up to the \"held\" count of micro-batch activations (see Metrics) "
        "until their backward pass. %d stages exchange %d activations forward and as many "
        "gradients back in one step."),
        shape.stages, (shape.stages * shape.chunks - 1) * shape.microbatches);
    return;
  }
  if (RunHasPanel(ctx.session, "zero_memory") && ctx.session.prepared() != nullptr) {
    // The panel is not shown for ZeRO (the metrics take the column); say where to look anyway.
    ImGui::TextWrapped(Tr("A ZeRO run's buffers are model states: see the memory chart beside the timeline."));
    return;
  }
  if (RunHasPanel(ctx.session, "tp_weights") && ctx.session.prepared() != nullptr) {
    // The app shows a tensor-parallel layer's shards in the weights panel.
    ImGui::TextWrapped(Tr("A tensor-parallel layer's buffers are blocks of its weights: see the weights panel."));
    return;
  }
  if (ctx.session.trace() != nullptr) {
    ImGui::TextWrapped(Tr("A trace records when each operation ran, not what the buffers held: the "
                       "timeline and the machine replay it. Run the scenario to see the chunks."));
    return;
  }
  const PreparedCollective* prepared = CollectiveOf(ctx.session.prepared());
  if (prepared == nullptr) {
    ImGui::TextDisabled(Tr("No run yet: press Run in the scenario panel."));
    return;
  }
  const int n = prepared->params.ranks;
  if (n > Session::kMaxBufferViewRanks) {
    ImGui::TextWrapped(Tr("The buffer view shows runs of up to %d ranks; this one has %d. "
                       "The topology and Gantt views still show every transfer."),
                       Session::kMaxBufferViewRanks, n);
    return;
  }
  const std::vector<BufferSnapshot>& snapshots = ctx.session.buffer_snapshots();
  const BufferSnapshot* snap = SnapshotAt(snapshots, ctx.clock.steps_shown());
  if (snap == nullptr || snap->ranks.empty()) {
    ImGui::TextDisabled(Tr("Waiting for the first snapshot..."));
    return;
  }
  const BufferSnapshot* before = snap->step > 0 ? SnapshotExactly(snapshots, snap->step - 1) : nullptr;
  // Kinds whose cells grow a sum; in the others a cell simply holds one
  // rank's data or not.
  const bool reduces = CollectiveReduces(prepared->params.kind);

  if (snap->step == 0) {
    ImGui::TextWrapped(Tr("Inputs: every GPU holds only its own data"));
  } else {
    ImGui::Text(Tr("After step %d of %d"), snap->step, ctx.session.plan()->num_steps);
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  ImGui::TextWrapped(reduces ? Tr("A0+A1 = chunk A summed over GPU0 and GPU1; 3/%d = parts of 3 "
                                  "GPUs. Green: final. Outlined: changed by this step.")
                             : Tr("B2 = chunk B with GPU2's data. Green: final. Outlined: changed "
                                  "by this step."),
                     n);
  ImGui::PopStyleColor();

  const float font = ImGui::GetFontSize();
  const float label_w = ImGui::CalcTextSize("GPU00").x + 8.0f;
  ImVec2 avail = ImGui::GetContentRegionAvail();
  const float header_h = font + 4.0f;
  // Rows keep room for their labels and scroll when the panel is short (big
  // classroom text, many ranks); only past 32 ranks do they shrink below.
  const float min_row_h = n <= 32 ? font + 4.0f : kMinCellPx;
  const float row_h = std::clamp((avail.y - header_h - 4.0f) / static_cast<float>(n), min_row_h,
                                 std::max(min_row_h, font + 12.0f));
  // Rows that scroll take a vertical scrollbar's width from the cells.
  if (header_h + row_h * static_cast<float>(n) > avail.y) avail.x -= ImGui::GetStyle().ScrollbarSize;
  const float cell_w = std::max((avail.x - label_w) / static_cast<float>(n), kMinCellPx);
  const ImVec2 grid(label_w + cell_w * static_cast<float>(n), header_h + row_h * static_cast<float>(n));

  ImGui::BeginChild("##buffer_grid", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##cells", grid);
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* list = ImGui::GetWindowDrawList();

  const Color empty_fill = WithAlpha(theme.grid, 0.35f);
  const Color partial = theme.PhaseColor(Phase::kReduceScatter);
  const Color done = theme.PhaseColor(Phase::kBroadcast);
  const float gap = cell_w > 3 * kCellGapPx ? kCellGapPx : 0.0f;

  for (int c = 0; c < n; ++c) {
    const std::string letter = ChunkLetter(c);
    const float x = origin.x + label_w + cell_w * (static_cast<float>(c) + 0.5f);
    if (ImGui::CalcTextSize(letter.c_str()).x <= cell_w) {
      DrawCenteredText(list, ImVec2(x, origin.y + header_h * 0.5f), theme.text_dim, letter);
    }
  }

  int hover_rank = -1;
  int hover_chunk = -1;
  // The selected op's chunk: on its rank, and a transfer's on its sender too.
  int lit_chunk = -1, lit_rank = -1, lit_peer = -1;
  if (ctx.insight != nullptr && ctx.session.plan() != nullptr) {
    const OpId sel = ctx.insight->selection().op;
    const Plan& plan = *ctx.session.plan();
    if (sel >= 0 && static_cast<std::size_t>(sel) < plan.ops.size()) {
      const Op& op = plan.ops[static_cast<std::size_t>(sel)];
      lit_chunk = op.tags.chunk;
      lit_rank = op.rank;
      lit_peer = op.kind == OpKind::kRecv || op.kind == OpKind::kSend ? op.peer : -1;
    }
  }
  for (int r = 0; r < n && r < static_cast<int>(snap->ranks.size()); ++r) {
    const float y0 = origin.y + header_h + row_h * static_cast<float>(r);
    const std::string gpu = "GPU" + std::to_string(r);
    if (row_h >= font * 0.8f) {
      list->AddText(ImVec2(origin.x, y0 + (row_h - font) * 0.5f), theme.text, gpu.c_str());
    }
    const std::vector<ChunkCell>& row = snap->ranks[static_cast<std::size_t>(r)];
    for (int c = 0; c < n && c < static_cast<int>(row.size()); ++c) {
      const ChunkCell& cell = row[static_cast<std::size_t>(c)];
      const ImVec2 a(origin.x + label_w + cell_w * static_cast<float>(c) + gap * 0.5f, y0 + gap * 0.5f);
      const ImVec2 b(a.x + cell_w - gap, a.y + row_h - gap);
      const float held = static_cast<float>(cell.contributors.size());
      Color fill = empty_fill;
      if (cell.complete && !cell.contributors.empty()) {
        fill = done;
      } else if (!cell.contributors.empty()) {
        const float depth = reduces ? held / static_cast<float>(n) : 0.35f;
        fill = MixColor(theme.background, partial, 0.25f + 0.65f * depth);
      }
      list->AddRectFilled(a, b, fill, 2.0f);

      bool changed = false;
      if (before != nullptr && r < static_cast<int>(before->ranks.size()) &&
          c < static_cast<int>(before->ranks[static_cast<std::size_t>(r)].size())) {
        changed = before->ranks[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)].contributors !=
                  cell.contributors;
      }
      if (changed) list->AddRect(a, b, theme.text, 2.0f, 0, 2.0f);
      if (c == lit_chunk && (r == lit_rank || r == lit_peer)) {
        list->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), theme.selected, 2.0f, 0, 3.0f);
      }

      // The label, or shorter stand-ins when the cell is narrow.
      if (row_h >= font * 0.8f) {
        const std::string candidates[3] = {
            cell.label,
            reduces && !cell.contributors.empty()
                ? std::to_string(cell.contributors.size()) + "/" + std::to_string(n)
                : "",
            cell.label == "_" ? "_" : ChunkLetter(c)};
        if (const std::string* text = FitText(candidates, 3, cell_w - gap - 2.0f)) {
          DrawCenteredText(list, ImVec2((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f), ContrastText(fill),
                           *text);
        }
      }
      if (hovered && mouse.x >= a.x && mouse.x < b.x + gap && mouse.y >= a.y && mouse.y < b.y + gap) {
        hover_rank = r;
        hover_chunk = c;
      }
    }
  }
  if (hover_rank >= 0) {
    const ChunkCell& cell = snap->ranks[static_cast<std::size_t>(hover_rank)][static_cast<std::size_t>(hover_chunk)];
    bool changed = false;
    if (before != nullptr) {
      changed = before->ranks[static_cast<std::size_t>(hover_rank)][static_cast<std::size_t>(hover_chunk)]
                    .contributors != cell.contributors;
    }
    CellTooltip(cell, hover_rank, hover_chunk, n, changed, snap->step);
  }
  ImGui::EndChild();
}

}  // namespace shardlab::gui
