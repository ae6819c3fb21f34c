#include "app/gui/model/host_lane_rows.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "app/gui/i18n/language.h"
#include "engine/core/units.h"

namespace shardlab::gui {

const TimelineRow* HostLaneView::RowOf(int rank) const {
  for (const TimelineRow& row : rows)
    if (row.rank == rank) return &row;
  return nullptr;
}

HostLaneView PrepareHostLane(std::span<const HostEnqueueSpan> spans, ClockKind clock) {
  HostLaneView view;
  view.clock = clock;
  std::map<int, TimelineRow> by_rank;
  for (const HostEnqueueSpan& s : spans) {
    if (s.rank < 0) continue;
    TimelineRow& row = by_rank[s.rank];
    row.rank = s.rank;
    Event e;
    e.op = s.unit;
    e.rank = s.rank;
    e.clock = clock;
    e.start_ns = s.start_ns;
    e.end_ns = std::max(s.end_ns, s.start_ns);
    row.events.push_back(e);
    view.busy_ns += e.end_ns - e.start_ns;
    view.end_ns = std::max(view.end_ns, e.end_ns);
    ++view.spans;
  }
  for (auto& [rank, row] : by_rank) {
    std::stable_sort(row.events.begin(), row.events.end(),
                     [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
    view.rows.push_back(std::move(row));
  }
  return view;
}

std::vector<GanttDisplayRow> InterleaveHostRows(const std::vector<TimelineRow>& gpu_rows, const HostLaneView& host) {
  std::vector<GanttDisplayRow> out;
  out.reserve(gpu_rows.size() + host.rows.size());
  std::size_t h = 0;  // next host row (both lists are in rank order)
  auto host_rows_through = [&](int rank) {
    while (h < host.rows.size() && host.rows[h].rank <= rank) {
      out.push_back({true, static_cast<int>(h), host.rows[h].rank});
      ++h;
    }
  };
  for (std::size_t g = 0; g < gpu_rows.size(); ++g) {
    const int rank = gpu_rows[g].rank;
    if (g == 0 || gpu_rows[g - 1].rank != rank) host_rows_through(rank);
    out.push_back({false, static_cast<int>(g), rank});
  }
  host_rows_through(1 << 30);
  return out;
}

TimeNs HostLaneTotalNs(std::span<const HostEnqueueSpan> spans) {
  TimeNs total = 0;
  for (const HostEnqueueSpan& s : spans) total += std::max(s.end_ns - s.start_ns, 0.0);
  return total;
}

std::string HostRowLabel(int rank) { return "host GPU" + std::to_string(rank); }

std::string HostLaneKey(const HostLaneView& host, TimeNs run_end_ns) {
  // Whole sentences through Tr (app/gui/i18n): the numbers go into the
  // translated format, so the key reads the same in every language.
  const std::string total = FormatTime(host.busy_ns);
  const std::string run = FormatTime(run_end_ns);
  const char* format = nullptr;
  if (host.clock == ClockKind::kSimulated) {
    format = run_end_ns > 0 ? Tr("host rows: the CPU's enqueue calls as the model charges them (host time, not GPU "
                                 "time): %d %s, %s in all, %.0f%% of the %s run")
                            : Tr("host rows: the CPU's enqueue calls as the model charges them (host time, not GPU "
                                 "time): %d %s, %s in all");
  } else {
    format = run_end_ns > 0 ? Tr("host rows: the CPU's enqueue calls, host clock (host time, not GPU time): %d "
                                 "%s, %s in all, %.0f%% of the %s run")
                            : Tr("host rows: the CPU's enqueue calls, host clock (host time, not GPU time): %d "
                                 "%s, %s in all");
  }
  char text[512];
  const double share = run_end_ns > 0 ? 100.0 * host.busy_ns / run_end_ns : 0.0;
  std::snprintf(text, sizeof text, format, static_cast<int>(host.spans), host.spans == 1 ? Tr("call") : Tr("calls"),
                total.c_str(), share, run.c_str());
  return text;
}

}  // namespace shardlab::gui
