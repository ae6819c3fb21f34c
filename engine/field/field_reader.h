// The kinds of field file `shardlab-cli inspect` knows, one reader each,
// registered in one place: every engine/field/readers/NAME.cpp that defines
// `void RegisterFieldReader_NAME()` is called at start-up (engine/CMakeLists.txt
// writes the list), so a new kind (`kineto-trace`) is one new file there.
//
//   FieldFile ──► each reader's Recognise(head) ──► the highest score wins
//             ──► its Inspect(file) ──► Inspection {kind, summary, page, JSON fields, warnings}
//
// A reader recognises its format by content, never by the file's name: the
// first bytes of the text (kRecogniseBytes), decompressed. Scores order
// readers whose formats nest: an NCCL log may hold an nccl-tests table, so
// the log's reader scores higher when it sees NCCL's own lines. A file no
// reader recognises is refused ("file:1: not a kind of file inspect reads
// (...)"), as is a broken one (the reader's message, file:line[:column]).
// A reader that meets lines or elements it does not know goes on and says
// so in `warnings` ("file:17: unfamiliar element <foo> (skipped)").
//
// The parsed structures live beside the readers (nccl_topology_xml.h,
// nccl_graph_xml.h, smi_topology.h, nccl_log.h, nccl_tests_output.h), so
// topology import, runs on NCCL's rings and comparisons use them directly.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/json.h"
#include "engine/field/field_file.h"

namespace shardlab {

/// How many bytes of the text a reader's Recognise sees.
inline constexpr std::size_t kRecogniseBytes = 64 * 1024;

/// What a reader found in one file.
struct Inspection {
  std::string kind;     // "nccl-topology", ...
  std::string summary;  // one line: "8 GPUs, 8 NICs, 4 NUMA nodes, 0 NVLinks"
  std::string page;     // the rest of the readable page, lines indented by two spaces
  /// Writes the kind's own fields into the file's JSON object (gpus, nics, rows, ...).
  std::function<void(JsonWriter&)> json;
  std::vector<std::string> warnings;  // "file:line: what", one each
};

struct FieldReader {
  std::string kind;   // the --json `kind`
  std::string title;  // "NCCL topology XML (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE)"
  /// 0: not this format; higher: more sure (the highest score reads the file).
  std::function<int(std::string_view head)> recognise;
  /// Reads the whole file; throws Error "file:line[:column]: what" when broken.
  std::function<Inspection(const FieldFile& file)> inspect;
};

/// Adds a reader; a kind registered twice is a programming error (throws).
void RegisterFieldReader(FieldReader reader);

/// Every reader, in registration order (the built-in ones registered on first use).
const std::vector<FieldReader>& FieldReaders();

/// The reader for `file`'s content; throws Error "path:1: not a kind of file inspect reads (...)".
const FieldReader& RecogniseFieldFile(const FieldFile& file);

/// Recognises and reads `file`.
Inspection InspectFieldFile(const FieldFile& file);

}  // namespace shardlab
