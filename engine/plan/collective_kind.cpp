#include "engine/plan/collective_kind.h"

#include "engine/core/error.h"
#include "engine/plan/collective_def.h"

namespace shardlab {

double BusBandwidthFactor(CollectiveKind kind, int ranks) {
  if (ranks < 1) throw Error("bus bandwidth factor: ranks must be at least 1");
  const CollectiveDef* def = FindCollective(kind);
  return def != nullptr ? def->busbw_factor(ranks) : 1.0;
}

}  // namespace shardlab
