// Metrics in nccl-tests' conventions.
//
//   algbw = size / time             (size: one rank's buffer, as nccl-tests)
//   busbw = algbw * factor          (2(n-1)/n all-reduce, (n-1)/n all-gather,
//                                    reduce-scatter, all-to-all; 1 broadcast, reduce)
// busbw is comparable across rank counts: it is what each link carried.
#pragma once

#include <span>

#include "engine/core/event.h"
#include "engine/plan/collective_kind.h"

namespace shardlab {

struct CollectiveMetrics {
  Bytes size_bytes = 0;
  TimeNs time_ns = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

CollectiveMetrics ComputeCollectiveMetrics(CollectiveKind kind, int ranks, Bytes size_bytes,
                                           TimeNs time_ns);

/// Time from the start of the run (0) to the last event's end.
TimeNs RunSpanNs(std::span<const Event> events);

}  // namespace shardlab
