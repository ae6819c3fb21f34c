// The documentation's examples as data, and the rules that compare an
// example's output with what a command really printed (docs/testing.md,
// "Examples that CI runs").
//
//   ```console                       a checked block: every `$ ` line runs
//   $ shardlab-cli run allreduce \   a command; a trailing `\` continues it
//         --ranks 4 --size 1K        on the next line
//   # ShardLab: ring all-reduce ...  `...` inside a line: any text
//   ...                              a line of its own: any lines, or none
//       1024   ~4.21                 `~` before a number: any number
//   $ shardlab-cli run x  # exit 2   the exit status expected (default 0)
//   ```
//
// A fenced block of `sh`, `bash` or `shell` is never run; it must follow a
// `<!-- doc-test: skip REASON -->` line that says why (gpu, mpi, display,
// long, host), so that no shell example goes unchecked by oversight. The
// same line before a `console` block keeps it from running.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace shardlab::docs {

/// One `$ ` command of a console block and the lines printed under it.
struct DocCommand {
  int line = 0;                        // the `$ ` line, from 1
  std::string command;                 // continuation lines joined with newlines
  std::vector<std::string> expected;   // output lines as written in the block
  int expected_exit = 0;               // from a trailing `# exit N`
};

/// One fenced block of a Markdown file.
struct DocBlock {
  int line = 0;                   // the opening fence, from 1
  std::string info;               // the fence's info string (`console`, `sh`, ...)
  std::string skip_reason;        // from `<!-- doc-test: skip REASON -->`, else empty
  std::vector<DocCommand> commands;
  bool IsShell() const;           // sh, bash, shell, console
};

/// Every fenced block of `text`, the Markdown file named `file` (for messages).
/// Throws std::runtime_error naming file:line for an unclosed fence or a skip
/// marker with an unknown reason.
std::vector<DocBlock> ParseDocBlocks(const std::string& text, const std::string& file);

/// Whether `actual` (what the command printed, split in lines) fits `expected`
/// under the rules above. Trailing spaces and trailing empty lines are ignored
/// on both sides; runs of spaces match runs of spaces of any length.
bool OutputMatches(const std::vector<std::string>& expected,
                   const std::vector<std::string>& actual);

/// The first expected line that cannot be matched, for a failure message
/// ("line 4 of the example: `...`"), or -1 when it matches.
int FirstMismatch(const std::vector<std::string>& expected, const std::vector<std::string>& actual);

/// Splits text in lines (no trailing newline kept).
std::vector<std::string> SplitLines(const std::string& text);

/// A Markdown link or image target found outside code, with its line.
struct DocLink {
  int line = 0;
  std::string target;  // as written: `cli.md#run`, `images/ring.png`, `https://...`
};

/// Every `[text](target)` and `![alt](target)` of `text` outside fenced
/// blocks and inline code.
std::vector<DocLink> FindLinks(const std::string& text);

/// The anchors GitHub makes for the headings of `text` ("## `run`: one
/// collective" -> "run-one-collective"), with -1, -2 for repeats.
std::vector<std::string> HeadingAnchors(const std::string& text);

}  // namespace shardlab::docs
