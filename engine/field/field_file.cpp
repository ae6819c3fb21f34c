#include "engine/field/field_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "engine/core/error.h"

namespace shardlab {
namespace {

std::string Mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

/// Collects text chunk by chunk, refusing a line or a whole text over its cap
/// as soon as the chunk that crosses it arrives.
class TextCollector {
 public:
  explicit TextCollector(const std::string& path) : path_(path) {}

  void Append(const char* data, std::size_t size) {
    for (std::size_t i = 0; i < size;) {
      const char* newline = static_cast<const char*>(std::memchr(data + i, '\n', size - i));
      const std::size_t piece = newline ? static_cast<std::size_t>(newline - (data + i)) + 1 : size - i;
      const std::size_t line_part = newline ? piece - 1 : piece;
      if (!decided_) {  // the first non-blank byte says whether this is JSON
        const std::size_t first = std::string_view(data + i, piece).find_first_not_of(" \t\r\n");
        if (first != std::string_view::npos) {
          decided_ = true;
          json_ = data[i + first] == '{' || data[i + first] == '[';
        }
      }
      if (!json_ && line_bytes_ + line_part > kMaxFieldLineBytes) {
        throw Error(path_ + ":" + std::to_string(lines_ + 1) + ": a line longer than " +
                    Mib(kMaxFieldLineBytes) + " (binary data?); stopped reading there");
      }
      if (text_.size() + piece > kMaxFieldFileBytes) {
        throw Error(path_ + ":" + std::to_string(lines_ + 1) + ": the file is larger than " +
                    Mib(kMaxFieldFileBytes) + "; stopped reading there");
      }
      text_.append(data + i, piece);
      if (newline) {
        ++lines_;
        line_bytes_ = 0;
      } else {
        line_bytes_ += line_part;
      }
      i += piece;
    }
  }
  /// The line being read (from 1), for messages.
  int current_line() const { return lines_ + 1; }
  std::string Take() { return std::move(text_); }

 private:
  const std::string& path_;
  std::string text_;
  int lines_ = 0;
  std::size_t line_bytes_ = 0;
  bool decided_ = false;  // the first non-blank byte has been seen
  bool json_ = false;     // ... and it opens JSON: no line cap
};

/// Inflates gzip members from `next_input` (which fills a buffer and returns
/// its size, 0 at the end) into `out`.
void Inflate(const std::string& path, const std::function<std::size_t(unsigned char*, std::size_t)>& next_input,
             TextCollector& out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw Error(path + ": zlib could not start");
  struct Ender {
    z_stream* z;
    ~Ender() { inflateEnd(z); }
  } ender{&z};
  std::vector<unsigned char> in(1 << 16);
  std::vector<unsigned char> buffer(1 << 16);
  bool ended = false;  // the last member ended and no input followed yet
  std::size_t total_in = 0;
  for (;;) {
    if (z.avail_in == 0) {
      const std::size_t got = next_input(in.data(), in.size());
      if (got == 0) break;
      if (ended) {  // another gzip member follows (cat a.gz b.gz)
        if (inflateReset(&z) != Z_OK) throw Error(path + ": zlib could not restart");
        ended = false;
      }
      z.next_in = in.data();
      z.avail_in = static_cast<uInt>(got);
      total_in += got;
    }
    if (ended) {
      if (inflateReset(&z) != Z_OK) throw Error(path + ": zlib could not restart");
      ended = false;
    }
    z.next_out = buffer.data();
    z.avail_out = static_cast<uInt>(buffer.size());
    const int status = inflate(&z, Z_NO_FLUSH);
    out.Append(reinterpret_cast<const char*>(buffer.data()), buffer.size() - z.avail_out);
    if (status == Z_STREAM_END) {
      ended = true;
      continue;
    }
    if (status != Z_OK && status != Z_BUF_ERROR) {
      throw Error(path + ":" + std::to_string(out.current_line()) + ": broken gzip data (" +
                  (z.msg ? z.msg : "zlib error " + std::to_string(status)) + ") after " +
                  std::to_string(total_in - z.avail_in) + " compressed bytes");
    }
  }
  if (!ended) {
    throw Error(path + ":" + std::to_string(out.current_line()) +
                ": the compressed data stops here, inside a gzip stream (truncated?)");
  }
}

bool IsGzip(const unsigned char* data, std::size_t size) {
  return size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

void IndexLines(FieldFile& file) {
  file.line_starts.clear();
  if (file.text.empty()) return;
  file.line_starts.push_back(0);
  for (std::size_t i = 0; i + 1 < file.text.size(); ++i) {
    if (file.text[i] == '\n') file.line_starts.push_back(i + 1);
  }
}

}  // namespace

std::string_view FieldFile::Line(int n) const {
  if (n < 1 || n > line_count()) return {};
  const std::size_t begin = line_starts[static_cast<std::size_t>(n - 1)];
  std::size_t end = n < line_count() ? line_starts[static_cast<std::size_t>(n)] : text.size();
  if (end > begin && text[end - 1] == '\n') --end;
  if (end > begin && text[end - 1] == '\r') --end;
  return std::string_view(text).substr(begin, end - begin);
}

std::pair<int, int> FieldFile::LineColumnAt(std::size_t offset) const {
  if (line_starts.empty()) return {1, 1};
  const auto after = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
  const std::size_t index = static_cast<std::size_t>(after - line_starts.begin()) - 1;
  return {static_cast<int>(index) + 1, static_cast<int>(offset - line_starts[index]) + 1};
}

FieldFile FieldFileFromBytes(std::string_view bytes, const std::string& path) {
  FieldFile file;
  file.path = path;
  TextCollector out(file.path);
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (IsGzip(data, bytes.size())) {
    file.gzip = true;
    std::size_t given = 0;
    Inflate(file.path, [&](unsigned char* buffer, std::size_t size) -> std::size_t {
      const std::size_t n = std::min(size, bytes.size() - given);
      std::memcpy(buffer, bytes.data() + given, n);
      given += n;
      return n;
    }, out);
  } else {
    out.Append(bytes.data(), bytes.size());
  }
  file.text = out.Take();
  IndexLines(file);
  return file;
}

FieldFile ReadFieldFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  auto read_some = [&](unsigned char* buffer, std::size_t size) -> std::size_t {
    for (;;) {
      const ssize_t got = ::read(fd, buffer, size);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno == EINTR) continue;
      throw Error(path + ": " + std::strerror(errno));
    }
  };
  FieldFile file;
  file.path = path;
  TextCollector out(file.path);
  std::vector<unsigned char> first(1 << 16);
  std::size_t first_size = read_some(first.data(), first.size());
  if (IsGzip(first.data(), first_size)) {
    file.gzip = true;
    bool first_given = false;
    Inflate(path, [&](unsigned char* buffer, std::size_t size) -> std::size_t {
      if (!first_given) {
        first_given = true;
        std::memcpy(buffer, first.data(), std::min(size, first_size));
        return std::min(size, first_size);
      }
      return read_some(buffer, size);
    }, out);
  } else {
    while (first_size > 0) {
      out.Append(reinterpret_cast<const char*>(first.data()), first_size);
      first_size = read_some(first.data(), first.size());
    }
  }
  file.text = out.Take();
  IndexLines(file);
  return file;
}

}  // namespace shardlab
