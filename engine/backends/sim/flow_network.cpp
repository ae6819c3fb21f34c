#include "engine/backends/sim/flow_network.h"

#include <algorithm>
#include <limits>

namespace shardlab {

void FlowNetwork::Reset(std::vector<Gbps> capacities) {
  capacity_ = std::move(capacities);
  on_resource_.assign(capacity_.size(), {});
  resource_stamp_.assign(capacity_.size(), 0);
  flows_.clear();
  free_.clear();
  stamp_ = 0;
  active_count_ = 0;
}

void FlowNetwork::Retime(TimeNs now, std::int32_t id, double rate) {
  Flow& f = flows_[id];
  f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.last_ns));
  f.last_ns = now;
  f.rate = rate;
  ++f.version;
}

void FlowNetwork::Reshare(TimeNs now, std::int32_t fresh,
                          std::span<const std::int32_t> seed_resources,
                          std::vector<std::int32_t>& changed) {
  // Breadth-first over flows and the resources they share.
  ++stamp_;
  component_.clear();
  frontier_.clear();
  auto visit_resource = [&](std::int32_t r) {
    if (resource_stamp_[r] == stamp_) return;
    resource_stamp_[r] = stamp_;
    frontier_.push_back(r);
  };
  if (fresh >= 0) {
    flows_[fresh].stamp = stamp_;
    component_.push_back(fresh);
    for (std::int32_t r : flows_[fresh].resources) visit_resource(r);
  }
  for (std::int32_t r : seed_resources) visit_resource(r);
  for (std::size_t i = 0; i < frontier_.size(); ++i) {
    for (std::int32_t f : on_resource_[frontier_[i]]) {
      if (flows_[f].stamp == stamp_) continue;
      flows_[f].stamp = stamp_;
      component_.push_back(f);
      for (std::int32_t r : flows_[f].resources) visit_resource(r);
    }
  }
  if (component_.empty()) return;

  if (component_.size() == 1) {  // alone on its path: the narrowest capacity
    const std::int32_t id = component_[0];
    double rate = std::numeric_limits<double>::infinity();
    for (std::int32_t r : flows_[id].resources) rate = std::min(rate, capacity_[r]);
    if (id == fresh || rate != flows_[id].rate) {
      Retime(now, id, rate);
      changed.push_back(id);
    }
    return;
  }
  paths_.clear();
  for (std::int32_t f : component_) paths_.push_back(flows_[f].resources);
  MaxMinFairRates(capacity_, paths_, rates_, scratch_);
  for (std::size_t i = 0; i < component_.size(); ++i) {
    const std::int32_t id = component_[i];
    if (id != fresh && rates_[i] == flows_[id].rate) continue;
    Retime(now, id, rates_[i]);
    changed.push_back(id);
  }
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
  bool alone = true;  // no other flow on any of its resources
  for (std::int32_t r : resources) {
    on_resource_[r].push_back(id);
    alone = alone && on_resource_[r].size() == 1;
  }
  if (alone) {  // what Reshare finds for a component of one flow, without the search
    double rate = std::numeric_limits<double>::infinity();
    for (std::int32_t r : resources) rate = std::min(rate, capacity_[r]);
    Retime(now, id, rate);
    changed.push_back(id);
    return id;
  }
  Reshare(now, id, {}, changed);
  return id;
}

void FlowNetwork::Remove(TimeNs now, std::int32_t id, std::vector<std::int32_t>& changed) {
  Flow& f = flows_[id];
  bool alone = true;  // it shared none of its resources: no rate changes
  for (std::int32_t r : f.resources) {
    auto& list = on_resource_[r];
    auto it = std::find(list.begin(), list.end(), id);
    *it = list.back();
    list.pop_back();
    alone = alone && list.empty();
  }
  f.active = false;
  ++f.version;
  --active_count_;
  free_.push_back(id);
  if (!alone) Reshare(now, -1, f.resources, changed);
}

TimeNs FlowNetwork::FinishTime(std::int32_t id) const {
  const Flow& f = flows_[id];
  if (f.remaining <= 0) return f.last_ns;
  return f.last_ns + f.remaining / f.rate;
}

}  // namespace shardlab
