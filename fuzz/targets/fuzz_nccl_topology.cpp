// NCCL topology XML (NCCL_TOPO_FILE), as `shardlab-cli inspect` reads it: the bytes through the field
// file reader (gzip, caps), then the parser, then the registry's recogniser.
#include <cstdint>

#include "engine/field/field_reader.h"
#include "engine/field/nccl_topology_xml.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    const shardlab::FieldFile file = shardlab::FieldFileFromBytes(shardlab::fuzz::AsText(data, size), "topo.xml");
    (void)shardlab::ParseNcclTopologyXml(file);
    (void)shardlab::InspectFieldFile(file);
  });
}
