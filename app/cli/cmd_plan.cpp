// `shardlab-cli plan`: the 3D-parallel planner. Every DP × PP × TP layout
// of a model on N GPUs (× ZeRO stage, micro-batch size, interleaving,
// recomputation), the ones that fit ranked by the analytic step time,
// then the rejected ones grouped by reason.
//
//   #  rank  dp  pp  tp zero  b    m  v recompute   step s  compute  bubble  tp-comm ...
//         1   8   8   8    1  1   24  1 selective   ...
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include "app/cli/commands.h"
#include "app/cli/scenario_flags.h"
#include "engine/scenarios/plan_scenario.h"
#include "app/cli/zero_args.h"
#include "engine/core/json.h"
#include "engine/planner/planner.h"
#include "engine/planner/planner_simulation.h"
#include "engine/topology/presets.h"

namespace shardlab::cli {
namespace {

constexpr int kDefaultTop = 10;
constexpr int kExamplesPerReason = 3;

std::string Fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

constexpr double kGiB = double(Bytes{1} << 30);

std::string Seconds(TimeNs ns) { return Fixed(ns * 1e-9, 3); }

std::string GbpsText(Gbps gbps) { return std::isinf(gbps) ? "-" : Fixed(gbps, 0); }

std::string LayoutText(const PlanCandidate& c) {
  const ParallelLayout& l = c.layout;
  std::string text =
      "dp " + std::to_string(l.dp) + " pp " + std::to_string(l.pp) + " tp " + std::to_string(l.tp);
  if (c.expanded || l.micro_batch > 1 || l.interleave > 1 || l.micro_batches > 1) {
    if (l.micro_batches > 0) text += " b " + std::to_string(l.micro_batch);
  }
  if (l.interleave > 1) text += " v " + std::to_string(l.interleave);
  if (c.expanded) {
    text += " zero " + std::to_string(l.zero_stage) + " recompute " + RecomputeName(l.recompute);
  }
  return text;
}

std::vector<int> ParseIntList(const ParsedArgs& args, const char* flag, std::int64_t min,
                              std::int64_t max) {
  std::vector<int> values;
  const std::string text = args.Get(flag);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string word =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    values.push_back(static_cast<int>(ParseIntValue(args.Spelling(flag), word, min, max)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

std::vector<Recompute> ParseRecomputeList(const ParsedArgs& args) {
  std::vector<Recompute> values;
  std::string text = args.Get("recompute") + ",";
  std::size_t start = 0;
  for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1) {
    const std::string word = text.substr(start, comma - start);
    if (word == "none") {
      values.push_back(Recompute::kNone);
    } else if (word == "selective") {
      values.push_back(Recompute::kSelective);
    } else if (word == "full") {
      values.push_back(Recompute::kFull);
    } else {
      throw UsageError(args.Spelling("recompute") + ": '" + word +
                       "' is not a recomputation mode (none, selective, full)");
    }
  }
  return values;
}

double ParseFraction(const ParsedArgs& args, const char* flag) {
  const std::string text = args.Get(flag);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0 && value <= 1)) {
    throw UsageError(args.Spelling(flag) + ": '" + text + "' is not a fraction in (0, 1]");
  }
  return value;
}

void PrintTable(std::ostream& out, const PlannerResult& result, int top) {
  out << "#\n# Feasible: " << result.feasible.size() << " configurations, fastest first"
      << (static_cast<int>(result.feasible.size()) > top
              ? " (top " + std::to_string(top) + "; --top N for more)"
              : "")
      << "\n";
  out << "#  rank    dp   pp   tp zero  b     m  v  recompute   step(s)  compute   bubble  "
         "tp-comm  pp-comm  dp-exp   MFU   mem/GPU  TP GB/s  PP GB/s  DP GB/s\n";
  const int shown = std::min<int>(top, static_cast<int>(result.feasible.size()));
  for (int i = 0; i < shown; ++i) {
    const PlanCandidate& c = result.feasible[static_cast<std::size_t>(i)];
    const ParallelLayout& l = c.layout;
    const StepTimeEstimate& t = c.time;
    out << "  " << PadColumns(std::to_string(i + 1), 5) << PadColumns(std::to_string(l.dp), 6)
        << PadColumns(std::to_string(l.pp), 5) << PadColumns(std::to_string(l.tp), 5)
        << PadColumns(std::to_string(l.zero_stage), 5)
        << PadColumns(std::to_string(l.micro_batch), 3)
        << PadColumns(std::to_string(l.micro_batches), 6)
        << PadColumns(std::to_string(l.interleave), 3) << "  "
        << PadColumns(RecomputeName(l.recompute), 9, true) << PadColumns(Seconds(t.step_ns), 10)
        << PadColumns(Seconds(t.compute_ns), 9) << PadColumns(Seconds(t.bubble_ns), 9)
        << PadColumns(Seconds(t.tp_comm_ns), 9) << PadColumns(Seconds(t.pp_comm_ns), 9)
        << PadColumns(Seconds(t.dp_exposed_ns), 8) << PadColumns(Fixed(100 * t.mfu, 1) + "%", 7)
        << PadColumns(Fixed(c.memory.total() / kGiB, 1) + " GiB", 10)
        << PadColumns(l.tp > 1 ? GbpsText(t.tp_gbps) : "-", 9)
        << PadColumns(l.pp > 1 ? GbpsText(t.pp_gbps) : "-", 9)
        << PadColumns(l.dp > 1 ? GbpsText(t.dp_gbps) : "-", 9) << "\n";
  }
  if (result.feasible.empty()) {
    out << "#  none: no layout fits (see the reasons below; try more GPUs, --gpu-memory, or a\n"
        << "#  smaller --global-batch)\n";
  }
}

void PrintRejected(std::ostream& out, const PlannerResult& result, bool all) {
  std::map<RejectReason, std::vector<const PlanCandidate*>> by_reason;
  for (const PlanCandidate& c : result.rejected) by_reason[c.reason].push_back(&c);
  out << "#\n# Rejected: " << result.rejected.size() << " configurations"
      << (all ? "" : " (one line per reason with examples; --show-rejected lists all)") << "\n";
  for (const auto& [reason, list] : by_reason) {
    out << "#  " << PadColumns(std::to_string(list.size()), 6) << "  " << RejectReasonName(reason)
        << "\n";
    const std::size_t shown =
        all ? list.size() : std::min<std::size_t>(kExamplesPerReason, list.size());
    for (std::size_t i = 0; i < shown; ++i) {
      out << "#            " << LayoutText(*list[i]) << ": " << list[i]->detail << "\n";
    }
  }
}

/// The first `count` feasible layouts again, on the simulator.
void PrintSimulated(std::ostream& out, const PlannerRequest& request, const Topology& topology,
                    const PlannerResult& result, int count) {
  out << "#\n# Simulated: the timing-only 3D step of the top " << count
      << " on the simulator (matmuls at full peak, DP not\n"
      << "# overlapped, link contention): compare the order and the communication, not the "
         "seconds\n"
      << "#  rank  layout                                              analytic(s)  simulated(s)  "
         "sim MFU\n";
  const int shown = std::min<int>(count, static_cast<int>(result.feasible.size()));
  for (int i = 0; i < shown; ++i) {
    const PlanCandidate& c = result.feasible[static_cast<std::size_t>(i)];
    const SimulatedLayout sim = SimulatePlanCandidate(request, topology, c);
    out << "  " << PadColumns(std::to_string(i + 1), 5) << "  "
        << PadColumns(LayoutText(c), 50, true) << PadColumns(Seconds(c.time.step_ns), 13);
    if (sim.simulated) {
      out << PadColumns(Seconds(sim.step_ns), 14) << PadColumns(Fixed(100 * sim.mfu, 1) + "%", 9)
          << "\n";
    } else {
      out << "  not simulated: " << sim.not_simulated << "\n";
    }
  }
}

void WriteCandidate(JsonWriter& w, const PlanCandidate& c) {
  const ParallelLayout& l = c.layout;
  w.BeginObject();
  w.Field("dp", l.dp);
  w.Field("pp", l.pp);
  w.Field("tp", l.tp);
  if (c.expanded || c.feasible) {
    w.Field("zero_stage", l.zero_stage);
    w.Field("recompute", RecomputeName(l.recompute));
  }
  w.Field("micro_batch", l.micro_batch);
  w.Field("micro_batches", l.micro_batches);
  w.Field("interleave", l.interleave);
  if (c.feasible) {
    const StepTimeEstimate& t = c.time;
    w.Field("step_s", t.step_ns * 1e-9);
    w.Field("compute_s", t.compute_ns * 1e-9);
    w.Field("bubble_s", t.bubble_ns * 1e-9);
    w.Field("tp_comm_s", t.tp_comm_ns * 1e-9);
    w.Field("pp_comm_s", t.pp_comm_ns * 1e-9);
    w.Field("dp_comm_s", t.dp_comm_ns * 1e-9);
    w.Field("dp_exposed_s", t.dp_exposed_ns * 1e-9);
    w.Field("mfu", t.mfu);
    w.Field("tp_gbps", t.tp_gbps);
    w.Field("pp_gbps", t.pp_gbps);
    w.Field("dp_gbps", t.dp_gbps);
  } else {
    w.Field("reason", RejectReasonName(c.reason));
    w.Field("detail", c.detail);
  }
  if (c.expanded || c.feasible) {
    const MemoryEstimate& m = c.memory;
    w.Key("memory");
    w.BeginObject();
    w.Field("stage", m.stage);
    w.Field("parameters_bytes", m.parameters);
    w.Field("gradients_bytes", m.gradients);
    w.Field("optimizer_states_bytes", m.optimizer_states);
    w.Field("activations_bytes", m.activations);
    w.Field("logits_bytes", m.logits);
    w.Field("zero3_gathered_bytes", m.zero3_gathered);
    w.Field("total_bytes", m.total());
    w.EndObject();
  }
  w.EndObject();
}

void WriteJson(std::ostream& out, const PlannerRequest& request, const std::string& topology,
               const PlannerResult& result, int top, bool all_rejected) {
  JsonWriter w(out, /*pretty=*/true);
  w.BeginObject();
  w.Field("scenario", "plan");
  w.Field("model", request.model.name);
  w.Field("parameters", request.model.TotalParameters());
  w.Field("global_batch", request.model.global_batch);
  w.Field("gpus", request.gpus);
  w.Field("topology", topology);
  w.Field("gpu", result.gpu_model);
  w.Field("gpu_memory_bytes", result.gpu_memory_bytes);
  w.Field("usable_memory_bytes", result.usable_memory_bytes);
  w.Field("compute_efficiency", request.compute_efficiency);
  w.Field("time_model", result.time_model);
  w.Field("feasible_count", static_cast<std::int64_t>(result.feasible.size()));
  w.Key("feasible");
  w.BeginArray();
  const std::size_t shown =
      std::min<std::size_t>(static_cast<std::size_t>(top), result.feasible.size());
  for (std::size_t i = 0; i < shown; ++i) WriteCandidate(w, result.feasible[i]);
  w.EndArray();
  w.Field("rejected_count", static_cast<std::int64_t>(result.rejected.size()));
  std::map<RejectReason, std::int64_t> counts;
  for (const PlanCandidate& c : result.rejected) ++counts[c.reason];
  w.Key("rejected_by_reason");
  w.BeginObject();
  for (const auto& [reason, count] : counts) w.Field(RejectReasonName(reason), count);
  w.EndObject();
  if (all_rejected) {
    w.Key("rejected");
    w.BeginArray();
    for (const PlanCandidate& c : result.rejected) WriteCandidate(w, c);
    w.EndArray();
  }
  w.EndObject();
  out << "\n";
}

}  // namespace

CommandSpec PlanSpec() {
  CommandSpec s;
  s.name = "plan";
  s.summary = "3D-parallel planner: DP x PP x TP layouts that fit, ranked by step time";
  s.usage = "plan [--model NAME] [--ranks N] [--topology PRESET|FILE] [flags]";
  s.description =
      "Searches every data x pipeline x tensor-parallel layout of a transformer on N GPUs,\n"
      "with each ZeRO stage, micro-batch size b, interleaving v and recomputation mode, and\n"
      "prints the ones that fit in GPU memory ranked by step time, then the others grouped by\n"
      "why they were rejected (tp not dividing the heads, pp not dividing the layers, a TP\n"
      "group leaving NVLink, the batch not dividing, out of memory).\n"
      "Ranks follow Megatron's order: TP groups are consecutive GPUs (inside a box), DP\n"
      "replicas next, pipeline stages outermost. Memory: model states split by tp and pp, then\n"
      "ZeRO over dp (K = 12), plus activations (Korthikanti et al., sequence parallel with tp)\n"
      "for the micro-batches in flight; 90% of the GPU is usable. Step times come from an\n"
      "analytic model (matmuls at a share of peak, ring collectives at the bandwidth each\n"
      "group gets on the topology's routes when all groups run at once, the pipeline bubble\n"
      "(p-1)/(v m)); nothing is simulated unless --simulate K runs the top K again on the\n"
      "simulator. The analytic times rank layouts; they are not a promise.";
  AddScenarioFlags(s.flags, ScenarioSpecOf("plan"));
  for (FlagSpec& f : s.flags)
    if (f.name == "ranks") f.old_names.push_back("n");  // -n is --iters elsewhere
  s.flags.insert(s.flags.end(), {
      {"top", 0, "K", "feasible layouts to print (default: 10)"},
      {"zero-stage", 0, "LIST", "ZeRO stages to try, e.g. 0,1 (default: 0,1,2,3)", {"zero"}},
      {"micro-batch", 0, "LIST", "micro-batch sizes b to try (default: 1,2,4,8)"},
      {"interleave", 0, "LIST", "model chunks per stage v to try (default: 1,2,3,4)"},
      {"recompute", 0, "LIST", "none, selective, full (default: all three)"},
      {"efficiency", 0, "F", "share of the fp16 peak the matmuls reach (default: 0.5)"},
      {"show-rejected", 0, "", "list every rejected configuration, not just examples"},
      {"simulate", 0, "K",
       "also run the top K on the simulator (v 1, ZeRO 0-1, no recompute; "
       "seconds each at 512 GPUs)"},
      {"json", 0, "", "print one JSON object instead of the tables"},
  });
  s.examples =
      "  shardlab-cli plan --model gpt3-175b --ranks 512 --topology 64x-dgx-a100-ib\n"
      "  shardlab-cli plan --model gpt3-175b --ranks 256 --topology 32x-dgx-h100-superpod\n"
      "  shardlab-cli plan --model gpt3-175b --ranks 512 --topology 64x-dgx-a100-ib --gpu-memory "
      "40G\n"
      "  shardlab-cli plan --model gpt3-13b --ranks 64 --topology 8x-dgx-h100-ib --top 5 --json\n";
  return s;
}

int PlanMain(const ParsedArgs& args) {
  const std::pair<const char*, const char*> field_flags[] = {{"model: ", "model"},
                                                             {"ranks: ", "ranks"},
                                                             {"gpus: ", "ranks"},
                                                             {"gpu-memory: ", "gpu-memory"},
                                                             {"topology: ", "topology"},
                                                             {"zero: ", "zero-stage"},
                                                             {"micro-batch: ", "micro-batch"},
                                                             {"interleave: ", "interleave"},
                                                             {"efficiency: ", "efficiency"}};
  try {
    const ScenarioParams params = ParamsFromArgs(ScenarioSpecOf("plan"), args);
    const std::string topology_name = params.Text("topology");
    Topology topology;
    try {
      topology = LoadTopology(topology_name);
    } catch (const Error& e) {
      throw Error(std::string("topology: ") + e.what(), ErrorKind::kInvalidInput);
    }
    PlannerRequest request = PlanFromParams(params, topology);
    if (args.Has("zero-stage")) request.zero_stages = ParseIntList(args, "zero-stage", 0, 3);
    if (args.Has("micro-batch"))
      request.micro_batch_sizes = ParseIntList(args, "micro-batch", 1, 1 << 20);
    if (args.Has("interleave")) request.interleaves = ParseIntList(args, "interleave", 1, 1 << 10);
    if (args.Has("recompute")) request.recomputes = ParseRecomputeList(args);
    if (args.Has("efficiency")) request.compute_efficiency = ParseFraction(args, "efficiency");
    const int top =
        args.Has("top")
            ? static_cast<int>(ParseIntValue(args.Spelling("top"), args.Get("top"), 1, INT_MAX))
            : kDefaultTop;

    const int simulate = args.Has("simulate")
                             ? static_cast<int>(ParseIntValue(args.Spelling("simulate"),
                                                              args.Get("simulate"), 1, 100))
                             : 0;

    const PlannerResult result = PlanParallelLayouts(request, topology);
    std::ostream& out = std::cout;
    if (args.Has("json")) {
      WriteJson(out, request, topology.name, result, top, args.Has("show-rejected"));
      return 0;
    }
    const TransformerShape& m = request.model;
    out << "# ShardLab planner: " << m.name << " (" << ParameterCountText(m.TotalParameters())
        << " parameters: " << m.layers << " layers, hidden " << m.hidden << ", " << m.heads
        << " heads, seq " << m.seq_len << ") on " << request.gpus << " GPUs of " << topology.name
        << "\n"
        << "#   " << result.gpu_model << ": " << Fixed(result.peak_flops / 1e12, 0)
        << " TFLOP/s fp16 dense peak, matmuls assumed at "
        << Fixed(100 * request.compute_efficiency, 0) << "%; "
        << Fixed(result.gpu_memory_bytes / kGiB, 1) << " GiB per GPU, "
        << Fixed(100 * request.usable_memory_fraction, 0) << "% usable ("
        << Fixed(result.usable_memory_bytes / kGiB, 1) << " GiB)\n"
        << "#   global batch " << m.global_batch << " sequences (" << m.global_batch * m.seq_len
        << " tokens); mixed-precision Adam, K = 12; sequence parallel with tp > 1\n"
        << "#   ranks: TP fastest (inside a box), then DP, then PP; m = batch / (dp b)\n"
        << "#   step times: analytic model (engine/planner/planner.h), not simulated; link GB/s are\n"
        << "#   per direction, each group's share when all groups of its kind run at once\n";
    PrintTable(out, result, top);
    if (simulate > 0) PrintSimulated(out, request, topology, result, simulate);
    PrintRejected(out, result, args.Has("show-rejected"));
    return 0;
  } catch (const Error& e) {
    throw FieldErrorAsFlagError(e, args, field_flags);
  }
}

}  // namespace shardlab::cli
