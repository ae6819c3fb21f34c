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

/// The engine's "stage: ...", "batch: ..." errors as "--stage: ...",
/// "--batch: ...". `size_flag` is the flag that set the model's size
/// ("params", "layers" or "width"): the engine calls it "params: ".
Error ZeroFlagError(const Error& error, const ParsedArgs& args, const std::string& size_flag);

/// A formula's bytes per GPU as --json fields: parameters_bytes,
/// gradients_bytes, optimizer_states_bytes, total_bytes.
void WriteZeroFormulaBytes(JsonWriter& w, const ZeroMemoryFormula& f);

/// Columns a terminal shows for UTF-8 `text` (Ψ is two bytes, one column).
std::size_t TextColumns(const std::string& text);

/// Text padded to `width` columns, counting UTF-8 characters (Ψ is two
/// bytes, one column); right-aligned unless `left`.
std::string PadColumns(const std::string& text, std::size_t width, bool left = false);

}  // namespace shardlab::cli
