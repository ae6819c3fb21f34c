#include "app/cli/fault_flags.h"

#include <utility>

#include "app/cli/scenario_flags.h"
#include "engine/core/error.h"
#include "engine/scenarios/fault_params.h"

namespace shardlab::cli {

Error FaultErrorAsFlagError(const Error& error, const ParsedArgs& args) {
  static constexpr std::pair<const char*, const char*> kFieldFlags[] = {
      {"slow_rank: ", "slow-rank"}, {"throttle_link: ", "throttle-link"},
      {"fail_link: ", "fail-link"}, {"fail_rank: ", "fail-rank"},
  };
  return FieldErrorAsFlagError(error, args, kFieldFlags);
}

Faults FaultsFromFlags(const ScenarioSpec& spec, const ParsedArgs& args, const std::string& backend,
                       Topology& topology, const Plan& plan) {
  try {
    return PrepareRunFaults(ParamsFromArgs(spec, args), backend, topology, plan);
  } catch (const Error& e) {
    throw FaultErrorAsFlagError(e, args);
  }
}

}  // namespace shardlab::cli
