// shardlab_soak: N random UI commands (step, play, pause, reset, frames,
// scenario changes, refused scenarios, zoom) against the app's models with
// a fixed seed; prints the final trace hash. Meant for a sanitizer build:
//
//   shardlab_soak --commands 100000 --seed 1
//
// Exit 0 with "soak: N commands, seed S, hash H, ..."; exit 1 with the
// broken invariant; exit 2 on a bad flag.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "app/gui/model/soak_driver.h"

namespace {

bool ParseCount(const char* text, unsigned long long* out) {
  char* end = nullptr;
  *out = std::strtoull(text, &end, 10);
  return end != text && *end == '\0' && text[0] != '-';
}

}  // namespace

int main(int argc, char** argv) {
  unsigned long long commands = 100000;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; i += 2) {  // flag and value
    const std::string flag = argv[i];
    unsigned long long* target = flag == "--commands" ? &commands
                                 : flag == "--seed"   ? &seed
                                                      : nullptr;
    if (!target) {
      std::fprintf(stderr, "shardlab_soak: unknown flag %s (usage: --commands N --seed S)\n",
                   argv[i]);
      return 2;
    }
    if (i + 1 >= argc || !ParseCount(argv[i + 1], target)) {
      std::fprintf(stderr, "shardlab_soak: %s: needs a non-negative integer\n", flag.c_str());
      return 2;
    }
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    shardlab::gui::SoakDriver driver(seed);
    for (unsigned long long i = 0; i < commands; ++i) driver.Next();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const shardlab::gui::SoakCounts& c = driver.counts();
    std::printf("soak: %llu commands, seed %llu, hash %016llx, %llu runs, %llu refused, %.1f s\n",
                commands, seed, static_cast<unsigned long long>(driver.hash()),
                static_cast<unsigned long long>(c.runs),
                static_cast<unsigned long long>(c.rejected), seconds);
    for (int k = 0; k < shardlab::gui::kSoakCommandCount; ++k) {
      std::printf("  %-16s %llu\n",
                  shardlab::gui::SoakCommandName(static_cast<shardlab::gui::SoakCommand>(k)),
                  static_cast<unsigned long long>(c.by_command[k]));
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardlab_soak: %s\n", e.what());
    return 1;
  }
}
