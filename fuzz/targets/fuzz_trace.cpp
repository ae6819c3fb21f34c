// A Chrome trace as the app opens it.
#include <cstdint>

#include "engine/io/trace_reader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard(
      [&] { (void)shardlab::ReadChromeTrace(shardlab::fuzz::AsText(data, size), "fuzz.json"); });
}
