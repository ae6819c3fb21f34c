#include "app/cli/zero_args.h"

#include <climits>
#include <vector>

#include "engine/model/zero_memory.h"

namespace shardlab::cli {

int ZeroKFlag(const ParsedArgs& args) {
  const std::int64_t k = ParseIntValue(args.Spelling("k"), args.Get("k"), INT_MIN, INT_MAX);
  try {
    CheckZeroK(k);
  } catch (const Error& e) {
    constexpr std::pair<const char*, const char*> kK[] = {{"k: ", "k"}};
    throw FieldErrorAsFlagError(e, args, kK);
  }
  return static_cast<int>(k);
}

Error ZeroFlagError(const Error& error, const ParsedArgs& args, const std::string& size_flag) {
  // With --params the model's layers and width are derived, so the flag
  // that set them is --params.
  const bool derived = size_flag == "params";
  const std::pair<const char*, const char*> fields[] = {
      {"stage: ", "zero-stage"},
      {"ranks: ", "ranks"},
      {"steps: ", "steps"},
      {"bucket: ", "bucket"},
      {"batch: ", "batch"},
      {"layers: ", derived ? "params" : "layers"},
      {"width: ", derived ? "params" : "width"},
      {"params: ", size_flag.c_str()},
      {"learning rate: ", "lr"},
      {"topology: ", "topology"},
      {"backend: ", "backend"},
  };
  return FieldErrorAsFlagError(error, args, fields);
}

void WriteZeroFormulaBytes(JsonWriter& w, const ZeroMemoryFormula& f) {
  w.Field("parameters_bytes", f.parameters);
  w.Field("gradients_bytes", f.gradients);
  w.Field("optimizer_states_bytes", f.optimizer_states);
  w.Field("total_bytes", f.total());
}

std::size_t TextColumns(const std::string& text) {
  std::size_t columns = 0;
  for (const char c : text) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return columns;
}

std::string PadColumns(const std::string& text, std::size_t width, bool left) {
  const std::size_t columns = TextColumns(text);
  if (columns >= width) return text;
  const std::string fill(width - columns, ' ');
  return left ? text + fill : fill + text;
}

}  // namespace shardlab::cli
