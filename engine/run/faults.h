// Stragglers and failures a teacher switches on, for one run:
//
//   slow_rank      R:FACTOR    rank R's compute and sends take FACTOR times longer
//   throttle_link  A-B:GBPS    the link between A and B runs at GBPS per direction
//   fail_link      A-B@STEP    the link is gone from logical step STEP on
//   fail_rank      R@STEP      rank R stops before its ops of step STEP
//
// A and B are node names of the topology ("gpu2-nvswitch") or GPU ranks
// ("2-3"); the two must share a link. A throttle changes the topology
// itself (ApplyLinkThrottles), before anything reads it, so the automatic
// ring order, the formulas and every backend see the slower link. The
// simulator applies the rest in its model: a slow rank's local ops last
// FACTOR times longer and its transfers move FACTOR times their bytes
// through the links they cross; a failed rank or link holds every op that
// needs it, and the run ends with a report naming who never joined what.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/topology/topology.h"

namespace shardlab {

struct Plan;

struct SlowRank {
  std::int32_t rank = -1;
  double factor = 1;
};

struct LinkRef {
  std::string a, b;          // as the user named them
  std::int32_t link = -1;    // index into topology.links, once resolved
};

struct LinkThrottle {
  LinkRef link;
  double gbps = 0;
};

struct LinkFailure {
  LinkRef link;
  std::int32_t step = 0;
};

struct RankFailure {
  std::int32_t rank = -1;
  std::int32_t step = 0;
};

struct Faults {
  std::vector<SlowRank> slow_ranks;
  std::vector<LinkThrottle> throttles;
  std::vector<LinkFailure> failed_links;
  std::vector<RankFailure> failed_ranks;

  bool empty() const {
    return slow_ranks.empty() && throttles.empty() && failed_links.empty() && failed_ranks.empty();
  }
  /// FACTOR of rank R (1 when it is not slow).
  double SlowFactor(std::int32_t rank) const;
  /// True when rank R has failed by step S.
  bool RankFailedAt(std::int32_t rank, std::int32_t step) const;
  /// "slow rank 3 x2, link gpu2-gpu3 at 10 GB/s, ..." (empty when none).
  std::string Describe() const;
};

/// Parse one switch's value. Throw Error(kInvalidInput) "slow_rank: ..."
/// (the field named as a lab writes it) on bad syntax or values.
SlowRank ParseSlowRank(const std::string& text);
LinkThrottle ParseLinkThrottle(const std::string& text);
LinkFailure ParseLinkFailure(const std::string& text);
RankFailure ParseRankFailure(const std::string& text);

/// Resolves every link against `topology` and checks ranks against
/// `ranks`; throws Error "fail_link: no link between gpu2 and gpu5 in
/// dgx-a100 (gpu2 links to nvswitch, pcie1)" and the like.
void ResolveFaults(Faults& faults, const Topology& topology, int ranks);

/// Checks steps against the plan: "fail_rank: step 40 is past the run's
/// last step (27)".
void CheckFaultSteps(const Faults& faults, const Plan& plan);

/// Sets each throttled link's bandwidth (after ResolveFaults).
void ApplyLinkThrottles(const Faults& faults, Topology& topology);

/// What backend `backend` cannot apply of `faults` (its BackendTraits'
/// slow_rank, failed_rank, failed_link), as one line naming the first such
/// field ("fail_link: the cuda backend runs real hardware, whose links
/// cannot be broken on request; only the simulator (backend sim) applies
/// it"); "" when it applies them all. As the backends declare them:
///   sim   everything, in its model
///   mpi   slow_rank (its host work and sends really wait FACTOR-1 times
///         longer), fail_rank (the rank hangs before step STEP, withholding
///         its sends: the others' timeout and its desync report follow),
///         throttle_link (the machine the plan and formulas see)
///   cuda  slow_rank (a spin of FACTOR-1 times each op's modelled time on
///         the rank's stream), throttle_link (as mpi; --emulate-links holds
///         transfers for the throttled time)
///   other throttle_link only (an undeclared name too)
std::string FaultRefusal(const Faults& faults, const std::string& backend);

}  // namespace shardlab
