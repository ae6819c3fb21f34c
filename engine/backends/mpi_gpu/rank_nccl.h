// This process's NCCL communicator for --algo nccl on --backend mpi
// --device gpu: one rank per process, so ncclCommInitRank with the unique
// id rank 0 made and the mpi backend broadcast (MPI_Ibcast, bounded). The
// communicator is non-blocking (config.blocking = 0): initialisation and
// launches return at once and are polled, so every wait stays bounded by
// --mpi-timeout; a clean run finalizes and destroys it, a failed or
// timed-out one aborts it (ncclCommAbort).
#pragma once

#include <memory>
#include <vector>

#include "engine/backends/cuda/nccl_collective.h"

namespace shardlab::mpi_gpu {

class RankNccl {
 public:
  /// False when this build has no NCCL (rank_nccl_missing.cpp).
  static bool Available();
  /// ncclGetUniqueId, as kNcclUniqueIdBytes bytes (rank 0 only).
  static std::vector<char> UniqueId(int rank);
  /// Starts ncclCommInitRankConfig on the current device.
  static std::unique_ptr<RankNccl> Start(const std::vector<char>& unique_id, int rank, int size);

  virtual ~RankNccl() = default;
  /// Polls the initialisation; throws DeviceError when it failed.
  virtual bool Ready() = 0;
  /// Starts one collective on call.stream. True when NCCL has put it on
  /// the stream already; false while it is still being issued (a
  /// non-blocking communicator may need its peers for that, e.g. to
  /// connect): then poll Issued() before recording anything after it.
  virtual bool Launch(const cuda::NcclRankCall& call) = 0;
  /// Whether the last Launch has been issued; throws DeviceError when it failed.
  virtual bool Issued() = 0;
  /// A clean run's end: ncclCommFinalize, its completion polled (bounded
  /// by `timeout_ns`), then ncclCommDestroy. A failure or a timeout aborts
  /// the communicator and throws.
  virtual void Close(double timeout_ns) = 0;
  /// ncclCommAbort, for failed runs: any kernel of the communicator stops.
  virtual void Abort() = 0;
};

}  // namespace shardlab::mpi_gpu
