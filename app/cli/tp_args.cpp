#include "app/cli/tp_args.h"

#include <climits>

namespace shardlab::cli {
namespace {

constexpr TpLayerKind kKinds[] = {TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear,
                                  TpLayerKind::kMlp, TpLayerKind::kAttention,
                                  TpLayerKind::kTransformer};

constexpr std::pair<const char*, const char*> kFieldFlags[] = {
    {"batch: ", "batch"},   {"seq: ", "seq"},         {"hidden: ", "hidden"},
    {"ffn: ", "ffn"},       {"heads: ", "heads"},     {"tp: ", "tp"},
    {"dtype: ", "dtype"},   {"topology: ", "topology"}, {"backend: ", "backend"},
    {"sequence-parallel: ", "sequence-parallel"},
};

int IntFlag(const ParsedArgs& args, const char* flag, int fallback) {
  if (!args.Has(flag)) return fallback;
  // Any int goes through: whether it fits the layer is the engine's call.
  return static_cast<int>(ParseIntValue(args.Spelling(flag), args.Get(flag), INT_MIN, INT_MAX));
}

DType ParseTpDType(const std::string& spelling, const std::string& text) {
  if (text == "fp32" || text == "f32" || text == "float" || text == "float32") return DType::kF32;
  if (text == "fp16" || text == "f16" || text == "half" || text == "float16") return DType::kF16;
  if (text == "bf16" || text == "bfloat16") return DType::kBF16;
  throw UsageError(spelling + ": unknown type '" + text + "' (use fp32, fp16 or bf16)");
}

}  // namespace

std::string TpLayerWords() {
  std::vector<std::string> words;
  for (const TpLayerKind k : kKinds) words.push_back(std::string("tp-") + TpLayerKindName(k));
  return JoinChoices(words);
}

TpLayerKind TpLayerFromWord(const std::string& command, const std::string& word) {
  for (const TpLayerKind k : kKinds) {
    if (word == std::string("tp-") + TpLayerKindName(k)) return k;
  }
  throw UsageError(command + ": unknown layer '" + word + "' (use " + TpLayerWords() + ")");
}

void AddTpLayerFlags(std::vector<FlagSpec>& flags, const TpDefaults& d) {
  const std::vector<FlagSpec> shared = {
      {"batch", 0, "N", "sequences B per step (default: " + std::to_string(d.batch) + ")"},
      {"seq", 0, "N", "tokens S per sequence; the layer sees T = B x S rows (default: " +
                          std::to_string(d.seq) + ")"},
      {"hidden", 0, "N", "hidden size H (default: " + std::to_string(d.hidden) + ")"},
      {"ffn", 0, "N", "split width F: the MLP's inner width, a linear's output (column) or "
                      "input (row) features; must divide by tp (default: 4H for mlp and "
                      "transformer, H for the linears)"},
      {"heads", 0, "N", "attention heads, a multiple of tp (default: H/128 when H is a "
                        "multiple of 128, else 4)"},
      {"sequence-parallel", 0, "", "Megatron's sequence parallelism: each all-reduce becomes a "
                                   "reduce-scatter and an all-gather (mlp, attention, "
                                   "transformer)"},
      {"dtype", 0, "TYPE", d.always_timing_only
                               ? "fp32, fp16 or bf16 (default: fp16, tensor-core rates)"
                               : "fp32, fp16 or bf16; fp16 and bf16 are timing-only (default: fp16 with "
                                 "--timing-only, else fp32)"},
      {"topology", 't', "NAME|FILE", "preset or topology file; rank r on GPU r (default: " +
                                         d.topology + ")"},
  };
  flags.insert(flags.end(), shared.begin(), shared.end());
  // Timing-only runs hold no data, so a seed would change nothing.
  if (!d.always_timing_only) {
    flags.push_back(
        {"seed", 0, "N", "seed of the weights, input and upstream gradient (default: 1)"});
  }
}

TpScenario TpScenarioFromArgs(const ParsedArgs& args, TpLayerKind kind, bool timing_only,
                              const TpDefaults& d) {
  TpScenario s;
  TpLayerConfig& c = s.layer;
  c.kind = kind;
  c.batch = IntFlag(args, "batch", d.batch);
  c.seq = IntFlag(args, "seq", d.seq);
  c.hidden = IntFlag(args, "hidden", d.hidden);
  c.ffn = IntFlag(args, "ffn", 0);
  c.sequence_parallel = args.Has("sequence-parallel");
  c.dtype = timing_only ? DType::kF16 : DType::kF32;
  if (args.Has("dtype")) c.dtype = ParseTpDType(args.Spelling("dtype"), args.Get("dtype"));

  // A flag the layer has no use for is a mistake, not a no-op.
  if (!c.has_attention() && args.Has("heads")) {
    throw UsageError(args.Spelling("heads") + ": the " + TpLayerKindName(kind) +
                     " layer has no attention heads (tp-attention and tp-transformer do)");
  }
  if (kind == TpLayerKind::kAttention && args.Has("ffn")) {
    throw UsageError(args.Spelling("ffn") + ": the attention layer has no ffn width (its "
                     "projections are H x H; tp-transformer adds the MLP)");
  }
  if (c.has_attention()) {
    // The engine's default (H/128 heads) needs H to be a multiple of 128;
    // the small shapes get 4 heads instead.
    c.heads = IntFlag(args, "heads", c.hidden % 128 == 0 ? 0 : 4);
  }

  s.topology = args.Get("topology", d.topology);
  if (s.topology.empty()) throw UsageError(args.Spelling("topology") + ": missing value");
  s.backend = args.Get("backend", "sim");
  if (args.Has("seed")) s.seed = ParseSeedValue(args.Spelling("seed"), args.Get("seed"));
  s.timing_only = timing_only;
  return s;
}

Error TpFlagError(const Error& error, const ParsedArgs& args) {
  return FieldErrorAsFlagError(error, args, kFieldFlags);
}

std::string TpDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "fp32";
    case DType::kF16: return "fp16";
    case DType::kBF16: return "bf16";
  }
  return "?";
}

std::string TpLayerTitle(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear: return "column-parallel linear";
    case TpLayerKind::kRowLinear: return "row-parallel linear";
    case TpLayerKind::kMlp: return "MLP (column then row linear)";
    case TpLayerKind::kAttention: return "self-attention (heads split, then a row linear)";
    case TpLayerKind::kTransformer: return "transformer layer (attention + MLP, pre-norm)";
  }
  return "?";
}

std::string TpShapeText(const TpLayerConfig& c) {
  std::string text = "T = batch " + std::to_string(c.batch) + " x seq " + std::to_string(c.seq) +
                     " = " + std::to_string(c.tokens()) + " tokens, hidden H " +
                     std::to_string(c.hidden);
  if (c.kind != TpLayerKind::kAttention) {
    const int f = c.split_width();
    const char* name = c.kind == TpLayerKind::kColumnLinear ? "output features F "
                       : c.kind == TpLayerKind::kRowLinear  ? "input features F "
                                                            : "ffn F ";
    text += ", " + std::string(name) + std::to_string(f);
    if (c.tp > 0 && f % c.tp == 0) text += " (" + std::to_string(f / c.tp) + " per rank)";
  }
  if (c.has_attention()) {
    const int heads = c.head_count();
    text += ", heads " + std::to_string(heads);
    if (heads > 0 && c.hidden % heads == 0) text += " of size " + std::to_string(c.hidden / heads);
    if (c.tp > 0 && heads % c.tp == 0) text += " (" + std::to_string(heads / c.tp) + " per rank)";
  }
  return text;
}


void WriteTpShapeFields(JsonWriter& w, const TpLayerConfig& c) {
  w.Field("layer", TpLayerKindName(c.kind));
  w.Field("batch", c.batch);
  w.Field("seq", c.seq);
  w.Field("tokens", c.tokens());
  w.Field("hidden", c.hidden);
  w.Key("ffn");
  if (c.kind == TpLayerKind::kAttention) w.Null();
  else w.Int(c.split_width());
  w.Key("heads");
  if (c.has_attention()) w.Int(c.head_count());
  else w.Null();
  w.Field("sequence_parallel", c.sequence_parallel);
  w.Field("dtype", TpDTypeName(c.dtype));
}

}  // namespace shardlab::cli
