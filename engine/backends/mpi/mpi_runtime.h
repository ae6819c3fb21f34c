// The MPI runtime of this process: started once (MPI_Init_thread) before
// any mpi backend exists, ended once on the way out. Holds what every mpi
// backend of the process shares: the options (timeout, fault) and whether
// the job is broken (a wait ran out of time), which decides between
// MPI_Finalize and MPI_Abort at the end.
#pragma once

#include "engine/backends/mpi/mpi_options.h"

namespace shardlab::mpi {

/// MPI_Init_thread (serialized) unless already started; stores `options`.
void Start(const MpiOptions& options);
bool Started();
int WorldRank();
int WorldSize();
const MpiOptions& Options();

/// A wait ran out of time: the job cannot finish cleanly any more.
void MarkBroken();
bool Broken();

/// MPI_Finalize after a clean run. When broken: rank 0 aborts the job with
/// `exit_code`; other ranks give rank 0 time to report first, then abort.
void Finish(int exit_code);

/// Rank 0's `value` on every rank (MPI_Bcast on the world).
int BroadcastInt(int value);

/// Host monotonic clock, ns.
double NowNs();

}  // namespace shardlab::mpi
