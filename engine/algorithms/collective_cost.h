// Closed-form costs of collectives, for the planner's estimates and the
// scenarios' formulas beside a measurement (the step structure behind them
// is at the top of ring.cpp).
//
//   ring all-reduce of M bytes over n ranks, link bandwidth B, per-hop latency α:
//     T = 2(n−1)/n · M / B + 2(n−1)·α
//
// Each collective's own alpha-beta formula, with its text, is its def's
// CollectiveAlgoDef::cost (engine/algorithms/collectives/); the helpers
// below write them.
#pragma once

#include <string>

#include "engine/core/units.h"
#include "engine/plan/collective_def.h"

namespace shardlab {

/// The ring all-reduce formula above; 0 for one rank or no bandwidth.
TimeNs RingAllReduceNs(Bytes bytes, int n, Gbps gbps, TimeNs alpha_ns);

/// Three significant digits in decimal units, as GB/s counts them: "8.39 MB", "512 B".
std::string FormulaBytes(double bytes);
/// "300 GB/s", "8.39 GB/s".
std::string FormulaGbps(Gbps gbps);

/// An algorithm of `twice ? 2 : 1`·(n-1) steps of α + M/(n·B) each (M the
/// rank's buffer): ns, and "2(n-1)·(α + M/(n·B))<note> = 2·7·(1.5 us +
/// 8.39 MB / 300 GB/s)" (no " = T" at the end: CollectiveCostWithTotal).
CollectiveCost RingStepsCost(const CollectiveParams& params, TimeNs alpha_ns, Gbps gbps,
                             bool twice, const char* note = "");
/// `cost` with " = <its time>" appended.
CollectiveCost CollectiveCostWithTotal(CollectiveCost cost);

}  // namespace shardlab
