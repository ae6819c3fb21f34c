// Writes a Lab as lab-file TOML that ReadLabText reads back to the same Lab
// (every field, strings byte for byte; line numbers aside). Used by tools
// that edit labs, and by the round-trip test that keeps loader and writer
// in step.
#pragma once

#include <string>

#include "engine/lab/lab.h"

namespace shardlab {

/// The lab as TOML text, fields in the order labs/README.md lists them.
/// Fields at their defaults are left out. A step whose text came from a
/// text_file is written with the reference (the text file is not written).
std::string WriteLab(const Lab& lab);

}  // namespace shardlab
