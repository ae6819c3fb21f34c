#include "engine/topology/profile_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "engine/core/error.h"

namespace shardlab {
namespace {

bool Set(const char* value) { return value != nullptr && value[0] != '\0'; }

// Writes `text` to `path` through a temporary file in the same folder, so a
// reader sees the old file or the new one, never half of one. "" or why not.
std::string WriteAtomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) return target.parent_path().string() + ": cannot create the folder: " + ec.message();
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return tmp + ": cannot create the file";
    out << text;
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return tmp + ": cannot write the file";
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = path + ": cannot replace the file: " + ec.message();
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return why;
  }
  return "";
}

}  // namespace

std::string ProfileCacheDirFrom(const char* shardlab_cache_dir, const char* xdg_cache_home, const char* home) {
  if (Set(shardlab_cache_dir)) return shardlab_cache_dir;
  if (Set(xdg_cache_home)) return std::string(xdg_cache_home) + "/shardlab";
  if (Set(home)) return std::string(home) + "/.cache/shardlab";
  return "";
}

std::string ProfileCacheDir() {
  return ProfileCacheDirFrom(std::getenv("SHARDLAB_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"),
                             std::getenv("HOME"));
}

std::string ProfileSlug(const std::string& gpu_model) {
  std::string slug;
  bool gap = false;
  for (const char c : gpu_model) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
    if (!keep) {
      gap = true;
      continue;
    }
    if (gap && !slug.empty()) slug += '-';
    gap = false;
    slug += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return slug.empty() ? "unknown-gpu" : slug;
}

std::string CachedProfilePath(const std::string& cache_dir, const std::string& gpu_model) {
  return (std::filesystem::path(cache_dir) / "profiles" / (ProfileSlug(gpu_model) + ".toml")).string();
}

std::string StoreCachedProfile(const std::string& cache_dir, const DeviceProfile& profile, std::string* why_not) {
  if (cache_dir.empty()) {
    *why_not = "no cache folder: none of SHARDLAB_CACHE_DIR, XDG_CACHE_HOME, HOME is set";
    return "";
  }
  const std::string path = CachedProfilePath(cache_dir, profile.model);
  const std::string failed = WriteAtomically(path, FormatDeviceProfile(profile));
  if (!failed.empty()) {
    *why_not = failed;
    return "";
  }
  return path;
}

DeviceProfile CachedProfileIn(const std::string& cache_dir, const std::string& gpu_model, int gpu,
                              const std::function<DeviceProfile()>& calibrate, std::string* how) {
  if (!cache_dir.empty()) {
    const std::string path = CachedProfilePath(cache_dir, gpu_model);
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      DeviceProfile cached;
      try {
        cached = LoadDeviceProfile(path);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + " (a cached device profile: 'shardlab-cli calibrate' measures "
                    "the GPU again and rewrites it, or delete the file)", e.kind());
      }
      if (ProfileSlug(cached.model) == ProfileSlug(gpu_model)) {
        *how = "cached profile " + path;
        return cached;
      }
      // A file of another model under this name: measured again and replaced.
    }
  }
  DeviceProfile measured = calibrate();
  // The file is named after the model asked for, so the next run finds it.
  if (measured.model.empty() || ProfileSlug(measured.model) != ProfileSlug(gpu_model)) measured.model = gpu_model;
  std::string why_not;
  const std::string stored = StoreCachedProfile(cache_dir, measured, &why_not);
  *how = "calibrated now on GPU " + std::to_string(gpu) +
         (stored.empty() ? ", not cached (" + why_not + ")" : ", cached at " + stored);
  return measured;
}

DeviceProfile CachedProfile(const std::string& gpu_model, int gpu, const std::function<DeviceProfile()>& calibrate,
                            std::string* how) {
  return CachedProfileIn(ProfileCacheDir(), gpu_model, gpu, calibrate, how);
}

}  // namespace shardlab
