#include "engine/train/grad_accumulation.h"

#include <string>

#include "engine/core/error.h"

namespace shardlab {

AccumulationSplit SplitForAccumulation(int batch, int ranks, int accumulate) {
  if (accumulate < 1)
    throw Error("accumulate: must be at least 1 micro-batch per step (got " + std::to_string(accumulate) + ")",
                ErrorKind::kInvalidInput);
  if (ranks < 1 || batch % ranks != 0)
    throw Error("batch: " + std::to_string(batch) + " rows do not split into " + std::to_string(ranks) +
                    " equal shards (one per rank)",
                ErrorKind::kInvalidInput);
  const int per_rank = batch / ranks;
  if (per_rank % accumulate != 0)
    throw Error("accumulate: " + std::to_string(per_rank) + " rows per rank do not split into " +
                    std::to_string(accumulate) + " equal micro-batches; choose a batch that is a multiple of " +
                    std::to_string(ranks * accumulate),
                ErrorKind::kInvalidInput);
  return {per_rank, per_rank / accumulate};
}

int MicrobatchFirstRow(const AccumulationSplit& split, int rank, int microbatch) {
  return rank * split.rows_per_rank + microbatch * split.microbatch_rows;
}

}  // namespace shardlab
