// When a serving replica starts work, and on which requests: the three
// batching policies, as decisions over the queue.
//
//   static      waits for a full batch of max_batch requests (the last,
//               short one goes once no more will come); the batch is
//               padded to its longest prompt and its longest output and
//               holds every slot until its longest request ends
//   dynamic     as static, but a batch also closes when its oldest
//               request has waited `timeout` (Triton's dynamic batcher)
//   continuous  iteration-level (Orca, vLLM, TGI): at every step a
//               finished request's slot is refilled from the queue; the
//               newcomers' prefill runs in that step beside the others'
//               decode; no padding
//
//   static, max_batch 2:   [A B B B]··[C C D D D]     A waits for B; C for D
//   continuous:            [A][B][C]... slots refill at each step
#pragma once

#include <cstdint>
#include <string_view>

#include "engine/core/units.h"

namespace shardlab {

enum class BatchingPolicy : std::uint8_t { kStatic, kDynamic, kContinuous };

/// "static", "dynamic", "continuous"; the parser throws Error(kInvalidInput)
/// "batching: unknown policy 'x' (static, dynamic, continuous or all)".
const char* BatchingPolicyName(BatchingPolicy policy);
BatchingPolicy ParseBatchingPolicy(std::string_view name);

struct BatcherConfig {
  BatchingPolicy policy = BatchingPolicy::kContinuous;
  int max_batch = 8;             // slots per replica
  TimeNs timeout_ns = 5'000'000; // dynamic: the oldest request's longest wait
};

/// What a replica does at `now` with `queued` requests waiting (the
/// oldest since `oldest_arrival_ns`) and `running` in its slots.
struct BatchDecision {
  int admit = 0;          // requests to take from the queue's front now
  TimeNs wake_ns = -1;    // admit 0: the next time to look (-1: at the next arrival)
};

/// `more_coming`: requests will still arrive (a static batch short of
/// max_batch waits for them). A running static or dynamic batch admits
/// nothing until it ends.
BatchDecision DecideBatch(const BatcherConfig& config, TimeNs now, int queued, TimeNs oldest_arrival_ns,
                          int running, bool more_coming);

/// True for static and dynamic: every slot is held, padded, until the
/// batch's longest request ends.
bool BatchRunsToCompletion(BatchingPolicy policy);

}  // namespace shardlab
