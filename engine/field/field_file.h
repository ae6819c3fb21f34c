// A file from the field (an NCCL topology dump, an NCCL_DEBUG=INFO log, an
// nccl-tests table, ...), read the one way every reader in engine/field/
// shares: whole, gzip undone, capped, and split in lines with a cap.
//
//   path ── open ──► first bytes 1f 8b? ──► zlib inflate ─┐
//                     else plain bytes ──────────────────┴─► text (<= kMaxFieldFileBytes)
//                                                             lines (each <= kMaxFieldLineBytes)
//
// Reading stops at the first line longer than kMaxFieldLineBytes, so a
// 2 GB line (or a gzip bomb of one) costs a megabyte, not memory for two
// gigabytes: "big.log:1: a line longer than 1 MiB (binary data?); stopped
// reading there". JSON (a text whose first non-blank byte is '{' or '[')
// is often one line: it has only the file's cap, and its parser its own
// caps on depth and size. A gzip stream that ends early says after which line:
// "run.log.gz:812: the compressed data stops here (truncated?)".
// Errors are shardlab::Error (bad input) naming the file and line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// The largest text a field file may hold once decompressed.
inline constexpr std::size_t kMaxFieldFileBytes = std::size_t{256} << 20;
/// The longest line; a longer one stops the read.
inline constexpr std::size_t kMaxFieldLineBytes = std::size_t{1} << 20;

struct FieldFile {
  std::string path;       // as given, for messages
  bool gzip = false;      // it was gzip-compressed
  std::string text;       // the whole text, decompressed
  /// Where each line starts in `text` (line n, from 1, starts at line_starts[n-1]).
  std::vector<std::size_t> line_starts;

  int line_count() const { return static_cast<int>(line_starts.size()); }
  /// Line n (from 1) without its newline (and without a trailing '\r').
  std::string_view Line(int n) const;
  /// The line (from 1) and column (from 1) of byte `offset` of the text.
  std::pair<int, int> LineColumnAt(std::size_t offset) const;
  /// Whether the text ends with a newline (a file cut mid-line usually does not).
  bool EndsWithNewline() const { return !text.empty() && text.back() == '\n'; }
};

/// Reads `path`, decompressing gzip. Throws Error "path: ..." / "path:LINE: ...".
FieldFile ReadFieldFile(const std::string& path);

/// The same from bytes already in memory (tests, fuzzing): `path` names it.
FieldFile FieldFileFromBytes(std::string_view bytes, const std::string& path);

}  // namespace shardlab
