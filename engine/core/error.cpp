#include "engine/core/error.h"

namespace shardlab {

Error FileError(const std::string& path, int line, const std::string& field,
                const std::string& message) {
  std::string text = path;
  if (line > 0) text += ":" + std::to_string(line);
  text += ": ";
  if (!field.empty()) text += field + ": ";
  text += message;
  return Error(std::move(text));
}

}  // namespace shardlab
