#include "app/gui/model/formula_gap.h"

#include "app/gui/i18n/language.h"

namespace shardlab::gui {

std::string FormulaGapNote(ClockKind clock, double measured_ns, double predicted_ns, double host_lane_ns) {
  if (measured_ns <= 0 || predicted_ns <= 0) return "";
  const double ratio = measured_ns / predicted_ns;
  if (ratio >= 0.9 && ratio <= 1.1) return "";
  switch (clock) {
    case ClockKind::kSimulated:
      if (ratio < 1) return "";  // the simulator never beats its own links
      if (host_lane_ns >= 0.5 * measured_ns) {
        return Tr("Slower than the formula: the host issues each op in turn (the timeline's host rows) "
               "and no op starts before its call; the formula counts only the links.");
      }
      return Tr("Slower than the formula: links shared by several transfers (contention) are not "
             "in it; the simulator models them.");
    case ClockKind::kEmulated:
      return Tr("Emulated links: each transfer is held for the formula's latency plus its bytes "
             "over the slowest hop, but copies, reductions and kernel launches take the GPU's "
             "own time, which the formula leaves out.");
    case ClockKind::kCudaEvent:
      return Tr("Timed on the GPUs that ran it, not on the machine drawn: the formula uses the "
             "drawn machine's links, so the ratio compares the two machines.");
    case ClockKind::kHost:
    case ClockKind::kHostMpiAligned:
      return Tr("Timed on host processes (MPI through this computer's memory or network), not on "
             "the machine drawn: the ratio says how far that hardware is from the drawn GPUs' "
             "links, not that the algorithm is slow.");
  }
  return "";
}

}  // namespace shardlab::gui
