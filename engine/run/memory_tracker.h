// MemoryTracker: the device memory a backend allocates for a plan's buffers,
// per rank and category, as the run goes.
//
//   Load:      every buffer that is not transient is allocated for the run
//   op starts: transient buffers it touches that are not live are allocated
//   op ends:   transient buffers whose last op (by count of uses) ended are freed
//
// So a ZeRO-3 layer's gathered parameters count from the all-gather that
// fills them to the last matrix product that reads them, and the peak is
// what the run really needed at once. Backends call OnOpStart/OnOpEnd as
// ops begin and finish, in whatever order they run them.
#pragma once

#include <array>
#include <vector>

#include "engine/plan/plan.h"

namespace shardlab {

struct RankMemory {
  std::array<Bytes, kMemoryCategoryCount> persistent{};  // allocated for the whole run
  std::array<Bytes, kMemoryCategoryCount> peak{};        // largest live bytes per category
  Bytes peak_total = 0;                                  // largest live bytes, all categories
  Bytes current_total = 0;

  Bytes persistent_total() const;
};

struct MemoryUsage {
  std::vector<RankMemory> ranks;
};

class MemoryTracker {
 public:
  void Load(const Plan& plan);
  /// Back to the state right after Load (transient buffers freed).
  void Reset();
  void OnOpStart(OpId id);
  void OnOpEnd(OpId id);
  const MemoryUsage& usage() const { return usage_; }

 private:
  void Change(BufferId id, bool allocate);

  const Plan* plan_ = nullptr;
  // Per op, the transient buffers it touches (each once): [begin[op], begin[op+1]).
  std::vector<std::uint32_t> op_begin_;
  std::vector<BufferId> op_buffers_;
  std::vector<std::int32_t> uses_;      // per buffer: ops that touch it
  std::vector<std::int32_t> left_;      // per buffer: uses not yet ended
  std::vector<char> live_;
  std::array<std::vector<Bytes>, kMemoryCategoryCount> current_;  // [category][rank]
  MemoryUsage usage_;
};

}  // namespace shardlab
