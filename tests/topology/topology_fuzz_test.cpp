// Mutation fuzzing of the topology loader: every preset written out as TOML,
// then bytes flipped, inserted, deleted and lines duplicated. The loader
// must return a topology that validates and routes, or throw one Error with
// a message; anything else (a crash, another exception type) fails the test.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "engine/core/error.h"
#include "engine/topology/presets.h"
#include "engine/topology/topology.h"
#include "engine/topology/topology_file.h"

namespace shardlab {
namespace {

std::string Mutate(std::string text, std::mt19937& rng) {
  static const char kInteresting[] = "[]=\".\n#{},\\'-0123456789e ";
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !text.empty(); ++e) {
    const std::size_t at = rng() % text.size();
    switch (rng() % 5) {
      case 0: text[at] = static_cast<char>(rng() % 256); break;
      case 1: text[at] = kInteresting[rng() % (sizeof(kInteresting) - 1)]; break;
      case 2: text.insert(at, 1, kInteresting[rng() % (sizeof(kInteresting) - 1)]); break;
      case 3: text.erase(at, 1 + rng() % 8); break;
      case 4: {  // duplicate a line: makes duplicate keys and tables
        const std::size_t begin = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
        const std::size_t end = text.find('\n', at);
        const std::string line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin + 1);
        text.insert(begin, line);
        break;
      }
    }
  }
  return text;
}

TEST(TopologyFuzz, MutatedPresetFilesLoadOrFailWithOneError) {
  std::mt19937 rng(20261123);
  int loaded = 0, rejected = 0;
  for (const char* preset : {"pcie-gen3-4gpu", "dgx1-v100", "dgx-a100", "2x-dgx-a100-ib"}) {
    const std::string original = WriteTopologyText(MakeTopologyPreset(preset));
    for (int i = 0; i < 600; ++i) {
      const std::string text = Mutate(original, rng);
      try {
        const Topology t = ParseTopologyText(text, "fuzz.toml");
        ValidateTopology(t);
        // What loads must also route without crashing.
        Route route;
        for (std::size_t g = 1; g < t.gpus.size(); ++g) (void)TryFindRoute(t, t.gpus[0], t.gpus[g], &route);
        ++loaded;
      } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find("fuzz.toml"), std::string::npos)
            << "error does not name the file: " << err.what();
        ++rejected;
      }
    }
  }
  // Both outcomes must occur, or the mutator is not exercising the loader.
  EXPECT_GT(loaded, 50);
  EXPECT_GT(rejected, 50);
}

}  // namespace
}  // namespace shardlab
