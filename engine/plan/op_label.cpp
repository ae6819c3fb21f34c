// Op labels: see op_label.h.
#include "engine/plan/op_label.h"

namespace shardlab {
namespace {

constexpr const char* kMiddleDot = "\xC2\xB7";

bool IsPass(Phase phase) {
  return phase == Phase::kForward || phase == Phase::kBackward || phase == Phase::kWeightGrad;
}

/// A phase that moves a buffer's chunks around (its ops' chunk is a chunk of data).
bool IsCollectivePhase(Phase phase) {
  switch (phase) {
    case Phase::kReduceScatter:
    case Phase::kAllGather:
    case Phase::kBroadcast:
    case Phase::kReduce:
    case Phase::kAllToAll: return true;
    default: return false;
  }
}

const char* PassLetter(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "F";
    case Phase::kBackward: return "B";
    case Phase::kWeightGrad: return "W";
    default: return "";
  }
}

const char* PassWords(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kWeightGrad: return "weight gradient";
    default: return "";
  }
}

/// "RS", "AG", "BC", "R", "A2A": a collective phase on a bar.
const char* PhaseAbbrev(Phase phase) {
  switch (phase) {
    case Phase::kReduceScatter: return "RS";
    case Phase::kAllGather: return "AG";
    case Phase::kBroadcast: return "BC";
    case Phase::kReduce: return "R";
    case Phase::kAllToAll: return "A2A";
    default: return "";
  }
}

const char* LibraryAbbrev(LibraryCollective call) {
  switch (call) {
    case LibraryCollective::kAllReduce: return "AR";
    case LibraryCollective::kReduceScatter: return "RS";
    case LibraryCollective::kAllGather: return "AG";
    case LibraryCollective::kBroadcast: return "BC";
    case LibraryCollective::kReduce: return "R";
    case LibraryCollective::kAllToAll: return "A2A";
    case LibraryCollective::kNone: break;
  }
  return "call";
}

const char* LibraryWords(LibraryCollective call) {
  switch (call) {
    case LibraryCollective::kAllReduce: return "all-reduce";
    case LibraryCollective::kReduceScatter: return "reduce-scatter";
    case LibraryCollective::kAllGather: return "all-gather";
    case LibraryCollective::kBroadcast: return "broadcast";
    case LibraryCollective::kReduce: return "reduce";
    case LibraryCollective::kAllToAll: return "all-to-all";
    case LibraryCollective::kNone: break;
  }
  return "collective";
}

std::string FirstWord(const std::string& text) { return text.substr(0, text.find(' ')); }

/// " of micro-batch 2, layer 4, model chunk 1": what a compute op works on.
std::string ComputeDetails(const OpTags& tags) {
  std::string details;
  auto add = [&](const std::string& part) { details += (details.empty() ? " of " : ", ") + part; };
  if (tags.microbatch >= 0) add("micro-batch " + std::to_string(tags.microbatch));
  if (tags.layer >= 0) add("layer " + std::to_string(tags.layer));
  // With micro-batches (pipeline, 3D) a compute op's chunk is the model
  // chunk (stage) it runs.
  if (tags.microbatch >= 0 && tags.chunk >= 0) add("model chunk " + std::to_string(tags.chunk));
  return details;
}

std::string LayerSuffix(const OpTags& tags) { return tags.layer >= 0 ? " L" + std::to_string(tags.layer) : ""; }

OpLabel LabelCompute(const Op& op) {
  const OpTags& t = op.tags;
  const std::string layer = std::to_string(t.layer);
  OpLabel label;
  if (IsPass(t.phase)) {
    label.bar = PassLetter(t.phase);
    if (t.microbatch >= 0) label.bar += " mb" + std::to_string(t.microbatch);
    label.bar += LayerSuffix(t);
    label.compact = PassLetter(t.phase);
    if (t.microbatch >= 0 || t.layer >= 0) label.compact += std::to_string(t.microbatch >= 0 ? t.microbatch : t.layer);
    label.tiny = PassLetter(t.phase);
    label.text = PassWords(t.phase) + ComputeDetails(t);
    return label;
  }
  switch (t.phase) {
    case Phase::kOptimizer:
      label.bar = "opt" + LayerSuffix(t);
      label.text = "optimizer update";
      if (t.layer >= 0) label.text += " of the parameters from layer " + layer;
      if (t.chunk >= 0) label.text += ", model chunk " + std::to_string(t.chunk);  // a pipeline's stage
      break;
    case Phase::kRouter:
      label.bar = "router";
      label.text = "router: scores this GPU's tokens and picks each one's top-k experts";
      break;
    case Phase::kDispatch:
      label.bar = "pack";
      label.text = "packs the tokens by the GPU of their experts, for the dispatch";
      break;
    case Phase::kExpert:
      label.bar = t.chunk >= 0 ? "E" + std::to_string(t.chunk) : "expert";
      label.text = t.chunk >= 0 ? "expert " + std::to_string(t.chunk) + "'s MLP on the tokens routed to it"
                                : "an expert's MLP on the tokens routed to it";
      break;
    case Phase::kCombine:
      label.bar = "sum";
      label.text = "combine: the gated sum of the experts' outputs for this GPU's tokens";
      break;
    case Phase::kAllGather:
      label.bar = "own" + LayerSuffix(t);
      label.text = "copies this GPU's own shard into the buffer the all-gather fills";
      if (t.layer >= 0) label.text += ", layer " + layer;
      break;
    case Phase::kReduceScatter:
      label.bar = "keep" + LayerSuffix(t);
      label.text = "keeps this GPU's chunk of the reduce-scattered gradients";
      if (t.layer >= 0) label.text += ", from layer " + layer;
      break;
    case Phase::kNone:
      label.bar = "setup" + LayerSuffix(t);
      label.text = "setup compute outside the training passes";
      if (t.layer >= 0) label.text += ", layer " + layer;
      break;
    default:
      label.bar = std::string(PhaseName(t.phase)) + LayerSuffix(t);
      label.text = std::string(PhaseName(t.phase)) + " compute";
      if (t.layer >= 0) label.text += ", layer " + layer;
      break;
  }
  label.compact = FirstWord(label.bar);
  label.tiny = label.compact;
  return label;
}

/// Send, Recv, Copy, Reduce and library calls.
OpLabel LabelMove(const Plan& plan, const Op& op) {
  const OpTags& t = op.tags;
  const CollectiveNote* note = NoteOf(plan, op);
  OpLabel label;
  std::string head, base;
  std::string core;  // the head in the compact form
  bool said = false;  // base already names the micro-batch and layer
  if (op.kind == OpKind::kCollective) {
    head = note != nullptr ? note->tag : LibraryAbbrev(op.library);
    base = note != nullptr ? note->what : std::string("one library ") + LibraryWords(op.library) + " call";
  } else if (note != nullptr) {
    head = note->tag;
    base = note->what;
    if (note->two_passes && IsCollectivePhase(t.phase)) {
      head += std::string(" ") + PhaseAbbrev(t.phase);
      base += std::string(", ") + PhaseName(t.phase) + " pass";
    }
  } else if (IsPass(t.phase)) {
    // Between pipeline stages: "micro-batch 3's activation out of layer 4",
    // "micro-batch 3's gradient of layer 4's output".
    head = PassLetter(t.phase);
    const std::string whose = t.microbatch >= 0 ? "micro-batch " + std::to_string(t.microbatch) + "'s " : "";
    const std::string layer = std::to_string(t.layer);
    if (t.phase == Phase::kForward) {
      base = whose + "activation" + (t.layer >= 0 ? " out of layer " + layer : "");
    } else {
      base = whose + "gradient" + (t.layer >= 0 ? " of layer " + layer + "'s output" : "");
    }
    base += std::string(" (") + PassWords(t.phase) + ")";
    said = true;
  } else if (IsCollectivePhase(t.phase)) {
    head = PhaseAbbrev(t.phase);
    base = PhaseName(t.phase);
  } else if (t.phase == Phase::kDispatch) {
    head = "dispatch";
    base = "dispatch of tokens to their experts' GPUs";
  } else if (t.phase == Phase::kCombine) {
    head = "combine";
    base = "expert outputs back to their tokens' GPUs";
  } else {
    head = OpKindName(op.kind);
    base = t.phase != Phase::kNone ? std::string(PhaseName(t.phase)) + " " + OpKindName(op.kind)
                                   : std::string(OpKindName(op.kind));
  }
  // The compact head: a note's first two words ("AG L3", "AR b0", "TP g3";
  // "AR1 fwd" keeps "AR1") with the pass, a pipeline pass with its
  // micro-batch ("F2"), else the head.
  if (note != nullptr) {
    const std::size_t second = note->tag.find(' ', note->tag.find(' ') + 1);
    std::string tag = note->tag.substr(0, second);
    if (tag.size() > 4 && (tag.ends_with(" fwd") || tag.ends_with(" bwd"))) tag.resize(tag.size() - 4);
    core = head.size() > note->tag.size() ? tag + head.substr(note->tag.size()) : tag;
  } else if (IsPass(t.phase) && t.microbatch >= 0) {
    core = PassLetter(t.phase) + std::to_string(t.microbatch);
  } else {
    core = head;
  }
  // Micro-batch and layer when the call's note does not already say them;
  // a stage-to-stage transfer of a named call says its pass and micro-batch
  // ("PP g1 F2 ->3").
  if (note != nullptr && IsPass(t.phase) && t.microbatch >= 0) {
    const std::string pass = std::string(" ") + PassLetter(t.phase) + std::to_string(t.microbatch);
    head += pass;
    core += pass;
  }
  if (t.microbatch >= 0) {
    if (note == nullptr) head += " mb" + std::to_string(t.microbatch);
    if (!said) base += ", micro-batch " + std::to_string(t.microbatch);
  }
  if (t.layer >= 0 && note == nullptr && !said && op.kind != OpKind::kCollective) {
    base += ", layer " + std::to_string(t.layer);
  }
  std::string chunk;
  if (t.chunk >= 0 && IsCollectivePhase(t.phase) && op.kind != OpKind::kCollective) chunk = ChunkName(t.chunk);
  label.bar = head;
  label.compact = core;
  label.text = base;
  if (!chunk.empty()) {
    label.bar += kMiddleDot + chunk;
    label.compact += kMiddleDot + chunk;
    label.text += ", chunk " + chunk;
  }
  const std::string peer = std::to_string(op.peer);
  switch (op.kind) {
    case OpKind::kSend:
      if (op.peer >= 0) {
        label.bar += " ->" + peer;
        label.text += ", to GPU " + peer;
      }
      break;
    case OpKind::kRecv:
      if (op.peer >= 0) {
        label.bar += " <-" + peer;
        label.text += ", from GPU " + peer;
      }
      if (op.reduce != ReduceOp::kNone) label.text += std::string(", reduced in (") + ReduceOpName(op.reduce) + ")";
      break;
    case OpKind::kCopy:
      label.bar += " copy";
      label.text += ", this GPU's own part copied in place";
      break;
    case OpKind::kReduce:
      label.bar += " reduce";
      label.text += std::string(", reduced on this GPU (") + ReduceOpName(op.reduce) + ")";
      break;
    case OpKind::kCollective:
      if (op.peer >= 0) label.text += ", root GPU " + peer;
      break;
    case OpKind::kCompute: break;
  }
  label.tiny = chunk.empty() ? FirstWord(core) : chunk;
  return label;
}

}  // namespace

std::string ChunkName(int chunk) {
  // Spreadsheet columns, as the seed texts letter chunks: 25 -> "Z", 26 -> "AA".
  if (chunk < 0) return "";
  std::string letters;
  for (long long n = static_cast<long long>(chunk) + 1; n > 0; n = (n - 1) / 26)
    letters.insert(letters.begin(), static_cast<char>('A' + (n - 1) % 26));
  return letters;
}

const CollectiveNote* NoteOf(const Plan& plan, const Op& op) {
  if (op.collective_seq < 0 || static_cast<std::size_t>(op.collective_seq) >= plan.collectives.size()) return nullptr;
  const CollectiveNote& note = plan.collectives[static_cast<std::size_t>(op.collective_seq)];
  return note.tag.empty() ? nullptr : &note;
}

OpLabel LabelOp(const Plan& plan, const Op& op) {
  if (op.kind != OpKind::kCompute) return LabelMove(plan, op);
  // A compute op its generator named as part of a call ("F s3 lost":
  // the elastic job's forward of step 3, lost to a failure) reads the note.
  if (const CollectiveNote* note = NoteOf(plan, op)) {
    OpLabel label;
    label.bar = note->tag;
    label.compact = FirstWord(note->tag);
    label.tiny = label.compact;
    label.text = note->what;
    return label;
  }
  return LabelCompute(op);
}

OpLabel LabelOp(const Plan& plan, OpId id) {
  if (id < 0 || static_cast<std::size_t>(id) >= plan.ops.size()) return {};
  return LabelOp(plan, plan.ops[static_cast<std::size_t>(id)]);
}

}  // namespace shardlab
