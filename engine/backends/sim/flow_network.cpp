#include "engine/backends/sim/flow_network.h"

#include <algorithm>
#include <limits>

namespace shardlab {

void FlowNetwork::Reset(std::vector<Gbps> capacities) {
  capacity_ = std::move(capacities);
  on_resource_.assign(capacity_.size(), {});
  flows_.clear();
  free_.clear();
  stamp_ = 0;
  active_count_ = 0;
}

void FlowNetwork::CollectNeighbours(std::span<const std::int32_t> resources,
                                    std::vector<std::int32_t>& out) {
  ++stamp_;
  for (std::int32_t r : resources) {
    for (std::int32_t f : on_resource_[r]) {
      if (flows_[f].stamp == stamp_) continue;
      flows_[f].stamp = stamp_;
      out.push_back(f);
    }
  }
}

void FlowNetwork::Recompute(TimeNs now, std::int32_t id) {
  Flow& f = flows_[id];
  f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.last_ns));
  f.last_ns = now;
  double rate = std::numeric_limits<double>::infinity();
  for (std::int32_t r : f.resources)
    rate = std::min(rate, capacity_[r] / static_cast<double>(on_resource_[r].size()));
  f.rate = rate;
  ++f.version;
}

std::int32_t FlowNetwork::Add(TimeNs now, double bytes, std::span<const std::int32_t> resources,
                              std::vector<std::int32_t>& changed) {
  std::int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::int32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.remaining = bytes;
  f.rate = 0;
  f.last_ns = now;
  f.resources = resources;
  f.active = true;
  ++active_count_;
  const std::size_t first = changed.size();
  CollectNeighbours(resources, changed);  // before joining: the flows it slows down
  for (std::int32_t r : resources) on_resource_[r].push_back(id);
  changed.push_back(id);
  for (std::size_t i = first; i < changed.size(); ++i) Recompute(now, changed[i]);
  return id;
}

void FlowNetwork::Remove(TimeNs now, std::int32_t id, std::vector<std::int32_t>& changed) {
  Flow& f = flows_[id];
  for (std::int32_t r : f.resources) {
    auto& list = on_resource_[r];
    auto it = std::find(list.begin(), list.end(), id);
    *it = list.back();
    list.pop_back();
  }
  f.active = false;
  ++f.version;
  --active_count_;
  free_.push_back(id);
  const std::size_t first = changed.size();
  CollectNeighbours(f.resources, changed);
  for (std::size_t i = first; i < changed.size(); ++i) Recompute(now, changed[i]);
}

TimeNs FlowNetwork::FinishTime(std::int32_t id) const {
  const Flow& f = flows_[id];
  if (f.remaining <= 0) return f.last_ns;
  return f.last_ns + f.remaining / f.rate;
}

}  // namespace shardlab
