// A readable text dump of a Plan, one op per line, grouped by step.
#pragma once

#include <string>

#include "engine/plan/plan.h"

namespace shardlab {

/// At most max_ops ops are listed; the rest are counted.
std::string DumpPlan(const Plan& plan, std::size_t max_ops = 200);

}  // namespace shardlab
