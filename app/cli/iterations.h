// The CLI's warm-up and iteration flags (-w/--warmup N, -n/--iters N), the
// same on every scenario's `run`; the loop is engine/run/iterations.h.
#pragma once

#include <string>
#include <vector>

#include "app/common/args.h"
#include "engine/run/iterations.h"

namespace shardlab::cli {

/// Adds --warmup/-w and --iters/-n (a short name only where the command
/// does not use it already: `run zero` keeps -n for --ranks).
void AddIterationFlags(std::vector<FlagSpec>& flags);

/// Reads them (defaults: DefaultWarmup(backend), 1); --warmup below 0 or
/// --iters below 1 is a UsageError (one line, exit 2).
IterationSettings IterationsFromArgs(const ParsedArgs& args, const std::string& backend);

}  // namespace shardlab::cli
