// The time one serving step takes on one replica: the roofline of its
// compute (FLOPs over the GPU's rate, weight and KV-cache bytes over its
// memory bandwidth) plus its communication, by the formulas the simulator
// and the tp scenario use:
//
//   compute   max(2·T·P/tp + 4·A·H/tp, dtype·(P/tp + 2·C·H/tp)) per layer summed
//             (T tokens, P parameters, A attention pairs, C cached positions read)
//   TP        2·L all-reduces of T·H·dtype bytes, each the ring's
//             2(tp−1)/tp · M/B + 2(tp−1)·α
//   PP        (pp−1) hops of T·H·dtype bytes, α + M/B each
//
// Decode has T = the batch (a few rows): its weights are read once per step
// whatever T is (memory-bound) and its all-reduces are a few KiB (bound by
// α); prefill has T = the prompts' tokens: FLOPs and bandwidth.
#pragma once

#include <cstdint>

#include "engine/core/op_kinds.h"
#include "engine/core/units.h"
#include "engine/model/decoder.h"

namespace shardlab {

/// What one step computes.
struct StepWork {
  std::int64_t prefill_tokens = 0;   // prompt tokens prefilled (padding included)
  std::int64_t prefill_pairs = 0;    // Σ over prompts of P(P+1)/2: causal attention pairs
  std::int64_t decode_rows = 0;      // sequences decoding one token (padding included)
  std::int64_t decode_context = 0;   // Σ of their positions: KV-cache rows read
};

struct StepCostModel {
  DecoderConfig model;
  int tp = 1, pp = 1;
  DType dtype = DType::kF16;
  double weight_bytes_per_param = 2;  // dtype, or 1 for int8 weights (+ scales)
  double tflops = 0;                  // the GPU's rate for dtype
  Gbps memory_gbps = 0;
  TimeNs ring_alpha_ns = 0;           // the tp ring's slowest hop
  Gbps ring_gbps = 0;
  TimeNs hop_alpha_ns = 0;            // between pipeline stages
  Gbps hop_gbps = 0;

  struct Parts {
    TimeNs compute_ns = 0, memory_ns = 0, allreduce_ns = 0, pipeline_ns = 0;
    TimeNs total_ns() const;
  };
  Parts Cost(const StepWork& work) const;
  TimeNs StepNs(const StepWork& work) const { return Cost(work).total_ns(); }
  /// One all-reduce of `tokens` × H × dtype bytes.
  TimeNs AllReduceNs(std::int64_t tokens) const;
  /// KV-cache bytes one token position takes on one GPU: 2·(L/pp)·(H/tp)·dtype.
  Bytes KvBytesPerToken() const;
  /// Weight bytes on one GPU.
  Bytes WeightBytesPerGpu() const;
};

}  // namespace shardlab
