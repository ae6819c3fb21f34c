#include "engine/topology/this_machine.h"

#include <algorithm>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/json_parse.h"
#include "engine/topology/detect.h"
#include "engine/topology/profile_cache.h"

namespace shardlab {

std::string MachineRecord::Describe() const {
  std::ostringstream out;
  out << gpus << " " << (gpu_model.empty() ? "GPU of unknown model" : gpu_model);
  if (!how.empty()) out << " (" << how << ")";
  const int ranks = static_cast<int>(rank_to_gpu.size());
  if (SharesAGpu(rank_to_gpu) && gpus > 0) {
    out << ", " << ranks << " ranks as virtual devices";
    if (gpus == 1) {
      out << " on GPU 0";
    } else if (rank_to_gpu == VirtualPlacement(ranks, gpus)) {
      out << " (rank r on GPU r mod " << gpus << ")";
    } else {
      out << " (on GPUs";
      for (int g : rank_to_gpu) out << " " << g;
      out << ")";
    }
    out << " sharing " << (gpus == 1 ? "its" : "their GPU's") << " HBM";
  } else if (ranks > 0) {
    out << ", one rank per GPU";
  }
  if (issue == "graph") out << ", ops replayed as one CUDA graph";
  if (issue == "eager") out << ", ops enqueued one by one";
  return out.str();
}

MachineRecord MachineFromProfile(const DeviceProfile& profile, int gpus, const std::string& how) {
  if (gpus < 1) throw Error("gpus: the machine needs at least one GPU (got " + std::to_string(gpus) + ")");
  MachineRecord record;
  record.gpu_model = profile.model;
  record.gpus = gpus;
  record.profile = profile;
  record.how = how;
  return record;
}

std::optional<DetectedMachine> DetectThisMachine(std::string* no_gpu) {
  try {
    DetectedMachine detected = DetectMachine();
    if (!detected.gpus.empty()) return detected;
    *no_gpu = "no CUDA device: detection found no GPU";
  } catch (const Error& e) {
    *no_gpu = e.what();
  }
  return std::nullopt;
}

MachineRecord RecordThisMachine(const std::optional<DetectedMachine>& detected, const std::string& profile_path,
                                int gpus) {
  if (ThisMachineNeedsProfile(detected.has_value(), profile_path)) {
    throw Error("the model of this machine needs a GPU here or a device profile (what 'shardlab-cli "
                "calibrate' measured on the GPU to model)", ErrorKind::kInvalidInput);
  }
  if (!detected) {
    return MachineFromProfile(LoadDeviceProfile(profile_path), gpus,
                              "no GPU here: " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + " of " +
                                  profile_path);
  }
  MachineRecord record;
  record.gpus = static_cast<int>(detected->gpus.size());
  record.gpu_model = detected->gpus.front().name;
  if (!profile_path.empty()) {
    record.profile = LoadDeviceProfile(profile_path);
    record.how = "detected; rates from " + profile_path;
  } else {
    std::string how;
    record.profile = CachedProfile(record.gpu_model, 0, [] { return CalibrateDevice(0); }, &how);
    record.how = "detected; " + how;
  }
  return record;
}

RecordedProfile ProfileForMachineRecord(const std::string& gpu_model, const std::string& profile_path,
                                        const std::string& cache_dir, const std::function<DeviceProfile()>& calibrate,
                                        const std::function<void(const std::string&)>& notice) {
  RecordedProfile out;
  if (!profile_path.empty()) {
    out.profile = LoadDeviceProfile(profile_path);
    out.how = "profile " + profile_path;
    return out;
  }
  const std::string where = cache_dir.empty() ? "not cached: no cache folder (SHARDLAB_CACHE_DIR, XDG_CACHE_HOME, HOME)"
                                              : "cached at " + CachedProfilePath(cache_dir, gpu_model);
  bool calibrated = false;
  try {
    out.profile = CachedProfileIn(cache_dir, gpu_model, 0, [&] {
      // "once" only where a cache keeps the result for the next run.
      notice("calibrating " + gpu_model + (cache_dir.empty() ? "" : " once") + " for the trace's machine record; " +
             where + (cache_dir.empty() ? ", so every such run calibrates again" : ""));
      calibrated = true;
      return calibrate();
    }, &out.how);
  } catch (const Error& e) {
    out.profile.reset();
    out.how = std::string("no profile: ") + e.what();
    notice("the trace records no device profile: " + std::string(e.what()));
    return out;
  }
  // The line above promised a file: say so when it could not be written.
  if (calibrated && !cache_dir.empty() && out.how.find(", cached at ") == std::string::npos) notice(out.how);
  return out;
}

MachineRecord RecordMeasuredMachine(const DetectedMachine& detected, int ranks, const std::string& issue,
                                    const RecordedProfile& profile) {
  if (detected.gpus.empty()) throw Error("the record of a measured run needs the GPUs it ran on", ErrorKind::kRuntime);
  MachineRecord record;
  record.gpus = static_cast<int>(detected.gpus.size());
  record.gpu_model = detected.gpus.front().name;
  record.rank_to_gpu = VirtualPlacement(ranks, record.gpus);
  record.issue = issue;
  record.profile = profile.profile;
  record.how = "detected; " + profile.how;
  return record;
}

std::vector<int> VirtualPlacement(int ranks, int gpus) {
  std::vector<int> placement(static_cast<std::size_t>(std::max(ranks, 0)));
  for (int r = 0; r < ranks; ++r) placement[static_cast<std::size_t>(r)] = gpus > 0 ? r % gpus : 0;
  return placement;
}

bool SharesAGpu(const std::vector<int>& rank_to_gpu) {
  std::vector<int> seen;
  for (int g : rank_to_gpu) {
    if (std::find(seen.begin(), seen.end(), g) != seen.end()) return true;
    seen.push_back(g);
  }
  return false;
}

Topology BuildMachineTopology(const MachineRecord& record, const DetectedMachine* detected) {
  if (!record.profile) {
    throw Error("the model of this machine needs a device profile (the GPU's copy bandwidth, GEMM "
                "rates and launch cost): give --device-profile FILE ('shardlab-cli calibrate' "
                "writes one)");
  }
  DetectedMachine machine;
  if (detected != nullptr) {
    machine = *detected;
  } else {
    for (int g = 0; g < record.gpus; ++g) {
      DetectedGpu gpu;
      gpu.name = record.gpu_model;
      gpu.memory_bytes = record.profile->memory_bytes.value_or(0);
      gpu.pci_bus_id = "0000:" + std::to_string(g) + ":00.0";
      machine.gpus.push_back(gpu);
    }
  }
  Topology t = BuildDetectedTopology(machine);
  ApplyDeviceProfile(*record.profile, t);
  t.name = "this";
  t.description = record.Describe();
  ValidateTopology(t);
  return t;
}

Topology VirtualDeviceTopology(const MachineRecord& record, int ranks) {
  Topology t;
  t.name = "this";
  t.description = record.Describe();
  Node sw;
  // The GPUs' memory system (and links): the plan only needs a symmetric graph.
  sw.name = record.gpus > 1 ? kSharedMachineNode : kSharedMemoryNode;
  sw.kind = NodeKind::kNvSwitch;
  t.nodes.push_back(sw);
  // The device as the machine topology has it (the profile's figures over
  // the nearest known model's, so every figure a GPU needs is there).
  const Topology machine = BuildMachineTopology(record);
  const DeviceSpec spec = machine.nodes[static_cast<std::size_t>(machine.gpus.front())].device;
  for (int r = 0; r < ranks; ++r) {
    Node gpu;
    gpu.name = "gpu" + std::to_string(r);
    gpu.kind = NodeKind::kGpu;
    gpu.device = spec;
    t.gpus.push_back(static_cast<std::int32_t>(t.nodes.size()));
    t.nodes.push_back(gpu);
    Link link;
    link.a = t.gpus.back();
    link.b = 0;
    link.kind = LinkKind::kNvLink4;
    link.gbps = spec.memory_gbps > 0 ? spec.memory_gbps / 2 : 1;
    link.latency_ns = 0;
    t.links.push_back(link);
  }
  ValidateTopology(t);
  return t;
}

TimeNs OpIssueNs(const DeviceProfile& profile) {
  return profile.kernel_launch_ns.value_or(0) + 2 * profile.event_record_ns.value_or(0);
}

TimeNs ModelOpIssueNs(const MachineRecord& record) {
  if (record.issue == "graph" || !record.profile) return 0;
  return OpIssueNs(*record.profile);
}

TimeNs ModelGraphOpNs(const MachineRecord& record) {
  if (record.issue != "graph" || !record.profile || !record.profile->graph_node_ns) return 0;
  return kGraphNodesPerOp * *record.profile->graph_node_ns;
}

std::string CheckIssueMode(const std::string& text) {
  if (text == "graph" || text == "eager") return text;
  throw Error("issue: unknown issue mode '" + text + "' (graph or eager)");
}

void WriteMachineRecord(JsonWriter& w, const MachineRecord& record) {
  w.BeginObject();
  w.Field("gpu_model", record.gpu_model);
  w.Field("gpus", record.gpus);
  w.Key("placement");
  w.BeginArray();
  for (int g : record.rank_to_gpu) w.Int(g);
  w.EndArray();
  if (record.profile) w.Field("profile", FormatDeviceProfile(*record.profile));
  w.Field("how", record.how);
  if (!record.issue.empty()) w.Field("issue", record.issue);
  w.EndObject();
}

MachineRecord ReadMachineRecord(const JsonValue& value, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& message) {
    return Error(where + "." + field + ": " + message);
  };
  if (!value.is_object()) throw Error(where + ": not an object");
  MachineRecord record;
  if (const JsonValue* v = value.Find("gpu_model"); v != nullptr && v->is_string()) record.gpu_model = v->string;
  const JsonValue* gpus = value.Find("gpus");
  if (gpus == nullptr || !gpus->is_number() || gpus->number < 1 || gpus->number > 65536 ||
      gpus->number != static_cast<double>(static_cast<int>(gpus->number))) {
    throw fail("gpus", "missing or not a whole number in 1..65536");
  }
  record.gpus = static_cast<int>(gpus->number);
  if (const JsonValue* p = value.Find("placement"); p != nullptr) {
    if (!p->is_array()) throw fail("placement", "not an array");
    for (const JsonValue& g : p->items) {
      if (!g.is_number() || g.number < 0 || g.number >= record.gpus ||
          g.number != static_cast<double>(static_cast<int>(g.number))) {
        throw fail("placement", "a GPU index that is not a whole number in 0.." + std::to_string(record.gpus - 1));
      }
      record.rank_to_gpu.push_back(static_cast<int>(g.number));
    }
  }
  if (const JsonValue* p = value.Find("profile"); p != nullptr) {
    if (!p->is_string()) throw fail("profile", "not a string");
    record.profile = ParseDeviceProfile(p->string, where + ".profile");
  }
  if (const JsonValue* h = value.Find("how"); h != nullptr && h->is_string()) record.how = h->string;
  if (const JsonValue* i = value.Find("issue"); i != nullptr) {
    if (!i->is_string() || (i->string != "graph" && i->string != "eager"))
      throw fail("issue", "not \"graph\" or \"eager\"");
    record.issue = i->string;
  }
  return record;
}

}  // namespace shardlab
