// `shardlab-cli run zero`: data-parallel training of the small MLP with
// Adam, as plain data parallelism (stage 0) or ZeRO stage 1, 2 or 3, run on
// a backend. Prints what every rank allocated, by category, beside the
// ZeRO paper's formulas; the elements each rank sent per step beside
// 2(N-1)/N·Ψ (3(N-1)/N·Ψ for stage 3); and whether the trained parameters
// equal the single-device model's after the same Adam steps.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/scenario_run.h"
#include "app/cli/zero_args.h"
#include "engine/core/units.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::cli {
namespace {

/// --params builds the nearest MLP; further off than this it says so.
constexpr double kParamsTolerance = 0.10;

/// Above this many rank groups the memory table shows the least and the
/// most loaded rank instead of one column per group.
constexpr std::size_t kMaxRankColumns = 4;

/// The flag that set the model's size, for the engine's "params: ..." (a
/// real run too large for the host).
std::string SizeFlag(const ParsedArgs& args) {
  for (const char* flag : {"params", "width", "layers"})
    if (args.Has(flag)) return flag;
  return "batch";
}

std::string ModelText(const MlpConfig& m) {
  const double psi = static_cast<double>(MlpParameterCount(m));
  return std::to_string(m.layers) + (m.layers == 1 ? " layer" : " layers") + " x " +
         std::to_string(m.width) + " = " + ParameterCountText(psi) + " parameters";
}

/// The MLP --params asks for, or a UsageError when the nearest one the
/// engine builds is far from it.
MlpConfig ModelForParams(const ParsedArgs& args, double asked) {
  const MlpConfig m = MlpForParameterCount(asked);
  const double built = static_cast<double>(MlpParameterCount(m));
  if (std::fabs(built / asked - 1) <= kParamsTolerance) return m;
  std::string hint = built > asked
                         ? "give --layers and --width for a smaller model"
                         : "for the formulas alone, 'shardlab-cli memory --params " +
                               args.Get("params") + "'";
  throw UsageError(args.Spelling("params") + ": the nearest MLP (" + ModelText(m) +
                   ") is more than 10% from " + ParameterCountText(asked) + "; " + hint);
}

/// A float as the double its shortest text reads (0.001, not 0.00100000005).
double FloatAsTyped(float value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(value));
  return std::strtod(buf, nullptr);
}

/// "3(N-1)/N·Ψ": what a rank sends per step under the stage.
std::string ElementsFormulaText(int stage) {
  return stage == 3 ? "3(N-1)/N·Ψ" : "2(N-1)/N·Ψ";
}

/// Per-category formula text of one GPU's share: "2Ψ", "2Ψ/N", "12Ψ/N".
std::string CategoryFormulaText(int bytes_per_parameter, bool sharded) {
  return std::to_string(bytes_per_parameter) + "Ψ" + (sharded ? "/N" : "");
}

/// Which collectives a step runs, in words, for the stage.
std::string CollectivesText(const ZeroPlan& zero) {
  const std::size_t units = zero.units.size();
  const std::string u = std::to_string(units);
  switch (zero.params.stage) {
    case 0:
      return u + (units == 1 ? " bucket" : " buckets") +
             " x all-reduce of the gradient (a ring: reduce-scatter + all-gather)";
    case 1:
    case 2:
      return u + (units == 1 ? " bucket" : " buckets") +
             " x (reduce-scatter of the gradient, all-gather of the updated parameters)";
    case 3:
      return u + (units == 1 ? " layer" : " layers") +
             " x (all-gather before forward, all-gather before backward, reduce-scatter of "
             "the gradient)";
  }
  return "";
}

std::string UnitsText(const ZeroPlan& zero) {
  const ZeroParams& p = zero.params;
  const std::size_t units = zero.units.size();
  if (p.stage == 3) {
    return std::to_string(units) + " units (one per layer, gathered when needed)";
  }
  return std::to_string(units) + (units == 1 ? " bucket" : " buckets") + " of up to " +
         FormatBytes(p.bucket_bytes) + " of fp16 gradient (whole layers, from the last one)";
}

// ---- memory per rank ------------------------------------------------------

/// The rows of the memory table, in order.
enum MemoryRow {
  kRowParameters, kRowGradients, kRowOptimizer, kRowModelStates, kRowActivations,
  kRowBucketPeak, kRowGatheredPeak, kRowOtherPeak, kRowTotalPeak, kRowCount,
};

/// Each row's title in the report and key in --json.
constexpr std::pair<const char*, const char*> kMemoryRowNames[kRowCount] = {
    {"parameters (fp16)", "parameters_bytes"},
    {"gradients (fp16)", "gradients_bytes"},
    {"optimizer states (fp32)", "optimizer_states_bytes"},
    {"model states", "model_states_bytes"},
    {"activations (fp16)", "activations_bytes"},
    {"full gradients (peak)", "full_gradients_peak_bytes"},
    {"gathered parameters (peak)", "gathered_parameters_peak_bytes"},
    {"staging and losses (peak)", "other_peak_bytes"},
    {"total (peak)", "peak_total_bytes"},
};

Bytes At(const std::array<Bytes, kMemoryCategoryCount>& bytes, MemoryCategory c) {
  return bytes[static_cast<std::size_t>(c)];
}

std::array<Bytes, kRowCount> MemoryRows(const RankMemory& m) {
  std::array<Bytes, kRowCount> rows{};
  rows[kRowParameters] = At(m.persistent, MemoryCategory::kParameters);
  rows[kRowGradients] = At(m.persistent, MemoryCategory::kGradients);
  rows[kRowOptimizer] = At(m.persistent, MemoryCategory::kOptimizerStates);
  rows[kRowModelStates] = rows[kRowParameters] + rows[kRowGradients] + rows[kRowOptimizer];
  rows[kRowActivations] = At(m.persistent, MemoryCategory::kActivations);
  // Stages 2-3 reduce-scatter each bucket from a transient full gradient.
  rows[kRowBucketPeak] = At(m.peak, MemoryCategory::kGradients) - rows[kRowGradients];
  rows[kRowGatheredPeak] = At(m.peak, MemoryCategory::kGatheredParameters);
  rows[kRowOtherPeak] = At(m.peak, MemoryCategory::kOther);
  rows[kRowTotalPeak] = m.peak_total;
  return rows;
}

/// A column of the memory table: a run of ranks that print the same.
struct RankColumn {
  std::string title;
  std::array<std::string, kRowCount> cells;
};

std::string RanksTitle(int first, int last) {
  return first == last ? "rank " + std::to_string(first)
                       : "ranks " + std::to_string(first) + "-" + std::to_string(last);
}

std::vector<RankColumn> RankColumns(const std::vector<RankMemory>& memory) {
  std::vector<RankColumn> columns;
  std::vector<std::array<std::string, kRowCount>> cells;
  for (const RankMemory& m : memory) {
    const std::array<Bytes, kRowCount> rows = MemoryRows(m);
    std::array<std::string, kRowCount> text;
    for (int r = 0; r < kRowCount; ++r) text[r] = ModelBytesText(static_cast<double>(rows[r]));
    cells.push_back(text);
  }
  // Consecutive ranks whose every cell prints the same share a column
  // (shards differ by an element when N does not divide a unit).
  std::size_t begin = 0;
  for (std::size_t r = 1; r <= cells.size(); ++r) {
    if (r < cells.size() && cells[r] == cells[begin]) continue;
    columns.push_back({RanksTitle(static_cast<int>(begin), static_cast<int>(r - 1)), cells[begin]});
    begin = r;
  }
  if (columns.size() <= kMaxRankColumns) return columns;
  // Too many to show: the least and the most loaded rank at their peak.
  std::size_t least = 0, most = 0;
  for (std::size_t r = 1; r < memory.size(); ++r) {
    if (memory[r].peak_total < memory[least].peak_total) least = r;
    if (memory[r].peak_total > memory[most].peak_total) most = r;
  }
  // Equal peaks with different rows: show the first and the last rank.
  if (least == most) {
    least = 0;
    most = memory.size() - 1;
  }
  return {{RanksTitle(static_cast<int>(least), static_cast<int>(least)) + " (least)", cells[least]},
          {RanksTitle(static_cast<int>(most), static_cast<int>(most)) + " (most)", cells[most]}};
}

/// The formula column of a row ("" where the ZeRO paper has none).
std::string RowFormula(int row, int stage, int k, const ZeroMemoryFormula& f) {
  auto with = [](const std::string& text, double bytes) { return text + " = " + ModelBytesText(bytes); };
  switch (row) {
    case kRowParameters: return with(CategoryFormulaText(2, stage >= 3), f.parameters);
    case kRowGradients: return with(CategoryFormulaText(2, stage >= 2), f.gradients);
    case kRowOptimizer: return with(CategoryFormulaText(k, stage >= 1), f.optimizer_states);
    case kRowModelStates: return with(ZeroMemoryFormulaText(stage, k), f.total());
  }
  return "";
}

/// A note beside a row.
std::string RowNote(int row, int stage) {
  switch (row) {
    case kRowOptimizer: return "master copy, Adam m and v";
    case kRowActivations: return "kept for the backward pass";
    case kRowBucketPeak:
      return stage == 3 ? "a layer's, until its reduce-scatter" : "a bucket's, until its reduce-scatter";
    case kRowGatheredPeak: return "all-gathered layers alive at once";
    case kRowOtherPeak: return "fp32 initial weights while loading";
    case kRowTotalPeak: return "the most alive at once, loading included";
  }
  return "";
}

void PrintMemory(std::ostream& out, const PreparedZero& prepared, const ZeroSummary& s, int k) {
  const int stage = prepared.scenario.params.stage;
  const ZeroMemoryFormula& f = k == kSeedTextK ? s.formula_seed : s.formula;
  const std::vector<RankColumn> columns = RankColumns(s.memory);
  std::vector<std::size_t> widths;
  for (const RankColumn& c : columns) {
    std::size_t w = c.title.size();
    for (const std::string& cell : c.cells) w = std::max(w, cell.size());
    widths.push_back(w + 3);
  }
  std::vector<std::string> formulas(kRowCount);
  std::size_t formula_width = 0;
  for (int row = 0; row < kRowCount; ++row) {
    formulas[row] = RowFormula(row, stage, k, f);
    formula_width = std::max(formula_width, formulas[row].size());
  }
  constexpr std::size_t kTitleWidth = 28;
  out << "#\n# Memory per rank: what the backend allocated, by category\n"
      << "#   " << PadColumns("", kTitleWidth, true);
  for (std::size_t c = 0; c < columns.size(); ++c) out << PadColumns(columns[c].title, widths[c]);
  out << "   formula (K = " << k << ")\n";
  for (int row = 0; row < kRowCount; ++row) {
    // Rows that are zero on every rank (no buckets, nothing gathered) say nothing.
    const bool all_zero = std::all_of(s.memory.begin(), s.memory.end(), [&](const RankMemory& m) {
      return MemoryRows(m)[static_cast<std::size_t>(row)] == 0;
    });
    if (all_zero && row != kRowParameters && row != kRowGradients && row != kRowOptimizer) continue;
    out << "#   " << PadColumns(kMemoryRowNames[row].first, kTitleWidth, true);
    for (std::size_t c = 0; c < columns.size(); ++c)
      out << PadColumns(columns[c].cells[static_cast<std::size_t>(row)], widths[c]);
    const std::string note = RowNote(row, stage);
    std::string tail = formulas[row];
    if (!note.empty()) tail = PadColumns(tail, formula_width, true) + "  " + note;
    if (!tail.empty()) out << "   " << tail;
    out << "\n";
  }
  const ZeroMemoryFormula& other = k == kSeedTextK ? s.formula : s.formula_seed;
  const int other_k = k == kSeedTextK ? kZeroPaperK : kSeedTextK;
  out << "#   Model states per GPU: " << ZeroMemoryFormulaText(stage, k) << " = "
      << ModelBytesText(f.total()) << " with K = " << k << "; " << ZeroMemoryFormulaText(stage, other_k)
      << " = " << ModelBytesText(other.total()) << " with K = " << other_k << ".\n"
      << "#   K = bytes of optimizer state per parameter. The run always holds the fp32 master\n"
      << "#   copy and Adam's m and v (4 + 4 + 4 B), so its optimizer states match K = 12 (the\n"
      << "#   ZeRO paper); the seed texts count K = 8 (m and v only: 12Ψ for data parallel).\n";
}

// ---- the report -----------------------------------------------------------

std::vector<std::string> Header(const PreparedZero& prepared, double asked) {
  const ZeroScenario& sc = prepared.scenario;
  const ZeroParams& p = prepared.zero.params;
  const MlpConfig& m = p.model;
  std::ostringstream model;
  model << "model  MLP of " << ModelText(m) << " (Ψ = " << prepared.zero.parameter_count;
  if (asked > 0) model << ", asked " << ParameterCountText(asked);
  model << "), Adam, lr " << m.learning_rate;
  return {ZeroStageName(p.stage) + " (" + ZeroStageSharding(p.stage) + "), " + std::to_string(p.ranks) +
              (p.ranks == 1 ? " rank" : " ranks") + ", on " + sc.topology,
          model.str(),
          "batch  " + std::to_string(m.batch) + " rows (" + std::to_string(m.batch / p.ranks) + " per rank), " +
              std::to_string(p.steps) + (p.steps == 1 ? " step" : " steps"),
          "units  " + UnitsText(prepared.zero) + ", overlap " + (p.overlap ? "on" : "off")};
}

void PrintText(std::ostream& out, const PreparedZero& prepared, const ZeroSummary& s, int k) {
  const ZeroParams& p = prepared.zero.params;
  PrintMemory(out, prepared, s, k);
  const double ratio =
      s.formula_elements_per_step > 0 ? s.sent_elements_per_step / s.formula_elements_per_step : 0;
  out << "#\n# Communication per step\n"
      << "#   elements sent   " << ParameterCountText(s.sent_elements_per_step)
      << " by the busiest rank (fp16); formula " << ElementsFormulaText(p.stage) << " = "
      << ParameterCountText(s.formula_elements_per_step);
  if (p.ranks > 1) out << ", ratio " << FormatFixed(ratio, 3);
  out << "\n"
      << "#   collectives     " << s.collectives_per_step << ": " << CollectivesText(prepared.zero)
      << "\n"
      << "#   step time       " << FormatTime(s.step_ns) << "\n";
  if (p.stage == 3) {
    out << "#   Stage 3 gathers every layer twice (forward, backward): 1.5x data parallel's 2Ψ.\n";
  }
}

void WriteFormula(JsonWriter& w, const char* key, int stage, int k, const ZeroMemoryFormula& f) {
  w.Key(key);
  w.BeginObject();
  w.Field("k", k);
  w.Field("text", ZeroMemoryFormulaText(stage, k));
  WriteZeroFormulaBytes(w, f);
  w.EndObject();
}

/// --params, when given: the count asked for (the run builds the nearest MLP).
double Asked(const ParsedArgs& args, const ScenarioParams& params) {
  return args.Has("params") ? params.Number("params") : 0;
}

void JsonSetup(JsonWriter& w, const RunView& v) {
  const PreparedZero& prepared = v.prepared.Detail<PreparedZero>();
  const ZeroParams& p = prepared.zero.params;
  const double asked = Asked(v.args, v.params);
  w.Field("stage", p.stage);
  w.Field("stage_name", ZeroStageName(p.stage));
  w.Field("layers", p.model.layers);
  w.Field("width", p.model.width);
  w.Field("parameters", prepared.zero.parameter_count);
  if (asked > 0) {
    w.Field("asked_parameters", static_cast<std::int64_t>(asked));
  } else {
    w.Key("asked_parameters");
    w.Null();
  }
  w.Field("optimizer", "adam");
  w.Field("lr", FloatAsTyped(p.model.learning_rate));
  w.Field("bucket_bytes", p.bucket_bytes);
  w.Field("units", static_cast<std::int64_t>(prepared.zero.units.size()));
}

void JsonResult(JsonWriter& w, const RunView& v) {
  const PreparedZero& prepared = v.prepared.Detail<PreparedZero>();
  const ZeroSummary& s = v.summary.Detail<ZeroSummary>();
  const ZeroParams& p = prepared.zero.params;
  w.Field("k", static_cast<int>(v.params.Int("k")));
  w.Key("memory");
  w.BeginArray();
  for (std::size_t r = 0; r < s.memory.size(); ++r) {
    const std::array<Bytes, kRowCount> rows = MemoryRows(s.memory[r]);
    w.BeginObject();
    w.Field("rank", static_cast<std::int64_t>(r));
    for (int row = 0; row < kRowCount; ++row) w.Field(kMemoryRowNames[row].second, rows[row]);
    w.EndObject();
  }
  w.EndArray();
  WriteFormula(w, "formula", p.stage, kZeroPaperK, s.formula);
  WriteFormula(w, "formula_seed", p.stage, kSeedTextK, s.formula_seed);
  w.Key("sent_bytes");
  w.BeginArray();
  for (const Bytes b : s.sent_bytes) w.Int(b);
  w.EndArray();
  w.Field("sent_elements_per_step", s.sent_elements_per_step);
  w.Field("formula_elements_per_step", s.formula_elements_per_step);
  w.Field("formula_elements_text", ElementsFormulaText(p.stage));
  w.Field("collectives_per_step", s.collectives_per_step);
  w.Field("step_time_us", s.step_ns / 1e3);
  WriteCheckJson(w, s.check.checked, s.check.correct,
                 {{"parameter_error", s.check.parameter_error}, {"loss", s.check.loss},
                  {"reference_loss", s.check.reference_loss}},
                 s.check.not_checked_reason);

}

}  // namespace

void ZeroRenderers(RunCommand& c) {
  c.adjust = [](const ParsedArgs& args, const std::string&, ScenarioParams& params) {
    if (!args.Has("params")) return;
    if (args.Has("layers") || args.Has("width")) {
      const std::string other = args.Has("layers") ? "layers" : "width";
      throw UsageError(args.Spelling("params") + ": give either --params or --layers and "
                       "--width, not both (got " + args.Spelling(other) + " too)");
    }
    ModelForParams(args, params.Number("params"));
  };
  c.flag_error = [](const Error& e, const ParsedArgs& args) { return ZeroFlagError(e, args, SizeFlag(args)); };
  c.bind = BindBackendAndSeed<PreparedZero>;
  c.header = [](const PreparedView& v) { return Header(v.prepared.Detail<PreparedZero>(), Asked(v.args, v.params)); };
  c.tables = [](std::ostream& out, const RunView& v) {
    PrintText(out, v.prepared.Detail<PreparedZero>(), v.summary.Detail<ZeroSummary>(),
              static_cast<int>(v.params.Int("k")));
  };
  c.result = [](const RunView& v) {
    const ZeroCheck& check = v.summary.Detail<ZeroSummary>().check;
    if (!check.checked) return "not checked: " + check.not_checked_reason;
    const int steps = v.prepared.Detail<PreparedZero>().zero.params.steps;
    return StepCheckText(check.verdict, "fp32 parameters after " + std::to_string(steps) + " Adam step" +
                         (steps == 1 ? "" : "s") + " and the loss against their error bounds from the "
                         "double-precision single-device model", check.loss, check.reference_loss, "");
  };
  c.json_setup = JsonSetup;
  c.json_result = JsonResult;
}

}  // namespace shardlab::cli
