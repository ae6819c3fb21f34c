// The scenario panel: every field of a collective run, checked as it is
// typed. Session::Check's sentence appears in red right under the fields
// and Run stays disabled until it is empty, so an invalid combination is
// explained in place instead of failing later.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cfloat>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/gui/app/test_log.h"
#include "app/gui/model/fault_marks.h"
#include "app/gui/model/link_emulation.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/this_machine_choice.h"
#include "app/gui/model/zero_view.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/scenario_panels.h"
#include "engine/algorithms/collective.h"
#include "engine/algorithms/pipeline_schedule.h"
#include "engine/algorithms/zero.h"
#include "engine/core/units.h"
#include "engine/model/tp_layer.h"
#include "engine/model/zero_memory.h"
#include "engine/run/backend.h"
#include "engine/run/faults.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/topology/presets.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/scenarios/moe_scenario.h"

namespace shardlab::gui {
namespace {

const char* AlgoWords(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::kRing: return Tr("ring");
    case CollectiveAlgo::kTree: return Tr("double binary tree");
    case CollectiveAlgo::kDirect: return Tr("direct (every pair)");
    case CollectiveAlgo::kNccl: return Tr("NCCL (one library call)");
  }
  return "?";
}

/// The label column's width: the widest label of the fields shown (set
/// each frame by DrawScenarioPanel).
float g_label_width = 0;

/// A label to the left of the next widget, which then fills the row.
void FieldLabel(const char* text) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(text);
  ImGui::SameLine(std::max(g_label_width, ImGui::GetFontSize() * 6.0f));
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
    PipelineSchedule::kZeroBubbleH1, PipelineSchedule::kNaive,
};

const char* ScheduleTooltip(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGPipe:
      return Tr("All forwards, then all backwards: each stage holds m activations.");
    case PipelineSchedule::k1F1B:
      return Tr("PipeDream-Flush: a warm-up of forwards, then one forward, one backward;\n"
             "the same bubble as GPipe, but stage s holds at most p - s activations.");
    case PipelineSchedule::kInterleaved1F1B:
      return Tr("Megatron's interleaving: each stage holds v model chunks, so the\n"
             "fill and drain are v times shorter: bubble (p-1)/(v*m).");
    case PipelineSchedule::kZeroBubbleH1:
      return Tr("Zero bubble (ZB-H1): the backward split into input gradient (B) and\n"
             "weight gradient (W); W waits to fill the gaps: bubble (p-1)/(3m).");
    case PipelineSchedule::kNaive:
      return Tr("Naive model parallelism: the layers split over the GPUs, the whole batch\n"
             "as one micro-batch; one GPU works at a time, the others idle (p-1)/p.");
  }
  return "";
}

/// The scenario, from the registry: the collective spec's kinds, then
/// every other scenario by its spec's title. Returns true when it is a
/// collective (whose fields follow).
bool ScenarioCombo(ScenarioSettings& s) {
  const std::vector<ScenarioChoice> choices = ScenarioChoices();
  auto title = [&](const ScenarioChoice& c) {
    return FindScenario(c.name) != nullptr ? c.title : CollectiveTitle(c.name, "");
  };
  std::string preview = s.scenario;
  for (const ScenarioChoice& c : choices) {
    if (c.name == s.scenario) preview = title(c);
  }
  FieldLabel(Tr("Scenario"));
  const ImVec2 combo_at = ImGui::GetCursorScreenPos();  // the combo's box, for --test-log
  test_log::MarkRect("scenario-combo", combo_at.x, combo_at.y, combo_at.x + ImGui::CalcItemWidth(),
                     combo_at.y + ImGui::GetFrameHeight());
  if (ImGui::BeginCombo("##kind", preview.c_str(), ImGuiComboFlags_HeightLarge)) {
    for (const ScenarioChoice& c : choices) {
      if (c.separator_before) ImGui::Separator();
      const std::string label = title(c) + (c.runs_in_app ? "" : Tr(" (CLI only)"));
      if (ImGui::Selectable(label.c_str(), c.name == s.scenario)) s.scenario = c.name;
      test_log::MarkItem("scenario-choice " + c.name + (c.runs_in_app ? "" : " cli-only"));
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s%s", c.summary.c_str(),
                          c.runs_in_app ? "" : Tr("\nThe app shows and checks its settings; shardlab-cli runs it."));
      }
    }
    ImGui::EndCombo();
  }
  return IsCollectiveScenario(s);
}

void AlgoCombo(ScenarioSettings& s) {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  try {
    kind = ParseCollectiveKind(s.scenario);
  } catch (const std::exception&) {
    return;  // Check says what is wrong with the scenario
  }
  // A kind change may leave an algorithm it does not have: back to auto.
  const std::vector<CollectiveAlgo> algos = CollectiveAlgosFor(kind);
  std::string algo = s.Param("algo");
  const bool valid = algo == "auto" || std::any_of(algos.begin(), algos.end(), [&](CollectiveAlgo a) {
    return algo == CollectiveAlgoName(a);
  });
  if (!valid) algo = "auto";
  const std::string auto_title = Format(Tr("auto (%s)"), AlgoWords(DefaultAlgo(kind)));
  std::string preview = auto_title;
  for (CollectiveAlgo a : algos) {
    if (algo == CollectiveAlgoName(a)) preview = AlgoWords(a);
  }
  FieldLabel(Tr("Algo"));
  if (ImGui::BeginCombo("##algo", preview.c_str())) {
    if (ImGui::Selectable(auto_title.c_str(), algo == "auto")) algo = "auto";
    for (CollectiveAlgo a : algos) {
      if (ImGui::Selectable(AlgoWords(a), algo == CollectiveAlgoName(a))) algo = CollectiveAlgoName(a);
    }
    ImGui::EndCombo();
  }
  if (algo != s.Param("algo")) s.SetParam("algo", algo);
}

void ScheduleCombo(std::string& schedule, const std::vector<std::string>& allowed) {
  PipelineSchedule current = PipelineSchedule::k1F1B;
  try {
    current = ParsePipelineSchedule(schedule);
  } catch (const std::exception&) {
    schedule = PipelineScheduleName(current);
  }
  FieldLabel(Tr("Schedule"));
  if (ImGui::BeginCombo("##schedule", PipelineScheduleTitle(current))) {
    for (PipelineSchedule sch : kSchedules) {
      const std::string name = PipelineScheduleName(sch);
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) continue;  // the spec's choices
      if (ImGui::Selectable(PipelineScheduleTitle(sch), sch == current)) {
        schedule = name;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ScheduleTooltip(sch));
    }
    ImGui::EndCombo();
  }
}

/// "%" doubled, for a text shown as an ImGui format.
std::string Escaped(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

std::string RealText(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// One parameter drawn from its spec (PanelFields): the widget the model
/// chose, the spec's range and unit, its help as the tooltip.
void SpecField(const PanelField& f, ScenarioSettings& s, const ScenarioSpec& spec) {
  const ParamSpec* param = spec.FindParam(f.name);
  if (param == nullptr) return;
  const std::string id = "##" + spec.name + "_" + f.name;
  std::string text = f.value;
  switch (f.widget) {
    case FieldWidget::kCheckbox: {
      bool on = text == "true";
      if (ImGui::Checkbox(f.label.c_str(), &on)) text = on ? "true" : "false";
      break;
    }
    case FieldWidget::kSlider: {
      FieldLabel(f.label.c_str());
      int v = std::atoi(text.c_str());
      // A smaller machine takes a count of GPUs down with it.
      if (v > f.max) v = static_cast<int>(f.max);
      const std::string format = v == 0 && !f.zero_text.empty() ? Escaped(f.zero_text) : f.format;
      ImGui::SliderInt(id.c_str(), &v, static_cast<int>(f.min), static_cast<int>(f.max), format.c_str(),
                       ImGuiSliderFlags_AlwaysClamp);
      text = std::to_string(v);
      break;
    }
    case FieldWidget::kInteger: {
      FieldLabel(f.label.c_str());
      int v = std::atoi(text.c_str());
      ImGui::InputInt(id.c_str(), &v, 1, 16);
      const double lo = std::max(f.min, double{INT_MIN});
      const double hi = std::min(f.max, double{INT_MAX});
      text = std::to_string(static_cast<int>(std::clamp(double(v), lo, hi)));
      break;
    }
    case FieldWidget::kNumber: {
      FieldLabel(f.label.c_str());
      double v = std::atof(text.c_str());
      if (ImGui::InputDouble(id.c_str(), &v, 0, 0, "%g")) text = RealText(std::clamp(v, f.min, f.max));
      break;
    }
    case FieldWidget::kChoice: {
      FieldLabel(f.label.c_str());
      if (ImGui::BeginCombo(id.c_str(), text.c_str())) {
        for (const std::string& c : f.choices) {
          if (ImGui::Selectable(c.c_str(), c == text)) text = c;
        }
        ImGui::EndCombo();
      }
      break;
    }
    case FieldWidget::kText: {
      FieldLabel(f.label.c_str());
      ImGui::InputTextWithHint(id.c_str(), f.default_text.c_str(), &text);
      break;
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.help.c_str());
  if (text != f.value) SetParamText(&s, spec, *param, text);
}

constexpr TpLayerKind kTpLayers[] = {
    TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear, TpLayerKind::kMlp,
    TpLayerKind::kAttention,    TpLayerKind::kTransformer,
};

const char* TpLayerTitle(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear: return Tr("column-parallel linear");
    case TpLayerKind::kRowLinear: return Tr("row-parallel linear");
    case TpLayerKind::kMlp: return Tr("MLP (column, then row)");
    case TpLayerKind::kAttention: return Tr("self-attention");
    case TpLayerKind::kTransformer: return Tr("transformer layer");
  }
  return "?";
}

const char* TpLayerTooltip(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear:
      return Tr("Y = X\xC2\xB7" "A + a with A split by columns: each GPU computes its own columns of Y.\n"
             "No communication forward; backward, the input gradients are all-reduced.");
    case TpLayerKind::kRowLinear:
      return Tr("Y = X\xC2\xB7" "W + b with W split by rows (and X by columns): each GPU has a partial\n"
             "sum of Y, so forward ends with an all-reduce; backward needs none.");
    case TpLayerKind::kMlp:
      return Tr("Megatron's MLP: A split by columns, then B by rows, so the activation\n"
             "between them never moves. One all-reduce forward (g), one backward (f).");
    case TpLayerKind::kAttention:
      return Tr("Self-attention with the heads spread over the GPUs (Wq, Wk, Wv by\n"
             "columns) and the output projection Wo by rows: one all-reduce each way.");
    case TpLayerKind::kTransformer:
      return Tr("Attention and MLP with their layer norms: two all-reduces forward and\n"
             "two backward, the seed text's four per layer.");
  }
  return "";
}

void TpLayerCombo(ScenarioSettings& s) {
  TpLayerKind kind = TpLayerKind::kMlp;
  try {
    kind = ParseTpLayerKind(s.Param("layer"));
  } catch (const std::exception&) {
    s.SetParam("layer", TpLayerKindName(kind));
  }
  FieldLabel(Tr("Layer"));
  if (ImGui::BeginCombo("##tp_layer", TpLayerTitle(kind))) {
    for (TpLayerKind k : kTpLayers) {
      if (ImGui::Selectable(TpLayerTitle(k), k == kind)) s.SetParam("layer", TpLayerKindName(k));
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", TpLayerTooltip(k));
    }
    ImGui::EndCombo();
  }
}

/// Sequence parallelism: only for the layers that have it.
void SequenceParallelBox(ScenarioSettings& s, const PanelField& f) {
  const std::string layer = s.Param("layer");
  const bool linear = layer == "column" || layer == "row";
  if (linear && s.Flag(f.name)) s.SetParam(f.name, "false");
  bool on = s.Flag(f.name);
  ImGui::BeginDisabled(linear);
  if (ImGui::Checkbox(Tr("Sequence parallelism"), &on)) s.SetParam(f.name, on ? "true" : "false");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip("%s", linear ? Tr("Only for the MLP, attention and a transformer layer.")
                                   : (f.help + Tr("\nOutside the split linears each GPU keeps only T / tp token rows,\n"
                                                  "and every all-reduce becomes a reduce-scatter and an all-gather."))
                                         .c_str());
  }
}

/// The shape of a tensor-parallel layer in words before anything runs.
void TpSummary(const Theme& theme, const ScenarioSettings& s) {
  TpLayerKind kind = TpLayerKind::kMlp;
  try {
    kind = ParseTpLayerKind(s.Param("layer"));
  } catch (const std::exception&) {
    return;
  }
  TpLayerConfig config;
  config.kind = kind;
  const bool attention = config.has_attention();
  const int tp = static_cast<int>(s.Int("tp")), batch = static_cast<int>(s.Int("batch"));
  const int seq = static_cast<int>(s.Int("seq")), hidden = static_cast<int>(s.Int("hidden"));
  const int ffn = static_cast<int>(s.Int("ffn")), heads = static_cast<int>(s.Int("heads"));
  // The shape in words before anything runs: F, the tokens, the all-reduce's size.
  if (tp >= 1 && batch >= 1 && seq >= 1 && hidden >= 1) {
    config.hidden = hidden;
    config.ffn = ffn;
    const std::int64_t tokens = std::int64_t{batch} * seq;
    const Bytes bytes = tokens * hidden * 4;
    std::string text;
    if (kind != TpLayerKind::kAttention) {
      text = "F = " + std::to_string(config.split_width()) + (ffn == 0 ? Tr(" (the default)") : "") + ". ";
    }
    text += Format(Tr("T = %s tokens. Each all-reduce sums T x H x 4 B = %s"), std::to_string(tokens).c_str(),
                   FormatBytes(bytes).c_str());
    if (attention && heads > 0 && hidden % heads == 0) {
      text += Format(Tr("; heads of %d features"), hidden / heads);
    }
    DimWrapped(theme, text + Tr("."));
  }
}

const char* ZeroStageTitle(int stage) {
  switch (stage) {
    case 0: return Tr("0: plain data parallel");
    case 1: return Tr("1: shard optimizer states");
    case 2: return Tr("2: + gradients");
    case 3: return Tr("3: + parameters");
  }
  return "?";
}

const char* ZeroStageTooltip(int stage) {
  switch (stage) {
    case 0: return Tr("Every GPU holds all parameters, gradients and Adam states; an all-reduce\n"
                   "sums the gradients (bucket by bucket, as PyTorch DDP does).");
    case 1: return Tr("Each GPU keeps the fp32 master copy and Adam's m and v of 1/N of the\n"
                   "parameters: reduce-scatter the gradients, update the shard, all-gather\n"
                   "the new parameters. The same traffic as stage 0.");
    case 2: return Tr("Stage 1, and a bucket's full gradient lives only until its reduce-scatter:\n"
                   "each GPU keeps 1/N of the gradients.");
    case 3: return Tr("Stage 2, and each GPU keeps only 1/N of the parameters: every layer is\n"
                   "all-gathered before its forward and again before its backward (3\xCE\xA8 a step).");
  }
  return "";
}

void ZeroStageCombo(ScenarioSettings& s, const PanelField& f) {
  int stage = std::clamp(static_cast<int>(s.Int(f.name)), 0, 3);
  FieldLabel(Tr("Zero stage"));
  if (ImGui::BeginCombo("##zero_stage", ZeroStageTitle(stage))) {
    for (int st = 0; st <= 3; ++st) {
      if (ImGui::Selectable(ZeroStageTitle(st), st == stage)) stage = st;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ZeroStageTooltip(st));
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ZeroStageTooltip(stage));
  if (std::to_string(stage) != s.Param(f.name)) s.SetParam(f.name, std::to_string(stage));
}

void ZeroKCombo(ScenarioSettings& s, const PanelField& f) {
  FieldLabel("K");
  int k = static_cast<int>(s.Int(f.name));
  const char* k_title = k == 8 ? Tr("K = 8 (seed texts)") : Tr("K = 12 (ZeRO paper)");
  if (ImGui::BeginCombo("##zero_k", k_title)) {
    if (ImGui::Selectable(Tr("K = 12 (ZeRO paper)"), k == 12)) k = 12;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", Tr("fp32 master copy, Adam m and v: 4 + 4 + 4 bytes a parameter\n(what this run holds)"));
    if (ImGui::Selectable(Tr("K = 8 (seed texts)"), k == 8)) k = 8;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", Tr("Adam m and v only: 12\xCE\xA8 in all for plain data parallelism"));
    ImGui::EndCombo();
  }
  if (k != s.Int(f.name)) s.SetParam(f.name, std::to_string(k));
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(Tr("%s\nThe run itself always keeps the fp32 master copy (K = 12)."), f.help.c_str());
  }
}

/// Ψ, the buckets and the formula in words before anything runs.
void ZeroSummary(const Theme& theme, const ScenarioSettings& s) {
  // The model and its buckets in words before anything runs.
  try {
    ZeroParams p;
    p.model.layers = static_cast<int>(s.Int("layers"));
    p.model.width = static_cast<int>(s.Int("width"));
    p.ranks = static_cast<int>(s.Int("ranks"));
    p.model.batch = s.Int("batch") > 0 ? static_cast<int>(s.Int("batch")) : 8 * p.ranks;
    p.stage = static_cast<int>(s.Int("zero_stage"));
    p.bucket_bytes = ParseSize(s.Param("bucket"), "bucket");
    const int k = s.Int("k") == 8 ? 8 : 12;
    const std::vector<ZeroUnit> units = ZeroUnits(p);  // checks the fields too
    const double psi = static_cast<double>(MlpParameterCount(p.model));
    const double per_gpu = ZeroMemoryPerGpu(psi, p.ranks, p.stage, k).total();
    std::string text = Format(Tr("\xCE\xA8 = %s parameters. "), Grouped(static_cast<std::int64_t>(psi)).c_str());
    if (p.stage == 3) {
      text += Tr("Stage 3 gathers and reduces layer by layer. ");
    } else {
      // The buckets in the order backward fills them: the top layers first.
      constexpr std::size_t kListed = 4;
      text += Format(units.size() == 1 ? Tr("%d bucket: ") : Tr("%d buckets, top first: "),
                     static_cast<int>(units.size()));
      for (std::size_t u = 0; u < units.size() && u < kListed; ++u) {
        const ZeroUnit& unit = units[u];
        text += (u == 0 ? Tr("layers ") : ", ") + std::to_string(unit.last_layer) +
                (unit.first_layer == unit.last_layer ? "" : "-" + std::to_string(unit.first_layer));
      }
      text += units.size() > kListed ? ", ... " : ". ";
    }
    text += Format(Tr("Model states per GPU: %s = %s."), ZeroMemoryFormulaText(p.stage, k).c_str(),
                   ZeroBytesText(per_gpu).c_str());
    DimWrapped(theme, text);
  } catch (const std::exception&) {
    // The Check message under the fields says what is wrong.
  }
}

/// The pipeline's shape in words, with the textbook bubble.
void PipelineSummary(const Theme& theme, const ScenarioSettings& s) {
  const bool interleaved = s.Param("schedule") == PipelineScheduleName(PipelineSchedule::kInterleaved1F1B);
  const int chunks = s.Int("chunks") > 0 ? static_cast<int>(s.Int("chunks")) : 2;
  const int stages = static_cast<int>(s.Int("stages")), microbatches = static_cast<int>(s.Int("microbatches"));
  const int batch = static_cast<int>(s.Int("batch"));
  // The shape in words, with the textbook bubble, before anything runs.
  try {
    const PipelineSchedule schedule = ParsePipelineSchedule(s.Param("schedule"));
    const PipelineShape shape{stages, microbatches, interleaved ? chunks : 1};
    if (stages >= 1 && microbatches >= 1 && batch % microbatches == 0) {
      char text[160];
      std::snprintf(text, sizeof text, Tr("%d rows per micro-batch; formula bubble %s = %.3f"),
                    batch / microbatches, FormulaBubbleOverUsefulText(schedule),
                    FormulaBubbleOverUseful(schedule, shape));
      DimWrapped(theme, text);
    }
  } catch (const std::exception&) {
    // The Check message under the fields says what is wrong.
  }
}



void ThreeDSummary(const Theme& theme, const ScenarioSettings& s) {
  DimWrapped(theme, Format(Tr("%d GPUs; rank = pp*(dp_size*tp_size) + dp*tp_size + tp (Megatron order)"),
                           static_cast<int>(s.Int("dp") * s.Int("pp") * s.Int("tp"))));
}

void MoeSummary(const Theme& theme) {
  DimWrapped(theme, Tr("Expert e lives on GPU e / (E/N); tokens above an expert's capacity are dropped."));
}

/// "This machine" chosen: the profile and GPU count its model needs when
/// no GPU is detected here, and the machine it models (or why it cannot:
/// Session::Check's line, shown under the fields, keeps Run disabled).
void ThisMachineFields(ViewContext& ctx, ScenarioSettings& s) {
  const bool gpu_here = ThisMachineUnavailable("").empty();
  FieldLabel(Tr("Device profile"));
  ImGui::InputTextWithHint("##device_profile", Tr("h200.toml (shardlab-cli calibrate)"), &s.device_profile);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s", gpu_here ? Tr("The GPU's rates (optional here: without one, the cached profile, calibrated on first use)")
                                     : Tr("The GPU to model: the TOML 'shardlab-cli calibrate' wrote on it"));
  }
  if (!gpu_here) {
    FieldLabel(Tr("GPUs"));
    int gpus = s.machine_gpus;
    if (ImGui::InputInt("##machine_gpus", &gpus, 1, 1)) s.machine_gpus = std::max(1, gpus);
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s", Tr("GPUs of the profile the modelled machine has; more ranks than GPUs are\n"
                                 "virtual devices sharing their GPU's HBM, as the CUDA backend places them"));
    }
  }
  ctx.session.Check(s);  // cached; it builds the model the line below describes
  if (!ctx.session.checked_machine().empty()) {
    DimWrapped(ctx.theme, Format(Tr("Models %s"), ctx.session.checked_machine().c_str()));
  }
}

void TopologyField(ViewContext& ctx, ScenarioPanelState& state) {
  const Theme& theme = ctx.theme;
  ScenarioSettings& s = state.edit;
  const std::vector<PresetInfo> presets = ListTopologyPresets();
  const PresetInfo* chosen = nullptr;
  for (const PresetInfo& p : presets) {
    if (!state.topology_is_file && p.name == s.topology) chosen = &p;
  }
  const bool this_machine = !state.topology_is_file && IsThisMachine(s.topology);
  FieldLabel(Tr("Machine"));
  const std::string preview = state.topology_is_file ? Tr("topology file...")
                              : this_machine         ? Tr("This machine")
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
    if (ImGui::Selectable(Tr("This machine"), this_machine)) {
      state.topology_is_file = false;
      s.topology = kThisMachineTopology;
    }
    if (ImGui::IsItemHovered()) {
      const std::string unavailable = ThisMachineUnavailable(s.device_profile);
      ImGui::SetTooltip("%s", unavailable.empty()
                                  ? Tr("The machine the run uses: the GPUs detected here, or a device profile's GPU;\n"
                                       "ranks beyond its GPUs are virtual devices sharing their GPU's HBM")
                                  : unavailable.c_str());
    }
    if (ImGui::Selectable(Tr("topology file..."), state.topology_is_file)) {
      state.topology_is_file = true;
      if (state.topology_file.empty()) state.topology_file = "assets/topologies/example-workstation.toml";
    }
    ImGui::EndCombo();
  }
  if (state.topology_is_file) {
    FieldLabel(Tr("File"));
    ImGui::InputTextWithHint("##topology_file", "path/to/machine.toml", &state.topology_file);
    s.topology = state.topology_file;
  } else if (this_machine) {
    ThisMachineFields(ctx, s);
  } else if (chosen != nullptr) {
    DimWrapped(theme, chosen->description);
  }
}

void SizeField(const Theme& theme, ScenarioSettings& s) {
  FieldLabel(Tr("Size"));
  std::string size = s.Param("size");
  if (ImGui::InputTextWithHint("##size", "64M, 1G, 4KiB", &size)) s.SetParam("size", size);
  try {
    const Bytes bytes = ParseSize(size, "size");
    DimWrapped(theme, Format(Tr("one rank's buffer: %s (%s B)"), FormatBytes(bytes).c_str(),
                             std::to_string(bytes).c_str()));
  } catch (const std::exception&) {
    // The Check message under the fields says what is wrong.
  }
}

/// "sim", or "cuda (worker process)" for a run that goes through a worker.
std::string BackendLabel(const std::string& backend, bool in_worker) {
  return in_worker ? backend + Tr(" (worker process)") : backend;
}

/// Collectives may also run in a worker process: the simulator (to see
/// the worker at work without hardware) or the backends only a worker
/// runs (BackendTraits::needs_worker: cuda, mpi), which fail with the
/// worker's message where the machine has none. Every declared backend is
/// offered there, those this program runs itself in the app too.
void BackendField(ScenarioSettings& s, bool collective) {
  FieldLabel(Tr("Backend"));
  if (!collective) s.in_worker = false;
  if (ImGui::BeginCombo("##backend", BackendLabel(s.backend, s.in_worker).c_str())) {
    for (const BackendInfo& b : ListBackends()) {
      if (b.traits.needs_worker) continue;
      if (ImGui::Selectable(b.name.c_str(), b.name == s.backend && !s.in_worker)) {
        s.backend = b.name;
        s.in_worker = false;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip(Tr("%s (in the app)"), b.description.c_str());
    }
    if (collective) {
      for (const BackendInfo& b : ListDeclaredBackends()) {
        const std::string label = BackendLabel(b.name, true);
        if (ImGui::Selectable(label.c_str(), s.in_worker && s.backend == b.name)) {
          s.backend = b.name;
          s.in_worker = true;
        }
        if (ImGui::IsItemHovered()) {
          ImGui::SetTooltip("%s", Tr("Runs in 'shardlab-cli worker', a separate process that streams the\n"
                                     "events back: a crash there (a sticky CUDA error, a dead MPI rank)\n"
                                     "ends the worker, never the app."));
        }
      }
    }
    ImGui::EndCombo();
  }
}

/// Real hardware: untimed warm-up runs, then timed runs whose average the
/// metrics show (run_iterations.h); the simulator's time does not change
/// from run to run.
void IterationFields(ScenarioSettings& s) {
  if (BackendTraitsOrDefault(s.backend).simulator) return;
  FieldLabel(Tr("Warm-up runs"));
  int warmup = s.warmup == -1 ? DefaultWarmup(s.backend) : s.warmup;
  if (ImGui::InputInt("##warmup", &warmup, 1, 1)) s.warmup = std::max(0, warmup);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s", Tr("Untimed runs before the timed ones, as nccl-tests' -w: the first run on a GPU\n"
                               "pays for first launches and library set-up, which the times must not include."));
  }
  FieldLabel(Tr("Timed runs"));
  int iters = s.iters;
  if (ImGui::InputInt("##iters", &iters, 1, 1)) s.iters = std::max(1, iters);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s", Tr("Timed runs after the warm-up: the times shown are their average (and the best);\n"
                               "the timeline shows the last one."));
  }
}

/// "Emulate links": a cuda run holds each transfer for its modelled link's
/// time; elsewhere disabled, saying why (link_emulation.h).
void EmulateLinksField(ScenarioSettings& s) {
  const std::string refusal = LinkEmulationRefusal(s.backend);
  bool checked = LinkEmulationOptions(s).emulate_links;
  ImGui::BeginDisabled(!refusal.empty());
  if (ImGui::Checkbox(Tr("Emulate links"), &checked)) s.emulate_links = checked;
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip("%s", refusal.empty() ? Tr("Hold each transfer for the time the machine's link would take, so one\n"
                                                 "GPU shows NVLink against PCIe; the times are labelled emulated.")
                                            : refusal.c_str());
  }
}

/// A worker that died: what happened, and a button to start it again.
void WorkerFailure(const Theme& theme, const Session& session, ScenarioPanelState& state) {
  if (session.worker_failure().empty()) return;
  ImGui::Spacing();
  ErrorWrapped(theme, Format(Tr("The worker process died: %s"), session.worker_failure().c_str()));
  DimWrapped(theme, Tr("The app is fine: the worker ran in its own process."));
  if (ImGui::Button(Tr("Restart worker"), ImVec2(-FLT_MIN, 0))) state.restart_worker = true;
}

void RingOrderField(ScenarioPanelState& state) {
  ScenarioSettings& s = state.edit;
  std::string order = s.Param("ring_order");
  const bool custom = order != "auto" && order != "rank";
  FieldLabel(Tr("Ring order"));
  const char* preview = custom ? Tr("custom") : order == "rank" ? Tr("rank order") : Tr("auto (fastest)");
  if (ImGui::BeginCombo("##ring_order", preview)) {
    if (ImGui::Selectable(Tr("auto (fastest)"), order == "auto")) order = "auto";
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip(Tr("Search the topology for the ring with the fastest slowest hop, as NCCL does"));
    }
    if (ImGui::Selectable(Tr("rank order"), order == "rank")) order = "rank";
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("0 -> 1 -> 2 -> ... -> n-1 -> 0");
    if (ImGui::Selectable(Tr("custom"), custom)) order = state.custom_ring_order;
    ImGui::EndCombo();
  }
  if (order != "auto" && order != "rank") {
    FieldLabel(Tr("Order"));
    ImGui::InputTextWithHint("##ring_custom", "0,3,2,1", &state.custom_ring_order);
    // An emptied field must stay Tr("custom"), not fall back to a keyword.
    order = state.custom_ring_order.empty() ? "," : state.custom_ring_order;
  }
  if (order != s.Param("ring_order")) s.SetParam("ring_order", order);
}

/// The topology named `name`, loaded once per name (null when it cannot be).
const Topology* PanelTopology(const std::string& name) {
  static std::string loaded;
  static std::unique_ptr<Topology> topology;
  if (name != loaded || !topology) {
    loaded = name;
    try {
      topology = std::make_unique<Topology>(LoadScenarioTopology(name));
    } catch (const std::exception&) {
      topology.reset();  // Check explains why
    }
  }
  return topology.get();
}

/// A GPU picker: "none" or GPU0..GPU(n-1); returns the rank or -1.
int RankCombo(const char* id, int rank, int gpus) {
  const std::string shown = rank >= 0 ? "GPU" + std::to_string(rank) : Tr("none");
  if (ImGui::BeginCombo(id, shown.c_str())) {
    if (ImGui::Selectable(Tr("none"), rank < 0)) rank = -1;
    for (int r = 0; r < gpus; ++r) {
      if (ImGui::Selectable(("GPU" + std::to_string(r)).c_str(), r == rank)) rank = r;
    }
    ImGui::EndCombo();
  }
  return rank;
}

/// A link picker over the links with a GPU at an end; returns the index
/// into `choices` or -1.
int LinkCombo(const char* id, int chosen, const std::vector<FaultLinkChoice>& choices) {
  const std::string shown = chosen >= 0 ? choices[static_cast<std::size_t>(chosen)].ref : Tr("none");
  if (ImGui::BeginCombo(id, shown.c_str())) {
    if (ImGui::Selectable(Tr("none"), chosen < 0)) chosen = -1;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (ImGui::Selectable(choices[i].words.c_str(), static_cast<int>(i) == chosen)) chosen = static_cast<int>(i);
    }
    ImGui::EndCombo();
  }
  return chosen;
}

/// The index in `choices` of the link `text` names first ("gpu0-gpu3:5",
/// "0-3@2"), or -1.
int ChosenLink(const std::string& text, const std::vector<FaultLinkChoice>& choices, const Topology& topology) {
  const std::size_t end = text.find_first_of(":@,");
  const std::string ref = text.substr(0, end);
  for (std::size_t dash = ref.find('-'); dash != std::string::npos; dash = ref.find('-', dash + 1)) {
    auto node = [&](const std::string& word) {
      const int named = topology.FindNode(word);
      if (named >= 0 || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return named;
      const int rank = std::atoi(word.c_str());
      return rank < topology.num_gpus() ? topology.gpus[static_cast<std::size_t>(rank)] : -1;
    };
    const int a = node(ref.substr(0, dash));
    const int b = node(ref.substr(dash + 1));
    for (std::size_t i = 0; i < choices.size(); ++i) {
      const Link& l = topology.links[static_cast<std::size_t>(choices[i].link)];
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string Real(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// The Faults panel: the scenario's fault switches (the spec's slow_rank,
/// throttle_link, fail_link, fail_rank), each with a picker that writes its
/// text as the CLI spells it, and the text itself for lists.
void FaultsPanel(const Theme& theme, ScenarioSettings& s, const ScenarioSpec& spec,
                 const std::vector<PanelField>& fields) {
  bool any = false;
  for (const PanelField& f : fields) any = any || f.value != "none";
  ImGui::Spacing();
  if (!ImGui::CollapsingHeader(Tr("Faults: stragglers and failures"), any ? ImGuiTreeNodeFlags_DefaultOpen : 0)) return;
  const Topology* topology = PanelTopology(s.topology);
  const int gpus = topology != nullptr ? topology->num_gpus() : 0;
  const std::vector<FaultLinkChoice> links =
      topology != nullptr ? FaultLinkChoices(*topology) : std::vector<FaultLinkChoice>{};
  for (const PanelField& f : fields) {
    const ParamSpec* param = spec.FindParam(f.name);
    if (param == nullptr) continue;
    std::string text = f.value;
    const bool single = text.find(',') == std::string::npos;
    ImGui::PushID(f.name.c_str());
    ImGui::TextUnformatted(f.label.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.help.c_str());
    const float half = ImGui::GetContentRegionAvail().x * 0.55f;
    try {
      if (f.name == "slow_rank" && single) {
        SlowRank v = text == "none" ? SlowRank{-1, 2.0} : ParseSlowRank(text);
        ImGui::SetNextItemWidth(half);
        const int rank = RankCombo("##rank", v.rank, gpus);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-FLT_MIN);
        float factor = static_cast<float>(v.factor);
        const bool slid = ImGui::SliderFloat("##factor", &factor, 1.0f, 10.0f, Tr("x%.2g slower"), ImGuiSliderFlags_Logarithmic);
        if (rank != v.rank || slid) text = rank < 0 ? "none" : std::to_string(rank) + ":" + Real(std::max(1.0f, factor));
      } else if (f.name == "fail_rank" && single) {
        RankFailure v = text == "none" ? RankFailure{-1, 1} : ParseRankFailure(text);
        ImGui::SetNextItemWidth(half);
        const int rank = RankCombo("##rank", v.rank, gpus);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-FLT_MIN);
        int step = v.step;
        const bool stepped = ImGui::InputInt("##step", &step);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", Tr("the logical step it fails at"));
        if (rank != v.rank || stepped) text = rank < 0 ? "none" : std::to_string(rank) + "@" + std::to_string(std::max(0, step));
      } else if ((f.name == "throttle_link" || f.name == "fail_link") && single && topology != nullptr) {
        const bool throttle = f.name == "throttle_link";
        const int chosen = text == "none" ? -1 : ChosenLink(text, links, *topology);
        ImGui::SetNextItemWidth(half);
        const int picked = LinkCombo("##link", chosen, links);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-FLT_MIN);
        if (throttle) {
          double gbps = text == "none" ? 5.0 : ParseLinkThrottle(text).gbps;
          const bool typed_gbps = ImGui::InputDouble("##gbps", &gbps, 0, 0, "%g GB/s");
          if (picked != chosen || (typed_gbps && picked >= 0))
            text = picked < 0 ? "none" : links[static_cast<std::size_t>(picked)].ref + ":" + Real(std::max(gbps, 1e-3));
        } else {
          int step = text == "none" ? 1 : ParseLinkFailure(text).step;
          const bool stepped = ImGui::InputInt("##step", &step);
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", Tr("the logical step it fails at"));
          if (picked != chosen || (stepped && picked >= 0))
            text = picked < 0 ? "none" : links[static_cast<std::size_t>(picked)].ref + "@" + std::to_string(std::max(0, step));
        }
      }
    } catch (const std::exception&) {
      // A value the picker cannot read (being typed): the text field below has it.
    }
    // The text as the CLI and a lab spell it; a list ("3:2,5:1.5") only here.
    ImGui::SetNextItemWidth(-FLT_MIN);
    std::string typed = text;
    ImGui::InputTextWithHint("##text", param->value_name.c_str(), &typed);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n(a comma-separated list, or none)", f.help.c_str());
    if (typed != text) text = typed;
    if (text != f.value) SetParamText(&s, spec, *param, text.empty() ? "none" : text);
    ImGui::PopID();
  }
  DimWrapped(theme, Tr("The simulator applies all four; a throttle also moves the automatic ring. The views mark "
                       "the affected GPU or link."));
}

/// The scenario's fields, from its spec: those its spec names a widget of
/// their own for (scenario_panels.h: the algorithm, the schedule, ZeRO's
/// stage, ...), every other one drawn from its type, range, unit and help.
void SpecFields(ViewContext& ctx, ScenarioPanelState& state) {
  const Theme& theme = ctx.theme;
  ScenarioSettings& s = state.edit;
  const ScenarioSpec* spec = SpecOf(s.scenario);
  if (spec == nullptr) return;
  std::vector<PanelField> fault_fields;
  for (const PanelField& f : PanelFields(s, TopologyGpus(s.topology))) {
    if (IsFaultParam(f.name)) {
      fault_fields.push_back(f);  // drawn together in the Faults panel below
    } else if (const ScenarioFieldWidget* widget = FieldWidgetOf(spec->name, f.name)) {
      widget->draw(ctx, state, f);
    } else {
      SpecField(f, s, *spec);
    }
  }
  // The scenario's own lines under its fields (its spec names them: scenario_panels.h).
  if (const ScenarioPanel* summary = PanelOf(spec->name, PanelSlot::kSummary)) summary->draw(ctx, &s);
  if (!fault_fields.empty()) FaultsPanel(theme, s, *spec, fault_fields);
}

/// Bullets, each a wrapped line.
template <class Lines>
void Bullets(const Lines& lines) {
  for (const char* line : lines) {
    ImGui::Bullet();
    ImGui::TextWrapped("%s", line);
  }
}

/// A few lines for someone who has never seen the app: what each panel
/// says; the scenario's own when its spec names them (scenario_panels.h),
/// else a collective's.
void HowToRead(ViewContext& ctx, const ScenarioSettings& s) {
  const Theme& theme = ctx.theme;
  ImGui::Spacing();
  if (!ImGui::CollapsingHeader(Tr("How to read this"), ImGuiTreeNodeFlags_DefaultOpen)) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  const ScenarioSpec* spec = SpecOf(s.scenario);
  if (const ScenarioPanel* own = spec != nullptr ? PanelOf(spec->name, PanelSlot::kHowToRead) : nullptr) {
    own->draw(ctx, &s);
  } else {
    // Built each frame: Tr answers in the language chosen now.
    const char* const kCollectiveLines[] = {
        Tr("Step (Right arrow) shows one more logical step of the algorithm; Play runs them in "
        "slow motion. The run itself took microseconds."),
        Tr("Machine: dots are chunks in flight along their route; a link's colour is its load."),
        Tr("Buffers: what each GPU holds after the step shown."),
        Tr("Timeline: every send and receive per GPU; hover an op for its bytes and bandwidth, click it to "
           "follow it (Details, its route on the machine); Critical path outlines what sets the end."),
        Tr("Metrics: time, algbw and busbw as nccl-tests reports them, beside the formula."),
    };
    Bullets(kCollectiveLines);
  }
  ImGui::PopStyleColor();
}

}  // namespace

// The lines under each scenario's fields that its spec names (scenario_panels.cpp's table).
void DrawPipelineSettingsSummary(ViewContext& ctx, const ScenarioSettings* s) {
  if (s != nullptr) PipelineSummary(ctx.theme, *s);
}
void DrawTpSettingsSummary(ViewContext& ctx, const ScenarioSettings* s) {
  if (s != nullptr) TpSummary(ctx.theme, *s);
}
void DrawZeroSettingsSummary(ViewContext& ctx, const ScenarioSettings* s) {
  if (s != nullptr) ZeroSummary(ctx.theme, *s);
}
void DrawThreeDSettingsSummary(ViewContext& ctx, const ScenarioSettings* s) {
  if (s != nullptr) ThreeDSummary(ctx.theme, *s);
}
void DrawMoeSettingsSummary(ViewContext& ctx, const ScenarioSettings*) { MoeSummary(ctx.theme); }

// What each panel shows for a scenario (its spec names them: scenario_panels.h).
void DrawPipelineHowToRead(ViewContext&, const ScenarioSettings*) {
  const char* const kPipelineLines[] = {
      Tr("Each GPU is one pipeline stage holding a slice of the model's layers. Step shows one "
      "more tick of the schedule; Play runs the training step in slow motion."),
      Tr("Timeline: F3 is the forward of micro-batch 3, B3 its backward (W3 its weight gradient "
      "in ZB-H1); one colour per micro-batch. Hatched gaps are the bubble: a stage waiting."),
      Tr("Machine: activations flow to the next stage, gradients back to the previous one."),
      Tr("Metrics: the measured bubble beside the formula, activations held per stage, and "
      "whether the trained weights equal one device's."),
  };
  Bullets(kPipelineLines);
}
void DrawTpHowToRead(ViewContext&, const ScenarioSettings*) {
  const char* const kTpLines[] = {
      Tr("One layer's weights are split over the GPUs: Weights (bottom right) shows every matrix "
      "and which GPU holds which block, in that GPU's colour. Lit blocks are computing now."),
      Tr("Column-parallel weights need no communication forward; row-parallel ones leave each "
      "GPU with a partial sum, which an all-reduce (AR) adds up. Backward it is the reverse."),
      Tr("Machine: AR1 RS\xC2\xB7" "B is chunk B of all-reduce 1 in its reduce-scatter pass; the line "
      "above the GPUs says which all-reduce runs and what it carries."),
      Tr("Metrics: compute against communication, the all-reduces counted and sized (T x H x 4 B), "
      "and whether every output and gradient equals one GPU's."),
  };
  Bullets(kTpLines);
}
void DrawZeroHowToRead(ViewContext&, const ScenarioSettings*) {
  const char* const kZeroLines[] = {
      Tr("Every GPU trains the same MLP on its own rows of the batch. The stage decides who keeps "
      "which model state: Memory (bottom right) stacks each GPU's bytes by kind, measured from "
      "what the simulator allocated, with the formula as a line. Run stages 0, 1, 2, 3 in turn."),
      Tr("Hatched blocks come and go: stage 2's bucket of full gradients until its reduce-scatter, "
      "stage 3's gathered layer until its last matrix product. Step or Play to watch them."),
      Tr("Machine and Timeline: AG L3 fwd·" "B is chunk B of the all-gather of layer 3's parameters "
      "before its forward; RS b1 the reduce-scatter of bucket 1's gradients; AG b1 upd the updated "
      "parameters; AR b0 a stage-0 all-reduce."),
      Tr("Metrics: memory per GPU against the formula, elements sent per step against 2Ψ "
      "(3Ψ for stage 3), and whether the trained weights equal one GPU's."),
  };
  Bullets(kZeroLines);
}
void DrawThreeDHowToRead(ViewContext&, const ScenarioSettings*) {
  const char* const kThreeDLines[] = {
      Tr("Every GPU has a coordinate (dp, pp, tp). Machine: choose Colour by TP group, PP stage or "
      "DP replica; the legend lists each group's ranks, and the TP/PP/DP toggles light the links "
      "that kind of traffic uses."),
      Tr("Timeline: rows grouped by stage, then replica; collectives say TP, PP or DP and hover "
      "names the group."),
      Tr("Metrics: step time, compute against what was not hidden, bytes per group kind, memory, "
      "MFU, and whether the trained weights equal one device's."),
  };
  Bullets(kThreeDLines);
}
void DrawMoeHowToRead(ViewContext&, const ScenarioSettings*) {
  const char* const kMoeLines[] = {
      Tr("Each token's router picks top-k experts; dispatch sends it to their GPUs (all-to-all), "
      "the experts compute, combine sends the results back."),
      Tr("Timeline: router, dispatch, expert and combine have their own colours; with skew 'hot' "
      "the GPU of expert 0 computes longest and the others wait for it in the combine."),
      Tr("Metrics: tokens per expert, dropped tokens, the straggler and its load against the mean."),
  };
  Bullets(kMoeLines);
}

// The parameters with a widget of their own (scenario_panels.cpp's table).
void DrawAlgoField(ViewContext&, ScenarioPanelState& state, const PanelField&) { AlgoCombo(state.edit); }
void DrawSizeField(ViewContext& ctx, ScenarioPanelState& state, const PanelField&) { SizeField(ctx.theme, state.edit); }
void DrawRingOrderField(ViewContext&, ScenarioPanelState& state, const PanelField&) { RingOrderField(state); }
void DrawScheduleField(ViewContext&, ScenarioPanelState& state, const PanelField& f) {
  std::string schedule = f.value;
  ScheduleCombo(schedule, f.choices);
  if (schedule != f.value) state.edit.SetParam(f.name, schedule);
}
void DrawTpLayerField(ViewContext&, ScenarioPanelState& state, const PanelField&) { TpLayerCombo(state.edit); }
void DrawSequenceParallelField(ViewContext&, ScenarioPanelState& state, const PanelField& f) {
  SequenceParallelBox(state.edit, f);
}
void DrawZeroStageField(ViewContext&, ScenarioPanelState& state, const PanelField& f) { ZeroStageCombo(state.edit, f); }
void DrawZeroKField(ViewContext&, ScenarioPanelState& state, const PanelField& f) { ZeroKCombo(state.edit, f); }

bool DrawScenarioPanel(ViewContext& ctx, ScenarioPanelState& state) {
  const Theme& theme = ctx.theme;
  ScenarioSettings& s = state.edit;

  // The label column fits the widest label of the fields shown.
  g_label_width = ImGui::CalcTextSize(Tr("Scenario")).x;
  for (const PanelField& f : PanelFields(s, TopologyGpus(s.topology))) {
    g_label_width = std::max(g_label_width, ImGui::CalcTextSize(f.label.c_str()).x);
  }
  if (!BackendTraitsOrDefault(s.backend).simulator) g_label_width = std::max(g_label_width, ImGui::CalcTextSize(Tr("Warm-up runs")).x);
  if (IsThisMachine(s.topology)) g_label_width = std::max(g_label_width, ImGui::CalcTextSize(Tr("Device profile")).x);
  g_label_width += ImGui::GetStyle().ItemSpacing.x * 2;

  const bool collective = ScenarioCombo(s);
  // A scenario the app runs with no machine parameter shows a recorded
  // trace (Model vs measurement): the machine, the backend and the runs
  // are the trace's, and the model is the simulator's.
  const ScenarioSpec* spec = SpecOf(s.scenario);
  const bool recorded = spec != nullptr && RunsInApp(spec->name) && spec->FindParam("topology") == nullptr;
  if (!recorded) TopologyField(ctx, state);
  SpecFields(ctx, state);
  if (!recorded) {
    BackendField(s, collective);
    IterationFields(s);
    if (collective) EmulateLinksField(s);
    // Every scenario has the box; one without the parameter keeps its
    // value aside, unused (ScenarioSettings::SetParam).
    bool timing_only = s.Flag("timing_only");
    if (ImGui::Checkbox(Tr("Timing only (skip the data)"), &timing_only)) {
      s.SetParam("timing_only", timing_only ? "true" : "false");
    }
    test_log::MarkItem("field timing_only");
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s", Tr("Time the run without moving real numbers: paper-sized runs in seconds,\n"
                                 "but the result is not checked."));
    }
  }

  // Check is cached by the session, so calling it every frame is cheap.
  const std::string problem = ctx.session.Check(s);
  if (!problem.empty()) ErrorWrapped(theme, problem);

  ImGui::Spacing();
  bool run = false;
  ImGui::BeginDisabled(!problem.empty());
  const bool running = ctx.session.state() == SessionState::kRunning;
  // One ID for both labels: a press on "Restart run" released as the run ends is still a click.
  const std::string run_label = std::string(running ? Tr("Restart run") : Tr("Run")) + "###run";
  if (ImGui::Button(run_label.c_str(), ImVec2(-FLT_MIN, 0))) run = true;
  test_log::MarkItem("run");
  ImGui::EndDisabled();
  if (run) return true;

  const PreparedCollective* prepared = CollectiveOf(ctx.session.prepared());
  if (const LoadedTrace* trace = ctx.session.trace()) {
    DimWrapped(theme, Format(Tr("Showing the trace %s (%s, %s clock). Run starts a new run from the fields above."),
                             trace->source.c_str(),
                             trace->backend.empty() ? Tr("unknown backend") : trace->backend.c_str(),
                             trace->clock.c_str()));
  }
  if (!ctx.session.worker_failure().empty()) {
    WorkerFailure(theme, ctx.session, state);
  } else if (ctx.session.state() == SessionState::kFailed) {
    ErrorWrapped(theme, Format(Tr("The last run failed: %s"), ctx.session.error().c_str()));
  } else if (ctx.session.plan() != nullptr && !(s == state.last_run) && problem.empty()) {
    DimWrapped(theme, Tr("Changed: press Run to record the new run."));
  }

  if (prepared != nullptr && !prepared->ring_order.empty()) {
    // Long rings keep their first hops and the way back: 1,024 numbers help no one.
    constexpr std::size_t kShownHops = 12;
    const std::vector<int>& ring = prepared->ring_order;
    const std::string arrow = " \xE2\x86\x92 ";
    std::string order;
    for (std::size_t i = 0; i < ring.size(); ++i) {
      if (ring.size() > kShownHops + 2 && i == kShownHops) {
        order += arrow + "... (" + Format(Tr("%d GPUs"), static_cast<int>(ring.size())) + ")" + arrow + std::to_string(ring.back());
        break;
      }
      order += (i == 0 ? "" : arrow) + std::to_string(ring[i]);
    }
    ImGui::Spacing();
    DimWrapped(theme, Format(Tr("Ring: %s (%s)"), order.c_str(), prepared->ring_order_mode.c_str()));
  }
  HowToRead(ctx, s);
  return false;
}

}  // namespace shardlab::gui
