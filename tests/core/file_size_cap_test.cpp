// Every loader of outside files refuses a huge file by its size, before
// reading it (issue 10: "a 100 MB file, rejected by size, quickly"). The
// files are sparse, so making them costs no disk; the messages must name the
// size limit, which shows the refusal came from the size and not the parser.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"
#include "engine/lab/progress.h"
#include "engine/io/trace_reader.h"
#include "engine/topology/topology_file.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kHundredMb = std::uintmax_t{100} << 20;

class FileSizeCap : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("shardlab_size_cap_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A sparse file of `size` bytes that starts like a valid document, so a
  // loader that parsed it instead of checking the size would not fail early.
  std::string Huge(const std::string& name, std::uintmax_t size, const std::string& start) {
    const fs::path path = dir_ / name;
    { std::ofstream(path, std::ios::binary) << start; }
    fs::resize_file(path, size);
    return path.string();
  }

  template <typename Load>
  static std::string ErrorOf(Load&& load) {
    try {
      load();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path dir_;
};

TEST_F(FileSizeCap, TomlFileOf100MbIsRefusedBySize) {
  const std::string path = Huge("big.toml", kHundredMb, "name = \"x\"\n# ");
  EXPECT_NE(ErrorOf([&] { LoadTomlFile(path); }).find("the limit is 1 MiB"), std::string::npos);
}

TEST_F(FileSizeCap, TopologyFileOf100MbIsRefusedBySize) {
  const std::string path = Huge("big.toml", kHundredMb, "name = \"x\"\n# ");
  const std::string error = ErrorOf([&] { LoadTopologyFile(path); });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("the limit is 1 MiB"), std::string::npos) << error;
}

TEST_F(FileSizeCap, LabFileOf100MbIsRefusedBySize) {
  fs::create_directories(dir_ / "lab");
  Huge("lab/lab.toml", kHundredMb, "id = \"x\"\n# ");
  const LabLoadResult result = ReadLab((dir_ / "lab").string());
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_NE(result.problems[0].message.find("lab files are at most"), std::string::npos)
      << result.ProblemsText();
}

TEST_F(FileSizeCap, AnswersFileOf100MbIsRefusedBySize) {
  const std::string path = Huge("answers.toml", kHundredMb, "lab = \"x\"\n# ");
  EXPECT_NE(ErrorOf([&] { LoadLabAnswers(path); }).find("answers files are at most"),
            std::string::npos);
}

TEST_F(FileSizeCap, ProgressFileOf100MbIsSetAsideUnread) {
  ProgressStore store(dir_.string());
  Huge(fs::path(store.PathFor("lab1")).filename().string(), kHundredMb, "lab = \"lab1\"\n# ");
  const ProgressLoad load = store.Load("lab1");
  EXPECT_TRUE(load.fresh);
  EXPECT_NE(load.warning.find("larger than"), std::string::npos) << load.warning;
}

TEST_F(FileSizeCap, TraceFileOverItsLimitIsRefusedBySize) {
  // Traces may be large (1 GiB); one byte past that is refused unread.
  const std::string path = Huge("big.json", kMaxTraceFileBytes + 1, "{\"traceEvents\": [");
  EXPECT_NE(ErrorOf([&] { ReadChromeTraceFile(path); }).find("larger than the"), std::string::npos);
}

}  // namespace
}  // namespace shardlab
