// The mpi backend: one process per plan rank, started by mpirun.
//
//   mpirun -np 4 shardlab-cli run allreduce --ranks 4 --size 64M --backend mpi
//
// Each process allocates only its own rank's buffers and runs only its own
// rank's ops: a Send is an MPI_Isend and its Recv an MPI_Irecv (tag = the
// pair's send op, offset per run of the plan), reductions and kernels run
// on the host with the simulator's code (ApplyOpData). A progress loop
// issues ready ops and tests pending ones; every wait is bounded by
// --mpi-timeout (default 30 s), after which rank 0 gathers every rank's
// status over a side channel and names the rank that is out of step.
//
// Clocks: at Load each rank measures its offset to rank 0 (ping-pongs, the
// sample with the shortest round trip wins); events carry rank 0's clock
// (ClockKind::kHostMpiAligned). After every RunThroughStep the events of all
// ranks are gathered to every process and handed to the sink in end order,
// so every process sees the same run (only rank 0 prints it). After the
// last step every buffer is broadcast from its owner to every process, so
// the scenarios' checks read all of them on every rank.
//
// --device gpu (MpiOptions::device): Load counts every process's GPUs and
// ends the job with one message (rank 0's) when some process has none.
// Otherwise each process takes GPU (local rank mod count) and a RankDevice
// (engine/backends/mpi/rank_device.h; engine/backends/mpi_gpu) holds its buffers
// there: compute, copy and reduce ops run as CUDA kernels / cuBLAS on a
// stream per lane, timed by CUDA events put on the aligned clock (clock
// kCudaEvent); transfers pass device pointers to a CUDA-aware MPI or stage
// through pinned host memory (placement() says which). --algo nccl
// (kCollective ops) needs --device gpu: rank 0's NCCL unique id is
// broadcast over MPI, each op is one NCCL call, and a call that does not
// finish within --mpi-timeout aborts the communicator and is named by its
// sequence number in the desync report.
#pragma once

#include <memory>
#include <string>

#include "engine/backends/mpi/mpi_options.h"
#include "engine/run/backend.h"

namespace shardlab {

std::unique_ptr<Backend> CreateMpiBackend();

/// What the mpi backend is and can do: declared in every build (the app
/// runs it in a worker under mpirun), registered with CreateMpiBackend
/// where MPI was found.
inline BackendDeclaration MpiBackendDeclaration() {
  BackendDeclaration d;
  d.name = "mpi";
  d.description = "one process per rank under mpirun: MPI transfers, real data, host clocks aligned";
  BackendTraits& t = d.traits;
  t.event_clock = ClockKind::kHostMpiAligned;  // --device gpu: CUDA events on that clock
  t.computes_in_float32 = true;
  t.slow_rank = FaultSupport::kReal;    // delays the rank's work
  t.failed_rank = FaultSupport::kReal;  // withholds its sends (its timeout reports it)
  t.needs_worker = true;
  t.under_mpirun = true;
  t.worker_flags = {
      {"mpi-timeout", [](const std::string& spelling, const std::string& value) { ParseMpiTimeout(spelling, value); }},
      {"mpi-fault", [](const std::string& spelling, const std::string& value) { ParseMpiFault(spelling, value); }},
  };
  return d;
}

}  // namespace shardlab
