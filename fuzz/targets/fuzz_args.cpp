// The CLI flag parser: the input is split at NUL bytes into argv words and
// parsed against a spec shaped like `shardlab-cli run`.
#include <cstdint>
#include <string>
#include <vector>

#include "app/common/args.h"
#include "fuzz/fuzz_common.h"

namespace {

const shardlab::CommandSpec& Spec() {
  static const shardlab::CommandSpec spec = [] {
    shardlab::CommandSpec s;
    s.name = "run";
    s.usage = "run COLLECTIVE [flags]";
    s.flags = {{"ranks", 'n', "N", "ranks"},
               {"size", 'b', "SIZE", "message size"},
               {"algo", 'a', "NAME", "algorithm"},
               {"trace", 0, "PATH", "trace file"},
               {"quiet", 'q', "", "less output"},
               {"check", 0, "", "check results"}};
    s.max_positionals = 2;
    return s;
  }();
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      words.emplace_back();
    else
      words.back().push_back(static_cast<char>(data[i]));
  }
  return shardlab::fuzz::Guard([&] {
    const shardlab::ParsedArgs args = shardlab::ParseArgs(Spec(), words);
    for (const char* flag : {"ranks", "size", "algo", "trace", "quiet", "check"}) {
      if (args.Has(flag)) (void)args.Spelling(flag);
    }
    if (args.Has("size")) (void)shardlab::ParseSizeValue("size", args.Get("size"), 1);
  });
}
