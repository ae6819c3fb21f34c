// The small text tools the line-based field readers share: words, numbers,
// terminal colour escapes, and the prefixes launchers put before each line
// of a job's output.
//
//   [1,3]<stdout>:host-7:1234:1290 [3] NCCL INFO Channel 00/08 :    0   7 ...
//   └ mpirun --tag-output ┘└ NCCL's host:pid:tid [cuda device] ┘└ the message
//
// StripLaunchPrefix removes what launchers add (OpenMPI's `[1,N]<stdout>:`,
// `[N]` of Intel MPI and srun -l style tags, Ray's `(Worker pid=N)`);
// SplitNcclLine then finds NCCL's own prefix and the message after
// `NCCL INFO`/`NCCL WARN`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// The lines of `head` (the last one may be cut off).
std::vector<std::string_view> SplitHeadLines(std::string_view head);

/// `text` split on spaces and tabs.
std::vector<std::string> Words(std::string_view text);

/// `text` without ESC [ ... letter sequences (nvidia-smi's bold and underline).
std::string StripTerminalEscapes(std::string_view text);

/// `line` without the tags launchers put in front of it.
std::string_view StripLaunchPrefix(std::string_view line);

struct NcclLine {
  std::string host;  // "" when the line has no host:pid:tid prefix
  long pid = -1;
  int cuda_dev = -1;  // the [N] after host:pid:tid
  std::string level;  // "INFO", "WARN", "TRACE"
  std::string_view message;  // what follows "NCCL INFO "
};

/// The NCCL parts of `line` (launch prefix already stripped or not), or
/// nullopt when it is not a line NCCL's logger wrote.
std::optional<NcclLine> SplitNcclLine(std::string_view line);

/// Whole `text` as a number, or nullopt.
std::optional<std::int64_t> ParseInt(std::string_view text);
std::optional<double> ParseNumber(std::string_view text);

}  // namespace shardlab
