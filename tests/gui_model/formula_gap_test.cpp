#include "app/gui/model/formula_gap.h"

#include <gtest/gtest.h>

namespace shardlab::gui {
namespace {

TEST(FormulaGapNote, SimulatorBlamesContentionOnlyWhenSlower) {
  EXPECT_NE(FormulaGapNote(ClockKind::kSimulated, 130, 100).find("contention"), std::string::npos);
  EXPECT_EQ(FormulaGapNote(ClockKind::kSimulated, 105, 100), "");  // within 10%
  EXPECT_EQ(FormulaGapNote(ClockKind::kSimulated, 80, 100), "");
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
