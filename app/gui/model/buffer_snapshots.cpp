#include "app/gui/model/buffer_snapshots.h"

#include "app/gui/model/scenario_fields.h"

namespace shardlab::gui {
namespace {

/// The ranks chunk `chunk` of rank `rank`'s output holds when the
/// collective is over (empty: the chunk is not part of the result): the
/// kind's def says.
std::vector<int> FinalContributors(const CollectiveParams& params, int rank, int chunk) {
  return CollectiveDefOf(params.kind).final_contributors(params, rank, chunk);
}

/// Elements in chunk `chunk` of a rank's output, cut as ChunkState cuts it.
std::int64_t ChunkElements(const CollectiveParams& params, int chunk) {
  if (CollectiveDefOf(params.kind).chunks == ChunkCut::kBlocks) return params.count / params.ranks;
  return ChunkCount(params.count, params.ranks, chunk);
}

/// "GPU3: [A0+A3, B3, ...]" -> {"A0+A3", "B3", ...}; empty when the line is
/// cut short ("... (N chunks)") or has no cells.
std::vector<std::string> CellsOfLine(const std::string& line) {
  std::vector<std::string> cells;
  const std::size_t open = line.find('[');
  const std::size_t close = line.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close <= open) return cells;
  const std::string body = line.substr(open + 1, close - open - 1);
  std::size_t at = 0;
  while (at <= body.size()) {
    const std::size_t comma = body.find(", ", at);
    const std::size_t end = comma == std::string::npos ? body.size() : comma;
    cells.push_back(body.substr(at, end - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  if (!cells.empty() && cells.back().rfind("...", 0) == 0) cells.clear();
  return cells;
}

/// Spreadsheet letters of a chunk, as ChunkState prints them: A..Z, AA, AB.
std::string ChunkLetters(int chunk) {
  std::string letters;
  for (int n = chunk + 1; n > 0; n = (n - 1) / 26) {
    letters.insert(letters.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return letters;
}

/// A label from a contributor set, for rows ChunkState prints cut short:
/// "C0..7", "C(5 ranks)", or "C?" when the chunk's elements disagree.
std::string LabelFromSet(int chunk, const std::vector<int>& members, bool empty_chunk) {
  const std::string letters = ChunkLetters(chunk);
  if (members.empty()) return empty_chunk ? "_" : letters + "?";
  if (members.size() == 1) return letters + std::to_string(members.front());
  const bool consecutive = members.back() - members.front() + 1 ==
                           static_cast<int>(members.size());
  if (consecutive) {
    return letters + std::to_string(members.front()) + ".." + std::to_string(members.back());
  }
  return letters + "(" + std::to_string(members.size()) + " ranks)";
}

}  // namespace

const PreparedCollective* CollectiveOf(const Prepared* prepared) {
  if (prepared == nullptr || prepared->spec == nullptr || prepared->detail == nullptr) return nullptr;
  if (prepared->spec->FindParam(kCollectiveKindParam) == nullptr) return nullptr;
  return &prepared->Detail<PreparedCollective>();
}

std::unique_ptr<ChunkState> ChunkStateOf(const Prepared& prepared, int max_ranks) {
  const PreparedCollective* collective = CollectiveOf(&prepared);
  if (collective == nullptr || collective->params.ranks > max_ranks) return nullptr;
  return std::make_unique<ChunkState>(collective->params, prepared.plan);
}

BufferSnapshot SnapshotOf(const Prepared& prepared, int step, const ChunkState& chunks) {
  const CollectiveParams& params = prepared.Detail<PreparedCollective>().params;
  const int n = params.ranks;
  BufferSnapshot snapshot;
  snapshot.step = step;
  snapshot.ranks.resize(static_cast<std::size_t>(n));
  // ChunkState's own labels ("A0..7", "C(5 ranks)*") while it prints whole rows.
  const std::vector<std::string> lines = chunks.FormatRanks();
  for (int r = 0; r < n; ++r) {
    const std::vector<std::string> labels = CellsOfLine(lines[static_cast<std::size_t>(r)]);
    std::vector<ChunkCell>& row = snapshot.ranks[static_cast<std::size_t>(r)];
    row.resize(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) {
      ChunkCell& cell = row[static_cast<std::size_t>(c)];
      cell.contributors = chunks.Contributors(r, c);
      const bool empty_chunk = ChunkElements(params, c) == 0;
      cell.label = static_cast<int>(labels.size()) == n ? labels[static_cast<std::size_t>(c)]
                                                        : LabelFromSet(c, cell.contributors,
                                                                       empty_chunk);
      const std::vector<int> final_set = FinalContributors(params, r, c);
      cell.complete = empty_chunk || (!final_set.empty() && cell.contributors == final_set);
    }
  }
  return snapshot;
}

}  // namespace shardlab::gui
