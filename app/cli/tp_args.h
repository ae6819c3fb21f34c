// The flags that `run tp-LAYER` and `sweep tp-LAYER` share, read into the
// engine's TpScenario:
//
//   run tp-mlp --tp 8 --batch 32 --seq 2048 --hidden 12288 --timing-only
//        │ layer from the word after "tp-"; --tp, --batch, ... into TpLayerConfig
//        ▼
//   TpScenario ──► CheckTpScenario / PrepareTp / RunTpScaling (the engine decides
//                  what is valid; its "hidden: ..." becomes "--hidden: ...")
//
// Shared by cmd_tp.cpp (one layer, run and checked) and cmd_tp_sweep.cpp
// (the scaling table).
#pragma once

#include <string>
#include <vector>

#include "app/common/args.h"
#include "engine/core/json.h"
#include "engine/scenarios/tp_scenario.h"

namespace shardlab::cli {

/// The layer named by a command word: "tp-mlp" -> kMlp. Throws UsageError
/// "COMMAND: unknown layer 'tp-x' (tp-column, tp-row, ...)".
TpLayerKind TpLayerFromWord(const std::string& command, const std::string& word);

/// "tp-column, tp-row, tp-mlp, tp-attention or tp-transformer".
std::string TpLayerWords();

/// The shape `sweep tp-LAYER` starts from when its flags are not given:
/// the tp spec's "gpt3-layer" preset.
struct TpDefaults {
  int batch = 0;  // filled from a spec preset (SweepDefaults), never a default of its own
  int seq = 0;
  int hidden = 0;
  std::string topology;
  bool always_timing_only = false;  // sweep: no --seed, fp16 by default
};

/// The shape, dtype and placement flags of both commands (not --tp, whose
/// value is one size for run and a list for sweep).
void AddTpLayerFlags(std::vector<FlagSpec>& flags, const TpDefaults& defaults);

/// The scenario the flags describe, tp left at the engine's default.
/// --dtype defaults to fp16 with timing-only and fp32 otherwise; --heads to
/// H/128 (GPT-3's head size) when H is a multiple of 128, else 4.
TpScenario TpScenarioFromArgs(const ParsedArgs& args, TpLayerKind kind, bool timing_only,
                              const TpDefaults& defaults);

/// The engine's "tp: ...", "heads: ..." errors as "--tp: ...", "--heads: ...".
Error TpFlagError(const Error& error, const ParsedArgs& args);

/// "fp32" or "fp16", as --dtype spells them.
std::string TpDTypeName(DType dtype);

/// The layer's shape as JSON fields: layer, batch, seq, tokens, hidden,
/// ffn (null for attention), heads (null without attention),
/// sequence_parallel, dtype.
void WriteTpShapeFields(JsonWriter& w, const TpLayerConfig& c);

/// "MLP (column then row linear)", "self-attention (heads split)", ...
std::string TpLayerTitle(TpLayerKind kind);

/// "T = batch 2 x seq 16 = 32 tokens, hidden H 64, ffn F 256 (128 per rank)"
/// and, with attention, ", heads 4 (2 per rank)".
std::string TpShapeText(const TpLayerConfig& config);

}  // namespace shardlab::cli
