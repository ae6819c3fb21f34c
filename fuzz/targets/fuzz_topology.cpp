// Topology file text (a TOML document) to a Topology.
#include <cstdint>
#include <string>

#include "engine/topology/topology_file.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    const std::string text(shardlab::fuzz::AsText(data, size));
    (void)shardlab::ParseTopologyText(text, "fuzz.toml");
  });
}
