#include "engine/core/event.h"

namespace shardlab {

const char* ClockKindName(ClockKind clock) {
  switch (clock) {
    case ClockKind::kSimulated: return "simulated";
    case ClockKind::kCudaEvent: return "cuda-event";
    case ClockKind::kHost: return "host";
    case ClockKind::kEmulated: return "emulated";
    case ClockKind::kHostMpiAligned: return "host (MPI, aligned)";
  }
  return "unknown";
}

}  // namespace shardlab
