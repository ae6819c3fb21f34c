// What each rank was doing when a wait of the mpi backend ran out of time,
// and the one message rank 0 makes of all of them, in the spirit of
// PyTorch's desync report: a rank that is already at a later collective
// than the others never joined the one they wait in. MPI-free (unit tested
// without MPI).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardlab {

/// Where a rank was waiting; sent over the side channel as plain ints.
// kDeviceSetUp: --device gpu's start (GPU counts, the Load agreement, NCCL's
// id and communicator). Values travel between ranks: append, never reorder.
enum class StallPhase : std::int32_t {
  kOps = 0,
  kEventGather,
  kResultGather,
  kClockAlignment,
  kDeviceSetUp,
};
const char* StallPhaseName(StallPhase phase);  // "ops", "event gather", ...

struct RankStall {
  std::int32_t rank = -1;
  bool answered = false;        // false: rank 0 heard nothing from it in time
  StallPhase phase = StallPhase::kOps;
  std::int32_t waiting_on = -1; // peer rank of the oldest unfinished transfer; -1: none/many
  std::int32_t op = -1;         // that transfer's op id (-1 when none)
  std::int64_t seq = 0;         // sequence number of the collective it was in (1-based)
  std::int64_t last_done_seq = 0;  // of the last collective it finished (0: none)
  std::int32_t step = -1;

  /// "rank 1 waits for rank 2 in collective #3 (op 12, step 2)".
  std::string Describe() const;
};

/// Rank 0's verdict from every rank's status (index = rank): names the rank
/// that skipped or is ahead, or the ranks that did not answer.
std::string DescribeDesync(const std::vector<RankStall>& ranks);

}  // namespace shardlab
