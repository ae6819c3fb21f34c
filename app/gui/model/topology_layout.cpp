// TopologyLayout: each host is laid out in "design units" (a tile is 2 x 1,
// the same scale on both axes, so a square stays square on screen), then the
// whole picture is scaled once to fit the view and converted to view units.
//
//   one host:   GPU row(s) / NVSwitch bar / PCIe switches / CPUs / NICs / net
//   many hosts: one such block per host, framed, in a grid; fabric below
//
// Rows below the GPUs are ordered by the mean x of their already placed
// neighbours (a one-pass barycentre sort), so a PCIe switch sits under its
// GPUs and a CPU under its switches without knowing any preset by name.
#include "app/gui/model/topology_layout.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <tuple>

#include "app/gui/i18n/language.h"
#include "engine/topology/this_machine.h"

namespace shardlab::gui {
namespace {

constexpr float kTileW = 2.0f;  // design units: twice as wide as tall, for the label
constexpr float kTileH = 1.0f;
constexpr float kGapX = 0.6f;  // between neighbouring tiles of a row
constexpr float kSlotW = kTileW + kGapX;
constexpr float kLayerGapY = 1.4f;        // between layers: room for the link lines
constexpr float kWrapGapY = 0.7f;         // between wrapped rows of one layer
constexpr int kStarSplitGpus = 8;         // more GPUs on one switch: half above it, half below
constexpr int kRowWidths[] = {8, 4, 16};  // tiles per row tried; the first is the default
constexpr float kBetterFit = 1.15f;       // another row width must give tiles this much larger
constexpr float kHubShare = 0.45f;        // an NVSwitch / fabric bar spans this share of its slot
constexpr float kBoxPad = 0.7f;           // host frame around its tiles
constexpr float kBoxLabelH = 0.9f;        // extra room at a frame's top for "node 3"
constexpr float kBoxGap = 1.2f;           // between host frames
constexpr float kViewMargin = 0.02f;      // view units kept free around the picture

// DGX-1 quads: corner spacing equal on both axes (a square on screen), and
// the right quad dropped so the i -> i+4 lines pass below the left quad's
// right-hand tiles, like a cube drawn in oblique projection.
constexpr float kQuadSide = 3.6f;
constexpr float kQuadGapX = 3.0f;  // between the quads' facing tile edges
constexpr float kQuadDropY = 2.0f;

struct Placed {
  int node = -1;
  Rect rect;  // design units
};

/// One host's tiles in design units, with (0, 0) at its top-left.
struct Block {
  std::vector<Placed> tiles;
  float width = 0;
  float height = 0;
  std::string shape;
};

/// One row of tiles spread evenly across the block's width.
struct Row {
  std::vector<int> nodes;
  std::vector<int> slots;  // slot of each node; empty: 0, 1, 2 ...
  int slot_count = 0;      // 0: nodes.size()
  bool hub = false;        // NVSwitch or fabric: a wide bar
  float gap_above = kLayerGapY;
};

Rect TileAt(float center_x, float center_y, float width, float height) {
  return Rect{{center_x - width / 2, center_y - height / 2},
              {center_x + width / 2, center_y + height / 2}};
}

// The number at the end of a name, after any "h3." host prefix: "pcie2" -> 2.
int TrailingNumber(const std::string& name) {
  std::size_t end = name.size();
  std::size_t begin = end;
  while (begin > 0 && name[begin - 1] >= '0' && name[begin - 1] <= '9') --begin;
  if (begin == end || end - begin > 6) return -1;
  return std::stoi(name.substr(begin));
}

class Graph {
 public:
  explicit Graph(const Topology& topology) : topology_(topology) {
    neighbours_.resize(topology.nodes.size());
    for (const Link& link : topology.links) {
      if (!Valid(link.a) || !Valid(link.b)) continue;
      neighbours_[static_cast<std::size_t>(link.a)].push_back(link.b);
      neighbours_[static_cast<std::size_t>(link.b)].push_back(link.a);
    }
    rank_.assign(topology.nodes.size(), -1);
    for (std::size_t r = 0; r < topology.gpus.size(); ++r) {
      if (Valid(topology.gpus[r]))
        rank_[static_cast<std::size_t>(topology.gpus[r])] = static_cast<int>(r);
    }
  }

  bool Valid(int node) const {
    return node >= 0 && static_cast<std::size_t>(node) < topology_.nodes.size();
  }
  NodeKind Kind(int node) const { return topology_.nodes[static_cast<std::size_t>(node)].kind; }
  const std::vector<int>& Neighbours(int node) const {
    return neighbours_[static_cast<std::size_t>(node)];
  }
  /// Rank of a GPU node (its index in topology.gpus), or -1.
  int Rank(int node) const { return rank_[static_cast<std::size_t>(node)]; }
  bool Linked(int a, int b) const {
    const std::vector<int>& n = Neighbours(a);
    return std::find(n.begin(), n.end(), b) != n.end();
  }
  bool LinkedToKind(int node, NodeKind kind) const {
    for (const int other : Neighbours(node))
      if (Kind(other) == kind) return true;
    return false;
  }
  const Topology& topology() const { return topology_; }

 private:
  const Topology& topology_;
  std::vector<std::vector<int>> neighbours_;
  std::vector<int> rank_;
};

// Two fully linked quads (ranks 0-3 and 4-7 of the host) joined i <-> i+4.
bool IsCubeMesh(const Graph& graph, const std::vector<int>& gpus) {
  if (gpus.size() != 8) return false;
  auto at = [&](int i) { return gpus[static_cast<std::size_t>(i)]; };
  for (int quad = 0; quad < 8; quad += 4) {
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j)
        if (!graph.Linked(at(quad + i), at(quad + j))) return false;
  }
  for (int i = 0; i < 4; ++i)
    if (!graph.Linked(at(i), at(i + 4))) return false;
  return true;
}

bool HasGpuToGpuLink(const Graph& graph, const std::vector<int>& gpus) {
  for (const int gpu : gpus)
    if (graph.LinkedToKind(gpu, NodeKind::kGpu)) return true;
  return false;
}

// Splits an ordered layer into rows of at most `per_row` tiles.
void AddWrapped(std::vector<Row>& rows, const std::vector<int>& nodes, bool hub, float gap_above,
                int per_row) {
  const auto step = static_cast<std::size_t>(per_row);
  for (std::size_t begin = 0; begin < nodes.size(); begin += step) {
    Row row;
    const std::size_t end = std::min(nodes.size(), begin + step);
    row.nodes.assign(nodes.begin() + static_cast<std::ptrdiff_t>(begin),
                     nodes.begin() + static_cast<std::ptrdiff_t>(end));
    row.hub = hub;
    row.gap_above = begin == 0 ? gap_above : kWrapGapY;
    rows.push_back(std::move(row));
  }
}

// Orders `nodes` by the mean x of their neighbours placed so far; nodes
// with none keep their order, after the others.
std::vector<int> ByBarycentre(const Graph& graph, std::vector<int> nodes,
                              const std::vector<float>& placed_x) {
  const float none = std::numeric_limits<float>::max();
  std::vector<std::pair<float, int>> keyed;
  keyed.reserve(nodes.size());
  for (const int node : nodes) {
    float sum = 0;
    int count = 0;
    for (const int other : graph.Neighbours(node)) {
      const float x = placed_x[static_cast<std::size_t>(other)];
      if (std::isnan(x)) continue;
      sum += x;
      ++count;
    }
    keyed.emplace_back(count > 0 ? sum / static_cast<float>(count) : none, node);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i] = keyed[i].second;
  return nodes;
}

/// Lays out the nodes of one host (or of a whole single-host machine),
/// at most `per_row` tiles a row (the cube-mesh quads excepted).
Block LayoutHost(const Graph& graph, const std::vector<int>& nodes, int per_row) {
  std::vector<int> gpus, nvswitches, pcie, cpus, nics, nets;
  for (const int node : nodes) {
    switch (graph.Kind(node)) {
      case NodeKind::kGpu: gpus.push_back(node); break;
      case NodeKind::kNvSwitch: nvswitches.push_back(node); break;
      case NodeKind::kPcieSwitch: pcie.push_back(node); break;
      case NodeKind::kCpu: cpus.push_back(node); break;
      case NodeKind::kNic: nics.push_back(node); break;
      case NodeKind::kNetSwitch: nets.push_back(node); break;
    }
  }
  // GPUs in rank order; a GPU missing from topology.gpus goes last.
  std::stable_sort(gpus.begin(), gpus.end(), [&](int a, int b) {
    const unsigned ra = static_cast<unsigned>(graph.Rank(a));  // -1 wraps to the end
    const unsigned rb = static_cast<unsigned>(graph.Rank(b));
    return ra < rb;
  });

  Block block;
  bool gpu_on_switch = false;
  for (const int gpu : gpus)
    gpu_on_switch = gpu_on_switch || graph.LinkedToKind(gpu, NodeKind::kNvSwitch);
  const bool gpu_links = HasGpuToGpuLink(graph, gpus);
  bool gpus_on_pcie = !gpus.empty();
  for (const int gpu : gpus) {
    gpus_on_pcie = gpus_on_pcie && (graph.LinkedToKind(gpu, NodeKind::kPcieSwitch) ||
                                    graph.LinkedToKind(gpu, NodeKind::kCpu));
  }

  const bool cube = nvswitches.empty() && IsCubeMesh(graph, gpus);
  std::vector<Row> rows;  // top to bottom; from first_lower_row on, ordered when placed
  if (!nvswitches.empty() && gpu_on_switch) {
    // Star: the GPUs above the switch bar; with more than 8 GPUs half go
    // above and half below, the DGX-2 baseboards' picture.
    block.shape = "switch-star";
    const std::size_t above = gpus.size() > kStarSplitGpus ? (gpus.size() + 1) / 2 : gpus.size();
    AddWrapped(rows, {gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(above)}, false, 0,
               per_row);
    AddWrapped(rows, nvswitches, true, kLayerGapY, per_row);
    AddWrapped(rows, {gpus.begin() + static_cast<std::ptrdiff_t>(above), gpus.end()}, false,
               kLayerGapY, per_row);
  } else if (cube) {
    block.shape = "cube-mesh";  // GPUs placed by hand below
  } else if (gpu_links && gpus.size() <= 2 * static_cast<std::size_t>(per_row) && gpus.size() > 2) {
    // Direct GPU links of unknown pattern: a racetrack (top row left to
    // right, bottom row right to left) so rank neighbours stay neighbours.
    block.shape = "grid";
    const int top = static_cast<int>((gpus.size() + 1) / 2);
    Row upper, lower;
    upper.gap_above = 0;
    lower.gap_above = kLayerGapY;
    upper.slot_count = lower.slot_count = top;
    for (int i = 0; i < static_cast<int>(gpus.size()); ++i) {
      Row& row = i < top ? upper : lower;
      row.nodes.push_back(gpus[static_cast<std::size_t>(i)]);
      row.slots.push_back(i < top ? i : top - 1 - (i - top));
    }
    rows.push_back(std::move(upper));
    rows.push_back(std::move(lower));
  } else {
    block.shape = !gpu_links && nvswitches.empty() && gpus_on_pcie ? "pcie-tree" : "grid";
    AddWrapped(rows, gpus, false, 0, per_row);
    AddWrapped(rows, nvswitches, true, kLayerGapY, per_row);
  }
  const std::size_t first_lower_row = rows.size();
  // Below: the PCIe tree, the CPUs, then the NICs at the bottom, facing the
  // network. These rows are ordered once their upper neighbours are placed.
  for (const std::vector<int>* layer : {&pcie, &cpus, &nics, &nets}) {
    if (layer->empty()) continue;
    Row layer_row;
    layer_row.nodes = *layer;
    layer_row.hub = layer == &nets;
    rows.push_back(std::move(layer_row));
  }

  // Block width: the widest row (counting wrap), or the cube's two quads.
  const float cube_width = 2 * (kQuadSide + kTileW) + kQuadGapX;
  const float cube_height = kQuadSide + kQuadDropY + kTileH;
  float width = cube ? cube_width : 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int count =
        i < first_lower_row
            ? (rows[i].slot_count > 0 ? rows[i].slot_count : static_cast<int>(rows[i].nodes.size()))
            : std::min(per_row, static_cast<int>(rows[i].nodes.size()));
    width = std::max(width, static_cast<float>(count) * kSlotW);
  }
  width = std::max(width, kSlotW);

  std::vector<float> placed_x(graph.topology().nodes.size(), std::nanf(""));
  auto place = [&](int node, float cx, float cy, float w) {
    block.tiles.push_back(Placed{node, TileAt(cx, cy, w, kTileH)});
    placed_x[static_cast<std::size_t>(node)] = cx;
  };

  float y = 0;  // top of the next row
  if (cube) {
    // Corners clockwise from top-left, so the quad's ring 0-1-2-3 is its
    // perimeter and the diagonals 0-2, 1-3 cross inside (the NVIDIA picture).
    const float dx[4] = {0, kQuadSide, kQuadSide, 0};
    const float dy[4] = {0, 0, kQuadSide, kQuadSide};
    const float left = (width - cube_width) / 2 + kTileW / 2;
    const float right = left + kQuadSide + kTileW + kQuadGapX;
    for (int i = 0; i < 8; ++i) {
      const int corner = i % 4;
      const float x0 = i < 4 ? left : right;
      const float y0 = kTileH / 2 + (i < 4 ? 0 : kQuadDropY);
      place(gpus[static_cast<std::size_t>(i)], x0 + dx[corner], y0 + dy[corner], kTileW);
    }
    y = cube_height;
  }
  bool first = !cube;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<Row> wrapped;
    if (i < first_lower_row) {
      wrapped.push_back(rows[i]);
    } else {
      AddWrapped(wrapped, ByBarycentre(graph, rows[i].nodes, placed_x), rows[i].hub, kLayerGapY,
                 per_row);
    }
    for (const Row& row : wrapped) {
      if (row.nodes.empty()) continue;
      y += first ? 0 : row.gap_above;
      first = false;
      const int slots = row.slot_count > 0 ? row.slot_count : static_cast<int>(row.nodes.size());
      const float slot_w = width / static_cast<float>(slots);
      float tile_w = std::min(kTileW, slot_w - kGapX);
      if (row.hub) tile_w = std::clamp(kHubShare * slot_w, kTileW, slot_w - kGapX);
      for (std::size_t k = 0; k < row.nodes.size(); ++k) {
        const int slot = row.slots.empty() ? static_cast<int>(k) : row.slots[k];
        place(row.nodes[k], (static_cast<float>(slot) + 0.5f) * slot_w, y + kTileH / 2, tile_w);
      }
      y += kTileH;
    }
  }
  block.width = width;
  block.height = std::max(y, kTileH);
  return block;
}

// "GPU3", "NVSwitch", "PCIe sw 1", "CPU0", "NIC7", "IB switch".
std::string TileLabel(const Graph& graph, int node, int index_in_kind, int count_in_kind) {
  const Node& n = graph.topology().nodes[static_cast<std::size_t>(node)];
  const int number = TrailingNumber(n.name) >= 0 ? TrailingNumber(n.name) : index_in_kind;
  const std::string suffix = count_in_kind > 1 ? " " + std::to_string(number) : "";
  switch (n.kind) {
    case NodeKind::kGpu:
      return "GPU" + std::to_string(graph.Rank(node) >= 0 ? graph.Rank(node) : number);
    case NodeKind::kNvSwitch:
      // The model of virtual ranks on one GPU joins them through its memory (this_machine.h).
      if (graph.topology().name == "this" && n.name == kSharedMemoryNode) return Tr("shared HBM");
      if (graph.topology().name == "this" && n.name == kSharedMachineNode) return Tr("HBM and links");
      return "NVSwitch" + suffix;
    case NodeKind::kPcieSwitch: return "PCIe sw " + std::to_string(number);
    case NodeKind::kCpu: return "CPU" + std::to_string(number);
    case NodeKind::kNic: return "NIC" + std::to_string(number);
    case NodeKind::kNetSwitch: {
      // Named after what it switches: InfiniBand, Ethernet, or neither.
      const char* what = "Net switch";
      for (const Link& link : graph.topology().links) {
        if (link.a != node && link.b != node) continue;
        if (link.kind == LinkKind::kInfiniBand) what = "IB switch";
        if (link.kind == LinkKind::kEthernet) what = "Eth switch";
        if (link.kind == LinkKind::kNvLink4) what = "NVLink switch";
      }
      return what + suffix;
    }
  }
  return n.name;
}

// Labels every tile; numbers come from the name, else the order within the host.
void LabelTiles(const Graph& graph, TopologyLayout& layout) {
  std::map<std::pair<int, int>, int> seen;  // (host or -1 for fabric, kind) -> count so far
  std::map<std::pair<int, int>, int> total;
  auto key = [&](int node) {
    const Node& n = graph.topology().nodes[static_cast<std::size_t>(node)];
    const int host = n.kind == NodeKind::kNetSwitch ? -1 : n.host;
    return std::make_pair(host, static_cast<int>(n.kind));
  };
  for (std::size_t node = 0; node < layout.tiles.size(); ++node)
    ++total[key(static_cast<int>(node))];
  for (std::size_t node = 0; node < layout.tiles.size(); ++node) {
    const auto k = key(static_cast<int>(node));
    layout.tiles[node].label = TileLabel(graph, static_cast<int>(node), seen[k]++, total[k]);
  }
}

// View height units per design unit when a picture of `width` x `height`
// is fitted, uniformly, into a view `aspect` wide and 1 high.
float FitScale(float width, float height, float aspect) {
  return std::min(aspect * (1 - 2 * kViewMargin) / std::max(width, 1e-6f),
                  (1 - 2 * kViewMargin) / std::max(height, 1e-6f));
}

// Maps design units to view units: one uniform scale (shapes keep their
// on-screen proportions), centred.
struct Fit {
  float scale = 1;     // view height units per design unit
  float offset_x = 0;  // in view height units
  float offset_y = 0;
  float aspect = 1;

  Fit(float design_w, float design_h, float view_aspect)
      : scale(FitScale(design_w, design_h, view_aspect)), aspect(view_aspect) {
    offset_x = (aspect - design_w * scale) / 2;
    offset_y = (1 - design_h * scale) / 2;
  }
  Rect Map(const Rect& r) const {
    auto clamp01 = [](float v) { return std::clamp(v, 0.0f, 1.0f); };
    return Rect{
        {clamp01((offset_x + r.min.x * scale) / aspect), clamp01(offset_y + r.min.y * scale)},
        {clamp01((offset_x + r.max.x * scale) / aspect), clamp01(offset_y + r.max.y * scale)}};
  }
};

Rect Shifted(const Rect& r, float dx, float dy) {
  return Rect{{r.min.x + dx, r.min.y + dy}, {r.max.x + dx, r.max.y + dy}};
}

/// The whole machine in design units, before it is fitted to the view.
struct Picture {
  std::vector<Placed> tiles;
  std::vector<HostBox> hosts;  // rects in design units
  float width = 0;
  float height = 0;
  std::string shape;
};

Picture OneHost(const Graph& graph, int per_row) {
  std::vector<int> all(graph.topology().nodes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  Block block = LayoutHost(graph, all, per_row);
  return Picture{std::move(block.tiles), {}, block.width, block.height, block.shape};
}

// Equal cells in a grid, one framed block per host, the fabric in wide bars
// below. The column count is the one that gives the largest tiles,
// preferring side by side when that is nearly as good.
Picture ManyHosts(const Graph& graph, const std::map<int, std::vector<int>>& hosts,
                  const std::vector<int>& fabric, int per_row, float aspect) {
  std::vector<std::pair<int, Block>> blocks;
  float block_w = 0, block_h = 0;
  for (const auto& [host, nodes] : hosts) {
    blocks.emplace_back(host, LayoutHost(graph, nodes, per_row));
    block_w = std::max(block_w, blocks.back().second.width);
    block_h = std::max(block_h, blocks.back().second.height);
  }
  const float cell_w = block_w + 2 * kBoxPad;
  const float cell_h = block_h + 2 * kBoxPad + kBoxLabelH;
  const int count = static_cast<int>(blocks.size());
  const int fabric_count = static_cast<int>(fabric.size());
  auto fabric_per_row = [&](float grid_w) {
    return std::max(1, std::min(fabric_count, static_cast<int>(grid_w / kSlotW)));
  };
  auto fabric_height = [&](float grid_w) {
    if (fabric.empty()) return 0.0f;
    const int rows = (fabric_count + fabric_per_row(grid_w) - 1) / fabric_per_row(grid_w);
    return 2 * kLayerGapY + static_cast<float>(rows) * kTileH +
           static_cast<float>(rows - 1) * kWrapGapY;
  };
  auto design_size = [&](int cols) {
    const int rows = (count + cols - 1) / cols;
    const float grid_w = static_cast<float>(cols) * cell_w + static_cast<float>(cols - 1) * kBoxGap;
    return std::make_pair(grid_w, static_cast<float>(rows) * cell_h +
                                      static_cast<float>(rows - 1) * kBoxGap +
                                      fabric_height(grid_w));
  };
  auto scale_for = [&](int cols) {
    const auto [w, h] = design_size(cols);
    return FitScale(w, h, aspect);
  };
  float best_scale = 0;
  for (int c = 1; c <= count; ++c) best_scale = std::max(best_scale, scale_for(c));
  int cols = 1;
  for (int c = count; c >= 1; --c) {
    if (scale_for(c) >= 0.95f * best_scale) {
      cols = c;
      break;
    }
  }

  Picture picture;
  picture.shape = "multi-host";
  std::tie(picture.width, picture.height) = design_size(cols);
  for (int i = 0; i < count; ++i) {
    const auto& [host, block] = blocks[static_cast<std::size_t>(i)];
    const float cell_x = static_cast<float>(i % cols) * (cell_w + kBoxGap);
    const float cell_y = static_cast<float>(i / cols) * (cell_h + kBoxGap);
    // The block centred in its cell, its frame hugging it.
    const float dx = cell_x + (cell_w - block.width) / 2;
    const float dy = cell_y + kBoxPad + kBoxLabelH + (block_h - block.height) / 2;
    for (const Placed& p : block.tiles)
      picture.tiles.push_back(Placed{p.node, Shifted(p.rect, dx, dy)});
    const Rect frame{{dx - kBoxPad, dy - kBoxPad - kBoxLabelH},
                     {dx + block.width + kBoxPad, dy + block.height + kBoxPad}};
    picture.hosts.push_back(HostBox{host, frame, "node " + std::to_string(host)});
  }
  const int fabric_row = fabric_per_row(picture.width);
  float top = picture.height - fabric_height(picture.width) + kLayerGapY;
  for (int begin = 0; begin < fabric_count; begin += fabric_row) {
    const int in_row = std::min(fabric_row, fabric_count - begin);
    const float slot_w = picture.width / static_cast<float>(in_row);
    const float tile_w = std::clamp(kHubShare * slot_w, kTileW, slot_w - kGapX);
    for (int k = 0; k < in_row; ++k) {
      const float cx = (static_cast<float>(k) + 0.5f) * slot_w;
      picture.tiles.push_back(Placed{fabric[static_cast<std::size_t>(begin + k)],
                                     TileAt(cx, top + kTileH / 2, tile_w, kTileH)});
    }
    top += kTileH + kWrapGapY;
  }
  return picture;
}

}  // namespace

TopologyLayout LayoutTopology(const Topology& topology, float aspect) {
  if (!(aspect > 0) || !std::isfinite(aspect)) aspect = 1;
  aspect = std::clamp(aspect, 0.05f, 20.0f);
  const Graph graph(topology);
  TopologyLayout layout;
  layout.tiles.resize(topology.nodes.size());
  for (std::size_t i = 0; i < topology.nodes.size(); ++i)
    layout.tiles[i].node = static_cast<int>(i);
  if (topology.nodes.empty()) {
    layout.shape = "grid";
    return layout;
  }

  // Hosts of everything but the network fabric, which sits between boxes.
  std::map<int, std::vector<int>> hosts;
  std::vector<int> fabric;
  for (std::size_t i = 0; i < topology.nodes.size(); ++i) {
    const Node& node = topology.nodes[i];
    if (node.kind == NodeKind::kNetSwitch) {
      fabric.push_back(static_cast<int>(i));
    } else {
      hosts[node.host].push_back(static_cast<int>(i));
    }
  }

  // Rows of 8 read best; a narrower or wider row wins only when it makes
  // the tiles clearly larger (a tall panel, a very wide one).
  auto picture_for = [&](int per_row) {
    return hosts.size() <= 1 ? OneHost(graph, per_row)
                             : ManyHosts(graph, hosts, fabric, per_row, aspect);
  };
  Picture best = picture_for(kRowWidths[0]);
  const float default_scale = FitScale(best.width, best.height, aspect);
  float best_scale = default_scale;
  for (const int per_row : kRowWidths) {
    if (per_row == kRowWidths[0]) continue;
    Picture candidate = picture_for(per_row);
    const float scale = FitScale(candidate.width, candidate.height, aspect);
    if (scale > kBetterFit * default_scale && scale > best_scale) {
      best = std::move(candidate);
      best_scale = scale;
    }
  }

  const Fit fit(best.width, best.height, aspect);
  for (const Placed& p : best.tiles)
    layout.tiles[static_cast<std::size_t>(p.node)].rect = fit.Map(p.rect);
  for (HostBox& box : best.hosts) box.rect = fit.Map(box.rect);
  layout.hosts = std::move(best.hosts);
  layout.shape = best.shape;
  LabelTiles(graph, layout);
  return layout;
}

}  // namespace shardlab::gui
