// Built instead of rank_nccl.cpp when NCCL was not found.
#include "engine/backends/mpi_gpu/rank_nccl.h"

#include "engine/core/error.h"

namespace shardlab::mpi_gpu {
namespace {
[[noreturn]] void NoNccl() {
  throw Error("this build has no NCCL (install NCCL and configure with SHARDLAB_WITH_NCCL=ON)",
              ErrorKind::kRuntime);
}
}  // namespace

bool RankNccl::Available() { return false; }
std::vector<char> RankNccl::UniqueId(int) { NoNccl(); }
std::unique_ptr<RankNccl> RankNccl::Start(const std::vector<char>&, int, int) { NoNccl(); }

}  // namespace shardlab::mpi_gpu
