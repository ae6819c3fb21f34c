// Engine errors: exceptions that carry their context in the message
// ("topo.toml:12: link.b: no node named 'gpu9'"; "op 17 (rank 3, send->4):
// no matching recv"). The engine never calls exit(); front ends catch
// Error, print what() once, and choose the exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace shardlab {

/// What kind of failure an Error reports; the CLI maps kInvalidInput to
/// exit code 2 (bad flags, files, plans) and the rest to 1.
enum class ErrorKind { kInvalidInput, kRuntime, kCancelled };

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, ErrorKind kind = ErrorKind::kInvalidInput)
      : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

/// Builds an Error for a field of a file: "path:line: field: message".
/// line <= 0 leaves the line out.
Error FileError(const std::string& path, int line, const std::string& field,
                const std::string& message);

}  // namespace shardlab
