#include "engine/backends/mpi_gpu/staging_pool.h"

#include <algorithm>

#include "engine/backends/cuda/cuda_check.h"

namespace shardlab::mpi_gpu {

StagingPool::~StagingPool() {
  // Errors ignored: a sticky error must not turn a destructor into a crash.
  for (Block& b : blocks_) {
    if (b.ptr == nullptr) continue;
    if (memory_ == StagingMemory::kPinnedHost) cudaFreeHost(b.ptr);
    else cudaFree(b.ptr);
  }
}

void* StagingPool::Take(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, sizeof(float));
  Block* best = nullptr;
  for (Block& b : blocks_)
    if (!b.taken && b.bytes >= bytes && (best == nullptr || b.bytes < best->bytes)) best = &b;
  if (best == nullptr) {
    Block fresh;
    fresh.bytes = bytes;
    if (memory_ == StagingMemory::kPinnedHost)
      CUDA_CHECK(cudaHostAlloc(&fresh.ptr, bytes, cudaHostAllocDefault), rank_);
    else
      CUDA_CHECK(cudaMalloc(&fresh.ptr, bytes), rank_);
    blocks_.push_back(fresh);
    best = &blocks_.back();
  }
  best->taken = true;
  return best->ptr;
}

void StagingPool::Give(void* block) {
  for (Block& b : blocks_)
    if (b.ptr == block) b.taken = false;
}

std::size_t StagingPool::taken() const {
  return static_cast<std::size_t>(
      std::count_if(blocks_.begin(), blocks_.end(), [](const Block& b) { return b.taken; }));
}

}  // namespace shardlab::mpi_gpu
