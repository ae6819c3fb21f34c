// `shardlab-cli calibrate`: measures this machine's GPU (device copy
// bandwidth, fp32 and fp16 GEMM rates, launch and event costs) and writes a
// device profile that sim runs take with --device-profile FILE.
#include <fstream>
#include <iostream>

#include "app/cli/commands.h"
#include "engine/core/error.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/profile_cache.h"

namespace shardlab::cli {

CommandSpec CalibrateSpec() {
  CommandSpec s;
  s.name = "calibrate";
  s.summary = "measure this GPU and write a device profile for the simulator";
  s.usage = "calibrate [--gpu N] [--out FILE]";
  s.description =
      "Measures one GPU with the CUDA backend: device-to-device copy bandwidth, sgemm and\n"
      "half-precision GEMM throughput, kernel launch and event record costs. Prints the\n"
      "device profile, or writes it to --out; 'run ... --device-profile FILE' then\n"
      "simulates every GPU with these figures, so a simulated run and a measured one\n"
      "(--backend cuda) can be compared on one timeline. Also caches it for this GPU's\n"
      "model ($SHARDLAB_CACHE_DIR, else $XDG_CACHE_HOME/shardlab, else ~/.cache/shardlab:\n"
      "profiles/<model>.toml), where --topology this and the trace of a measured run\n"
      "find it. Needs a CUDA device.";
  s.flags = {
      {"gpu", 0, "N", "which GPU to measure (default: 0)"},
      {"out", 'o', "FILE", "write the profile to FILE instead of printing it"},
  };
  s.examples =
      "  shardlab-cli calibrate --out h100.toml\n"
      "  shardlab-cli run allreduce --ranks 8 --size 64M --device-profile h100.toml\n";
  return s;
}

int CalibrateMain(const ParsedArgs& args) {
  const int gpu = args.Has("gpu") ? static_cast<int>(ParseIntValue(args.Spelling("gpu"),
                                                                   args.Get("gpu"), 0, 1 << 16))
                                  : 0;
  const std::string out_path = args.Get("out");
  if (args.Has("out") && out_path.empty()) throw UsageError(args.Spelling("out") + ": missing value");
  const DeviceProfile profile = CalibrateDevice(gpu);
  const std::string text = FormatDeviceProfile(profile);
  if (args.Has("out")) {
    // --out first: a profile that cannot be written leaves the cache as it was.
    std::ofstream file(out_path, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) throw Error(out_path + ": cannot write the profile (the cache is unchanged)", ErrorKind::kRuntime);
  }
  // The cache `--topology this` and a measured run's trace read, refreshed
  // for this GPU's model; a folder that cannot be written is said, not fatal.
  std::string why_not;
  const std::string cached = StoreCachedProfile(ProfileCacheDir(), profile, &why_not);
  const std::string cache_line = cached.empty() ? "# Not cached: " + why_not + "\n"
                                                : "# Cached for " + profile.model + " at " + cached + "\n";
  if (!args.Has("out")) {
    std::cout << text;
    std::cerr << cache_line;  // stdout stays the profile alone
    return 0;
  }
  std::cout << "# Device profile written to " << out_path << "\n" << cache_line << text;
  return 0;
}

}  // namespace shardlab::cli
