// `nccl-graph`: NCCL's graph XML (engine/field/nccl_graph_xml.h).
#include <memory>

#include "engine/field/field_reader.h"
#include "engine/field/inspect_text.h"
#include "engine/field/nccl_graph_xml.h"
#include "engine/field/xml_document.h"

namespace shardlab {
namespace {

Inspection Inspect(const FieldFile& file) {
  auto g = std::make_shared<NcclGraphs>(ParseNcclGraphXml(file));
  Inspection out;
  out.summary = Count(static_cast<long>(g->graphs.size()), "graph") + ", " + Count(g->channels(), "channel") + ", " +
                Count(g->gpus(), "GPU") + ", " + Count(g->nets(), "NIC");
  for (const NcclGraph& graph : g->graphs) {
    out.page += "graph " + std::to_string(graph.id) + ": " + NcclGraphPatternName(graph.pattern) + ", " +
                Count(static_cast<long>(graph.channels.size()), "channel") + ", " + Number(graph.speedintra) +
                " GB/s intra (" + graph.typeintra + "), " + Number(graph.speedinter) + " GB/s inter (" +
                graph.typeinter + ")\n";
    for (std::size_t c = 0; c < graph.channels.size(); ++c) {
      const NcclGraphChannel& ch = graph.channels[c];
      out.page += "  channel " + Pad(std::to_string(c), 3) + " GPUs " + JoinInts(ch.gpus);
      if (!ch.nets.empty()) out.page += "   NICs " + JoinInts(ch.nets);
      out.page += "\n";
    }
  }
  out.warnings = g->warnings;
  out.json = [g](JsonWriter& json) {
    json.Field("graphs", static_cast<int>(g->graphs.size()));
    json.Field("channels", g->channels());
    json.Field("gpus", g->gpus());
    json.Field("nics", g->nets());
    json.Key("graph_list");
    json.BeginArray();
    for (const NcclGraph& graph : g->graphs) {
      json.BeginObject();
      json.Field("id", graph.id);
      json.Field("pattern", graph.pattern);
      json.Field("pattern_name", NcclGraphPatternName(graph.pattern));
      json.Field("nchannels", graph.nchannels);
      json.Field("speedintra_gbps", graph.speedintra);
      json.Field("speedinter_gbps", graph.speedinter);
      json.Field("typeintra", graph.typeintra);
      json.Field("typeinter", graph.typeinter);
      json.Key("channels");
      json.BeginArray();
      for (const NcclGraphChannel& ch : graph.channels) {
        json.BeginObject();
        json.Key("gpus");
        JsonInts(json, ch.gpus);
        json.Key("nics");
        JsonInts(json, ch.nets);
        json.EndObject();
      }
      json.EndArray();
      json.EndObject();
    }
    json.EndArray();
  };
  return out;
}

}  // namespace

void RegisterFieldReader_nccl_graph() {
  RegisterFieldReader({"nccl-graph", "NCCL graph XML (NCCL_GRAPH_FILE, NCCL_GRAPH_DUMP_FILE)",
                       [](std::string_view head) { return XmlRootName(head) == "graphs" ? 10 : 0; }, Inspect});
}

}  // namespace shardlab
