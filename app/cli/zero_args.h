// What `run zero` and `memory` share: the flags that name a ZeRO stage, a
// parameter count and K, the engine's field errors as flag errors, and how
// both print model-state memory.
//
//   run zero --stage 3 --ranks 8 --params 1B --timing-only
//   memory   --stage 3 --ranks 64 --params 175B --k 8
//        │ --params through ParseParameterCount ("175B" -> 1.75e11)
//        ▼
//   ZeroScenario / ZeroMemoryPerGpu (the engine decides what is valid; its
//   "stage: ..." becomes "--stage: ...")
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "app/common/args.h"
#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/model/zero_memory.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::cli {

/// `memory --k`: 8 or 12, by the "zero" spec's rule (CheckZeroK), its
/// "k: ..." under the flag as the user spelled it.
int ZeroKFlag(const ParsedArgs& args);

/// "data parallel" for stage 0, else "ZeRO-1" .. "ZeRO-3".
std::string ZeroStageName(int stage);

/// What the stage shards: "nothing sharded: every rank holds all model
/// states", "optimizer states sharded", ... (stages outside 0..3: "").
std::string ZeroStageSharding(int stage);

/// The engine's "stage: ...", "batch: ..." errors as "--stage: ...",
/// "--batch: ...". `size_flag` is the flag that set the model's size
/// ("params", "layers" or "width"): the engine calls it "params: ".
Error ZeroFlagError(const Error& error, const ParsedArgs& args, const std::string& size_flag);

/// A parameter count as people write it: "1.007B", "175B", "350M", "16.64k";
/// four significant digits, trailing zeros dropped.
std::string ParameterCountText(double count);

/// Bytes in powers of ten with four significant digits, as the ZeRO paper
/// writes them: "120.0 GB", "31.41 GB", "1.875 GB", "512 B".
std::string ModelBytesText(double bytes);

/// A formula's bytes per GPU as --json fields: parameters_bytes,
/// gradients_bytes, optimizer_states_bytes, total_bytes.
void WriteZeroFormulaBytes(JsonWriter& w, const ZeroMemoryFormula& f);

/// Columns a terminal shows for UTF-8 `text` (Ψ is two bytes, one column).
std::size_t TextColumns(const std::string& text);

/// Text padded to `width` columns, counting UTF-8 characters (Ψ is two
/// bytes, one column); right-aligned unless `left`.
std::string PadColumns(const std::string& text, std::size_t width, bool left = false);

}  // namespace shardlab::cli
