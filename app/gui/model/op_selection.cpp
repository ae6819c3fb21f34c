#include "app/gui/model/op_selection.h"

#include <algorithm>
#include <cstdio>

#include "app/gui/i18n/language.h"
#include "engine/plan/op_label.h"

namespace shardlab::gui {
namespace {

const std::vector<LinkHop> kNoRoute;

bool IsTransfer(OpKind kind) { return kind == OpKind::kSend || kind == OpKind::kRecv; }

std::string GbpsText(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, gbps >= 100 ? "%.0f GB/s" : gbps >= 1 ? "%.1f GB/s" : "%.3f GB/s", gbps);
  return text;
}

std::string Tflops(double tflops) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f TFLOP/s", tflops);
  return text;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

/// Node id of rank `rank`'s GPU, or -1.
int GpuNode(const Topology& topology, int rank) {
  return rank >= 0 && rank < topology.num_gpus() ? topology.gpus[static_cast<std::size_t>(rank)] : -1;
}

/// "op 811 recv GPU3 <- GPU2 (RS·B)".
std::string ShortOpText(const Plan& plan, OpId id) {
  const Op& op = plan.ops[static_cast<std::size_t>(id)];
  std::string text = "op " + std::to_string(id) + " " + OpKindName(op.kind) + " GPU" + std::to_string(op.rank);
  if (op.kind == OpKind::kSend) text += " -> GPU" + std::to_string(op.peer);
  if (op.kind == OpKind::kRecv) text += " <- GPU" + std::to_string(op.peer);
  const std::string bar = LabelOp(plan, op).bar;
  if (!bar.empty()) text += " (" + bar + ")";
  return text;
}

}  // namespace

LinkUsage::LinkUsage(const Plan& plan, const Topology& topology, const TimelineStore& store) : plan_(&plan) {
  route_of_unit_.assign(plan.ops.size(), -1);
  by_link_.assign(topology.links.size(), {});
  std::vector<int> pair_route;  // by (from, to): index into routes_, -1 unknown, -2 none
  const int ranks = std::max(plan.num_ranks, 0);
  pair_route.assign(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks), -1);
  for (const TimelineRow& row : store.rows()) {
    if (row.lane != Lane::kRecv) continue;
    for (const Event& e : row.events) {
      if (e.kind != OpKind::kRecv || e.op < 0 || static_cast<std::size_t>(e.op) >= plan.ops.size()) continue;
      const int from = e.peer;
      const int to = e.rank;
      if (from < 0 || to < 0 || from >= ranks || to >= ranks) continue;
      int& index = pair_route[static_cast<std::size_t>(from) * static_cast<std::size_t>(ranks) +
                              static_cast<std::size_t>(to)];
      if (index == -1) {
        const int src = GpuNode(topology, from);
        const int dst = GpuNode(topology, to);
        Route route;
        if (src >= 0 && dst >= 0 && TryFindRoute(topology, src, dst, &route)) {
          index = static_cast<int>(routes_.size());
          routes_.push_back(route.hops);
        } else {
          index = -2;
        }
      }
      if (index < 0) continue;
      route_of_unit_[static_cast<std::size_t>(e.op)] = index;
      for (const LinkHop& hop : routes_[static_cast<std::size_t>(index)]) {
        by_link_[static_cast<std::size_t>(hop.link)].push_back(
            {e.op, from, to, hop.forward, e.bytes, e.start_ns, e.end_ns});
      }
    }
  }
  for (std::vector<LinkCrossing>& crossings : by_link_) {
    std::sort(crossings.begin(), crossings.end(), [](const LinkCrossing& a, const LinkCrossing& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.op < b.op;
    });
  }
}

OpId LinkUsage::Unit(OpId op) const {
  if (op < 0 || static_cast<std::size_t>(op) >= plan_->ops.size()) return kNoOp;
  const Op& o = plan_->ops[static_cast<std::size_t>(op)];
  if (o.kind == OpKind::kSend && o.match != kNoOp) return o.match;
  return op;
}

const std::vector<LinkHop>& LinkUsage::RouteOf(OpId op) const {
  const OpId unit = Unit(op);
  if (unit == kNoOp) return kNoRoute;
  const int index = route_of_unit_[static_cast<std::size_t>(unit)];
  return index >= 0 ? routes_[static_cast<std::size_t>(index)] : kNoRoute;
}

std::vector<LinkCrossing> LinkUsage::CrossingsOf(int link) const {
  if (link < 0 || static_cast<std::size_t>(link) >= by_link_.size()) return {};
  std::vector<LinkCrossing> crossings = by_link_[static_cast<std::size_t>(link)];
  std::stable_sort(crossings.begin(), crossings.end(), [](const LinkCrossing& a, const LinkCrossing& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    const TimeNs da = a.end_ns - a.start_ns;
    const TimeNs db = b.end_ns - b.start_ns;
    if (da != db) return da > db;
    return a.op < b.op;
  });
  return crossings;
}

double LinkUsage::LoadGbpsAt(int link, bool forward, TimeNs t_ns) const {
  if (link < 0 || static_cast<std::size_t>(link) >= by_link_.size()) return 0;
  double gbps = 0;
  for (const LinkCrossing& c : by_link_[static_cast<std::size_t>(link)]) {
    if (c.start_ns > t_ns) break;  // sorted by start
    if (c.forward != forward || c.end_ns <= t_ns || !(c.end_ns > c.start_ns)) continue;
    gbps += static_cast<double>(c.bytes) / (c.end_ns - c.start_ns);  // 1 byte/ns = 1 GB/s
  }
  return gbps;
}

OpId OpAtGanttPoint(const TimelineStore& store, const GanttFrame& frame, int row, double x_px) {
  if (row < 0 || static_cast<std::size_t>(row) >= store.rows().size()) return kNoOp;
  const TimelineRow& r = store.rows()[static_cast<std::size_t>(row)];
  const std::vector<GanttBox> boxes = PrepareGanttRow(r, frame);
  const int index = EventAtPx(r, boxes, x_px);
  return index >= 0 ? r.events[static_cast<std::size_t>(index)].op : kNoOp;
}

const Event* FindEvent(const TimelineStore& store, OpId op) {
  if (op == kNoOp) return nullptr;
  for (const TimelineRow& row : store.rows()) {
    for (const Event& e : row.events) {
      if (e.op == op) return &e;
    }
  }
  return nullptr;
}

std::vector<LitLink> LightRoute(const LinkUsage& usage, const Topology& topology, const TimelineStore& store,
                                OpId op) {
  std::vector<LitLink> lit;
  const Event* e = FindEvent(store, usage.Unit(op));
  if (e == nullptr) return lit;
  const TimeNs mid_ns = 0.5 * (e->start_ns + e->end_ns);
  for (const LinkHop& hop : usage.RouteOf(op)) {
    LitLink l;
    l.link = hop.link;
    l.forward = hop.forward;
    l.load_gbps = usage.LoadGbpsAt(hop.link, hop.forward, mid_ns);
    const Gbps gbps = topology.links[static_cast<std::size_t>(hop.link)].gbps;
    l.utilization = gbps > 0 ? l.load_gbps / gbps : 0;
    lit.push_back(l);
  }
  return lit;
}

std::string LinkWords(const Topology& topology, int link) {
  if (link < 0 || static_cast<std::size_t>(link) >= topology.links.size()) return "";
  const Link& l = topology.links[static_cast<std::size_t>(link)];
  std::string kind = LinkKindName(l.kind);
  if (l.lanes > 1 && l.kind <= LinkKind::kNvLink5) kind += " x" + std::to_string(l.lanes);
  return kind + " " + topology.nodes[static_cast<std::size_t>(l.a)].name + " <-> " +
         topology.nodes[static_cast<std::size_t>(l.b)].name + ", " + GbpsText(l.gbps) + " per direction";
}

OpDetails DescribeOp(const Plan& plan, const Topology& topology, const TimelineStore& store,
                     const LinkUsage& usage, OpId id, const Faults* faults) {
  OpDetails d;
  if (id < 0 || static_cast<std::size_t>(id) >= plan.ops.size()) return d;
  const OpId unit = usage.Unit(id);
  const Op& op = plan.ops[static_cast<std::size_t>(unit)];
  d.op = unit;
  d.title = LabelOp(plan, op).text;
  const Event* e = FindEvent(store, unit);
  if (IsTransfer(op.kind)) {
    const int from = op.kind == OpKind::kRecv ? op.peer : op.rank;
    const int to = op.kind == OpKind::kRecv ? op.rank : op.peer;
    d.where = "GPU" + std::to_string(from) + " -> GPU" + std::to_string(to);
  } else {
    d.where = Format(Tr("GPU%d, %s lane"), op.rank, LaneName(op.lane));
  }
  d.bytes = e != nullptr && e->bytes > 0 ? e->bytes : op.bytes;
  if (e != nullptr) {
    d.start_ns = e->start_ns;
    d.duration_ns = e->duration_ns();
    if (d.bytes > 0 && d.duration_ns > 0) d.achieved_gbps = static_cast<double>(d.bytes) / d.duration_ns;
  }

  // The formula the simulator's model starts from, with its numbers.
  if (IsTransfer(op.kind)) {
    const int from = op.kind == OpKind::kRecv ? op.peer : op.rank;
    const int to = op.kind == OpKind::kRecv ? op.rank : op.peer;
    const int src = GpuNode(topology, from);
    const int dst = GpuNode(topology, to);
    Route route;
    if (src >= 0 && dst >= 0 && src != dst && TryFindRoute(topology, src, dst, &route)) {
      const double slow = faults != nullptr ? faults->SlowFactor(from) : 1.0;
      d.formula_ns = route.latency_ns + TransferNs(d.bytes, route.bottleneck_gbps) * slow;
      d.formula = "t = \xCE\xB1 + n/\xCE\xB2" + std::string(slow != 1.0 ? " \xC3\x97 slow" : "") + " = " +
                  FormatTime(route.latency_ns) + " + " + FormatBytes(d.bytes) + " / " +
                  GbpsText(route.bottleneck_gbps) + (slow != 1.0 ? " \xC3\x97 " + Number(slow) : "") + " = " +
                  FormatTime(d.formula_ns) + "  " +
                  Format(route.hops.size() == 1 ? Tr("(\xCE\xB1: the route's latency over %d hop; \xCE\xB2: its slowest link)")
                                                : Tr("(\xCE\xB1: the route's latency over %d hops; \xCE\xB2: its slowest link)"),
                         static_cast<int>(route.hops.size()));
    }
  } else if (op.kind == OpKind::kCollective) {
    d.formula = Tr("one library call: its time is the library's (NCCL's) model of the whole collective");
  } else {
    const int node = GpuNode(topology, op.rank);
    if (node >= 0) {
      const DeviceSpec& dev = topology.nodes[static_cast<std::size_t>(node)].device;
      BufferSlice written = op.dst;
      if (!written.valid() && op.kernel_count > 0) written = plan.kernels[op.kernel_begin].c;
      const bool half = written.valid() && plan.buffers[written.buffer].dtype != DType::kF32;
      const double tflops = half ? dev.fp16_tflops : dev.fp32_tflops;
      const double touch = op.kind == OpKind::kCopy ? 2.0 : op.kind == OpKind::kReduce ? 3.0 : 1.0;
      const TimeNs compute_ns = op.flops > 0 && tflops > 0 ? op.flops / (tflops * 1e3) : 0;
      const TimeNs memory_ns =
          dev.memory_gbps > 0 ? touch * static_cast<double>(op.bytes) / dev.memory_gbps : 0;
      const double slow = faults != nullptr ? faults->SlowFactor(op.rank) : 1.0;
      d.formula_ns = std::max(compute_ns, memory_ns) * slow;
      d.formula = "t = max(F / peak, " + std::string(touch > 1 ? Number(touch) + "\xC2\xB7" : "") +
                  "bytes / HBM)" + (slow != 1.0 ? " \xC3\x97 slow" : "") + " = max(" + Number(op.flops) + " / " +
                  Tflops(tflops) + ", " + (touch > 1 ? Number(touch) + "\xC2\xB7" : "") + FormatBytes(op.bytes) +
                  " / " + GbpsText(dev.memory_gbps) + ")" + (slow != 1.0 ? " \xC3\x97 " + Number(slow) : "") + " = " +
                  FormatTime(d.formula_ns);
    }
  }
  d.route = LightRoute(usage, topology, store, unit);

  // What it waited for: its dependencies (a Recv: its Send's too) and the
  // op before it on each of those lanes; the latest to end is marked.
  std::vector<OpId> sides = {unit};
  if (op.kind == OpKind::kRecv && op.match != kNoOp) sides.push_back(op.match);
  auto add = [&](OpId candidate, bool dependency) {
    const OpId u = usage.Unit(candidate);
    if (u == kNoOp || u == unit) return;
    for (const WaitedFor& w : d.waited_for) {
      if (w.op == u) return;
    }
    const Event* ce = FindEvent(store, u);
    if (ce == nullptr) return;
    d.waited_for.push_back({u, ce->end_ns, dependency, false, ShortOpText(plan, u)});
  };
  for (OpId side : sides) {
    const Op& s = plan.ops[static_cast<std::size_t>(side)];
    for (const OpId* dep = plan.deps_begin(s); dep != plan.deps_end(s); ++dep) add(*dep, true);
  }
  if (e != nullptr) {
    for (OpId side : sides) {
      const Op& s = plan.ops[static_cast<std::size_t>(side)];
      const Event* se = FindEvent(store, side);
      if (se == nullptr) continue;
      for (const TimelineRow& row : store.rows()) {
        if (row.rank != s.rank || row.lane != s.lane) continue;
        // The lane's op that ended last before this one started.
        const Event* before = nullptr;
        for (const Event& le : row.events) {
          if (le.op != side && le.end_ns <= se->start_ns + 1.0 && (before == nullptr || le.end_ns > before->end_ns))
            before = &le;
        }
        if (before != nullptr) add(before->op, false);
      }
    }
  }
  std::sort(d.waited_for.begin(), d.waited_for.end(), [](const WaitedFor& a, const WaitedFor& b) {
    return a.end_ns != b.end_ns ? a.end_ns > b.end_ns : a.op < b.op;
  });
  if (!d.waited_for.empty()) d.waited_for.front().last = true;
  return d;
}

}  // namespace shardlab::gui
