#include "engine/scenarios/fault_params.h"

#include <string>

#include "engine/core/error.h"
#include "engine/plan/plan.h"

namespace shardlab {
namespace {

// "a,b,c" -> {"a", "b", "c"}; "none" or "" -> {}.
std::vector<std::string> Items(const std::string& text) {
  std::vector<std::string> items;
  if (text.empty() || text == "none") return items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace

std::vector<ParamSpec> FaultParams() {
  using T = ParamType;
  return {
      Param("slow_rank", T::kText, "none",
            "a straggler: rank R's compute and sends take FACTOR times longer (simulator)")
          .ValueName("R:FACTOR"),
      Param("throttle_link", T::kText, "none",
            "the link between nodes (or GPU ranks) A and B runs at GBPS per direction")
          .ValueName("A-B:GBPS"),
      Param("fail_link", T::kText, "none",
            "the link between A and B fails at logical step STEP (simulator)")
          .ValueName("A-B@STEP"),
      Param("fail_rank", T::kText, "none", "rank R stops before its ops of step STEP (simulator)")
          .ValueName("R@STEP"),
  };
}

Faults FaultsFromParams(const ScenarioParams& params) {
  Faults faults;
  const ScenarioSpec& spec = params.spec();
  if (spec.FindParam("slow_rank"))
    for (const std::string& s : Items(params.Text("slow_rank"))) faults.slow_ranks.push_back(ParseSlowRank(s));
  if (spec.FindParam("throttle_link"))
    for (const std::string& s : Items(params.Text("throttle_link")))
      faults.throttles.push_back(ParseLinkThrottle(s));
  if (spec.FindParam("fail_link"))
    for (const std::string& s : Items(params.Text("fail_link")))
      faults.failed_links.push_back(ParseLinkFailure(s));
  if (spec.FindParam("fail_rank"))
    for (const std::string& s : Items(params.Text("fail_rank")))
      faults.failed_ranks.push_back(ParseRankFailure(s));
  return faults;
}

Faults PrepareRunFaults(const ScenarioParams& params, const std::string& backend,
                        Topology& topology, const Plan& plan) {
  const Faults asked = FaultsFromParams(params);
  if (asked.empty()) return asked;
  const std::string refusal = FaultRefusal(asked, backend);
  if (!refusal.empty()) throw Error(refusal, ErrorKind::kInvalidInput);
  return ResolveRunFaults(params, topology, plan);
}

Faults ResolveRunFaults(const ScenarioParams& params, Topology& topology, const Plan& plan) {
  Faults faults = FaultsFromParams(params);
  if (faults.empty()) return faults;
  ResolveFaults(faults, topology, plan.num_ranks);
  CheckFaultSteps(faults, plan);
  ApplyLinkThrottles(faults, topology);
  return faults;
}

}  // namespace shardlab
