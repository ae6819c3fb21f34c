// A paged KV cache (as vLLM's PagedAttention): each GPU's cache memory is
// cut into blocks of `block_tokens` positions; a sequence holds a list of
// blocks, allocated as it grows, so no memory is reserved for tokens it
// has not reached and only its last block is partly empty (fragmentation).
//
//   blocks:  [A0][A1][S0][S1][B0][  ][C0][  ]      S: a shared prefix (refcount 3)
//   A: S0 S1 A0 A1     B: S0 S1 B0     C: S0 S1 C0
//
// Requests that start with one prompt prefix share its full blocks, each
// with a reference count; the prefix's last partial block is copied into
// the sequence (its next tokens differ). A block returns to the free list
// when its count reaches 0. Memory is counted in blocks; a block holds
// block_tokens × (K and V) × layers × H/tp × dtype bytes on each GPU.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace shardlab {

class PagedKvCache {
 public:
  /// Throws Error(kInvalidInput) "kv-cache: ..." for no blocks or block_tokens < 1.
  PagedKvCache(std::int64_t total_blocks, int block_tokens);

  int block_tokens() const { return block_tokens_; }
  std::int64_t total_blocks() const { return total_; }
  std::int64_t used_blocks() const { return used_; }
  std::int64_t free_blocks() const { return total_blocks() - used_; }

  /// Blocks a sequence of `tokens` positions needs beyond the shared ones,
  /// when its prompt starts with prefix `prefix_group` of `prefix_tokens`
  /// (-1: none); the prefix's blocks count only when nobody holds them yet.
  std::int64_t BlocksNeeded(std::int64_t tokens, int prefix_group, int prefix_tokens) const;

  /// Adds sequence `seq` with `tokens` positions (blocks for all of them);
  /// false, changing nothing, when the free blocks are too few.
  bool Admit(int seq, std::int64_t tokens, int prefix_group = -1, int prefix_tokens = 0);
  /// Grows `seq` to `tokens` positions; false when no block is free.
  bool Grow(int seq, std::int64_t tokens);
  /// Frees the sequence's own blocks and drops its references to shared ones.
  void Release(int seq);

  /// Positions written over positions the used blocks could hold: 1 −
  /// this is the internal fragmentation (0 when nothing is used).
  double Occupancy() const;
  std::int64_t tokens_held() const;
  /// Per block ever used (blocks are handed out lowest first; the rest are
  /// free): -1 free, -2 a shared prefix block, else the sequence.
  const std::vector<int>& owners() const { return owner_; }
  int refcount(std::int64_t block) const { return refs_[static_cast<std::size_t>(block)]; }

 private:
  std::int64_t Take(int owner);
  void Drop(std::int64_t block);

  struct Sequence {
    std::vector<std::int64_t> blocks;  // shared ones first
    std::int64_t tokens = 0;
    int shared_blocks = 0;
    int prefix_group = -1;
  };
  struct Prefix {
    std::vector<std::int64_t> blocks;
    int users = 0;
  };
  int block_tokens_ = 16;
  std::vector<int> owner_;
  std::vector<int> refs_;
  std::vector<std::int64_t> free_;  // a stack of returned block ids; then never-used ones from owner_.size()
  std::int64_t total_ = 0;
  std::int64_t used_ = 0;
  std::map<int, Sequence> seqs_;
  std::map<int, Prefix> prefixes_;
};

}  // namespace shardlab
