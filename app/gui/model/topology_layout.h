// TopologyLayout: where each node's tile sits in the topology view, laid out
// the way the machine is wired, in view units ([0,1] x [0,1], y down):
//
//   hybrid cube-mesh (DGX-1)       NVSwitch box (DGX A100)     two boxes over IB
//   GPU0──GPU1   GPU4──GPU5        GPU0 GPU1 ... GPU7          ┌ box 0 ┐ ┌ box 1 ┐
//    │ ╲╱ │  ════ │ ╲╱ │             ╲  │   │   ╱             │  ...  │ │  ...  │
//   GPU3──GPU2   GPU7──GPU6            NVSwitch                └───┬───┘ └───┬───┘
//   PCIe switches, CPUs below        CPUs, NICs below                IB switch
//
// Pure geometry, no GL: the view scales it to pixels. Invariants (tested):
// every tile lies inside the unit square and no two tiles overlap.
#pragma once

#include <string>
#include <vector>

#include "engine/topology/topology.h"

namespace shardlab::gui {

struct Vec2 {
  float x = 0;
  float y = 0;
};

struct Rect {
  Vec2 min;
  Vec2 max;
  float width() const { return max.x - min.x; }
  float height() const { return max.y - min.y; }
  Vec2 center() const { return {(min.x + max.x) / 2, (min.y + max.y) / 2}; }
  bool Overlaps(const Rect& o) const {
    return min.x < o.max.x && o.min.x < max.x && min.y < o.max.y && o.min.y < max.y;
  }
};

struct NodeTile {
  int node = -1;          // node id in the topology
  Rect rect;              // view units
  std::string label;      // "GPU0", "NVSwitch", "CPU1", "NIC3"
};

struct HostBox {
  int host = 0;
  Rect rect;              // frame drawn around a box's tiles (multi-host only)
  std::string label;      // "node 0"
};

struct TopologyLayout {
  std::vector<NodeTile> tiles;      // one per node, indexed by node id
  std::vector<HostBox> hosts;       // empty for one host
  /// Which arrangement was chosen, for tests and the view's caption:
  /// "cube-mesh", "switch-star", "pcie-tree", "multi-host", "grid".
  std::string shape;
};

/// Lays out every node of `topology`. `aspect` is the view's width / height,
/// so tiles stay readable in wide and tall panels. Very large clusters
/// (more than 64 GPUs) show each host as one tile group in a grid.
TopologyLayout LayoutTopology(const Topology& topology, float aspect);

}  // namespace shardlab::gui
