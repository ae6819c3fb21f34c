// ParseSize ("64MiB", "1.5 GB") and the CLI's size and integer flag values.
#include <cstdint>
#include <limits>

#include "app/common/args.h"
#include "engine/core/units.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = shardlab::fuzz::AsText(data, size);
  shardlab::fuzz::Guard([&] {
    const shardlab::Bytes bytes = shardlab::ParseSize(text);
    if (bytes < 0) shardlab::fuzz::Broken("ParseSize returned a negative size");
    (void)shardlab::FormatBytes(bytes);
  });
  shardlab::fuzz::Guard([&] { (void)shardlab::ParseSizeValue("size", text, 1); });
  shardlab::fuzz::Guard([&] {
    const std::int64_t value = shardlab::ParseIntValue("ranks", text, 1, 4096);
    if (value < 1 || value > 4096) shardlab::fuzz::Broken("ParseIntValue out of its range");
  });
  shardlab::fuzz::Guard([&] {
    (void)shardlab::ParseIntValue("n", text, std::numeric_limits<std::int64_t>::min(),
                                  std::numeric_limits<std::int64_t>::max());
  });
  shardlab::fuzz::Guard([&] { (void)shardlab::ParseSeedValue("seed", text); });
  return 0;
}
