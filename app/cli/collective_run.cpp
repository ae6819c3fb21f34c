#include "app/cli/collective_run.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include "engine/core/error.h"
#include "engine/run/backend.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"
#include "engine/topology/ring_order.h"

namespace shardlab::cli {
namespace {

const std::vector<std::string>& KindNames() {
  static const std::vector<std::string> names = {"allreduce", "reducescatter", "allgather",
                                                 "broadcast", "reduce",        "alltoall"};
  return names;
}

DType ParseDType(const std::string& spelling, const std::string& text) {
  if (text == "f32" || text == "float" || text == "float32") return DType::kF32;
  if (text == "f16" || text == "half" || text == "float16") return DType::kF16;
  if (text == "bf16" || text == "bfloat16") return DType::kBF16;
  throw UsageError(spelling + ": unknown type '" + text + "' (use f32, f16 or bf16)");
}

ReduceOp ParseReduceOp(const std::string& spelling, const std::string& text) {
  if (text == "sum") return ReduceOp::kSum;
  if (text == "max") return ReduceOp::kMax;
  if (text == "min") return ReduceOp::kMin;
  throw UsageError(spelling + ": unknown reduction '" + text + "' (use sum, max or min)");
}

/// "auto" (search the topology), "rank" (0..n-1) or an explicit list "0,2,1,3".
std::vector<int> ParseRingOrder(const std::string& spelling, const std::string& text,
                                const Topology& topology, int ranks, std::string* mode) {
  if (text == "auto") {
    *mode = "auto";
    return ChooseRingOrder(topology, ranks);
  }
  std::vector<int> order(static_cast<std::size_t>(ranks));
  std::iota(order.begin(), order.end(), 0);
  if (text == "rank") {
    *mode = "rank";
    return order;
  }
  *mode = "custom";
  order.clear();
  std::string item;
  const auto flush = [&] {
    if (item.empty()) return;
    order.push_back(static_cast<int>(ParseIntValue(spelling, item, 0, ranks - 1)));
    item.clear();
  };
  for (const char c : text) {
    if (c == ',' || c == ' ') {
      flush();
    } else {
      item.push_back(c);
    }
  }
  flush();
  if (static_cast<int>(order.size()) != ranks) {
    throw UsageError(spelling + ": expected auto, rank or a list of all " +
                     std::to_string(ranks) + " ranks (got " + std::to_string(order.size()) +
                     " in '" + text + "')");
  }
  std::vector<bool> seen(static_cast<std::size_t>(ranks), false);
  for (const int r : order) {
    if (seen[static_cast<std::size_t>(r)]) {
      throw UsageError(spelling + ": rank " + std::to_string(r) + " appears twice in '" + text +
                       "'");
    }
    seen[static_cast<std::size_t>(r)] = true;
  }
  return order;
}

/// Host memory the backend holds for the plan's data: floats per element.
Bytes HostDataBytes(const Plan& plan) {
  Bytes total = 0;
  for (const Buffer& b : plan.buffers) total += b.count * static_cast<Bytes>(sizeof(float));
  return total;
}

/// Counts events and tracks the end of the last one, without keeping them.
class SummarySink : public EventSink {
 public:
  void OnEvent(const Event& event) override {
    if (count == 0) clock = event.clock;
    ++count;
    end_ns = std::max(end_ns, event.end_ns);
  }
  std::size_t count = 0;
  TimeNs end_ns = 0;
  ClockKind clock = ClockKind::kSimulated;
};

/// Hands each event to every sink in the list.
class FanOutSink : public EventSink {
 public:
  void Add(EventSink* sink) { sinks_.push_back(sink); }
  void OnEvent(const Event& event) override {
    for (EventSink* s : sinks_) s->OnEvent(event);
  }

 private:
  std::vector<EventSink*> sinks_;
};

/// The phase of each step, from the first tagged op of that step.
std::vector<Phase> StepPhases(const Plan& plan) {
  std::vector<Phase> phases(static_cast<std::size_t>(std::max(plan.num_steps, 0)), Phase::kNone);
  for (const Op& op : plan.ops) {
    if (op.step < 0 || op.step >= plan.num_steps) continue;
    Phase& p = phases[static_cast<std::size_t>(op.step)];
    if (p == Phase::kNone) p = op.tags.phase;
  }
  return phases;
}

}  // namespace

bool KindReduces(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kReduce;
}

bool KindHasRoot(CollectiveKind kind) {
  return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
}

void AddCollectiveFlags(std::vector<FlagSpec>& flags) {
  const std::vector<FlagSpec> shared = {
      {"algo", 0, "NAME", "ring, tree (all-reduce) or direct (all-to-all); default: ring, "
                          "direct for all-to-all"},
      {"ranks", 0, "N", "number of ranks; rank r runs on GPU r (default: all GPUs of the "
                          "topology)"},
      {"topology", 0, "NAME|FILE", "a preset (see 'topo --list') or a topology file "
                                     "(default: dgx-a100)"},
      {"backend", 0, "NAME", "where to run (default: sim, the simulator)"},
      {"dtype", 'd', "TYPE", "element type f32, f16 or bf16 (default: f32)"},
      {"op", 'o', "OP", "reduction sum, max or min (default: sum)"},
      {"root", 'r', "RANK", "root of broadcast and reduce (default: 0)"},
      {"ring-order", 0, "ORDER", "auto (fast links first), rank (0..n-1) or a list like "
                                 "0,3,2,1 (default: auto)"},
      {"seed", 0, "N", "seed of the input data (default: 1)"},
      {"timing-only", 0, "", "skip the data: time only, the result is not checked"},
      {"verify-max", 0, "SIZE", "check data only while all buffers fit in SIZE of host memory; "
                                "larger runs are timed only (default: 1G)"},
  };
  flags.insert(flags.end(), shared.begin(), shared.end());
}

CollectiveSetup SetupFromArgs(const ParsedArgs& args, const std::string& command) {
  CollectiveSetup setup;
  if (args.positionals().empty()) {
    throw UsageError(command + ": which collective? (" + JoinChoices(KindNames()) + ")");
  }
  const std::string& kind_text = args.positionals().front();
  if (std::find(KindNames().begin(), KindNames().end(), kind_text) == KindNames().end()) {
    throw UsageError(command + ": unknown collective '" + kind_text + "' (use " +
                     JoinChoices(KindNames()) + ")");
  }
  setup.kind = ParseCollectiveKind(kind_text);

  setup.algo = DefaultAlgo(setup.kind);
  if (args.Has("algo")) {
    const std::string text = args.Get("algo");
    if (text != "ring" && text != "tree" && text != "direct") {
      throw UsageError(args.Spelling("algo") + ": unknown algorithm '" + text +
                       "' (use ring, tree or direct)");
    }
    setup.algo = ParseCollectiveAlgo(text);
  }

  setup.backend = args.Get("backend", "sim");
  {
    std::vector<std::string> known;
    for (const BackendInfo& b : ListBackends()) known.push_back(b.name);
    if (std::find(known.begin(), known.end(), setup.backend) == known.end()) {
      throw UsageError(args.Spelling("backend") + ": unknown backend '" + setup.backend +
                       "' (available: " + JoinChoices(known) + ")");
    }
  }

  setup.topology_name = args.Get("topology", "dgx-a100");
  if (setup.topology_name.empty()) throw UsageError(args.Spelling("topology") + ": missing value");
  setup.topology = LoadTopology(setup.topology_name);
  const int gpus = setup.topology.num_gpus();

  setup.ranks = gpus;
  if (args.Has("ranks")) {
    setup.ranks = static_cast<int>(ParseIntValue(args.Spelling("ranks"), args.Get("ranks"), 1,
                                                 1 << 20));
    if (setup.ranks > gpus) {
      throw UsageError(args.Spelling("ranks") + ": " + std::to_string(setup.ranks) +
                       " ranks but topology '" + setup.topology_name + "' has only " +
                       std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
                       " (one rank per GPU)");
    }
  }

  if (args.Has("dtype")) setup.dtype = ParseDType(args.Spelling("dtype"), args.Get("dtype"));
  if (args.Has("op")) setup.op = ParseReduceOp(args.Spelling("op"), args.Get("op"));
  if (!KindReduces(setup.kind)) setup.op = ReduceOp::kNone;
  // nccl-tests ignores the root of rootless collectives; so do we.
  if (args.Has("root") && KindHasRoot(setup.kind)) {
    setup.root = static_cast<int>(
        ParseIntValue(args.Spelling("root"), args.Get("root"), 0, setup.ranks - 1));
  }
  if (args.Has("seed")) setup.seed = ParseSeedValue(args.Spelling("seed"), args.Get("seed"));
  setup.timing_only = args.Has("timing-only");
  if (args.Has("verify-max")) {
    setup.verify_max_bytes = ParseSizeValue(args.Spelling("verify-max"), args.Get("verify-max"), 0);
  }

  // The ring search only matters to rings; an explicit order is still checked.
  if (setup.algo == CollectiveAlgo::kRing || args.Has("ring-order")) {
    std::vector<int> order =
        ParseRingOrder(args.Spelling("ring-order"), args.Get("ring-order", "auto"),
                       setup.topology, setup.ranks, &setup.ring_order_mode);
    if (setup.algo == CollectiveAlgo::kRing) setup.ring_order = std::move(order);
  }
  if (!setup.ring_order.empty() && setup.ranks > 1) {
    setup.ring_bottleneck_gbps = RingBottleneckGbps(setup.topology, setup.ring_order);
  }

  // Let the engine reject what it cannot build (tree all-gather, ...) now,
  // before any size is run.
  CheckCollectiveParams(ParamsForSize(setup, Bytes{DTypeBytes(setup.dtype)} * setup.ranks));
  return setup;
}

CollectiveParams ParamsForSize(const CollectiveSetup& setup, Bytes size_bytes) {
  CollectiveParams params;
  params.kind = setup.kind;
  params.algo = setup.algo;
  params.ranks = setup.ranks;
  params.count = size_bytes / DTypeBytes(setup.dtype);
  params.dtype = setup.dtype;
  params.op = setup.op;
  params.root = setup.root;
  params.ring_order = setup.ring_order;
  return params;
}

CollectiveOutcome RunCollective(const CollectiveSetup& setup, Bytes size_bytes,
                                const RunHooks& hooks) {
  CollectiveOutcome out;
  out.params = ParamsForSize(setup, size_bytes);
  CheckCollectiveParams(out.params);
  out.size_bytes = CollectiveSizeBytes(out.params);

  Plan built = BuildCollective(out.params);
  if (hooks.on_plan) hooks.on_plan(built);

  RunOptions options;
  options.seed = setup.seed;
  const Bytes host_bytes = HostDataBytes(built);
  if (setup.timing_only) {
    options.timing_only = true;
    out.not_checked_reason = "timing only (--timing-only)";
  } else if (host_bytes > setup.verify_max_bytes) {
    options.timing_only = true;
    out.not_checked_reason = "timing only: the data needs " + FormatBytes(host_bytes) +
                             " of host memory, above --verify-max " +
                             FormatBytes(setup.verify_max_bytes);
  }

  Executor executor(CreateBackend(setup.backend), std::move(built), setup.topology, options);
  const Plan& plan = executor.plan();
  out.steps = plan.num_steps;
  out.ops = plan.ops.size();

  SummarySink summary;
  FanOutSink sink;
  sink.Add(&summary);
  VectorSink kept;
  if (hooks.on_done) sink.Add(&kept);

  if (hooks.on_step) {
    ChunkState chunks(out.params, plan);
    sink.Add(&chunks);
    const std::vector<Phase> phases = StepPhases(plan);
    hooks.on_step(StepView{0, plan.num_steps, Phase::kNone, 0, plan, chunks});
    int step = 0;
    while (executor.StepOnce(sink)) {
      const Phase phase = phases.empty() ? Phase::kNone : phases[static_cast<std::size_t>(step)];
      ++step;
      hooks.on_step(StepView{step, plan.num_steps, phase, summary.end_ns, plan, chunks});
    }
  } else {
    executor.RunToEnd(sink);
  }

  out.events = summary.count;
  out.clock = summary.clock;
  out.metrics = ComputeCollectiveMetrics(setup.kind, setup.ranks, out.size_bytes, summary.end_ns);
  if (!options.timing_only) {
    const Backend& backend = executor.backend();
    out.verify = VerifyCollective(out.params, plan, setup.seed,
                                  [&backend](BufferId id) { return backend.BufferData(id); });
    out.checked = true;
  }
  if (hooks.on_done) hooks.on_done(plan, kept.events);
  return out;
}

}  // namespace shardlab::cli
