// Serving a decoder (engine/model/decoder.h) as a Plan: every request's
// prefill, then its decode token by token with a KV cache, over k replicas
// × pp pipeline stages × tp tensor-parallel ranks, with real arithmetic.
//
//   rank = replica·(pp·tp) + stage·tp + t        requests → replicas round-robin (the router),
//                                                 a replica's requests → micro-batches round-robin
//   one pass of a micro-batch (prefill: every prompt row; decode step j: one row per request)
//
//   stage 0:  x = embed[tok] + pos[p]
//   layer l:  u = LN(x); q = u·Wq_t; K/V cache rows = u·Wk_t, u·Wv_t   (heads t·H/tp.. of rank t)
//             o = softmax(q·K[0..p]ᵀ/√d)·V[0..p] per head and row      (causal: the cache so far)
//             partial = o·Wo_t ══all-reduce══► x += Σ + bo               ← all-reduce 1
//             partial = relu(LN(x)·A_t + a_t)·B_t ══all-reduce══► x += Σ + b   ← all-reduce 2
//   stage s → s+1: x (T × H) sent to the same t of the next stage
//   last:     logits = LN(x)·head; the sampled ids (4 B each) go back to stage 0
//
// So a pass of T tokens sends exactly 2 all-reduces per layer of T × H ×
// dtype bytes each (none at tp 1): decode (T = the batch) moves a few KiB
// per all-reduce and is bound by the ring's 2(tp−1) latencies α; prefill
// (T = the prompts' tokens) by bandwidth and FLOPs. Micro-batches pipeline
// through the stages; decode step j+1 of a micro-batch waits for the ids of
// step j (autoregression). Compute ops run in plan order on each rank's
// compute lane.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/units.h"
#include "engine/model/decoder.h"
#include "engine/plan/plan.h"

namespace shardlab {

struct ServingLayout {
  int tp = 1;
  int pp = 1;
  int replicas = 1;
  int ranks() const { return tp * pp * replicas; }
  int rank(int replica, int stage, int t) const { return (replica * pp + stage) * tp + t; }
};

/// Throws Error(kInvalidInput): "tp: ", "pp: " (at most the layers),
/// "replicas: ", and the decoder's own fields (heads over tp).
void CheckServingLayout(const ServingLayout& layout, const DecoderConfig& model);

/// One request: the ids fed, prompt first; decode feeds the rest one per
/// step, so it yields tokens.size() − prompt + 1 output tokens.
struct ServedRequest {
  std::vector<int> tokens;
  int prompt = 1;
  int decode_steps() const { return static_cast<int>(tokens.size()) - prompt; }
};

struct DecodePlanConfig {
  DecoderConfig model;
  ServingLayout layout;
  int microbatches = 1;  // per replica
  DType dtype = DType::kF32;
  std::vector<ServedRequest> requests;
};

/// One all-reduce of the plan: which pass, how many tokens, bytes.
struct DecodeAllReduce {
  int seq = 0;  // the ops' collective_seq
  int replica = 0, stage = 0, layer = 0, microbatch = 0;
  int pass = 0;  // 0: prefill, j: decode step j
  int which = 0; // 0: after attention, 1: after the MLP
  std::int64_t tokens = 0;
  Bytes bytes = 0;  // tokens × H × dtype
};

/// Where request `request`'s logits end, on one rank of its replica's last
/// stage: `rows` positions × V, row p = the logits after position p.
struct DecodeLogitsBuffer {
  int request = 0;
  int rank = 0;
  BufferId buffer = kNoBuffer;
  std::int64_t rows = 0;
};

struct DecodePlan {
  DecodePlanConfig config;
  Plan plan;
  std::vector<int> replica_of;     // per request: the router's choice
  std::vector<int> microbatch_of;  // per request
  std::vector<DecodeLogitsBuffer> logits;
  std::vector<DecodeAllReduce> allreduces;
  std::vector<Bytes> kv_cache_bytes;  // per rank: its K and V caches (the buffers of
                                      // category kActivations: the memory tracker counts them)
  std::vector<Bytes> weight_bytes;    // per rank
  int passes = 0;                     // 1 + the most decode steps
};

/// Checks the config (layout, model, every request's ids within V and
/// its length within max_context, at least one request) and builds the plan.
DecodePlan BuildDecodePlan(const DecodePlanConfig& config);

}  // namespace shardlab
