// `shardlab-topology`: ShardLab's own topology file (engine/topology/topology_file.h).
#include <memory>

#include "engine/field/field_reader.h"
#include "engine/field/inspect_text.h"
#include "engine/field/text_lines.h"
#include "engine/topology/topology_file.h"

namespace shardlab {
namespace {

int NodesOf(const Topology& t, NodeKind kind) {
  int n = 0;
  for (const Node& node : t.nodes) n += node.kind == kind ? 1 : 0;
  return n;
}

int NvLinksOf(const Topology& t) {
  int n = 0;
  for (const Link& l : t.links) {
    n += (l.kind >= LinkKind::kNvLink1 && l.kind <= LinkKind::kNvLink5) ? 1 : 0;
  }
  return n;
}

Inspection Inspect(const FieldFile& file) {
  auto t = std::make_shared<Topology>(ParseTopologyText(file.text, file.path));
  Inspection out;
  out.summary = Count(t->num_gpus(), "GPU") + ", " + Count(NodesOf(*t, NodeKind::kNic), "NIC") + ", " +
                Count(NodesOf(*t, NodeKind::kCpu), "CPU") + ", " + Count(NvLinksOf(*t), "NVLink") + ", " +
                Count(t->num_hosts(), "host");
  if (!t->name.empty()) out.page += "name: " + t->name + "\n";
  out.page += Count(static_cast<long>(t->nodes.size()), "node") + ", " + Count(static_cast<long>(t->links.size()), "link") +
              " ('shardlab-cli topo --topology " + file.path + "' prints them)\n";
  out.json = [t](JsonWriter& json) {
    json.Field("name", t->name);
    json.Field("gpus", t->num_gpus());
    json.Field("nics", NodesOf(*t, NodeKind::kNic));
    json.Field("numa_nodes", NodesOf(*t, NodeKind::kCpu));
    json.Field("nvlinks", NvLinksOf(*t));
    json.Field("hosts", t->num_hosts());
    json.Field("links", static_cast<int>(t->links.size()));
  };
  return out;
}

int Recognise(std::string_view head) {
  for (const std::string_view line : SplitHeadLines(head)) {
    const std::vector<std::string> w = Words(line);
    if (!w.empty() && (w[0] == "[[node]]" || w[0] == "[[link]]")) return 2;
  }
  return 0;
}

}  // namespace

void RegisterFieldReader_shardlab_topology() {
  RegisterFieldReader({"shardlab-topology", "ShardLab topology file (TOML)", Recognise, Inspect});
}

}  // namespace shardlab
