#include "engine/field/nccl_tests_output.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "engine/core/error.h"
#include "engine/field/inspect_text.h"
#include "engine/field/text_lines.h"

namespace shardlab {
namespace {

/// The column names of a table header ("size count type redop root time ..."), or empty.
std::vector<std::string> HeaderColumns(const std::vector<std::string>& words) {
  if (words.size() < 8 || words[0] != "#" || words[1] != "size" || words[2] != "count") return {};
  return {words.begin() + 1, words.end()};
}

struct Layout {
  std::vector<std::string> columns;
  std::size_t size = 0, count = 0, type = 0, redop = SIZE_MAX, root = SIZE_MAX;
  std::size_t time[2] = {SIZE_MAX, SIZE_MAX}, algbw[2] = {SIZE_MAX, SIZE_MAX},
              busbw[2] = {SIZE_MAX, SIZE_MAX}, wrong[2] = {SIZE_MAX, SIZE_MAX};
  std::string wrong_name;
};

std::optional<Layout> LayoutOf(const std::vector<std::string>& columns) {
  Layout l;
  l.columns = columns;
  int half = -1;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string& c = columns[i];
    if (c == "size") l.size = i;
    else if (c == "count") l.count = i;
    else if (c == "type") l.type = i;
    else if (c == "redop") l.redop = i;
    else if (c == "root") l.root = i;
    else if (c == "time") {
      if (++half > 1) return std::nullopt;
      l.time[half] = i;
    } else if (half >= 0 && c == "algbw") l.algbw[half] = i;
    else if (half >= 0 && c == "busbw") l.busbw[half] = i;
    else if (half >= 0 && (c == "#wrong" || c == "error")) {
      l.wrong[half] = i;
      l.wrong_name = c;
    } else {
      return std::nullopt;
    }
  }
  for (int h = 0; h < 2; ++h)
    if (l.time[h] == SIZE_MAX || l.algbw[h] == SIZE_MAX || l.busbw[h] == SIZE_MAX) return std::nullopt;
  return l;
}

bool ReadHalf(const Layout& l, const std::vector<std::string>& w, int h, NcclTestsHalf& out) {
  const auto time = ParseNumber(w[l.time[h]]);
  const auto algbw = ParseNumber(w[l.algbw[h]]);
  const auto busbw = ParseNumber(w[l.busbw[h]]);
  if (!time || !algbw || !busbw) return false;
  out.time_us = *time;
  out.algbw_gbps = *algbw;
  out.busbw_gbps = *busbw;
  if (l.wrong[h] != SIZE_MAX && w[l.wrong[h]] != "N/A") {
    const auto wrong = ParseNumber(w[l.wrong[h]]);
    if (!wrong) return false;
    out.wrong = *wrong;
  }
  return true;
}

/// "#  Rank  0 Group  0 Pid   1411 on inst-ks8ls-comp device  0 [0x0f] NVIDIA A100-SXM4-40GB"
std::optional<NcclTestsDevice> DeviceLine(const std::vector<std::string>& w) {
  if (w.size() < 9 || w[0] != "#" || w[1] != "Rank") return std::nullopt;
  NcclTestsDevice d;
  std::size_t i = 2;
  const auto rank = ParseInt(w[i++]);
  if (!rank) return std::nullopt;
  d.rank = static_cast<int>(*rank);
  if (w[i] == "Group" && i + 1 < w.size()) {
    const auto group = ParseInt(w[i + 1]);
    if (!group) return std::nullopt;
    d.group = static_cast<int>(*group);
    i += 2;
  }
  if (i + 5 >= w.size() || w[i] != "Pid" || w[i + 2] != "on" || w[i + 4] != "device") return std::nullopt;
  const auto pid = ParseInt(w[i + 1]);
  const auto device = ParseInt(w[i + 5]);
  if (!pid || !device) return std::nullopt;
  d.pid = static_cast<long>(*pid);
  d.host = w[i + 3];
  d.device = static_cast<int>(*device);
  i += 6;
  if (i < w.size() && w[i].size() >= 2 && w[i].front() == '[' && w[i].back() == ']') {
    d.busid = w[i].substr(1, w[i].size() - 2);
    ++i;
  }
  for (; i < w.size(); ++i) d.name += (d.name.empty() ? "" : " ") + w[i];
  return d;
}

bool StartsWithDigit(const std::vector<std::string>& w) {
  return !w.empty() && !w[0].empty() && w[0][0] >= '0' && w[0][0] <= '9';
}

/// nccl-tests' own '#' lines that carry nothing the reader keeps.
bool IsKnownCommentLine(const std::vector<std::string>& w) {
  if (w.size() <= 1) return true;  // "#"
  const std::string& first = w[1];
  static const std::set<std::string> starts = {"Using", "out-of-place", "(B)", "Out", "Collective", "nccl-tests",
                                               "Blocking", "Reducing", "Device", "Cuda", "Test", "Checking"};
  return starts.count(first) > 0;
}

}  // namespace

int NcclTestsOutput::rows() const {
  int n = 0;
  for (const NcclTestsTable& t : tables) n += static_cast<int>(t.rows.size());
  return n;
}

int NcclTestsOutput::ranks() const {
  std::set<int> r;
  for (const NcclTestsDevice& d : devices) r.insert(d.rank);
  return static_cast<int>(r.size());
}

std::vector<std::string> NcclTestsOutput::hosts() const {
  std::vector<std::string> h;
  for (const NcclTestsDevice& d : devices)
    if (std::find(h.begin(), h.end(), d.host) == h.end()) h.push_back(d.host);
  return h;
}

bool LooksLikeNcclTestsOutput(std::string_view head) {
  for (const std::string_view raw : SplitHeadLines(head)) {
    const std::vector<std::string> w = Words(StripLaunchPrefix(raw));
    if (w.size() >= 2 && w[0] == "#" && (w[1] == "nThread" || w[1] == "out-of-place")) return true;
    if (!HeaderColumns(w).empty()) return true;
  }
  return false;
}

NcclTestsOutput ReadNcclTestsOutput(const FieldFile& file, const NcclTestsReadOptions& options) {
  NcclTestsOutput out;
  std::optional<Layout> layout;
  NcclTestsTable* open = nullptr;  // the table whose rows are being read
  auto where = [&](int n) { return file.path + ":" + std::to_string(n) + ": "; };
  for (int n = 1; n <= file.line_count(); ++n) {
    const std::string_view raw = file.Line(n);
    if (SplitNcclLine(raw)) continue;  // NCCL's own lines: the log reader's
    const std::string_view line = StripLaunchPrefix(raw);
    const std::vector<std::string> w = Words(line);
    if (w.empty()) continue;
    if (w[0] == "#") {
      if (w.size() >= 2 && w[1] == "nThread") {
        out.parameters = std::string(line.substr(line.find("nThread")));
      } else if (const auto d = DeviceLine(w)) {
        NcclTestsDevice device = *d;
        device.line = n;
        out.devices.push_back(device);
      } else if (const std::vector<std::string> columns = HeaderColumns(w); !columns.empty()) {
        layout = LayoutOf(columns);
        if (!layout) {
          out.warnings.push_back(where(n) + "unfamiliar table header (its rows are skipped)");
          open = nullptr;
          continue;
        }
        NcclTestsTable t;
        t.wrong_column = layout->wrong_name;
        t.has_root = layout->root != SIZE_MAX;
        t.line = n;
        out.tables.push_back(t);
        open = &out.tables.back();
      } else if (w.size() >= 5 && w[1] == "Avg" && w[2] == "bus" && w[3] == "bandwidth") {
        if (open != nullptr) open->avg_busbw_gbps = ParseNumber(w.back());
        open = nullptr;
      } else if (options.warn_unfamiliar && !IsKnownCommentLine(w)) {
        out.warnings.push_back(where(n) + "unfamiliar comment line (skipped)");
      }
      continue;
    }
    if (StartsWithDigit(w) && open != nullptr) {
      const bool last = n == file.line_count() && !file.EndsWithNewline();
      if (w.size() != layout->columns.size()) {
        if (last) {
          throw Error(where(n) + "the file stops in the middle of a table row (" + std::to_string(w.size()) +
                      " of " + std::to_string(layout->columns.size()) + " columns): truncated?");
        }
        out.warnings.push_back(where(n) + "a row of " + std::to_string(w.size()) + " columns under a header of " +
                               std::to_string(layout->columns.size()) + " (skipped)");
        continue;
      }
      NcclTestsRow row;
      row.line = n;
      const auto size = ParseInt(w[layout->size]);
      const auto count = ParseInt(w[layout->count]);
      bool ok = size && count && *size >= 0 && *count >= 0;
      row.type = w[layout->type];
      if (layout->redop != SIZE_MAX) row.redop = w[layout->redop];
      if (layout->root != SIZE_MAX) {
        const auto root = ParseInt(w[layout->root]);
        ok = ok && root.has_value();
        if (root) row.root = static_cast<int>(*root);
      }
      ok = ok && ReadHalf(*layout, w, 0, row.out_of_place) && ReadHalf(*layout, w, 1, row.in_place);
      if (!ok) {
        if (last) throw Error(where(n) + "the file stops in the middle of a table row: truncated?");
        out.warnings.push_back(where(n) + "a row whose numbers do not read (skipped)");
        continue;
      }
      row.size_bytes = *size;
      row.count = *count;
      open->rows.push_back(row);
      continue;
    }
    if (options.warn_unfamiliar) out.warnings.push_back(where(n) + "unfamiliar line (skipped)");
  }
  if (open != nullptr) {
    const int last = open->rows.empty() ? open->line : open->rows.back().line;
    throw Error(where(last) + "the file stops inside an nccl-tests table after " +
                std::to_string(open->rows.size()) + " rows (no '# Avg bus bandwidth' line): truncated?");
  }
  return out;
}

std::string NcclTestsTablesText(const NcclTestsOutput& output) {
  std::string text;
  char line[256];
  for (const NcclTestsTable& t : output.tables) {
    std::snprintf(line, sizeof line, "table at line %d: %zu rows%s\n", t.line, t.rows.size(),
                  t.avg_busbw_gbps ? (", avg busbw " + Number(*t.avg_busbw_gbps) + " GB/s").c_str() : "");
    text += line;
    text += "  #       size   type  redop   out-of-place time  busbw    in-place time  busbw   (us, GB/s)\n";
    for (const NcclTestsRow& r : t.rows) {
      std::snprintf(line, sizeof line, "  %12lld  %5s  %5s   %17.2f %6.2f   %13.2f %6.2f\n",
                    static_cast<long long>(r.size_bytes), r.type.c_str(), r.redop.c_str(), r.out_of_place.time_us,
                    r.out_of_place.busbw_gbps, r.in_place.time_us, r.in_place.busbw_gbps);
      text += line;
    }
  }
  return text;
}

namespace {

void HalfJson(JsonWriter& json, const char* key, const NcclTestsHalf& h) {
  json.Key(key);
  json.BeginObject();
  json.Field("time_us", h.time_us);
  json.Field("algbw_gbps", h.algbw_gbps);
  json.Field("busbw_gbps", h.busbw_gbps);
  json.Key("wrong");
  if (h.wrong) json.Double(*h.wrong);
  else json.Null();
  json.EndObject();
}

void WriteDevicesJson(JsonWriter& json, const NcclTestsOutput& output) {
  json.Field("ranks", output.ranks());
  json.Key("hosts");
  json.BeginArray();
  for (const std::string& h : output.hosts()) json.String(h);
  json.EndArray();
  json.Key("devices");
  json.BeginArray();
  for (const NcclTestsDevice& d : output.devices) {
    json.BeginObject();
    json.Field("rank", d.rank);
    json.Field("host", d.host);
    json.Field("device", d.device);
    json.Field("busid", d.busid);
    json.Field("name", d.name);
    json.EndObject();
  }
  json.EndArray();
}

}  // namespace

void WriteNcclTestsJson(JsonWriter& json, const NcclTestsOutput& output, bool devices) {
  if (devices) WriteDevicesJson(json, output);
  json.Field("tables", static_cast<int>(output.tables.size()));
  json.Key("rows");
  json.BeginArray();
  for (std::size_t t = 0; t < output.tables.size(); ++t) {
    for (const NcclTestsRow& r : output.tables[t].rows) {
      json.BeginObject();
      json.Field("table", static_cast<int>(t));
      json.Field("size", r.size_bytes);
      json.Field("count", r.count);
      json.Field("type", r.type);
      json.Field("redop", r.redop);
      json.Key("root");
      if (r.root) json.Int(*r.root);
      else json.Null();
      HalfJson(json, "out_of_place", r.out_of_place);
      HalfJson(json, "in_place", r.in_place);
      json.EndObject();
    }
  }
  json.EndArray();
}

}  // namespace shardlab
