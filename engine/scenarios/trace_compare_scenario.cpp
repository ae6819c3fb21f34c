#include "engine/scenarios/trace_compare_scenario.h"

#include <cmath>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/io/trace_reader.h"
#include "engine/scenarios/trace_model.h"
#include "engine/topology/device_profile.h"

namespace shardlab {

namespace fs = std::filesystem;

std::string ResolveRepositoryFile(const std::string& field, const std::string& relative) {
  const fs::path path(relative);
  if (relative.empty()) throw Error(field + ": empty (a file under the repository)", ErrorKind::kInvalidInput);
  if (path.is_absolute()) {
    throw Error(field + ": '" + relative + "' is absolute; name a file under the repository (a lab runs the "
                "same everywhere; for other traces use 'shardlab-cli compare TRACE --model SETTINGS')",
                ErrorKind::kInvalidInput);
  }
  for (const fs::path& part : path) {
    if (part == "..") throw Error(field + ": '" + relative + "' leaves the repository ('..')", ErrorKind::kInvalidInput);
  }
  // SHARDLAB_ASSET_DIR is <repository>/assets (engine/CMakeLists.txt).
  const fs::path root = fs::path(SHARDLAB_ASSET_DIR).parent_path();
  std::error_code ec;
  if (fs::is_regular_file(root / path, ec)) return (root / path).string();
  if (fs::is_regular_file(path, ec)) return path.string();
  throw Error(field + ": no file '" + relative + "' under the repository (" + root.string() + ")",
              ErrorKind::kInvalidInput);
}

namespace {

struct Inputs {
  std::string trace_path;
  TraceModelOptions options;
};

Inputs InputsOf(const ScenarioParams& p) {
  Inputs in;
  in.trace_path = ResolveRepositoryFile("trace_file", p.Text("trace_file"));
  try {
    in.options.scenario = ParsePlanSettings(p.Text("plan_settings"));
  } catch (const Error& e) {
    throw Error("plan_settings: " + std::string(e.what()), ErrorKind::kInvalidInput);
  }
  if (p.Text("profile_file") != "none") {
    in.options.profile_source = p.Text("profile_file");
    in.options.profile = LoadDeviceProfile(ResolveRepositoryFile("profile_file", in.options.profile_source));
  }
  in.options.gpus = static_cast<int>(p.Int("model_gpus"));
  if (p.Text("model_issue") != "recorded") in.options.issue = p.Text("model_issue");
  return in;
}

}  // namespace

void CheckTraceCompare(const ScenarioParams& params) { (void)InputsOf(params); }

TraceCompareRun RunTraceCompare(const ScenarioParams& params) {
  const Inputs in = InputsOf(params);
  LoadedTrace trace = ReadChromeTraceFile(in.trace_path);
  trace.source = params.Text("trace_file");  // as the lab names it, the same on every machine
  TraceModel model = ModelTrace(trace, in.options);
  return TraceCompareRun{std::move(trace), std::move(model)};
}

std::map<std::string, double> MeasureTraceCompare(const ScenarioParams& params, std::string* summary) {
  const TraceModel m = RunTraceCompare(params).model;
  const Comparison& c = m.comparison;
  std::map<std::string, double> out;
  out["measured_us"] = c.run.a_ns / 1e3;
  out["model_us"] = c.run.b_ns / 1e3;
  out["ratio"] = c.run.ratio();
  out["error"] = c.run.error();
  out["ops"] = static_cast<double>(c.run.ops);
  out["measured_gaps_us"] = c.a_gaps_ns / 1e3;
  out["model_gaps_us"] = c.b_gaps_ns / 1e3;
  // What the plan moves and computes, from the model's ops (the same plan).
  double transfer = 0, reduce = 0, flops = 0, compute_ops = 0;
  std::int32_t last_step = 0;
  for (const RunOp& op : m.model.ops) {
    if (op.kind == OpKind::kRecv) {
      transfer += static_cast<double>(op.bytes);
      if (op.reduce != ReduceOp::kNone) reduce += static_cast<double>(op.bytes);
    }
    if (op.kind == OpKind::kCompute) {
      flops += op.flops;
      compute_ops += 1;
    }
    last_step = std::max(last_step, op.step);
  }
  out["transfer_bytes"] = transfer;
  out["reduce_bytes"] = reduce;
  out["compute_flops"] = flops;
  out["compute_ops"] = compute_ops;
  out["steps"] = static_cast<double>(last_step + 1);
  // The model's machine.
  const DeviceProfile& profile = *m.machine.profile;
  out["profile_memory_gbps"] = profile.memory_gbps.value_or(0);
  out["profile_fp32_tflops"] = profile.fp32_tflops.value_or(0);
  out["graph_node_us"] = profile.graph_node_ns.value_or(0) / 1e3;
  out["issue_us"] = ModelOpIssueNs(m.machine) / 1e3;
  out["model_graph"] = m.machine.issue == "graph" ? 1 : 0;
  out["ranks_per_gpu"] = m.machine.gpus > 0 ? std::ceil(static_cast<double>(m.machine.rank_to_gpu.size()) /
                                                        m.machine.gpus)
                                            : 0;
  // The biggest contributor to the gap, as the explanation names it.
  double total_gap = 0;
  for (const ErrorGroup& g : c.groups) total_gap += std::fabs(g.gap_ns());
  for (const char* name : {"group_is_compute", "group_is_transfer", "group_reduces", "group_ops", "group_bytes",
                           "group_flops", "group_measured_us", "group_model_us", "group_share",
                           "group_measured_concurrency", "group_model_concurrency", "group_measured_tflops",
                           "group_model_tflops"}) {
    out[name] = 0;  // no group: every op took the same time on both sides
  }
  if (!c.groups.empty()) {
    const ErrorGroup& g = c.groups.front();
    const double n = static_cast<double>(g.ops);
    const double a_each = g.a_ns / n, b_each = g.b_ns / n;
    out["group_is_compute"] = g.kind == OpKind::kCompute ? 1 : 0;
    out["group_is_transfer"] = g.kind == OpKind::kRecv ? 1 : 0;
    out["group_reduces"] = g.reduce != ReduceOp::kNone ? 1 : 0;
    out["group_ops"] = n;
    out["group_bytes"] = static_cast<double>(g.mean_bytes);
    out["group_flops"] = g.mean_flops;
    out["group_measured_us"] = a_each / 1e3;
    out["group_model_us"] = b_each / 1e3;
    out["group_share"] = total_gap > 0 ? std::fabs(g.gap_ns()) / total_gap : 0;
    out["group_measured_concurrency"] = g.a_concurrency;
    out["group_model_concurrency"] = g.b_concurrency;
    out["group_measured_tflops"] = a_each > 0 ? g.mean_flops / a_each / 1e3 : 0;
    out["group_model_tflops"] = b_each > 0 ? g.mean_flops / b_each / 1e3 : 0;
  }
  if (summary != nullptr) {
    *summary = m.scenario.Text() + " on the model of " + m.machine.Describe() + ": model " +
               FormatTime(c.run.b_ns) + ", measured " + FormatTime(c.run.a_ns) + ". " + c.explanation;
  }
  return out;
}

void RegisterScenario_trace_compare_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "trace-compare";
  s.title = "Model vs measurement";
  s.summary =
      "a measured trace shipped with the project against the simulator's model of the machine that "
      "recorded it: both times, the ratio and the biggest cause of the gap";
  s.params = {
      Param("trace_file", T::kText, "bench/results/2026-11-26-h200-merged/traces/ring8-64M.json",
            "the measured trace, a path under the repository")
          .ValueName("FILE"),
      Param("plan_settings", T::kText, "collective size=64M",
            "the trace's scenario and settings ('pipeline stages=4 microbatches=8'), to rebuild its plan")
          .ValueName("SETTINGS"),
      Param("profile_file", T::kText, "bench/results/2026-11-26-h200-merged/device-graph.toml",
            "the GPU's device profile, a path under the repository; none: the one the trace records")
          .ValueName("FILE"),
      Param("model_gpus", T::kInteger, "1", "GPUs of the profile, for a trace that records no machine")
          .Range(1, 4096)
          .Unit("GPUs"),
      Param("model_issue", T::kChoice, "recorded",
            "how the run issued its ops: recorded (as the trace says, else eager), graph or eager")
          .Choices({"recorded", "graph", "eager"})
          .Noun("issue mode"),
  };
  s.measured = {
      {"measured_us", "us", "the measured run's span"},
      {"model_us", "us", "the model's span"},
      {"ratio", "", "model_us / measured_us"},
      {"error", "", "(model_us - measured_us) / measured_us"},
      {"ops", "ops", "ops matched by id"},
      {"measured_gaps_us", "us", "time in the measured span when no op of any rank runs"},
      {"model_gaps_us", "us", "the same in the model"},
      {"transfer_bytes", "bytes", "bytes of every transfer (counted once, at its receiver)"},
      {"reduce_bytes", "bytes", "bytes of the transfers that reduce on arrival"},
      {"compute_flops", "FLOPs", "FLOPs of every compute op"},
      {"compute_ops", "ops", "compute ops"},
      {"steps", "", "logical steps of the plan"},
      {"profile_memory_gbps", "GB/s", "the profile's HBM traffic rate (memory_gbps)"},
      {"profile_fp32_tflops", "TFLOP/s", "the profile's fp32 GEMM rate"},
      {"graph_node_us", "us", "the profile's graph_node_ns, in us"},
      {"issue_us", "us", "the model's host cost per op (0 for a graph replay)"},
      {"model_graph", "", "1 when the model replays a CUDA graph"},
      {"ranks_per_gpu", "ranks", "virtual ranks sharing one GPU"},
      {"group_is_compute", "", "1 when the biggest contributor is a group of compute ops"},
      {"group_is_transfer", "", "1 when it is a group of transfers"},
      {"group_reduces", "", "1 when its transfers reduce"},
      {"group_ops", "ops", "its ops"},
      {"group_bytes", "bytes", "its mean bytes"},
      {"group_flops", "FLOPs", "its mean FLOPs"},
      {"group_measured_us", "us", "its mean measured time"},
      {"group_model_us", "us", "its mean model time"},
      {"group_share", "", "its share of the summed op-time gap"},
      {"group_measured_concurrency", "ops", "how many of its ops ran at once, on average, measured"},
      {"group_model_concurrency", "ops", "the same in the model"},
      {"group_measured_tflops", "TFLOP/s", "its FLOPs over its measured time"},
      {"group_model_tflops", "TFLOP/s", "its FLOPs over its model time"},
  };
  s.check = CheckTraceCompare;
  s.measure = MeasureTraceCompare;
  RegisterScenario(std::move(s));
}

}  // namespace shardlab
