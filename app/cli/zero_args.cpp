#include "app/cli/zero_args.h"

#include <climits>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/model/zero_memory.h"

namespace shardlab::cli {
namespace {

/// Four significant digits of `value` (>= 1), trailing zeros of the
/// fraction dropped: 1.007, 31.41, 120, 7.5.
std::string FourDigits(double value, bool keep_zeros) {
  const int decimals = value >= 1000 ? 0 : value >= 100 ? 1 : value >= 10 ? 2 : 3;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string text = buf;
  if (!keep_zeros && text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

/// `value` scaled by 1000 until it is below 1000, with the unit reached.
std::string Scaled(double value, const char* const* units, int unit_count, bool keep_zeros,
                   const char* separator) {
  int unit = 0;
  // Rounding can carry 999.96 up to "1000.0": scale before that happens.
  while (unit + 1 < unit_count && value >= 999.95) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return std::string(buf) + separator + units[0];
  }
  return FourDigits(value, keep_zeros) + separator + units[unit];
}

}  // namespace

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

std::string ZeroStageName(int stage) {
  if (stage == 0) return "data parallel";
  return "ZeRO-" + std::to_string(stage);
}

std::string ZeroStageSharding(int stage) {
  switch (stage) {
    case 0: return "nothing sharded: every rank holds all model states";
    case 1: return "optimizer states sharded";
    case 2: return "optimizer states and gradients sharded";
    case 3: return "optimizer states, gradients and parameters sharded";
  }
  return "";
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

std::string ParameterCountText(double count) {
  static const char* const kUnits[] = {"", "k", "M", "B", "T", "P"};
  return Scaled(count, kUnits, 6, /*keep_zeros=*/false, "");
}

std::string ModelBytesText(double bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return Scaled(bytes, kUnits, 6, /*keep_zeros=*/true, " ");
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
