// `nccl-log`: an NCCL_DEBUG=INFO log (engine/field/nccl_log.h).
#include <algorithm>
#include <memory>

#include "engine/field/field_reader.h"
#include "engine/field/inspect_text.h"
#include "engine/field/nccl_log.h"

namespace shardlab {
namespace {

Inspection Inspect(const FieldFile& file) {
  auto log = std::make_shared<NcclLog>(ParseNcclLog(file));
  Inspection out;
  out.summary = Count(log->ranks, "rank") + (log->ranks_inferred ? " (at least: no nRanks line)" : "") + ", " + Count(static_cast<long>(log->hosts.size()), "host") + ", " +
                Count(log->complete_rings(), "ring") + ", " + Count(static_cast<long>(log->trees.size()), "tree") +
                ", NCCL " + (log->nccl_version.empty() ? "version not in the log" : log->nccl_version);
  constexpr std::size_t kMaxShown = 16;  // hosts and tree nodes on one line
  if (!log->hosts.empty()) {
    out.page += "hosts:";
    for (std::size_t i = 0; i < std::min(kMaxShown, log->hosts.size()); ++i) out.page += " " + log->hosts[i];
    if (log->hosts.size() > kMaxShown) out.page += " ... (" + std::to_string(log->hosts.size()) + " in all)";
    out.page += "\n";
  }
  for (const NcclLogRing& r : log->rings) {
    out.page += (r.complete ? "ring " : "partial ring ") + Pad(std::to_string(r.channel), 3) + JoinIntsShort(r.ranks) + "\n";
  }
  for (const NcclLogTree& t : log->trees) {
    std::string line = "tree " + Pad(std::to_string(t.channel), 3);
    for (std::size_t i = 0; i < std::min(kMaxShown, t.nodes.size()); ++i) {
      const NcclLogTreeNode& node = t.nodes[i];
      line += " " + std::to_string(node.rank) + "->" + (node.parent < 0 ? std::string("root") : std::to_string(node.parent));
    }
    if (t.nodes.size() > kMaxShown) line += " ... (" + std::to_string(t.nodes.size()) + " ranks)";
    out.page += line + "   (rank->parent)\n";
  }
  const auto transports = log->TransportCounts();
  if (!transports.empty()) {
    out.page += "transports:";
    bool first = true;
    for (const auto& [kind, n] : transports) {
      out.page += (first ? " " : ", ") + kind + " x" + std::to_string(n);
      first = false;
    }
    out.page += "\n";
  }
  if (log->tests.rows() > 0) out.page += NcclTestsTablesText(log->tests);
  out.warnings = log->warnings;
  out.json = [log](JsonWriter& json) {
    json.Field("ranks", log->ranks);
    json.Field("ranks_inferred", log->ranks_inferred);
    json.Field("nodes", log->nodes);
    json.Key("hosts");
    json.BeginArray();
    for (const std::string& h : log->hosts) json.String(h);
    json.EndArray();
    json.Key("nccl_version");
    if (log->nccl_version.empty()) json.Null();
    else json.String(log->nccl_version);
    json.Key("rings");
    json.BeginArray();
    for (const NcclLogRing& r : log->rings)
      if (r.complete) JsonInts(json, r.ranks);
    json.EndArray();
    json.Key("ring_channels");
    json.BeginArray();
    for (const NcclLogRing& r : log->rings)
      if (r.complete) json.Int(r.channel);
    json.EndArray();
    json.Key("partial_rings");
    json.BeginArray();
    for (const NcclLogRing& r : log->rings) {
      if (r.complete) continue;
      json.BeginObject();
      json.Field("channel", r.channel);
      json.Key("ranks");
      JsonInts(json, r.ranks);
      json.EndObject();
    }
    json.EndArray();
    json.Key("trees");
    json.BeginArray();
    for (const NcclLogTree& t : log->trees) {
      json.BeginObject();
      json.Field("channel", t.channel);
      json.Key("nodes");
      json.BeginArray();
      for (const NcclLogTreeNode& node : t.nodes) {
        json.BeginObject();
        json.Field("rank", node.rank);
        json.Field("parent", node.parent);
        json.Key("children");
        JsonInts(json, node.children);
        json.EndObject();
      }
      json.EndArray();
      json.EndObject();
    }
    json.EndArray();
    json.Key("transports");
    json.BeginObject();
    for (const auto& [kind, n] : log->TransportCounts()) json.Field(kind, n);
    json.EndObject();
    WriteNcclTestsJson(json, log->tests, false);
  };
  return out;
}

}  // namespace

void RegisterFieldReader_nccl_log() {
  RegisterFieldReader({"nccl-log", "NCCL_DEBUG=INFO log",
                       [](std::string_view head) { return LooksLikeNcclLog(head) ? 4 : 0; }, Inspect});
}

}  // namespace shardlab
