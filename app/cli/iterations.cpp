#include "app/cli/iterations.h"

#include <algorithm>

namespace shardlab::cli {

void AddIterationFlags(std::vector<FlagSpec>& flags) {
  auto free_short = [&](char c) {
    return std::none_of(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.short_name == c; });
  };
  flags.push_back({"warmup", free_short('w') ? 'w' : '\0', "N",
                   "untimed runs first, as nccl-tests (default: 1 on --backend cuda, else 0)"});
  flags.push_back({"iters", free_short('n') ? 'n' : '\0', "N",
                   "timed runs; reports their average and best, shows the last (default: 1)"});
}

IterationSettings IterationsFromArgs(const ParsedArgs& args, const std::string& backend) {
  IterationSettings s;
  s.warmup = DefaultWarmup(backend);
  if (args.Has("warmup"))
    s.warmup = static_cast<int>(ParseIntValue(args.Spelling("warmup"), args.Get("warmup"), 0, 1000000));
  if (args.Has("iters"))
    s.iters = static_cast<int>(ParseIntValue(args.Spelling("iters"), args.Get("iters"), 1, 1000000));
  return s;
}

}  // namespace shardlab::cli
