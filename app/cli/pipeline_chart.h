// The pipeline as text: one row per stage, time left to right, each F/B
// slot labelled where it starts and idle time (the bubble) drawn as dots.
//
//   stage 0 |F0 F1 F2 F3 ......... B0    F4 B1    F5 B2   ...
//   stage 3 |......... F0 B0    F1 B1    F2 B2    F3 B3   ...
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/pipeline.h"
#include "engine/core/event.h"

namespace shardlab::cli {

/// Rows of the chart, or one line saying why there is none (too many
/// stages or slots to read as text). At most `max_columns` characters wide.
std::vector<std::string> PipelineChart(const Plan& plan, const PipelineShape& shape,
                                       std::span<const Event> events, int max_columns = 160);

}  // namespace shardlab::cli
