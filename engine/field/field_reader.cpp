#include "engine/field/field_reader.h"

#include <cstring>

#include "engine/core/error.h"

namespace shardlab {

void RegisterBuiltinFieldReaders();  // generated from engine/field/readers/*.cpp

namespace {

std::vector<FieldReader>& Registry() {
  static std::vector<FieldReader> readers;
  return readers;
}

void EnsureBuiltins() {
  static const bool done = [] {
    RegisterBuiltinFieldReaders();
    return true;
  }();
  (void)done;
}

/// The first bytes of a file, shown so that a person sees what it was.
std::string Preview(std::string_view head) {
  std::string shown;
  for (const char c : head.substr(0, 40)) {
    if (c == '\n' || c == '\r') break;
    const auto u = static_cast<unsigned char>(c);
    shown += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  return shown;
}

}  // namespace

void RegisterFieldReader(FieldReader reader) {
  for (const FieldReader& r : Registry()) {
    if (r.kind == reader.kind) throw Error("field reader '" + reader.kind + "' registered twice");
  }
  Registry().push_back(std::move(reader));
}

const std::vector<FieldReader>& FieldReaders() {
  EnsureBuiltins();
  return Registry();
}

const FieldReader& RecogniseFieldFile(const FieldFile& file) {
  const std::string_view head = std::string_view(file.text).substr(0, kRecogniseBytes);
  const FieldReader* best = nullptr;
  int best_score = 0;
  for (const FieldReader& r : FieldReaders()) {
    const int score = r.recognise(head);
    if (score > best_score) {
      best = &r;
      best_score = score;
    }
  }
  if (best != nullptr) return *best;
  std::string kinds;
  for (const FieldReader& r : FieldReaders()) kinds += (kinds.empty() ? "" : ", ") + r.kind;
  if (file.text.empty()) throw Error(file.path + ":1: the file is empty");
  const void* nul = std::memchr(head.data(), '\0', head.size());
  if (nul != nullptr) {
    const auto offset = static_cast<std::size_t>(static_cast<const char*>(nul) - head.data());
    const auto [line, column] = file.LineColumnAt(offset);
    throw Error(file.path + ":" + std::to_string(line) + ":" + std::to_string(column) +
                ": binary data (a NUL byte), not a kind of file inspect reads (" + kinds + ")");
  }
  throw Error(file.path + ":1: not a kind of file inspect reads (" + kinds + "); it starts '" +
              Preview(head) + "'");
}

Inspection InspectFieldFile(const FieldFile& file) {
  const FieldReader& reader = RecogniseFieldFile(file);
  Inspection inspection = reader.inspect(file);
  inspection.kind = reader.kind;
  return inspection;
}

}  // namespace shardlab
