// Reading and writing topology files. The TOML layer (engine/core/toml.h)
// checks size, encoding and syntax; this layer checks meaning, and names the
// file, line and field of every problem: "box.toml:14: link.b: no node named
// 'gpu9'". Unknown keys are errors, so a typo ("gpbs = 25") never silently
// falls back to a default.
#include "engine/topology/topology_file.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

struct NodeKindSpelling {
  const char* text;
  NodeKind kind;
};
constexpr NodeKindSpelling kNodeKinds[] = {
    {"gpu", NodeKind::kGpu},
    {"nvswitch", NodeKind::kNvSwitch},
    {"pcie-switch", NodeKind::kPcieSwitch},
    {"cpu", NodeKind::kCpu},
    {"nic", NodeKind::kNic},
    {"net-switch", NodeKind::kNetSwitch},
};

struct LinkKindSpelling {
  const char* text;
  LinkKind kind;
};
constexpr LinkKindSpelling kLinkKinds[] = {
    {"nvlink1", LinkKind::kNvLink1},   {"nvlink2", LinkKind::kNvLink2},
    {"nvlink3", LinkKind::kNvLink3},   {"nvlink4", LinkKind::kNvLink4},
    {"nvlink5", LinkKind::kNvLink5},   {"pcie3", LinkKind::kPcie3},
    {"pcie4", LinkKind::kPcie4},       {"pcie5", LinkKind::kPcie5},
    {"upi", LinkKind::kUpi},           {"infiniband", LinkKind::kInfiniBand},
    {"ethernet", LinkKind::kEthernet},
};

const char* NodeKindText(NodeKind kind) {
  for (const auto& k : kNodeKinds) {
    if (k.kind == kind) return k.text;
  }
  return "?";
}

const char* LinkKindText(LinkKind kind) {
  for (const auto& k : kLinkKinds) {
    if (k.kind == kind) return k.text;
  }
  return "?";
}

template <typename Table>
std::string ListTexts(const Table& table) {
  std::string out;
  for (const auto& k : table) out += std::string(out.empty() ? "" : ", ") + k.text;
  return out;
}

constexpr double kBytesPerGb = 1024.0 * 1024.0 * 1024.0;  // GPU makers' "GB" of memory

const char* const kTopKeys[] = {"name", "description", "node", "link"};
const char* const kNodeKeys[] = {"name",         "kind",        "host",
                                 "forward_gbps", "model",       "fp32_tflops",
                                 "fp16_tflops",  "memory_gbps", "memory_gb",
                                 "nic"};
const char* const kGpuOnlyKeys[] = {"model", "fp32_tflops", "fp16_tflops", "memory_gbps",
                                    "memory_gb", "nic"};
const char* const kLinkKeys[] = {"a", "b", "kind", "gbps", "latency_us", "latency_ns", "lanes"};

template <std::size_t N>
bool Contains(const char* const (&keys)[N], const std::string& key) {
  for (const char* k : keys) {
    if (key == k) return true;
  }
  return false;
}

template <std::size_t N>
std::string Join(const char* const (&keys)[N]) {
  std::string out;
  for (const char* k : keys) out += std::string(out.empty() ? "" : ", ") + k;
  return out;
}

// Reads one document; `path_` prefixes every error.
class TopologyReader {
 public:
  explicit TopologyReader(const std::string& path) : path_(path) {}

  Topology Read(const TomlValue& doc) {
    Topology topology;
    for (const TomlEntry& entry : doc.entries) {
      if (!Contains(kTopKeys, entry.key))
        Fail(entry.line, entry.key, "unknown key; expected " + Join(kTopKeys));
    }
    if (const TomlEntry* name = doc.Find("name")) {
      topology.name = String(*name, name->key);
    } else {
      topology.name = std::filesystem::path(path_).stem().string();
    }
    if (const TomlEntry* description = doc.Find("description"))
      topology.description = String(*description, description->key);

    const TomlEntry* nodes = doc.Find("node");
    if (nodes == nullptr)
      Fail(0, "node", "missing; describe each GPU, switch, CPU and NIC in a [[node]] table");
    for (const TomlValue& table : Tables(*nodes)) ReadNode(table, &topology);
    if (const TomlEntry* links = doc.Find("link")) {
      for (const TomlValue& table : Tables(*links)) ReadLink(table, &topology);
    }
    ResolveOwnNics(&topology);
    if (topology.gpus.empty()) Fail(nodes->line, "node", "no node has kind = \"gpu\"");
    try {
      ValidateTopology(topology);
    } catch (const Error& e) {
      throw FileError(path_, 0, "", e.what());
    }
    return topology;
  }

 private:
  [[noreturn]] void Fail(int line, const std::string& field, const std::string& message) const {
    throw FileError(path_, line, field, message);
  }

  const std::vector<TomlValue>& Tables(const TomlEntry& entry) const {
    if (entry.value.type != TomlType::kArray || !entry.value.array_of_tables)
      Fail(entry.line, entry.key, "write one [[" + entry.key + "]] table per " + entry.key);
    return entry.value.items;
  }

  std::string String(const TomlEntry& entry, const std::string& field) const {
    if (entry.value.type != TomlType::kString)
      Fail(entry.line, field,
           std::string("expected a string, got ") + TomlTypeName(entry.value.type));
    return entry.value.string_value;
  }

  double Number(const TomlEntry& entry, const std::string& field) const {
    if (!entry.value.is_number())
      Fail(entry.line, field,
           std::string("expected a number, got ") + TomlTypeName(entry.value.type));
    const double value = entry.value.number();
    if (!std::isfinite(value)) Fail(entry.line, field, "must be a finite number");
    return value;
  }

  double Positive(const TomlEntry& entry, const std::string& field) const {
    const double value = Number(entry, field);
    if (!(value > 0)) Fail(entry.line, field, "must be positive (got " + TomlNumber(value) + ")");
    return value;
  }

  double NonNegative(const TomlEntry& entry, const std::string& field) const {
    const double value = Number(entry, field);
    if (value < 0) Fail(entry.line, field, "must be >= 0 (got " + TomlNumber(value) + ")");
    return value;
  }

  std::int64_t Integer(const TomlEntry& entry, const std::string& field, std::int64_t min,
                       std::int64_t max) const {
    if (entry.value.type != TomlType::kInteger)
      Fail(entry.line, field,
           std::string("expected an integer, got ") + TomlTypeName(entry.value.type));
    const std::int64_t value = entry.value.int_value;
    if (value < min || value > max) {
      Fail(entry.line, field,
           "must be in " + std::to_string(min) + ".." + std::to_string(max) + " (got " +
               std::to_string(value) + ")");
    }
    return value;
  }

  const TomlEntry& Require(const TomlValue& table, const char* prefix, const char* key) const {
    const TomlEntry* entry = table.Find(key);
    if (entry == nullptr) Fail(table.line, std::string(prefix) + "." + key, "missing");
    return *entry;
  }

  void ReadNode(const TomlValue& table, Topology* topology) {
    for (const TomlEntry& entry : table.entries) {
      if (!Contains(kNodeKeys, entry.key))
        Fail(entry.line, "node." + entry.key, "unknown key; expected " + Join(kNodeKeys));
    }
    Node node;
    const TomlEntry& name = Require(table, "node", "name");
    node.name = String(name, "node.name");
    if (node.name.empty()) Fail(name.line, "node.name", "must not be empty");
    if (const auto it = name_lines_.find(node.name); it != name_lines_.end()) {
      Fail(name.line, "node.name",
           "duplicate node name '" + node.name + "' (first on line " + std::to_string(it->second) +
               ")");
    }

    const TomlEntry& kind = Require(table, "node", "kind");
    const std::string kind_text = String(kind, "node.kind");
    bool known = false;
    for (const auto& k : kNodeKinds) {
      if (kind_text != k.text) continue;
      node.kind = k.kind;
      known = true;
    }
    if (!known)
      Fail(kind.line, "node.kind",
           "unknown kind '" + kind_text + "'; expected " + ListTexts(kNodeKinds));

    if (const TomlEntry* host = table.Find("host"))
      node.host = static_cast<std::int32_t>(
          Integer(*host, "node.host", 0, std::numeric_limits<std::int32_t>::max()));
    if (const TomlEntry* forward = table.Find("forward_gbps")) {
      if (node.kind == NodeKind::kGpu)
        Fail(forward->line, "node.forward_gbps", "GPUs do not forward traffic for others");
      node.forward_gbps = NonNegative(*forward, "node.forward_gbps");
    }

    if (node.kind == NodeKind::kGpu) {
      ReadDevice(table, &node.device);
      // Resolved once every node is read: the NIC may come later in the file.
      if (const TomlEntry* nic = table.Find("nic"))
        pending_nics_.push_back({static_cast<std::int32_t>(topology->nodes.size()),
                                 String(*nic, "node.nic"), nic->line});
      topology->gpus.push_back(static_cast<std::int32_t>(topology->nodes.size()));
    } else {
      for (const char* key : kGpuOnlyKeys) {
        if (const TomlEntry* entry = table.Find(key))
          Fail(entry->line, std::string("node.") + key, std::string("only GPUs have ") + key);
      }
    }
    name_lines_[node.name] = name.line;
    node_ids_[node.name] = static_cast<std::int32_t>(topology->nodes.size());
    topology->nodes.push_back(std::move(node));
  }

  // A known model gives every figure; figures written out override it.
  void ReadDevice(const TomlValue& table, DeviceSpec* device) {
    const TomlEntry* model = table.Find("model");
    const DeviceSpec* known = nullptr;
    if (model != nullptr) {
      device->model = String(*model, "node.model");
      known = FindGpuModel(device->model);
      if (known != nullptr) {
        const std::string written = device->model;
        *device = *known;
        // Keep a full name the user wrote ("A100-SXM4-80GB"), else the catalogue's.
        if (written.size() > device->model.size()) device->model = written;
      }
    }
    auto figure = [&](const char* key, double* out) {
      if (const TomlEntry* entry = table.Find(key)) {
        *out = Positive(*entry, std::string("node.") + key);
        return;
      }
      if (known != nullptr) return;
      std::string models;
      for (const std::string& m : KnownGpuModelNames()) models += (models.empty() ? "" : ", ") + m;
      if (model != nullptr) {
        Fail(model->line, "node.model",
             "unknown GPU model '" + device->model + "' (known: " + models + "); give " + key +
                 " and the other figures to use it");
      }
      Fail(table.line, std::string("node.") + key,
           "missing (give model = \"A100\" or another known model: " + models + ")");
    };
    figure("fp32_tflops", &device->fp32_tflops);
    figure("fp16_tflops", &device->fp16_tflops);
    figure("memory_gbps", &device->memory_gbps);
    double memory_gb = static_cast<double>(device->memory_bytes) / kBytesPerGb;
    figure("memory_gb", &memory_gb);
    if (memory_gb > 1e6)
      Fail(table.Find("memory_gb")->line, "node.memory_gb", "must be at most 1000000");
    device->memory_bytes = static_cast<Bytes>(std::llround(memory_gb * kBytesPerGb));
  }

  void ReadLink(const TomlValue& table, Topology* topology) {
    for (const TomlEntry& entry : table.entries) {
      if (!Contains(kLinkKeys, entry.key))
        Fail(entry.line, "link." + entry.key, "unknown key; expected " + Join(kLinkKeys));
    }
    Link link;
    auto end = [&](const char* key) {
      const TomlEntry& entry = Require(table, "link", key);
      const std::string field = std::string("link.") + key;
      const std::string name = String(entry, field);
      const auto it = node_ids_.find(name);
      if (it == node_ids_.end()) Fail(entry.line, field, "no node named '" + name + "'");
      return it->second;
    };
    link.a = end("a");
    link.b = end("b");
    if (link.a == link.b) {
      Fail(table.Find("b")->line, "link.b",
           "links '" + topology->nodes[static_cast<std::size_t>(link.a)].name + "' to itself");
    }

    const TomlEntry& kind = Require(table, "link", "kind");
    const std::string kind_text = String(kind, "link.kind");
    bool known = false;
    for (const auto& k : kLinkKinds) {
      if (kind_text != k.text) continue;
      link.kind = k.kind;
      known = true;
    }
    if (!known)
      Fail(kind.line, "link.kind",
           "unknown kind '" + kind_text + "'; expected " + ListTexts(kLinkKinds));

    link.gbps = Positive(Require(table, "link", "gbps"), "link.gbps");
    if (const TomlEntry* lanes = table.Find("lanes"))
      link.lanes = static_cast<std::int32_t>(Integer(*lanes, "link.lanes", 1, 4096));

    const TomlEntry* latency_us = table.Find("latency_us");
    const TomlEntry* latency_ns = table.Find("latency_ns");
    if (latency_us != nullptr && latency_ns != nullptr)
      Fail(latency_ns->line, "link.latency_ns", "give latency_us or latency_ns, not both");
    if (latency_us != nullptr) {
      link.latency_ns = NonNegative(*latency_us, "link.latency_us") * 1000.0;
    } else if (latency_ns != nullptr) {
      link.latency_ns = NonNegative(*latency_ns, "link.latency_ns");
    } else {
      link.latency_ns =
          DefaultLinkLatencyNs(link.kind, topology->nodes[static_cast<std::size_t>(link.a)].kind,
                               topology->nodes[static_cast<std::size_t>(link.b)].kind);
    }
    topology->links.push_back(link);
  }

  // A GPU's `nic = "..."`: the named node must exist and be a NIC.
  void ResolveOwnNics(Topology* topology) const {
    for (const PendingNic& pending : pending_nics_) {
      const auto it = node_ids_.find(pending.name);
      if (it == node_ids_.end())
        Fail(pending.line, "node.nic", "no node named '" + pending.name + "'");
      const Node& nic = topology->nodes[static_cast<std::size_t>(it->second)];
      if (nic.kind != NodeKind::kNic) {
        Fail(pending.line, "node.nic",
             "'" + pending.name + "' is a " + NodeKindText(nic.kind) + ", not a nic");
      }
      topology->nodes[static_cast<std::size_t>(pending.gpu)].nic = it->second;
    }
  }

  struct PendingNic {
    std::int32_t gpu;
    std::string name;
    int line;
  };

  const std::string& path_;
  std::vector<PendingNic> pending_nics_;
  std::unordered_map<std::string, int> name_lines_;
  std::unordered_map<std::string, std::int32_t> node_ids_;
};

void WriteField(std::string* out, const char* key, const std::string& toml_value) {
  *out += key;
  *out += " = ";
  *out += toml_value;
  *out += '\n';
}

}  // namespace

Topology ParseTopologyText(const std::string& text, const std::string& path_for_errors) {
  const TomlValue doc = ParseToml(text, path_for_errors);
  return TopologyReader(path_for_errors).Read(doc);
}

Topology LoadTopologyFile(const std::string& path) {
  const TomlValue doc = LoadTomlFile(path);
  return TopologyReader(path).Read(doc);
}

std::string WriteTopologyText(const Topology& topology) {
  std::string out;
  out.reserve(128 * (topology.nodes.size() + topology.links.size()) + 256);
  out += "# ShardLab topology file: bandwidths in GB/s per direction.\n";
  WriteField(&out, "name", TomlQuote(topology.name));
  if (!topology.description.empty())
    WriteField(&out, "description", TomlQuote(topology.description));

  for (const Node& node : topology.nodes) {
    out += "\n[[node]]\n";
    WriteField(&out, "name", TomlQuote(node.name));
    WriteField(&out, "kind", TomlQuote(NodeKindText(node.kind)));
    if (node.host != 0) WriteField(&out, "host", std::to_string(node.host));
    if (node.forward_gbps != 0) WriteField(&out, "forward_gbps", TomlNumber(node.forward_gbps));
    if (node.kind == NodeKind::kGpu) {
      const DeviceSpec& d = node.device;
      if (!d.model.empty()) WriteField(&out, "model", TomlQuote(d.model));
      WriteField(&out, "fp32_tflops", TomlNumber(d.fp32_tflops));
      WriteField(&out, "fp16_tflops", TomlNumber(d.fp16_tflops));
      WriteField(&out, "memory_gbps", TomlNumber(d.memory_gbps));
      WriteField(&out, "memory_gb", TomlNumber(static_cast<double>(d.memory_bytes) / kBytesPerGb));
      if (node.nic >= 0)
        WriteField(&out, "nic", TomlQuote(topology.nodes[static_cast<std::size_t>(node.nic)].name));
    }
  }

  for (const Link& link : topology.links) {
    out += "\n[[link]]\n";
    WriteField(&out, "a", TomlQuote(topology.nodes[static_cast<std::size_t>(link.a)].name));
    WriteField(&out, "b", TomlQuote(topology.nodes[static_cast<std::size_t>(link.b)].name));
    WriteField(&out, "kind", TomlQuote(LinkKindText(link.kind)));
    WriteField(&out, "gbps", TomlNumber(link.gbps));
    if (link.lanes != 1) WriteField(&out, "lanes", std::to_string(link.lanes));
    // Microseconds read best; fall back to ns where us * 1000 would not give
    // the same double back.
    const std::string us = TomlNumber(link.latency_ns / 1000.0);
    double parsed_us = 0;
    std::from_chars(us.data(), us.data() + us.size(), parsed_us);
    if (parsed_us * 1000.0 == link.latency_ns) {
      WriteField(&out, "latency_us", us);
    } else {
      WriteField(&out, "latency_ns", TomlNumber(link.latency_ns));
    }
  }
  return out;
}

}  // namespace shardlab
