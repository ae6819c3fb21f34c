// The weights view of a tensor-parallel layer: every weight matrix drawn
// whole, at one common scale, cut into the blocks the GPUs hold, each
// block in its GPU's colour (the colour of that GPU's tile and Gantt rows).
//
//   now: GPUs 0-3 compute their forward blocks
//   A 32×128                         B 128×32
//   A: split by columns (col...)     B: split by rows (row-parallel)
//   ┌─────┬─────┬─────┬─────┐        ┌───────┐
//   │GPU 0│GPU 1│GPU 2│GPU 3│        │ GPU 0 │ ...
//   a [128]  ▬▬▬▬▬▬▬▬  a: split in 4 parts (one per GPU)
//
// While the replay runs, the blocks a GPU's running op reads or writes are
// outlined and the others fade (attention's weights while attention runs,
// the MLP's after), and the header names them; paused at a step's end, the
// op that step finished counts.
// Hover a block: which rows and columns it is, and its bytes.
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cfloat>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/views/draw_util.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/views.h"
#include "engine/core/units.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/tp_scenario.h"

namespace shardlab::gui {
namespace {

/// Blocks thinner than this get no outline of their own: on an 18-pixel
/// weight split eight ways, outlines would be all there is to see.
constexpr float kMinOutlinedBlockPx = 6.0f;
/// Below this much height the panel keeps its lines for the drawing.
constexpr float kRoomyPanelPx = 320.0f;

ImVec2 ToPx(ImVec2 origin, Vec2 v) { return {origin.x + v.x, origin.y + v.y}; }

bool Inside(ImVec2 p, ImVec2 min, ImVec2 max) { return p.x >= min.x && p.x < max.x && p.y >= min.y && p.y < max.y; }

/// Whether block `b` is in use at the cursor: its rank is lit and that
/// rank's op reads or writes the block's buffer (`buffers`: BuffersOfOp of
/// each rank's op).
bool InUse(const TpRankBlock& b, const std::vector<RankCompute>& ranks,
           const std::vector<std::vector<BufferId>>& buffers) {
  if (b.rank < 0 || static_cast<std::size_t>(b.rank) >= ranks.size()) return false;
  const auto r = static_cast<std::size_t>(b.rank);
  if (!ranks[r].lit()) return false;
  return b.buffer == kNoBuffer || std::binary_search(buffers[r].begin(), buffers[r].end(), b.buffer);
}

/// The sentence for the header line: who computes at the cursor, with
/// which weights ("now: GPUs 0-3 compute forward with Wq, Wk, Wv").
std::string NowLine(const std::vector<RankCompute>& ranks, const std::vector<TpWeightMatrix>& matrices,
                    const std::vector<std::vector<BufferId>>& buffers, TimeNs cursor_ns, bool any_lit,
                    bool at_end) {
  if (at_end) return Tr("Done: every weight as its GPUs hold it.");
  if (!any_lit) {
    return cursor_ns <= 0 ? Tr("Blocks light up while their GPU computes with them: press Step or Play.")
                          : Tr("No GPU computes now: the layer waits for communication, or is done.");
  }
  std::vector<int> forward, backward;
  bool running = false;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].lit()) continue;
    running = running || ranks[r].busy;
    (ranks[r].phase == Phase::kBackward ? backward : forward).push_back(static_cast<int>(r));
  }
  std::string used;
  for (const TpWeightMatrix& m : matrices) {
    const bool in_use = std::any_of(m.blocks.begin(), m.blocks.end(),
                                    [&](const TpRankBlock& b) { return InUse(b, ranks, buffers); });
    if (in_use) used += (used.empty() ? "" : ", ") + m.tensor;
  }
  std::string line = running ? Tr("now: ") : "";
  if (!forward.empty()) {
    line += Format(running ? Tr("%s compute forward") : Tr("%s just computed forward"), RankList(forward).c_str());
  }
  if (!backward.empty()) {
    line += forward.empty() ? "" : Tr("; ");
    line += Format(running ? Tr("%s compute backward") : Tr("%s just computed backward"), RankList(backward).c_str());
  }
  return line + (used.empty() ? std::string(Tr(" without a weight (norm, softmax or residual)"))
                              : Format(Tr(" with %s"), used.c_str()));
}

/// What each GPU computes with its blocks, in one sentence per layer kind.
const char* LayerSentence(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear:
      return Tr("Y = X\xC2\xB7" "A + a: GPU r computes its own columns of Y with its columns of A; nothing to add up "
                "forward.");
    case TpLayerKind::kRowLinear:
      return Tr("Y = X\xC2\xB7" "W + b: GPU r multiplies its columns of X by its rows of W, a partial sum of all of Y; "
                "an all-reduce adds the partial sums.");
    case TpLayerKind::kMlp:
      return Tr("Y = relu(X\xC2\xB7" "A + a)\xC2\xB7" "B + b: GPU r keeps its columns of A and its rows of B, so the "
                "activation between them never moves; one all-reduce adds the partial outputs.");
    case TpLayerKind::kAttention:
      return Tr("Each GPU computes its own heads with its columns of Wq, Wk and Wv, then multiplies by its rows of "
                "Wo: a partial sum of the output, which an all-reduce adds up.");
    case TpLayerKind::kTransformer:
      return Tr("Attention, then the MLP, each split the Megatron way: column-parallel in, row-parallel out, one "
                "all-reduce after each half forward and one before each half backward.");
  }
  return "";
}

void BlockTooltip(const TpWeightMatrix& m, const TpRankBlock& b, DType dtype) {
  const std::int64_t values = b.block.rows * b.block.cols;
  ImGui::BeginTooltip();
  ImGui::Text(Tr("%s: %s of GPU %d"), m.tensor.c_str(), m.split == TpSplit::kReplicated ? Tr("copy") : Tr("block"),
              b.rank);
  ImGui::TextUnformatted(TpBlockRange(m, b).c_str());
  ImGui::Text(Tr("%s values, %s in %s"), Grouped(values).c_str(),
              FormatBytes(values * Bytes{DTypeBytes(dtype)}).c_str(), DTypeName(dtype));
  ImGui::Separator();
  const std::vector<std::string> captions = TpSplitCaptions(m);
  ImGui::TextDisabled(Tr("%s is %s"), m.tensor.c_str(),
                      m.vector ? Format(Tr("a vector of %d"), static_cast<int>(m.length())).c_str()
                               : (std::to_string(m.rows) + "\xC3\x97" + std::to_string(m.cols)).c_str());
  ImGui::TextDisabled("%s", captions.front().c_str());
  ImGui::EndTooltip();
}

}  // namespace

void DrawTpWeightsView(ViewContext& ctx, TpWeightsViewState& state) {
  const Theme& theme = ctx.theme;
  const PreparedTp* tp = PreparedDetail<PreparedTp>(ctx.session, "tp_weights");
  if (tp == nullptr) {
    ImGui::TextDisabled(Tr("Only a tensor-parallel layer has weights to show."));
    return;
  }
  if (state.run_id != ctx.session.run_id()) {
    state.run_id = ctx.session.run_id();
    state.matrices = TpWeightMatrices(tp->layer);
    state.laid_out_w = 0;
  }
  if (state.matrices.empty()) {
    ImGui::TextDisabled(Tr("This layer lists no weights."));
    return;
  }

  const TimeNs cursor_ns = ctx.clock.cursor_ns();
  // At the end of a recorded run nothing is lit: the whole layer is shown
  // as it is held, in full colour.
  const bool at_end = ctx.session.state() == SessionState::kDone && cursor_ns >= ctx.clock.run_end_ns();
  std::vector<RankCompute> ranks = RanksComputingAt(ctx.session.store(), *ctx.session.plan(), cursor_ns);
  if (at_end) ranks.assign(ranks.size(), RankCompute{});
  const bool any_busy = std::any_of(ranks.begin(), ranks.end(), [](const RankCompute& r) { return r.lit(); });
  std::vector<std::vector<BufferId>> buffers(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].lit()) buffers[r] = BuffersOfOp(*ctx.session.plan(), ranks[r].op);
  }
  // The layer in a sentence where the panel has height to spare; else in
  // the tooltip of the line saying who computes.
  const char* sentence = LayerSentence(tp->layer.config.kind);
  const bool roomy = ImGui::GetContentRegionAvail().y >= kRoomyPanelPx;
  if (roomy) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
    ImGui::TextWrapped("%s", sentence);
    ImGui::PopStyleColor();
  }
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(any_busy ? theme.text : theme.text_dim), "%s%s",
                     NowLine(ranks, state.matrices, buffers, cursor_ns, any_busy, at_end).c_str(), roomy ? "" : "  (?)");
  if (!roomy && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", sentence);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (avail.x < 60 || avail.y < 40) return;
  const float line_h = ImGui::GetTextLineHeight();
  const float width = avail.x - ImGui::GetStyle().ScrollbarSize;
  if (state.laid_out_w != width || state.laid_out_h != avail.y || state.laid_out_line_h != line_h) {
    state.layout = LayoutTpWeights(state.matrices, width, avail.y - 4, line_h,
                                   [](const std::string& text) { return ImGui::CalcTextSize(text.c_str()).x; });
    state.laid_out_w = width;
    state.laid_out_h = avail.y;
    state.laid_out_line_h = line_h;
  }
  const TpWeightLayout& layout = state.layout;

  // A child window scrolls when the smallest drawing still does not fit.
  ImGui::BeginChild("##tp_weights_canvas", avail, false, ImGuiWindowFlags_HorizontalScrollbar);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(width, std::max(layout.height, 1.0f)));
  const bool hovered_canvas = ImGui::IsWindowHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* list = ImGui::GetWindowDrawList();

  const TpWeightMatrix* hovered_matrix = nullptr;
  const TpRankBlock* hovered_block = nullptr;
  ImVec2 hovered_min, hovered_max;
  for (const TpWeightBox& box : layout.boxes) {
    const TpWeightMatrix& m = state.matrices[static_cast<std::size_t>(box.matrix)];
    // Title and caption (the longest caption that fits).
    const ImVec2 title_at = ToPx(origin, box.title.min);
    list->AddText(ImVec2(title_at.x, title_at.y), theme.text, TpWeightTitle(m).c_str());
    const std::vector<std::string> captions = TpSplitCaptions(m);
    const std::string* caption = FitText(captions.data(), static_cast<int>(captions.size()), box.caption.width());
    if (caption == nullptr) caption = &captions.back();
    const ImVec2 cap_min = ToPx(origin, box.caption.min);
    const ImVec2 cap_max = ToPx(origin, box.caption.max);
    list->PushClipRect(cap_min, ImVec2(cap_max.x, cap_max.y + 2), true);
    list->AddText(cap_min, theme.text_dim, caption->c_str());
    list->PopClipRect();

    // The blocks, rank by rank (a replicated stack: the last copy on top).
    // Blocks too thin for an outline of their own share one around the
    // whole drawing, as a strip's always do.
    float thinnest = FLT_MAX;
    for (const Rect& r : box.blocks) thinnest = std::min(thinnest, std::min(r.width(), r.height()));
    const bool own_outlines = !m.vector && thinnest >= kMinOutlinedBlockPx;
    bool shape_lit = false;
    for (std::size_t k = 0; k < m.blocks.size() && k < box.blocks.size(); ++k) {
      const TpRankBlock& b = m.blocks[k];
      const ImVec2 min = ToPx(origin, box.blocks[k].min);
      const ImVec2 max = ToPx(origin, box.blocks[k].max);
      const bool busy = InUse(b, ranks, buffers);
      Color fill = theme.RankColor(b.rank);
      if (any_busy && !busy) fill = MixColor(fill, theme.background, 0.62f);
      list->AddRectFilled(min, max, fill);
      // A seam in the background colour keeps neighbouring blocks apart.
      if (own_outlines) list->AddRect(min, max, theme.background, 0, 0, 1.0f);
      if (hovered_canvas && Inside(mouse, min, max)) {
        hovered_matrix = &m;
        hovered_block = &b;  // later (upper) blocks win
        hovered_min = min;
        hovered_max = max;
      }
      if (any_busy && busy && own_outlines) list->AddRect(min, max, theme.text, 0, 0, 2.0f);
      shape_lit = shape_lit || (busy && !own_outlines);
      // "GPU 2", else "2", where it fits; a stack names itself on its top copy.
      const bool top_of_stack = m.split == TpSplit::kReplicated && !m.vector && k + 1 == m.blocks.size();
      if (m.split == TpSplit::kReplicated && !top_of_stack) continue;
      std::vector<std::string> labels;
      if (top_of_stack && m.blocks.size() > 1) {
        labels = {std::to_string(m.blocks.size()) + " copies", "\xC3\x97" + std::to_string(m.blocks.size())};
      } else if (!m.vector) {
        labels = {"GPU " + std::to_string(b.rank), std::to_string(b.rank)};
      }
      if (labels.empty() || max.y - min.y < line_h) continue;
      const std::string* label = FitText(labels.data(), static_cast<int>(labels.size()), max.x - min.x - 4);
      if (label != nullptr) {
        DrawCenteredText(list, ImVec2((min.x + max.x) * 0.5f, (min.y + max.y) * 0.5f), ContrastText(fill), *label);
      }
    }
    if (shape_lit && any_busy) {
      list->AddRect(ToPx(origin, Vec2{box.shape.min.x - 1, box.shape.min.y - 1}),
                    ToPx(origin, Vec2{box.shape.max.x + 1, box.shape.max.y + 1}), theme.text, 0, 0, 1.0f);
    }
  }
  if (hovered_block != nullptr) {
    list->AddRect(ImVec2(hovered_min.x - 1, hovered_min.y - 1), ImVec2(hovered_max.x + 1, hovered_max.y + 1),
                  theme.cursor, 0, 0, 2.0f);
    BlockTooltip(*hovered_matrix, *hovered_block, tp->layer.config.dtype);
  }
  ImGui::EndChild();
}

}  // namespace shardlab::gui
