#include "engine/scenarios/moe_scenario.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/verify/bounds.h"
#include "engine/verify/moe_bounds.h"
#include "engine/core/units.h"
#include "engine/scenarios/scenario.h"

namespace shardlab {
namespace {

// Real runs hold every buffer on the host; past this many elements over all
// ranks, ask for timing-only.
constexpr double kMaxRealElements = double(std::int64_t{1} << 27);
// The router's top-k is computed on the host while the plan is built:
// T·H·E multiply-adds, at most this many.
constexpr double kMaxRoutingMacs = double(std::int64_t{1} << 34);

// An upper bound that needs no routing: every choice kept, on every rank.
double RealRunElements(const MoeLayerConfig& c) {
  const double t = c.tokens, h = c.hidden, f = c.ffn, e = c.experts, k = c.top_k;
  return t * (h + e + k + h)                   // x, logits, gates, y
         + c.ranks * h * e + 2 * e * h * f      // routers (one per rank), experts
         + 4 * t * k * h + c.ranks * t * k * f;  // dispatch/combine buffers, scratch
}

}  // namespace

void CheckMoeScenario(const MoeScenario& scenario, const Topology& topology) {
  CheckScenarioBackend(scenario.backend);
  const MoeLayerConfig& c = scenario.layer;
  CheckMoeLayerConfig(c);
  CheckRanksFitTopology("ranks", c.ranks, "rank", scenario.topology, topology);
  if (!scenario.timing_only && RealRunElements(c) > kMaxRealElements)
    throw Error("tokens: a real run of this layer (tokens, hidden, ffn, experts) would hold about " +
                FormatBytes(static_cast<Bytes>(4 * RealRunElements(c))) +
                " of host buffers; use --timing-only for shapes this large");
  if (MoeRoutingNeedsLogits(c) &&
      static_cast<double>(c.tokens) * c.hidden * c.experts > kMaxRoutingMacs)
    throw Error("tokens: the router's top-k is computed on the host when the plan is built, and "
                "tokens x hidden x experts is too large for that; use --skew uniform, hot or zipf");
}

std::unique_ptr<PreparedMoe> PrepareMoe(const MoeScenario& scenario) {
  return PrepareMoe(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedMoe> PrepareMoe(const MoeScenario& scenario, const Topology& topology) {
  CheckMoeScenario(scenario, topology);
  auto p = std::make_unique<PreparedMoe>();
  p->scenario = scenario;
  p->topology = topology;
  const MoeLayerConfig& c = scenario.layer;
  // The routing decides the all-to-all sizes, so it is computed now, from
  // the seeded input and router the backend will hold.
  const std::vector<double> logits =
      MoeRoutingNeedsLogits(c) ? MoeRouterLogits(c, scenario.seed) : std::vector<double>{};
  p->layer = BuildMoeLayer(c, RouteMoeTokens(c, logits, scenario.seed));
  return p;
}

MoeMetrics MeasureMoe(const MoeLayerPlan& layer, const Plan& plan, std::span<const Event> events) {
  MoeMetrics m;
  const int n = layer.config.ranks;
  m.ranks.assign(static_cast<std::size_t>(std::max(n, 0)), MoeRankMetrics{});
  const std::vector<std::int64_t> rows = MoeRowsPerRank(layer.routing);
  for (int r = 0; r < n; ++r) m.ranks[r].rows = rows[r];
  if (events.empty()) return m;
  TimeNs begin = events.front().start_ns, end = events.front().end_ns;
  TimeNs router_end = begin, dispatch_end = begin, expert_end = begin;
  for (const Event& e : events) {
    begin = std::min(begin, e.start_ns);
    end = std::max(end, e.end_ns);
    if (e.op < 0 || e.op >= static_cast<OpId>(plan.ops.size()) || e.rank < 0 || e.rank >= n) continue;
    const Phase phase = plan.ops[static_cast<std::size_t>(e.op)].tags.phase;
    MoeRankMetrics& r = m.ranks[e.rank];
    const bool send = e.kind == OpKind::kSend, recv = e.kind == OpKind::kRecv;
    if (send) ++m.transfers;
    switch (phase) {
      case Phase::kRouter: router_end = std::max(router_end, e.end_ns); break;
      case Phase::kDispatch:
        dispatch_end = std::max(dispatch_end, e.end_ns);
        if (send) r.dispatch_sent += e.bytes;
        if (recv) r.dispatch_received += e.bytes;
        break;
      case Phase::kExpert:
        expert_end = std::max(expert_end, e.end_ns);
        r.expert_ns += e.duration_ns();
        break;
      case Phase::kCombine:
        if (send) r.combine_sent += e.bytes;
        if (recv) r.combine_received += e.bytes;
        break;
      default: break;
    }
  }
  m.step_ns = end - begin;
  // Cut points in order; each phase's share is what it adds after the last.
  TimeNs cut = begin;
  auto share = [&cut](TimeNs phase_end) {
    const TimeNs added = std::max<TimeNs>(phase_end - cut, 0);
    cut = std::max(cut, phase_end);
    return added;
  };
  m.router_ns = share(router_end);
  m.dispatch_ns = share(dispatch_end);
  m.experts_ns = share(expert_end);
  m.combine_ns = share(end);

  double mean_rows = 0, mean_ns = 0;
  for (int r = 0; r < n; ++r) {
    mean_rows += static_cast<double>(m.ranks[r].rows) / n;
    mean_ns += static_cast<double>(m.ranks[r].expert_ns) / n;
    if (m.straggler < 0 || m.ranks[r].expert_ns > m.ranks[m.straggler].expert_ns) m.straggler = r;
  }
  if (m.straggler >= 0) {
    const MoeRankMetrics& s = m.ranks[m.straggler];
    m.straggler_load = mean_rows > 0 ? static_cast<double>(s.rows) / mean_rows : 0;
    m.straggler_time = mean_ns > 0 ? static_cast<double>(s.expert_ns) / mean_ns : 0;
  }
  return m;
}

MoeSummary SummarizeMoe(const PreparedMoe& prepared, std::span<const Event> events,
                        const Backend& backend, const Plan* ran) {
  const Plan& plan = ran != nullptr ? *ran : prepared.layer.plan;
  const MoeLayerConfig& c = prepared.scenario.layer;
  MoeSummary s;
  s.metrics = MeasureMoe(prepared.layer, plan, events);
  s.expected = ExpectedMoeAllToAllBytes(c, prepared.layer.routing);
  s.steps = plan.num_steps;
  s.events = events.size();
  s.bytes_match = true;
  for (int r = 0; r < c.ranks; ++r) {
    const MoeRankMetrics& m = s.metrics.ranks[r];
    s.bytes_match = s.bytes_match && m.dispatch_sent == s.expected.dispatch_sent[r] &&
                    m.dispatch_received == s.expected.dispatch_received[r] &&
                    m.combine_sent == s.expected.combine_sent[r] &&
                    m.combine_received == s.expected.combine_received[r];
  }
  if (prepared.scenario.timing_only) {
    s.check.not_checked_reason = "timing only: the data was not computed";
    s.check.verdict = NotChecked(s.check.not_checked_reason);
    return s;
  }
  MoeCheck& check = s.check;
  check.checked = true;
  const MoeLayerReference reference(c, prepared.scenario.seed);
  const DType computed = ComputeDType(prepared.scenario.backend.c_str(), DType::kF32);
  const MoeBounds bounds = BoundMoeLayer(reference, prepared.scenario.seed, UnitRoundoff(computed));
  const std::size_t rows = static_cast<std::size_t>(c.tokens_per_rank());
  VerdictJudge judge;
  double worst = -1;
  for (int r = 0; r < c.ranks; ++r) {
    const std::size_t y0 = r * rows * c.hidden, g0 = r * rows * c.top_k;
    const std::size_t ny = rows * c.hidden, ng = rows * c.top_k;
    const std::span<const double> want_y(reference.output().data() + y0, ny), bound_y(bounds.output_bound.data() + y0, ny);
    const std::span<const double> want_g(reference.gates().data() + g0, ng), bound_g(bounds.gates_bound.data() + g0, ng);
    const auto y = backend.BufferData(prepared.layer.output[r]);
    const auto g = backend.BufferData(prepared.layer.gates[r]);
    const std::string on = " (rank " + std::to_string(r) + ")";
    judge.Compare("y" + on, y, want_y, bound_y);
    judge.Compare("gates" + on, g, want_g, bound_g);
    const double ey = RelativeTensorError(y, want_y), eg = RelativeTensorError(g, want_g);
    check.output_error = std::max(check.output_error, ey);
    check.gate_error = std::max(check.gate_error, eg);
    const Verdict so_far = judge.Finish();
    if (so_far.worst.ratio > worst) {
      worst = so_far.worst.ratio;
      check.worst_rank = r;
    }
  }
  check.verdict = judge.Finish();
  check.correct = check.verdict.correct();
  return s;
}

MoeScenario MoeFromParams(const ScenarioParams &p) {
  MoeScenario sc;
  MoeLayerConfig &c = sc.layer;
  c.ranks = static_cast<int>(p.Int("ranks"));
  c.experts = static_cast<int>(p.Int("experts"));
  c.top_k = static_cast<int>(p.Int("top_k"));
  c.tokens = static_cast<int>(p.Int("tokens"));
  c.hidden = static_cast<int>(p.Int("hidden"));
  c.ffn = static_cast<int>(p.Int("ffn"));
  c.capacity_factor = p.Number("capacity_factor");
  c.skew = ParseMoeSkew(p.Text("skew"));
  sc.topology = p.Text("topology");
  sc.timing_only = p.Bool("timing_only");
  return sc;
}

namespace {

/// The engine spells fields as the CLI does ("top-k: "); a lab file says top_k.
Error InLabSpelling(const Error& e) {
  std::string message = e.what();
  for (const auto& [cli, lab] : {std::pair<const char*, const char*>{"top-k: ", "top_k: "},
                                 {"capacity-factor: ", "capacity_factor: "}}) {
    const std::string from = cli;
    if (message.rfind(from, 0) == 0) message = lab + message.substr(from.size());
  }
  return Error(message, ErrorKind::kInvalidInput);
}

MoeScenario MoeFromSpelledParams(const ScenarioParams& p) {
  try {
    return MoeFromParams(p);
  } catch (const Error& e) {
    throw InLabSpelling(e);
  }
}

void CheckMoeRun(const ScenarioParams& p) {
  const MoeScenario sc = MoeFromSpelledParams(p);
  try {
    CheckMoeScenario(sc, LoadScenarioTopology(sc.topology));
  } catch (const Error& e) {
    throw InLabSpelling(e);
  }
}


std::unique_ptr<Prepared> PrepareMoeRun(const ScenarioParams& p, const Topology* machine) {
  const MoeScenario sc = MoeFromSpelledParams(p);
  std::shared_ptr<PreparedMoe> detail;
  try {
    detail = machine != nullptr ? PrepareMoe(sc, *machine) : PrepareMoe(sc);
  } catch (const Error& e) {
    throw InLabSpelling(e);
  }
  std::string title = "MoE layer, " + std::to_string(sc.layer.experts) + " experts on " +
      std::to_string(sc.layer.ranks) + " ranks (" + sc.topology + ")";
  Topology& topology = detail->topology;
  Plan& plan = detail->layer.plan;
  const MoeLayerConfig& layer = sc.layer;
  std::ostringstream factor;
  factor << layer.capacity_factor;
  std::vector<std::string> header = {
      "expert-parallel MoE, " + std::to_string(layer.experts) + " experts over " + std::to_string(layer.ranks) +
          " ranks (" + std::to_string(layer.experts_per_rank()) + " each), top-" + std::to_string(layer.top_k) +
          ", skew " + MoeSkewName(layer.skew) + ", on " + sc.topology,
      "T = " + std::to_string(layer.tokens) + " tokens (" + std::to_string(layer.tokens_per_rank()) +
          " per rank), hidden H " + std::to_string(layer.hidden) + ", expert ffn F " + std::to_string(layer.ffn) +
          ", capacity factor " + factor.str()};
  auto out = PreparedPlan(p, topology, plan, sc.timing_only, sc.seed, std::move(title), std::move(detail));
  out->header = std::move(header);
  return out;
}

/// The rows under the tables of tokens and bytes: the step split and the
/// straggler; the tables' rows and the check in --json.
void MoeReport(const PreparedMoe& prepared, const MoeSummary& s, Report& r) {
  const MoeLayerConfig& c = prepared.scenario.layer;
  const MoeRouting& routing = prepared.layer.routing;
  const MoeMetrics& m = s.metrics;
  r.Block().rows = {{}};
  ReportBlock& b = r.Block(14, 12);
  b.rows = {TimeRow("router", "router_us", m.router_ns, "x·Wr, top-k gates"),
            TimeRow("dispatch", "dispatch_us", m.dispatch_ns, "pack + all-to-all of the tokens to their experts"),
            TimeRow("experts", "experts_us", m.experts_ns, "until the slowest rank's experts finish"),
            TimeRow("combine", "combine_us", m.combine_ns, "all-to-all back + gate-weighted sum"),
            TimeRow("step time", "step_time_us", m.step_ns)};
  if (m.straggler >= 0)
    b.rows.push_back({"straggler", "rank " + std::to_string(m.straggler) + ": " + FormatFixed(m.straggler_load, 2) +
                                       "x the mean rows, " + FormatFixed(m.straggler_time, 2) + "x the mean expert time"});
  ReportValue& f = r.fields;
  f.Add("capacity_per_rank", routing.capacity_per_rank).Add("dropped", routing.dropped);
  ReportValue experts = ReportValue::List(), ranks = ReportValue::List();
  for (int e = 0; e < c.experts; ++e) {
    ReportValue row = ReportValue::Object();
    row.Add("expert", e).Add("rank", routing.rank_of_expert(e)).Add("routed", routing.routed[e]);
    row.Add("kept", routing.kept_per_expert[e]).Add("dropped", routing.routed[e] - routing.kept_per_expert[e]);
    experts.Push(std::move(row));
  }
  for (int rank = 0; rank < c.ranks; ++rank) {
    const MoeRankMetrics& k = m.ranks[rank];
    ReportValue row = ReportValue::Object();
    row.Add("rank", rank).Add("rows", k.rows).Add("expert_us", k.expert_ns / 1e3);
    row.Add("dispatch_sent_bytes", k.dispatch_sent).Add("dispatch_received_bytes", k.dispatch_received);
    row.Add("combine_sent_bytes", k.combine_sent).Add("combine_received_bytes", k.combine_received);
    row.Add("expected_dispatch_sent_bytes", s.expected.dispatch_sent[rank]);
    row.Add("expected_dispatch_received_bytes", s.expected.dispatch_received[rank]);
    row.Add("expected_combine_sent_bytes", s.expected.combine_sent[rank]);
    row.Add("expected_combine_received_bytes", s.expected.combine_received[rank]);
    ranks.Push(std::move(row));
  }
  f.Add("experts_load", std::move(experts)).Add("per_rank", std::move(ranks));
  f.Add("bytes_match", s.bytes_match).Add("transfers", m.transfers).Add("straggler", m.straggler);
  f.Add("straggler_load", m.straggler_load).Add("straggler_time", m.straggler_time);
  AddCheckFields(f, s.check.checked, s.check.correct,
                 {{"output_error", s.check.output_error}, {"gate_error", s.check.gate_error}},
                 s.check.not_checked_reason);
  r.result = LayerCheckText(s.check.verdict, s.check.checked, s.check.not_checked_reason,
                            "every rank's output and gates within their error bounds of the single-device layer in double",
                            "the expert-parallel layer differs from the single-device layer");
}

void SummarizeMoeRun(const Prepared& prepared, const FinishedRun& run, Summary& summary) {
  const PreparedMoe& detail = prepared.Detail<PreparedMoe>();
  const MoeScenario& sc = detail.scenario;
  auto kept = std::make_shared<MoeSummary>(
      SummarizeMoe(detail, run.events, run.backend, &run.plan));
  const MoeSummary& s = *kept;
  summary.detail = kept;
  summary.verdict = s.check.verdict;
  MoeReport(detail, s, summary.report);
  if (!s.bytes_match) {
    summary.verdict.kind = VerdictKind::kWrong;
    summary.verdict.reason = "the all-to-all bytes of the run differ from the count from the routing";
  }
  const MoeLayerConfig& c = sc.layer;
  const MoeRouting& routing = detail.layer.routing;
  const MoeMetrics& m = s.metrics;
  double dispatch_total = 0, dispatch_max = 0, combine_total = 0, rows_max = 0, rows_sum = 0;
  for (const MoeRankMetrics& r : m.ranks) {
    dispatch_total += static_cast<double>(r.dispatch_sent);
    dispatch_max = std::max(dispatch_max, static_cast<double>(r.dispatch_sent));
    combine_total += static_cast<double>(r.combine_sent);
    rows_max = std::max(rows_max, static_cast<double>(r.rows));
    rows_sum += static_cast<double>(r.rows);
  }
  const double rows_mean = m.ranks.empty() ? 0.0 : rows_sum / static_cast<double>(m.ranks.size());
  const int expert_max =
      routing.kept_per_expert.empty()
          ? 0
          : *std::max_element(routing.kept_per_expert.begin(), routing.kept_per_expert.end());
  const double choices = static_cast<double>(c.tokens) * c.top_k;
  const double step = static_cast<double>(m.step_ns);
  summary.values = {
      {"time_us", step / 1e3},
      {"time_ms", step / 1e6},
      {"router_us", m.router_ns / 1e3},
      {"dispatch_us", m.dispatch_ns / 1e3},
      {"experts_us", m.experts_ns / 1e3},
      {"combine_us", m.combine_ns / 1e3},
      {"capacity_per_rank", static_cast<double>(routing.capacity_per_rank)},
      {"dropped", static_cast<double>(routing.dropped)},
      {"dropped_fraction", choices > 0 ? static_cast<double>(routing.dropped) / choices : 0.0},
      {"kept", static_cast<double>(rows_sum)},
      {"max_expert_rows", static_cast<double>(expert_max)},
      {"max_rank_rows", rows_max},
      {"mean_rank_rows", rows_mean},
      {"dispatch_bytes", dispatch_total},
      {"dispatch_bytes_per_rank", dispatch_max},
      {"combine_bytes", combine_total},
      {"straggler", static_cast<double>(m.straggler)},
      {"straggler_load", m.straggler_load},
      {"straggler_time", m.straggler_time},
  };
  summary.line = "MoE layer, " + std::to_string(c.experts) + " experts on " +
                std::to_string(c.ranks) + " ranks, top-" + std::to_string(c.top_k) + ", " +
                std::to_string(c.tokens) + " tokens, skew " + MoeSkewName(c.skew) + " (" +
                sc.topology + "): " + FormatTime(m.step_ns) + ", dropped " +
                std::to_string(routing.dropped) + " of " + FormatFixed(choices, 0) +
                " choices, all-to-all " + FormatBytes(static_cast<Bytes>(dispatch_total)) +
                " each way, straggler rank " + std::to_string(m.straggler) + " (" +
                FormatFixed(m.straggler_load, 2) + "x the mean rows)";
}


}  // namespace

void RegisterScenario_moe_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "moe";
  s.title = "Mixture of experts";
  s.summary = "one expert-parallel MoE layer: route, all-to-all dispatch, "
              "experts, combine";
  s.params = {
      Param("ranks", T::kInteger, "4",
            "expert-parallel ranks N, one per GPU (GPUs 0..N-1)")
          .Range(1, 65536)
          .Unit("GPUs"),
      Param("experts", T::kInteger, "8", "experts E, a multiple of N")
          .Range(1, 65536)
          .Unit("experts")
          .ValueName("E"),
      Param("top_k", T::kInteger, "2", "experts per token, 1..E")
          .Range(1, 65536)
          .Unit("experts")
          .ValueName("K"),
      Param("tokens", T::kInteger, "1024",
            "tokens T over all ranks, a multiple of N")
          .Range(1, 1 << 26)
          .Unit("tokens")
          .ValueName("T"),
      Param("hidden", T::kInteger, "128", "hidden size H")
          .Range(1, 1 << 20)
          .Unit("features")
          .ValueName("H"),
      Param("ffn", T::kInteger, "256", "each expert's inner width F")
          .Range(1, 1 << 22)
          .Unit("features")
          .ValueName("F"),
      Param("capacity_factor", T::kNumber, "1.25",
            "capacity per expert and rank as a multiple of the even share k x "
            "(T/N) / E; above 0 "
            "(E/k never drops)")
                    .ValueName("C"),
      Param("skew", T::kChoice, "router",
            "router (the router's own top-k), uniform, hot (every even token's "
            "first choice is "
            "expert 0) or zipf")
          .Choices({"router", "uniform", "hot", "zipf"}),
      TopologyParam(),
      TimingOnlyParam("skip the arithmetic: time only (for large layers)"),
  };
  for (ParamSpec& p : FaultParams()) s.params.push_back(std::move(p));  // faults.h
  s.panels = {"moe_metrics", "moe_legend", "moe_summary", "moe_how_to_read"};
  // What a lab reads from a run (engine/lab/lab_scenario_moe.cpp fills them).
  s.measured = {
      {"time_us", "us", "the layer, first event to last"},
      {"time_ms", "ms", "the layer, first event to last"},
      {"router_us", "us", "the step's router phase (x·Wr, top-k, gates)"},
      {"dispatch_us", "us", "the step's dispatch phase (pack and all-to-all)"},
      {"experts_us", "us", "the step's expert phase, until the slowest rank's experts end"},
      {"combine_us", "us", "the step's combine phase (all-to-all back and weighted sum)"},
      {"capacity_per_rank", "tokens", "C = ceil(capacity_factor x k x (T/N) / E)"},
      {"dropped", "choices", "token choices dropped for want of capacity"},
      {"dropped_fraction", "", "dropped / (T x k)"},
      {"kept", "rows", "choices kept: rows the experts compute"},
      {"max_expert_rows", "rows", "the busiest expert's rows"},
      {"max_rank_rows", "rows", "the busiest rank's rows (all its experts)"},
      {"mean_rank_rows", "rows", "rows per rank on average"},
      {"dispatch_bytes", "bytes", "bytes all ranks sent in the dispatch all-to-all"},
      {"dispatch_bytes_per_rank", "bytes", "the most one rank sent in the dispatch"},
      {"combine_bytes", "bytes", "bytes all ranks sent in the combine all-to-all"},
      {"straggler", "rank", "the rank with the longest expert time"},
      {"straggler_load", "", "its rows / the mean rows per rank"},
      {"straggler_time", "", "its expert time / the mean expert time"},
  };
  s.check = CheckMoeRun;
  s.prepare = PrepareMoeRun;
  s.summarize = SummarizeMoeRun;
  RegisterScenario(std::move(s));
}

} // namespace shardlab
