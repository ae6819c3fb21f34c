// The progress store against real faults, not the FileIo seam:
//
//   KillMidSave  a forked child saves growing progress in a tight loop and
//                the parent SIGKILLs it at 50 seeded random moments; after
//                every kill the file parses and is byte-identical to one of
//                the versions written (never torn), and the next store's
//                constructor sweeps whatever temporary file the kill left.
//   RealFullDisk a 64 KiB tmpfs (needs root and mount(2); skipped with the
//                reason otherwise): a save that does not fit fails with
//                "No space left on device" and the old file stays intact.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "engine/core/error.h"
#include "engine/lab/progress.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLab = "kill-lab";
constexpr int kKills = 50;
constexpr unsigned kSeed = 20261123;

/// Version n of the progress: step n and n % 300 + 1 answers of about 100
/// bytes each, so saves range from a few hundred bytes to ~30 KB and the
/// kill lands in writes of every size.
LabProgress Version(int n) {
  LabProgress p;
  p.lab_id = kLab;
  p.step = n;
  p.completed = {"intro"};
  const int answers = n % 300 + 1;
  for (int i = 0; i < answers; ++i) {
    p.SetAnswer({"q" + std::to_string(i), std::string(64, static_cast<char>('a' + (n + i) % 26)),
                 i % 2 == 0, i % 2 == 0 ? "correct" : "", "v" + std::to_string(n), ""});
  }
  return p;
}

int CountTemporaries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(kTempMarker) != std::string::npos) ++n;
  }
  return n;
}

/// The child: saves versions first, first + 1, ... until it is killed.
[[noreturn]] void SaveForever(const std::string& dir, int first) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives a parent that crashed
  try {
    ProgressStore store(dir);
    for (int n = first;; ++n) store.Save(Version(n));
  } catch (...) {
  }
  ::_exit(3);  // a save failed: the parent sees exit code 3, not a kill
}

TEST(ProgressStoreRealFaults, KillMidSaveNeverTearsTheFile) {
  test_util::TempDir dir;
  const std::string folder = dir.path().string();
  ProgressStore(folder).Save(Version(0));
  const std::string path = ProgressStore(folder).PathFor(kLab);

  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int> delay_us(200, 20000);
  int last = 0;
  int temporaries_left = 0;
  int kills_between_versions = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0) << std::strerror(errno);
    if (child == 0) SaveForever(folder, last + 1);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(::kill(child, SIGKILL), 0) << std::strerror(errno);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "kill " << kill << ": the child ended on its own (status " << status << ")";

    const int temporaries = CountTemporaries(dir.path());
    temporaries_left += temporaries;
    ProgressStore store(folder);  // a new start: sweeps the killed save's temporary file
    EXPECT_EQ(store.swept(), temporaries) << "kill " << kill;
    EXPECT_EQ(CountTemporaries(dir.path()), 0) << "kill " << kill;

    const ProgressLoad load = store.Load(kLab);
    ASSERT_TRUE(load.warning.empty()) << "kill " << kill << ": " << load.warning;
    ASSERT_FALSE(load.fresh) << "kill " << kill;
    const int saved = load.progress.step;
    ASSERT_GE(saved, last) << "kill " << kill << ": an older version came back";
    // Byte-identical to the version it claims to be: no mix of two saves.
    EXPECT_EQ(test_util::ReadWholeFile(path), WriteLabProgress(Version(saved))) << "kill " << kill;
    if (saved == last) ++kills_between_versions;
    last = saved;
  }
  // What the 50 kills hit, for the log (the figures vary with the machine).
  std::printf("%d kills: last version %d, %d temporary files swept, %d kills before any new save\n",
              kKills, last, temporaries_left, kills_between_versions);
  // How many saves fit between kills depends on the disk's fsync; one at least.
  EXPECT_GT(last, 0) << "no child ever finished a save: the test proved nothing";
}

/// A tmpfs mounted for the test and unmounted (lazily) after it.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const fs::path& at) : at_(at) {
    if (::mount("tmpfs", at.c_str(), "tmpfs", 0, "size=64k") != 0) error_ = std::strerror(errno);
  }
  ~SmallTmpfs() {
    if (error_.empty()) ::umount2(at_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  /// "" when mounted, else why not.
  const std::string& error() const { return error_; }

 private:
  fs::path at_;
  std::string error_;
};

TEST(ProgressStoreRealFaults, RealFullDiskFailsWithAClearMessageAndKeepsTheOldFile) {
  test_util::TempDir dir;
  SmallTmpfs tmpfs(dir.path());
  if (!tmpfs.error().empty()) {
    GTEST_SKIP() << "cannot mount a 64 KiB tmpfs at " << dir.path() << " (" << tmpfs.error()
                 << "; needs root or CAP_SYS_ADMIN)";
  }
  const std::string folder = dir.path().string();
  ProgressStore store(folder);
  const LabProgress before = Version(7);
  store.Save(before);
  const std::string path = store.PathFor(kLab);
  const std::string old_text = test_util::ReadWholeFile(path);

  LabProgress too_big = Version(8);
  too_big.SetAnswer({"essay", std::string(200 * 1024, 'x'), false, "", "", ""});  // > 64 KiB
  try {
    store.Save(too_big);
    FAIL() << "a 200 KiB save fitted on a 64 KiB tmpfs";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    const std::string message = e.what();
    EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    EXPECT_NE(message.find(folder), std::string::npos) << "the message names no file: " << message;
  }
  EXPECT_EQ(CountTemporaries(dir.path()), 0);  // the failed save cleaned up after itself
  EXPECT_EQ(test_util::ReadWholeFile(path), old_text);

  // The store is still usable: a save that fits goes through.
  store.Save(Version(9));
  EXPECT_EQ(store.Load(kLab).progress.step, 9);
}

}  // namespace
}  // namespace shardlab
