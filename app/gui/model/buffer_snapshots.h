// The buffer view's model of a collective run: after every logical step,
// whose contributions each chunk of each rank's output holds (ChunkState),
// as cells the view draws. Only a run of a collective has chunks; the
// session asks ChunkStateOf and gets null for any other run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/run/chunk_state.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/scenario.h"

namespace shardlab::gui {

/// One cell of the buffer view: whose contributions a chunk holds.
struct ChunkCell {
  std::vector<int> contributors;  // empty: nothing yet, or mixed (see label)
  std::string label;              // "A0+A1", "A0..7", "_", "C(5 ranks)*"
  bool complete = false;          // holds every rank it should at the end
};

/// The buffer view after one logical step (step 0: the inputs).
struct BufferSnapshot {
  int step = 0;
  std::vector<std::vector<ChunkCell>> ranks;  // [rank][chunk]
};

/// The collective's own state of `prepared` (its spec names a collective
/// kind), or null: no run, or a run of another scenario.
const PreparedCollective* CollectiveOf(const Prepared* prepared);

/// A tracker of the chunks of a collective run of at most `max_ranks`
/// ranks (a 1,024-rank run has nothing a student could read per chunk);
/// null for a larger one and for any other scenario.
std::unique_ptr<ChunkState> ChunkStateOf(const Prepared& prepared, int max_ranks);

/// The buffer view after `step`, from the run's ChunkState.
BufferSnapshot SnapshotOf(const Prepared& prepared, int step, const ChunkState& chunks);

}  // namespace shardlab::gui
