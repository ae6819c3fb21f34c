// The NCCL model against published nccl-tests all_reduce_perf results
// (tests/data/nccl-published: one file per machine, with its source and the
// topology that describes it). Every point from 64 KiB up must have the
// model's bus bandwidth within 15% of the published one; below 64 KiB the
// model's time must be within 30% (latency). The comparison table is
// printed (bench/nccl_fidelity.md is this output).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/backends/sim/nccl_model.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

struct PublishedPoint {
  double size_bytes = 0;
  double time_us = 0;    // 0: not given
  double busbw_gbps = 0;
};

struct PublishedMachine {
  std::string file;
  std::string machine;
  std::string topology;
  std::string source;
  int ranks = 0;
  bool nvls = true;
  std::vector<PublishedPoint> points;
};

std::string DataDir() { return std::string(SHARDLAB_TEST_DATA_DIR) + "/nccl-published"; }

std::string HeaderValue(const std::string& line, const std::string& key) {
  const std::string prefix = "# " + key + ":";
  if (line.rfind(prefix, 0) != 0) return {};
  std::string value = line.substr(prefix.size());
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
  return value;
}

PublishedMachine ReadMachine(const fs::path& path) {
  PublishedMachine m;
  m.file = path.filename().string();
  std::ifstream in(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (auto v = HeaderValue(line, "machine"); !v.empty()) m.machine = v;
      if (auto v = HeaderValue(line, "topology"); !v.empty()) m.topology = v.substr(0, v.find(' '));
      if (auto v = HeaderValue(line, "source"); !v.empty() && m.source.empty()) m.source = v;
      if (auto v = HeaderValue(line, "ranks"); !v.empty()) m.ranks = std::stoi(v);
      if (auto v = HeaderValue(line, "nvls"); !v.empty()) m.nvls = v == "on";
      continue;
    }
    std::istringstream row(line);
    PublishedPoint p;
    if (!(row >> p.size_bytes >> p.time_us >> p.busbw_gbps))
      ADD_FAILURE() << m.file << ":" << number << ": not 'size time busbw': " << line;
    m.points.push_back(p);
  }
  return m;
}

std::vector<PublishedMachine> ReadAll() {
  std::vector<PublishedMachine> all;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(DataDir()))
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) all.push_back(ReadMachine(f));
  return all;
}

Topology TopologyOf(const PublishedMachine& m) {
  const fs::path local = fs::path(DataDir()) / m.topology;
  return LoadTopology(fs::exists(local) ? local.string() : m.topology);
}

NcclMachine MachineOf(const PublishedMachine& m, const Topology& topology) {
  std::vector<std::int32_t> gpus(topology.gpus.begin(), topology.gpus.begin() + m.ranks);
  return DescribeNcclMachine(topology, gpus);
}

TEST(NcclFidelity, TheDataHasAtLeastFourMachinesWithSourcesAndTopologies) {
  const auto all = ReadAll();
  EXPECT_GE(all.size(), 4u);
  int points = 0;
  for (const auto& m : all) {
    EXPECT_FALSE(m.machine.empty()) << m.file;
    EXPECT_FALSE(m.source.empty()) << m.file;
    EXPECT_NE(m.source.find("https://github.com/"), std::string::npos) << m.file;
    EXPECT_GT(m.ranks, 1) << m.file;
    EXPECT_FALSE(m.points.empty()) << m.file;
    const Topology topology = TopologyOf(m);  // throws if the topology is missing
    EXPECT_GE(topology.num_gpus(), m.ranks) << m.file;
    points += static_cast<int>(m.points.size());
  }
  EXPECT_GE(points, 40);
}

TEST(NcclFidelity, BusBandwidthWithin15PercentFrom64KiBAndLatencyWithin30PercentBelow) {
  std::printf("| machine (file) | size | published busbw GB/s | model busbw GB/s | busbw error | "
              "published time us | model time us | time error | model's choice |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const auto& m : ReadAll()) {
    const Topology topology = TopologyOf(m);
    const NcclMachine machine = MachineOf(m, topology);
    NcclModelOptions options;
    options.allow_nvls = m.nvls;
    for (const PublishedPoint& p : m.points) {
      const NcclPrediction pred =
          PredictNccl(LibraryCollective::kAllReduce, p.size_bytes, machine, options);
      const double time_us = pred.chosen.time_ns / 1e3;
      const double busbw = pred.bus_bytes / pred.chosen.time_ns;
      const double busbw_err = (busbw - p.busbw_gbps) / p.busbw_gbps;
      const double time_err = p.time_us > 0 ? (time_us - p.time_us) / p.time_us : 0;
      char size[32];
      if (p.size_bytes >= 1 << 30) std::snprintf(size, sizeof size, "%g GiB", p.size_bytes / (1 << 30));
      else if (p.size_bytes >= 1 << 20) std::snprintf(size, sizeof size, "%g MiB", p.size_bytes / (1 << 20));
      else if (p.size_bytes >= 1 << 10) std::snprintf(size, sizeof size, "%g KiB", p.size_bytes / (1 << 10));
      else std::snprintf(size, sizeof size, "%g B", p.size_bytes);
      const bool bandwidth_point = p.size_bytes >= 65536;
      char busbw_err_text[16] = "-", time_text[16] = "-", time_err_text[16] = "-";
      if (bandwidth_point) std::snprintf(busbw_err_text, sizeof busbw_err_text, "%+.1f%%", 100 * busbw_err);
      if (p.time_us > 0) {
        std::snprintf(time_text, sizeof time_text, "%.1f", p.time_us);
        std::snprintf(time_err_text, sizeof time_err_text, "%+.0f%%", 100 * time_err);
      }
      std::printf("| %s | %s | %.2f | %.2f | %s | %s | %.1f | %s | %s |\n", m.file.c_str(), size,
                  p.busbw_gbps, busbw, busbw_err_text, time_text, time_us, time_err_text,
                  pred.Describe().c_str());
      if (bandwidth_point) {
        EXPECT_LE(std::fabs(busbw_err), 0.15)
            << m.file << " at " << size << ": model " << busbw << " GB/s, published " << p.busbw_gbps
            << " (" << pred.Describe() << ")";
      } else {
        ASSERT_GT(p.time_us, 0) << m.file << ": a point below 64 KiB needs its time";
        EXPECT_LE(std::fabs(time_err), 0.30)
            << m.file << " at " << size << ": model " << time_us << " us, published " << p.time_us
            << " (" << pred.Describe() << ")";
      }
    }
  }
}

}  // namespace
}  // namespace shardlab
