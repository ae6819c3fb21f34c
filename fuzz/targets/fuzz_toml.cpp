// TOML subset parser: any bytes; every string value must round-trip
// through TomlQuote (parse(write(parse(x))) == parse(x) for strings).
#include <cstdint>

#include "engine/core/toml.h"
#include "fuzz/fuzz_common.h"

namespace {

void CheckStrings(const shardlab::TomlValue& value) {
  using shardlab::TomlType;
  if (value.type == TomlType::kString) {
    const std::string text = "k = " + shardlab::TomlQuote(value.string_value) + "\n";
    const shardlab::TomlValue again = shardlab::ParseToml(text, "roundtrip");
    const shardlab::TomlEntry* entry = again.Find("k");
    if (entry == nullptr || entry->value.type != TomlType::kString ||
        entry->value.string_value != value.string_value)
      shardlab::fuzz::Broken("TOML string round trip");
  }
  for (const auto& item : value.items) CheckStrings(item);
  for (const auto& entry : value.entries) {
    // Keys round-trip through TomlKey as well.
    const std::string text = shardlab::TomlKey(entry.key) + " = 1\n";
    const shardlab::TomlValue again = shardlab::ParseToml(text, "roundtrip-key");
    if (again.entries.size() != 1 || again.entries[0].key != entry.key)
      shardlab::fuzz::Broken("TOML key round trip");
    CheckStrings(entry.value);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    const shardlab::TomlValue root = shardlab::ParseToml(shardlab::fuzz::AsText(data, size), "fuzz.toml");
    CheckStrings(root);
  });
}
