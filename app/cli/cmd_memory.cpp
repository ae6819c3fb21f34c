// `shardlab-cli memory`: how many bytes of model state each GPU holds under
// plain data parallelism and ZeRO stages 1-3, from the formulas alone (as
// DeepSpeed's memory estimators print them). Nothing is simulated, so any
// size goes: 175B parameters over 1,024 GPUs answers at once.
//
//   stage               formula          parameters   gradients   optimizer states      total
//   0  data parallel    (2+2+12)Ψ          350.0 GB    350.0 GB           2.100 TB   2.800 TB
//   3  ZeRO-3           (4+12)Ψ/N          5.469 GB    5.469 GB           32.81 GB   43.75 GB   <- --zero-stage 3
#include <climits>
#include <iostream>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/scenario_flags.h"
#include "engine/scenarios/memory_scenario.h"
#include "app/cli/zero_args.h"
#include "engine/core/json.h"
#include "engine/model/zero_memory.h"

namespace shardlab::cli {
namespace {

/// The ZeRO paper's Figure 1 example: what `memory` shows without flags.

constexpr int kStages = 4;

/// --zero-stage, checked here: there is no run for the engine to check it.
int ParseStage(const ParsedArgs& args) {
  const std::string spelling = args.Spelling("zero-stage");
  const auto stage = ParseIntValue(spelling, args.Get("zero-stage"), INT_MIN, INT_MAX);
  if (stage < 0 || stage >= kStages) {
    throw UsageError(spelling + ": " + std::to_string(stage) +
                     " is not a ZeRO stage (choose 0, 1, 2 or 3)");
  }
  return static_cast<int>(stage);
}

std::string KTitle(int k) {
  return k == kZeroPaperK
             ? "K = 12 (the ZeRO paper, DeepSpeed's estimators: fp32 master copy, Adam m and v)"
             : "K = 8 (the seed texts: Adam m and v only)";
}

void PrintBlock(std::ostream& out, double psi, int ranks, int k, int asked_stage) {
  constexpr std::size_t kStageWidth = 20, kFormulaWidth = 16, kBytesWidth = 12;
  out << "#\n# " << KTitle(k) << "\n"
      << "#   " << PadColumns("stage", kStageWidth, true) << PadColumns("formula", kFormulaWidth, true)
      << PadColumns("parameters", kBytesWidth) << PadColumns("gradients", kBytesWidth)
      << PadColumns("optimizer states", kBytesWidth + 6) << PadColumns("total", kBytesWidth) << "\n";
  for (int stage = 0; stage < kStages; ++stage) {
    const ZeroMemoryFormula f = ZeroMemoryPerGpu(psi, ranks, stage, k);
    out << "#   "
        << PadColumns(std::to_string(stage) + "  " + ZeroStageName(stage), kStageWidth, true)
        << PadColumns(ZeroMemoryFormulaText(stage, k), kFormulaWidth, true)
        << PadColumns(ModelBytesText(f.parameters), kBytesWidth)
        << PadColumns(ModelBytesText(f.gradients), kBytesWidth)
        << PadColumns(ModelBytesText(f.optimizer_states), kBytesWidth + 6)
        << PadColumns(ModelBytesText(f.total()), kBytesWidth)
        << (stage == asked_stage ? "   <- --zero-stage " + std::to_string(stage) : "") << "\n";
  }
}

void WriteJson(std::ostream& out, double psi, int ranks, const std::vector<int>& ks,
               int asked_stage) {
  JsonWriter w(out, /*pretty=*/true);
  w.BeginObject();
  w.Field("scenario", "memory");
  w.Field("parameters", static_cast<std::int64_t>(psi));  // whole: ParseParameterCount rounds
  w.Field("ranks", ranks);
  w.Key("stage");
  if (asked_stage >= 0) {
    w.Int(asked_stage);
  } else {
    w.Null();
  }
  w.Key("k");
  w.BeginArray();
  for (const int k : ks) w.Int(k);
  w.EndArray();
  w.Key("rows");
  w.BeginArray();
  for (const int k : ks) {
    for (int stage = 0; stage < kStages; ++stage) {
      const ZeroMemoryFormula f = ZeroMemoryPerGpu(psi, ranks, stage, k);
      w.BeginObject();
      w.Field("stage", stage);
      w.Field("name", ZeroStageName(stage));
      w.Field("k", k);
      w.Field("formula", ZeroMemoryFormulaText(stage, k));
      WriteZeroFormulaBytes(w, f);
      w.Field("asked", stage == asked_stage);
      w.EndObject();
    }
  }
  w.EndArray();
  w.Field("note", "model states only: activations and temporary buffers come on top");
  w.EndObject();
  out << "\n";
}

}  // namespace

CommandSpec MemorySpec() {
  CommandSpec s;
  s.name = "memory";
  s.summary = "model-state bytes per GPU of data parallel and ZeRO 1-3 (formulas, no run)";
  s.usage = "memory [flags]";
  s.description =
      "Prints the bytes of model state each GPU holds when a model of Ψ parameters is\n"
      "trained with mixed-precision Adam on N GPUs, for every stage (as DeepSpeed's memory\n"
      "estimators do): fp16 parameters (2 B each) and gradients (2 B each), and K bytes of\n"
      "optimizer state per parameter.\n"
      "  stage 0, data parallel   (2+2+K)Ψ        everything on every GPU\n"
      "  stage 1, ZeRO-1          4Ψ + KΨ/N       optimizer states sharded\n"
      "  stage 2, ZeRO-2          2Ψ + (2+K)Ψ/N   and gradients\n"
      "  stage 3, ZeRO-3          (4+K)Ψ/N        and parameters\n"
      "K = 12 in the ZeRO paper (fp32 master copy, Adam m and v); the seed texts count\n"
      "K = 8 (m and v only: 12Ψ for plain data parallelism). Both are shown unless --k picks\n"
      "one. Activations and temporary buffers come on top. Bytes are in powers of ten\n"
      "(GB = 1e9 B), as the paper writes them. 'shardlab-cli run zero' measures the same\n"
      "categories in a simulated run.";
  // params and ranks from the "memory" scenario's spec; the table shows
  // every stage and both K, so --zero-stage and --k pick, not set.
  AddScenarioFlags(s.flags, ScenarioSpecOf("memory"), {"zero_stage", "k"});
  for (FlagSpec& f : s.flags)
    if (f.name == "ranks") f.old_names.push_back("n");  // -n is --iters elsewhere
  s.flags.insert(s.flags.end(), {
      {"zero-stage", 0, "N", "mark this stage (0-3) in the table", {"stage"}},
      {"k", 0, "8|12", "show only K = 8 or K = 12 (default: both)"},
      {"json", 0, "", "print one JSON object instead of the table"},
  });
  s.examples =
      "  shardlab-cli memory\n"
      "  shardlab-cli memory --params 175B --ranks 64 --zero-stage 3\n"
      "  shardlab-cli memory --params 7.5B --ranks 64 --k 8\n"
      "  shardlab-cli memory --params 1.3B --ranks 8 --json\n";
  return s;
}

int MemoryMain(const ParsedArgs& args) {
  const MemoryScenario m = MemoryFromParams(ParamsFromArgs(ScenarioSpecOf("memory"), args));
  const double psi = m.parameters;
  const int ranks = m.ranks;
  const int asked_stage = args.Has("zero-stage") ? ParseStage(args) : -1;
  std::vector<int> ks = {kZeroPaperK, kSeedTextK};
  if (args.Has("k")) ks = {ZeroKFlag(args)};

  std::ostream& out = std::cout;
  if (args.Has("json")) {
    WriteJson(out, psi, ranks, ks, asked_stage);
    return 0;
  }
  out << "# ShardLab: model-state memory per GPU, Ψ = " << ParameterCountText(psi)
      << " parameters on N = " << ranks << (ranks == 1 ? " GPU" : " GPUs")
      << " (formulas, nothing run)\n"
      << "#   mixed-precision Adam: fp16 parameters (2 B) and gradients (2 B), K B of optimizer\n"
      << "#   state per parameter; 1 GB = 1e9 B\n";
  for (const int k : ks) PrintBlock(out, psi, ranks, k, asked_stage);
  out << "#\n# Model states only: activations, temporary buffers (gathered layers, gradient\n"
      << "# buckets, communication buffers) and fragmentation come on top.\n";
  return 0;
}

}  // namespace shardlab::cli
