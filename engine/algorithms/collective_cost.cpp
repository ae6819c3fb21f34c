#include "engine/algorithms/collective_cost.h"

namespace shardlab {

TimeNs RingAllReduceNs(Bytes bytes, int n, Gbps gbps, TimeNs alpha_ns) {
  if (n <= 1 || gbps <= 0) return 0;
  // GB/s is bytes per ns.
  return 2.0 * (n - 1) / n * static_cast<double>(bytes) / gbps + 2.0 * (n - 1) * alpha_ns;
}

}  // namespace shardlab
