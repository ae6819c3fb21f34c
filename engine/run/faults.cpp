#include "engine/run/faults.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/core/backend_traits.h"
#include "engine/core/error.h"
#include "engine/plan/plan.h"

namespace shardlab {
namespace {

Error FieldError(const std::string& field, const std::string& message) {
  return Error(field + ": " + message);
}

std::int32_t ParseIndex(const std::string& field, const std::string& text, const char* what) {
  long long v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0 ||
      v > 1000000000)
    throw FieldError(field, "'" + text + "' is not a " + what + " (a whole number from 0)");
  return static_cast<std::int32_t>(v);
}

double ParsePositive(const std::string& field, const std::string& text, const char* what) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    throw FieldError(field, "'" + text + "' is not a number (" + what + ")");
  if (v <= 0) throw FieldError(field, std::string(what) + " must be more than 0 (got " + text + ")");
  return v;
}

// "TEXT<sep>TAIL" split at the last `sep`; throws naming the expected form.
std::pair<std::string, std::string> Split(const std::string& field, const std::string& text,
                                          char sep, const char* form) {
  const std::size_t at = text.rfind(sep);
  if (at == std::string::npos || at == 0 || at + 1 == text.size())
    throw FieldError(field, "'" + text + "' is not " + form);
  return {text.substr(0, at), text.substr(at + 1)};
}

LinkRef ParseLinkRef(const std::string& field, const std::string& text, const char* form) {
  const std::size_t dash = text.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == text.size())
    throw FieldError(field, "'" + text + "' names no link (write A-B, as in " + form + ")");
  // Node names may hold dashes ("nvswitch-0"): split at the dash whose two
  // sides are both nodes when resolving; keep the whole text until then.
  LinkRef ref;
  ref.a = text.substr(0, dash);
  ref.b = text.substr(dash + 1);
  return ref;
}

std::string Trimmed(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

int NodeOf(const Topology& topology, const std::string& name) {
  const int node = topology.FindNode(name);
  if (node >= 0) return node;
  // A GPU rank: "3" is topology.gpus[3].
  long long rank = -1;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), rank);
  if (ec == std::errc() && end == name.data() + name.size() && rank >= 0 &&
      rank < topology.num_gpus())
    return topology.gpus[static_cast<std::size_t>(rank)];
  return -1;
}

void Resolve(const std::string& field, LinkRef& ref, const Topology& topology) {
  // Try every dash of "a-b-c" as the split, so node names may hold dashes.
  const std::string whole = ref.a + "-" + ref.b;
  int a = -1, b = -1;
  for (std::size_t dash = whole.find('-'); dash != std::string::npos;
       dash = whole.find('-', dash + 1)) {
    const int na = NodeOf(topology, whole.substr(0, dash));
    const int nb = NodeOf(topology, whole.substr(dash + 1));
    if (na >= 0 && nb >= 0) {
      ref.a = whole.substr(0, dash);
      ref.b = whole.substr(dash + 1);
      a = na;
      b = nb;
      break;
    }
  }
  if (a < 0 || b < 0)
    throw FieldError(field, "'" + whole + "' does not name two nodes of " + topology.name +
                                " (node names such as " + topology.nodes.front().name +
                                ", or GPU ranks 0.." + std::to_string(topology.num_gpus() - 1) +
                                ")");
  for (std::size_t l = 0; l < topology.links.size(); ++l) {
    const Link& link = topology.links[l];
    if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) {
      ref.link = static_cast<std::int32_t>(l);
      return;
    }
  }
  std::string neighbours;
  for (const Link& link : topology.links) {
    if (link.a != a && link.b != a) continue;
    const int other = link.a == a ? link.b : link.a;
    neighbours += (neighbours.empty() ? "" : ", ") + topology.nodes[static_cast<std::size_t>(other)].name;
  }
  throw FieldError(field, "no link between " + topology.nodes[static_cast<std::size_t>(a)].name +
                              " and " + topology.nodes[static_cast<std::size_t>(b)].name + " in " +
                              topology.name + " (" + topology.nodes[static_cast<std::size_t>(a)].name +
                              " links to " + (neighbours.empty() ? "nothing" : neighbours) + ")");
}

void CheckRank(const std::string& field, std::int32_t rank, int ranks) {
  if (rank >= ranks)
    throw FieldError(field, "rank " + std::to_string(rank) + " is out of range (the run has " +
                                std::to_string(ranks) + " ranks, 0.." + std::to_string(ranks - 1) +
                                ")");
}

}  // namespace

double Faults::SlowFactor(std::int32_t rank) const {
  double factor = 1;
  for (const SlowRank& s : slow_ranks)
    if (s.rank == rank) factor *= s.factor;
  return factor;
}

bool Faults::RankFailedAt(std::int32_t rank, std::int32_t step) const {
  for (const RankFailure& f : failed_ranks)
    if (f.rank == rank && step >= f.step) return true;
  return false;
}

std::string Faults::Describe() const {
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  for (const SlowRank& s : slow_ranks)
    add("rank " + std::to_string(s.rank) + " " + Trimmed(s.factor) + "x slower");
  for (const LinkThrottle& t : throttles)
    add("link " + t.link.a + "-" + t.link.b + " at " + Trimmed(t.gbps) + " GB/s");
  for (const LinkFailure& f : failed_links)
    add("link " + f.link.a + "-" + f.link.b + " fails at step " + std::to_string(f.step));
  for (const RankFailure& f : failed_ranks)
    add("rank " + std::to_string(f.rank) + " fails at step " + std::to_string(f.step));
  return out;
}

SlowRank ParseSlowRank(const std::string& text) {
  const auto [rank, factor] = Split("slow_rank", text, ':', "R:FACTOR (as in 3:2)");
  return SlowRank{ParseIndex("slow_rank", rank, "rank"), ParsePositive("slow_rank", factor, "FACTOR")};
}

LinkThrottle ParseLinkThrottle(const std::string& text) {
  const auto [link, gbps] = Split("throttle_link", text, ':', "A-B:GBPS (as in gpu2-gpu3:10)");
  return LinkThrottle{ParseLinkRef("throttle_link", link, "gpu2-gpu3:10"),
                      ParsePositive("throttle_link", gbps, "GBPS")};
}

LinkFailure ParseLinkFailure(const std::string& text) {
  const auto [link, step] = Split("fail_link", text, '@', "A-B@STEP (as in gpu2-gpu3@4)");
  return LinkFailure{ParseLinkRef("fail_link", link, "gpu2-gpu3@4"),
                     ParseIndex("fail_link", step, "step")};
}

RankFailure ParseRankFailure(const std::string& text) {
  const auto [rank, step] = Split("fail_rank", text, '@', "R@STEP (as in 3@4)");
  return RankFailure{ParseIndex("fail_rank", rank, "rank"), ParseIndex("fail_rank", step, "step")};
}

void ResolveFaults(Faults& faults, const Topology& topology, int ranks) {
  for (SlowRank& s : faults.slow_ranks) CheckRank("slow_rank", s.rank, ranks);
  for (RankFailure& f : faults.failed_ranks) CheckRank("fail_rank", f.rank, ranks);
  for (LinkThrottle& t : faults.throttles) Resolve("throttle_link", t.link, topology);
  for (LinkFailure& f : faults.failed_links) Resolve("fail_link", f.link, topology);
}

void CheckFaultSteps(const Faults& faults, const Plan& plan) {
  const int last = plan.num_steps - 1;
  auto check = [last](const char* field, std::int32_t step) {
    if (step > last)
      throw FieldError(field, "step " + std::to_string(step) + " is past the run's last step (" +
                                  std::to_string(last) + ")");
  };
  for (const LinkFailure& f : faults.failed_links) check("fail_link", f.step);
  for (const RankFailure& f : faults.failed_ranks) check("fail_rank", f.step);
}

void ApplyLinkThrottles(const Faults& faults, Topology& topology) {
  for (const LinkThrottle& t : faults.throttles) {
    if (t.link.link < 0 || t.link.link >= static_cast<std::int32_t>(topology.links.size()))
      throw Error("throttle_link: '" + t.link.a + "-" + t.link.b + "' was not resolved");
    topology.links[static_cast<std::size_t>(t.link.link)].gbps = t.gbps;
  }
}

std::string FaultRefusal(const Faults& faults, const std::string& backend) {
  const BackendTraits traits = BackendTraitsOrDefault(backend);
  auto refuse = [&backend](const char* field, const char* what) {
    return std::string(field) + ": the " + backend + " backend runs real hardware, " + what +
           "; only the simulator (backend sim) applies it";
  };
  if (!faults.slow_ranks.empty() && traits.slow_rank == FaultSupport::kRefused)
    return refuse("slow_rank", "which it cannot slow on request");
  if (!faults.failed_links.empty() && traits.failed_link == FaultSupport::kRefused)
    return refuse("fail_link", "whose links cannot be broken on request");
  if (!faults.failed_ranks.empty() && traits.failed_rank == FaultSupport::kRefused)
    return refuse("fail_rank", traits.failed_rank_refusal != nullptr ? traits.failed_rank_refusal
                                                                     : "which cannot stop a rank on request");
  return "";
}

}  // namespace shardlab
