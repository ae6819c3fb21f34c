#include "app/cli/process_flags.h"

#include <iostream>

#include "app/common/args.h"

namespace shardlab::cli {
namespace {

/// Removes `--name VALUE` / `--name=VALUE` (every occurrence; the last
/// wins) and returns the value; "" with `found` false when absent.
std::string TakeFlag(std::vector<std::string>& words, const std::string& name, bool& found) {
  const std::string flag = "--" + name;
  std::string value;
  found = false;
  for (std::size_t i = 0; i < words.size();) {
    if (words[i] == flag) {
      if (i + 1 >= words.size()) throw UsageError(flag + ": missing value");
      value = words[i + 1];
      words.erase(words.begin() + static_cast<std::ptrdiff_t>(i),
                  words.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      found = true;
    } else if (words[i].rfind(flag + "=", 0) == 0) {
      value = words[i].substr(flag.size() + 1);
      words.erase(words.begin() + static_cast<std::ptrdiff_t>(i));
      found = true;
    } else {
      ++i;
    }
  }
  return value;
}

/// The value of --backend without removing it (the command reads it too).
std::string PeekBackend(const std::vector<std::string>& words) {
  std::string backend;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--backend" && i + 1 < words.size()) backend = words[i + 1];
    else if (words[i].rfind("--backend=", 0) == 0) backend = words[i].substr(10);
  }
  return backend;
}

}  // namespace

ProcessSetup TakeProcessFlags(std::vector<std::string>& words) {
  ProcessSetup setup;
  const std::string backend = PeekBackend(words);
  MpiOptions options;
  bool has_timeout = false, has_fault = false, has_device = false;
  const std::string timeout = TakeFlag(words, "mpi-timeout", has_timeout);
  const std::string device = TakeFlag(words, "device", has_device);
  // `worker` has its own --inject-fault (a process-level fault the app must
  // survive) and takes the mpi backend's as --mpi-fault; every other
  // command's --inject-fault is the mpi backend's.
  const bool is_worker = !words.empty() && words.front() == "worker";
  const std::string fault_flag = is_worker ? "mpi-fault" : "inject-fault";
  const std::string fault = TakeFlag(words, fault_flag, has_fault);
  if ((has_timeout || has_fault || has_device) && !IsProcessBackend(backend)) {
    throw UsageError((has_timeout ? std::string("--mpi-timeout")
                      : has_fault ? "--" + fault_flag
                                  : std::string("--device")) +
                     ": only for --backend mpi (the backend is '" +
                     (backend.empty() ? "sim" : backend) + "')");
  }
  if (has_timeout) options.timeout_ns = ParseMpiTimeout("--mpi-timeout", timeout);
  if (has_fault) options.fault = ParseMpiFault("--" + fault_flag, fault);
  if (has_device) options.device = ParseMpiDevice("--device", device);
  if (!IsProcessBackend(backend)) return setup;

  setup.group = JoinProcessGroup(backend, options);
  setup.joined = true;
  if (setup.group.rank != 0) {
    std::cout.setstate(std::ios::badbit);  // rank 0 reports for the job
    bool traced = false;
    TakeFlag(words, "trace", traced);
  }
  return setup;
}

}  // namespace shardlab::cli
