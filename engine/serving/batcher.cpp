#include "engine/serving/batcher.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"

namespace shardlab {

const char* BatchingPolicyName(BatchingPolicy policy) {
  switch (policy) {
    case BatchingPolicy::kStatic: return "static";
    case BatchingPolicy::kDynamic: return "dynamic";
    case BatchingPolicy::kContinuous: return "continuous";
  }
  return "?";
}

BatchingPolicy ParseBatchingPolicy(std::string_view name) {
  for (BatchingPolicy p : {BatchingPolicy::kStatic, BatchingPolicy::kDynamic, BatchingPolicy::kContinuous})
    if (name == BatchingPolicyName(p)) return p;
  throw Error("batching: unknown policy '" + std::string(name) + "' (static, dynamic, continuous or all)",
              ErrorKind::kInvalidInput);
}

bool BatchRunsToCompletion(BatchingPolicy policy) { return policy != BatchingPolicy::kContinuous; }

BatchDecision DecideBatch(const BatcherConfig& c, TimeNs now, int queued, TimeNs oldest_arrival_ns, int running,
                          bool more_coming) {
  BatchDecision d;
  if (queued <= 0) return d;
  switch (c.policy) {
    case BatchingPolicy::kContinuous:
      d.admit = std::max(0, std::min(queued, c.max_batch - running));
      return d;
    case BatchingPolicy::kStatic:
      if (running > 0) return d;
      if (queued >= c.max_batch || !more_coming) d.admit = std::min(queued, c.max_batch);
      return d;
    case BatchingPolicy::kDynamic:
      if (running > 0) return d;
      if (queued >= c.max_batch || !more_coming || now >= oldest_arrival_ns + c.timeout_ns) {
        d.admit = std::min(queued, c.max_batch);
      } else {
        d.wake_ns = oldest_arrival_ns + c.timeout_ns;
      }
      return d;
  }
  return d;
}

}  // namespace shardlab
