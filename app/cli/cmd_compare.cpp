// `shardlab-cli compare A.json B.json`: two runs of one plan (traces that
// `run --trace` wrote, on any backend) side by side: per phase, step and
// stage, the totals, and the biggest cause of the gap in words
// (engine/compare/compare.h).
#include <iostream>

#include "app/cli/commands.h"
#include "engine/compare/compare.h"
#include "engine/core/error.h"
#include "engine/io/trace_reader.h"

namespace shardlab::cli {

const CommandSpec& CompareSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "compare";
    s.summary = "two runs of one plan side by side: per phase, step and op, and why they differ";
    s.usage = "compare A.json B.json [--json] [--ops]";
    s.description =
        "Reads two traces that 'run ... --trace FILE' wrote (e.g. one measured on a GPU and one\n"
        "simulated) and compares them op by op. They must be runs of one plan: the same ops by\n"
        "id, kind, rank, peer and bytes; otherwise the first difference is named and the exit\n"
        "code is 2. A measured trace goes first when the other is simulated (A = measured).\n"
        "Prints, per phase (and per step for collectives, per stage for pipelines), each\n"
        "run's span, the ratio B/A, the error (B-A)/A and the mean per-op error; totals for\n"
        "communication, compute and idle time; the ops grouped by kind and size, largest gap\n"
        "first; and a sentence naming the biggest contributor to the gap.";
    s.flags = {
        {"json", 0, "", "print the comparison as JSON"},
        {"ops", 0, "", "with --json: every op's times and error too"},
    };
    s.max_positionals = 2;
    s.examples =
        "  shardlab-cli compare tests/data/traces/h200-ring8-64M.json sim.json\n"
        "  shardlab-cli compare measured.json sim.json --json --ops\n";
    return s;
  }();
  return spec;
}

namespace {

RunRecord ReadRun(const std::string& path) {
  try {
    return RunFromTrace(ReadChromeTraceFile(path));
  } catch (const Error& e) {
    // Whatever is wrong with a file the user named is bad input: exit 2.
    throw Error(e.what(), ErrorKind::kInvalidInput);
  }
}

}  // namespace

int CompareMain(std::span<const std::string> words) {
  const ParsedArgs args = ParseArgs(CompareSpec(), words);
  if (args.help()) {
    std::cout << FormatHelp(CompareSpec());
    return 0;
  }
  if (args.positionals().size() != 2) {
    throw UsageError("compare needs two trace files (see 'shardlab-cli compare --help')");
  }
  RunRecord a = ReadRun(args.positionals()[0]);
  RunRecord b = ReadRun(args.positionals()[1]);
  // The measurement is the reference: A measured, B the model.
  if (a.simulated() && !b.simulated()) std::swap(a, b);
  const Comparison comparison = CompareRuns(a, b);
  if (args.Has("json")) {
    std::cout << ComparisonJson(comparison, args.Has("ops"));
  } else {
    std::cout << "# A: " << a.source << "\n# B: " << b.source << "\n" << FormatComparison(comparison);
  }
  return 0;
}

}  // namespace shardlab::cli
