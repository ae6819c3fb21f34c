// `shardlab-cli inspect` end to end on real files: the kind and counts in
// --json (counted another way in tests/field/real_files_test.cpp), several
// files in one array, .gz read as the plain file, a page for people, and bad
// input as one line with exit 2.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"
#include "tests/field/field_test_util.h"

namespace shardlab {
namespace {

using test_util::TempDir;

/// `shardlab-cli inspect WORDS...` in `dir`.
test_util::ProgramResult Inspect(std::vector<std::string> words, const TempDir& dir) {
  words.insert(words.begin(), "inspect");
  return test_util::RunProgram(SHARDLAB_CLI_PATH, words, dir.path());
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(InspectCli, JsonGivesTheKindAndCountsOfEachFile) {
  TempDir dir;
  const auto r = Inspect({field_test::RealPath("azure-ndv4-topo.xml"),
                          field_test::RealPath("nccl-issue1189-2x2xH20-per-rank-rings.log"),
                          field_test::RealPath("awsome-p5-2node-all_reduce_perf.txt"), "--json"},
                         dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const test_util::Json all = test_util::ParseJson(r.out);
  ASSERT_EQ(all.items.size(), 3u);
  EXPECT_EQ(all.items[0]["kind"].text, "nccl-topology");
  EXPECT_EQ(all.items[0]["gpus"].number, 8);  // grep -c ' class="0x03'
  EXPECT_EQ(all.items[0]["nics"].number, 8);  // grep -c ' class="0x0207'
  EXPECT_EQ(all.items[0]["numa_nodes"].number, 4);
  EXPECT_EQ(all.items[1]["kind"].text, "nccl-log");
  EXPECT_EQ(all.items[1]["ranks"].number, 4);
  EXPECT_EQ(all.items[1]["rings"].items.size(), 2u);  // channels 6 and 7 cover all 4 ranks
  EXPECT_EQ(all.items[1]["partial_rings"].items.size(), 4u);
  EXPECT_EQ(all.items[2]["kind"].text, "nccl-tests");
  EXPECT_EQ(all.items[2]["rows"].items.size(), 32u);  // 8 B .. 16 GiB, doubling
  EXPECT_EQ(all.items[2]["rows"].items[0]["in_place"]["time_us"].number, 12.87);
}

TEST(InspectCli, AGzipFileReadsAsThePlainOneAndThePageIsText) {
  TempDir dir;
  const std::string gz = (dir.path() / "topo-m.gz").string();
  {
    std::ofstream out(gz, std::ios::binary);
    out << field_test::Gzip(field_test::RealText("sglang-issue30401-8xH100-topo-m.txt"));
  }
  const auto r = Inspect({gz}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, gz + ": nvidia-smi-topology (gzip)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "8 GPUs, 8 NICs, 2 NUMA nodes, 28 NVLinks")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(InspectCli, BadInputIsOneLineAndExitTwo) {
  TempDir dir;
  const std::string bad = (dir.path() / "cut.xml").string();
  {
    const std::string text = field_test::RealText("azure-ndv2-topo.xml");
    std::ofstream out(bad, std::ios::binary);
    out << text.substr(0, text.size() / 2);
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{bad}, {(dir.path() / "missing").string()}, {SHARDLAB_CLI_PATH}, {}}) {
    const auto r = Inspect(args, dir);
    EXPECT_EQ(r.exit_code, 2) << (args.empty() ? "(no file)" : args.back()) << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(Contains(r.err, "shardlab-cli: error: ")) << r.err;
  }
  const auto cut = Inspect({bad}, dir);
  EXPECT_TRUE(Contains(cut.err, bad + ":")) << cut.err;
  EXPECT_TRUE(Contains(cut.err, "truncated")) << cut.err;
}

}  // namespace
}  // namespace shardlab
