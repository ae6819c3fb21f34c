#include "app/cli/output.h"

#include "app/cli/commands.h"

#include "engine/io/trace_writer.h"

#include <fstream>

#include <filesystem>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <vector>

namespace shardlab::cli {
namespace {

std::string Printf(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

/// nccl-tests' time column: two decimals while they mean something.
std::string FormatTimeUs(double us) {
  if (us >= 10000) return Printf("%.0f", us);
  if (us >= 100) return Printf("%.1f", us);
  return Printf("%.2f", us);
}

std::string Pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

}  // namespace

bool HelpPrinted(const CommandSpec& spec, std::span<const std::string> words, ParsedArgs& args) {
  args = ParseArgs(spec, words);
  if (args.help()) std::cout << FormatHelp(spec);
  return args.help();
}

TableRow RowFor(const CollectiveOutcome& outcome) {
  const CollectiveParams& p = outcome.params;
  TableRow row;
  row.size_bytes = outcome.size_bytes;
  row.count = p.count;
  row.type = DTypeName(p.dtype);
  row.redop = CollectiveReduces(p.kind) ? ReduceOpName(p.op) : "none";
  row.root = CollectiveHasRoot(p.kind) ? p.root : -1;
  row.time_us = outcome.metrics.time_ns / 1000.0;
  row.algbw_gbps = outcome.metrics.algbw_gbps;
  row.busbw_gbps = outcome.metrics.busbw_gbps;
  if (outcome.checked) row.wrong = outcome.verify.wrong;
  row.nccl_model = outcome.nccl_model;
  return row;
}

void PrintTableHeader(std::ostream& out, bool nccl_model) {
  out << "#       size         count      type   redop    root      time    algbw    busbw"
         "  #wrong" << (nccl_model ? "  nccl model" : "") << "\n"
         "#        (B)    (elements)                                (us)   (GB/s)   (GB/s)"
      << (nccl_model ? "          (algo/proto)" : "") << "\n";
}

void PrintTableRow(std::ostream& out, const TableRow& row) {
  out << Pad(std::to_string(row.size_bytes), 12) << Pad(std::to_string(row.count), 14)
      << Pad(row.type, 10) << Pad(row.redop, 8) << Pad(std::to_string(row.root), 8)
      << Pad(FormatTimeUs(row.time_us), 10) << Pad(Printf("%.2f", row.algbw_gbps), 9)
      << Pad(Printf("%.2f", row.busbw_gbps), 9)
      << Pad(row.wrong ? std::to_string(*row.wrong) : "N/A", 8);
  if (!row.nccl_model.empty()) out << "  " << row.nccl_model;
  out << "\n";
}

std::string DescribeCollective(const CollectiveSetup& setup) {
  std::string text = std::string(CollectiveAlgoName(setup.algo)) + " " + CollectiveTitle(setup.kind) +
                     ", " + std::to_string(setup.ranks) + (setup.ranks == 1 ? " rank" : " ranks");
  if (CollectiveHasRoot(setup.kind)) text += ", root " + std::to_string(setup.root);
  return text;
}

std::string DescribeRing(const CollectiveSetup& setup) {
  std::vector<int> order = setup.ring_order;
  if (order.empty()) {
    for (int r = 0; r < setup.ranks; ++r) order.push_back(r);
  }
  // A 1,024-rank ring would fill the screen: keep the head and the tail.
  constexpr std::size_t kHead = 12;
  constexpr std::size_t kTail = 3;
  std::ostringstream out;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order.size() > kHead + kTail + 1 && i == kHead) {
      out << " ...";
      i = order.size() - kTail;
    }
    out << (i ? " " : "") << order[i];
  }
  out << " (" << setup.ring_order_mode << ")";
  if (setup.ring_bottleneck_gbps > 0) {
    out << ", slowest hop " << FormatGbps(setup.ring_bottleneck_gbps) << " GB/s per direction";
  }
  return out.str();
}

std::string ResultText(const CollectiveOutcome& outcome) {
  if (!outcome.checked) return "not checked, " + outcome.not_checked_reason;
  const VerifyResult& v = outcome.verify;
  std::ostringstream out;
  out << (v.correct ? "correct" : "WRONG") << " (";
  if (!v.correct) out << v.wrong << " of ";
  out << v.checked << " values checked, max_abs_err " << v.max_abs_err << ")";
  return out.str();
}

void WriteSetupFields(JsonWriter& json, const CollectiveSetup& setup) {
  json.Field("scenario", std::string(CollectiveKindName(setup.kind)));
  json.Field("algo", std::string(CollectiveAlgoName(setup.algo)));
  json.Field("ranks", setup.ranks);
  json.Field("dtype", std::string(DTypeName(setup.dtype)));
  json.Field("redop", std::string(CollectiveReduces(setup.kind) ? ReduceOpName(setup.op) : "none"));
  json.Field("root", CollectiveHasRoot(setup.kind) ? setup.root : -1);
  json.Field("backend", setup.backend);
  json.Field("topology", setup.topology_name);
  json.Key("ring_order");
  if (setup.ring_order.empty()) {
    json.Null();
  } else {
    json.BeginArray();
    for (const int r : setup.ring_order) json.Int(r);
    json.EndArray();
  }
  // JSON numbers past 2^63 would wrap in JsonWriter::Int: such seeds go as text.
  if (setup.seed <= static_cast<std::uint64_t>(INT64_MAX)) {
    json.Field("seed", static_cast<std::int64_t>(setup.seed));
  } else {
    json.Field("seed", std::to_string(setup.seed));
  }
  json.Field("timing_only", setup.timing_only);
}

void WriteOutcomeFields(JsonWriter& json, const CollectiveOutcome& outcome) {
  json.Field("bytes", outcome.size_bytes);
  json.Field("count", outcome.params.count);
  json.Field("time_us", outcome.metrics.time_ns / 1000.0);
  WriteIterationsJson(json, outcome.iterations);  // as every scenario's --json
  json.Field("algbw_gbps", outcome.metrics.algbw_gbps);
  json.Field("busbw_gbps", outcome.metrics.busbw_gbps);
  json.Field("steps", outcome.steps);
  json.Field("ops", static_cast<std::int64_t>(outcome.ops));
  json.Field("events", static_cast<std::int64_t>(outcome.events));
  json.Field("clock", std::string(ClockKindName(outcome.clock)));
  if (!outcome.placement.empty()) json.Field("placement", outcome.placement);
  if (!outcome.nccl_model.empty()) json.Field("nccl_model", outcome.nccl_model);
  json.Field("checked", outcome.checked);
  if (outcome.checked) {
    json.Field("correct", outcome.verify.correct);
    json.Field("max_abs_err", outcome.verify.max_abs_err);
    json.Field("wrong", outcome.verify.wrong);
    json.Key("not_checked_reason");
    json.Null();
  } else {
    for (const char* key : {"correct", "max_abs_err", "wrong"}) {
      json.Key(key);
      json.Null();
    }
    json.Field("not_checked_reason", outcome.not_checked_reason);
  }
}

void CheckTracePath(const ParsedArgs& args, const std::string& path) {
  if (path.empty()) throw UsageError(args.Spelling("trace") + ": missing value (FILE)");
  std::error_code ignored;
  const bool existed = std::filesystem::exists(path, ignored);
  if (!std::ofstream(path, std::ios::app)) {
    throw UsageError(args.Spelling("trace") + ": cannot write '" + path + "'");
  }
  if (!existed) std::filesystem::remove(path, ignored);
}

void RunToEndOrThrow(Executor& executor, VectorSink& sink) {
  executor.RunToEnd(sink);
  if (executor.state() != ExecutorState::kDone)
    throw Error("the run failed: " + executor.error(), ErrorKind::kRuntime);
}

void WriteRunTrace(const std::string& path, const Plan& plan, const Topology& topology,
                   std::span<const Event> events, const std::string& topology_name,
                   const std::string& backend, std::vector<std::string> rank_labels,
                   std::vector<HostEnqueueSpan> host_lane, std::optional<MachineRecord> machine,
                   std::string plan_settings) {
  TraceInfo info;
  info.plan_settings = std::move(plan_settings);
  info.machine = std::move(machine);
  if (info.machine && !info.machine->rank_to_gpu.empty()) info.rank_to_gpu = info.machine->rank_to_gpu;
  info.title = plan.name + " on " + topology_name + " (" + backend + ")";
  info.backend = backend;
  info.rank_labels = std::move(rank_labels);
  info.host_lane = std::move(host_lane);
  WriteChromeTraceFile(path, plan, topology, events, info);
}

std::string CommentLines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += "# " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

void WriteCriticalPathJson(JsonWriter& json, const CriticalPath& path) {
  json.Key("critical_path");
  json.BeginObject();
  json.Field("end_us", path.end_ns / 1000.0);
  json.Field("compute_us", path.compute_ns / 1000.0);
  json.Field("communication_us", path.communication_ns / 1000.0);
  json.Field("link_wait_us", path.link_wait_ns / 1000.0);
  json.Field("idle_us", path.idle_ns / 1000.0);
  json.Field("bounding_rank", path.bounding_rank);
  json.Field("bounding_rank_us", path.bounding_rank_ns / 1000.0);
  json.Field("bounding_rank_ties", path.bounding_rank_ties);
  if (path.slowest_hop.src >= 0) {
    json.Key("slowest_hop");
    json.BeginObject();
    json.Field("src", path.slowest_hop.src);
    json.Field("dst", path.slowest_hop.dst);
    json.Field("us", path.slowest_hop.ns / 1000.0);
    json.Field("ties", path.slowest_hop_ties);
    json.EndObject();
  }
  json.Key("ops");
  json.BeginArray();
  for (const CriticalPathStep& s : path.steps) {
    json.BeginObject();
    json.Field("op", s.op);
    json.Field("rank", s.rank);
    if (s.peer >= 0) json.Field("peer", s.peer);
    json.Field("kind", std::string(OpKindName(s.kind)));
    json.Field("start_us", s.start_ns / 1000.0);
    json.Field("end_us", s.end_ns / 1000.0);
    json.Field("idle_before_us", s.idle_before_ns / 1000.0);
    json.Field("link_wait_us", s.link_wait_ns / 1000.0);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace shardlab::cli
