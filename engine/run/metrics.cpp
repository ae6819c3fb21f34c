#include "engine/run/metrics.h"

#include <algorithm>

namespace shardlab {

CollectiveMetrics ComputeCollectiveMetrics(CollectiveKind kind, int ranks, Bytes size_bytes,
                                           TimeNs time_ns) {
  CollectiveMetrics m;
  m.size_bytes = size_bytes;
  m.time_ns = time_ns;
  if (time_ns > 0) {
    m.algbw_gbps = static_cast<double>(size_bytes) / time_ns;  // 1 B/ns == 1 GB/s
    m.busbw_gbps = m.algbw_gbps * BusBandwidthFactor(kind, ranks);
  }
  return m;
}

TimeNs RunSpanNs(std::span<const Event> events) {
  TimeNs end = 0;
  for (const Event& e : events) end = std::max(end, e.end_ns);
  return end;
}

}  // namespace shardlab
