// Helpers shared by the topology tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "engine/topology/topology.h"

namespace shardlab::testing {

/// Every field of two topologies, with the first difference named.
inline ::testing::AssertionResult SameTopology(const Topology& a, const Topology& b) {
  auto fail = [](const std::string& what) { return ::testing::AssertionFailure() << what; };
  if (a.name != b.name) return fail("name: '" + a.name + "' vs '" + b.name + "'");
  if (a.description != b.description) return fail("description differs");
  if (a.nodes.size() != b.nodes.size()) return fail("node count differs");
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& x = a.nodes[i];
    const Node& y = b.nodes[i];
    const std::string where = "node " + std::to_string(i) + " ('" + x.name + "'): ";
    if (x.name != y.name) return fail(where + "name differs: '" + y.name + "'");
    if (x.kind != y.kind) return fail(where + "kind differs");
    if (x.host != y.host) return fail(where + "host differs");
    if (x.forward_gbps != y.forward_gbps) return fail(where + "forward_gbps differs");
    if (x.nic != y.nic) return fail(where + "own NIC differs");
    if (x.device.model != y.device.model)
      return fail(where + "model: " + x.device.model + " vs " + y.device.model);
    if (x.device.fp32_tflops != y.device.fp32_tflops) return fail(where + "fp32_tflops differs");
    if (x.device.fp16_tflops != y.device.fp16_tflops) return fail(where + "fp16_tflops differs");
    if (x.device.memory_gbps != y.device.memory_gbps) return fail(where + "memory_gbps differs");
    if (x.device.memory_bytes != y.device.memory_bytes) return fail(where + "memory_bytes differs");
  }
  if (a.links.size() != b.links.size()) return fail("link count differs");
  for (std::size_t i = 0; i < a.links.size(); ++i) {
    const Link& x = a.links[i];
    const Link& y = b.links[i];
    const std::string where = "link " + std::to_string(i) + ": ";
    if (x.a != y.a || x.b != y.b) return fail(where + "ends differ");
    if (x.kind != y.kind) return fail(where + "kind differs");
    if (x.gbps != y.gbps) return fail(where + "gbps differs");
    if (x.latency_ns != y.latency_ns)
      return fail(where + "latency differs: " + std::to_string(x.latency_ns) + " vs " +
                  std::to_string(y.latency_ns));
    if (x.lanes != y.lanes) return fail(where + "lanes differ");
  }
  if (a.gpus != b.gpus) return fail("rank order (gpus) differs");
  return ::testing::AssertionSuccess();
}

}  // namespace shardlab::testing
