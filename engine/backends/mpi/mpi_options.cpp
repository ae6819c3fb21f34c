#include "engine/backends/mpi/mpi_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "engine/core/error.h"

namespace shardlab {
namespace {

std::int64_t ParsePositive(const std::string& flag, const std::string& key,
                           const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < 0)
    throw Error(flag + ": " + key + "=" + text + " is not a whole number >= 0");
  return value;
}

}  // namespace

TimeNs ParseMpiTimeout(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit = end ? std::string(end) : "";
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "m" || unit == "min") scale = 60e9;
  if (text.empty() || end == text.c_str() || scale == 0 || !std::isfinite(value) || value <= 0)
    throw Error(flag + ": '" + text + "' is not a duration above zero (use e.g. 5s, 500ms, 2m)");
  return value * scale;
}

MpiDevice ParseMpiDevice(const std::string& flag, const std::string& text) {
  if (text == "host") return MpiDevice::kHost;
  if (text == "gpu") return MpiDevice::kGpu;
  throw Error(flag + ": unknown device '" + text + "' (use host or gpu)");
}

MpiFault ParseMpiFault(const std::string& flag, const std::string& text) {
  const std::string usage = " (use exit|kill|stall:rank=R,op=N or skip:rank=R,iter=N)";
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) throw Error(flag + ": '" + text + "' has no ':'" + usage);
  const std::string kind = text.substr(0, colon);
  MpiFault fault;
  if (kind == "exit") fault.kind = MpiFaultKind::kExit;
  else if (kind == "kill") fault.kind = MpiFaultKind::kKill;
  else if (kind == "stall") fault.kind = MpiFaultKind::kStall;
  else if (kind == "skip") fault.kind = MpiFaultKind::kSkip;
  else throw Error(flag + ": unknown fault '" + kind + "'" + usage);

  std::string rest = text.substr(colon + 1);
  bool has_rank = false, has_when = false;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw Error(flag + ": '" + item + "' is not KEY=VALUE" + usage);
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const std::int64_t n = ParsePositive(flag, key, value);
    if (key == "rank") {
      fault.rank = static_cast<int>(n);
      has_rank = true;
    } else if (key == "op" && fault.kind != MpiFaultKind::kSkip) {
      fault.op = n;
      has_when = true;
    } else if (key == "iter" && fault.kind == MpiFaultKind::kSkip) {
      fault.iter = n;
      has_when = true;
    } else {
      throw Error(flag + ": '" + key + "' does not apply to a " + kind + " fault" + usage);
    }
  }
  if (!has_rank || !has_when) throw Error(flag + ": '" + text + "' needs both keys" + usage);
  if ((fault.kind == MpiFaultKind::kSkip ? fault.iter : fault.op) < 1)
    throw Error(flag + ": op and iter count from 1 (got '" + text + "')");
  return fault;
}

std::string DescribeMpiFault(const MpiFault& fault) {
  switch (fault.kind) {
    case MpiFaultKind::kNone: return "none";
    case MpiFaultKind::kExit: return "exit:rank=" + std::to_string(fault.rank) + ",op=" + std::to_string(fault.op);
    case MpiFaultKind::kKill: return "kill:rank=" + std::to_string(fault.rank) + ",op=" + std::to_string(fault.op);
    case MpiFaultKind::kStall: return "stall:rank=" + std::to_string(fault.rank) + ",op=" + std::to_string(fault.op);
    case MpiFaultKind::kSkip: return "skip:rank=" + std::to_string(fault.rank) + ",iter=" + std::to_string(fault.iter);
  }
  return "none";
}

}  // namespace shardlab
