// Built instead of nccl_collective.cpp when NCCL was not found.
#include "engine/backends/cuda/nccl_collective.h"

#include "engine/core/error.h"

namespace shardlab::cuda {

std::unique_ptr<NcclCommunicators> NcclCommunicators::Create(const std::vector<int>&, int) {
  throw Error("this build has no NCCL (install NCCL and configure with SHARDLAB_WITH_NCCL=ON)",
              ErrorKind::kRuntime);
}

}  // namespace shardlab::cuda
