// Backends that run one plan rank per process (mpi: one process per rank,
// started by mpirun) must start their runtime before the front end prints
// anything, so that only rank 0 reports, and must end it on the way out
// (finalize, or tear the job down when a rank stopped answering). Front
// ends call these two functions around everything else; for every other
// backend they do nothing. MPI-free: builds without MPI say so clearly.
#pragma once

#include <functional>
#include <string>

#include "engine/core/error.h"
#include "engine/backends/mpi/mpi_options.h"

namespace shardlab {

struct ProcessGroupInfo {
  int rank = 0;   // this process's rank (what reports: rank 0)
  int size = 1;   // processes in the job
};

/// A failure every rank of the job reaches with the same cause (no GPU on
/// the nodes, say): front ends print it on rank 0 only.
class JobWideError : public Error {
 public:
  using Error::Error;
};

/// How this process counts its GPUs: returns the CUDA device count or
/// throws Error("no CUDA device: ..."). Front ends that link the CUDA
/// backend install it; without one, CountGpusOrThrow() says the build has
/// no CUDA. Lets the MPI code ask without linking CUDA itself.
void SetGpuCounter(std::function<int()> counter);
int CountGpusOrThrow();

/// True for backends that run one rank per process under mpirun
/// (BackendTraits::under_mpirun: "mpi").
bool IsProcessBackend(const std::string& backend);

/// Starts the runtime of `backend` when it is a process backend (MPI_Init)
/// and returns this process's place; {0, 1} for the others. Throws Error
/// when the build has no such backend.
ProcessGroupInfo JoinProcessGroup(const std::string& backend, const MpiOptions& options);

/// What JoinProcessGroup returned last ({0, 1} before, or for other backends).
ProcessGroupInfo CurrentProcessGroup();

/// Rank 0's `value` on every process of the group: what only rank 0 can
/// read (mpirun gives stdin to rank 0 alone) shared before each step, so
/// every rank takes the same path. `value` itself outside a process group.
int ShareFromRankZero(int value);

/// Ends what JoinProcessGroup started: finalizes after a clean run; after a
/// timeout or desync, rank 0 aborts the whole job (the others wait for it
/// to, then abort themselves). No-op when nothing was started.
void LeaveProcessGroup(int exit_code);

}  // namespace shardlab
