#include "engine/scenarios/tp_scenario.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/verify/bounds.h"
#include "engine/verify/tp_bounds.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/core/units.h"
#include "engine/scenarios/scenario.h"

namespace shardlab {
namespace {

// Real runs hold every buffer on the host; past this many elements over all
// ranks, ask for timing-only.
constexpr std::int64_t kMaxRealElements = std::int64_t{1} << 27;

double PlanElements(const TpLayerConfig& c) {
  // Upper bound that needs no plan: activations T × max(H, F) a few times
  // per rank, attention's B·S² per head, and the weights.
  const std::int64_t t = c.tokens(), h = c.hidden, f = c.split_width();
  const std::int64_t heads = c.head_count();
  const double per_rank = 16.0 * t * std::max(h, f) + 4.0 * h * f + 8.0 * h * h +
                         2.0 * heads * c.batch * static_cast<double>(c.seq) * c.seq;
  return per_rank * c.tp;
}

}  // namespace

double TpRealRunHostBytes(const TpLayerConfig& config) { return 4.0 * PlanElements(config); }
double TpMaxRealRunBytes() { return 4.0 * static_cast<double>(kMaxRealElements); }

void CheckTpScenario(const TpScenario& scenario, const Topology& topology) {
  CheckScenarioBackend(scenario.backend);
  CheckTpLayerConfig(scenario.layer);
  const TpLayerConfig& c = scenario.layer;
  CheckRanksFitTopology("tp", c.tp, "rank", scenario.topology, topology);
  if (c.dtype != DType::kF32 && !scenario.timing_only)
    throw Error(std::string("dtype: ") + (c.dtype == DType::kBF16 ? "bf16" : "fp16") +
                " runs are timing-only (the host kernels compute in float32): add --timing-only "
                "or use fp32");
  if (!scenario.timing_only && TpRealRunHostBytes(c) > TpMaxRealRunBytes())
    throw Error("batch: a real run of this layer (batch × seq × hidden, ffn, heads over tp " +
                std::to_string(c.tp) + ") would hold about " +
                FormatBytes(static_cast<Bytes>(TpRealRunHostBytes(c))) +
                " of host buffers; use --timing-only for shapes this large");
}

std::unique_ptr<PreparedTp> PrepareTp(const TpScenario& scenario) {
  return PrepareTp(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedTp> PrepareTp(const TpScenario& scenario, const Topology& topology) {
  CheckTpScenario(scenario, topology);
  auto p = std::make_unique<PreparedTp>();
  p->scenario = scenario;
  p->topology = topology;
  p->layer = BuildTpLayer(scenario.layer);
  return p;
}

TpMetrics MeasureTp(const TpLayerPlan& layer, const Plan& plan, std::span<const Event> events) {
  TpMetrics m;
  m.tp = layer.config.tp;
  std::map<int, std::size_t> index;  // collective_seq -> position in m.collectives
  for (const TpCollective& c : layer.collectives) {
    index[c.seq] = m.collectives.size();
    TpCollectiveTiming t;
    t.collective = c;
    t.tensor_bytes = c.count * DTypeBytes(layer.config.dtype);
    m.collectives.push_back(t);
  }
  std::vector<TimeNs> compute(static_cast<std::size_t>(std::max(plan.num_ranks, 1)), 0);
  std::vector<TimeNs> first(m.collectives.size(), 0), last(m.collectives.size(), 0);
  std::vector<std::map<int, Bytes>> sent(m.collectives.size());
  TimeNs begin = 0, end = 0;
  bool any = false;
  for (const Event& e : events) {
    begin = any ? std::min(begin, e.start_ns) : e.start_ns;
    end = any ? std::max(end, e.end_ns) : e.end_ns;
    any = true;
    if (e.kind == OpKind::kCompute && e.rank >= 0 && e.rank < plan.num_ranks)
      compute[static_cast<std::size_t>(e.rank)] += e.duration_ns();
    const auto it = index.find(e.collective_seq);
    if (it == index.end()) continue;
    const std::size_t i = it->second;
    TpCollectiveTiming& t = m.collectives[i];
    first[i] = t.events == 0 ? e.start_ns : std::min(first[i], e.start_ns);
    last[i] = t.events == 0 ? e.end_ns : std::max(last[i], e.end_ns);
    ++t.events;
    if (e.kind == OpKind::kSend) sent[i][e.rank] += e.bytes;
  }
  m.step_ns = any ? end - begin : 0;
  m.compute_ns = *std::max_element(compute.begin(), compute.end());
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (std::size_t i = 0; i < m.collectives.size(); ++i) {
    TpCollectiveTiming& t = m.collectives[i];
    if (t.events == 0) continue;
    t.span_ns = last[i] - first[i];
    spans.emplace_back(first[i], last[i]);
    for (const auto& [rank, bytes] : sent[i]) t.sent_per_rank = std::max(t.sent_per_rank, bytes);
    if (t.collective.kind != GroupCollectiveKind::kAllGather)
      (t.collective.forward ? m.forward_allreduces : m.backward_allreduces)++;
  }
  // The union of the spans: overlapping collectives count once.
  std::sort(spans.begin(), spans.end());
  TimeNs covered_to = -INFINITY;
  for (const auto& [from, to] : spans) {
    if (to <= covered_to) continue;
    m.comm_ns += to - std::max(from, covered_to);
    covered_to = to;
  }
  m.comm_share = m.step_ns > 0 ? static_cast<double>(m.comm_ns) / static_cast<double>(m.step_ns) : 0;
  return m;
}

namespace {

// The block's elements: the backend's, the reference's and their bounds.
struct BlockElements {
  std::vector<float> got;
  std::vector<double> want, bound;
  bool fits = true;
};

BlockElements GatherBlock(std::span<const float> data, std::int64_t offset, const TpBlock& b,
                          const TpBoundedTensor& reference) {
  BlockElements out;
  if (offset < 0 || offset + b.rows * b.cols > static_cast<std::int64_t>(data.size()) ||
      b.row0 + b.rows > reference.rows || b.col0 + b.cols > reference.cols) {
    out.fits = false;
    return out;
  }
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t j = 0; j < b.cols; ++j) {
      const auto at = static_cast<std::size_t>((b.row0 + i) * reference.cols + b.col0 + j);
      out.got.push_back(data[static_cast<std::size_t>(offset + i * b.cols + j)]);
      out.want.push_back(reference.value[at]);
      out.bound.push_back(reference.bound[at]);
    }
  return out;
}

// Largest |got − want| over the block relative to its largest |want|, with
// a floor of 0.1 on that scale (the key bias's gradient is zero in exact
// arithmetic), for display.
double BlockError(const BlockElements& b) {
  if (!b.fits) return INFINITY;
  double diff = 0, scale = 0.1;
  for (std::size_t i = 0; i < b.want.size(); ++i) {
    const double d = std::fabs(static_cast<double>(b.got[i]) - b.want[i]);
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::fabs(b.want[i]));
  }
  return diff / scale;
}

}  // namespace

TpSummary SummarizeTp(const PreparedTp& prepared, std::span<const Event> events,
                      const Backend& backend, const Plan* ran) {
  const Plan& plan = ran != nullptr ? *ran : prepared.layer.plan;
  TpSummary s;
  s.metrics = MeasureTp(prepared.layer, plan, events);
  s.steps = plan.num_steps;
  s.events = events.size();
  if (prepared.scenario.timing_only) {
    s.check.not_checked_reason = "timing only: the data was not computed";
    s.check.verdict = NotChecked(s.check.not_checked_reason);
    return s;
  }
  TpCheck& check = s.check;
  check.checked = true;
  const DType computed = ComputeDType(prepared.scenario.backend.c_str(), prepared.scenario.layer.dtype);
  const TpBoundedReference reference(prepared.scenario.layer, prepared.scenario.seed, UnitRoundoff(computed));
  VerdictJudge judge;
  for (const TpTensorBlock& block : prepared.layer.blocks) {
    if (block.role == TpTensorRole::kWeight) continue;
    const std::string name = block.tensor + " (rank " + std::to_string(block.rank) + ")";
    const BlockElements b = GatherBlock(backend.BufferData(block.buffer), block.offset, block.block,
                                        reference.tensor(block.tensor));
    if (!b.fits) judge.Fail(name + ": the block lies outside its buffer or tensor");
    else judge.Compare(name, b.got, b.want, b.bound);
    double& error = block.role == TpTensorRole::kOutput ? check.output_error : check.gradient_error;
    error = std::max(error, BlockError(b));
    ++check.blocks_checked;
  }
  check.verdict = judge.Finish();
  check.correct = check.blocks_checked > 0 && check.verdict.correct();
  check.worst_tensor = check.verdict.worst.tensor;
  return s;
}

TpAllReduceFormula TpAllReduceEstimate(const TpScenario& scenario, const Topology& topology) {
  TpAllReduceFormula f;
  const TpLayerConfig& c = scenario.layer;
  if (c.tp <= 1) {
    f.text = "one rank: no all-reduce";
    return f;
  }
  CollectiveScenario cs;
  cs.kind = CollectiveKind::kAllReduce;
  cs.algo = CollectiveAlgo::kRing;
  cs.ranks = c.tp;
  cs.dtype = c.dtype;
  cs.size_bytes = c.tokens() * c.hidden * DTypeBytes(c.dtype);
  cs.topology = scenario.topology;
  cs.ring_order = "rank";
  cs.timing_only = true;
  const auto checked = CheckCollectiveScenario(cs, topology);
  f.ns = checked->predicted_ns;
  f.bandwidth_gbps = checked->bandwidth_gbps;
  f.alpha_ns = checked->alpha_ns;
  f.text = checked->formula;
  return f;
}

std::vector<TpScalingRow> RunTpScaling(const TpScenario& scenario, const std::vector<int>& tps) {
  TpScenario base = scenario;
  base.timing_only = true;
  base.backend = "sim";
  const Topology topology = LoadScenarioTopology(base.topology);
  auto run = [&](int tp) {
    TpScenario s = base;
    s.layer.tp = tp;
    auto prepared = PrepareTp(s, topology);
    const TpLayerPlan& layer = prepared->layer;
    RunOptions options;
    options.timing_only = true;
    options.seed = s.seed;
    Executor ex(CreateBackend("sim"), layer.plan, topology, options);
    VectorSink sink;
    ex.RunToEnd(sink);
    if (ex.state() != ExecutorState::kDone)
      throw Error("tp " + std::to_string(tp) + ": the run failed: " + ex.error(), ErrorKind::kRuntime);
    return MeasureTp(layer, layer.plan, sink.events);
  };
  for (const int tp : tps) {  // every size checked before anything runs
    TpScenario s = base;
    s.layer.tp = tp;
    CheckTpScenario(s, topology);
  }
  // One GPU: the same layer unsplit (heads and widths always divide by 1).
  const TimeNs single = run(1).step_ns;
  std::vector<TpScalingRow> rows;
  for (const int tp : tps) {
    TpScalingRow row;
    row.tp = tp;
    row.metrics = run(tp);
    row.single_device_ns = single;
    row.speedup = row.metrics.step_ns > 0 ? static_cast<double>(single) / row.metrics.step_ns : 0;
    row.efficiency = tp > 0 ? row.speedup / tp : 0;
    std::set<int> hosts;
    for (int g = 0; g < tp && g < topology.num_gpus(); ++g)
      hosts.insert(topology.nodes[static_cast<std::size_t>(topology.gpus[g])].host);
    row.hosts = static_cast<int>(hosts.size());
    row.crosses_nodes = hosts.size() > 1;
    TpScenario s = base;
    s.layer.tp = tp;
    row.ring_gbps = TpAllReduceEstimate(s, topology).bandwidth_gbps;
    rows.push_back(std::move(row));
  }
  return rows;
}

TpScenario TpFromParams(const ScenarioParams &p) {
  TpScenario sc;
  TpLayerConfig &c = sc.layer;
  c.kind = ParseTpLayerKind(p.Text("layer"));
  c.batch = static_cast<int>(p.Int("batch"));
  c.seq = static_cast<int>(p.Int("seq"));
  c.hidden = static_cast<int>(p.Int("hidden"));
  c.ffn = static_cast<int>(p.Int("ffn"));
  c.heads = static_cast<int>(p.Int("heads"));
  if (c.heads == 0 && c.has_attention() && c.hidden % 128 != 0)
    c.heads = 4;
  c.tp = static_cast<int>(p.Int("tp"));
  c.sequence_parallel = p.Bool("sequence_parallel");
  c.dtype = ParamDType(p);
  sc.topology = p.Text("topology");
  sc.timing_only = p.Bool("timing_only");
  return sc;
}

const char* TpCollectiveKindName(GroupCollectiveKind kind) {
  switch (kind) {
    case GroupCollectiveKind::kAllReduce: return "all-reduce";
    case GroupCollectiveKind::kReduceScatter: return "reduce-scatter";
    case GroupCollectiveKind::kAllGather: return "all-gather";
  }
  return "?";
}

namespace {

std::unique_ptr<Prepared> PrepareTpRun(const ScenarioParams& p, const Topology* machine) {
  const TpScenario sc = TpFromParams(p);
  std::shared_ptr<PreparedTp> detail = machine != nullptr ? PrepareTp(sc, *machine) : PrepareTp(sc);
  std::string title = std::string("tp-") + TpLayerKindName(sc.layer.kind) + " at tp " +
      std::to_string(sc.layer.tp) + " on " + sc.topology;
  Topology& topology = detail->topology;
  Plan& plan = detail->layer.plan;
  return PreparedPlan(p, topology, plan, sc.timing_only, sc.seed, std::move(title),
                      std::move(detail));
}

/// Bytes as the seed text writes them: "1.61 GB" (powers of ten).
std::string DecimalBytes(Bytes bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " B";
  return FormatFixed(value, value >= 100 ? 0 : value >= 10 ? 1 : 2) + " " + kUnits[unit];
}

/// The rows under the table of collectives: the step split and the seed
/// text's all-reduce estimate beside the simulation.
void TpReport(const PreparedTp& prepared, const TpSummary& s, Report& r) {
  const TpMetrics& m = s.metrics;
  const TpLayerConfig& c = prepared.scenario.layer;
  std::size_t ran = 0;  // one rank runs none of its plan's collectives
  for (const TpCollectiveTiming& t : m.collectives) ran += t.events > 0;
  const std::string allreduces = std::to_string(m.forward_allreduces) + " forward and " +
                                 std::to_string(m.backward_allreduces) + " backward all-reduce" +
                                 (m.backward_allreduces == 1 ? "" : "s");
  const std::string comm_text =
      ran == 0 ? "none on one rank"
               : std::to_string(ran) + " collective" + (ran == 1 ? "" : "s") + " (" + allreduces +
                     (c.sequence_parallel ? ", each a reduce-scatter + all-gather" : "") + "); compute waits for each";
  r.Block(16, 12).rows = {TimeRow("compute", "compute_us", m.compute_ns, "the busiest rank's compute ops"),
                          TimeRow("communication", "comm_us", m.comm_ns, comm_text),
                          {"comm share", FormatFixed(m.comm_share, 3), "of the step", "comm_share", m.comm_share},
                          TimeRow("step time", "step_time_us", m.step_ns, "forward + backward of the layer")};
  const TpAllReduceFormula formula = TpAllReduceEstimate(prepared.scenario, prepared.topology);
  const Bytes tensor_bytes = c.tokens() * c.hidden * DTypeBytes(c.dtype);
  const TimeNs seed_ns = RingAllReduceNs(tensor_bytes, c.tp, kSeedNvlink3Gbps, formula.alpha_ns);
  const int count = m.forward_allreduces + m.backward_allreduces;
  const TimeNs simulated_ns = count > 0 ? m.comm_ns / count : 0;  // an RS + AG pair counts once
  r.Line("");
  if (c.tp <= 1) {
    r.Line("Estimate: one rank, no all-reduce");
  } else {
    r.Line("Estimate (seed text): ring all-reduce of the " + DecimalBytes(tensor_bytes) +
           " tensor M, B = slowest hop of GPUs 0.." + std::to_string(c.tp - 1) + ", per direction");
    r.Line("  " + formula.text + "   (simulated: " + FormatTime(simulated_ns) + ")");
    r.Line("  The seed's " + FormatGbps(kSeedNvlink3Gbps) + " GB/s (" + FormatTime(seed_ns) +
           ") is NVLink3's two directions added; a ring sends each byte one way, at B = " +
           FormatGbps(formula.bandwidth_gbps) + " GB/s: " + FormatTime(formula.ns) + ".");
  }
  ReportValue& f = r.fields;
  f.Add("forward_allreduces", m.forward_allreduces).Add("backward_allreduces", m.backward_allreduces);
  ReportValue collectives = ReportValue::List();
  for (const TpCollectiveTiming& t : m.collectives) {
    ReportValue row = ReportValue::Object();
    row.Add("seq", t.collective.seq).Add("pass", t.collective.forward ? "forward" : "backward");
    row.Add("kind", TpCollectiveKindName(t.collective.kind)).Add("what", t.collective.what);
    row.Add("count", t.collective.count).Add("tensor_bytes", t.tensor_bytes);
    row.Add("sent_per_rank_bytes", t.sent_per_rank).Add("time_us", t.span_ns / 1e3).Add("events", t.events);
    collectives.Push(std::move(row));
  }
  ReportValue estimate = ReportValue::Object();
  estimate.Add("tensor_bytes", tensor_bytes).Add("formula", formula.text).Add("allreduce_us", formula.ns / 1e3);
  estimate.Add("bandwidth_gbps", formula.bandwidth_gbps).Add("alpha_us", formula.alpha_ns / 1e3);
  estimate.Add("seed_bandwidth_gbps", kSeedNvlink3Gbps).Add("seed_allreduce_us", seed_ns / 1e3);
  estimate.Add("simulated_allreduce_us", simulated_ns / 1e3);
  f.Add("collectives", std::move(collectives)).Add("estimate", std::move(estimate));
  AddCheckFields(f, s.check.checked, s.check.correct,
                 {{"output_error", s.check.output_error}, {"gradient_error", s.check.gradient_error}},
                 s.check.not_checked_reason);
  f.Add("worst_tensor", ReportValue::Maybe(s.check.checked, s.check.worst_tensor));
  f.Add("blocks_checked", s.check.checked ? s.check.blocks_checked : 0);
  r.result = LayerCheckText(s.check.verdict, s.check.checked, s.check.not_checked_reason,
                            "forward and every gradient within their error bounds of the single-device layer in double",
                            "the split layer differs from the single-device layer",
                            "; " + std::to_string(s.check.blocks_checked) + " blocks");
}

void SummarizeTpRun(const Prepared& prepared, const FinishedRun& run, Summary& out) {
  const PreparedTp& detail = prepared.Detail<PreparedTp>();
  const TpScenario& sc = detail.scenario;
  auto kept = std::make_shared<TpSummary>(
      SummarizeTp(detail, run.events, run.backend, &run.plan));
  const TpSummary& s = *kept;
  out.detail = kept;
  out.verdict = s.check.verdict;
  TpReport(detail, s, out.report);
  const TpAllReduceFormula formula = TpAllReduceEstimate(sc, detail.topology);
  std::set<int> hosts;
  for (int g = 0; g < sc.layer.tp && g < detail.topology.num_gpus(); ++g)
    hosts.insert(detail.topology.nodes[static_cast<std::size_t>(
                                           detail.topology.gpus[static_cast<std::size_t>(g)])]
                     .host);
  const TpMetrics& m = s.metrics;
  double span_sum = 0;
  for (const TpCollectiveTiming& c : m.collectives) span_sum += c.span_ns;
  const double mean_span = m.collectives.empty() ? 0.0 : span_sum / m.collectives.size();
  out.values = {
      {"time_ms", m.step_ns / 1e6},
      {"compute_ms", m.compute_ns / 1e6},
      {"comm_ms", m.comm_ns / 1e6},
      {"comm_fraction", m.comm_share},
      {"forward_allreduces", static_cast<double>(m.forward_allreduces)},
      {"backward_allreduces", static_cast<double>(m.backward_allreduces)},
      {"allreduce_tensor_bytes",
       m.collectives.empty() ? 0.0 : static_cast<double>(m.collectives.front().tensor_bytes)},
      {"allreduce_ms", mean_span / 1e6},
      {"formula_allreduce_ms", formula.ns / 1e6},
      {"ring_gbps", formula.bandwidth_gbps},
      {"hosts", static_cast<double>(hosts.size())},
  };
  out.line = std::string("tp-") + TpLayerKindName(sc.layer.kind) + " at tp " +
             std::to_string(sc.layer.tp) + " (" + sc.topology + "): step " +
             FormatTime(m.step_ns) + ", communication " + FormatFixed(100 * m.comm_share, 1) +
             "%, " + std::to_string(m.forward_allreduces) + " + " +
             std::to_string(m.backward_allreduces) + " all-reduces";
}

}  // namespace

void RegisterScenario_tp_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "tp";
  s.title = "Tensor parallel";
  s.summary = "one tensor-parallel (Megatron) layer, forward and backward";
  s.params = {
      Param("layer", T::kChoice, "mlp",
            "the layer (the CLI's command word: run tp-mlp)")
          .Choices({"column", "row", "mlp", "attention", "transformer"})
          .NoCli(),
      Param("batch", T::kInteger, "2", "sequences B per step")
          .Range(1, 1 << 20)
          .Unit("sequences"),
      Param("seq", T::kInteger, "16",
            "tokens S per sequence; the layer sees T = B x S rows")
          .Range(1, 1 << 24)
          .Unit("tokens"),
      Param("hidden", T::kInteger, "64", "hidden size H")
          .Range(1, 1 << 20)
          .Unit("features"),
      Param("ffn", T::kInteger, "0",
            "split width F: the MLP's inner width, a linear's output (column) "
            "or input (row) "
            "features; must divide by tp; 0: 4H for mlp and transformer, H for "
            "the linears")
          .Range(0, 1 << 22)
          .Unit("features"),
      Param("heads", T::kInteger, "0",
            "attention heads, a multiple of tp; 0: H/128 when H is a multiple "
            "of 128, else 4")
          .Range(0, 1 << 16)
          .Unit("heads"),
      Param("tp", T::kInteger, "2",
            "ranks the layer is split over, rank r on GPU r")
          .Range(1, 65536)
          .Unit("GPUs"),
      Param("sequence_parallel", T::kBool, "false",
            "Megatron's sequence parallelism: each all-reduce becomes a "
            "reduce-scatter and an "
            "all-gather (mlp, attention, transformer)"),
      DTypeParam("element type; fp16 and bf16 are timing-only (tensor-core rates)"),
      TopologyParam(),
      TimingOnlyParam(),
  };
  for (ParamSpec& p : FaultParams()) s.params.push_back(std::move(p));  // faults.h
  s.measured = {
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
  // The seed text's layer (GPT-3: H = 12288, 2048 tokens per sequence,
  // batch 32) over two DGX A100s, so that tp 2, 4, 8, 16 crosses
  // InfiniBand once: where `sweep tp-LAYER` starts.
  s.presets["gpt3-layer"] = {{"batch", "32"},     {"seq", "2048"},
                             {"hidden", "12288"}, {"topology", "2x-dgx-a100-ib"},
                             {"dtype", "fp16"},   {"timing_only", "true"}};
  s.panels = {"tp_metrics", "tp_weights", "tp_legend", "tp_summary", "tp_how_to_read",
              "tp_layer_field", "tp_sequence_parallel_field"};
  s.check = [](const ScenarioParams& p) {
    const TpScenario sc = TpFromParams(p);
    CheckTpScenario(sc, LoadScenarioTopology(sc.topology));
  };
  s.prepare = PrepareTpRun;
  s.summarize = SummarizeTpRun;
  RegisterScenario(std::move(s));
}

} // namespace shardlab
