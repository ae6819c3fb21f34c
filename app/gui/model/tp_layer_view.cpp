// TpLayerView: a tensor-parallel layer's weights as blocks per rank, their
// layout in a panel, and names for its collectives (see tp_layer_view.h).
#include "app/gui/model/tp_layer_view.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "app/gui/i18n/language.h"
#include "engine/plan/kernel.h"

namespace shardlab::gui {
namespace {

bool IsVector(std::int64_t rows, std::int64_t cols) { return rows == 1 || cols == 1; }

bool IsWhole(const TpBlock& b, std::int64_t rows, std::int64_t cols) {
  return b.row0 == 0 && b.rows == rows && b.col0 == 0 && b.cols == cols;
}

/// "32×128": the multiplication sign reads better than an x.
std::string Shape(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + "\xC3\x97" + std::to_string(cols);
}

std::string Range(std::int64_t first, std::int64_t count) {
  return std::to_string(first) + "-" + std::to_string(first + count - 1);
}

/// A vector's block as a range along its length: [begin, begin + count).
void AlongLength(const TpWeightMatrix& m, const TpBlock& b, std::int64_t* begin, std::int64_t* count) {
  if (m.rows == 1) {
    *begin = b.col0;
    *count = b.cols;
  } else {
    *begin = b.row0;
    *count = b.rows;
  }
}

/// The shape of a matrix drawn at `px` pixels per element, its aspect
/// clamped to kMaxAspect by growing the short side.
Vec2 MatrixSize(const TpWeightMatrix& m, double px) {
  double w = static_cast<double>(m.cols) * px;
  double h = static_cast<double>(m.rows) * px;
  if (w > kMaxAspect * h) h = w / kMaxAspect;
  if (h > kMaxAspect * w) w = h / kMaxAspect;
  return {std::max(static_cast<float>(w), kMinMatrixSidePx), std::max(static_cast<float>(h), kMinMatrixSidePx)};
}

/// Extra room a replicated matrix's stack of copies takes beyond one copy.
float StackExtra(const TpWeightMatrix& m) {
  return m.split == TpSplit::kReplicated ? kStackStepPx * static_cast<float>(m.blocks.size() - 1) : 0.0f;
}

/// A matrix item's width and height at a scale: two text lines over the drawing.
Vec2 MatrixItemSize(const TpWeightMatrix& m, double px, float line_h, float min_w) {
  const Vec2 shape = MatrixSize(m, px);
  const float extra = StackExtra(m);
  return {std::max(shape.x + extra, min_w), 2 * line_h + 4 + shape.y + extra};
}

/// One vector line: its text or its strip, whichever is taller, and air.
float VectorRowPx(float line_h) { return std::max(line_h, kStripPx) + 4; }

/// Block rectangles of `m` drawn in `shape` (see the header's sketch).
std::vector<Rect> BlockRects(const TpWeightMatrix& m, const Rect& shape) {
  std::vector<Rect> rects;
  rects.reserve(m.blocks.size());
  const float w = shape.width();
  const float h = shape.height();
  const auto n = static_cast<float>(m.blocks.size());
  for (std::size_t k = 0; k < m.blocks.size(); ++k) {
    const TpBlock& b = m.blocks[k].block;
    const auto kf = static_cast<float>(k);
    Rect r;
    if (m.split == TpSplit::kReplicated && m.vector) {
      // Full length, one thin band of the strip's thickness per copy.
      r = {{shape.min.x, shape.min.y + h * kf / n}, {shape.max.x, shape.min.y + h * (kf + 1) / n}};
    } else if (m.split == TpSplit::kReplicated) {
      // A stack of copies: copy k shifted k steps right and down, the last on top.
      const float extra = StackExtra(m);
      r = {{shape.min.x + kStackStepPx * kf, shape.min.y + kStackStepPx * kf},
           {shape.max.x - extra + kStackStepPx * kf, shape.max.y - extra + kStackStepPx * kf}};
    } else if (m.vector) {
      std::int64_t begin = 0, count = 0;
      AlongLength(m, b, &begin, &count);
      const double length = static_cast<double>(m.length());
      r = {{shape.min.x + static_cast<float>(w * begin / length), shape.min.y},
           {shape.min.x + static_cast<float>(w * (begin + count) / length), shape.max.y}};
    } else {
      const double cols = static_cast<double>(m.cols);
      const double rows = static_cast<double>(m.rows);
      r = {{shape.min.x + static_cast<float>(w * b.col0 / cols), shape.min.y + static_cast<float>(h * b.row0 / rows)},
           {shape.min.x + static_cast<float>(w * (b.col0 + b.cols) / cols),
            shape.min.y + static_cast<float>(h * (b.row0 + b.rows) / rows)}};
    }
    rects.push_back(r);
  }
  return rects;
}

}  // namespace

int BlockCoverage(std::int64_t rows, std::int64_t cols, const std::vector<TpRankBlock>& blocks) {
  if (blocks.empty() || rows <= 0 || cols <= 0) return blocks.empty() ? 0 : -1;
  // Cut the tensor at every block edge: each cell is covered by a block
  // wholly or not at all, so counting per cell counts per element.
  std::vector<std::int64_t> row_cuts{0, rows}, col_cuts{0, cols};
  for (const TpRankBlock& rb : blocks) {
    const TpBlock& b = rb.block;
    if (b.row0 < 0 || b.col0 < 0 || b.rows <= 0 || b.cols <= 0 || b.row0 + b.rows > rows ||
        b.col0 + b.cols > cols) {
      return -1;
    }
    row_cuts.insert(row_cuts.end(), {b.row0, b.row0 + b.rows});
    col_cuts.insert(col_cuts.end(), {b.col0, b.col0 + b.cols});
  }
  for (std::vector<std::int64_t>* cuts : {&row_cuts, &col_cuts}) {
    std::sort(cuts->begin(), cuts->end());
    cuts->erase(std::unique(cuts->begin(), cuts->end()), cuts->end());
  }
  int coverage = -2;  // not seen a cell yet
  for (std::size_t i = 0; i + 1 < row_cuts.size(); ++i) {
    for (std::size_t j = 0; j + 1 < col_cuts.size(); ++j) {
      int count = 0;
      for (const TpRankBlock& rb : blocks) {
        const TpBlock& b = rb.block;
        if (b.row0 <= row_cuts[i] && row_cuts[i] < b.row0 + b.rows && b.col0 <= col_cuts[j] &&
            col_cuts[j] < b.col0 + b.cols) {
          ++count;
        }
      }
      if (coverage == -2) coverage = count;
      if (count != coverage || count == 0) return -1;
    }
  }
  return coverage;
}

TpSplit ClassifySplit(std::int64_t rows, std::int64_t cols, const std::vector<TpRankBlock>& blocks) {
  if (blocks.empty()) return TpSplit::kOther;
  const bool all_whole = std::all_of(blocks.begin(), blocks.end(),
                                     [&](const TpRankBlock& b) { return IsWhole(b.block, rows, cols); });
  if (all_whole) return TpSplit::kReplicated;
  if (BlockCoverage(rows, cols, blocks) != 1) return TpSplit::kOther;
  if (IsVector(rows, cols)) return TpSplit::kParts;
  const bool all_rows = std::all_of(blocks.begin(), blocks.end(), [&](const TpRankBlock& b) {
    return b.block.row0 == 0 && b.block.rows == rows;
  });
  const bool all_cols = std::all_of(blocks.begin(), blocks.end(), [&](const TpRankBlock& b) {
    return b.block.col0 == 0 && b.block.cols == cols;
  });
  if (all_rows) return TpSplit::kColumns;
  if (all_cols) return TpSplit::kRows;
  return TpSplit::kOther;
}

std::vector<TpWeightMatrix> TpWeightMatrices(const std::vector<TpTensorBlock>& blocks) {
  std::vector<TpWeightMatrix> matrices;
  std::map<std::string, std::size_t> index;
  for (const TpTensorBlock& b : blocks) {
    if (b.role != TpTensorRole::kWeight) continue;
    auto it = index.find(b.tensor);
    if (it == index.end()) {
      it = index.emplace(b.tensor, matrices.size()).first;
      TpWeightMatrix m;
      m.tensor = b.tensor;
      m.rows = b.block.total_rows;
      m.cols = b.block.total_cols;
      matrices.push_back(std::move(m));
    }
    matrices[it->second].blocks.push_back({b.rank, b.block, b.buffer});
  }
  for (TpWeightMatrix& m : matrices) {
    std::stable_sort(m.blocks.begin(), m.blocks.end(),
                     [](const TpRankBlock& a, const TpRankBlock& b) { return a.rank < b.rank; });
    m.vector = IsVector(m.rows, m.cols);
    m.split = ClassifySplit(m.rows, m.cols, m.blocks);
    m.coverage = BlockCoverage(m.rows, m.cols, m.blocks);
  }
  return matrices;
}

std::vector<TpWeightMatrix> TpWeightMatrices(const TpLayerPlan& layer) {
  std::vector<TpWeightMatrix> matrices = TpWeightMatrices(layer.blocks);
  const std::vector<TpTensorSpec> specs = TpLayerTensors(layer.config);
  auto rank_of = [&](const TpWeightMatrix& m) {
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == m.tensor) return i;
    return specs.size();
  };
  std::stable_sort(matrices.begin(), matrices.end(),
                   [&](const TpWeightMatrix& a, const TpWeightMatrix& b) { return rank_of(a) < rank_of(b); });
  return matrices;
}

std::string TpWeightTitle(const TpWeightMatrix& m) {
  if (m.vector) return m.tensor + " [" + std::to_string(m.length()) + "]";
  return m.tensor + " " + Shape(m.rows, m.cols);
}

std::string RankList(const std::vector<int>& ranks) {
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  if (r.empty()) return "no GPU";
  if (r.size() == 1) return "GPU " + std::to_string(r.front());
  if (r.back() - r.front() + 1 == static_cast<int>(r.size())) {
    return "GPUs " + std::to_string(r.front()) + "-" + std::to_string(r.back());
  }
  std::string text = "GPUs ";
  for (std::size_t i = 0; i < r.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(r[i]);
  return text;
}

std::vector<std::string> TpSplitCaptions(const TpWeightMatrix& m) {
  // In the app's language (the tensor's name and the numbers stay).
  const std::string name = m.tensor + ": ";
  const int n = static_cast<int>(m.blocks.size());
  std::vector<int> ranks;
  for (const TpRankBlock& b : m.blocks) ranks.push_back(b.rank);
  switch (m.split) {
    case TpSplit::kColumns:
      return {name + Tr("split by columns (column-parallel)"), name + Tr("by columns (column-parallel)"),
              name + Tr("by columns"), name + Tr("cols")};
    case TpSplit::kRows:
      return {name + Tr("split by rows (row-parallel)"), name + Tr("by rows (row-parallel)"), name + Tr("by rows"),
              name + Tr("rows")};
    case TpSplit::kParts:
      return {name + Format(Tr("split in %d parts (one per GPU)"), n), name + Format(Tr("split in %d parts"), n),
              name + Format(Tr("%d parts"), n)};
    case TpSplit::kReplicated:
      if (m.blocks.size() == 1) {
        return {name + Format(Tr("whole on %s"), RankList(ranks).c_str()), name + Tr("whole"), m.tensor};
      }
      return {name + Format(Tr("replicated (all %d GPUs hold all of it)"), n),
              name + Format(Tr("replicated on %d GPUs"), n), name + Tr("replicated"), name + Format(Tr("%d copies"), n)};
    case TpSplit::kOther: break;
  }
  return {name + Format(Tr("%d blocks on %s"), n, RankList(ranks).c_str()), name + Format(Tr("%d blocks"), n),
          m.tensor};
}

std::string TpBlockRange(const TpWeightMatrix& m, const TpRankBlock& rb) {
  const TpBlock& b = rb.block;
  if (m.vector) {
    std::int64_t begin = 0, count = 0;
    AlongLength(m, b, &begin, &count);
    return "elements " + Range(begin, count) + " (" + std::to_string(count) + " values)";
  }
  return "rows " + Range(b.row0, b.rows) + ", cols " + Range(b.col0, b.cols) + " (" + Shape(b.rows, b.cols) +
         ")";
}

namespace {

/// Matrices placed in lines at one scale: rows that wrap at the panel's
/// width, or columns that wrap at its height (a tall B beside a stack of
/// square attention weights packs better in columns).
struct Flow {
  std::vector<Vec2> pos;   // each item's top-left, relative to the flow's
  std::vector<Vec2> size;  // each item's width and height
  std::vector<int> line;   // the row or column each item is in
  float w = 0, h = 0;      // the extent of all of them
  bool fits = true;        // within width × height
};

Flow FlowItems(const std::vector<const TpWeightMatrix*>& grid, const std::vector<float>& min_w, double px,
               float width, float height, float line_h, bool columns) {
  Flow f;
  float x = 0, y = 0, line_extent = 0;  // line_extent: the current line's thickness
  int line = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const Vec2 size = MatrixItemSize(*grid[i], px, line_h, min_w[i]);
    if (!columns && x > 0 && x + size.x > width) {
      y += line_extent + kItemGapPx;
      x = 0;
      line_extent = 0;
      ++line;
    }
    if (columns && y > 0 && y + size.y > height) {
      x += line_extent + kItemGapPx;
      y = 0;
      line_extent = 0;
      ++line;
    }
    f.pos.push_back({x, y});
    f.size.push_back(size);
    f.line.push_back(line);
    f.w = std::max(f.w, x + size.x);
    f.h = std::max(f.h, y + size.y);
    if (columns) {
      y += size.y + kItemGapPx;
      line_extent = std::max(line_extent, size.x);
    } else {
      x += size.x + kItemGapPx;
      line_extent = std::max(line_extent, size.y);
    }
  }
  f.fits = f.w <= width && f.h <= height;
  return f;
}

/// The largest common scale at which `grid` flows into width × height.
double BestScale(const std::vector<const TpWeightMatrix*>& grid, const std::vector<float>& min_w, float width,
                 float height, float line_h, bool columns) {
  double lo = 1e-6, hi = 1e3;
  if (FlowItems(grid, min_w, hi, width, height, line_h, columns).fits) return hi;
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(lo * hi);  // bisect on a log scale
    (FlowItems(grid, min_w, mid, width, height, line_h, columns).fits ? lo : hi) = mid;
  }
  return lo;
}

/// Spends the width a flow leaves on longer captions: every line (a row's
/// items, or a whole column) grows to show the next longer caption of its
/// items, the shortest captions first, while the spare width lasts.
void WidenForCaptions(const std::vector<const TpWeightMatrix*>& grid, float width, bool columns,
                      const std::function<float(const std::string&)>& text_w, Flow* f) {
  if (grid.empty()) return;
  const int lines = f->line.back() + 1;
  std::vector<std::vector<std::string>> captions;
  std::size_t levels = 0;
  for (const TpWeightMatrix* m : grid) {
    captions.push_back(TpSplitCaptions(*m));
    levels = std::max(levels, captions.back().size());
  }
  auto want = [&](std::size_t i, std::size_t level) {
    const std::vector<std::string>& c = captions[i];
    return text_w(c[std::min(level, c.size() - 1)]) + 4;
  };
  if (columns) {
    // A column is as wide as its widest item; all of them take that width.
    std::vector<float> col_w(static_cast<std::size_t>(lines), 0);
    for (std::size_t i = 0; i < grid.size(); ++i) {
      float& w = col_w[static_cast<std::size_t>(f->line[i])];
      w = std::max(w, f->size[i].x);
    }
    float used = kItemGapPx * static_cast<float>(lines - 1);
    for (float w : col_w) used += w;
    float spare = width - used;
    for (std::size_t level = levels; level-- > 0;) {
      std::vector<float> next = col_w;
      for (std::size_t i = 0; i < grid.size(); ++i) {
        float& w = next[static_cast<std::size_t>(f->line[i])];
        w = std::max(w, want(i, level));
      }
      float need = 0;
      for (int c = 0; c < lines; ++c) need += next[static_cast<std::size_t>(c)] - col_w[static_cast<std::size_t>(c)];
      if (need > spare) break;
      col_w = next;
      spare -= need;
    }
    std::vector<float> col_x(static_cast<std::size_t>(lines), 0);
    for (int c = 1; c < lines; ++c) {
      col_x[static_cast<std::size_t>(c)] = col_x[static_cast<std::size_t>(c - 1)] + col_w[static_cast<std::size_t>(c - 1)] + kItemGapPx;
    }
    for (std::size_t i = 0; i < grid.size(); ++i) {
      f->pos[i].x = col_x[static_cast<std::size_t>(f->line[i])];
      f->size[i].x = col_w[static_cast<std::size_t>(f->line[i])];
    }
  } else {
    // Each row separately: its items grow in place and move right.
    for (int row = 0; row < lines; ++row) {
      std::vector<std::size_t> items;
      for (std::size_t i = 0; i < grid.size(); ++i)
        if (f->line[i] == row) items.push_back(i);
      float used = kItemGapPx * static_cast<float>(items.size() - 1);
      for (std::size_t i : items) used += f->size[i].x;
      float spare = width - used;
      for (std::size_t level = levels; level-- > 0;) {
        float need = 0;
        for (std::size_t i : items) need += std::max(0.0f, want(i, level) - f->size[i].x);
        if (need > spare) break;
        for (std::size_t i : items) f->size[i].x = std::max(f->size[i].x, want(i, level));
        spare -= need;
      }
      float x = 0;
      for (std::size_t i : items) {
        f->pos[i].x = x;
        x += f->size[i].x + kItemGapPx;
      }
    }
  }
  f->w = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) f->w = std::max(f->w, f->pos[i].x + f->size[i].x);
}

/// Places `grid` (whose indices into the matrices are `index`) at scale
/// `px` from (x0, y0) in a width × height area; returns the bottom edge.
float PlaceGrid(const std::vector<const TpWeightMatrix*>& grid, const std::vector<float>& min_w,
                const std::vector<int>& index, double px, float x0, float y0, float width, float height, bool columns,
                float line_h, const std::function<float(const std::string&)>& text_w,
                std::vector<TpWeightBox>* boxes) {
  Flow f = FlowItems(grid, min_w, px, width, height, line_h, columns);
  WidenForCaptions(grid, width, columns, text_w, &f);
  for (std::size_t k = 0; k < grid.size(); ++k) {
    const TpWeightMatrix& m = *grid[k];
    const float x = x0 + f.pos[k].x;
    const float y = y0 + f.pos[k].y;
    TpWeightBox box;
    box.matrix = index[k];
    box.item = {{x, y}, {x + f.size[k].x, y + f.size[k].y}};
    box.title = {{x, y}, {x + f.size[k].x, y + line_h}};
    box.caption = {{x, y + line_h}, {x + f.size[k].x, y + 2 * line_h}};
    const Vec2 shape = MatrixSize(m, px);
    const float extra = StackExtra(m);
    box.shape = {{x, y + 2 * line_h + 4}, {x + shape.x + extra, y + 2 * line_h + 4 + shape.y + extra}};
    box.blocks = BlockRects(m, box.shape);
    boxes->push_back(std::move(box));
  }
  return grid.empty() ? y0 : y0 + f.h;
}

/// Vector lines from (x0, y0) in `columns` columns across `width`:
/// "a [128]" | strip (its length by elements, the longest the most) |
/// caption in what is left. Returns the bottom edge.
float PlaceVectors(const std::vector<TpWeightMatrix>& matrices, const std::vector<int>& index, float x0, float y0,
                   float width, int columns, float line_h, const std::function<float(const std::string&)>& text_w,
                   std::vector<TpWeightBox>* boxes) {
  if (index.empty()) return y0;
  const float row_h = VectorRowPx(line_h);
  const auto rows = static_cast<int>((index.size() + static_cast<std::size_t>(columns) - 1) / columns);
  const float column_w = (width - kItemGapPx * static_cast<float>(columns - 1)) / static_cast<float>(columns);
  float label_w = 0;
  std::int64_t longest = 1;
  for (int i : index) {
    const TpWeightMatrix& m = matrices[static_cast<std::size_t>(i)];
    label_w = std::max(label_w, text_w(TpWeightTitle(m)));
    longest = std::max(longest, m.length());
  }
  label_w = std::min(label_w + 6, column_w * 0.3f);
  const float strip_max = std::max(24.0f, (column_w - label_w) * 0.4f);
  for (std::size_t k = 0; k < index.size(); ++k) {
    const TpWeightMatrix& m = matrices[static_cast<std::size_t>(index[k])];
    const float x = x0 + static_cast<float>(static_cast<int>(k) / rows) * (column_w + kItemGapPx);
    const float y = y0 + static_cast<float>(static_cast<int>(k) % rows) * row_h;
    const float strip_w =
        std::max(24.0f, strip_max * static_cast<float>(static_cast<double>(m.length()) / static_cast<double>(longest)));
    const float strip_y = y + (row_h - 4 - kStripPx) * 0.5f;
    TpWeightBox box;
    box.matrix = index[k];
    box.item = {{x, y}, {x + column_w, y + row_h - 4}};
    box.title = {{x, y}, {x + label_w, y + line_h}};
    box.shape = {{x + label_w, strip_y}, {x + label_w + strip_w, strip_y + kStripPx}};
    box.caption = {{std::min(box.shape.max.x + 8, x + column_w), y}, {x + column_w, y + line_h}};
    box.blocks = BlockRects(m, box.shape);
    boxes->push_back(std::move(box));
  }
  return y0 + static_cast<float>(rows) * row_h - 4;
}

}  // namespace

TpWeightLayout LayoutTpWeights(const std::vector<TpWeightMatrix>& matrices, float width, float height,
                               float line_h, const std::function<float(const std::string&)>& text_w) {
  std::vector<const TpWeightMatrix*> grid;
  std::vector<int> grid_index, vector_index;
  for (std::size_t i = 0; i < matrices.size(); ++i) {
    if (matrices[i].vector) {
      vector_index.push_back(static_cast<int>(i));
    } else {
      grid.push_back(&matrices[i]);
      grid_index.push_back(static_cast<int>(i));
    }
  }
  const float row_h = VectorRowPx(line_h);
  const auto vectors = static_cast<int>(vector_index.size());
  // A matrix item is never narrower than its title, nor than room for a short caption.
  std::vector<float> min_w;
  for (const TpWeightMatrix* m : grid) min_w.push_back(std::max(kMinMatrixItemPx, text_w(TpWeightTitle(*m)) + 8));

  // Where the vectors go: under the matrices (in two columns when wide),
  // or in a column at the right, leaving the matrices the whole height.
  const int columns = width >= 420 && vectors > 2 ? 2 : 1;
  const float below_h = static_cast<float>((vectors + columns - 1) / columns) * row_h;
  const float gap = vectors > 0 && !grid.empty() ? kItemGapPx : 0;
  const float side_w = std::clamp(width * 0.4f, 220.0f, 360.0f);
  const bool can_side = !grid.empty() && vectors > 0 && width >= 520 &&
                        static_cast<float>(vectors) * row_h <= height;

  // Every arrangement at its best scale; the first (rows, vectors below)
  // unless another draws the matrices at least 10% larger.
  struct Choice {
    bool side = false, flow_columns = false;
    float grid_w = 0, grid_h = 0;
    double px = 0;
  };
  std::vector<Choice> choices;
  for (bool side : {false, true}) {
    if (side && !can_side) continue;
    for (bool flow_columns : {false, true}) {
      Choice c{side, flow_columns, side ? width - side_w - kItemGapPx : width,
               side ? height : std::max(0.0f, height - below_h - gap), 0};
      c.px = BestScale(grid, min_w, c.grid_w, c.grid_h, line_h, flow_columns);
      choices.push_back(c);
    }
  }
  Choice best = choices.front();
  for (const Choice& c : choices) {
    if (c.px > best.px * 1.1) best = c;
  }

  TpWeightLayout layout;
  layout.px_per_element = best.px;
  const float grid_bottom = PlaceGrid(grid, min_w, grid_index, best.px, 0, 0, best.grid_w, best.grid_h, best.flow_columns,
                                      line_h, text_w, &layout.boxes);
  if (best.side) {
    const float vector_bottom = PlaceVectors(matrices, vector_index, width - side_w, 0, side_w, 1, line_h, text_w,
                                             &layout.boxes);
    layout.height = std::max(grid_bottom, vector_bottom);
  } else {
    layout.height = PlaceVectors(matrices, vector_index, 0, grid.empty() ? 0 : grid_bottom + gap, width, columns,
                                 line_h, text_w, &layout.boxes);
  }
  return layout;
}

std::vector<RankCompute> RanksComputingAt(const TimelineStore& store, const Plan& plan, TimeNs t_ns) {
  std::vector<RankCompute> ranks(static_cast<std::size_t>(std::max(plan.num_ranks, 0)));
  for (const TimelineRow& row : store.rows()) {
    if (row.lane != Lane::kCompute || row.rank < 0 || row.rank >= plan.num_ranks) continue;
    // Ends are sorted like starts (one op at a time): the first op still
    // running at t is the only candidate.
    auto it = std::partition_point(row.events.begin(), row.events.end(),
                                   [&](const Event& e) { return e.end_ns <= t_ns; });
    RankCompute& rc = ranks[static_cast<std::size_t>(row.rank)];
    if (it != row.events.end() && it->start_ns <= t_ns && it->kind == OpKind::kCompute) {
      rc.busy = true;
    } else if (it != row.events.begin() && std::prev(it)->end_ns == t_ns && std::prev(it)->start_ns < t_ns &&
               std::prev(it)->kind == OpKind::kCompute) {
      rc.just_done = true;
      --it;
    } else {
      continue;
    }
    if (it->op >= 0 && static_cast<std::size_t>(it->op) < plan.ops.size()) {
      rc.phase = plan.ops[static_cast<std::size_t>(it->op)].tags.phase;
      rc.op = it->op;
    }
  }
  return ranks;
}

std::vector<BufferId> BuffersOfOp(const Plan& plan, int op) {
  std::vector<BufferId> buffers;
  if (op < 0 || static_cast<std::size_t>(op) >= plan.ops.size()) return buffers;
  const Op& o = plan.ops[static_cast<std::size_t>(op)];
  if (o.kind != OpKind::kCompute) return buffers;
  for (int k = 0; k < o.kernel_count; ++k) {
    const std::size_t index = static_cast<std::size_t>(o.kernel_begin + k);
    if (index >= plan.kernels.size()) break;
    const KernelCall& call = plan.kernels[index];
    for (const BufferSlice* slice : {&call.a, &call.b, &call.c, &call.d}) {
      if (slice->buffer != kNoBuffer && slice->count > 0) buffers.push_back(slice->buffer);
    }
  }
  std::sort(buffers.begin(), buffers.end());
  buffers.erase(std::unique(buffers.begin(), buffers.end()), buffers.end());
  return buffers;
}

std::vector<TpCollectiveName> NameTpCollectives(const std::vector<TpCollective>& collectives) {
  std::vector<TpCollectiveName> names;
  int counts[3] = {0, 0, 0};
  for (const TpCollective& c : collectives) {
    TpCollectiveName n;
    n.seq = c.seq;
    n.forward = c.forward;
    n.what = c.what;
    const char* prefix = "AR";
    switch (c.kind) {
      case GroupCollectiveKind::kAllReduce: prefix = "AR"; break;
      case GroupCollectiveKind::kReduceScatter: prefix = "RS"; break;
      case GroupCollectiveKind::kAllGather: prefix = "AG"; break;
    }
    n.two_passes = c.kind == GroupCollectiveKind::kAllReduce;
    n.tag = prefix + std::to_string(++counts[static_cast<int>(c.kind) % 3]);
    n.name = n.tag + (c.forward ? " fwd" : " bwd");
    names.push_back(std::move(n));
  }
  return names;
}

const TpCollectiveName* FindTpCollective(const std::vector<TpCollectiveName>& names, int seq) {
  for (const TpCollectiveName& n : names) {
    if (n.seq == seq) return &n;
  }
  return nullptr;
}

}  // namespace shardlab::gui
