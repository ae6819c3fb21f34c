// `run elastic` (cmd_elastic.cpp): data-parallel training that loses a GPU
// and recovers from its last checkpoint.
#pragma once

#include <span>
#include <string>

#include "app/common/args.h"

namespace shardlab::cli {

CommandSpec ElasticSpec();
/// run's first word "elastic" hands the rest of the words here.
int ElasticMain(std::span<const std::string> args);

}  // namespace shardlab::cli
