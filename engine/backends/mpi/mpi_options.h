// What the mpi backend takes from the command line besides the plan: how
// long any wait may last, and a test-only fault to inject. MPI-free, so the
// flags parse (and are rejected clearly) in builds without MPI too.
//
//   --mpi-timeout 5s | 500ms | 2m | 30      (a bare number is seconds)
//   --inject-fault exit:rank=1,op=7    rank 1 exits with code 3 before its 7th op
//                  kill:rank=1,op=7    ... is killed by SIGKILL instead
//                  stall:rank=1,op=7   ... stops answering (sleeps) instead
//                  skip:rank=2,iter=3  rank 2 skips the 3rd run of the plan
//   --device host | gpu                where each rank's buffers live (default host)
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/units.h"

namespace shardlab {

/// The default bound on every wait of the mpi backend.
inline constexpr TimeNs kDefaultMpiTimeoutNs = 30e9;

enum class MpiFaultKind : std::uint8_t { kNone, kExit, kKill, kStall, kSkip };

struct MpiFault {
  MpiFaultKind kind = MpiFaultKind::kNone;
  int rank = -1;
  std::int64_t op = 0;    // exit/kill/stall: before the rank's op-th op (1-based, whole process)
  std::int64_t iter = 0;  // skip: the iter-th run of the plan (1-based)
};

/// Where each process keeps its rank's buffers: host memory (the default)
/// or its GPU (local rank modulo the node's device count).
enum class MpiDevice : std::uint8_t { kHost, kGpu };

struct MpiOptions {
  TimeNs timeout_ns = kDefaultMpiTimeoutNs;
  MpiFault fault;
  MpiDevice device = MpiDevice::kHost;
};

/// "host" or "gpu". Throws Error naming `flag`.
MpiDevice ParseMpiDevice(const std::string& flag, const std::string& text);

/// "5s", "500ms", "2m", "1.5s", "30" (seconds). Throws Error naming `flag`.
TimeNs ParseMpiTimeout(const std::string& flag, const std::string& text);

/// See the header comment. Throws Error naming `flag`.
MpiFault ParseMpiFault(const std::string& flag, const std::string& text);

/// "exit:rank=1,op=7", as parsed.
std::string DescribeMpiFault(const MpiFault& fault);

}  // namespace shardlab
