// The scenario panel: every field of a collective run, checked as it is
// typed. Session::Check's sentence appears in red right under the fields
// and Run stays disabled until it is empty, so an invalid combination is
// explained in place instead of failing later.
#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/gui/model/zero_view.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "engine/algorithms/collective.h"
#include "engine/algorithms/pipeline_schedule.h"
#include "engine/algorithms/zero.h"
#include "engine/core/units.h"
#include "engine/model/tp_layer.h"
#include "engine/model/zero_memory.h"
#include "engine/run/backend.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/topology/presets.h"

namespace shardlab::gui {
namespace {

constexpr const char* kPipelineTitle = "pipeline training (MLP)";
constexpr const char* kTpTitle = "tensor-parallel layer";
constexpr const char* kZeroTitle = "ZeRO / data parallel";
constexpr const char* kThreeDTitle = "3D parallel (DP x PP x TP)";
constexpr const char* kMoeTitle = "mixture of experts (MoE layer)";

constexpr CollectiveKind kKinds[] = {
    CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
    CollectiveKind::kBroadcast, CollectiveKind::kReduce,        CollectiveKind::kAllToAll,
};

const char* AlgoWords(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::kRing: return "ring";
    case CollectiveAlgo::kTree: return "double binary tree";
    case CollectiveAlgo::kDirect: return "direct (every pair)";
    case CollectiveAlgo::kNccl: return "NCCL (one library call)";
  }
  return "?";
}

/// A label to the left of the next widget, which then fills the row.
void FieldLabel(const char* text) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(text);
  ImGui::SameLine(ImGui::GetFontSize() * 6.0f);
  ImGui::SetNextItemWidth(-FLT_MIN);
}

void DimWrapped(const Theme& theme, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

void ErrorWrapped(const Theme& theme, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.error));
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

/// GPUs of the topology named in `name`, remembered per name so a file is
/// read once, not every frame; 0 when it cannot be loaded.
int TopologyGpus(const std::string& name) {
  static std::string counted;
  static int gpus = 0;
  if (name != counted) {
    counted = name;
    try {
      gpus = LoadScenarioTopology(name).num_gpus();
    } catch (const std::exception&) {
      gpus = 0;  // Check explains why
    }
  }
  return gpus;
}

constexpr PipelineSchedule kSchedules[] = {
    PipelineSchedule::kGPipe, PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved1F1B,
    PipelineSchedule::kZeroBubbleH1,
};

const char* ScheduleTooltip(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGPipe:
      return "All forwards, then all backwards: each stage holds m activations.";
    case PipelineSchedule::k1F1B:
      return "PipeDream-Flush: a warm-up of forwards, then one forward, one backward;\n"
             "the same bubble as GPipe, but stage s holds at most p - s activations.";
    case PipelineSchedule::kInterleaved1F1B:
      return "Megatron's interleaving: each stage holds v model chunks, so the\n"
             "fill and drain are v times shorter: bubble (p-1)/(v*m).";
    case PipelineSchedule::kZeroBubbleH1:
      return "Zero bubble (ZB-H1): the backward split into input gradient (B) and\n"
             "weight gradient (W); W waits to fill the gaps: bubble (p-1)/(3m).";
  }
  return "";
}

/// The scenario: the six collectives, then pipeline training, one
/// tensor-parallel layer and ZeRO. Returns true when it is a collective
/// (whose algorithm combo follows).
bool ScenarioCombo(ScenarioSettings& s) {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  if (s.is_collective()) {
    try {
      kind = ParseCollectiveKind(s.scenario);
    } catch (const std::exception&) {
      s.scenario = CollectiveKindName(kind);
    }
  }
  FieldLabel("Scenario");
  const std::string preview = s.is_pipeline() ? std::string(kPipelineTitle)
                              : s.is_tp()     ? std::string(kTpTitle)
                              : s.is_zero()   ? std::string(kZeroTitle)
                              : s.is_three_d() ? std::string(kThreeDTitle)
                              : s.is_moe()    ? std::string(kMoeTitle)
                                              : CollectiveTitle(s.scenario, "");
  if (ImGui::BeginCombo("##kind", preview.c_str(), ImGuiComboFlags_HeightLarge)) {
    for (CollectiveKind k : kKinds) {
      const std::string name = CollectiveKindName(k);
      if (ImGui::Selectable(CollectiveTitle(name, "").c_str(), s.is_collective() && k == kind)) {
        s.scenario = name;
        kind = k;
      }
    }
    ImGui::Separator();
    if (ImGui::Selectable(kPipelineTitle, s.is_pipeline())) s.scenario = kPipelineScenario;
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("Train a small MLP for one step across pipeline stages (one per GPU)\n"
                        "with GPipe, 1F1B, interleaved 1F1B or zero-bubble schedules");
    }
    if (ImGui::Selectable(kTpTitle, s.is_tp())) s.scenario = kTensorParallelScenario;
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("Split one layer's weights over GPUs as Megatron-LM does (columns, then\n"
                        "rows) and watch the all-reduces a forward and backward pass need");
    }
    if (ImGui::Selectable(kZeroTitle, s.is_zero())) s.scenario = kZeroScenario;
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("Train a small MLP with Adam on every GPU (data parallel), then shard its\n"
                        "optimizer states, gradients and parameters (ZeRO stages 1-3) and watch\n"
                        "each GPU's memory fall and the all-gathers and reduce-scatters it costs");
    }
    if (ImGui::Selectable(kThreeDTitle, s.is_three_d())) s.scenario = kThreeDScenario;
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("Train the small MLP on a dp x pp x tp grid of GPUs (Megatron order):\n"
                        "TP all-reduces inside each stage, activations between stages,\n"
                        "gradients all-reduced over the data-parallel replicas");
    }
    if (ImGui::Selectable(kMoeTitle, s.is_moe())) s.scenario = kMoeScenario;
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("One mixture-of-experts layer with its experts spread over the GPUs:\n"
                        "router, all-to-all dispatch, the experts, all-to-all combine.\n"
                        "Skew 'hot' sends half the tokens to expert 0: its GPU is the straggler");
    }
    ImGui::EndCombo();
  }
  return s.is_collective();
}

void AlgoCombo(ScenarioSettings& s) {
  const CollectiveKind kind = ParseCollectiveKind(s.scenario);
  // A kind change may leave an algorithm it does not have: take its usual one.
  const std::vector<CollectiveAlgo> algos = CollectiveAlgosFor(kind);
  const bool valid = std::any_of(algos.begin(), algos.end(), [&](CollectiveAlgo a) {
    return s.algo == CollectiveAlgoName(a);
  });
  if (!valid) s.algo = CollectiveAlgoName(DefaultAlgo(kind));

  FieldLabel("Algorithm");
  CollectiveAlgo current = DefaultAlgo(kind);
  for (CollectiveAlgo a : algos) {
    if (s.algo == CollectiveAlgoName(a)) current = a;
  }
  if (ImGui::BeginCombo("##algo", AlgoWords(current))) {
    for (CollectiveAlgo a : algos) {
      if (ImGui::Selectable(AlgoWords(a), a == current)) s.algo = CollectiveAlgoName(a);
    }
    ImGui::EndCombo();
  }
}

void ScheduleCombo(ScenarioSettings& s) {
  PipelineSchedule current = PipelineSchedule::k1F1B;
  try {
    current = ParsePipelineSchedule(s.schedule);
  } catch (const std::exception&) {
    s.schedule = PipelineScheduleName(current);
  }
  FieldLabel("Schedule");
  if (ImGui::BeginCombo("##schedule", PipelineScheduleTitle(current))) {
    for (PipelineSchedule sch : kSchedules) {
      if (ImGui::Selectable(PipelineScheduleTitle(sch), sch == current)) {
        s.schedule = PipelineScheduleName(sch);
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ScheduleTooltip(sch));
    }
    ImGui::EndCombo();
  }
}

/// An integer field that stays within [lo, hi]: a slider when the range is
/// small enough to drag, else typed.
void IntField(const char* label, const char* id, int& value, int lo, int hi, const char* format) {
  FieldLabel(label);
  if (hi - lo <= 64) {
    ImGui::SliderInt(id, &value, lo, hi, format, ImGuiSliderFlags_AlwaysClamp);
  } else {
    ImGui::InputInt(id, &value, 1, 16);
    value = std::clamp(value, lo, hi);
  }
}

/// The pipeline's fields: schedule, stages (one per GPU), micro-batches,
/// chunks when interleaved, the model and the optimizer.
void PipelineFields(const Theme& theme, ScenarioSettings& s) {
  ScheduleCombo(s);
  const bool interleaved = s.schedule == PipelineScheduleName(PipelineSchedule::kInterleaved1F1B);
  const int gpus = TopologyGpus(s.topology);
  IntField("Stages", "##stages", s.stages, 1, gpus > 1 && gpus <= 64 ? gpus : 4096, "%d GPUs");
  IntField("Micro-b.", "##microbatches", s.microbatches, 1, 64, "m = %d");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("micro-batches per training step (m)");
  if (interleaved) {
    IntField("Chunks", "##chunks", s.chunks, 2, 8, "v = %d per stage");
  }
  IntField("Layers", "##layers", s.layers, 1, 64, "%d layers");
  FieldLabel("Width");
  if (ImGui::BeginCombo("##width", std::to_string(s.width).c_str())) {
    for (int w : {64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
      if (ImGui::Selectable(std::to_string(w).c_str(), w == s.width)) s.width = w;
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("features in and out of every layer");
  IntField("Batch", "##batch", s.batch, 1, 4096, "%d rows");
  FieldLabel("Optimizer");
  if (ImGui::BeginCombo("##optimizer", s.optimizer == "adam" ? "Adam" : "SGD")) {
    if (ImGui::Selectable("SGD", s.optimizer == "sgd")) s.optimizer = "sgd";
    if (ImGui::Selectable("Adam", s.optimizer == "adam")) s.optimizer = "adam";
    ImGui::EndCombo();
  }
  // The shape in words, with the textbook bubble, before anything runs.
  try {
    const PipelineSchedule schedule = ParsePipelineSchedule(s.schedule);
    const PipelineShape shape{s.stages, s.microbatches, interleaved ? s.chunks : 1};
    if (s.stages >= 1 && s.microbatches >= 1 && s.batch % s.microbatches == 0) {
      char text[160];
      std::snprintf(text, sizeof text, "%d rows per micro-batch; formula bubble %s = %.3f",
                    s.batch / s.microbatches, FormulaBubbleOverUsefulText(schedule),
                    FormulaBubbleOverUseful(schedule, shape));
      DimWrapped(theme, text);
    }
  } catch (const std::exception&) {
    // The Check message under the fields says what is wrong.
  }
}

/// The 3D grid, ZeRO-1 switch and the pipeline's model fields.
void ThreeDFields(const Theme& theme, ScenarioSettings& s) {
  IntField("DP", "##td_dp", s.dp, 1, 16, "dp = %d replicas");
  IntField("PP", "##td_pp", s.pp, 1, 16, "pp = %d stages");
  IntField("TP", "##td_tp", s.tp3, 1, 16, "tp = %d GPUs per layer");
  FieldLabel("ZeRO");
  if (ImGui::BeginCombo("##td_zero", s.td_zero ? "ZeRO-1 over each DP group" : "DP all-reduce")) {
    if (ImGui::Selectable("DP all-reduce", s.td_zero == 0)) s.td_zero = 0;
    if (ImGui::Selectable("ZeRO-1 over each DP group", s.td_zero == 1)) s.td_zero = 1;
    ImGui::EndCombo();
  }
  ScheduleCombo(s);
  IntField("Micro-b.", "##td_microbatches", s.microbatches, 1, 64, "m = %d per replica");
  IntField("Layers", "##td_layers", s.layers, 1, 64, "%d layers");
  FieldLabel("Width");
  if (ImGui::BeginCombo("##td_width", std::to_string(s.width).c_str())) {
    for (int w : {32, 64, 128, 256, 512, 1024}) {
      if (ImGui::Selectable(std::to_string(w).c_str(), w == s.width)) s.width = w;
    }
    ImGui::EndCombo();
  }
  IntField("Batch", "##td_batch", s.batch, 1, 4096, "%d rows");
  FieldLabel("Optimizer");
  if (ImGui::BeginCombo("##td_optimizer", s.optimizer == "adam" ? "Adam" : "SGD")) {
    if (ImGui::Selectable("SGD", s.optimizer == "sgd")) s.optimizer = "sgd";
    if (ImGui::Selectable("Adam", s.optimizer == "adam")) s.optimizer = "adam";
    ImGui::EndCombo();
  }
  DimWrapped(theme, std::to_string(s.dp * s.pp * s.tp3) +
                        " GPUs; rank = pp*(dp_size*tp_size) + dp*tp_size + tp (Megatron order)");
}

/// One MoE layer's fields, as `shardlab-cli run moe`.
void MoeFields(const Theme& theme, ScenarioSettings& s) {
  const int gpus = TopologyGpus(s.topology);
  IntField("Ranks", "##moe_ranks", s.moe_ranks, 1, gpus > 1 && gpus <= 64 ? gpus : 1024, "N = %d GPUs");
  IntField("Experts", "##moe_experts", s.moe_experts, 1, 256, "E = %d");
  IntField("Top-k", "##moe_top_k", s.moe_top_k, 1, 8, "k = %d");
  IntField("Tokens", "##moe_tokens", s.moe_tokens, 1, 1 << 20, "%d");
  IntField("Hidden", "##moe_hidden", s.moe_hidden, 1, 1 << 14, "%d");
  IntField("FFN", "##moe_ffn", s.moe_ffn, 1, 1 << 16, "%d");
  FieldLabel("Capacity");
  float capacity = static_cast<float>(s.moe_capacity);
  if (ImGui::SliderFloat("##moe_capacity", &capacity, 0.25f, 8.0f, "factor %.2f")) s.moe_capacity = capacity;
  FieldLabel("Skew");
  if (ImGui::BeginCombo("##moe_skew", s.moe_skew.c_str())) {
    for (const char* name : {"router", "uniform", "hot", "zipf"}) {
      if (ImGui::Selectable(name, s.moe_skew == name)) s.moe_skew = name;
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("router: the router's own top-k; uniform: every expert as busy;\n"
                      "hot: every even token's first choice is expert 0; zipf: weight 1/(e+1)");
  }
  DimWrapped(theme, "Expert e lives on GPU e / (E/N); tokens above an expert's capacity are dropped.");
}

constexpr TpLayerKind kTpLayers[] = {
    TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear, TpLayerKind::kMlp,
    TpLayerKind::kAttention,    TpLayerKind::kTransformer,
};

const char* TpLayerTitle(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear: return "column-parallel linear";
    case TpLayerKind::kRowLinear: return "row-parallel linear";
    case TpLayerKind::kMlp: return "MLP (column, then row)";
    case TpLayerKind::kAttention: return "self-attention";
    case TpLayerKind::kTransformer: return "transformer layer";
  }
  return "?";
}

const char* TpLayerTooltip(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear:
      return "Y = X\xC2\xB7" "A + a with A split by columns: each GPU computes its own columns of Y.\n"
             "No communication forward; backward, the input gradients are all-reduced.";
    case TpLayerKind::kRowLinear:
      return "Y = X\xC2\xB7" "W + b with W split by rows (and X by columns): each GPU has a partial\n"
             "sum of Y, so forward ends with an all-reduce; backward needs none.";
    case TpLayerKind::kMlp:
      return "Megatron's MLP: A split by columns, then B by rows, so the activation\n"
             "between them never moves. One all-reduce forward (g), one backward (f).";
    case TpLayerKind::kAttention:
      return "Self-attention with the heads spread over the GPUs (Wq, Wk, Wv by\n"
             "columns) and the output projection Wo by rows: one all-reduce each way.";
    case TpLayerKind::kTransformer:
      return "Attention and MLP with their layer norms: two all-reduces forward and\n"
             "two backward, the seed text's four per layer.";
  }
  return "";
}

/// The tensor-parallel layer's fields: kind, tp (one GPU each), the token
/// shape B x S, H, F, heads where there is attention, and sequence
/// parallelism where the layer has it.
void TpFields(const Theme& theme, ScenarioSettings& s) {
  TpLayerKind kind = TpLayerKind::kMlp;
  try {
    kind = ParseTpLayerKind(s.tp_layer);
  } catch (const std::exception&) {
    s.tp_layer = TpLayerKindName(kind);
  }
  FieldLabel("Layer");
  if (ImGui::BeginCombo("##tp_layer", TpLayerTitle(kind))) {
    for (TpLayerKind k : kTpLayers) {
      if (ImGui::Selectable(TpLayerTitle(k), k == kind)) {
        s.tp_layer = TpLayerKindName(k);
        kind = k;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", TpLayerTooltip(k));
    }
    ImGui::EndCombo();
  }
  const int gpus = TopologyGpus(s.topology);
  IntField("TP", "##tp", s.tp, 1, gpus > 1 && gpus <= 64 ? gpus : 4096, "tp = %d GPUs");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("GPUs the layer's weights are split over (rank r on GPU r)");
  IntField("Batch", "##tp_batch", s.tp_batch, 1, 64, "B = %d");
  IntField("Sequence", "##tp_seq", s.tp_seq, 1, 1 << 16, "%d");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("tokens per sequence (S); the layer sees T = B x S token rows");
  FieldLabel("Hidden");
  if (ImGui::BeginCombo("##tp_hidden", ("H = " + std::to_string(s.tp_hidden)).c_str())) {
    for (int h : {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288}) {
      if (ImGui::Selectable(std::to_string(h).c_str(), h == s.tp_hidden)) s.tp_hidden = h;
    }
    ImGui::EndCombo();
  }
  FieldLabel("FFN");
  ImGui::InputInt("##tp_ffn", &s.tp_ffn, 16, 256);
  s.tp_ffn = std::clamp(s.tp_ffn, 0, 1 << 18);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("the split width F: the MLP's inner size, or one linear's outputs (column)\n"
                      "or inputs (row); 0 takes 4H for the MLP and H for one linear");
  }
  TpLayerConfig config;
  config.kind = kind;
  const bool attention = config.has_attention();
  if (attention) {
    IntField("Heads", "##tp_heads", s.tp_heads, 1, 64, "%d heads");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("attention heads; each GPU computes heads / tp of them");
  }
  const bool linear = kind == TpLayerKind::kColumnLinear || kind == TpLayerKind::kRowLinear;
  if (linear) s.sequence_parallel = false;
  ImGui::BeginDisabled(linear);
  ImGui::Checkbox("Sequence parallelism", &s.sequence_parallel);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip(linear ? "Only for the MLP, attention and a transformer layer."
                             : "Megatron's sequence parallelism: outside the split linears each GPU keeps\n"
                               "only T / tp token rows, and every all-reduce becomes a reduce-scatter\n"
                               "and an all-gather: the same bytes, less activation memory.");
  }
  // The shape in words before anything runs: F, the tokens, the all-reduce's size.
  if (s.tp >= 1 && s.tp_batch >= 1 && s.tp_seq >= 1 && s.tp_hidden >= 1) {
    config.hidden = s.tp_hidden;
    config.ffn = s.tp_ffn;
    const std::int64_t tokens = std::int64_t{s.tp_batch} * s.tp_seq;
    const Bytes bytes = tokens * s.tp_hidden * 4;
    std::string text;
    if (kind != TpLayerKind::kAttention) {
      text = "F = " + std::to_string(config.split_width()) + (s.tp_ffn == 0 ? " (the default)" : "") + ". ";
    }
    text += "T = " + std::to_string(tokens) + " tokens. Each all-reduce sums T x H x 4 B = " + FormatBytes(bytes);
    if (attention && s.tp_heads > 0 && s.tp_hidden % s.tp_heads == 0) {
      text += "; heads of " + std::to_string(s.tp_hidden / s.tp_heads) + " features";
    }
    DimWrapped(theme, text + ".");
  }
}

const char* ZeroStageTitle(int stage) {
  switch (stage) {
    case 0: return "0: plain data parallel";
    case 1: return "1: shard optimizer states";
    case 2: return "2: + gradients";
    case 3: return "3: + parameters";
  }
  return "?";
}

const char* ZeroStageTooltip(int stage) {
  switch (stage) {
    case 0: return "Every GPU holds all parameters, gradients and Adam states; an all-reduce\n"
                   "sums the gradients (bucket by bucket, as PyTorch DDP does).";
    case 1: return "Each GPU keeps the fp32 master copy and Adam's m and v of 1/N of the\n"
                   "parameters: reduce-scatter the gradients, update the shard, all-gather\n"
                   "the new parameters. The same traffic as stage 0.";
    case 2: return "Stage 1, and a bucket's full gradient lives only until its reduce-scatter:\n"
                   "each GPU keeps 1/N of the gradients.";
    case 3: return "Stage 2, and each GPU keeps only 1/N of the parameters: every layer is\n"
                   "all-gathered before its forward and again before its backward (3\xCE\xA8 a step).";
  }
  return "";
}

/// ZeRO's fields: stage, ranks (one per GPU), the MLP, Adam steps, the
/// gradient bucket, overlap and the formula's K; then Ψ, the buckets and
/// the formula in words before anything runs.
void ZeroFields(const Theme& theme, ScenarioSettings& s) {
  s.zero_stage = std::clamp(s.zero_stage, 0, 3);
  FieldLabel("Stage");
  if (ImGui::BeginCombo("##zero_stage", ZeroStageTitle(s.zero_stage))) {
    for (int stage = 0; stage <= 3; ++stage) {
      if (ImGui::Selectable(ZeroStageTitle(stage), stage == s.zero_stage)) s.zero_stage = stage;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ZeroStageTooltip(stage));
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ZeroStageTooltip(s.zero_stage));
  const int gpus = TopologyGpus(s.topology);
  IntField("Ranks", "##zero_ranks", s.zero_ranks, 1, gpus > 1 && gpus <= 64 ? gpus : 1024, "N = %d GPUs");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the data-parallel degree: rank r on GPU r, B/N rows each");
  IntField("Layers", "##zero_layers", s.zero_layers, 1, 64, "%d layers");
  FieldLabel("Width");
  if (ImGui::BeginCombo("##zero_width", std::to_string(s.zero_width).c_str())) {
    for (int w : {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
      if (ImGui::Selectable(std::to_string(w).c_str(), w == s.zero_width)) s.zero_width = w;
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("features in and out of every layer (H): H\xC2\xB2 + H parameters a layer");
  IntField("Batch", "##zero_batch", s.zero_batch, 1, 1 << 16, "%d rows");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the global batch B; each GPU takes B/N rows");
  IntField("Steps", "##zero_steps", s.zero_steps, 1, 16, "Adam steps: %d");
  FieldLabel("Bucket");
  ImGui::InputTextWithHint("##zero_bucket", "16K, 25M", &s.zero_bucket);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("fp16 gradient per bucket (stages 0-2): whole layers from the top, each bucket\n"
                      "closed once it holds this many bytes; PyTorch DDP's default is 25M");
  }
  ImGui::Checkbox("Overlap reduction with backward", &s.zero_overlap);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("On: a bucket's collective starts as soon as its gradients are ready, while\n"
                      "backward goes on below it. Off: every collective waits for the whole backward.");
  }
  FieldLabel("Formula K");
  const char* k_title = s.zero_k == 8 ? "K = 8 (seed texts)" : "K = 12 (ZeRO paper)";
  if (ImGui::BeginCombo("##zero_k", k_title)) {
    if (ImGui::Selectable("K = 12 (ZeRO paper)", s.zero_k == 12)) s.zero_k = 12;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("fp32 master copy, Adam m and v: 4 + 4 + 4 bytes a parameter\n(what this run holds)");
    if (ImGui::Selectable("K = 8 (seed texts)", s.zero_k == 8)) s.zero_k = 8;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Adam m and v only: 12\xCE\xA8 in all for plain data parallelism");
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("Optimizer bytes per parameter in the formula line of the memory chart;\n"
                      "the run itself always keeps the fp32 master copy (K = 12).");
  }
  // The model and its buckets in words before anything runs.
  try {
    ZeroParams p;
    p.model.layers = s.zero_layers;
    p.model.width = s.zero_width;
    p.model.batch = s.zero_batch;
    p.ranks = s.zero_ranks;
    p.stage = s.zero_stage;
    p.bucket_bytes = ParseSize(s.zero_bucket, "bucket");
    const std::vector<ZeroUnit> units = ZeroUnits(p);  // checks the fields too
    const double psi = static_cast<double>(MlpParameterCount(p.model));
    const double per_gpu = ZeroMemoryPerGpu(psi, p.ranks, p.stage, s.zero_k == 8 ? 8 : 12).total();
    std::string text = "\xCE\xA8 = " + Grouped(static_cast<std::int64_t>(psi)) + " parameters. ";
    if (p.stage == 3) {
      text += "Stage 3 gathers and reduces layer by layer. ";
    } else {
      // The buckets in the order backward fills them: the top layers first.
      constexpr std::size_t kListed = 4;
      text += std::to_string(units.size()) + (units.size() == 1 ? " bucket" : " buckets, top first") + ": ";
      for (std::size_t u = 0; u < units.size() && u < kListed; ++u) {
        const ZeroUnit& unit = units[u];
        text += (u == 0 ? "layers " : ", ") + std::to_string(unit.last_layer) +
                (unit.first_layer == unit.last_layer ? "" : "-" + std::to_string(unit.first_layer));
      }
      text += units.size() > kListed ? ", ... " : ". ";
    }
    text += "Model states per GPU: " + ZeroMemoryFormulaText(p.stage, s.zero_k == 8 ? 8 : 12) + " = " +
            ZeroBytesText(per_gpu) + ".";
    DimWrapped(theme, text);
  } catch (const std::exception&) {
    // The Check message under the fields says what is wrong.
  }
}

void TopologyField(const Theme& theme, ScenarioPanelState& state) {
  ScenarioSettings& s = state.edit;
  const std::vector<PresetInfo> presets = ListTopologyPresets();
  const PresetInfo* chosen = nullptr;
  for (const PresetInfo& p : presets) {
    if (!state.topology_is_file && p.name == s.topology) chosen = &p;
  }
  FieldLabel("Machine");
  const std::string preview = state.topology_is_file ? "topology file..."
                              : chosen != nullptr    ? chosen->name
                                                     : s.topology;
  if (ImGui::BeginCombo("##topology", preview.c_str(), ImGuiComboFlags_HeightLarge)) {
    for (const PresetInfo& p : presets) {
      if (ImGui::Selectable(p.name.c_str(), &p == chosen)) {
        state.topology_is_file = false;
        s.topology = p.name;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.description.c_str());
    }
    if (ImGui::Selectable("topology file...", state.topology_is_file)) {
      state.topology_is_file = true;
      if (state.topology_file.empty()) state.topology_file = "assets/topologies/example-workstation.toml";
    }
    ImGui::EndCombo();
  }
  if (state.topology_is_file) {
    FieldLabel("File");
    ImGui::InputTextWithHint("##topology_file", "path/to/machine.toml", &state.topology_file);
    s.topology = state.topology_file;
  } else if (chosen != nullptr) {
    DimWrapped(theme, chosen->description);
  }
}

void RanksField(ScenarioSettings& s) {
  const int gpus = TopologyGpus(s.topology);
  // Picking a smaller machine takes the ranks down with it, rather than
  // greeting the choice with an error.
  static std::string ranks_topology = s.topology;
  if (s.topology != ranks_topology) {
    ranks_topology = s.topology;
    if (gpus > 0 && s.ranks > gpus) s.ranks = gpus;
  }
  FieldLabel("Ranks");
  if (gpus > 1 && gpus <= 64) {
    // A slider for machines a student counts on fingers; typing for clusters.
    ImGui::SliderInt("##ranks", &s.ranks, 1, gpus, "%d GPUs", ImGuiSliderFlags_AlwaysClamp);
  } else {
    ImGui::InputInt("##ranks", &s.ranks, 1, 8);
    s.ranks = std::max(s.ranks, 1);
  }
}

void SizeField(const Theme& theme, ScenarioSettings& s) {
  FieldLabel("Size");
  ImGui::InputTextWithHint("##size", "64M, 1G, 4KiB", &s.size);
  try {
    const Bytes bytes = ParseSize(s.size, "size");
    DimWrapped(theme, "one rank's buffer: " + FormatBytes(bytes) + " (" + std::to_string(bytes) +
                          " B)");
  } catch (const std::exception&) {
    // The Check message under the fields says what is wrong.
  }
}

/// "sim", or "cuda (worker process)" for a run that goes through a worker.
std::string BackendLabel(const std::string& backend, bool in_worker) {
  return in_worker ? backend + " (worker process)" : backend;
}

/// Collectives may also run in a worker process: the simulator (to see
/// the worker at work without hardware) or the backends only a worker
/// runs (cuda, mpi), which fail with the worker's message where the
/// machine has none.
void BackendField(ScenarioSettings& s, bool collective) {
  FieldLabel("Backend");
  if (!collective) s.in_worker = false;
  if (ImGui::BeginCombo("##backend", BackendLabel(s.backend, s.in_worker).c_str())) {
    for (const BackendInfo& b : ListBackends()) {
      if (ImGui::Selectable(b.name.c_str(), b.name == s.backend && !s.in_worker)) {
        s.backend = b.name;
        s.in_worker = false;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s (in the app)", b.description.c_str());
    }
    if (collective) {
      for (const char* name : {"sim", "cuda", "mpi"}) {
        const std::string label = BackendLabel(name, true);
        if (ImGui::Selectable(label.c_str(), s.in_worker && s.backend == name)) {
          s.backend = name;
          s.in_worker = true;
        }
        if (ImGui::IsItemHovered()) {
          ImGui::SetTooltip("Runs in 'shardlab-cli worker', a separate process that streams the\n"
                            "events back: a crash there (a sticky CUDA error, a dead MPI rank)\n"
                            "ends the worker, never the app.");
        }
      }
    }
    ImGui::EndCombo();
  }
}

/// A worker that died: what happened, and a button to start it again.
void WorkerFailure(const Theme& theme, const Session& session, ScenarioPanelState& state) {
  if (session.worker_failure().empty()) return;
  ImGui::Spacing();
  ErrorWrapped(theme, "The worker process died: " + session.worker_failure());
  DimWrapped(theme, "The app is fine: the worker ran in its own process.");
  if (ImGui::Button("Restart worker", ImVec2(-FLT_MIN, 0))) state.restart_worker = true;
}

void RingOrderField(ScenarioPanelState& state) {
  ScenarioSettings& s = state.edit;
  const bool custom = s.ring_order != "auto" && s.ring_order != "rank";
  FieldLabel("Ring order");
  const char* preview = custom ? "custom" : s.ring_order == "rank" ? "rank order" : "auto (fastest)";
  if (ImGui::BeginCombo("##ring_order", preview)) {
    if (ImGui::Selectable("auto (fastest)", s.ring_order == "auto")) s.ring_order = "auto";
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("Search the topology for the ring with the fastest slowest hop, as NCCL does");
    }
    if (ImGui::Selectable("rank order", s.ring_order == "rank")) s.ring_order = "rank";
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("0 -> 1 -> 2 -> ... -> n-1 -> 0");
    if (ImGui::Selectable("custom", custom)) s.ring_order = state.custom_ring_order;
    ImGui::EndCombo();
  }
  if (s.ring_order != "auto" && s.ring_order != "rank") {
    FieldLabel("Order");
    ImGui::InputTextWithHint("##ring_custom", "0,3,2,1", &state.custom_ring_order);
    // An emptied field must stay "custom", not fall back to a keyword.
    s.ring_order = state.custom_ring_order.empty() ? "," : state.custom_ring_order;
  }
}

/// A few lines for someone who has never seen the app: what each panel says.
void HowToRead(const Theme& theme, const ScenarioSettings& s) {
  ImGui::Spacing();
  if (!ImGui::CollapsingHeader("How to read this", ImGuiTreeNodeFlags_DefaultOpen)) return;
  static const char* const kCollectiveLines[] = {
      "Step (Right arrow) shows one more logical step of the algorithm; Play runs them in "
      "slow motion. The run itself took microseconds.",
      "Machine: dots are chunks in flight along their route; a link's colour is its load.",
      "Buffers: what each GPU holds after the step shown.",
      "Timeline: every send and receive per GPU; hover an op for its bytes and bandwidth.",
      "Metrics: time, algbw and busbw as nccl-tests reports them, beside the formula.",
  };
  static const char* const kTpLines[] = {
      "One layer's weights are split over the GPUs: Weights (bottom right) shows every matrix "
      "and which GPU holds which block, in that GPU's colour. Lit blocks are computing now.",
      "Column-parallel weights need no communication forward; row-parallel ones leave each "
      "GPU with a partial sum, which an all-reduce (AR) adds up. Backward it is the reverse.",
      "Machine: AR1 RS\xC2\xB7" "B is chunk B of all-reduce 1 in its reduce-scatter pass; the line "
      "above the GPUs says which all-reduce runs and what it carries.",
      "Metrics: compute against communication, the all-reduces counted and sized (T x H x 4 B), "
      "and whether every output and gradient equals one GPU's.",
  };
  static const char* const kZeroLines[] = {
      "Every GPU trains the same MLP on its own rows of the batch. The stage decides who keeps "
      "which model state: Memory (bottom right) stacks each GPU's bytes by kind, measured from "
      "what the simulator allocated, with the formula as a line. Run stages 0, 1, 2, 3 in turn.",
      "Hatched blocks come and go: stage 2's bucket of full gradients until its reduce-scatter, "
      "stage 3's gathered layer until its last matrix product. Step or Play to watch them.",
      "Machine and Timeline: AG L3 fwd·" "B is chunk B of the all-gather of layer 3's parameters "
      "before its forward; RS b1 the reduce-scatter of bucket 1's gradients; AG b1 upd the updated "
      "parameters; AR b0 a stage-0 all-reduce.",
      "Metrics: memory per GPU against the formula, elements sent per step against 2Ψ "
      "(3Ψ for stage 3), and whether the trained weights equal one GPU's.",
  };
  static const char* const kPipelineLines[] = {
      "Each GPU is one pipeline stage holding a slice of the model's layers. Step shows one "
      "more tick of the schedule; Play runs the training step in slow motion.",
      "Timeline: F3 is the forward of micro-batch 3, B3 its backward (W3 its weight gradient "
      "in ZB-H1); one colour per micro-batch. Hatched gaps are the bubble: a stage waiting.",
      "Machine: activations flow to the next stage, gradients back to the previous one.",
      "Metrics: the measured bubble beside the formula, activations held per stage, and "
      "whether the trained weights equal one device's.",
  };
  static const char* const kThreeDLines[] = {
      "Every GPU has a coordinate (dp, pp, tp). Machine: choose Colour by TP group, PP stage or "
      "DP replica; the legend lists each group's ranks, and the TP/PP/DP toggles light the links "
      "that kind of traffic uses.",
      "Timeline: rows grouped by stage, then replica; collectives say TP, PP or DP and hover "
      "names the group.",
      "Metrics: step time, compute against what was not hidden, bytes per group kind, memory, "
      "MFU, and whether the trained weights equal one device's.",
  };
  static const char* const kMoeLines[] = {
      "Each token's router picks top-k experts; dispatch sends it to their GPUs (all-to-all), "
      "the experts compute, combine sends the results back.",
      "Timeline: router, dispatch, expert and combine have their own colours; with skew 'hot' "
      "the GPU of expert 0 computes longest and the others wait for it in the combine.",
      "Metrics: tokens per expert, dropped tokens, the straggler and its load against the mean.",
  };
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  auto bullets = [](const auto& lines) {
    for (const char* line : lines) {
      ImGui::Bullet();
      ImGui::TextWrapped("%s", line);
    }
  };
  if (s.is_tp()) {
    bullets(kTpLines);
  } else if (s.is_zero()) {
    bullets(kZeroLines);
  } else if (s.is_pipeline()) {
    bullets(kPipelineLines);
  } else if (s.is_three_d()) {
    bullets(kThreeDLines);
  } else if (s.is_moe()) {
    bullets(kMoeLines);
  } else {
    bullets(kCollectiveLines);
  }
  ImGui::PopStyleColor();
}

}  // namespace

bool DrawScenarioPanel(ViewContext& ctx, ScenarioPanelState& state) {
  const Theme& theme = ctx.theme;
  ScenarioSettings& s = state.edit;

  if (ScenarioCombo(s)) AlgoCombo(s);
  TopologyField(theme, state);
  if (s.is_pipeline()) {
    PipelineFields(theme, s);
    BackendField(s, false);
  } else if (s.is_tp()) {
    TpFields(theme, s);
    BackendField(s, false);
  } else if (s.is_zero()) {
    ZeroFields(theme, s);
    BackendField(s, false);
  } else if (s.is_three_d()) {
    ThreeDFields(theme, s);
    BackendField(s, false);
  } else if (s.is_moe()) {
    MoeFields(theme, s);
    BackendField(s, false);
  } else {
    RanksField(s);
    SizeField(theme, s);
    BackendField(s, true);
    RingOrderField(state);
  }
  ImGui::Checkbox("Timing only (skip the data)", &s.timing_only);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("Time the run without moving real numbers: paper-sized runs in seconds,\n"
                      "but the result is not checked.");
  }

  // Check is cached by the session, so calling it every frame is cheap.
  const std::string problem = ctx.session.Check(s);
  if (!problem.empty()) ErrorWrapped(theme, problem);

  ImGui::Spacing();
  bool run = false;
  ImGui::BeginDisabled(!problem.empty());
  const bool running = ctx.session.state() == SessionState::kRunning;
  if (ImGui::Button(running ? "Restart run" : "Run", ImVec2(-FLT_MIN, 0))) run = true;
  ImGui::EndDisabled();
  if (run) return true;

  const PreparedCollective* prepared = ctx.session.prepared();
  if (const LoadedTrace* trace = ctx.session.trace()) {
    DimWrapped(theme, "Showing the trace " + trace->source + " (" +
                          (trace->backend.empty() ? std::string("unknown backend") : trace->backend) +
                          ", " + trace->clock + " clock). Run starts a new run from the fields above.");
  }
  if (!ctx.session.worker_failure().empty()) {
    WorkerFailure(theme, ctx.session, state);
  } else if (ctx.session.state() == SessionState::kFailed) {
    ErrorWrapped(theme, "The last run failed: " + ctx.session.error());
  } else if (ctx.session.plan() != nullptr && !(s == state.last_run) && problem.empty()) {
    DimWrapped(theme, "Changed: press Run to record the new run.");
  }

  if (prepared != nullptr && !prepared->ring_order.empty()) {
    // Long rings keep their first hops and the way back: 1,024 numbers help no one.
    constexpr std::size_t kShownHops = 12;
    const std::vector<int>& ring = prepared->ring_order;
    const std::string arrow = " \xE2\x86\x92 ";
    std::string order;
    for (std::size_t i = 0; i < ring.size(); ++i) {
      if (ring.size() > kShownHops + 2 && i == kShownHops) {
        order += arrow + "... (" + std::to_string(ring.size()) + " GPUs)" + arrow + std::to_string(ring.back());
        break;
      }
      order += (i == 0 ? "" : arrow) + std::to_string(ring[i]);
    }
    ImGui::Spacing();
    DimWrapped(theme, "Ring: " + order + " (" + prepared->ring_order_mode + ")");
  }
  HowToRead(theme, s);
  return false;
}

}  // namespace shardlab::gui
