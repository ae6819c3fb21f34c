#include "engine/backends/mpi/desync_report.h"

#include <algorithm>
#include <map>

namespace shardlab {
namespace {

std::string JoinRanks(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::string RanksWord(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + JoinRanks(ranks);
}

}  // namespace

const char* StallPhaseName(StallPhase phase) {
  switch (phase) {
    case StallPhase::kOps: return "ops";
    case StallPhase::kEventGather: return "event gather";
    case StallPhase::kResultGather: return "result gather";
    case StallPhase::kClockAlignment: return "clock alignment";
    case StallPhase::kDeviceSetUp: return "device set-up";
  }
  return "?";
}

std::string RankStall::Describe() const {
  std::string out = "rank " + std::to_string(rank);
  if (!answered) return out + " did not answer";
  if (phase == StallPhase::kOps) {
    out += waiting_on >= 0 ? " waits for rank " + std::to_string(waiting_on) : " waits";
    out += " in collective #" + std::to_string(seq);
    if (op >= 0) out += " (op " + std::to_string(op) + ", step " + std::to_string(step) + ")";
  } else {
    out += " waits in the " + std::string(StallPhaseName(phase));
    if (phase != StallPhase::kClockAlignment && phase != StallPhase::kDeviceSetUp) {
      out += " of collective #" + std::to_string(last_done_seq);
      if (step >= 0) out += " (after step " + std::to_string(step) + ")";
    }
  }
  return out;
}

std::string DescribeDesync(const std::vector<RankStall>& ranks) {
  std::vector<int> silent;
  std::map<std::int64_t, std::vector<int>> by_seq;  // collective a rank is in (or about to be)
  for (const RankStall& r : ranks) {
    if (!r.answered) {
      silent.push_back(r.rank);
      continue;
    }
    const std::int64_t at = r.phase == StallPhase::kOps ? r.seq : r.last_done_seq;
    by_seq[at].push_back(r.rank);
  }
  std::string out;
  if (by_seq.size() > 1) {
    // The lowest collective anyone waits in is the one the others skipped.
    const auto lowest = by_seq.begin();
    std::vector<int> ahead;
    for (auto it = std::next(lowest); it != by_seq.end(); ++it)
      ahead.insert(ahead.end(), it->second.begin(), it->second.end());
    std::sort(ahead.begin(), ahead.end());
    out = RanksWord(ahead) + (ahead.size() == 1 ? " never joined" : " never joined") +
          " collective #" + std::to_string(lowest->first) + " (";
    bool first = true;
    for (auto it = std::next(lowest); it != by_seq.end(); ++it) {
      out += (first ? "" : "; ") + RanksWord(it->second) +
             (it->second.size() == 1 ? " is" : " are") + " at #" + std::to_string(it->first);
      first = false;
    }
    out += ", while " + RanksWord(lowest->second) + (lowest->second.size() == 1 ? " waits" : " wait") +
           " in #" + std::to_string(lowest->first) + ")";
  } else if (!silent.empty()) {
    out = RanksWord(silent) + (silent.size() == 1 ? " stopped" : " stopped") +
          " answering (stuck or dead)";
    if (!by_seq.empty())
      out += "; " + RanksWord(by_seq.begin()->second) + " wait in collective #" +
             std::to_string(by_seq.begin()->first);
  } else {
    out = "every rank waits in collective #" +
          std::to_string(by_seq.empty() ? 0 : by_seq.begin()->first) +
          " and none is ahead (a hang inside it)";
  }
  if (!silent.empty() && by_seq.size() > 1) out += "; " + RanksWord(silent) + " did not answer";
  std::string detail;
  for (const RankStall& r : ranks) detail += (detail.empty() ? "" : "; ") + r.Describe();
  return out + ". Per rank: " + detail;
}

}  // namespace shardlab
