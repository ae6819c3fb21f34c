// `shardlab-cli compare A.json B.json`: two runs of one plan (traces that
// `run --trace` wrote, on any backend) side by side: per phase, step and
// stage, the totals, and the biggest cause of the gap in words
// (engine/compare/compare.h). `compare TRACE --model [--settings S]`: one
// measured trace against the simulator's model of the machine that ran it
// (engine/compare/model_trace.h).
#include <iostream>

#include "app/cli/commands.h"
#include "engine/compare/compare.h"
#include "engine/compare/model_trace.h"
#include "engine/scenarios/trace_model.h"
#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/topology/device_profile.h"

namespace shardlab::cli {

CommandSpec CompareSpec() {
  CommandSpec s;
  s.name = "compare";
  s.summary = "two runs of one plan side by side: per phase, step and op, and why they differ";
  s.usage = "compare A.json B.json [--json] [--ops]\n"
            "       compare TRACE.json --model [--settings 'SCENARIO key=value ...'] [--device-profile FILE] [--gpus N] [--issue MODE]";
  s.description =
      "Reads two traces that 'run ... --trace FILE' wrote (e.g. one measured on a GPU and one\n"
      "simulated) and compares them op by op. They must be runs of one plan: the same ops by\n"
      "id, kind, rank, peer and bytes; otherwise the first difference is named and the exit\n"
      "code is 2. A measured trace goes first when the other is simulated (A = measured).\n"
      "Prints, per phase (and per step for collectives, per stage for pipelines), each\n"
      "run's span, the ratio B/A, the error (B-A)/A and the mean per-op error; totals for\n"
      "communication, compute and idle time; the ops grouped by kind and size, largest gap\n"
      "first; and a sentence naming the biggest contributor to the gap.\n"
      "\n"
      "With --model, one measured trace is compared with the simulator's model of the\n"
      "machine that ran it (the GPUs it recorded, ranks as virtual devices sharing a GPU's\n"
      "HBM, the profile's rates and issue costs): the plan is rebuilt from the scenario's\n"
      "settings the trace records (run --trace writes them), or from --settings, e.g.\n"
      "'pipeline schedule=1f1b stages=4 microbatches=8' (parameter names as lab files write\n"
      "them; any scenario that runs a plan), and must be the plan measured. A trace that\n"
      "records no machine, or no rates, needs --device-profile (and --gpus).";
  s.flags = {
      {"json", 0, "", "print the comparison as JSON"},
      {"ops", 0, "", "with --json: every op's times and error too"},
      {"model", 0, "", "compare one TRACE with the simulator's model of the machine that ran it"},
      {"settings", 0, "SETTINGS", "with --model: the trace's scenario and settings ('pipeline stages=4 "
                                  "...'), for a trace that does not record them"},
      {"device-profile", 0, "FILE", "with --model: the GPU's rates, when the trace records none"},
      {"gpus", 0, "N", "with --model, for a trace that records no machine: N GPUs of "
                       "--device-profile (default 1)"},
      {"issue", 0, "MODE", "with --model: how the run issued its ops, graph or eager (default: "
                           "as recorded, else eager)"},
  };
  s.max_positionals = 2;
  s.examples =
      "  shardlab-cli compare tests/data/traces/h200-ring8-64M.json sim.json\n"
      "  shardlab-cli compare measured.json sim.json --json --ops\n"
      "  shardlab-cli compare tests/data/traces/h200-1f1b.json --model --settings 'pipeline width=1024 batch=128' \\\n"
      "      --device-profile tests/data/traces/h200.toml\n";
  return s;
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

int CompareWithModel(const ParsedArgs& args) {
  if (args.positionals().size() != 1) {
    throw UsageError(args.Spelling("model") + ": compares one trace with the model of its machine (got " +
                     std::to_string(args.positionals().size()) + " files)");
  }
  const std::string path = args.positionals()[0];
  TraceModelOptions options;
  TraceModel model;
  try {
    if (args.Has("settings")) options.scenario = ParsePlanSettings(args.Get("settings"));
    if (args.Has("device-profile")) {
      options.profile_source = args.Get("device-profile");
      options.profile = LoadDeviceProfile(options.profile_source);
    }
    if (args.Has("gpus")) {
      options.gpus = static_cast<int>(ParseIntValue(args.Spelling("gpus"), args.Get("gpus"), 1, 65536));
    }
    options.issue = args.Get("issue");
    model = ModelTrace(ReadChromeTraceFile(path), options);
  } catch (const Error& e) {
    throw Error(e.what(), ErrorKind::kInvalidInput);
  }
  const Comparison& c = model.comparison;
  if (args.Has("json")) {
    std::cout << ComparisonJson(c, args.Has("ops"));
  } else {
    std::cout << "# A: " << path << "\n# B: the model of " << model.machine.Describe()
              << "\n#    plan rebuilt from '" << model.scenario.Text() << "'\n"
              << FormatComparison(c);
  }
  return 0;
}

}  // namespace

int CompareMain(const ParsedArgs& args) {
  if (args.Has("model")) return CompareWithModel(args);
  for (const char* flag : {"settings", "device-profile", "gpus", "issue"}) {
    if (args.Has(flag)) throw UsageError(args.Spelling(flag) + ": only with --model");
  }
  if (args.positionals().size() != 2) {
    throw UsageError("compare needs two trace files (see 'shardlab-cli compare --help')");
  }
  RunRecord a = ReadRun(args.positionals()[0]);
  RunRecord b = ReadRun(args.positionals()[1]);
  // The measurement is the reference: A measured, B the model.
  if (SwapForMeasuredFirst(a, b)) std::swap(a, b);
  const Comparison comparison = CompareRuns(a, b);
  if (args.Has("json")) {
    std::cout << ComparisonJson(comparison, args.Has("ops"));
  } else {
    std::cout << "# A: " << a.source << "\n# B: " << b.source << "\n" << FormatComparison(comparison);
  }
  return 0;
}

}  // namespace shardlab::cli
