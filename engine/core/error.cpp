#include "engine/core/error.h"

namespace shardlab {

Error FileError(const std::string& path, int line, const std::string& field,
                const std::string& message) {
  // Appends piece by piece: GCC 12 warns (-Wrestrict, a known false positive)
  // on `":" + std::to_string(line)` once inlined.
  std::string text = path;
  if (line > 0) {
    text += ':';
    text += std::to_string(line);
  }
  text.append(": ");
  if (!field.empty()) {
    text.append(field);
    text.append(": ");
  }
  text.append(message);
  return Error(std::move(text));
}

}  // namespace shardlab
