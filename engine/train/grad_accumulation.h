// Gradient accumulation: K micro-batches per optimizer step, their
// gradients added on the rank before one all-reduce.
//
//   rank r:  [F B]mb0 [F B]mb1 ... [F B]mb(K−1)  all-reduce  update
//             grads += each micro-batch's dW, db (the loss is the whole
//             batch's mean, so the sum is the batch gradient)
//
// The step is that of a K-times-larger batch: B = N·K·b rows for N ranks
// and micro-batches of b rows. Communication per step is the same, so per
// sample it falls by K:
//
//   bytes per sample = 2(N−1)/N · 4Ψ / (N·K·b)
//
// Activations are those of one micro-batch: memory does not grow with K.
#pragma once

namespace shardlab {

struct AccumulationSplit {
  int rows_per_rank = 0;   // B/N
  int microbatch_rows = 0; // b = B/(N·K)
};

/// Checks that the batch splits into `ranks` × `accumulate` equal
/// micro-batches; throws Error(kInvalidInput) "accumulate: ..." or
/// "batch: ..." naming the numbers.
AccumulationSplit SplitForAccumulation(int batch, int ranks, int accumulate);

/// The first row of micro-batch j of rank r.
int MicrobatchFirstRow(const AccumulationSplit& split, int rank, int microbatch);

}  // namespace shardlab
