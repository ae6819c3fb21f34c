#include "engine/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/io/trace_reader.h"

namespace shardlab {
namespace {

// Ops below this size are dominated by what an op costs before it moves a
// byte (a launch, an event): the explanation says so rather than a rate.
constexpr Bytes kSmallOpBytes = Bytes{1} << 20;
// One side overlapping a group's ops this much more than the other is the
// cause the explanation names before the rate.
constexpr double kConcurrencyFactor = 1.5;
constexpr std::size_t kMaxPrintedRows = 32;
// A per-op difference up to this is of the size of launch and event costs.
constexpr TimeNs kFixedCostNs = 50'000;

std::string KindLabel(OpKind kind, ReduceOp reduce) {
  std::string label = OpKindName(kind);
  if (kind == OpKind::kRecv || kind == OpKind::kReduce) {
    if (reduce == ReduceOp::kSum) label += "+";
    if (reduce == ReduceOp::kMax) label += " max";
    if (reduce == ReduceOp::kMin) label += " min";
  }
  return label;
}

std::string OpText(const RunOp& op) {
  std::string text = KindLabel(op.kind, op.reduce) + " of " + FormatBytes(op.bytes) + " on rank " +
                     std::to_string(op.rank);
  if (op.peer >= 0) text += " (peer " + std::to_string(op.peer) + ")";
  return text;
}

Bytes PowerOfTwoFloor(Bytes bytes) {
  if (bytes <= 0) return 0;
  Bytes p = 1;
  while (p <= bytes / 2) p *= 2;
  return p;
}

std::string Fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string Significant(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

std::string Percent(double fraction) { return Fixed(100.0 * fraction, 0) + "%"; }

// Length of the union of [start, end) intervals (sorted here).
TimeNs UnionLength(std::vector<std::pair<TimeNs, TimeNs>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  TimeNs covered = 0;
  TimeNs open_start = 0, open_end = 0;
  bool open = false;
  for (const auto& [s, e] : intervals) {
    if (!open || s > open_end) {
      if (open) covered += open_end - open_start;
      open_start = s;
      open_end = e;
      open = true;
    } else {
      open_end = std::max(open_end, e);
    }
  }
  if (open) covered += open_end - open_start;
  return covered;
}

// Accumulates one row from matched ops (index i in both runs).
struct RowBuilder {
  std::string name;
  std::int64_t ops = 0;
  TimeNs a_first = 0, a_last = 0, b_first = 0, b_last = 0;
  double error_sum = 0;
  TimeNs a_order = 0;  // first start in A, for ordering phases

  void Add(const RunOp& a, const RunOp& b, double abs_error) {
    if (ops == 0) {
      a_first = a.start_ns; a_last = a.end_ns; b_first = b.start_ns; b_last = b.end_ns;
    } else {
      a_first = std::min(a_first, a.start_ns); a_last = std::max(a_last, a.end_ns);
      b_first = std::min(b_first, b.start_ns); b_last = std::max(b_last, b.end_ns);
    }
    ++ops;
    error_sum += abs_error;
  }
  CompareRow Row() const {
    CompareRow row;
    row.name = name;
    row.ops = ops;
    row.a_ns = ops > 0 ? a_last - a_first : 0;
    row.b_ns = ops > 0 ? b_last - b_first : 0;
    row.op_error = ops > 0 ? error_sum / static_cast<double>(ops) : 0;
    return row;
  }
};

bool IsCommunication(OpKind kind) { return kind == OpKind::kRecv || kind == OpKind::kCollective; }
bool IsCompute(OpKind kind) {
  return kind == OpKind::kCompute || kind == OpKind::kCopy || kind == OpKind::kReduce;
}

// Time within the run's span when no op of any rank runs.
TimeNs GapTime(const RunRecord& run) {
  if (run.ops.empty()) return 0;
  std::vector<std::pair<TimeNs, TimeNs>> all;
  all.reserve(run.ops.size());
  TimeNs first = run.ops.front().start_ns, last = run.ops.front().end_ns;
  for (const RunOp& op : run.ops) {
    all.emplace_back(op.start_ns, op.end_ns);
    first = std::min(first, op.start_ns);
    last = std::max(last, op.end_ns);
  }
  return (last - first) - UnionLength(all);
}

TimeNs IdleTime(const RunRecord& run) {
  if (run.ops.empty()) return 0;
  TimeNs first = run.ops.front().start_ns, last = run.ops.front().end_ns;
  int ranks = run.num_ranks;
  for (const RunOp& op : run.ops) {
    first = std::min(first, op.start_ns);
    last = std::max(last, op.end_ns);
    ranks = std::max(ranks, op.rank + 1);
  }
  std::vector<std::vector<std::pair<TimeNs, TimeNs>>> per_rank(static_cast<std::size_t>(ranks));
  for (const RunOp& op : run.ops) per_rank[static_cast<std::size_t>(op.rank)].emplace_back(op.start_ns, op.end_ns);
  TimeNs idle = 0;
  for (auto& intervals : per_rank) idle += (last - first) - UnionLength(intervals);
  return idle;
}

// The sentence that names why a group's times differ.
std::string Cause(const ErrorGroup& g, const std::string& a, const std::string& b) {
  const double mean_a = g.a_ns / static_cast<double>(g.ops);
  const double mean_b = g.b_ns / static_cast<double>(g.ops);
  // Overlap explains the gap when the side that runs more of these ops at
  // once is the one where each takes longer, by about the same factor.
  const bool b_overlaps = g.b_concurrency > g.a_concurrency;
  const double hi = std::max(g.a_concurrency, g.b_concurrency);
  const double lo = std::min(g.a_concurrency, g.b_concurrency);
  const double overlap_ratio = lo > 0 ? hi / lo : 1.0;
  const double slower_on_overlapping = b_overlaps ? (mean_a > 0 ? mean_b / mean_a : 0) : (mean_b > 0 ? mean_a / mean_b : 0);
  if (overlap_ratio > kConcurrencyFactor && slower_on_overlapping > 1.0 &&
      slower_on_overlapping < 2.0 * overlap_ratio && slower_on_overlapping > overlap_ratio / 2.0) {
    const std::string& more = b_overlaps ? b : a;
    const std::string& fewer = b_overlaps ? a : b;
    return more + " runs " + Fixed(hi, 1) + " of them at once, sharing the bandwidth, where " + fewer +
           " ran " + Fixed(lo, 1) + " at a time: each op is " + Fixed(slower_on_overlapping, 1) +
           "x longer in " + more + " while the steps' spans can still agree (see the step table)";
  }
  if (g.mean_bytes < kSmallOpBytes && std::fabs(mean_b - mean_a) < kFixedCostNs) {
    const bool b_slower = mean_b > mean_a;
    return std::string("ops this small are dominated by a fixed cost per op (launch latency, ") +
           "event records) that " + (b_slower ? a : b) + " counts " +
           (std::fabs(mean_b - mean_a) > 0.5 * std::max(mean_a, mean_b) ? "little or not at all" : "lower") +
           " (" + FormatTime(std::fabs(mean_b - mean_a)) + " per op)";
  }
  if (g.mean_flops > 0) {
    // flop/ns / 1e3 == TFLOP/s
    const double tflops_a = mean_a > 0 ? g.mean_flops / mean_a / 1e3 : 0;
    const double tflops_b = mean_b > 0 ? g.mean_flops / mean_b / 1e3 : 0;
    return "each op computes at " + Significant(tflops_a) + " TFLOP/s in " + a + " and " + Significant(tflops_b) +
           " TFLOP/s in " + b + " (" + FormatBytes(g.mean_bytes) + " of memory traffic each)";
  }
  const double rate_a = mean_a > 0 ? g.mean_bytes / mean_a : 0;  // bytes/ns == GB/s
  const double rate_b = mean_b > 0 ? g.mean_bytes / mean_b : 0;
  // Three significant digits below 100 GB/s, so a slow link is not "0 GB/s".
  auto rate = [](double gbps) { return gbps >= 100 ? Fixed(gbps, 0) : Significant(gbps); };
  return "each op moves its bytes at " + rate(rate_a) + " GB/s in " + a + " and " + rate(rate_b) + " GB/s in " +
         b + " (" + Fixed(g.a_concurrency, 1) + " and " + Fixed(g.b_concurrency, 1) + " of them in flight on average)";
}

std::string Explain(const Comparison& c) {
  std::ostringstream out;
  out << "The run takes " << FormatTime(c.run.a_ns) << " in " << c.a_label << " and "
      << FormatTime(c.run.b_ns) << " in " << c.b_label << " (ratio B/A "
      << (c.run.ratio() < 0.1 ? Fixed(c.run.ratio(), 4) : Fixed(c.run.ratio(), 2))
      << ").";
  if (c.run.a_ns > 0 && c.run.b_ns > 0) {
    out << " No op of any rank runs for " << FormatTime(c.a_gaps_ns) << " of the span in " << c.a_label << " ("
        << Percent(c.a_gaps_ns / c.run.a_ns) << ") and " << FormatTime(c.b_gaps_ns) << " in " << c.b_label << " ("
        << Percent(c.b_gaps_ns / c.run.b_ns) << "): waits between ops, such as issuing them from the host.";
  }
  TimeNs total_gap = 0;
  for (const ErrorGroup& g : c.groups) total_gap += std::fabs(g.gap_ns());
  if (c.groups.empty() || total_gap <= 0) {
    out << " Every op takes the same time in both runs.";
    return out.str();
  }
  const ErrorGroup& g = c.groups.front();
  const double mean_a = g.a_ns / static_cast<double>(g.ops);
  const double mean_b = g.b_ns / static_cast<double>(g.ops);
  out << " The biggest contributor: " << g.name << " (" << g.ops << " ops) take "
      << FormatTime(mean_a) << " in " << c.a_label << " vs " << FormatTime(mean_b) << " in "
      << c.b_label << " each, " << Percent(std::fabs(g.gap_ns()) / total_gap)
      << " of the summed op-time gap: " << Cause(g, c.a_label, c.b_label) << ".";
  if (c.groups.size() > 1 && std::fabs(c.groups[1].gap_ns()) > 0.1 * total_gap) {
    const ErrorGroup& n = c.groups[1];
    out << " Next: " << n.name << " (" << n.ops << " ops), "
        << FormatTime(n.a_ns / static_cast<double>(n.ops)) << " vs "
        << FormatTime(n.b_ns / static_cast<double>(n.ops)) << " each, "
        << Percent(std::fabs(n.gap_ns()) / total_gap) << ".";
  }
  return out.str();
}

void WriteRow(JsonWriter& w, const CompareRow& row) {
  w.BeginObject();
  w.Field("name", row.name);
  w.Field("ops", row.ops);
  w.Field("a_us", row.a_ns / 1000.0);
  w.Field("b_us", row.b_ns / 1000.0);
  w.Field("ratio", row.ratio());
  w.Field("error", row.error());
  w.Field("op_error", row.op_error);
  w.EndObject();
}

void WriteRows(JsonWriter& w, const char* key, const std::vector<CompareRow>& rows) {
  w.Key(key);
  w.BeginArray();
  for (const CompareRow& row : rows) WriteRow(w, row);
  w.EndArray();
}

std::string TableRow(const CompareRow& row, std::size_t name_width) {
  char line[256];
  std::snprintf(line, sizeof line, "  %-*s %7lld %12.1f %12.1f %8.2f %+8.0f%% %8.0f%%\n",
                static_cast<int>(name_width), row.name.c_str(), static_cast<long long>(row.ops),
                row.a_ns / 1000.0, row.b_ns / 1000.0, row.ratio(), 100.0 * row.error(),
                100.0 * row.op_error);
  return line;
}

void Table(std::ostringstream& out, const char* title, const std::vector<CompareRow>& rows,
           const Comparison& c) {
  if (rows.empty()) return;
  std::size_t width = 10;
  for (const CompareRow& r : rows) width = std::max(width, r.name.size());
  char header[256];
  std::snprintf(header, sizeof header, "  %-*s %7s %12s %12s %8s %9s %9s\n", static_cast<int>(width),
                title, "ops", "A (us)", "B (us)", "B/A", "error", "op error");
  out << header;
  for (std::size_t i = 0; i < rows.size() && i < kMaxPrintedRows; ++i) out << TableRow(rows[i], width);
  if (rows.size() > kMaxPrintedRows) {
    out << "  ... " << rows.size() - kMaxPrintedRows << " more rows (--json has them all)\n";
  }
  (void)c;
  out << "\n";
}

/// One op of a run: its identity from the plan, its times from the event.
RunOp OpRecord(int id, const Op& op, const Event& e) {
  RunOp r;
  r.id = id;
  r.kind = e.kind;
  r.lane = e.lane;
  r.reduce = op.reduce;
  r.phase = op.tags.phase;
  r.rank = e.rank;
  r.peer = e.peer;
  r.step = e.step;
  r.microbatch = op.tags.microbatch;
  r.collective_seq = e.collective_seq;
  r.bytes = e.bytes;
  r.flops = op.flops;
  r.start_ns = e.start_ns;
  r.end_ns = e.end_ns;
  return r;
}

/// Orders `run`'s ops by id; an id seen twice is an error ("SOURCE: op N" + `twice`).
void SortByIdOnceEach(RunRecord& run, const char* twice) {
  std::sort(run.ops.begin(), run.ops.end(), [](const RunOp& x, const RunOp& y) { return x.id < y.id; });
  for (std::size_t i = 1; i < run.ops.size(); ++i) {
    if (run.ops[i].id == run.ops[i - 1].id) {
      throw Error(run.source + ": op " + std::to_string(run.ops[i].id) + twice);
    }
  }
}

}  // namespace

std::string RunRecord::Label() const {
  const std::string time = clock.empty() ? "unknown clock" : clock;
  return backend.empty() ? time : backend + " (" + time + ")";
}

RunRecord RunFromTrace(const LoadedTrace& trace) {
  RunRecord run;
  run.source = trace.source;
  run.clock = trace.clock;
  run.backend = trace.backend;
  run.plan_name = trace.plan.name;
  run.num_ranks = trace.plan.num_ranks;
  run.ops.reserve(trace.events.size());
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    const Op& op = trace.plan.ops[i];
    const int id = trace.original_op[i];
    if (id < 0) {
      throw Error(trace.source + ": event " + std::to_string(i) +
                  " does not say which op it ran (args.op); compare needs op ids");
    }
    run.ops.push_back(OpRecord(id, op, e));
  }
  SortByIdOnceEach(run, " appears twice (a trace of several iterations?); compare needs one event per op");
  return run;
}

RunRecord RunFromEvents(const Plan& plan, std::span<const Event> events, const std::string& source,
                        const std::string& backend) {
  RunRecord run;
  run.source = source;
  run.backend = backend;
  run.plan_name = plan.name;
  run.num_ranks = plan.num_ranks;
  run.clock = events.empty() ? "none" : ClockKindName(events.front().clock);
  for (const Event& e : events) {
    if (ClockKindName(e.clock) != run.clock) run.clock = "mixed";
    if (e.op < 0 || static_cast<std::size_t>(e.op) >= plan.ops.size()) {
      throw Error(source + ": an event names op " + std::to_string(e.op) + ", which the plan does not have");
    }
    const Op& op = plan.ops[static_cast<std::size_t>(e.op)];
    run.ops.push_back(OpRecord(e.op, op, e));
  }
  SortByIdOnceEach(run, " has two events");
  return run;
}

std::string FirstPlanDifference(const RunRecord& a, const RunRecord& b) {
  const std::size_t n = std::min(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < n; ++i) {
    const RunOp& x = a.ops[i];
    const RunOp& y = b.ops[i];
    if (x.id != y.id) {
      const RunOp& missing = x.id < y.id ? x : y;
      return "op " + std::to_string(missing.id) + " (" + OpText(missing) + ") is only in " +
             (x.id < y.id ? "A" : "B");
    }
    if (x.kind != y.kind || x.rank != y.rank || x.peer != y.peer || x.bytes != y.bytes ||
        x.reduce != y.reduce) {
      return "op " + std::to_string(x.id) + ": A has " + OpText(x) + ", B has " + OpText(y);
    }
  }
  if (a.ops.size() != b.ops.size()) {
    const bool a_longer = a.ops.size() > b.ops.size();
    const RunOp& extra = a_longer ? a.ops[n] : b.ops[n];
    return "op " + std::to_string(extra.id) + " (" + OpText(extra) + ") is only in " +
           (a_longer ? "A" : "B") + " (A has " + std::to_string(a.ops.size()) + " ops, B " +
           std::to_string(b.ops.size()) + ")";
  }
  return "";
}

Comparison CompareRuns(const RunRecord& a, const RunRecord& b) {
  const std::string difference = FirstPlanDifference(a, b);
  if (!difference.empty()) {
    throw Error("not runs of one plan: " + difference + " (A: " + a.plan_name + ", B: " + b.plan_name + ")");
  }
  Comparison c;
  c.a_label = a.Label();
  c.b_label = b.Label();
  if (c.a_label == c.b_label) {
    c.a_label = "A (" + c.a_label + ")";
    c.b_label = "B (" + c.b_label + ")";
  }
  c.plan_name = a.plan_name;
  const std::size_t n = a.ops.size();
  c.ops.resize(n);

  RowBuilder run{"run"};
  std::vector<RowBuilder> phases(16);
  std::map<std::int32_t, RowBuilder> steps, stages;
  bool collective = false, pipeline = false;
  TimeNs comm_a = 0, comm_b = 0, comp_a = 0, comp_b = 0;
  double comm_err = 0, comp_err = 0;
  std::int64_t comm_ops = 0, comp_ops = 0;
  struct GroupKey {
    OpKind kind; ReduceOp reduce; Bytes size;
    bool operator<(const GroupKey& o) const {
      return std::tie(kind, reduce, size) < std::tie(o.kind, o.reduce, o.size);
    }
  };
  struct GroupAcc {
    ErrorGroup group;
    double bytes_sum = 0;
    double flops_sum = 0;
    std::vector<std::pair<TimeNs, TimeNs>> a_iv, b_iv;
  };
  std::map<GroupKey, GroupAcc> groups;

  for (std::size_t i = 0; i < n; ++i) {
    const RunOp& x = a.ops[i];
    const RunOp& y = b.ops[i];
    OpError& e = c.ops[i];
    e.id = x.id;
    e.a_ns = x.duration_ns();
    e.b_ns = y.duration_ns();
    e.error = e.a_ns > 0 ? (e.b_ns - e.a_ns) / e.a_ns : 0.0;
    const double abs_error = std::fabs(e.error);
    run.Add(x, y, abs_error);
    RowBuilder& phase = phases[static_cast<std::size_t>(x.phase) % phases.size()];
    if (phase.ops == 0) phase.name = x.phase == Phase::kNone ? "(no phase)" : PhaseName(x.phase);
    phase.Add(x, y, abs_error);
    if (x.collective_seq >= 0) collective = true;
    if (x.microbatch >= 0) pipeline = true;
    RowBuilder& step = steps[x.step];
    if (step.ops == 0) step.name = "step " + std::to_string(x.step);
    step.Add(x, y, abs_error);
    RowBuilder& stage = stages[x.rank];
    if (stage.ops == 0) stage.name = "stage " + std::to_string(x.rank);
    stage.Add(x, y, abs_error);
    if (IsCommunication(x.kind)) {
      comm_a += e.a_ns; comm_b += e.b_ns; comm_err += abs_error; ++comm_ops;
    } else if (IsCompute(x.kind)) {
      comp_a += e.a_ns; comp_b += e.b_ns; comp_err += abs_error; ++comp_ops;
    }
    // A send and its receive carry one transfer's time: the group counts it once.
    if (x.kind == OpKind::kSend) continue;
    GroupAcc& g = groups[GroupKey{x.kind, x.reduce, PowerOfTwoFloor(x.bytes)}];
    g.group.kind = x.kind;
    g.group.reduce = x.reduce;
    g.group.size_bytes = PowerOfTwoFloor(x.bytes);
    ++g.group.ops;
    g.group.a_ns += e.a_ns;
    g.group.b_ns += e.b_ns;
    g.bytes_sum += static_cast<double>(x.bytes);
    g.flops_sum += x.flops;
    g.a_iv.emplace_back(x.start_ns, x.end_ns);
    g.b_iv.emplace_back(y.start_ns, y.end_ns);
  }
  c.run = run.Row();
  std::vector<const RowBuilder*> used;
  for (const RowBuilder& p : phases) if (p.ops > 0) used.push_back(&p);
  std::sort(used.begin(), used.end(), [](const RowBuilder* p, const RowBuilder* q) { return p->a_first < q->a_first; });
  for (const RowBuilder* p : used) c.phases.push_back(p->Row());
  if (collective) for (const auto& [k, s] : steps) c.steps.push_back(s.Row());
  if (pipeline) for (const auto& [k, s] : stages) c.stages.push_back(s.Row());
  c.communication = CompareRow{"communication", comm_ops, comm_a, comm_b,
                               comm_ops > 0 ? comm_err / static_cast<double>(comm_ops) : 0};
  c.compute = CompareRow{"compute", comp_ops, comp_a, comp_b,
                         comp_ops > 0 ? comp_err / static_cast<double>(comp_ops) : 0};
  c.idle = CompareRow{"idle / bubble", 0, IdleTime(a), IdleTime(b), 0};
  c.a_gaps_ns = GapTime(a);
  c.b_gaps_ns = GapTime(b);

  for (auto& [key, acc] : groups) {
    ErrorGroup g = acc.group;
    g.mean_bytes = static_cast<Bytes>(acc.bytes_sum / static_cast<double>(g.ops));
    g.mean_flops = acc.flops_sum / static_cast<double>(g.ops);
    g.name = KindLabel(g.kind, g.reduce) + " of " + FormatBytes(g.mean_bytes);
    const TimeNs a_cover = UnionLength(acc.a_iv), b_cover = UnionLength(acc.b_iv);
    g.a_concurrency = a_cover > 0 ? g.a_ns / a_cover : 1.0;
    g.b_concurrency = b_cover > 0 ? g.b_ns / b_cover : 1.0;
    c.groups.push_back(g);
  }
  std::stable_sort(c.groups.begin(), c.groups.end(), [](const ErrorGroup& p, const ErrorGroup& q) {
    return std::fabs(p.gap_ns()) > std::fabs(q.gap_ns());
  });
  c.explanation = Explain(c);
  return c;
}

std::string FormatComparison(const Comparison& c) {
  std::ostringstream out;
  out << "# Compare: " << c.plan_name << "\n"
      << "#   A = " << c.a_label << ", B = " << c.b_label << "; " << c.ops.size() << " ops matched by id\n"
      << "#   time = span of the rows' ops (first start to last end); B/A and error = (B-A)/A of it;\n"
      << "#   op error = mean |B-A|/A of the ops' own durations\n\n";
  Table(out, "run", {c.run}, c);
  Table(out, "phase", c.phases, c);
  Table(out, "step", c.steps, c);
  Table(out, "stage", c.stages, c);
  out << "  totals (summed op time; idle: summed over ranks, within the run's span)\n";
  Table(out, "total", {c.communication, c.compute, c.idle}, c);
  out << "  by kind and size (largest gap first)\n";
  char header[256];
  std::snprintf(header, sizeof header, "  %-24s %7s %12s %12s %10s %7s %7s\n", "ops", "count", "A each (us)",
                "B each (us)", "gap (us)", "A conc", "B conc");
  out << header;
  for (std::size_t i = 0; i < c.groups.size() && i < 8; ++i) {
    const ErrorGroup& g = c.groups[i];
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s %7lld %12.2f %12.2f %+10.1f %7.1f %7.1f\n", g.name.c_str(),
                  static_cast<long long>(g.ops), g.a_ns / 1000.0 / static_cast<double>(g.ops),
                  g.b_ns / 1000.0 / static_cast<double>(g.ops), g.gap_ns() / 1000.0, g.a_concurrency,
                  g.b_concurrency);
    out << line;
  }
  out << "\n# " << c.explanation << "\n";
  // The run's figures once more on one line of fixed shape, for scripts
  // (scripts/gpu_goals.py reads it): A's and B's span in us, B/A.
  char total[160];
  std::snprintf(total, sizeof total, "# total: A %.1f us, B %.1f us, B/A %.4f\n", c.run.a_ns / 1000.0,
                c.run.b_ns / 1000.0, c.run.ratio());
  out << total;
  return out.str();
}

std::string ComparisonJson(const Comparison& c, bool with_ops) {
  std::ostringstream out;
  JsonWriter w(out);
  w.BeginObject();
  w.Field("plan", c.plan_name);
  w.Field("a", c.a_label);
  w.Field("b", c.b_label);
  w.Key("run");
  WriteRow(w, c.run);
  WriteRows(w, "phases", c.phases);
  WriteRows(w, "steps", c.steps);
  WriteRows(w, "stages", c.stages);
  w.Key("totals");
  w.BeginObject();
  w.Key("communication");
  WriteRow(w, c.communication);
  w.Key("compute");
  WriteRow(w, c.compute);
  w.Key("idle");
  WriteRow(w, c.idle);
  w.EndObject();
  w.Key("groups");
  w.BeginArray();
  for (const ErrorGroup& g : c.groups) {
    w.BeginObject();
    w.Field("name", g.name);
    w.Field("kind", OpKindName(g.kind));
    w.Field("bytes", g.mean_bytes);
    w.Field("ops", g.ops);
    w.Field("a_us", g.a_ns / 1000.0);
    w.Field("b_us", g.b_ns / 1000.0);
    w.Field("a_concurrency", g.a_concurrency);
    w.Field("b_concurrency", g.b_concurrency);
    w.EndObject();
  }
  w.EndArray();
  w.Field("explanation", c.explanation);
  if (with_ops) {
    w.Key("ops");
    w.BeginArray();
    for (const OpError& e : c.ops) {
      w.BeginObject();
      w.Field("op", e.id);
      w.Field("a_us", e.a_ns / 1000.0);
      w.Field("b_us", e.b_ns / 1000.0);
      w.Field("error", e.error);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  out << "\n";
  return out.str();
}

}  // namespace shardlab
