// Blocks of pinned host memory or device memory that transfers stage
// through, kept and reused across ops and runs: cudaHostAlloc and cudaMalloc
// synchronize the device, so allocating per transfer would serialize the
// lanes. A block is taken for one op and given back when the op completes.
#pragma once

#include <cstddef>
#include <vector>

namespace shardlab::mpi_gpu {

enum class StagingMemory { kPinnedHost, kDevice };

class StagingPool {
 public:
  StagingPool(StagingMemory memory, int rank) : memory_(memory), rank_(rank) {}
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  /// A free block of at least `bytes` (the smallest that fits), or a new one.
  /// Call with the rank's device current.
  void* Take(std::size_t bytes);
  /// Gives back a block Take returned; unknown pointers are ignored.
  void Give(void* block);
  /// Blocks currently taken.
  std::size_t taken() const;

 private:
  struct Block {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    bool taken = false;
  };
  StagingMemory memory_;
  int rank_;
  std::vector<Block> blocks_;
};

}  // namespace shardlab::mpi_gpu
