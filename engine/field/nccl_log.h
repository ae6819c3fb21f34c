// An NCCL_DEBUG=INFO log: what NCCL chose for a communicator. The lines read
// (after any launcher tag and NCCL's "host:pid:tid [dev]" prefix):
//
//   NCCL version 2.18.5+cuda12.2                         the version
//   comm 0x5b0bc60 rank 3 nRanks 4 nNodes 2 localRanks 2 localRank 1 MNNVL 0
//   comm 0x.. rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 7000 ... - Init COMPLETE
//   Channel 00/08 :    0   7   6   5   4   3   2   1     a ring: the ranks in order (rank 0 prints it)
//   Ring 02 : 2 -> 0 -> 1                                one rank's place in ring 2: prev -> me -> next
//   Ring 00 : 0 1 2 3                                    a whole ring (NCCL 2.3 and before)
//   Trees [0] 2/-1/-1->1->0 [1] ...                      per channel: children -> rank -> parent
//   Tree 5 : -1 -> 3 -> 2/1/-1                           one rank in tree 5: parent -> me -> children
//   Channel 00/0 : 4[4] -> 2[2] via P2P/IPC              a transport (also "Channel 00 : ...", "Ring 00 : 0 -> 1 via ...")
//
// Rings come from the Channel lines, else are assembled from the per-rank
// Ring lines (a channel whose lines do not close one cycle over all ranks
// is kept as partial). A ring that is not a permutation of the ranks
// 0..n-1 is refused: "run.log:12: channel 3's ring repeats rank 5 and lacks
// rank 6". Rings of another size belong to another communicator (the log
// names it) and are skipped with a warning. An nccl-tests table inside the
// log is read too (nccl_tests_output.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/field/field_file.h"
#include "engine/field/nccl_tests_output.h"

namespace shardlab {

struct NcclLogRing {
  int channel = 0;
  std::vector<int> ranks;  // in ring order, starting where the log starts it
  bool complete = true;    // false: assembled from per-rank lines that do not close the ring
  int line = 0;
};

struct NcclLogTreeNode {
  int rank = -1;
  int parent = -1;          // -1: the root
  std::vector<int> children;
  int line = 0;
};

struct NcclLogTree {
  int channel = 0;
  std::vector<NcclLogTreeNode> nodes;  // by rank order of first appearance
};

struct NcclLogTransport {
  int channel = 0;
  int from = -1, to = -1;
  std::string via;  // as written: "P2P/IPC", "NET/IB/0/GDRDMA", "direct shared memory"
  std::string kind; // the via without device numbers: "P2P/IPC", "NET/IB/GDRDMA", "SHM"
  int line = 0;
};

struct NcclLog {
  std::string source;
  std::string nccl_version;        // "2.18.5+cuda12.2"; "" when not in the log
  int ranks = 0;                   // the communicator's size (nRanks), else inferred
  bool ranks_inferred = false;     // no nRanks line: the largest ring, else the highest rank seen + 1
  int nodes = 0;                   // nNodes when printed
  std::vector<std::string> hosts;  // host names of the line prefixes, in order of appearance
  std::vector<NcclLogRing> rings;  // by channel
  std::vector<NcclLogTree> trees;  // by channel
  std::vector<NcclLogTransport> transports;
  NcclTestsOutput tests;           // an nccl-tests table in the log, if any
  std::vector<std::string> warnings;

  int complete_rings() const;
  /// Transport kinds and how many connections use each.
  std::map<std::string, int> TransportCounts() const;
};

/// Whether `head` holds NCCL's INFO lines about a communicator (rings, trees, versions, comms).
bool LooksLikeNcclLog(std::string_view head);

/// Parses `file`; throws Error "file:line: what" (a ring that is no permutation, a truncated table).
NcclLog ParseNcclLog(const FieldFile& file);

/// Checks that `ring` is a permutation of 0..ranks-1; "" when it is, else what is wrong.
std::string RingPermutationError(const std::vector<int>& ring, int ranks);

}  // namespace shardlab
