// `shardlab-cli run zero`'s table: what every rank allocated, by category,
// beside the ZeRO paper's formulas (communication per step and the check
// under it are the Summary's rows); and the flags the spec cannot check.
#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
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
  throw UsageError(args.Spelling("params") + ": the nearest MLP (" + ZeroModelText(m) +
                   ") is more than 10% from " + ParameterCountText(asked) + "; " + hint);
}

/// Per-category formula text of one GPU's share: "2Ψ", "2Ψ/N", "12Ψ/N".
std::string CategoryFormulaText(int bytes_per_parameter, bool sharded) {
  return std::to_string(bytes_per_parameter) + "Ψ" + (sharded ? "/N" : "");
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

/// The memory table's --json: a row per rank (the rest is the Summary's).
void JsonResult(JsonWriter& w, const RunView& v) {
  const ZeroSummary& s = v.summary.Detail<ZeroSummary>();
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
  c.tables = [](std::ostream& out, const RunView& v) {
    PrintMemory(out, v.prepared.Detail<PreparedZero>(), v.summary.Detail<ZeroSummary>(),
                static_cast<int>(v.params.Int("k")));
  };
  c.json_result = JsonResult;
}

}  // namespace shardlab::cli
