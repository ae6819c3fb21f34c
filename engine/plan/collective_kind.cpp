#include "engine/plan/collective_kind.h"

#include "engine/core/error.h"

namespace shardlab {

double BusBandwidthFactor(CollectiveKind kind, int ranks) {
  if (ranks < 1) throw Error("bus bandwidth factor: ranks must be at least 1");
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2.0 * (n - 1.0) / n;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll: return (n - 1.0) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce: return 1.0;
  }
  return 1.0;
}

}  // namespace shardlab
