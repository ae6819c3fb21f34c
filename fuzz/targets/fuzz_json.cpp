// The JSON parser under its default limits.
#include <cstdint>

#include "engine/core/json_parse.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard(
      [&] { (void)shardlab::ParseJson(shardlab::fuzz::AsText(data, size), "fuzz.json"); });
}
