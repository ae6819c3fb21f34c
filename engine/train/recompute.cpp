#include "engine/train/recompute.h"

#include <charconv>

#include "engine/core/error.h"

namespace shardlab {

const char* RecomputeModeName(RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::kFull: return "full";
    case RecomputeMode::kSelective: return "selective";
    default: return "none";
  }
}

RecomputeMode ParseRecomputeMode(std::string_view text) {
  if (text == "none") return RecomputeMode::kNone;
  if (text == "full") return RecomputeMode::kFull;
  if (text == "selective") return RecomputeMode::kSelective;
  throw Error("recompute: unknown mode '" + std::string(text) + "' (none, full or selective)",
              ErrorKind::kInvalidInput);
}

std::vector<bool> RecomputedLayers(RecomputeMode mode, std::string_view text, int layers) {
  std::vector<bool> out(static_cast<std::size_t>(layers), false);
  if (mode == RecomputeMode::kNone) return out;
  if (mode == RecomputeMode::kFull) {
    for (int l = 0; l + 1 < layers; ++l) out[l] = true;
    return out;
  }
  auto fail = [](const std::string& message) {
    throw Error("recompute_layers: " + message, ErrorKind::kInvalidInput);
  };
  std::size_t at = 0;
  int count = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    int layer = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), layer);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      fail("'" + std::string(item) + "' is not a layer number (write a list such as 0,2)");
    if (layer < 0 || layer + 1 >= layers)
      fail("layer " + std::to_string(layer) + " is outside 0.." + std::to_string(layers - 2) +
           " (the last layer keeps no activation of its own)");
    out[layer] = true;
    ++count;
    at = comma + 1;
  }
  if (count == 0) fail("selective recomputation needs a list of layers, such as 0,2");
  return out;
}

int RecomputedCount(const std::vector<bool>& recomputed) {
  int n = 0;
  for (const bool r : recomputed) n += r ? 1 : 0;
  return n;
}

std::int64_t RecomputePeakActivationBytes(const MlpConfig& model, int rows, int element_bytes,
                                          const std::vector<bool>& recomputed) {
  const std::int64_t tile = std::int64_t{rows} * model.width * element_bytes;
  if (model.layers < 2) return 2 * tile;  // y and dy
  return (2 * std::int64_t{model.layers} - RecomputedCount(recomputed)) * tile;
}

double RecomputeFlops(const MlpConfig& model, int rows, const std::vector<bool>& recomputed) {
  const double h = model.width;
  return RecomputedCount(recomputed) * (2.0 * rows * h * h + rows * h);
}

}  // namespace shardlab
