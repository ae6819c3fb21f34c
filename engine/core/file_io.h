// The file-system calls an atomic save needs, behind one small interface,
// so a test can make any of them fail: a kill after half a write, a full
// disk, a rename that never happens.
//
//   AtomicWriteFile(io, "dir/p.toml", bytes):
//     io.WriteAndSync("dir/p.toml.tmp-<pid>-<n>", bytes)   write, fsync, close
//     io.Rename(tmp, "dir/p.toml")                          atomic on POSIX
//     io.SyncDir("dir")                                     the rename is durable
//   Any failure removes the temporary file and throws; the old file is
//   untouched until the rename, so a reader sees the old or the new bytes,
//   never a mix. A process killed before the rename leaves a stale
//   temporary file, swept at the next start (SweepTemporaryFiles).
#pragma once

#include <string>
#include <vector>

namespace shardlab {

class FileIo {
 public:
  virtual ~FileIo() = default;
  /// Creates or truncates `path`, writes all of `bytes`, fsyncs, closes.
  /// Throws Error(kRuntime) "path: <strerror>" (ENOSPC: "no space left on device").
  virtual void WriteAndSync(const std::string& path, const std::string& bytes) = 0;
  /// rename(2): replaces `to` atomically. Throws Error(kRuntime).
  virtual void Rename(const std::string& from, const std::string& to) = 0;
  /// fsync of a folder, so a rename in it survives a power cut. Throws Error(kRuntime).
  virtual void SyncDir(const std::string& dir) = 0;
  /// Whole file; false when it does not exist. Throws Error(kRuntime) on
  /// other errors or when it is larger than `max_bytes`.
  virtual bool ReadFile(const std::string& path, std::size_t max_bytes, std::string* bytes) = 0;
  /// Names (not paths) of the plain files in `dir`; empty when it does not exist.
  virtual std::vector<std::string> ListDir(const std::string& dir) = 0;
  /// Removes a file; no error when it is already gone.
  virtual void Remove(const std::string& path) = 0;
  /// mkdir -p.
  virtual void MakeDirs(const std::string& dir) = 0;
};

/// The real file system (POSIX calls).
FileIo& RealFileIo();

/// The marker in temporary file names: "<name>.tmp-<pid>-<n>".
inline constexpr const char* kTempMarker = ".tmp-";

/// Writes `bytes` to `path` atomically as described above.
void AtomicWriteFile(FileIo& io, const std::string& path, const std::string& bytes);

/// Removes every "<name>.tmp-*" file in `dir` (left by a save that was
/// killed before its rename); returns how many.
int SweepTemporaryFiles(FileIo& io, const std::string& dir);

}  // namespace shardlab
