// Saved lab progress; what parses must round-trip through WriteLabProgress.
#include <cstdint>
#include <string>

#include "engine/lab/progress.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    const shardlab::LabProgress first =
        shardlab::ParseLabProgress(shardlab::fuzz::AsText(data, size), "fuzz-progress.toml");
    const std::string written = shardlab::WriteLabProgress(first);
    const shardlab::LabProgress second = shardlab::ParseLabProgress(written, "fuzz-progress.toml");
    if (shardlab::WriteLabProgress(second) != written) shardlab::fuzz::Broken("progress round trip");
  });
}
