#include "engine/scenarios/collective_scenario.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <utility>

#include "engine/scenarios/fault_params.h"
#include "engine/algorithms/double_binary_tree.h"
#include "engine/core/error.h"
#include "engine/topology/presets.h"
#include "engine/topology/ring_order.h"
#include "engine/verify/bounds.h"
#include "engine/core/units.h"
#include "engine/run/faults.h"
#include "engine/scenarios/scenario.h"

namespace shardlab {
namespace {

/// All-to-all among at most this many ranks looks at every pair for α and
/// B; beyond it only the pairs through rank 0 (a million routes is too many
/// for a check that runs on each edit).
constexpr int kAllPairsMaxRanks = 64;


Error FieldError(const std::string& field, const std::string& message) {
  return Error(field + ": " + message);
}

/// An integer in [min, max], with the CLI's wording for each failure.
std::int64_t ParseBoundedInt(const std::string& field, const std::string& text, std::int64_t min,
                             std::int64_t max) {
  std::int64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    throw FieldError(field, "out of range (got '" + text + "')");
  }
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw FieldError(field, "must be an integer (got '" + text + "')");
  }
  if (value < min) {
    throw FieldError(field, "must be at least " + std::to_string(min) + " (got " +
                                std::to_string(value) + ")");
  }
  if (value > max) {
    throw FieldError(field, "must be at most " + std::to_string(max) + " (got " +
                                std::to_string(value) + ")");
  }
  return value;
}

/// "auto" (search the topology), "rank" (0..n-1) or a list "0,2,1,3"
/// (commas or spaces) naming every rank once.
std::vector<int> ParseRingOrder(const std::string& text, const Topology& topology, int ranks,
                                std::string* mode) {
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
    order.push_back(static_cast<int>(ParseBoundedInt("ring order", item, 0, ranks - 1)));
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
    throw FieldError("ring order", "expected auto, rank or a list of all " +
                                       std::to_string(ranks) + " ranks (got " +
                                       std::to_string(order.size()) + " in '" + text + "')");
  }
  std::vector<bool> seen(static_cast<std::size_t>(ranks), false);
  for (const int r : order) {
    if (seen[static_cast<std::size_t>(r)]) {
      throw FieldError("ring order",
                       "rank " + std::to_string(r) + " appears twice in '" + text + "'");
    }
    seen[static_cast<std::size_t>(r)] = true;
  }
  return order;
}

void CheckSize(Bytes size_bytes, DType dtype) {
  const int element = DTypeBytes(dtype);
  if (size_bytes < 0) {
    throw FieldError("size", "must not be negative (got " + std::to_string(size_bytes) + " B)");
  }
  if (size_bytes < element) {
    throw FieldError("size", "must be at least one " + std::string(DTypeName(dtype)) +
                                 " element (" + std::to_string(element) + " B; got " +
                                 std::to_string(size_bytes) + " B)");
  }
  if (size_bytes % element != 0) {
    throw FieldError("size", std::to_string(size_bytes) + " B is not a whole number of " +
                                 DTypeName(dtype) + " elements (" + std::to_string(element) +
                                 " B each)");
  }
}

// --- The alpha-beta formula ---------------------------------------------------

/// The (source, destination) rank pairs whose transfers the algorithm makes.
std::vector<std::pair<int, int>> PairsUsed(const PreparedCollective& p) {
  const CollectiveParams& params = p.params;
  const int n = params.ranks;
  std::vector<int> rank_at = params.ring_order;
  if (rank_at.empty()) {
    rank_at.resize(static_cast<std::size_t>(n));
    std::iota(rank_at.begin(), rank_at.end(), 0);
  }
  std::vector<std::pair<int, int>> pairs;
  if (n < 2) return pairs;
  auto at = [&](int pos) { return rank_at[static_cast<std::size_t>(pos % n)]; };
  switch (params.algo) {
    case CollectiveAlgo::kNccl:  // timed by the formula of NCCL's default ring
    case CollectiveAlgo::kRing: {
      int first_pos = 0;  // a chain uses n-1 hops of the ring, starting here
      int hops = n;
      const RootRole root = CollectiveDefOf(params.kind).root;
      if (root != RootRole::kNone) {  // from the root onward, or round to it
        const int root_pos = static_cast<int>(
            std::find(rank_at.begin(), rank_at.end(), params.root) - rank_at.begin());
        first_pos = root == RootRole::kSource ? root_pos : root_pos + 1;
        hops = n - 1;
      }
      for (int h = 0; h < hops; ++h) pairs.emplace_back(at(first_pos + h), at(first_pos + h + 1));
      break;
    }
    case CollectiveAlgo::kTree:
      for (const BinaryTree& tree : BuildDoubleBinaryTree(rank_at)) {
        for (int r = 0; r < n; ++r) {
          const int parent = tree.parent[static_cast<std::size_t>(r)];
          if (parent < 0) continue;
          pairs.emplace_back(r, parent);
          pairs.emplace_back(parent, r);
        }
      }
      break;
    case CollectiveAlgo::kDirect:
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          if (i == j) continue;
          if (n > kAllPairsMaxRanks && i != 0 && j != 0) continue;
          pairs.emplace_back(i, j);
        }
      }
      break;
  }
  return pairs;
}

/// α = the slowest route's latency, B = the narrowest route's bandwidth.
void SetAlphaAndBandwidth(PreparedCollective& p) {
  p.alpha_ns = 0;
  p.bandwidth_gbps = 0;
  const std::vector<std::pair<int, int>> pairs = PairsUsed(p);
  if (pairs.empty()) return;
  RouteTable routes(p.topology);
  Gbps narrowest = std::numeric_limits<Gbps>::infinity();
  for (const auto& [src, dst] : pairs) {
    const Route* route = nullptr;
    try {
      route = &routes.Between(src, dst);
    } catch (const Error&) {
      throw FieldError("topology", "'" + p.topology.name + "' has no route from GPU " +
                                       std::to_string(src) + " to GPU " + std::to_string(dst) +
                                       ", which " + CollectiveAlgoName(p.params.algo) + " " +
                                       CollectiveKindName(p.params.kind) + " needs");
    }
    p.alpha_ns = std::max(p.alpha_ns, route->latency_ns);
    narrowest = std::min(narrowest, route->bottleneck_gbps);
  }
  p.bandwidth_gbps = narrowest;
}

/// predicted_ns and formula from params, alpha_ns and bandwidth_gbps: the
/// algorithm's cost in its collective's def (nccl: the default algorithm's,
/// as NCCL's default ring or direct exchange would take).
void SetPrediction(PreparedCollective& p) {
  const CollectiveParams& params = p.params;
  const CollectiveDef& def = CollectiveDefOf(params.kind);
  p.predicted_ns = 0;
  if (params.ranks < 2) {
    p.formula = def.separate_output() ? "n = 1: a local copy, no transfer" : "n = 1: nothing moves";
    return;
  }
  const CollectiveAlgoDef* algo = def.Algo(params.algo);
  if (algo == nullptr && !def.algos.empty()) algo = &def.algos.front();
  if (algo == nullptr) {
    p.formula = "no formula: " + std::string(def.title) + " has only the library call";
    return;
  }
  CollectiveCost cost = algo->cost(params, p.alpha_ns, p.bandwidth_gbps);
  p.predicted_ns = cost.ns;
  p.formula = std::move(cost.formula);
}

/// A copy of everything but the plan.
std::unique_ptr<PreparedCollective> CopyWithoutPlan(const PreparedCollective& from) {
  auto to = std::make_unique<PreparedCollective>();
  to->scenario = from.scenario;
  to->topology = from.topology;
  to->params = from.params;
  to->ring_order = from.ring_order;
  to->ring_order_mode = from.ring_order_mode;
  to->ring_bottleneck_gbps = from.ring_bottleneck_gbps;
  to->predicted_ns = from.predicted_ns;
  to->formula = from.formula;
  to->alpha_ns = from.alpha_ns;
  to->bandwidth_gbps = from.bandwidth_gbps;
  return to;
}

}  // namespace

Topology LoadScenarioTopology(const std::string& preset_or_path) {
  if (preset_or_path.empty()) {
    throw FieldError("topology", "none given (a preset such as dgx-a100, or a topology file)");
  }
  try {
    return LoadTopology(preset_or_path);
  } catch (const Error& e) {
    throw Error("topology: " + std::string(e.what()), e.kind());
  }
}

void CheckRanksFitTopology(const char* field, int count, const char* noun, const std::string& named,
                           const Topology& topology) {
  const int gpus = topology.num_gpus();
  if (count <= gpus) return;
  const std::string& name = named.empty() ? topology.name : named;
  throw Error(std::string(field) + ": " + std::to_string(count) + " " + noun + "s but topology '" +
              name + "' has only " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
              " (one " + noun + " per GPU)");
}

void CheckScenarioBackend(const std::string& backend) {
  const std::vector<BackendInfo> backends = ListBackends();
  std::string known;  // "sim, cuda or mpi"
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (backends[i].name == backend) return;
    if (i > 0) known += i + 1 == backends.size() ? " or " : ", ";
    known += backends[i].name;
  }
  throw FieldError("backend", "unknown backend '" + backend + "' (available: " + known + ")");
}

std::unique_ptr<PreparedCollective> CheckCollectiveScenario(const CollectiveScenario& scenario,
                                                            const Topology& topology) {
  auto p = std::make_unique<PreparedCollective>();
  p->scenario = scenario;

  CheckScenarioBackend(scenario.backend);

  const std::string& topology_name = scenario.topology.empty() ? topology.name : scenario.topology;
  if (scenario.ranks < 1) {
    throw FieldError("ranks",
                     "must be at least 1 (got " + std::to_string(scenario.ranks) + ")");
  }
  CheckRanksFitTopology("ranks", scenario.ranks, "rank", topology_name, topology);
  if (scenario.on_gpus < 0 || scenario.on_gpus > topology.num_gpus()) {
    throw FieldError("on_gpus", std::to_string(scenario.on_gpus) + " GPUs but topology '" + topology_name +
                                    "' has " + std::to_string(topology.num_gpus()));
  }
  if (scenario.issue_ns < 0) throw FieldError("issue_us", "must not be negative");
  if (scenario.graph_op_ns < 0) throw FieldError("graph_op_us", "must not be negative");
  CheckSize(scenario.size_bytes, scenario.dtype);
  if (!CollectiveHasAlgo(scenario.kind, scenario.algo)) {
    const std::string valid = CollectiveAlgoList(scenario.kind);
    const std::string kind = CollectiveKindName(scenario.kind);
    throw FieldError("algo", kind + " has no '" + CollectiveAlgoName(scenario.algo) +
                                 "' algorithm (valid for " + kind + ": " + valid + ")");
  }
  if (CollectiveHasRoot(scenario.kind)) {
    ParseBoundedInt("root", std::to_string(scenario.root), 0, scenario.ranks - 1);
  }

  // The ring search only matters to rings; an explicit order is still checked.
  const bool ring = scenario.algo == CollectiveAlgo::kRing;
  if (ring || scenario.ring_order != "auto") {
    std::vector<int> order =
        ParseRingOrder(scenario.ring_order, topology, scenario.ranks, &p->ring_order_mode);
    if (ring) p->ring_order = std::move(order);
  }

  p->params.kind = scenario.kind;
  p->params.algo = scenario.algo;
  p->params.ranks = scenario.ranks;
  p->params.count = scenario.size_bytes / DTypeBytes(scenario.dtype);
  p->params.dtype = scenario.dtype;
  p->params.op = CollectiveReduces(scenario.kind) ? scenario.op : ReduceOp::kNone;
  p->params.root = CollectiveHasRoot(scenario.kind) ? scenario.root : 0;
  p->params.ring_order = p->ring_order;
  CheckCollectiveParams(p->params);

  p->topology = topology;
  if (!p->ring_order.empty() && scenario.ranks > 1) {
    p->ring_bottleneck_gbps = RingBottleneckGbps(topology, p->ring_order);
  }
  SetAlphaAndBandwidth(*p);
  SetPrediction(*p);
  return p;
}

std::unique_ptr<PreparedCollective> PrepareCollective(const CollectiveScenario& scenario) {
  return PrepareCollective(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedCollective> PrepareCollective(const CollectiveScenario& scenario,
                                                      const Topology& topology) {
  std::unique_ptr<PreparedCollective> p = CheckCollectiveScenario(scenario, topology);
  p->plan = BuildCollective(p->params);
  return p;
}

std::unique_ptr<PreparedCollective> PrepareCollectiveAtSize(const PreparedCollective& checked,
                                                            Bytes size_bytes) {
  CheckSize(size_bytes, checked.scenario.dtype);
  std::unique_ptr<PreparedCollective> p = CopyWithoutPlan(checked);
  p->scenario.size_bytes = size_bytes;
  p->params.count = size_bytes / DTypeBytes(checked.scenario.dtype);
  CheckCollectiveParams(p->params);
  SetPrediction(*p);
  p->plan = BuildCollective(p->params);
  return p;
}

CollectiveOutcomeSummary SummarizeCollective(const PreparedCollective& prepared,
                                             TimeNs run_end_ns, std::size_t events,
                                             const Backend& backend, const Plan* ran) {
  const Plan& plan = ran != nullptr ? *ran : prepared.plan;
  CollectiveOutcomeSummary s;
  s.metrics = ComputeCollectiveMetrics(prepared.params.kind, prepared.params.ranks,
                                       CollectiveSizeBytes(prepared.params), run_end_ns);
  s.steps = plan.num_steps;
  s.events = events;
  if (prepared.scenario.timing_only) {
    s.not_checked_reason = "timing only: the data was not computed";
    return s;
  }
  // A GPU holds 16-bit data in its dtype: checked with the dtype's bound.
  const std::string backend_name = backend.name();
  s.verify = VerifyCollective(prepared.params, plan, prepared.scenario.seed,
                              [&backend](BufferId id) { return backend.BufferData(id); },
                              ComputeDType(backend_name.c_str(), prepared.params.dtype));
  s.checked = true;
  return s;
}

CollectiveScenario CollectiveFromParams(const ScenarioParams &p,
                                        const Topology *topology) {
  CollectiveScenario sc;
  sc.kind = ParseCollectiveKind(p.Text("kind"));
  sc.algo = p.Text("algo") == "auto" ? DefaultAlgo(sc.kind)
                                     : ParseCollectiveAlgo(p.Text("algo"));
  sc.topology = p.Text("topology");
  sc.ranks = static_cast<int>(p.Int("ranks"));
  if (p.Text("ranks") == "all")
    sc.ranks = topology != nullptr
                   ? topology->num_gpus()
                   : LoadScenarioTopology(sc.topology).num_gpus();
  sc.size_bytes = p.Size("size");
  sc.dtype = ParamDType(p);
  const std::string &op = p.Text("op");
  sc.op = op == "max"   ? ReduceOp::kMax
          : op == "min" ? ReduceOp::kMin
                        : ReduceOp::kSum;
  sc.root = static_cast<int>(p.Int("root"));
  sc.ring_order = p.Text("ring_order");
  sc.timing_only = p.Bool("timing_only");
  sc.on_gpus = static_cast<int>(p.Int("on_gpus"));
  sc.issue_ns = p.Number("issue_us") * 1e3;
  sc.graph_op_ns = p.Number("graph_op_us") * 1e3;
  return sc;
}

RunOptions CollectiveRunOptions(const CollectiveScenario& scenario) {
  RunOptions options;
  options.seed = scenario.seed;
  options.timing_only = scenario.timing_only;
  if (scenario.on_gpus > 0) {
    options.rank_to_gpu.resize(static_cast<std::size_t>(std::max(scenario.ranks, 0)));
    for (int r = 0; r < scenario.ranks; ++r) options.rank_to_gpu[static_cast<std::size_t>(r)] = r % scenario.on_gpus;
    options.shared_device_memory = true;
  }
  options.op_issue_ns = scenario.issue_ns;
  options.graph_op_ns = scenario.graph_op_ns;
  return options;
}

// One spec for every collective: `run allreduce` is `kind = allreduce`.
namespace {

/// The kinds' names, in kind order (the collectives' table).
std::vector<std::string> CollectiveNames() {
  std::vector<std::string> names;
  for (const CollectiveDef* def : Collectives()) names.emplace_back(def->name);
  return names;
}

/// A real collective run holds every rank's buffers as floats on the host.
void CheckCollectiveHostMemory(const CollectiveScenario& sc) {
  if (sc.timing_only) return;
  const double elements = static_cast<double>(sc.size_bytes) / DTypeBytes(sc.dtype);
  // Input and output buffers per rank (all-to-all: send and receive).
  const double bytes = 2.0 * sc.ranks * elements * sizeof(float);
  if (bytes > kMaxRealCollectiveHostBytes) {
    throw Error("size: a run with data of " + FormatBytes(sc.size_bytes) + " on " +
                std::to_string(sc.ranks) + " ranks needs about " +
                FormatBytes(static_cast<Bytes>(bytes)) + " of host memory (labs allow " +
                FormatBytes(static_cast<Bytes>(kMaxRealCollectiveHostBytes)) +
                "); set timing_only = true");
  }
}

std::unique_ptr<Prepared> PrepareCollectiveRun(const ScenarioParams& p, const Topology* machine) {
  // The host-memory rule is the check's (labs), not Prepare's: a trace of a
  // large run with data is rebuilt through here.
  const CollectiveScenario sc = CollectiveFromParams(p, machine);
  // Stragglers and failures (slow_rank, ...): a throttle changes the machine
  // before the ring is chosen; the rest the simulator applies.
  Faults faults = FaultsFromParams(p);
  Topology topology = machine != nullptr ? *machine : LoadScenarioTopology(sc.topology);
  ResolveFaults(faults, topology, sc.ranks);
  ApplyLinkThrottles(faults, topology);
  std::shared_ptr<PreparedCollective> detail = PrepareCollective(sc, topology);
  CheckFaultSteps(faults, detail->plan);
  auto out = std::make_unique<Prepared>();
  out->topology = detail->topology;
  out->options = CollectiveRunOptions(sc);
  out->options.faults = std::move(faults);
  out->stop_is_result = true;  // a failed rank or link: the run shows who never joined
  out->plan = std::move(detail->plan);
  out->title = std::string(CollectiveAlgoName(sc.algo)) + " " + CollectiveTitle(sc.kind) + " of " +
               FormatBytes(sc.size_bytes) + " on " + std::to_string(sc.ranks) + " ranks (" +
               sc.topology + ")";
  out->detail = std::move(detail);
  return out;
}

void SummarizeCollectiveRun(const Prepared& prepared, const FinishedRun& run, Summary& out) {
  const PreparedCollective& detail = prepared.Detail<PreparedCollective>();
  const CollectiveScenario& sc = detail.scenario;
  const Plan& plan = run.plan;
  // The host lane (issue_us > 0): the calls the host made, their total.
  const std::vector<HostEnqueueSpan> host_lane = run.backend.host_lane();
  double host_lane_ns = 0;
  for (const HostEnqueueSpan& h : host_lane) host_lane_ns += h.end_ns - h.start_ns;
  std::vector<double> sent(static_cast<std::size_t>(std::max(sc.ranks, 1)), 0.0);
  for (const Event& e : run.events) {
    if (e.kind == OpKind::kSend && e.rank >= 0 && e.rank < static_cast<int>(sent.size()))
      sent[static_cast<std::size_t>(e.rank)] += static_cast<double>(e.bytes);
  }
  // What a run that a failed rank or link stopped left behind.
  std::vector<char> done(plan.ops.size(), 0);
  double ops_done = 0;
  for (const Event& e : run.events) {
    if (e.op >= 0 && e.op < static_cast<OpId>(plan.ops.size()) && !done[e.op]) {
      done[e.op] = 1;
      ops_done += 1;
    }
  }
  double stalled_step = -1;
  std::vector<char> waiting(static_cast<std::size_t>(std::max(plan.num_ranks, 0)), 0);
  for (std::size_t id = 0; id < plan.ops.size(); ++id) {
    if (done[id]) continue;
    const Op& op = plan.ops[id];
    if (stalled_step < 0 || op.step < stalled_step) stalled_step = op.step;
    if (op.rank >= 0 && op.rank < plan.num_ranks &&
        !prepared.options.faults.RankFailedAt(op.rank, op.step))
      waiting[static_cast<std::size_t>(op.rank)] = 1;
  }
  const double waiting_ranks = static_cast<double>(std::count(waiting.begin(), waiting.end(), 1));
  double t = 0, algbw = 0, busbw = 0;
  if (run.completed) {
    auto kept = std::make_shared<CollectiveOutcomeSummary>(SummarizeCollective(
        detail, RunSpanNs(run.events), run.events.size(), run.backend, &plan));
    const CollectiveOutcomeSummary& s = *kept;
    out.detail = kept;
    t = static_cast<double>(s.metrics.time_ns);
    algbw = s.metrics.algbw_gbps;
    busbw = s.metrics.busbw_gbps;
    if (!s.checked) {
      out.verdict = NotChecked(s.not_checked_reason);
    } else {
      out.verdict.kind = s.verify.correct ? VerdictKind::kCorrect : VerdictKind::kWrong;
      out.verdict.elements = s.verify.checked;
      if (!s.verify.correct)
        out.verdict.reason = std::to_string(s.verify.wrong) + " of " +
                             std::to_string(s.verify.checked) + " values wrong, max_abs_err " +
                             std::to_string(s.verify.max_abs_err);
    }
  } else {
    // A failed rank or link stopped the run: the collective never finished,
    // so it has no bandwidth and its result is not checked.
    t = static_cast<double>(RunSpanNs(run.events));
    out.verdict = NotChecked("the run was stopped by a failed rank or link");
  }
  out.values = {
      {"completed", run.completed ? 1.0 : 0.0},
      {"ops_done", ops_done},
      {"ops_total", static_cast<double>(plan.ops.size())},
      {"stalled_step", run.completed ? -1.0 : stalled_step},
      {"waiting_ranks", run.completed ? 0.0 : waiting_ranks},
      {"time_ns", t},
      {"time_us", t / 1e3},
      {"time_ms", t / 1e6},
      {"algbw_gbps", algbw},
      {"busbw_gbps", busbw},
      {"bytes_sent_per_rank", *std::max_element(sent.begin(), sent.end())},
      {"steps", static_cast<double>(plan.num_steps)},
      {"predicted_ns", static_cast<double>(detail.predicted_ns)},
      {"predicted_us", detail.predicted_ns / 1e3},
      {"predicted_ms", detail.predicted_ns / 1e6},
      {"formula_bandwidth_gbps", detail.bandwidth_gbps},
      {"formula_alpha_us", detail.alpha_ns / 1e3},
      {"host_calls", static_cast<double>(host_lane.size())},
      {"host_lane_us", host_lane_ns / 1e3},
      {"host_share", t > 0 ? host_lane_ns / t : 0.0},
  };
  if (!run.completed) {
    out.line = prepared.title + " stopped: " + run.stop;
    return;
  }
  out.line = prepared.title + ": " + FormatTime(static_cast<TimeNs>(t)) + ", algbw " +
             FormatFixed(algbw, 1) + " GB/s, busbw " + FormatFixed(busbw, 1) + " GB/s, " +
             std::to_string(plan.num_steps) + " steps";
  if (!host_lane.empty())
    out.line += "; host lane " + std::to_string(host_lane.size()) + " calls, " +
                FormatTime(static_cast<TimeNs>(host_lane_ns));
}

}  // namespace

void RegisterScenario_collective_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "collective";
  s.title = "Collective";
  s.summary =
      "one collective (ring or tree all-reduce, ...) on a simulated machine";
  s.params = {
      Param("kind", T::kChoice, "allreduce",
            "the collective (the CLI's command word: run allreduce)")
          .Choices(CollectiveNames())
          .NoCli(),
      Param(
          "algo", T::kChoice, "auto",
          "auto (ring; direct for all-to-all), ring, tree (all-reduce), direct "
          "(all-to-all) or nccl (one NCCL call per rank; the simulator's model "
          "of NCCL on sim)")
          .Choices({"auto", "ring", "tree", "direct", "nccl"})
          .Noun("algorithm"),
      Param("ranks", T::kInteger, "all",
            "GPUs taking part, rank r on GPU r; all: every GPU of the topology")
          .Range(1, 65536)
          .Unit("GPUs")
          .AutoWord("all"),
      Param("size", T::kSize, "16M",
            "one rank's buffer: 8, 64K, 64M, 1G, 1.6GB, 4KiB")
          .Min(1)
          .Unit("bytes")
          .Short('s'),
      DTypeParam("element type"),
      Param("op", T::kChoice, "sum", "the reduction (reducing collectives)")
          .Choices({"sum", "max", "min"})
          .Noun("reduction")
          .Short('o'),
      Param("root", T::kInteger, "0", "root of broadcast and reduce")
          .Range(0, 65535)
          .Unit("rank")
          .Short('r')
          .ValueName("RANK"),
      TopologyParam(
          "a preset (see 'topo --list') or a topology file; rank r on GPU r"),
      Param("ring_order", T::kText, "auto",
            "auto (fast links first), rank (0..n-1) or a list like 0,3,2,1")
          .ValueName("ORDER"),
      TimingOnlyParam(),
  };
  s.params[4].short_flag = 'd';
  for (ParamSpec& p : FaultParams()) s.params.push_back(std::move(p));
  // The model of one machine's host (the CLI: --topology this with a
  // device profile and --issue, which set the same run options).
  for (ParamSpec& p : std::vector<ParamSpec>{
      Param("on_gpus", T::kInteger, "0",
            "0: rank r on GPU r; N: the ranks are virtual devices of the first N GPUs (rank r on GPU r mod N), "
            "sharing each GPU's memory bandwidth")
          .Range(0, 65536)
          .Unit("GPUs")
          .NoCli(),
      Param("issue_us", T::kNumber, "0",
            "what issuing one op costs the one host thread that enqueues the plan in order (a launch and two "
            "event records); op k waits until k of these have passed; 0: free")
          .Min(0)
          .Unit("us")
          .NoCli(),
      Param("graph_op_us", T::kNumber, "0",
            "a CUDA graph replay: an op that depends on others starts this long after its inputs are done "
            "(the host issues nothing per op); 0: at once")
          .Min(0)
          .Unit("us")
          .NoCli(),
       }) {
    s.params.push_back(std::move(p));
  }
  s.measured = {
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
      {"completed", "", "1 when every op ran; 0 when a failed rank or link stopped the run"},
      {"ops_done", "ops", "ops that finished"},
      {"ops_total", "ops", "ops of the plan"},
      {"stalled_step", "", "the first logical step with an op that never ran; -1 when none"},
      {"waiting_ranks", "ranks", "ranks left waiting with work of their own (not the failed)"},
      {"host_calls", "calls", "the host lane's enqueue calls (one per op issued, a transfer once; 0 when issue_us is 0)"},
      {"host_lane_us", "us", "the host lane's total: the time the host thread spent issuing"},
      {"host_share", "", "host_lane_us / time_us: near 1, the run is bound by the host's issue cost"},
  };
  s.check = [](const ScenarioParams& p) {
    FaultsFromParams(p);  // the switches parse; ranks, links and steps are checked at Prepare
    const CollectiveScenario sc = CollectiveFromParams(p);
    CheckCollectiveScenario(sc, LoadScenarioTopology(sc.topology));
    CheckCollectiveHostMemory(sc);
  };
  s.prepare = PrepareCollectiveRun;
  s.summarize = SummarizeCollectiveRun;
  // The app's widgets of its own for three fields; the views are the common ones.
  s.panels = {"collective_algo_field", "collective_size_field", "collective_ring_order_field"};
  s.resolve = [](const ScenarioParams& p, std::map<std::string, double>& values) {
    values["ranks"] = CollectiveFromParams(p).ranks;  // "all": every GPU of the topology
  };
  RegisterScenario(std::move(s));
}

} // namespace shardlab
