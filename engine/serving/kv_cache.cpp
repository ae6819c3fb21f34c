#include "engine/serving/kv_cache.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"

namespace shardlab {

PagedKvCache::PagedKvCache(std::int64_t total_blocks, int block_tokens) : block_tokens_(block_tokens) {
  if (block_tokens < 1) throw Error("kv-block: " + std::to_string(block_tokens) + " tokens per block must be at least 1", ErrorKind::kInvalidInput);
  if (total_blocks < 1 || total_blocks > (std::int64_t{1} << 31))
    throw Error("kv-cache: " + std::to_string(total_blocks) + " blocks: the cache must hold at least one block", ErrorKind::kInvalidInput);
  total_ = total_blocks;
}

std::int64_t PagedKvCache::BlocksNeeded(std::int64_t tokens, int prefix_group, int prefix_tokens) const {
  const std::int64_t all = (tokens + block_tokens_ - 1) / block_tokens_;
  if (prefix_group < 0) return all;
  const std::int64_t shared = std::min<std::int64_t>(prefix_tokens, tokens) / block_tokens_;
  const auto it = prefixes_.find(prefix_group);
  return it != prefixes_.end() && it->second.users > 0 ? all - shared : all;
}

std::int64_t PagedKvCache::Take(int owner) {
  std::int64_t b = static_cast<std::int64_t>(owner_.size());
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else {
    owner_.push_back(-1);
    refs_.push_back(0);
  }
  owner_[static_cast<std::size_t>(b)] = owner;
  refs_[static_cast<std::size_t>(b)] = 1;
  ++used_;
  return b;
}

void PagedKvCache::Drop(std::int64_t b) {
  if (--refs_[static_cast<std::size_t>(b)] > 0) return;
  owner_[static_cast<std::size_t>(b)] = -1;
  free_.push_back(b);
  --used_;
}

bool PagedKvCache::Admit(int seq, std::int64_t tokens, int prefix_group, int prefix_tokens) {
  if (seqs_.count(seq) != 0 || tokens < 0) return false;
  if (BlocksNeeded(tokens, prefix_group, prefix_tokens) > free_blocks()) return false;
  Sequence s;
  if (prefix_group >= 0) {
    const int shared = static_cast<int>(std::min<std::int64_t>(prefix_tokens, tokens) / block_tokens_);
    Prefix& p = prefixes_[prefix_group];
    if (p.users == 0) {
      p.blocks.clear();
      for (int i = 0; i < shared; ++i) p.blocks.push_back(Take(-2));
    } else {
      for (std::int64_t b : p.blocks) ++refs_[static_cast<std::size_t>(b)];
    }
    ++p.users;
    s.blocks = p.blocks;
    s.shared_blocks = static_cast<int>(p.blocks.size());
    s.prefix_group = prefix_group;
  }
  s.tokens = 0;
  seqs_[seq] = s;
  if (!Grow(seq, tokens)) {  // cannot happen: counted above
    Release(seq);
    return false;
  }
  return true;
}

bool PagedKvCache::Grow(int seq, std::int64_t tokens) {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) return false;
  Sequence& s = it->second;
  const std::int64_t want = (tokens + block_tokens_ - 1) / block_tokens_;
  const std::int64_t more = want - static_cast<std::int64_t>(s.blocks.size());
  if (more > free_blocks()) return false;
  for (std::int64_t i = 0; i < more; ++i) s.blocks.push_back(Take(seq));
  s.tokens = std::max(s.tokens, tokens);
  return true;
}

void PagedKvCache::Release(int seq) {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  for (std::int64_t b : it->second.blocks) Drop(b);
  if (it->second.prefix_group >= 0) --prefixes_[it->second.prefix_group].users;
  seqs_.erase(it);
}

std::int64_t PagedKvCache::tokens_held() const {
  // Shared blocks hold block_tokens each, once; each sequence its own part.
  std::int64_t tokens = 0;
  for (const auto& [group, p] : prefixes_)
    if (p.users > 0) tokens += static_cast<std::int64_t>(p.blocks.size()) * block_tokens_;
  for (const auto& [seq, s] : seqs_) tokens += s.tokens - std::int64_t{s.shared_blocks} * block_tokens_;
  return tokens;
}

double PagedKvCache::Occupancy() const {
  if (used_ == 0) return 0;
  return static_cast<double>(tokens_held()) / static_cast<double>(used_ * block_tokens_);
}

}  // namespace shardlab
