// The profile cache: a GPU model is calibrated once and read back after that
// (the calibrations are counted), each model has its own safely named file,
// a file of another model is not taken for this one, a corrupt file is one
// error naming its line, a folder that cannot be written still gives the
// profile. No GPU: `calibrate` is a fake that counts its calls.
#include "engine/topology/profile_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/core/error.h"
#include "tests/topology/profile_cache_test_util.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

TEST(ProfileCache, TheFirstUseCalibratesAndWritesTheNextReadsTheFile) {
  const ScratchDir dir("first");
  FakeCalibration fake("NVIDIA H200", 4101);
  std::string how;
  const DeviceProfile first = CachedProfileIn(dir.path, "NVIDIA H200", 0, fake.Function(), &how);
  const std::string path = dir.path + "/profiles/nvidia-h200.toml";
  EXPECT_EQ(fake.calls, 1);
  EXPECT_EQ(how, "calibrated now on GPU 0, cached at " + path);
  ASSERT_TRUE(fs::exists(path));
  // The file is what `calibrate` writes and --device-profile reads.
  const DeviceProfile on_disk = LoadDeviceProfile(path);
  EXPECT_EQ(on_disk.model, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(*on_disk.memory_gbps, 4101);
  EXPECT_DOUBLE_EQ(*on_disk.kernel_launch_ns, *first.kernel_launch_ns);

  fake.memory_gbps = 1;  // a second measurement would differ: the file must be what is read
  const DeviceProfile second = CachedProfileIn(dir.path, "NVIDIA H200", 0, fake.Function(), &how);
  EXPECT_EQ(fake.calls, 1);
  EXPECT_EQ(how, "cached profile " + path);
  EXPECT_DOUBLE_EQ(*second.memory_gbps, 4101);
  // No temporary file is left beside it.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path + "/profiles")) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(ProfileCache, EachGpuModelHasItsOwnFile) {
  const ScratchDir dir("models");
  FakeCalibration h200("NVIDIA H200", 4101);
  FakeCalibration h100("NVIDIA H100 80GB HBM3", 2950);
  std::string how;
  CachedProfileIn(dir.path, "NVIDIA H200", 0, h200.Function(), &how);
  const DeviceProfile b = CachedProfileIn(dir.path, "NVIDIA H100 80GB HBM3", 1, h100.Function(), &how);
  EXPECT_EQ(h100.calls, 1);
  EXPECT_EQ(how, "calibrated now on GPU 1, cached at " + dir.path + "/profiles/nvidia-h100-80gb-hbm3.toml");
  EXPECT_DOUBLE_EQ(*b.memory_gbps, 2950);
  // Both are kept: neither model is measured again.
  EXPECT_DOUBLE_EQ(*CachedProfileIn(dir.path, "NVIDIA H200", 0, h200.Function(), &how).memory_gbps, 4101);
  EXPECT_DOUBLE_EQ(*CachedProfileIn(dir.path, "NVIDIA H100 80GB HBM3", 1, h100.Function(), &how).memory_gbps, 2950);
  EXPECT_EQ(h200.calls, 1);
  EXPECT_EQ(h100.calls, 1);
}

TEST(ProfileCache, TheFileNameIsASafeSlugOfTheModel) {
  EXPECT_EQ(ProfileSlug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(ProfileSlug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(ProfileSlug("  NVIDIA  A100-SXM4-40GB "), "nvidia-a100-sxm4-40gb");
  EXPECT_EQ(ProfileSlug("../../etc/passwd"), "etc-passwd");  // never leaves the folder
  EXPECT_EQ(ProfileSlug("Tesla V100/PCIe\n"), "tesla-v100-pcie");
  EXPECT_EQ(ProfileSlug(""), "unknown-gpu");
  EXPECT_EQ(ProfileSlug("ünï"), "n");  // only ASCII letters and digits
  EXPECT_EQ(CachedProfilePath("/c", "NVIDIA H200"), "/c/profiles/nvidia-h200.toml");
}

// Puts `text` where the cache keeps the H200's profile; returns that path.
std::string WriteCachedH200(const ScratchDir& dir, const std::string& text) {
  const std::string path = dir.path + "/profiles/nvidia-h200.toml";
  fs::create_directories(dir.path + "/profiles");
  std::ofstream(path) << text;
  return path;
}

TEST(ProfileCache, AFileOfAnotherModelIsNotUsed) {
  const ScratchDir dir("other");
  const std::string path = WriteCachedH200(dir, "[device]\nmodel = \"NVIDIA H100 80GB HBM3\"\nmemory_gbps = 2950\n");
  FakeCalibration fake("NVIDIA H200", 4101);
  std::string how;
  const DeviceProfile p = CachedProfileIn(dir.path, "NVIDIA H200", 0, fake.Function(), &how);
  EXPECT_EQ(fake.calls, 1);
  EXPECT_EQ(p.model, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(*p.memory_gbps, 4101);
  EXPECT_EQ(LoadDeviceProfile(path).model, "NVIDIA H200");  // replaced
}

TEST(ProfileCache, ACorruptFileIsOneErrorNamingItsLine) {
  const ScratchDir dir("corrupt");
  const std::string path = WriteCachedH200(dir, "[device]\nmodel = \"NVIDIA H200\"\nmemory_gbps = \"fast\"\n");
  FakeCalibration fake("NVIDIA H200", 4101);
  std::string how;
  try {
    CachedProfileIn(dir.path, "NVIDIA H200", 0, fake.Function(), &how);
    FAIL() << "a corrupt cached profile was taken";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ":3:", 0), 0u) << what;
    EXPECT_NE(what.find("shardlab-cli calibrate"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
  }
  EXPECT_EQ(fake.calls, 0);
}

TEST(ProfileCache, AFolderThatCannotBeWrittenStillGivesTheProfile) {
  const ScratchDir dir("unwritable");
  // A file where the folder should be: no one, root included, makes a folder under it.
  { std::ofstream(dir.path + "/blocked") << "x"; }
  FakeCalibration fake("NVIDIA H200", 4101);
  std::string how;
  const DeviceProfile p = CachedProfileIn(dir.path + "/blocked", "NVIDIA H200", 0, fake.Function(), &how);
  EXPECT_DOUBLE_EQ(*p.memory_gbps, 4101);
  EXPECT_EQ(how.rfind("calibrated now on GPU 0, not cached (", 0), 0u) << how;
  EXPECT_NE(how.find(dir.path + "/blocked"), std::string::npos) << how;
  // Nothing was cached, so the next use measures again.
  CachedProfileIn(dir.path + "/blocked", "NVIDIA H200", 0, fake.Function(), &how);
  EXPECT_EQ(fake.calls, 2);
  // No cache folder at all: the same.
  CachedProfileIn("", "NVIDIA H200", 0, fake.Function(), &how);
  EXPECT_EQ(fake.calls, 3);
  EXPECT_NE(how.find("not cached (no cache folder"), std::string::npos) << how;
}

TEST(ProfileCache, TheFolderComesFromTheEnvironmentInOrder) {
  EXPECT_EQ(ProfileCacheDirFrom("/a", "/x", "/h"), "/a");
  EXPECT_EQ(ProfileCacheDirFrom("", "/x", "/h"), "/x/shardlab");
  EXPECT_EQ(ProfileCacheDirFrom(nullptr, nullptr, "/h"), "/h/.cache/shardlab");
  EXPECT_EQ(ProfileCacheDirFrom(nullptr, "", ""), "");
}

TEST(ProfileCache, CalibrateRefreshesTheCachedFile) {
  const ScratchDir dir("refresh");
  FakeCalibration fake("NVIDIA H200", 4101);
  std::string how;
  CachedProfileIn(dir.path, "NVIDIA H200", 0, fake.Function(), &how);
  fake.memory_gbps = 4200;
  std::string why_not;
  const std::string stored = StoreCachedProfile(dir.path, fake.Function()(), &why_not);
  EXPECT_EQ(stored, dir.path + "/profiles/nvidia-h200.toml") << why_not;
  EXPECT_DOUBLE_EQ(*CachedProfileIn(dir.path, "NVIDIA H200", 0, fake.Function(), &how).memory_gbps, 4200);
  EXPECT_EQ(fake.calls, 2);  // the first use and the refresh; the last one read the file
}

}  // namespace
}  // namespace shardlab
