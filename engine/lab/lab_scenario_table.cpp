// Lab scenarios' table: every scenario's parameters (name, kind, default)
// and measured quantities (name, units), and the check of one parameter
// against its row. lab_scenario.cpp maps the parameters onto the engine's
// scenarios and runs them.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "engine/core/units.h"
#include "engine/lab/lab_scenario.h"
#include "engine/model/model_presets.h"
#include "engine/model/zero_memory.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

using K = LabParamKind;

std::vector<LabScenarioSpec> BuildScenarios() {
  std::vector<LabScenarioSpec> all;

  LabScenarioSpec collective;
  collective.name = "collective";
  collective.help = "one collective (ring or tree all-reduce, ...) on a simulated machine";
  collective.params = {
      {"kind", K::kChoice, "allreduce",
       {"allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall"},
       "the collective"},
      {"algo", K::kChoice, "ring", {"ring", "tree", "direct"}, "the algorithm"},
      {"ranks", K::kInteger, "8", {}, "GPUs taking part; rank r on GPU r"},
      {"size", K::kSize, "16M", {}, "one rank's buffer"},
      {"dtype", K::kChoice, "f32", {"f32", "f16", "bf16"}, "element type"},
      {"root", K::kInteger, "0", {}, "root of broadcast and reduce"},
      {"topology", K::kTopology, "dgx-a100", {}, "a topology preset"},
      {"ring_order", K::kText, "auto", {}, "auto, rank, or a list \"0,3,2,1\""},
      {"timing_only", K::kBool, "false", {}, "skip the data"},
  };
  collective.measured = {
      {"time_ns", "ns", "the run, start to last event"},
      {"time_us", "us", "the run, start to last event"},
      {"time_ms", "ms", "the run, start to last event"},
      {"algbw_gbps", "GB/s", "size / time"},
      {"busbw_gbps", "GB/s", "algbw times the collective's bus factor"},
      {"bytes_sent_per_rank", "bytes", "the most bytes any rank sent"},
      {"steps", "", "logical steps of the algorithm"},
      {"predicted_ns", "ns", "the alpha-beta formula's time"},
      {"predicted_us", "us", "the alpha-beta formula's time"},
      {"predicted_ms", "ms", "the alpha-beta formula's time"},
      {"formula_bandwidth_gbps", "GB/s", "the formula's B: slowest route used"},
      {"formula_alpha_us", "us", "the formula's alpha: that route's latency"},
  };
  all.push_back(collective);

  LabScenarioSpec pipeline;
  pipeline.name = "pipeline";
  pipeline.help = "pipeline-parallel training of a small MLP for one step";
  pipeline.params = {
      {"schedule", K::kChoice, "1f1b", {"gpipe", "1f1b", "interleaved", "zb-h1"}, "the schedule"},
      {"stages", K::kInteger, "4", {}, "p, one GPU each"},
      {"microbatches", K::kInteger, "8", {}, "m"},
      {"chunks", K::kInteger, "1", {}, "v, model chunks per stage (interleaved)"},
      {"layers", K::kInteger, "8", {}, "layers of the MLP"},
      {"width", K::kInteger, "512", {}, "features per layer"},
      {"batch", K::kInteger, "64", {}, "rows of the global batch"},
      {"topology", K::kTopology, "dgx-a100", {}, "a topology preset"},
      {"timing_only", K::kBool, "false", {}, "skip the data"},
  };
  pipeline.measured = {
      {"time_ms", "ms", "the whole step, optimizer included"},
      {"span_ms", "ms", "first forward to last backward"},
      {"bubble_fraction", "", "idle / busy over the stages"},
      {"formula_bubble_fraction", "", "(p-1)/m, (p-1)/(v m), (p-1)/(3m)"},
      {"bubble_share_of_step", "", "idle / (p span)"},
      {"formula_bubble_share_of_step", "", "(p-1)/(m+p-1)"},
      {"peak_inflight", "micro-batches", "most activations any stage holds"},
      {"formula_peak_inflight", "micro-batches", "the schedule's formula, largest stage"},
      {"peak_inflight_last", "micro-batches", "the last stage's peak"},
      {"transfers", "", "sends between stages"},
      {"transfer_bytes", "bytes", "bytes of those sends"},
      {"steps", "", "logical steps (schedule ticks)"},
  };
  all.push_back(pipeline);

  LabScenarioSpec tp;
  tp.name = "tp";
  tp.help = "one tensor-parallel (Megatron) layer, forward and backward";
  tp.params = {
      {"layer", K::kChoice, "mlp", {"column", "row", "mlp", "attention", "transformer"}, "layer"},
      {"batch", K::kInteger, "1", {}, "B"},
      {"seq", K::kInteger, "64", {}, "S"},
      {"hidden", K::kInteger, "64", {}, "H"},
      {"ffn", K::kInteger, "0", {}, "F (0: the layer's default)"},
      {"heads", K::kInteger, "0", {}, "attention heads (0: H/128)"},
      {"tp", K::kInteger, "2", {}, "ranks the layer is split over"},
      {"sequence_parallel", K::kBool, "false", {}, "Megatron's sequence parallelism"},
      {"dtype", K::kChoice, "f32", {"f32", "f16"}, "element type (f16: timing only)"},
      {"topology", K::kTopology, "dgx-a100", {}, "a topology preset"},
      {"timing_only", K::kBool, "false", {}, "skip the data"},
  };
  tp.measured = {
      {"time_ms", "ms", "forward and backward of the layer"},
      {"compute_ms", "ms", "the busiest rank's compute"},
      {"comm_ms", "ms", "time during which a collective runs"},
      {"comm_fraction", "", "comm_ms / time_ms"},
      {"forward_allreduces", "", "all-reduces in the forward pass"},
      {"backward_allreduces", "", "all-reduces in the backward pass"},
      {"allreduce_tensor_bytes", "bytes", "T x H x dtype"},
      {"allreduce_ms", "ms", "mean span of one collective"},
      {"formula_allreduce_ms", "ms", "2(n-1)/n M/B + 2(n-1) alpha"},
      {"ring_gbps", "GB/s", "the ring's slowest hop"},
      {"hosts", "", "hosts the tp GPUs sit in"},
  };
  all.push_back(tp);

  LabScenarioSpec zero;
  zero.name = "zero";
  zero.help = "data parallel / ZeRO stages 0-3 training of a small MLP with Adam";
  zero.params = {
      {"stage", K::kInteger, "0", {}, "0 (data parallel), 1, 2, 3"},
      {"ranks", K::kInteger, "4", {}, "N"},
      {"params", K::kCount, "0", {}, "model size (0: layers x width)"},
      {"layers", K::kInteger, "8", {}, "layers of the MLP"},
      {"width", K::kInteger, "64", {}, "features per layer"},
      {"batch", K::kInteger, "32", {}, "rows of the global batch"},
      {"steps", K::kInteger, "1", {}, "training steps"},
      {"bucket", K::kSize, "25M", {}, "gradient bucket"},
      {"overlap", K::kBool, "true", {}, "reduce buckets during the backward"},
      {"topology", K::kTopology, "dgx-a100", {}, "a topology preset"},
      {"timing_only", K::kBool, "false", {}, "skip the data"},
  };
  zero.measured = {
      {"parameter_count", "", "parameters of the model that ran"},
      {"memory_per_gpu_bytes", "bytes", "largest rank's model states as allocated"},
      {"formula_memory_per_gpu_bytes", "bytes", "ZeRO paper formula, K = 12"},
      {"seed_formula_memory_per_gpu_bytes", "bytes", "seed texts' formula, K = 8"},
      {"peak_memory_per_gpu_bytes", "bytes", "largest rank's peak of all buffers"},
      {"sent_elements_per_step", "elements", "most any rank sent per step"},
      {"formula_elements_per_step", "elements", "2(N-1)/N psi or 3(N-1)/N psi"},
      {"time_ms", "ms", "one training step"},
      {"comm_ms", "ms", "rank 0's time with communication in flight, per step"},
      {"exposed_comm_ms", "ms", "rank 0's communication with no compute beside it, per step"},
      {"collectives_per_step", "", "collectives per step"},
  };
  all.push_back(zero);

  LabScenarioSpec memory;
  memory.name = "memory";
  memory.help = "ZeRO model-state bytes per GPU from the formulas (nothing runs)";
  memory.params = {
      {"params", K::kCount, "7.5B", {}, "parameter count"},
      {"ranks", K::kInteger, "64", {}, "N"},
      {"stage", K::kInteger, "0", {}, "0 .. 3"},
      {"k", K::kInteger, "12", {}, "optimizer bytes per parameter"},
  };
  memory.measured = {
      {"memory_per_gpu_bytes", "bytes", "model states per GPU"},
      {"memory_per_gpu_gb", "GB", "the same in 10^9 bytes"},
      {"parameter_bytes", "bytes", "parameters per GPU"},
      {"gradient_bytes", "bytes", "gradients per GPU"},
      {"optimizer_bytes", "bytes", "optimizer states per GPU"},
  };
  all.push_back(memory);

  std::vector<std::string> presets;
  for (const TransformerShape& shape : ModelPresets()) presets.push_back(shape.name);
  std::vector<std::string> models = {"small"};
  models.insert(models.end(), presets.begin(), presets.end());

  LabScenarioSpec three_d;
  three_d.name = "3d";
  three_d.help = "one DP x PP x TP training step: the small MLP checked, or a preset timed";
  three_d.params = {
      {"dp", K::kInteger, "2", {}, "data-parallel replicas"},
      {"pp", K::kInteger, "2", {}, "pipeline stages"},
      {"tp", K::kInteger, "2", {}, "tensor-parallel ranks (consecutive GPUs)"},
      {"zero", K::kInteger, "0", {}, "ZeRO stage over the dp ranks (0 or 1)"},
      {"schedule", K::kChoice, "1f1b", {"1f1b", "gpipe"}, "the pipeline schedule"},
      {"model", K::kChoice, "small", models, "small (the real MLP) or a model preset"},
      {"microbatches", K::kInteger, "4", {}, "small model: micro-batches per replica"},
      {"layers", K::kInteger, "8", {}, "small model: layers of the MLP"},
      {"width", K::kInteger, "256", {}, "small model: features per layer"},
      {"batch", K::kInteger, "64", {}, "small model: rows of the global batch"},
      {"micro_batch", K::kInteger, "0", {}, "preset: sequences per micro-batch (0: its own)"},
      {"global_batch", K::kInteger, "0", {}, "preset: sequences per step (0: its own)"},
      {"topology", K::kTopology, "dgx-a100", {}, "a topology preset"},
      {"timing_only", K::kBool, "false", {}, "true for a preset (no data); false for small"},
  };
  three_d.measured = {
      {"step_time_s", "s", "one training step"},
      {"step_time_ms", "ms", "one training step"},
      {"compute_ms", "ms", "the busiest GPU's compute"},
      {"compute_fraction", "", "compute_ms / step_time_ms"},
      {"bubble_formula", "", "(p-1)/m of the schedule"},
      {"pipeline_microbatches", "", "micro-batches per replica that ran"},
      {"tp_bytes_per_gpu", "bytes", "busiest GPU's bytes sent in TP all-reduces"},
      {"pp_bytes_per_gpu", "bytes", "busiest GPU's bytes sent between stages"},
      {"dp_bytes_per_gpu", "bytes", "busiest GPU's bytes sent for DP gradients"},
      {"tp_time_ms", "ms", "busiest GPU's time sending TP traffic"},
      {"pp_time_ms", "ms", "busiest GPU's time sending PP traffic"},
      {"dp_time_ms", "ms", "busiest GPU's time sending DP traffic"},
      {"parameter_count", "", "parameters of the whole model"},
      {"model_state_bytes", "bytes", "preset: fp16 weights + grads + 12 B/param Adam per GPU"},
      {"activation_bytes", "bytes", "preset: stored activations per GPU, formula"},
      {"memory_per_gpu_bytes", "bytes", "preset: model states + activations; small: tracked peak"},
      {"gpu_memory_bytes", "bytes", "one GPU's memory on the topology"},
      {"fits", "", "1 when memory_per_gpu_bytes <= gpu_memory_bytes"},
      {"model_flops", "FLOP", "model FLOPs of one step"},
      {"mfu", "", "model FLOPs / (step x GPUs x peak)"},
      {"checked", "", "1 when compared with one device (small model)"},
      {"correct", "", "1 when checked and equal to one device"},
  };
  all.push_back(three_d);

  LabScenarioSpec plan;
  plan.name = "plan";
  plan.help = "the 3D planner: every DP x PP x TP layout, ranked by analytic step time";
  plan.params = {
      {"model", K::kChoice, "gpt3-175b", presets, "a model preset"},
      {"gpus", K::kInteger, "512", {}, "GPUs to plan for, the topology's first N"},
      {"topology", K::kTopology, "64x-dgx-a100-ib", {}, "a topology preset"},
      {"gpu_memory", K::kSize, "0", {}, "memory per GPU (0: the GPU's own)"},
      {"global_batch", K::kInteger, "0", {}, "sequences per step (0: the model's)"},
      {"dp", K::kInteger, "0", {}, "a layout to look up (0, 0, 0: none)"},
      {"pp", K::kInteger, "0", {}, "a layout to look up"},
      {"tp", K::kInteger, "0", {}, "a layout to look up"},
  };
  plan.measured = {
      {"feasible_count", "", "configurations that fit"},
      {"rejected_count", "", "configurations rejected"},
      {"rejected_tp_heads", "", "rejected: tp does not divide heads / MLP width"},
      {"rejected_pp_layers", "", "rejected: pp does not divide the layers"},
      {"rejected_tp_crosses_node", "", "rejected: a TP group leaves NVLink"},
      {"rejected_batch", "", "rejected: dp x b does not divide the batch"},
      {"rejected_interleave", "", "rejected: interleaving does not divide"},
      {"rejected_memory", "", "rejected: out of memory"},
      {"usable_memory_bytes", "bytes", "the share of a GPU the estimate may fill"},
      {"best_dp", "", "the fastest layout's dp"},
      {"best_pp", "", "its pp"},
      {"best_tp", "", "its tp"},
      {"best_zero", "", "its ZeRO stage"},
      {"best_micro_batch", "", "its b"},
      {"best_microbatches", "", "its m"},
      {"best_interleave", "", "its v"},
      {"best_recompute", "", "its recomputation: 0 none, 1 selective, 2 full"},
      {"best_step_time_s", "s", "its analytic step time"},
      {"best_mfu", "", "its MFU"},
      {"best_memory_per_gpu_bytes", "bytes", "its memory estimate per GPU"},
      {"layout_feasible", "", "configurations of the given dp, pp, tp that fit"},
      {"layout_rank", "", "the rank of its fastest (1 = best; 0: none fits)"},
      {"layout_step_time_s", "s", "that configuration's step time"},
      {"layout_mfu", "", "its MFU"},
      {"layout_zero", "", "its ZeRO stage"},
  };
  all.push_back(plan);
  return all;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

bool IsWhole(double x) { return std::isfinite(x) && std::floor(x) == x; }

}  // namespace

LabParam LabParamDefault(const LabParamSpec& spec) {
  LabParam p;
  p.name = spec.name;
  switch (spec.kind) {
    case K::kInteger:
    case K::kNumber:
      p.type = LabParamType::kNumber;
      p.number = std::strtod(spec.default_text.c_str(), nullptr);
      break;
    case K::kBool:
      p.type = LabParamType::kBool;
      p.flag = spec.default_text == "true";
      break;
    default: {
      // A plain number default ("0" parameters: none given) is a number,
      // as a lab file would write it; "64M", "7.5B" stay strings.
      const bool digits = !spec.default_text.empty() &&
                          std::all_of(spec.default_text.begin(), spec.default_text.end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (digits && (spec.kind == K::kSize || spec.kind == K::kCount)) {
        p.type = LabParamType::kNumber;
        p.number = std::strtod(spec.default_text.c_str(), nullptr);
      } else {
        p.type = LabParamType::kString;
        p.text = spec.default_text;
      }
      break;
    }
  }
  return p;
}

const LabParamSpec* LabScenarioSpec::FindParam(const std::string& param) const {
  for (const LabParamSpec& p : params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

const LabQuantitySpec* LabScenarioSpec::FindQuantity(const std::string& quantity) const {
  for (const LabQuantitySpec& q : measured) {
    if (q.name == quantity) return &q;
  }
  return nullptr;
}

const std::vector<LabScenarioSpec>& LabScenarios() {
  static const std::vector<LabScenarioSpec> scenarios = BuildScenarios();
  return scenarios;
}

const LabScenarioSpec* FindLabScenario(const std::string& name) {
  for (const LabScenarioSpec& s : LabScenarios()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string LabScenarioNames() {
  std::vector<std::string> names;
  for (const LabScenarioSpec& s : LabScenarios()) names.push_back(s.name);
  return JoinNames(names);
}

void CheckLabParam(const LabParamSpec& spec, const LabParam& param) {
  auto want = [&](const char* what) {
    const char* got = param.type == LabParamType::kString ? "a string"
                      : param.type == LabParamType::kBool ? "a boolean"
                                                          : "a number";
    throw Error(std::string("must be ") + what + ", not " + got);
  };
  switch (spec.kind) {
    case K::kInteger:
      if (param.type != LabParamType::kNumber) want("a whole number");
      if (!IsWhole(param.number) || std::fabs(param.number) > 1e9) {
        throw Error("must be a whole number between -1e9 and 1e9, not " +
                    TomlNumber(param.number));
      }
      return;
    case K::kNumber:
      if (param.type != LabParamType::kNumber) want("a number");
      if (!std::isfinite(param.number)) throw Error("must be a finite number");
      return;
    case K::kSize:
      if (param.type == LabParamType::kNumber) {
        if (!IsWhole(param.number) || param.number < 0 || param.number > 9.0e15) {
          throw Error("must be a whole number of bytes >= 0, not " + TomlNumber(param.number));
        }
        return;
      }
      if (param.type != LabParamType::kString) want("a size (\"64M\" or a number of bytes)");
      {
        Bytes bytes = 0;
        std::string error;
        // ParseSize's message starts with the field name; ours is added by the caller.
        try {
          bytes = ParseSize(param.text, "size");
        } catch (const Error& e) {
          std::string message = e.what();
          if (message.rfind("size: ", 0) == 0) message = message.substr(6);
          throw Error(message);
        }
        (void)bytes;
      }
      return;
    case K::kCount:
      if (param.type == LabParamType::kNumber) {
        if (!std::isfinite(param.number) || param.number < 0) {
          throw Error("must be a parameter count >= 0");
        }
        return;
      }
      if (param.type != LabParamType::kString) want("a parameter count (\"7.5B\" or a number)");
      try {
        ParseParameterCount(param.text);
      } catch (const Error& e) {
        std::string message = e.what();
        if (message.rfind("params: ", 0) == 0) message = message.substr(8);
        throw Error(message);
      }
      return;
    case K::kChoice:
      if (param.type != LabParamType::kString) want("a string");
      if (std::find(spec.choices.begin(), spec.choices.end(), param.text) == spec.choices.end()) {
        throw Error("unknown value '" + param.text + "' (" + JoinNames(spec.choices) + ")");
      }
      return;
    case K::kText:
      if (param.type != LabParamType::kString) want("a string");
      if (param.text.empty()) throw Error("must not be empty");
      return;
    case K::kBool:
      if (param.type != LabParamType::kBool) want("true or false");
      return;
    case K::kTopology: {
      if (param.type != LabParamType::kString) want("a topology preset name");
      std::vector<std::string> names;
      for (const PresetInfo& p : ListTopologyPresets()) {
        if (p.name == param.text) return;
        names.push_back(p.name);
      }
      // Parametric clusters ("16x-dgx-a100-ib") are not in the list: ask the builder.
      try {
        MakeTopologyPreset(param.text);
        return;
      } catch (const Error&) {
      }
      throw Error("'" + param.text + "' is not a topology preset (" + JoinNames(names) +
                  ", <N>x-dgx-a100-ib, <N>x-dgx-h100-ib); lab files cannot name topology files");
    }
  }
}

}  // namespace shardlab
