#include "app/gui/model/dp_train_view.h"

#include <cstdio>

#include "app/gui/i18n/language.h"
#include "engine/scenarios/dp_train_scenario.h"

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
  v.title = Format(Tr("%d ranks"), c.ranks) + " \xC2\xB7 MLP " + std::to_string(c.model.layers) + "x" +
            std::to_string(c.model.width) + " \xC2\xB7 K " + std::to_string(c.accumulate) +
            (c.loss_scaled() ? std::string(" \xC2\xB7 ") + Tr("fp16 + loss scale")
             : c.mixed()     ? std::string(" \xC2\xB7 bf16")
                             : "") +
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
  // The words in the app's language (the names and notes only; numbers and units stay).
  row(Tr("loss"), Num(At(s, "loss_final"), "%.5f"),
      Format(Tr("baseline %s, gap %s%%"), Num(At(s, "baseline_loss_final"), "%.5f").c_str(),
             Num(100 * At(s, "loss_gap"), "%.2f").c_str()));
  row(Tr("sent / step"), Num(At(s, "bytes_per_step"), "%.0f") + " B",
      Format(Tr("baseline %s B; simulator %s B"), Num(At(s, "baseline_bytes_per_step"), "%.0f").c_str(),
             Num(At(s, "wire_bytes_per_step"), "%.0f").c_str()));
  row(Tr("per sample"), Num(At(s, "bytes_per_sample"), "%.1f") + " B", Format(Tr("batch %d"), c.model.batch));
  row(Tr("step time"), Num(At(s, "time_ms") * 1e3, "%.2f") + " us",
      Format(Tr("baseline %s us (simulated)"), Num(At(s, "baseline_time_ms") * 1e3, "%.2f").c_str()));
  row(Tr("activations"), Num(At(s, "peak_activation_bytes"), "%.0f") + " B",
      Format(Tr("formula (2L-|R|) b H e = %s B"), Num(At(s, "formula_activation_bytes"), "%.0f").c_str()),
      At(s, "peak_activation_bytes") != At(s, "formula_activation_bytes"));
  if (!c.recompute.empty())
    row(Tr("recompute"), Num(At(s, "recompute_flops_per_step"), "%.0f") + " FLOP/step",
        Format(Tr("formula K |R| (2bH^2 + bH) = %s"), Num(At(s, "formula_recompute_flops_per_step"), "%.0f").c_str()));
  if (c.loss_scaled())
    row(Tr("skipped"), Format(Tr("%s steps"), Num(At(s, "skipped_steps"), "%.0f").c_str()),
        Format(Tr("loss scale now %s; inf/NaN updates %s"), Num(At(s, "final_loss_scale"), "%.0f").c_str(),
               Num(At(s, "nonfinite_updates"), "%.0f").c_str()),
        At(s, "nonfinite_updates") != 0);
  if (IsFloatCompression(c.compression.kind) || c.compression.kind == Compression::kInt8)
    row(Tr("error"), Format(Tr("%s of bound"), Num(At(s, "compression_error_ratio"), "%.3f").c_str()),
        Tr("largest |compressed sum - sum| / its quantisation bound"), At(s, "compression_error_ratio") > 1);
  if (c.local_steps > 1)
    row(Tr("averages"), Format(Tr("%s of %d"), Num(At(s, "communicating_steps"), "%.0f").c_str(), c.steps),
        Tr("one every H steps"));
  if (c.staleness > 0)
    row(Tr("staleness"), Format(Tr("%s steps"), Num(At(s, "max_staleness"), "%.0f").c_str()),
        Format(Tr("bound S = %d"), c.staleness),
        At(s, "max_staleness") > c.staleness);
  row(Tr("check"), s.verdict.Text(), "", s.verdict.checked() && !s.verdict.correct());
  return v;
}

}  // namespace shardlab::gui
