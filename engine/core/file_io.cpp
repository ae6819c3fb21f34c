// POSIX file I/O for atomic saves. Every call retries EINTR and turns
// other failures into Error(kRuntime) "path: <what failed>: <strerror>".
#include "engine/core/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/core/error.h"

namespace shardlab {
namespace {

[[noreturn]] void Fail(const std::string& path, const char* what, int err) {
  throw Error(path + ": " + what + ": " + std::strerror(err), ErrorKind::kRuntime);
}

class PosixFileIo : public FileIo {
 public:
  void WriteAndSync(const std::string& path, const std::string& bytes) override {
    int fd;
    do {
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) Fail(path, "cannot create", errno);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        Fail(path, "cannot write", err);
      }
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
      const int err = errno;
      ::close(fd);
      Fail(path, "cannot sync", err);
    }
    if (::close(fd) != 0) Fail(path, "cannot close", errno);
  }

  void Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) Fail(to, "cannot replace", errno);
  }

  void SyncDir(const std::string& dir) override {
    const std::string d = dir.empty() ? "." : dir;
    const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) Fail(d, "cannot open folder", errno);
    // Some file systems refuse fsync on folders (EINVAL); the rename is still done.
    if (::fsync(fd) != 0 && errno != EINVAL) {
      const int err = errno;
      ::close(fd);
      Fail(d, "cannot sync folder", err);
    }
    ::close(fd);
  }

  bool ReadFile(const std::string& path, std::size_t max_bytes, std::string* bytes) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return false;
      Fail(path, "cannot open", errno);
    }
    bytes->clear();
    char buffer[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        Fail(path, "cannot read", err);
      }
      if (n == 0) break;
      bytes->append(buffer, static_cast<std::size_t>(n));
      if (bytes->size() > max_bytes) {
        ::close(fd);
        throw Error(path + ": larger than " + std::to_string(max_bytes) + " bytes",
                    ErrorKind::kRuntime);
      }
    }
    ::close(fd);
    return true;
  }

  std::vector<std::string> ListDir(const std::string& dir) override {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return names;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      struct stat st {};
      if (::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        names.push_back(name);
      }
    }
    ::closedir(d);
    return names;
  }

  void Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) Fail(path, "cannot remove", errno);
  }

  void MakeDirs(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(dir + ": cannot create folder: " + ec.message(), ErrorKind::kRuntime);
  }
};

std::string DirOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

}  // namespace

FileIo& RealFileIo() {
  static PosixFileIo io;
  return io;
}

void AtomicWriteFile(FileIo& io, const std::string& path, const std::string& bytes) {
  static std::atomic<int> counter{0};
  const std::string tmp = path + kTempMarker + std::to_string(::getpid()) + "-" +
                          std::to_string(counter.fetch_add(1));
  try {
    io.WriteAndSync(tmp, bytes);
    io.Rename(tmp, path);
  } catch (...) {
    // Best effort: a temporary file that cannot be removed now is swept at
    // the next start.
    try {
      io.Remove(tmp);
    } catch (...) {
    }
    throw;
  }
  io.SyncDir(DirOf(path));
}

int SweepTemporaryFiles(FileIo& io, const std::string& dir) {
  int swept = 0;
  for (const std::string& name : io.ListDir(dir)) {
    if (name.find(kTempMarker) == std::string::npos) continue;
    io.Remove(dir + "/" + name);
    ++swept;
  }
  return swept;
}

}  // namespace shardlab
