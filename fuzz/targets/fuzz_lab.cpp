// lab.toml text; a lab that loads without problems must survive the lab
// writer: WriteLab(read(WriteLab(read(x)))) == WriteLab(read(x)).
#include <cstdint>
#include <string>

#include "engine/lab/lab_loader.h"
#include "engine/lab/lab_writer.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    const shardlab::LabLoadResult first =
        shardlab::ReadLabText(shardlab::fuzz::AsText(data, size), "fuzz/lab.toml");
    if (!first.ok()) return;
    const std::string written = shardlab::WriteLab(first.lab);
    const shardlab::LabLoadResult second = shardlab::ReadLabText(written, "fuzz/lab.toml");
    if (!second.ok()) shardlab::fuzz::Broken("written lab does not load");
    if (shardlab::WriteLab(second.lab) != written) shardlab::fuzz::Broken("lab writer round trip");
  });
}
