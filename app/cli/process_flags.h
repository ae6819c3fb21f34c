// The flags of backends that run one rank per process (--backend mpi),
// handled before any command runs: the MPI runtime starts first, so that
// only rank 0 prints (the others run the same command with stdout silenced
// and without --trace) and every command accepts --mpi-timeout,
// --inject-fault and --device without a flag table of its own.
#pragma once

#include <string>
#include <vector>

#include "engine/backends/mpi/process_group.h"

namespace shardlab::cli {

struct ProcessSetup {
  bool joined = false;      // a process backend was started
  ProcessGroupInfo group;
};

/// Takes --mpi-timeout, --inject-fault and --device out of `words` (bad values and
/// use without --backend mpi are UsageErrors), starts the process group
/// when the backend runs one rank per process, and on ranks other than 0
/// silences stdout and drops --trace.
ProcessSetup TakeProcessFlags(std::vector<std::string>& words);

}  // namespace shardlab::cli
