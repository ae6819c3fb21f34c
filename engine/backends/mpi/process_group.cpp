#include "engine/backends/mpi/process_group.h"

#include "engine/core/backend_traits.h"
#include "engine/core/error.h"

#ifdef SHARDLAB_HAVE_MPI
#include "engine/backends/mpi/mpi_runtime.h"
#endif

namespace shardlab {

namespace {
ProcessGroupInfo& Current() {
  static ProcessGroupInfo info;
  return info;
}
}  // namespace

ProcessGroupInfo CurrentProcessGroup() { return Current(); }

namespace {
std::function<int()>& GpuCounter() {
  static std::function<int()> counter;
  return counter;
}
}  // namespace

void SetGpuCounter(std::function<int()> counter) { GpuCounter() = std::move(counter); }

int CountGpusOrThrow() {
  if (!GpuCounter())
    throw Error("no CUDA device: this build has no CUDA backend (configure with the CUDA "
                "toolkit, SHARDLAB_WITH_CUDA=AUTO or ON)",
                ErrorKind::kRuntime);
  return GpuCounter()();
}

bool IsProcessBackend(const std::string& backend) {
  return BackendTraitsOrDefault(backend).under_mpirun;
}

ProcessGroupInfo JoinProcessGroup(const std::string& backend, const MpiOptions& options) {
  if (!IsProcessBackend(backend)) return {};
#ifdef SHARDLAB_HAVE_MPI
  mpi::Start(options);
  Current() = {mpi::WorldRank(), mpi::WorldSize()};
  return Current();
#else
  (void)options;
  throw Error("backend 'mpi' is not in this build: install an MPI (libopenmpi-dev) and "
              "configure again (SHARDLAB_WITH_MPI=AUTO or ON)");
#endif
}

int ShareFromRankZero(int value) {
#ifdef SHARDLAB_HAVE_MPI
  if (mpi::Started() && mpi::WorldSize() > 1) return mpi::BroadcastInt(value);
#endif
  return value;
}

void LeaveProcessGroup(int exit_code) {
#ifdef SHARDLAB_HAVE_MPI
  mpi::Finish(exit_code);
#else
  (void)exit_code;
#endif
}

}  // namespace shardlab
