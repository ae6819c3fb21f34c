// Stragglers and failures on the cuda backend: a slow rank's work is
// followed by a spin of (FACTOR - 1) times its modelled time, so each of its
// transfers lasts at least that long; a failed rank or link is refused in
// one line before anything runs.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/topology/presets.h"
#include "tests/backends/cuda/cuda_test_util.h"

namespace shardlab {
namespace {

using testing::PlanRun;
using testing::RunPlan;

TEST(CudaFaults, ASlowRanksTransfersLastFactorTimesTheirModelledTimeMore) {
  SHARDLAB_REQUIRE_GPU();
  const Topology topology = MakeTopologyPreset("dgx-a100");
  CollectiveParams p;
  p.ranks = 4;
  p.count = 1 << 20;
  const Plan plan = BuildCollective(p);
  const PlanRun sim = RunPlan("sim", plan, topology);
  std::map<OpId, TimeNs> modelled;
  for (const Event& e : sim.events) modelled[e.op] = e.duration_ns();
  RunOptions options;
  options.faults.slow_ranks.push_back({2, 4.0});
  const PlanRun gpu = RunPlan("cuda", plan, topology, options);
  int checked = 0;
  for (const Event& e : gpu.events) {
    if (e.kind != OpKind::kRecv || e.peer != 2) continue;
    // The spin alone is 3x the simulator's time of this transfer (less one
    // tick of the GPU's global timer, 1 us on some parts).
    EXPECT_GE(e.duration_ns() + 1000, 3.0 * modelled[e.op]) << "op " << e.op;
    ++checked;
  }
  EXPECT_EQ(checked, 2 * (p.ranks - 1));  // rank 2 sends once per ring step
}

TEST(CudaFaults, AFailedRankOrLinkIsRefusedInOneLine) {
  SHARDLAB_REQUIRE_GPU();
  const Topology topology = MakeTopologyPreset("dgx-a100");
  CollectiveParams p;
  p.ranks = 2;
  p.count = 256;
  const Plan plan = BuildCollective(p);
  RunOptions options;
  options.faults.failed_ranks.push_back({1, 0});
  try {
    RunPlan("cuda", plan, topology, options);
    FAIL() << "a failed rank ran on the cuda backend";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("fail_rank: the cuda backend runs real hardware", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace shardlab
