// Closed-form costs of collectives, for the planner's estimates and the
// scenarios' formulas beside a measurement (the step structure behind them
// is at the top of ring.cpp).
//
//   ring all-reduce of M bytes over n ranks, link bandwidth B, per-hop latency α:
//     T = 2(n−1)/n · M / B + 2(n−1)·α
#pragma once

#include "engine/core/units.h"

namespace shardlab {

/// The ring all-reduce formula above; 0 for one rank or no bandwidth.
TimeNs RingAllReduceNs(Bytes bytes, int n, Gbps gbps, TimeNs alpha_ns);

}  // namespace shardlab
