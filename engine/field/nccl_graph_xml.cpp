#include "engine/field/nccl_graph_xml.h"

#include <algorithm>
#include <set>

#include "engine/core/error.h"
#include "engine/field/xml_document.h"

namespace shardlab {
namespace {

NcclGraph ReadGraph(const XmlDocument& xml, const pugi::xml_node& node, std::vector<std::string>& warnings) {
  NcclGraph g;
  g.id = XmlInt(xml, node, "id", -1);
  g.pattern = XmlInt(xml, node, "pattern", 0);
  g.nchannels = XmlInt(xml, node, "nchannels", 0);
  g.speedintra = XmlDouble(xml, node, "speedintra", 0);
  g.speedinter = XmlDouble(xml, node, "speedinter", 0);
  g.typeintra = node.attribute("typeintra").value();
  g.typeinter = node.attribute("typeinter").value();
  g.crossnic = XmlInt(xml, node, "crossnic", 0);
  g.samechannels = XmlInt(xml, node, "samechannels", 0);
  g.line = xml.LineOf(node);
  for (const pugi::xml_node& ch : node.children()) {
    if (ch.type() != pugi::node_element) continue;
    if (std::string(ch.name()) != "channel") {
      warnings.push_back(xml.At(ch) + "unfamiliar element <" + ch.name() + "> in <graph> (skipped)");
      continue;
    }
    NcclGraphChannel c;
    c.line = xml.LineOf(ch);
    for (const pugi::xml_node& step : ch.children()) {
      if (step.type() != pugi::node_element) continue;
      const std::string name = step.name();
      if (name == "gpu") {
        const int dev = XmlInt(xml, step, "dev", -1);
        if (dev < 0) throw Error(xml.At(step) + "<gpu> without a dev");
        if (std::find(c.gpus.begin(), c.gpus.end(), dev) != c.gpus.end()) {
          throw Error(xml.At(step) + "channel " + std::to_string(g.channels.size()) + " of graph " +
                      std::to_string(g.id) + " visits GPU " + std::to_string(dev) + " twice");
        }
        c.gpus.push_back(dev);
      } else if (name == "net") {
        c.nets.push_back(XmlInt(xml, step, "dev", -1));
      } else {
        warnings.push_back(xml.At(step) + "unfamiliar element <" + name + "> in <channel> (skipped)");
      }
    }
    g.channels.push_back(c);
  }
  if (g.nchannels != static_cast<int>(g.channels.size())) {
    warnings.push_back(xml.At(node) + "graph " + std::to_string(g.id) + " says nchannels=" +
                       std::to_string(g.nchannels) + " but holds " + std::to_string(g.channels.size()) +
                       " <channel>");
  }
  return g;
}

}  // namespace

int NcclGraphs::gpus() const {
  std::set<int> s;
  for (const NcclGraph& g : graphs)
    for (const NcclGraphChannel& c : g.channels) s.insert(c.gpus.begin(), c.gpus.end());
  return static_cast<int>(s.size());
}

int NcclGraphs::nets() const {
  std::set<int> s;
  for (const NcclGraph& g : graphs)
    for (const NcclGraphChannel& c : g.channels) s.insert(c.nets.begin(), c.nets.end());
  return static_cast<int>(s.size());
}

int NcclGraphs::channels() const {
  int n = 0;
  for (const NcclGraph& g : graphs) n += static_cast<int>(g.channels.size());
  return n;
}

std::string NcclGraphPatternName(int pattern) {
  switch (pattern) {
    case 1: return "balanced tree";
    case 2: return "split tree";
    case 3: return "tree";
    case 4: return "ring";
    case 5: return "nvls";
    case 6: return "collnet direct";
    default: return "pattern " + std::to_string(pattern);
  }
}

NcclGraphs ParseNcclGraphXml(const FieldFile& file) {
  const XmlDocument xml(file);
  const pugi::xml_node root = xml.root();
  if (std::string(root.name()) != "graphs") {
    throw Error(xml.At(root) + "the root element is <" + root.name() + ">, not NCCL's <graphs>");
  }
  NcclGraphs out;
  out.source = file.path;
  for (const pugi::xml_node& node : root.children()) {
    if (node.type() != pugi::node_element) continue;
    if (std::string(node.name()) != "graph") {
      out.warnings.push_back(xml.At(node) + "unfamiliar element <" + node.name() + "> in <graphs> (skipped)");
      continue;
    }
    out.graphs.push_back(ReadGraph(xml, node, out.warnings));
  }
  if (out.graphs.empty()) throw Error(xml.At(root) + "<graphs> holds no <graph>");
  return out;
}

}  // namespace shardlab
