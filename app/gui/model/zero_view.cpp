// View model of a ZeRO run: see zero_view.h.
#include "app/gui/model/zero_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "app/gui/model/link_activity.h"
#include "engine/model/zero_memory.h"

namespace shardlab::gui {
namespace {

constexpr const char* kMiddleDot = "\xC2\xB7";

/// The category of the buffer a transfer of a collective moves.
MemoryCategory TransferCategory(const Plan& plan, const Op& op) {
  const BufferSlice& slice = op.kind == OpKind::kRecv ? op.dst : op.src;
  if (!slice.valid() || static_cast<std::size_t>(slice.buffer) >= plan.buffers.size()) return MemoryCategory::kOther;
  return plan.buffers[static_cast<std::size_t>(slice.buffer)].category;
}

/// "layers 3-2" or "layer 3" for a unit.
std::string LayerRange(const ZeroUnit& unit) {
  if (unit.first_layer == unit.last_layer) return "layer " + std::to_string(unit.first_layer);
  return "layers " + std::to_string(unit.last_layer) + "-" + std::to_string(unit.first_layer);
}

bool ValidUnit(const ZeroPlan& zero, int unit) {
  return unit >= 0 && static_cast<std::size_t>(unit) < zero.units.size();
}

}  // namespace

int ZeroUnitOfLayer(const ZeroPlan& zero, int layer) {
  for (std::size_t u = 0; u < zero.units.size(); ++u) {
    if (zero.units[u].first_layer <= layer && layer <= zero.units[u].last_layer) return static_cast<int>(u);
  }
  return -1;
}

std::string ZeroUnitWords(const ZeroPlan& zero, int unit) {
  if (!ValidUnit(zero, unit)) return "?";
  const ZeroUnit& u = zero.units[static_cast<std::size_t>(unit)];
  if (zero.params.stage == 3) return LayerRange(u);
  return "bucket " + std::to_string(unit) + " (" + LayerRange(u) + ")";
}

std::vector<ZeroCollectiveName> NameZeroCollectives(const ZeroPlan& zero, const Plan& plan) {
  // The first transfer of every collective says what it moves.
  std::map<int, const Op*> first;
  for (const Op& op : plan.ops) {
    if (op.collective_seq < 0 || (op.kind != OpKind::kSend && op.kind != OpKind::kRecv)) continue;
    first.emplace(op.collective_seq, &op);
  }
  const int stage = zero.params.stage;
  const int per_step = std::max(zero.collectives_per_step, 1);
  std::map<std::pair<int, int>, int> gathers;  // (training step, layer) -> gathers seen
  std::vector<ZeroCollectiveName> names;
  names.reserve(first.size());
  for (const auto& [seq, op] : first) {
    ZeroCollectiveName n;
    n.seq = seq;
    n.training_step = seq / per_step;
    n.layer = op->tags.layer;
    n.unit = ZeroUnitOfLayer(zero, n.layer);
    const std::string unit_tag = (stage == 3 ? "L" + std::to_string(n.layer) : "b" + std::to_string(n.unit));
    const std::string layer = std::to_string(n.layer);
    const std::string unit_words = ZeroUnitWords(zero, n.unit);
    switch (TransferCategory(plan, *op)) {
      case MemoryCategory::kGatheredParameters: {
        const bool forward = gathers[{n.training_step, n.layer}]++ == 0;  // the forward's comes first
        n.kind = forward ? ZeroCollectiveKind::kGatherForward : ZeroCollectiveKind::kGatherBackward;
        n.tag = "AG L" + layer + (forward ? " fwd" : " bwd");
        n.what = "all-gather of layer " + layer + "'s parameters before its " + (forward ? "forward" : "backward");
        break;
      }
      case MemoryCategory::kParameters:
        n.kind = ZeroCollectiveKind::kGatherUpdated;
        n.tag = "AG " + unit_tag + " upd";
        n.what = "all-gather of the updated parameters of " + unit_words;
        break;
      default:
        if (stage == 0) {
          n.kind = ZeroCollectiveKind::kAllReduceGradients;
          n.tag = "AR " + unit_tag;
          n.what = "all-reduce of the gradients of " + unit_words;
          n.two_passes = true;
        } else {
          n.kind = ZeroCollectiveKind::kReduceScatterGradients;
          n.tag = "RS " + unit_tag;
          n.what = "reduce-scatter of the gradients of " + unit_words;
        }
        break;
    }
    names.push_back(std::move(n));
  }
  return names;
}

const ZeroCollectiveName* FindZeroCollective(const std::vector<ZeroCollectiveName>& names, int seq) {
  const auto it = std::lower_bound(names.begin(), names.end(), seq,
                                   [](const ZeroCollectiveName& n, int s) { return n.seq < s; });
  return it != names.end() && it->seq == seq ? &*it : nullptr;
}

std::string ZeroComputeWords(const Op& op, const ZeroPlan& zero) {
  if (op.kind != OpKind::kCompute) return "";
  const ZeroParams& p = zero.params;
  const int rows = p.ranks > 0 ? p.model.batch / p.ranks : 0;
  const std::string layer = std::to_string(op.tags.layer);
  const int unit = ZeroUnitOfLayer(zero, op.tags.layer);
  const std::string share = "1/" + std::to_string(p.ranks);
  switch (op.tags.phase) {
    case Phase::kForward:
      return "forward of layer " + layer + " on this GPU's " + std::to_string(rows) + " rows of the batch";
    case Phase::kBackward:
      return "backward of layer " + layer + ": its gradient for this GPU's rows" +
             (p.stage == 3 ? "" : ", into " + ZeroUnitWords(zero, unit));
    case Phase::kOptimizer:
      if (p.stage == 0) return "Adam on all the parameters (every GPU does the same update)";
      return "Adam on this GPU's " + share + " shard of " + ZeroUnitWords(zero, unit) + ", then its fp16 copy";
    case Phase::kAllGather:
      return "copies this GPU's own shard of layer " + layer + " into the buffer the all-gather fills";
    case Phase::kReduceScatter:
      return "keeps this GPU's chunk of the summed gradient of " + ZeroUnitWords(zero, unit) +
             "; the full gradient buffer is freed";
    default:
      return std::string("loads the initial weights it keeps (fp16) and its fp32 master copy") +
             (p.stage == 0 ? "" : " of its shard");
  }
}

std::array<std::string, 3> ZeroOpLabels(const Op& op, const ZeroPlan& zero,
                                        const std::vector<ZeroCollectiveName>& names) {
  const std::string layer = std::to_string(op.tags.layer);
  if (op.kind == OpKind::kCompute) {
    const int unit = ZeroUnitOfLayer(zero, op.tags.layer);
    const std::string unit_tag = zero.params.stage == 3 ? "L" + layer : "b" + std::to_string(unit);
    switch (op.tags.phase) {
      case Phase::kForward: return {"forward L" + layer, "F" + layer, "F"};
      case Phase::kBackward: return {"backward L" + layer, "B" + layer, "B"};
      case Phase::kOptimizer:
        if (zero.params.stage == 0) return {"Adam (all)", "Adam", "A"};
        return {"Adam " + unit_tag, "Adam", "A"};
      case Phase::kAllGather: return {"own shard L" + layer, "own", "o"};
      case Phase::kReduceScatter: return {"keep chunk " + unit_tag, "keep", "k"};
      default: return {"load weights", "load", "L"};
    }
  }
  const std::string chunk = op.tags.chunk >= 0 ? ChunkLetter(op.tags.chunk) : "";
  const ZeroCollectiveName* n = FindZeroCollective(names, op.collective_seq);
  if (n == nullptr) return {OpKindName(op.kind), chunk.empty() ? OpKindName(op.kind) : chunk, chunk};
  std::string pass;
  if (n->two_passes) pass = op.tags.phase == Phase::kReduceScatter ? " RS" : " AG";
  const std::string with_chunk = chunk.empty() ? "" : kMiddleDot + chunk;
  const bool send = op.kind == OpKind::kSend;
  const std::string peer = op.peer >= 0 ? (send ? " ->" : " <-") + std::to_string(op.peer) : "";
  // The short tag keeps the kind and the unit: "AG L3", "RS b1", "AR b0".
  const std::string short_tag = n->tag.substr(0, n->tag.find(' ', 3));
  return {n->tag + pass + with_chunk + peer, short_tag + pass + with_chunk, chunk.empty() ? short_tag : chunk};
}

std::string ZeroBytesText(double bytes) {
  if (!std::isfinite(bytes)) return "?";
  if (bytes < 0) return "-" + ZeroBytesText(-bytes);
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  double value = bytes;
  // 999.6 kB would print as "1e+03 kB": step up before rounding gets there.
  while (unit + 1 < 6 && value >= 999.5) {
    value /= 1000.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%.0f B", value);
  } else {
    std::snprintf(text, sizeof text, value >= 100 ? "%.0f %s" : value >= 10 ? "%.1f %s" : "%.2f %s", value,
                  kUnits[unit]);
  }
  return text;
}

ZeroMemoryBar StackZeroMemory(int rank, const CategoryBytes& persistent, const CategoryBytes& transient) {
  ZeroMemoryBar bar;
  bar.rank = rank;
  auto add = [&](MemoryCategory c, Bytes bytes, bool is_transient) {
    if (bytes <= 0) return;
    bar.segments.push_back({c, is_transient, bytes, bar.total});
    bar.total += bytes;
  };
  for (const MemoryCategory c : kZeroStackOrder) add(c, persistent[static_cast<std::size_t>(c)], false);
  bar.persistent = bar.total;
  for (const MemoryCategory c : kZeroTransientOrder) add(c, transient[static_cast<std::size_t>(c)], true);
  bar.model_states = persistent[static_cast<std::size_t>(MemoryCategory::kParameters)] +
                     persistent[static_cast<std::size_t>(MemoryCategory::kGradients)] +
                     persistent[static_cast<std::size_t>(MemoryCategory::kOptimizerStates)];
  bar.left_out = std::max<Bytes>(0, transient[static_cast<std::size_t>(MemoryCategory::kOther)]);
  return bar;
}

ZeroMemoryBar ZeroPeakBar(int rank, const RankMemory& measured) {
  CategoryBytes persistent{}, transient{};
  for (int c = 0; c < kMemoryCategoryCount; ++c) {
    const auto i = static_cast<std::size_t>(c);
    persistent[i] = measured.persistent[i];
    transient[i] = std::max<Bytes>(0, measured.peak[i] - measured.persistent[i]);
  }
  return StackZeroMemory(rank, persistent, transient);
}

ZeroMemoryBar ZeroLiveBar(int rank, const MemoryTimeline& timeline, TimeNs t_ns) {
  const CategoryBytes& persistent = timeline.persistent(rank);
  const CategoryBytes live = timeline.LiveAt(rank, t_ns);
  CategoryBytes transient{};
  for (std::size_t i = 0; i < transient.size(); ++i) transient[i] = live[i] - persistent[i];
  return StackZeroMemory(rank, persistent, transient);
}

double ZeroChartAxisBytes(double parameter_count, const std::vector<ZeroMemoryBar>& bars,
                          double formula_bytes) {
  Bytes tallest = 0, beside_model_states = 0;
  for (const ZeroMemoryBar& bar : bars) {
    tallest = std::max(tallest, bar.total);
    beside_model_states = std::max(beside_model_states, bar.persistent - bar.model_states);
  }
  // Stage 0 keeps every model state on every GPU; ranks do not matter to it.
  const double stage0 = ZeroMemoryPerGpu(parameter_count, 1, 0, 12).total() + static_cast<double>(beside_model_states);
  return std::max({stage0, static_cast<double>(tallest), formula_bytes, 1.0});
}

std::vector<double> ZeroChartTicks(double axis_bytes, int max_ticks) {
  std::vector<double> ticks;
  if (!(axis_bytes > 0) || max_ticks < 1) return ticks;
  const double rough = axis_bytes / max_ticks;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  double step = power;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    if (step >= rough) break;
  }
  for (int k = 0; k * step <= axis_bytes * (1 + 1e-9); ++k) ticks.push_back(k * step);
  return ticks;
}

float ZeroChartLayout::YOf(double bytes) const {
  if (!(axis_bytes > 0)) return plot.max.y;
  return plot.max.y - static_cast<float>(bytes / axis_bytes) * plot.height();
}

ZeroChartLayout LayoutZeroMemoryChart(const std::vector<ZeroMemoryBar>& bars, double axis_bytes, Rect plot) {
  ZeroChartLayout layout;
  layout.plot = plot;
  layout.axis_bytes = axis_bytes;
  const int n = static_cast<int>(bars.size());
  if (n == 0 || plot.width() <= 0 || plot.height() <= 0) return layout;
  // A slot holds a bar of at least kZeroMinBarPx and as much air again.
  const int fit = std::max(2, static_cast<int>(plot.width() / (2.0f * kZeroMinBarPx)));
  if (n <= fit) {
    for (int i = 0; i < n; ++i) layout.shown.push_back(i);
  } else {
    for (int i = 0; i + 1 < fit; ++i) layout.shown.push_back(i);
    layout.shown.push_back(n - 1);
    layout.hidden = n - fit;
  }
  const float slot = plot.width() / static_cast<float>(layout.shown.size());
  const float bar_w = std::clamp(slot * 0.6f, std::min(kZeroMinBarPx, slot), kZeroMaxBarPx);
  for (std::size_t k = 0; k < layout.shown.size(); ++k) {
    const ZeroMemoryBar& bar = bars[static_cast<std::size_t>(layout.shown[k])];
    const float cx = plot.min.x + slot * (static_cast<float>(k) + 0.5f);
    const float x0 = cx - bar_w * 0.5f, x1 = cx + bar_w * 0.5f;
    layout.bars.push_back({{x0, layout.YOf(static_cast<double>(bar.total))}, {x1, plot.max.y}});
    std::vector<Rect> pieces;
    for (const ZeroMemorySegment& s : bar.segments) {
      const float top = layout.YOf(static_cast<double>(s.base + s.bytes));
      const float bottom = layout.YOf(static_cast<double>(s.base));
      pieces.push_back({{x0, top}, {x1, bottom}});
    }
    layout.segments.push_back(std::move(pieces));
  }
  return layout;
}

}  // namespace shardlab::gui
