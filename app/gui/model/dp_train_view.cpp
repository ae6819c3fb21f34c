#include "app/gui/model/dp_train_view.h"

#include <cstdio>

namespace shardlab::gui {
namespace {

std::string Num(double v, const char* format = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double At(const DpTrainSummary& s, const char* name) {
  const auto it = s.measured.find(name);
  return it == s.measured.end() ? 0 : it->second;
}

}  // namespace

DpTrainView PrepareDpTrainView(const PreparedDpTrain& prepared, const DpTrainSummary& s, bool done) {
  const DpTrainConfig& c = prepared.scenario.config;
  DpTrainView v;
  v.title = std::to_string(c.ranks) + " ranks \xC2\xB7 MLP " + std::to_string(c.model.layers) + "x" +
            std::to_string(c.model.width) + " \xC2\xB7 K " + std::to_string(c.accumulate) +
            (c.mixed_precision ? " \xC2\xB7 fp16 + loss scale" : "") +
            (c.compression.kind != Compression::kNone ? std::string(" \xC2\xB7 ") + CompressionName(c.compression.kind) : "") +
            (c.local_steps > 1 ? " \xC2\xB7 local SGD H " + std::to_string(c.local_steps) : "") +
            (c.staleness > 0 ? " \xC2\xB7 stale-sync S " + std::to_string(c.staleness) : "") + " \xC2\xB7 " +
            prepared.topology.name;
  for (const double l : prepared.result.loss) v.loss.push_back(static_cast<float>(l));
  for (const double l : prepared.baseline.loss) v.baseline.push_back(static_cast<float>(l));
  for (std::size_t k = 0; k < prepared.result.skipped.size(); ++k)
    if (prepared.result.skipped[k]) v.skipped_steps.push_back(static_cast<int>(k));
  if (!done) return v;
  auto row = [&](std::string name, std::string value, std::string note, bool bad = false) {
    v.rows.push_back({std::move(name), std::move(value), std::move(note), bad});
  };
  row("loss", Num(At(s, "loss_final"), "%.5f"),
      "baseline " + Num(At(s, "baseline_loss_final"), "%.5f") + ", gap " + Num(100 * At(s, "loss_gap"), "%.2f") + "%");
  row("sent / step", Num(At(s, "bytes_per_step"), "%.0f") + " B",
      "baseline " + Num(At(s, "baseline_bytes_per_step"), "%.0f") + " B; simulator " +
          Num(At(s, "wire_bytes_per_step"), "%.0f") + " B");
  row("per sample", Num(At(s, "bytes_per_sample"), "%.1f") + " B", "batch " + std::to_string(c.model.batch));
  row("step time", Num(At(s, "time_ms") * 1e3, "%.2f") + " us",
      "baseline " + Num(At(s, "baseline_time_ms") * 1e3, "%.2f") + " us (simulated)");
  row("activations", Num(At(s, "peak_activation_bytes"), "%.0f") + " B",
      "formula (2L-|R|) b H e = " + Num(At(s, "formula_activation_bytes"), "%.0f") + " B",
      At(s, "peak_activation_bytes") != At(s, "formula_activation_bytes"));
  if (!c.recompute.empty())
    row("recompute", Num(At(s, "recompute_flops_per_step"), "%.0f") + " FLOP/step",
        "formula K |R| (2bH^2 + bH) = " + Num(At(s, "formula_recompute_flops_per_step"), "%.0f"));
  if (c.mixed_precision)
    row("skipped", Num(At(s, "skipped_steps"), "%.0f") + " steps",
        "loss scale now " + Num(At(s, "final_loss_scale"), "%.0f") + "; inf/NaN updates " +
            Num(At(s, "nonfinite_updates"), "%.0f"),
        At(s, "nonfinite_updates") != 0);
  if (c.compression.kind == Compression::kFp16 || c.compression.kind == Compression::kInt8)
    row("error", Num(At(s, "compression_error_ratio"), "%.3f") + " of bound",
        "largest |compressed sum - sum| / its quantisation bound", At(s, "compression_error_ratio") > 1);
  if (c.local_steps > 1)
    row("averages", Num(At(s, "communicating_steps"), "%.0f") + " of " + std::to_string(c.steps), "one every H steps");
  if (c.staleness > 0)
    row("staleness", Num(At(s, "max_staleness"), "%.0f") + " steps", "bound S = " + std::to_string(c.staleness),
        At(s, "max_staleness") > c.staleness);
  row("check", s.verdict.Text(), "", s.verdict.checked() && !s.verdict.correct());
  return v;
}

}  // namespace shardlab::gui
