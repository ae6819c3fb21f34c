// The progress store: round trip, atomic saves that survive a kill in the
// middle of a write and a full disk (simulated through the FileIo seam),
// stale temporary files swept at start, corrupt files kept aside.
#include "engine/lab/progress.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/core/error.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

LabProgress SampleProgress(const std::string& lab_id, int step) {
  LabProgress p;
  p.lab_id = lab_id;
  p.step = step;
  p.completed = {"intro", "count"};
  p.SetAnswer({"steps", "14", true, "correct", "14", "Correct: 14."});
  p.SetAnswer({"busbw", " 230 GB/s\n\"quoted\"", true, "invalid", "298 GB/s ± 5%",
               "'230 GB/s' is not a number;\nexpected 298."});
  p.SetAnswer({"why", "", false, "", "", ""});
  return p;
}

void ExpectSame(const LabProgress& a, const LabProgress& b) {
  EXPECT_EQ(a.lab_id, b.lab_id);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.completed, b.completed);
  ASSERT_EQ(a.answers.size(), b.answers.size());
  for (std::size_t i = 0; i < a.answers.size(); ++i) {
    EXPECT_EQ(a.answers[i].question_id, b.answers[i].question_id);
    EXPECT_EQ(a.answers[i].value, b.answers[i].value);
    EXPECT_EQ(a.answers[i].checked, b.answers[i].checked);
    EXPECT_EQ(a.answers[i].verdict, b.answers[i].verdict);
    EXPECT_EQ(a.answers[i].expected, b.answers[i].expected);
    EXPECT_EQ(a.answers[i].feedback, b.answers[i].feedback);
  }
}

std::string ReadFile(const fs::path& path) { return test_util::ReadWholeFile(path); }

int CountTemporaries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(kTempMarker) != std::string::npos) ++n;
  }
  return n;
}

/// The real file system, with a fault injected into one call.
class FaultyFileIo : public FileIo {
 public:
  enum class Fault {
    kNone,
    kKillMidWrite,  // half the bytes reach the temporary file, then the process "dies"
    kDiskFull,      // the write fails with ENOSPC
    kRenameFails,
  };
  Fault fault = Fault::kNone;
  bool dead = false;  // after a kill nothing else happens: no cleanup

  void WriteAndSync(const std::string& path, const std::string& bytes) override {
    CheckAlive();
    if (fault == Fault::kKillMidWrite) {
      std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
      dead = true;
      throw Killed();
    }
    if (fault == Fault::kDiskFull) {
      std::ofstream(path, std::ios::binary) << bytes.substr(0, 10);
      throw Error(path + ": cannot write: " + std::strerror(ENOSPC), ErrorKind::kRuntime);
    }
    real_.WriteAndSync(path, bytes);
  }
  void Rename(const std::string& from, const std::string& to) override {
    CheckAlive();
    if (fault == Fault::kRenameFails) throw Error(to + ": cannot replace: EIO", ErrorKind::kRuntime);
    real_.Rename(from, to);
  }
  void SyncDir(const std::string& dir) override {
    CheckAlive();
    real_.SyncDir(dir);
  }
  bool ReadFile(const std::string& path, std::size_t max, std::string* bytes) override {
    CheckAlive();
    return real_.ReadFile(path, max, bytes);
  }
  std::vector<std::string> ListDir(const std::string& dir) override {
    CheckAlive();
    return real_.ListDir(dir);
  }
  void Remove(const std::string& path) override {
    CheckAlive();
    real_.Remove(path);
  }
  void MakeDirs(const std::string& dir) override {
    CheckAlive();
    real_.MakeDirs(dir);
  }

  struct Killed {};

 private:
  void CheckAlive() const {
    if (dead) throw Killed();
  }
  FileIo& real_ = RealFileIo();
};

TEST(LabProgress, WritesAndReadsBackIdentical) {
  const LabProgress p = SampleProgress("01-ring-allreduce", 3);
  const std::string text = WriteLabProgress(p);
  ExpectSame(p, ParseLabProgress(text, "p.toml"));
  EXPECT_EQ(WriteLabProgress(ParseLabProgress(text, "p.toml")), text);
}

TEST(LabProgress, SetAnswerReplacesTheSameQuestion) {
  LabProgress p = SampleProgress("x", 0);
  p.SetAnswer({"steps", "13", false, "", "", ""});
  ASSERT_EQ(p.answers.size(), 3u);
  EXPECT_EQ(p.Find("steps")->value, "13");
  EXPECT_EQ(p.Find("nope"), nullptr);
}

TEST(ProgressStore, SavesAndLoads) {
  test_util::TempDir dir;
  ProgressStore store((dir.path() / "progress").string());
  ProgressLoad fresh = store.Load("01-ring-allreduce");
  EXPECT_TRUE(fresh.fresh);
  EXPECT_TRUE(fresh.warning.empty());
  EXPECT_EQ(fresh.progress.lab_id, "01-ring-allreduce");
  EXPECT_EQ(fresh.progress.step, 0);

  const LabProgress p = SampleProgress("01-ring-allreduce", 2);
  store.Save(p);
  const ProgressLoad again = ProgressStore((dir.path() / "progress").string()).Load("01-ring-allreduce");
  EXPECT_FALSE(again.fresh);
  ExpectSame(p, again.progress);
  EXPECT_EQ(CountTemporaries(dir.path() / "progress"), 0);
}

TEST(ProgressStore, AKillInTheMiddleOfAWriteLeavesThePreviousProgressIntact) {
  test_util::TempDir dir;
  const std::string folder = dir.path().string();
  const LabProgress before = SampleProgress("02-topology-matters", 1);
  ProgressStore(folder).Save(before);
  const std::string saved = ReadFile(dir.path() / "02-topology-matters.progress.toml");

  FaultyFileIo io;
  ProgressStore store(folder, io);
  io.fault = FaultyFileIo::Fault::kKillMidWrite;
  EXPECT_THROW(store.Save(SampleProgress("02-topology-matters", 4)), FaultyFileIo::Killed);

  // The "dead" process left its half-written temporary file; the progress
  // file itself is byte for byte what the last good save wrote.
  EXPECT_EQ(CountTemporaries(dir.path()), 1);
  EXPECT_EQ(ReadFile(dir.path() / "02-topology-matters.progress.toml"), saved);

  // The next start sweeps the temporary file and loads the old progress.
  ProgressStore restarted(folder);
  EXPECT_EQ(restarted.swept(), 1);
  EXPECT_EQ(CountTemporaries(dir.path()), 0);
  const ProgressLoad load = restarted.Load("02-topology-matters");
  EXPECT_TRUE(load.warning.empty());
  ExpectSame(before, load.progress);
}

TEST(ProgressStore, AFullDiskFailsTheSaveWithAClearMessageAndKeepsTheOldFile) {
  test_util::TempDir dir;
  const std::string folder = dir.path().string();
  const LabProgress before = SampleProgress("03-ring-vs-tree", 1);
  FaultyFileIo io;
  ProgressStore store(folder, io);
  store.Save(before);

  io.fault = FaultyFileIo::Fault::kDiskFull;
  try {
    store.Save(SampleProgress("03-ring-vs-tree", 5));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(CountTemporaries(dir.path()), 0);  // cleaned up: the process lives on
  io.fault = FaultyFileIo::Fault::kNone;
  ExpectSame(before, store.Load("03-ring-vs-tree").progress);

  io.fault = FaultyFileIo::Fault::kRenameFails;
  EXPECT_THROW(store.Save(SampleProgress("03-ring-vs-tree", 6)), Error);
  EXPECT_EQ(CountTemporaries(dir.path()), 0);
  io.fault = FaultyFileIo::Fault::kNone;
  ExpectSame(before, store.Load("03-ring-vs-tree").progress);
}

TEST(ProgressStore, SweepsOnlyTemporaryFiles) {
  test_util::TempDir dir;
  std::ofstream(dir.path() / "01-a.progress.toml.tmp-123-0") << "half";
  std::ofstream(dir.path() / "01-a.progress.toml.tmp-999-7") << "";
  std::ofstream(dir.path() / "notes.txt") << "keep me";
  ProgressStore store(dir.path().string());
  EXPECT_EQ(store.swept(), 2);
  EXPECT_TRUE(fs::exists(dir.path() / "notes.txt"));
  EXPECT_EQ(CountTemporaries(dir.path()), 0);
}

TEST(ProgressStore, KeepsACorruptFileAsideAndStartsFresh) {
  test_util::TempDir dir;
  const fs::path file = dir.path() / "04-pipeline-bubbles.progress.toml";
  std::ofstream(file) << "lab = \"04-pipeline-bubbles\"\nstep = [oops\n";
  ProgressStore store(dir.path().string());
  const ProgressLoad load = store.Load("04-pipeline-bubbles");
  EXPECT_TRUE(load.fresh);
  EXPECT_EQ(load.progress.step, 0);
  EXPECT_NE(load.warning.find("could not be read"), std::string::npos) << load.warning;
  EXPECT_NE(load.warning.find(":2:"), std::string::npos) << load.warning;  // where it broke
  EXPECT_NE(load.warning.find("corrupt-1"), std::string::npos) << load.warning;
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(ReadFile(file.string() + ".corrupt-1"), "lab = \"04-pipeline-bubbles\"\nstep = [oops\n");

  // A second corrupt file does not overwrite the first one kept aside.
  std::ofstream(file) << "step = -3\n";
  const ProgressLoad second = store.Load("04-pipeline-bubbles");
  EXPECT_NE(second.warning.find("corrupt-2"), std::string::npos) << second.warning;
  EXPECT_TRUE(fs::exists(file.string() + ".corrupt-1"));
  EXPECT_TRUE(fs::exists(file.string() + ".corrupt-2"));

  // A file for another lab under this lab's name is not used either.
  std::ofstream(file) << "lab = \"01-ring-allreduce\"\nstep = 1\n";
  EXPECT_NE(store.Load("04-pipeline-bubbles").warning.find("is for lab '01-ring-allreduce'"),
            std::string::npos);
}

TEST(ProgressStore, RefusesLabIdsThatAreNotPlainNames) {
  test_util::TempDir dir;
  ProgressStore store(dir.path().string());
  EXPECT_THROW(store.PathFor("../escape"), Error);
  EXPECT_THROW(store.PathFor("a/b"), Error);
  EXPECT_THROW(store.PathFor(""), Error);
  EXPECT_EQ(store.PathFor("01-ring-allreduce"),
            dir.path().string() + "/01-ring-allreduce.progress.toml");
}

}  // namespace
}  // namespace shardlab
