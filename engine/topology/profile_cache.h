// The device profile of each GPU model, measured once and kept: what
// `--topology this` and a measured run's trace record take, so that neither
// calibrates the GPU again on every run.
//
//   $SHARDLAB_CACHE_DIR, else $XDG_CACHE_HOME/shardlab, else $HOME/.cache/shardlab
//     profiles/nvidia-h200.toml        the file `calibrate --out` writes
//     profiles/nvidia-h100-80gb-hbm3.toml
//
// CachedProfile(model, ...): the file of that model when it is there and
// names that model; otherwise it calibrates (the caller's function) and
// writes the file atomically (a temporary file, then rename). A cached file
// that does not parse is one error "file:line: field: message" telling to
// refresh it (`shardlab-cli calibrate` rewrites it; or delete it): a cache
// that silently recalibrated would hide a file someone edited. A cache folder
// that cannot be written never fails a run: the measured profile is used, and
// `how` says it was not cached and why.
#pragma once

#include <functional>
#include <string>

#include "engine/topology/device_profile.h"

namespace shardlab {

/// The cache folder from these environment values (each may be null or
/// empty): shardlab_cache_dir, else xdg_cache_home/shardlab, else
/// home/.cache/shardlab; "" when none is set.
std::string ProfileCacheDirFrom(const char* shardlab_cache_dir, const char* xdg_cache_home, const char* home);

/// ProfileCacheDirFrom of this process's SHARDLAB_CACHE_DIR, XDG_CACHE_HOME, HOME.
std::string ProfileCacheDir();

/// A file name for a GPU model: lower case letters and digits, every other
/// run of characters one '-', none at either end ("NVIDIA H200" ->
/// "nvidia-h200"); "unknown-gpu" when nothing is left.
std::string ProfileSlug(const std::string& gpu_model);

/// `cache_dir`/profiles/<ProfileSlug(gpu_model)>.toml.
std::string CachedProfilePath(const std::string& cache_dir, const std::string& gpu_model);

/// Writes `profile` to its model's file in `cache_dir` (folders made as
/// needed; a temporary file renamed over the old one). Returns the path, or
/// "" with the reason in *why_not ("no cache folder: ...", "PATH: cannot
/// ..."). Never throws for the file system.
std::string StoreCachedProfile(const std::string& cache_dir, const DeviceProfile& profile, std::string* why_not);

/// The profile of `gpu_model` from the cache in `cache_dir`, or measured by
/// `calibrate` (which measures GPU `gpu`) and stored there. *how says which:
/// "cached profile PATH", "calibrated now on GPU 0, cached at PATH", or
/// "calibrated now on GPU 0, not cached (WHY)". A cached file of another
/// model (its `model` has another slug) is measured again and replaced.
/// Throws the parse error of a corrupt cached file, and what `calibrate` throws.
DeviceProfile CachedProfileIn(const std::string& cache_dir, const std::string& gpu_model, int gpu,
                              const std::function<DeviceProfile()>& calibrate, std::string* how);

/// CachedProfileIn with ProfileCacheDir().
DeviceProfile CachedProfile(const std::string& gpu_model, int gpu, const std::function<DeviceProfile()>& calibrate,
                            std::string* how);

}  // namespace shardlab
