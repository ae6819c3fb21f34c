#include "engine/backends/mpi/mpi_runtime.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "engine/core/error.h"

namespace shardlab::mpi {
namespace {

struct State {
  bool started = false;
  bool finished = false;
  bool broken = false;
  int rank = 0;
  int size = 1;
  MpiOptions options;
};

State& Get() {
  static State state;
  return state;
}

}  // namespace

double NowNs() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

void Start(const MpiOptions& options) {
  State& s = Get();
  s.options = options;
  if (s.started) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      throw Error("MPI_Init_thread failed", ErrorKind::kRuntime);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  // Errors come back as codes and become shardlab::Error with context,
  // instead of MPI's default of aborting the job with its own message.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  s.started = true;
}

bool Started() { return Get().started && !Get().finished; }

int WorldRank() { return Get().rank; }
int WorldSize() { return Get().size; }

const MpiOptions& Options() { return Get().options; }

void MarkBroken() { Get().broken = true; }
bool Broken() { return Get().broken; }

int BroadcastInt(int value) {
  if (MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    throw Error("MPI_Bcast failed: a rank of the job is gone", ErrorKind::kRuntime);
  return value;
}

void Finish(int exit_code) {
  State& s = Get();
  if (!s.started || s.finished) return;
  s.finished = true;
  std::cout.flush();
  std::cerr.flush();
  if (!s.broken) {
    MPI_Finalize();
    return;
  }
  const int code = exit_code != 0 ? exit_code : 1;
  if (s.rank != 0) {
    // Rank 0 gathers every rank's status and prints the verdict before it
    // aborts the job; aborting first would kill it mid-report.
    const double wait_ns = std::min(s.options.timeout_ns, 3e9) + 5e9;
    std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<long long>(wait_ns)));
  }
  MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace shardlab::mpi
