// The one place that names an op for a reader: the Gantt's bars, the
// topology view, Chrome traces and `--plan` dumps all say the same thing.
//
// A label is read from the op itself (kind, peer, reduction, library call),
// its tags (phase, micro-batch, layer, chunk) and, for an op of a named
// collective call, the note its generator left in Plan::collectives
// ("AG L3 fwd": all-gather of layer 3's parameters before its forward).
// Nothing else: no buffer names, so a plan read back from a trace (which
// keeps the ops' tags and the calls' notes, not the buffers) labels its
// ops exactly as the plan it was written from.
//
//   op                                      bar            text
//   ZeRO-3 send, gather of layer 3, chunk B AG L3 fwd·B ->2 all-gather of layer 3's parameters before
//                                                          its forward, chunk B, to GPU 2
//   ring all-reduce recv, RS pass, chunk C  AR RS·C <-1    all-reduce (ring), reduce-scatter pass,
//                                                          chunk C, from GPU 1, summed in
//   pipeline forward, micro-batch 2         F mb2 L4       forward of micro-batch 2, layer 4, model chunk 1
//   pipeline send of that activation        F mb2 ->1      forward activations of micro-batch 2, to GPU 1
//   ZeRO compute, layer 3                   F L3           forward of layer 3
//
// Narrower bars take `compact`, the bar without its peer and the long
// part of the call's tag ("AG L3·B", "AR RS·C", "F2": pass and micro-batch,
// or pass and layer where there are no micro-batches, as the seed texts
// write F3/B3), then `tiny`: the chunk letter, else compact's first word.
#pragma once

#include <string>

#include "engine/plan/plan.h"

namespace shardlab {

struct OpLabel {
  std::string bar;      // short, for a Gantt bar and a trace slice: "AG L3 fwd·B ->2", "F mb2"
  std::string compact;  // narrower: "AG L3·B", "F2"
  std::string tiny;     // shortest: "B", "F"
  std::string text;     // long, for tooltips, traces and dumps
};

/// The labels of op `id` of `plan` (empty strings for an id out of range).
OpLabel LabelOp(const Plan& plan, OpId id);
/// The labels of `op`, an op of `plan` (or one shaped like it).
OpLabel LabelOp(const Plan& plan, const Op& op);

/// The note of the collective call `op` belongs to, or null.
const CollectiveNote* NoteOf(const Plan& plan, const Op& op);

/// A letter per buffer chunk: "A" .. "Z", then "c26", "c27", ...
std::string ChunkName(int chunk);

}  // namespace shardlab
