#include "engine/topology/device_profile.h"

#include <atomic>
#include <cmath>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/toml.h"

namespace shardlab {
namespace {

struct Field {
  const char* table;
  const char* key;
};
constexpr Field kFields[] = {
    {"device", "model"},        {"device", "fp32_tflops"},     {"device", "fp16_tflops"},
    {"device", "memory_gbps"},  {"device", "memory_bytes"},    {"overheads", "kernel_launch_ns"},
    {"overheads", "event_record_ns"}, {"overheads", "graph_node_ns"}, {"measured", "d2d_copy_gbps"},
};

std::string KeysOf(const char* table) {
  std::string out;
  for (const Field& f : kFields)
    if (std::string(f.table) == table) out += (out.empty() ? "" : ", ") + std::string(f.key);
  return out;
}

class ProfileReader {
 public:
  explicit ProfileReader(std::string path) : path_(std::move(path)) {}

  DeviceProfile Read(const TomlValue& doc) {
    DeviceProfile p;
    for (const TomlEntry& entry : doc.entries) {
      if (entry.key != "device" && entry.key != "overheads" && entry.key != "measured")
        Fail(entry.line, entry.key, "unknown table; expected [device], [overheads] or [measured]");
      if (entry.value.type != TomlType::kTable || entry.value.array_of_tables)
        Fail(entry.line, entry.key, "expected a table [" + entry.key + "]");
      for (const TomlEntry& field : entry.value.entries) {
        const std::string key = field.key;
        const std::string name = entry.key + "." + key;
        bool known = false;
        for (const Field& f : kFields) known = known || (entry.key == f.table && key == f.key);
        if (!known)
          Fail(field.line, name, "unknown key; expected " + KeysOf(entry.key.c_str()));
        if (key == "model") {
          if (field.value.type != TomlType::kString)
            Fail(field.line, name, std::string("expected a string, got ") +
                                       TomlTypeName(field.value.type));
          p.model = field.value.string_value;
          if (p.model.empty()) Fail(field.line, name, "must not be empty");
        } else if (key == "memory_bytes") {
          if (field.value.type != TomlType::kInteger || field.value.int_value <= 0)
            Fail(field.line, name, "expected a positive integer");
          p.memory_bytes = field.value.int_value;
        } else {
          const double value = Positive(field, name);
          if (key == "fp32_tflops") p.fp32_tflops = value;
          if (key == "fp16_tflops") p.fp16_tflops = value;
          if (key == "memory_gbps") p.memory_gbps = value;
          if (key == "kernel_launch_ns") p.kernel_launch_ns = value;
          if (key == "event_record_ns") p.event_record_ns = value;
          if (key == "graph_node_ns") p.graph_node_ns = value;
          if (key == "d2d_copy_gbps") p.d2d_copy_gbps = value;
        }
      }
    }
    const TomlEntry* device = doc.Find("device");
    if (device == nullptr) Fail(0, "device", "missing [device] table");
    if (p.model.empty()) Fail(device->line, "device.model", "missing");
    return p;
  }

 private:
  [[noreturn]] void Fail(int line, const std::string& field, const std::string& message) const {
    throw FileError(path_, line, field, message);
  }

  double Positive(const TomlEntry& entry, const std::string& field) const {
    if (!entry.value.is_number())
      Fail(entry.line, field,
           std::string("expected a number, got ") + TomlTypeName(entry.value.type));
    const double value = entry.value.number();
    if (!std::isfinite(value) || !(value > 0))
      Fail(entry.line, field, "must be a positive finite number (got " + TomlNumber(value) + ")");
    return value;
  }

  std::string path_;
};

}  // namespace

DeviceProfile ParseDeviceProfile(const std::string& text, const std::string& path_for_errors) {
  return ProfileReader(path_for_errors).Read(ParseToml(text, path_for_errors));
}

DeviceProfile LoadDeviceProfile(const std::string& path) {
  return ProfileReader(path).Read(LoadTomlFile(path));
}

std::string FormatDeviceProfile(const DeviceProfile& p) {
  std::ostringstream out;
  out << "# shardlab device profile (shardlab-cli calibrate); use with --device-profile FILE\n"
      << "[device]\n"
      << "model = " << TomlQuote(p.model) << "\n";
  auto number = [&](const char* key, const std::optional<double>& value, const char* note) {
    if (!value) return;
    out << key << " = " << TomlNumber(*value);
    if (note[0] != '\0') out << "  # " << note;
    out << "\n";
  };
  number("fp32_tflops", p.fp32_tflops, "sgemm");
  number("fp16_tflops", p.fp16_tflops, "half GEMM, float accumulation");
  number("memory_gbps", p.memory_gbps, "2 x bytes / device copy time, as the simulator counts");
  if (p.memory_bytes) out << "memory_bytes = " << *p.memory_bytes << "\n";
  if (p.kernel_launch_ns || p.event_record_ns || p.graph_node_ns) {
    out << "\n[overheads]  # measured; only the model of this machine (--topology this) uses them\n";
    number("kernel_launch_ns", p.kernel_launch_ns, "empty kernel, launch to launch");
    number("event_record_ns", p.event_record_ns, "cudaEventRecord, host side");
    number("graph_node_ns", p.graph_node_ns, "a graph's dependent kernel node, end to next start");
  }
  if (p.d2d_copy_gbps) {
    out << "\n[measured]\n";
    number("d2d_copy_gbps", p.d2d_copy_gbps, "bytes copied / time");
  }
  return out.str();
}

void ApplyDeviceProfile(const DeviceProfile& profile, Topology& topology) {
  for (Node& node : topology.nodes) {
    if (node.kind != NodeKind::kGpu) continue;
    node.device.model = profile.model;
    if (profile.fp32_tflops) node.device.fp32_tflops = *profile.fp32_tflops;
    if (profile.fp16_tflops) node.device.fp16_tflops = *profile.fp16_tflops;
    if (profile.memory_gbps) node.device.memory_gbps = *profile.memory_gbps;
    if (profile.memory_bytes) node.device.memory_bytes = *profile.memory_bytes;
  }
}

}  // namespace shardlab

namespace shardlab {
namespace {
std::atomic<DeviceCalibrator> g_calibrator{nullptr};
}  // namespace

void SetDeviceCalibrator(DeviceCalibrator calibrator) { g_calibrator.store(calibrator); }

DeviceProfile CalibrateDevice(int gpu) {
  const DeviceCalibrator calibrator = g_calibrator.load();
  if (calibrator == nullptr)
    throw Error("no CUDA device: this build has no CUDA backend (configure with the CUDA "
                "toolkit installed, SHARDLAB_WITH_CUDA=ON)",
                ErrorKind::kRuntime);
  return calibrator(gpu);
}

}  // namespace shardlab
