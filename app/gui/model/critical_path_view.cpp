#include "app/gui/model/critical_path_view.h"

#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <tuple>

#include "app/gui/i18n/language.h"

namespace shardlab::gui {

namespace {

/// A trace read back from a file has its transfers' Send and Recv as two
/// unpaired ops; pairs them again by their events (sender, receiver, step
/// and start agree), so the path follows a transfer from its receiver to
/// its sender. Null when the plan pairs its transfers already.
std::unique_ptr<Plan> PairTransfers(const Plan& plan, const std::vector<Event>& events) {
  for (const Op& op : plan.ops) {
    if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && op.match != kNoOp) return nullptr;
  }
  using Key = std::tuple<int, int, int, long long>;  // sender, receiver, step, start (ns)
  std::map<Key, OpId> sends;
  for (const Event& e : events) {
    if (e.kind == OpKind::kSend && e.peer >= 0)
      sends[{e.rank, e.peer, e.step, std::llround(e.start_ns)}] = e.op;
  }
  if (sends.empty()) return nullptr;
  auto paired = std::make_unique<Plan>(plan);
  for (const Event& e : events) {
    if (e.kind != OpKind::kRecv || e.peer < 0) continue;
    const auto it = sends.find({e.peer, e.rank, e.step, std::llround(e.start_ns)});
    if (it == sends.end()) continue;
    paired->ops[static_cast<std::size_t>(e.op)].match = it->second;
    paired->ops[static_cast<std::size_t>(it->second)].match = e.op;
  }
  return paired;
}

}  // namespace

CriticalPathView PrepareCriticalPath(const Plan& original, const TimelineStore& store, const Topology* topology,
                                     const Faults* faults, bool pipeline) {
  CriticalPathView view;
  std::vector<Event> events;
  events.reserve(store.event_count());
  for (const TimelineRow& row : store.rows()) events.insert(events.end(), row.events.begin(), row.events.end());
  const std::unique_ptr<Plan> paired = PairTransfers(original, events);
  const Plan& plan = paired ? *paired : original;
  view.path = FindCriticalPath(plan, events, topology, faults);
  view.on_path.assign(plan.ops.size(), 0);
  for (const CriticalPathStep& s : view.path.steps) {
    if (s.op < 0 || static_cast<std::size_t>(s.op) >= plan.ops.size()) continue;
    view.on_path[static_cast<std::size_t>(s.op)] = 1;
    const OpId match = plan.ops[static_cast<std::size_t>(s.op)].match;
    if (match != kNoOp && static_cast<std::size_t>(match) < plan.ops.size())
      view.on_path[static_cast<std::size_t>(match)] = 1;
  }
  const TimeNs end = view.path.end_ns;
  auto part = [&](const char* name, TimeNs ns) {
    view.parts.push_back({name, ns, end > 0 ? ns / end : 0.0});
  };
  part("compute", view.path.compute_ns);
  part("communication", view.path.communication_ns);
  part("link wait", view.path.link_wait_ns);
  part("idle", view.path.idle_ns);
  if (view.path.steps.empty()) return view;
  // In the language of the moment (the cache prepares it again when it changes).
  auto ties = [](int n) {
    return n == 0 ? std::string() : Format(n == 1 ? Tr(", %d other ties") : Tr(", %d others tie"), n);
  };
  if (pipeline) {
    view.bound = Format(Tr("stage %d bounds the step (%s of its ops on the path%s)"), view.path.bounding_rank,
                        FormatTime(view.path.bounding_rank_ns).c_str(), ties(view.path.bounding_rank_ties).c_str());
  } else if (view.path.slowest_hop.src >= 0) {
    view.bound = Format(Tr("slowest hop GPU%d -> GPU%d (%s on the path%s)"), view.path.slowest_hop.src,
                        view.path.slowest_hop.dst, FormatTime(view.path.slowest_hop.ns).c_str(),
                        ties(view.path.slowest_hop_ties).c_str());
  } else {
    view.bound = Format(Tr("GPU%d bounds the run (%s of its ops on the path%s)"), view.path.bounding_rank,
                        FormatTime(view.path.bounding_rank_ns).c_str(), ties(view.path.bounding_rank_ties).c_str());
  }
  return view;
}

const CriticalPathView* CriticalPathCache::Get(std::uint64_t run_id, bool complete, const Plan* plan,
                                               const TimelineStore& store, const Topology* topology,
                                               const Faults* faults, bool pipeline) {
  if (plan == nullptr || !complete || store.event_count() == 0) return nullptr;
  if (!valid_ || run_id != run_id_ || store.event_count() != events_ || CurrentLanguage() != language_) {
    language_ = CurrentLanguage();
    run_id_ = run_id;
    events_ = store.event_count();
    valid_ = true;
    try {
      view_ = PrepareCriticalPath(*plan, store, topology, faults, pipeline);
    } catch (const std::exception&) {
      view_ = CriticalPathView{};  // events of another plan: no path to show
    }
  }
  return view_.empty() ? nullptr : &view_;
}

}  // namespace shardlab::gui
