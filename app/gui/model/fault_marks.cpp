#include "app/gui/model/fault_marks.h"

#include <cstdio>

#include "engine/scenarios/fault_params.h"

namespace shardlab::gui {
namespace {

std::string Factor(double f) {
  char text[32];
  std::snprintf(text, sizeof text, "x%g slow", f);
  return text;
}

}  // namespace

bool IsFaultParam(const std::string& name) {
  for (const ParamSpec& p : FaultParams()) {
    if (p.name == name) return true;
  }
  return false;
}

std::vector<FaultLinkChoice> FaultLinkChoices(const Topology& topology) {
  std::vector<FaultLinkChoice> choices;
  for (std::size_t i = 0; i < topology.links.size(); ++i) {
    const Link& l = topology.links[i];
    const Node& a = topology.nodes[static_cast<std::size_t>(l.a)];
    const Node& b = topology.nodes[static_cast<std::size_t>(l.b)];
    if (a.kind != NodeKind::kGpu && b.kind != NodeKind::kGpu) continue;
    char gbps[32];
    std::snprintf(gbps, sizeof gbps, "%g GB/s", l.gbps);
    std::string kind = LinkKindName(l.kind);
    if (l.lanes > 1 && l.kind <= LinkKind::kNvLink5) kind += " x" + std::to_string(l.lanes);
    choices.push_back({static_cast<int>(i), a.name + "-" + b.name,
                       a.name + " <-> " + b.name + ", " + kind + ", " + gbps});
  }
  return choices;
}

FaultMarks MarkFaults(const Faults& faults, const Topology& topology, int ranks) {
  FaultMarks m;
  m.slow_factor.assign(static_cast<std::size_t>(std::max(ranks, 0)), 1.0);
  m.fail_step.assign(static_cast<std::size_t>(std::max(ranks, 0)), -1);
  m.throttle_gbps.assign(topology.links.size(), 0.0);
  m.link_fail_step.assign(topology.links.size(), -1);
  for (const SlowRank& s : faults.slow_ranks) {
    if (s.rank >= 0 && s.rank < ranks) m.slow_factor[static_cast<std::size_t>(s.rank)] = s.factor;
  }
  for (const RankFailure& f : faults.failed_ranks) {
    if (f.rank >= 0 && f.rank < ranks) m.fail_step[static_cast<std::size_t>(f.rank)] = f.step;
  }
  for (const LinkThrottle& t : faults.throttles) {
    if (t.link.link >= 0 && static_cast<std::size_t>(t.link.link) < topology.links.size())
      m.throttle_gbps[static_cast<std::size_t>(t.link.link)] = t.gbps;
  }
  for (const LinkFailure& f : faults.failed_links) {
    if (f.link.link >= 0 && static_cast<std::size_t>(f.link.link) < topology.links.size())
      m.link_fail_step[static_cast<std::size_t>(f.link.link)] = f.step;
  }
  m.any = !faults.empty();
  return m;
}

std::string RankFaultText(const FaultMarks& marks, int rank) {
  if (!marks.RankMarked(rank)) return "";
  std::string text;
  const double f = marks.slow_factor[static_cast<std::size_t>(rank)];
  if (f != 1.0) text = Factor(f);
  const int step = marks.fail_step[static_cast<std::size_t>(rank)];
  if (step >= 0) text += (text.empty() ? "" : ", ") + std::string("fails at step ") + std::to_string(step);
  return text;
}

std::string LinkFaultText(const FaultMarks& marks, int link) {
  if (!marks.LinkMarked(link)) return "";
  std::string text;
  const double g = marks.throttle_gbps[static_cast<std::size_t>(link)];
  if (g > 0) {
    char gbps[48];
    std::snprintf(gbps, sizeof gbps, "throttled to %g GB/s", g);
    text = gbps;
  }
  const int step = marks.link_fail_step[static_cast<std::size_t>(link)];
  if (step >= 0) text += (text.empty() ? "" : ", ") + std::string("fails at step ") + std::to_string(step);
  return text;
}

}  // namespace shardlab::gui
