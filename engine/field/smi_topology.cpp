#include "engine/field/smi_topology.h"

#include <algorithm>
#include <set>

#include "engine/core/error.h"
#include "engine/field/text_lines.h"

namespace shardlab {
namespace {

bool IsNvlinkCell(const std::string& cell) {
  return cell.size() > 2 && cell.rfind("NV", 0) == 0 &&
         std::all_of(cell.begin() + 2, cell.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int NvlinkCount(const std::string& cell) { return IsNvlinkCell(cell) ? std::stoi(cell.substr(2)) : 0; }

bool IsKnownCell(const std::string& cell) {
  static const std::set<std::string> known = {"X", "SYS", "NODE", "PHB", "PXB", "PIX", "SOC", "PXN"};
  return known.count(cell) > 0 || IsNvlinkCell(cell);
}

const std::vector<std::string> kAffinityNames = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};

}  // namespace

bool SmiTopology::IsGpu(std::size_t device) const { return devices[device].rfind("GPU", 0) == 0; }

int SmiTopology::gpus() const {
  int n = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) n += IsGpu(i) ? 1 : 0;
  return n;
}

int SmiTopology::nics() const { return static_cast<int>(devices.size()) - gpus(); }

int SmiTopology::nvlinks() const {
  int n = 0;
  for (std::size_t i = 0; i < matrix.size(); ++i)
    for (std::size_t j = i + 1; j < matrix[i].size(); ++j)
      if (IsGpu(i) && IsGpu(j) && IsNvlinkCell(matrix[i][j])) ++n;
  return n;
}

int SmiTopology::nvlink_lanes() const {
  int n = 0;
  for (std::size_t i = 0; i < matrix.size(); ++i)
    for (std::size_t j = i + 1; j < matrix[i].size(); ++j)
      if (IsGpu(i) && IsGpu(j)) n += NvlinkCount(matrix[i][j]);
  return n;
}

std::string SmiTopology::Affinity(std::size_t row, const std::string& name) const {
  for (std::size_t c = 0; c < affinity_columns.size(); ++c) {
    if (affinity_columns[c] == name && row < affinity.size() && c < affinity[row].size()) {
      return affinity[row][c];
    }
  }
  return "";
}

int SmiTopology::numa_nodes() const {
  std::set<std::string> ids;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string v = Affinity(i, "NUMA Affinity");
    if (IsGpu(i) && !v.empty() && v != "N/A") ids.insert(v);
  }
  return static_cast<int>(ids.size());
}

bool LooksLikeSmiTopology(std::string_view head) {
  bool header = false;
  for (const std::string_view raw : SplitHeadLines(head)) {
    const std::vector<std::string> t = Words(StripTerminalEscapes(raw));
    if (t.empty()) continue;
    if (t[0] == "GPU0" && t.size() >= 2 && t[1] != "X") header = true;
    else if (header && t[0] == "GPU0" && t.size() >= 2 && t[1] == "X") return true;
  }
  return false;
}

SmiTopology ParseSmiTopology(const FieldFile& file) {
  SmiTopology out;
  out.source = file.path;
  int header_line = 0;
  std::vector<std::string> header;
  for (int n = 1; n <= file.line_count(); ++n) {
    const std::vector<std::string> t = Words(StripTerminalEscapes(file.Line(n)));
    if (!t.empty() && t[0] == "GPU0" && (t.size() < 2 || t[1] != "X")) {
      header_line = n;
      header = t;
      break;
    }
  }
  if (header_line == 0) throw Error(file.path + ":1: no header line naming GPU0");
  // The rows: lines after the header that begin with a header name.
  struct Row {
    std::vector<std::string> words;
    int line;
  };
  std::vector<Row> rows;
  int n = header_line + 1;
  for (; n <= file.line_count(); ++n) {
    const std::vector<std::string> t = Words(StripTerminalEscapes(file.Line(n)));
    if (t.empty()) break;
    if (std::find(header.begin(), header.end(), t[0]) == header.end()) break;
    rows.push_back({t, n});
  }
  // The device columns: the header's names up to the first affinity column
  // ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID").
  std::size_t devices = 0;
  while (devices < header.size() && header[devices] != "CPU" && header[devices] != "NUMA" &&
         header[devices] != "GPU") {
    ++devices;
  }
  if (devices == 0) throw Error(file.path + ":" + std::to_string(header_line + 1) + ": no GPU0 row under the header");
  out.devices.assign(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(devices));
  // The affinity columns, by name.
  for (std::size_t i = devices; i < header.size();) {
    bool matched = false;
    for (const std::string& name : kAffinityNames) {
      const std::vector<std::string> parts = Words(name);
      if (i + parts.size() <= header.size() &&
          std::equal(parts.begin(), parts.end(), header.begin() + static_cast<std::ptrdiff_t>(i))) {
        out.affinity_columns.push_back(name);
        i += parts.size();
        matched = true;
        break;
      }
    }
    if (!matched) {
      out.warnings.push_back(file.path + ":" + std::to_string(header_line) + ": unfamiliar column '" +
                             header[i] + "' (read as one more affinity column)");
      out.affinity_columns.push_back(header[i]);
      ++i;
    }
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const std::string where = file.path + ":" + std::to_string(row.line) + ": ";
    if (r >= devices || row.words[0] != out.devices[r]) {
      throw Error(where + "row '" + row.words[0] + "' where the header's order wants '" +
                  (r < devices ? out.devices[r] : std::string("no more rows")) + "'");
    }
    if (row.words.size() < devices + 1) {
      const bool last = row.line == file.line_count();
      throw Error(where + "row " + row.words[0] + " has " + std::to_string(row.words.size() - 1) +
                  " cells, the header names " + std::to_string(devices) + " devices" +
                  (last ? " (the file stops here: truncated?)" : ""));
    }
    std::vector<std::string> cells(row.words.begin() + 1, row.words.begin() + 1 + static_cast<std::ptrdiff_t>(devices));
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (!IsKnownCell(cells[c])) {
        out.warnings.push_back(where + "unfamiliar connection '" + cells[c] + "' between " + out.devices[r] +
                               " and " + out.devices[c]);
      }
      if ((c == r) != (cells[c] == "X")) {
        throw Error(where + out.devices[r] + " to " + out.devices[c] + " is '" + cells[c] + "'" +
                    (c == r ? ", not X (self)" : ": X marks only a device itself"));
      }
    }
    out.matrix.push_back(cells);
    out.affinity.emplace_back(row.words.begin() + 1 + static_cast<std::ptrdiff_t>(devices), row.words.end());
  }
  if (rows.size() != devices) {
    throw Error(file.path + ":" + std::to_string(n) + ": " + std::to_string(rows.size()) + " rows for " +
                std::to_string(devices) + " devices" + (n > file.line_count() ? " (the file stops here: truncated?)" : ""));
  }
  for (std::size_t i = 0; i < devices; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out.matrix[i][j] != out.matrix[j][i]) {
        out.warnings.push_back(file.path + ":" + std::to_string(rows[i].line) + ": " + out.devices[i] + "-" +
                               out.devices[j] + " is " + out.matrix[i][j] + " one way and " + out.matrix[j][i] +
                               " the other");
      }
  // The legends after the matrix.
  bool nic_legend = false;
  for (; n <= file.line_count(); ++n) {
    const std::string text = StripTerminalEscapes(file.Line(n));
    const std::vector<std::string> t = Words(text);
    if (t.empty()) continue;
    if (t[0] == "NIC" && t.size() >= 2 && t[1] == "Legend:") {
      nic_legend = true;
      continue;
    }
    if (nic_legend && t.size() == 2 && t[0].back() == ':') {
      out.nic_legend.emplace_back(t[0].substr(0, t[0].size() - 1), t[1]);
    }
  }
  return out;
}

}  // namespace shardlab
