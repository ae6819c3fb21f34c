// LinkActivity: loads and in-flight transfers at replay time t (see
// link_activity.h). Each Recv event is one transfer; its `peer` sent it.
#include "app/gui/model/link_activity.h"

#include <algorithm>

namespace shardlab::gui {
namespace {

constexpr int kRouteUnknown = -1;      // route_index_: not looked up yet
constexpr int kRouteUnreachable = -2;  // looked up: no route (or a bad rank)

}  // namespace

LinkActivity::LinkActivity(const Topology& topology, const Plan& plan, std::vector<int> rank_to_gpu)
    : topology_(&topology), plan_(&plan), rank_to_gpu_(std::move(rank_to_gpu)) {
  const int ranks = std::max(plan.num_ranks, 0);
  if (rank_to_gpu_.empty()) {
    for (int r = 0; r < ranks; ++r) rank_to_gpu_.push_back(r);
  }
  route_index_.assign(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks),
                      kRouteUnknown);
  load_forward_gbps_.assign(topology.links.size(), 0.0);
  load_backward_gbps_.assign(topology.links.size(), 0.0);
}

namespace {

// Node id of the GPU that runs `rank`, or -1.
int GpuNode(const Topology& topology, const std::vector<int>& rank_to_gpu, int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= rank_to_gpu.size()) return -1;
  const int gpu = rank_to_gpu[static_cast<std::size_t>(rank)];
  if (gpu < 0 || gpu >= topology.num_gpus()) return -1;
  return topology.gpus[static_cast<std::size_t>(gpu)];
}

}  // namespace

void LinkActivity::Update(const TimelineStore& store, TimeNs t_ns) {
  std::fill(load_forward_gbps_.begin(), load_forward_gbps_.end(), 0.0);
  std::fill(load_backward_gbps_.begin(), load_backward_gbps_.end(), 0.0);
  in_flight_.clear();
  const auto ranks = static_cast<std::size_t>(std::max(plan_->num_ranks, 0));

  // The route of from -> to, looked up once per pair: -1 when there is none.
  auto route_of = [&](int from, int to) {
    if (from < 0 || to < 0 || static_cast<std::size_t>(from) >= ranks ||
        static_cast<std::size_t>(to) >= ranks) {
      return -1;
    }
    int& index =
        route_index_[static_cast<std::size_t>(from) * ranks + static_cast<std::size_t>(to)];
    if (index == kRouteUnknown) {
      const int src = GpuNode(*topology_, rank_to_gpu_, from);
      const int dst = GpuNode(*topology_, rank_to_gpu_, to);
      Route route;
      if (src >= 0 && dst >= 0 && TryFindRoute(*topology_, src, dst, &route)) {
        index = static_cast<int>(routes_.size());
        routes_.push_back(std::move(route));
      } else {
        index = kRouteUnreachable;
      }
    }
    return index >= 0 ? index : -1;
  };

  for (const TimelineRow& row : store.rows()) {
    if (row.lane != Lane::kRecv) continue;
    // A lane runs one op at a time, so ends are sorted like starts: skip
    // every transfer that finished by t, then take those begun by t. One that
    // starts exactly at t is shown at its sender: paused after step k, the
    // view shows what step k+1 is about to send instead of an empty machine.
    const auto first = std::partition_point(row.events.begin(), row.events.end(),
                                            [&](const Event& e) { return e.end_ns <= t_ns; });
    for (auto it = first; it != row.events.end() && it->start_ns <= t_ns; ++it) {
      const Event& e = *it;
      if (e.kind != OpKind::kRecv || !(e.end_ns > e.start_ns)) continue;
      InFlight transfer;
      transfer.from_rank = e.peer;
      transfer.to_rank = e.rank;
      transfer.route = route_of(e.peer, e.rank);
      transfer.progress = (t_ns - e.start_ns) / (e.end_ns - e.start_ns);
      if (e.op >= 0 && static_cast<std::size_t>(e.op) < plan_->ops.size()) {
        const OpTags& tags = plan_->ops[static_cast<std::size_t>(e.op)].tags;
        transfer.phase = tags.phase;
        transfer.microbatch = tags.microbatch;
        transfer.collective_seq = e.collective_seq;
        const bool named = e.collective_seq >= 0 &&
                           static_cast<std::size_t>(e.collective_seq) < collective_labels_.size();
        transfer.label = named ? TransferLabel(tags, collective_labels_[static_cast<std::size_t>(e.collective_seq)])
                               : TransferLabel(tags);
        transfer.compact_label = named ? TransferLabel(tags) : transfer.label;
      }
      // 1 byte per ns is 1 GB/s: the simulator's average rate for it.
      const Gbps rate_gbps = static_cast<double>(e.bytes) / (e.end_ns - e.start_ns);
      if (transfer.route >= 0) {
        for (const LinkHop& hop : routes_[static_cast<std::size_t>(transfer.route)].hops) {
          if (hop.link < 0 || static_cast<std::size_t>(hop.link) >= load_forward_gbps_.size())
            continue;
          (hop.forward ? load_forward_gbps_
                       : load_backward_gbps_)[static_cast<std::size_t>(hop.link)] += rate_gbps;
        }
      }
      in_flight_.push_back(std::move(transfer));
    }
  }
}

double LinkActivity::LoadGbps(int link, bool forward) const {
  if (link < 0 || static_cast<std::size_t>(link) >= load_forward_gbps_.size()) return 0;
  return (forward ? load_forward_gbps_ : load_backward_gbps_)[static_cast<std::size_t>(link)];
}

double LinkActivity::Utilization(int link, bool forward) const {
  if (link < 0 || static_cast<std::size_t>(link) >= topology_->links.size()) return 0;
  const Gbps capacity_gbps = topology_->links[static_cast<std::size_t>(link)].gbps;
  return capacity_gbps > 0 ? LoadGbps(link, forward) / capacity_gbps : 0;
}

std::string ChunkLetter(int chunk) {
  // Spreadsheet columns: bijective base 26, so 26 -> "AA", not "BA".
  if (chunk < 0) return "";
  std::string letters;
  for (long long n = static_cast<long long>(chunk) + 1; n > 0; n = (n - 1) / 26)
    letters.insert(letters.begin(), static_cast<char>('A' + (n - 1) % 26));
  return letters;
}

std::string TransferLabel(const OpTags& tags) {
  if (tags.microbatch >= 0 && (tags.phase == Phase::kForward || tags.phase == Phase::kBackward)) {
    return (tags.phase == Phase::kForward ? "F" : "B") + std::to_string(tags.microbatch);
  }
  return tags.chunk >= 0 ? ChunkLetter(tags.chunk) : PhaseName(tags.phase);
}

std::string TransferLabel(const OpTags& tags, const CollectiveLabel& collective) {
  if (collective.tag.empty()) return TransferLabel(tags);
  std::string label = collective.tag;
  // A stage-to-stage transfer of a named call keeps its micro-batch: "PP g1 F2".
  if (tags.microbatch >= 0 && (tags.phase == Phase::kForward || tags.phase == Phase::kBackward)) {
    return label + " " + TransferLabel(tags);
  }
  if (collective.two_passes) {
    if (tags.phase == Phase::kReduceScatter) label += " RS";
    if (tags.phase == Phase::kAllGather) label += " AG";
  }
  // A middle dot binds the chunk to the pass: "AR1 RS·B".
  if (tags.chunk >= 0) label += "\xC2\xB7" + ChunkLetter(tags.chunk);
  return label;
}

}  // namespace shardlab::gui
