#include "app/gui/model/formula_gap.h"

#include <gtest/gtest.h>

namespace shardlab::gui {
namespace {

TEST(FormulaGapNote, SimulatorBlamesContentionOnlyWhenSlower) {
  EXPECT_NE(FormulaGapNote(ClockKind::kSimulated, 130, 100).find("contention"), std::string::npos);
  EXPECT_EQ(FormulaGapNote(ClockKind::kSimulated, 105, 100), "");  // within 10%
  EXPECT_EQ(FormulaGapNote(ClockKind::kSimulated, 80, 100), "");
}

// A simulated run bound by the host's calls (most of its time on the host
// lane) names them, not contention; a host lane that is a small part leaves
// the contention note.
TEST(FormulaGapNote, AHostBoundSimulatedRunBlamesTheHostsCalls) {
  const std::string host = FormulaGapNote(ClockKind::kSimulated, 590, 10, 589);
  EXPECT_NE(host.find("host"), std::string::npos) << host;
  EXPECT_EQ(host.find("contention"), std::string::npos) << host;
  EXPECT_NE(FormulaGapNote(ClockKind::kSimulated, 4200, 3000, 589).find("contention"), std::string::npos);
  EXPECT_EQ(FormulaGapNote(ClockKind::kSimulated, 590, 580, 589), "");  // within 10%: no note
}

TEST(FormulaGapNote, MeasuredRunsNeverBlameContention) {
  for (ClockKind clock : {ClockKind::kHost, ClockKind::kHostMpiAligned, ClockKind::kCudaEvent,
                          ClockKind::kEmulated}) {
    for (double measured : {20.0, 4000.0}) {  // faster and slower than the drawn machine
      const std::string note = FormulaGapNote(clock, measured, 100);
      EXPECT_FALSE(note.empty()) << ClockKindName(clock) << " " << measured;
      EXPECT_EQ(note.find("contention"), std::string::npos) << ClockKindName(clock);
    }
    EXPECT_EQ(FormulaGapNote(clock, 100, 100), "") << ClockKindName(clock);
  }
  EXPECT_NE(FormulaGapNote(ClockKind::kHostMpiAligned, 4000, 100).find("host processes"),
            std::string::npos);
  EXPECT_NE(FormulaGapNote(ClockKind::kCudaEvent, 4000, 100).find("GPUs that ran it"),
            std::string::npos);
}

TEST(FormulaGapNote, NothingToCompare) {
  EXPECT_EQ(FormulaGapNote(ClockKind::kHost, 0, 100), "");
  EXPECT_EQ(FormulaGapNote(ClockKind::kHost, 100, 0), "");
}

}  // namespace
}  // namespace shardlab::gui
