// NCCL's graph XML (NCCL_GRAPH_FILE to read, NCCL_GRAPH_DUMP_FILE to write):
// the channels NCCL is told to use, per algorithm pattern.
//
//   <graphs version="1">
//     <graph id="0" pattern="4" nchannels="2" speedintra="12" speedinter="12"
//            typeintra="SYS" typeinter="PIX" crossnic="0" samechannels="0">
//       <channel> <net dev="0"/> <gpu dev="0"/> <gpu dev="1"/> ... <net dev="0"/> </channel>
//     </graph>
//   </graphs>
//
// A channel is the order of the GPUs (by CUDA device index within the node)
// and the NICs it enters and leaves by. Patterns are NCCL's (graph.h): 1
// balanced tree, 2 split tree, 3 tree, 4 ring, 5 NVLS, 6 CollNet direct.
// A graph whose channel count differs from its nchannels is warned about;
// a channel naming one GPU twice is refused.
#pragma once

#include <string>
#include <vector>

#include "engine/field/field_file.h"

namespace shardlab {

struct NcclGraphChannel {
  std::vector<int> gpus;  // <gpu dev>, in order
  std::vector<int> nets;  // <net dev>, in order (entry, exit)
  int line = 0;
};

struct NcclGraph {
  int id = -1;
  int pattern = 0;
  int nchannels = 0;  // as the attribute says
  double speedintra = 0, speedinter = 0;  // GB/s per channel
  std::string typeintra, typeinter;       // path types: NVL, PIX, PXB, PHB, SYS, NET, ...
  int crossnic = 0;
  int samechannels = 0;
  std::vector<NcclGraphChannel> channels;
  int line = 0;
};

struct NcclGraphs {
  std::string source;
  std::vector<NcclGraph> graphs;
  std::vector<std::string> warnings;
  /// Distinct GPU and NIC indices in all channels.
  int gpus() const;
  int nets() const;
  int channels() const;
};

/// "ring", "tree", "balanced tree", "split tree", "nvls", "collnet direct", or "pattern N".
std::string NcclGraphPatternName(int pattern);

/// Parses `file`; throws Error "file:line[:column]: what".
NcclGraphs ParseNcclGraphXml(const FieldFile& file);

}  // namespace shardlab
