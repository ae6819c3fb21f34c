// The dp-train metrics panel, prepared: the rows it shows (each measured
// quantity beside its formula or its baseline) and the two loss curves, from
// a prepared run and its summary. Pure, tested in tests/gui_model.
#pragma once

#include <string>
#include <vector>

#include "engine/scenarios/dp_train_scenario.h"

namespace shardlab::gui {

struct DpTrainRow {
  std::string name, value, note;
  bool bad = false;  // a quantity past its bound (drawn red)
};

struct DpTrainView {
  std::string title;                    // "4 ranks · MLP 4x32 · K 1 · fp16 · int8 · pcie-gen3-4gpu"
  std::vector<float> loss, baseline;    // [step]
  std::vector<int> skipped_steps;       // steps whose update was skipped
  std::vector<DpTrainRow> rows;         // empty until the run is done
};

/// `done`: the summary is that of a finished run.
DpTrainView PrepareDpTrainView(const PreparedDpTrain& prepared, const DpTrainSummary& summary, bool done);

}  // namespace shardlab::gui
