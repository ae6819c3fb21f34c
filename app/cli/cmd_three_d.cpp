// `shardlab-cli run 3d`: DP × PP × TP training. With --model small one real
// step of the MLP, checked against one device; with a preset such as
// gpt3-175b a timing-only step at paper scale: step time, its compute /
// communication split, traffic per group kind, memory per GPU and MFU.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli/scenario_run.h"
#include "engine/core/units.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab::cli {
namespace {

std::string Percent(double part, double whole) {
  return whole > 0 ? FormatFixed(100.0 * part / whole, 1) + "%" : "-";
}

/// What the spec cannot check: flags of the other kind of model, a real
/// step too large for the host.
void CheckFlags(const ParsedArgs& args, const std::string&, ScenarioParams& params) {
  const ThreeDScenario s = ThreeDFromParams(params);
  if (!s.timing_only())
    for (const char* flag : {"micro-batch", "global-batch", "buckets"})
      if (args.Has(flag))
        throw UsageError(args.Spelling(flag) + ": only for a --model preset (the small model uses --batch and --microbatches)");
  if (s.timing_only()) {
    for (const char* flag : {"layers", "width", "batch", "microbatches", "optimizer", "lr"})
      if (args.Has(flag))
        throw UsageError(args.Spelling(flag) + ": only for --model small (" + s.model +
                         " brings its own shape and batch)");
  }
  if (s.timing_only()) params.Set("timing_only", "true");  // a preset runs without data
  if (!s.timing_only()) {
    const double flops = 6.0 * s.mlp.batch * double(s.mlp.width) * s.mlp.width * s.mlp.layers;
    if (flops > kMaxHostFlops)
      throw Error("width: one real step is " + FormatFixed(flops / 1e9, 0) +
                  " GFLOP of host arithmetic, above the 20 GFLOP this command computes "
                  "(choose a smaller --width, --layers or --batch, or a --model preset)");
  }
}

std::string GroupExample(const std::vector<std::vector<int>>& groups) {
  const std::vector<int>& g = groups.front();
  std::string text = "{";
  for (std::size_t i = 0; i < g.size() && i < 4; ++i) text += (i ? "," : "") + std::to_string(g[i]);
  if (g.size() > 4) text += ",..," + std::to_string(g.back());
  return text + "}";
}

void PrintText(std::ostream& out, const PreparedThreeD& p, const ThreeDSummary& s) {
  const ParallelGrid& g = p.three_d.params.grid;
  out << "# grid " << g.Text() << " = " << g.ranks()
      << " GPUs, Megatron order: rank = pp*(dp_size*tp_size) + dp*tp_size + tp\n"
      << "#   TP groups " << g.dp * g.pp << " x " << g.tp << " ranks, e.g. "
      << GroupExample(g.TpGroups()) << "   DP groups " << g.pp * g.tp << " x " << g.dp
      << ", e.g. " << GroupExample(g.DpGroups()) << "   PP groups " << g.dp * g.tp << " x "
      << g.pp << ", e.g. " << GroupExample(g.PpGroups()) << "\n";
  for (const std::string& w : p.warnings) out << "# warning: " << w << "\n";
  out << "#\n# step time            " << FormatTime(s.step_ns) << "   (" << s.microbatches
      << " micro-batches per replica)\n"
      << "#   compute            " << FormatTime(s.compute_ns) << "  " << Percent(s.compute_ns, s.step_ns)
      << "   (the busiest GPU's compute lane)\n"
      << "#   not hidden         " << FormatTime(s.exposed_ns) << "  " << Percent(s.exposed_ns, s.step_ns)
      << "   (communication and pipeline bubble; bubble formula (p-1)/m = "
      << FormatFixed(s.bubble_formula, 3) << " of compute)\n"
      << "#\n# group  bytes sent per GPU  send time per GPU   (busiest GPU of each kind)\n";
  const char* what[kGroupKindCount] = {"TP all-reduces of activations and their gradients",
                                       "activations and gradients between stages",
                                       p.three_d.params.zero_stage ? "ZeRO-1 gradient reduce-scatter + parameter all-gather"
                                                                   : "gradient all-reduce"};
  for (int k = 0; k < kGroupKindCount; ++k) {
    const ThreeDGroupTraffic& t = s.traffic[k];
    out << "# " << std::left << std::setw(5) << GroupKindName(GroupKind(k)) << std::right
        << std::setw(20) << FormatBytes(t.max_sent_bytes_per_rank) << std::setw(19)
        << FormatTime(t.max_busy_ns_per_rank) << "   " << what[k] << "\n";
  }
  out << "#\n";
  if (p.scenario.timing_only()) {
    const double total = s.memory.model_states_bytes + s.memory.activations_bytes;
    const Bytes gpu_bytes = p.topology.nodes[p.topology.gpus[0]].device.memory_bytes;
    out << "# memory per GPU       " << FormatBytes(static_cast<Bytes>(total)) << " = model states "
        << FormatBytes(static_cast<Bytes>(s.memory.model_states_bytes))
        << " (fp16 weights and gradients, 12 B/param of Adam state"
        << (p.three_d.params.zero_stage ? " over dp" : "") << ") + activations "
        << FormatBytes(static_cast<Bytes>(s.memory.activations_bytes))
        << " (sbh(10+24/t+5as/(ht)) per layer, no recomputation)";
    if (gpu_bytes > 0)
      out << "\n#                      the GPU has " << FormatBytes(gpu_bytes)
          << (s.memory.model_states_bytes > gpu_bytes
                  ? ": does NOT fit; the model states alone exceed it (try --zero-stage 1, or more --pp)"
              : total > gpu_bytes ? ": does NOT fit without activation recomputation"
                                  : ": fits");
    out << "\n";
  } else {
    out << "# memory per GPU       " << FormatBytes(s.memory.tracked_peak_bytes)
        << " peak (every fp32 buffer of the busiest GPU, as the simulator allocated them)\n";
  }
  const double unit = s.model_flops >= 1e12 ? 1e12 : s.model_flops >= 1e9 ? 1e9 : 1e6;
  out << "# MFU                  " << FormatFixed(100.0 * s.mfu, 1) << "%   ("
      << FormatFixed(s.model_flops / unit, 1)
      << (unit == 1e12 ? " TFLOP" : unit == 1e9 ? " GFLOP" : " MFLOP")
      << " per step / (step time x " << g.ranks() << " GPUs x "
      << FormatFixed(p.peak_flops_per_gpu / 1e12, 1) << " TFLOP/s "
      << (p.scenario.timing_only() ? "fp16 tensor-core" : "fp32") << " peak))\n";
  out << "# plan                 " << s.ops << " ops\n";
  if (p.scenario.timing_only())
    out << "# approximation: one compute op per stage, micro-batch and pass with its layers'\n"
        << "#   FLOPs, and one TP all-reduce with the bytes of its 2 per layer (latency paid\n"
        << "#   once); DP gradients in " << p.scenario.dp_buckets
        << " buckets after the last backward, not overlapped.\n"
        << "# peak: the matmuls run at the GPU's full fp16 peak, so this MFU is an upper\n"
        << "#   bound (only the bubble and communication are lost). Real runs reach about\n"
        << "#   half: Megatron-LM measured ~140 TFLOP/s per A100 for GPT-3 175B (45% MFU);\n"
        << "#   `plan` assumes 50% of the peak (--efficiency).\n";
}

std::string StepResultText(const RunView& v) {
  const ThreeDSummary& s = v.summary.Detail<ThreeDSummary>();
  if (!s.check.checked) return "not checked (" + s.check.not_checked_reason + ")";
  return StepCheckText(s.check.verdict, "after one step, every gradient and parameter shard and the loss against its "
                       "error bound from the double-precision single-device reference", s.check.loss,
                       s.check.reference_loss, s.check.worst_tensor);
}

void JsonSetup(JsonWriter& w, const RunView& v) {
  w.Field("zero", v.prepared.Detail<PreparedThreeD>().three_d.params.zero_stage);
  w.Field("microbatches", v.summary.Detail<ThreeDSummary>().microbatches);
}

void JsonResult(JsonWriter& w, const RunView& v) {
  const PreparedThreeD& p = v.prepared.Detail<PreparedThreeD>();
  const ThreeDSummary& s = v.summary.Detail<ThreeDSummary>();
  w.Field("step_time_us", s.step_ns / 1e3);
  w.Field("compute_us", s.compute_ns / 1e3);
  w.Field("exposed_us", s.exposed_ns / 1e3);
  w.Field("bubble_formula", s.bubble_formula);
  w.Key("traffic");
  w.BeginObject();
  for (int k = 0; k < kGroupKindCount; ++k) {
    w.Key(GroupKindName(GroupKind(k)));
    w.BeginObject();
    w.Field("max_sent_bytes_per_gpu", s.traffic[k].max_sent_bytes_per_rank);
    w.Field("total_sent_bytes", s.traffic[k].total_sent_bytes);
    w.Field("max_send_time_us_per_gpu", s.traffic[k].max_busy_ns_per_rank / 1e3);
    w.EndObject();
  }
  w.EndObject();
  w.Field("model_states_bytes_per_gpu", s.memory.model_states_bytes);
  w.Field("activation_bytes_per_gpu", s.memory.activations_bytes);
  w.Field("tracked_peak_bytes_per_gpu", s.memory.tracked_peak_bytes);
  w.Field("model_flops", s.model_flops);
  w.Field("mfu", s.mfu);
  w.Key("warnings");
  w.BeginArray();
  for (const std::string& warning : p.warnings) w.String(warning);
  w.EndArray();
  WriteCheckJson(w, s.check.checked, s.check.correct,
                 {{"weight_error", s.check.weight_error}, {"gradient_error", s.check.gradient_error},
                  {"loss", s.check.loss}, {"reference_loss", s.check.reference_loss}},
                 s.check.not_checked_reason);

}

}  // namespace

void ThreeDRenderers(RunCommand& c) {
  c.adjust = CheckFlags;
  c.bind = BindBackendAndSeed<PreparedThreeD>;
  c.header = [](const PreparedView& v) {
    return std::vector<std::string>{v.prepared.plan.name + " on " + v.prepared.Detail<PreparedThreeD>().scenario.topology};
  };
  c.tables = [](std::ostream& out, const RunView& v) {
    PrintText(out, v.prepared.Detail<PreparedThreeD>(), v.summary.Detail<ThreeDSummary>());
  };
  c.result = StepResultText;
  c.json_setup = JsonSetup;
  c.json_result = JsonResult;
  c.rank_labels = [](const Prepared& p) {
    const ParallelGrid& g = p.Detail<PreparedThreeD>().three_d.params.grid;
    std::vector<std::string> labels;
    for (int r = 0; r < g.ranks(); ++r) labels.push_back(GridCoordText(g, r));
    return labels;
  };
}

}  // namespace shardlab::cli
