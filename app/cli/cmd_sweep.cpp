// `shardlab-cli sweep COLLECTIVE`: one collective over a range of sizes,
// printed as nccl-tests' *_perf tools print it, with the same -b/-e/-f/-i
// flags and the "# Avg bus bandwidth" footer.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>

#include "app/cli/collective_run.h"
#include "app/cli/commands.h"
#include "app/cli/iterations.h"
#include "app/cli/output.h"
#include "engine/core/backend_traits.h"

namespace shardlab::cli {
namespace {

/// More sizes than this is a typo (-i 8 up to 1G), not a sweep.
constexpr std::size_t kMaxSizes = 1000;

struct SweepRange {
  Bytes min_bytes = 8;
  Bytes max_bytes = Bytes{128} << 20;
  std::int64_t factor = 2;     // multiply when > 1
  Bytes step_bytes = 1 << 20;  // else add
};

/// The sizes from min to max, rounded down to whole elements; sizes below one
/// element and repeats (after rounding) are left out, as they measure nothing new.
std::vector<Bytes> SweepSizes(const SweepRange& range, int element_bytes) {
  std::vector<Bytes> sizes;
  Bytes size = range.min_bytes;
  std::size_t generated = 0;
  while (size <= range.max_bytes) {
    if (++generated > kMaxSizes) {
      throw UsageError("sweep: the range makes more than " + std::to_string(kMaxSizes) +
                       " sizes; raise -f or -i, or narrow -b/-e");
    }
    const Bytes rounded = size / element_bytes * element_bytes;
    if (rounded > 0 && (sizes.empty() || sizes.back() != rounded)) sizes.push_back(rounded);
    const Bytes limit = std::numeric_limits<Bytes>::max();
    if (range.factor > 1) {
      if (size > limit / range.factor) break;
      size *= range.factor;
    } else {
      if (size > limit - range.step_bytes) break;
      size += range.step_bytes;
    }
  }
  return sizes;
}

/// A one-line progress note on a terminal's stderr, rewritten in place.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  void Show(std::size_t index, std::size_t total, Bytes size) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K# running %s (%zu/%zu)...", FormatBytes(size).c_str(), index + 1,
                 total);
    std::fflush(stderr);
  }
  void Clear() {
    if (!enabled_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  bool enabled_;
};

std::string Plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// "each size: 1 warm-up run (not timed), then 5 timed; time is their
/// average" (nccl-tests runs every size that way).
std::string DescribeSweepIterations(const CollectiveSetup& setup) {
  std::string line = "each size: ";
  if (setup.warmup > 0) line += Plural(static_cast<std::size_t>(setup.warmup), "warm-up run") + " (not timed), then ";
  line += std::to_string(setup.iters) + " timed";
  line += setup.iters > 1 ? "; time is their average" : "";
  return line;
}

}  // namespace

CommandSpec SweepSpec() {
  CommandSpec s;
  s.name = "sweep";
  s.summary = "run one collective over a range of sizes, as nccl-tests' *_perf tools";
  s.usage =
      "sweep COLLECTIVE [flags]   |   sweep tp-LAYER [flags] (tensor parallel; see 'sweep "
      "tp-mlp --help')";
  s.description =
      "Runs the collective for every size from -b to -e (multiplying by -f, or adding -i\n"
      "when -f is 1) and prints one row per size in nccl-tests' columns, then the average\n"
      "bus bandwidth. Each size runs -w untimed warm-ups, then -n timed runs whose average\n"
      "is its time. Results are checked while the data fits in --verify-max; larger\n"
      "sizes are timed only (#wrong N/A). Progress goes to stderr when it is a terminal.\n"
      "Exit code 0 when every checked size is correct, 1 otherwise.";
  s.flags = {
      {"minbytes", 'b', "SIZE", "smallest size (default: 8)"},
      {"maxbytes", 'e', "SIZE", "largest size (default: 128M)"},
      {"stepfactor", 'f', "N", "multiply the size by N each row (default: 2)"},
      {"stepbytes", 'i', "SIZE", "with -f 1: add SIZE each row (default: 1M)"},
  };
  AddCollectiveFlags(s.flags);
  const std::vector<FlagSpec> own = {
      {"json", 0, "", "print one JSON object with a row per size instead of the table"},
      {"quiet", 'q', "", "no progress on stderr"},
  };
  s.flags.insert(s.flags.end(), own.begin(), own.end());
  AddIterationFlags(s.flags);  // per size, as nccl-tests' -w/-n
  s.max_positionals = 1;
  s.examples =
      "  shardlab-cli sweep allreduce -b 8 -e 1G -f 2 --ranks 8 --topology dgx-a100\n"
      "  shardlab-cli sweep allgather -b 1M -e 64M -f 4 --topology dgx1-v100\n"
      "  shardlab-cli sweep alltoall -b 1K -e 1G --timing-only --json\n";
  return s;
}

int SweepMain(std::span<const std::string> words) {
  if (!words.empty() && words.front().rfind("tp-", 0) == 0) {
    return TpSweepMain(words.front(), words.subspan(1));
  }
  ParsedArgs args;
  if (HelpPrinted(SweepSpec(), words, args)) return 0;
  CollectiveSetup setup = SetupFromArgs(args, "sweep");
  const IterationSettings iterations = IterationsFromArgs(args, setup.backend);
  setup.warmup = iterations.warmup;
  setup.iters = iterations.iters;
  SweepRange range;
  if (args.Has("minbytes")) {
    range.min_bytes = ParseSizeValue(args.Spelling("minbytes"), args.Get("minbytes"), 1);
  }
  if (args.Has("maxbytes")) {
    range.max_bytes = ParseSizeValue(args.Spelling("maxbytes"), args.Get("maxbytes"), 1);
  }
  if (args.Has("stepfactor")) {
    range.factor = ParseIntValue(args.Spelling("stepfactor"), args.Get("stepfactor"), 1, 1 << 20);
  }
  if (args.Has("stepbytes")) {
    range.step_bytes = ParseSizeValue(args.Spelling("stepbytes"), args.Get("stepbytes"), 1);
  }
  if (range.min_bytes > range.max_bytes) {
    throw UsageError(args.Spelling("minbytes") + ": " + FormatBytes(range.min_bytes) +
                     " is larger than the largest size " + FormatBytes(range.max_bytes) +
                     " (" + args.Spelling("maxbytes") + ")");
  }
  const int element_bytes = DTypeBytes(setup.dtype);
  const std::vector<Bytes> sizes = SweepSizes(range, element_bytes);
  if (sizes.empty()) {
    throw UsageError(args.Spelling("maxbytes") + ": no size in the range holds one " +
                     DTypeName(setup.dtype) + " element (" + std::to_string(element_bytes) +
                     " B)");
  }

  const bool json = args.Has("json");
  std::ostream& out = std::cout;
  if (!json) {
    out << "# ShardLab sweep: " << DescribeCollective(setup) << ", " << DTypeName(setup.dtype);
    if (CollectiveReduces(setup.kind)) out << ", " << ReduceOpName(setup.op);
    out << " on " << setup.topology_name << ", backend " << setup.backend << "\n";
    if (setup.algo == CollectiveAlgo::kRing) {
      out << "#   ring order " << DescribeRing(setup) << "\n";
    }
    out << "#   " << Plural(sizes.size(), "size") << " from " << FormatBytes(sizes.front())
        << " to " << FormatBytes(sizes.back()) << "; ";
    if (setup.timing_only) {
      out << "timing only, results not checked\n";
    } else {
      out << "results checked while the data fits in " << FormatBytes(setup.verify_max_bytes)
          << " of host memory\n";
    }
    if (setup.warmup > 0 || setup.iters > 1) out << "#   " << DescribeSweepIterations(setup) << "\n";
    out << "#\n";
    PrintTableHeader(out, setup.algo == CollectiveAlgo::kNccl && BackendTraitsOrDefault(setup.backend).simulator);
    out.flush();
  }

  Progress progress(!args.Has("quiet") && isatty(STDERR_FILENO) != 0);
  std::vector<CollectiveOutcome> outcomes;
  outcomes.reserve(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    progress.Show(i, sizes.size(), sizes[i]);
    outcomes.push_back(RunCollective(setup, sizes[i]));
    progress.Clear();
    if (!json) {
      PrintTableRow(out, RowFor(outcomes.back()));
      out.flush();
    }
  }

  double busbw_sum = 0;
  std::int64_t wrong = 0;
  std::size_t unchecked = 0;
  std::string unchecked_reason;
  Bytes first_unchecked = 0;
  for (const CollectiveOutcome& o : outcomes) {
    busbw_sum += o.metrics.busbw_gbps;
    if (o.checked) {
      wrong += o.verify.wrong;
    } else {
      if (unchecked++ == 0) {
        unchecked_reason = o.not_checked_reason;
        first_unchecked = o.size_bytes;
      }
    }
  }
  const double avg_busbw = busbw_sum / static_cast<double>(outcomes.size());
  const bool any_wrong = std::any_of(outcomes.begin(), outcomes.end(),
                                     [](const CollectiveOutcome& o) { return o.wrong(); });

  if (json) {
    JsonWriter w(out, /*pretty=*/true);
    w.BeginObject();
    WriteSetupFields(w, setup);
    w.Key("rows");
    w.BeginArray();
    for (const CollectiveOutcome& o : outcomes) {
      w.BeginObject();
      WriteOutcomeFields(w, o);
      w.EndObject();
    }
    w.EndArray();
    w.Field("avg_busbw_gbps", avg_busbw);
    w.Field("wrong", wrong);
    w.Field("unchecked_sizes", static_cast<std::int64_t>(unchecked));
    w.Field("correct", !any_wrong);
    w.EndObject();
    out << "\n";
  } else {
    char avg[64];
    std::snprintf(avg, sizeof avg, "%g", avg_busbw);
    if (unchecked == outcomes.size()) {
      out << "# Out of bounds values : not checked (" << unchecked_reason << ")\n";
    } else {
      out << "# Out of bounds values : " << wrong << (any_wrong ? " FAILED" : " OK") << "\n";
    }
    out << "# Avg bus bandwidth    : " << avg << "\n";
    if (unchecked > 0 && unchecked < outcomes.size()) {
      const std::string limit = "--verify-max " + FormatBytes(setup.verify_max_bytes);
      if (unchecked == 1) {
        out << "#\n# " << FormatBytes(first_unchecked) << " was timed only (#wrong N/A): its data "
            << "needs more host memory than\n# " << limit << "; raise it to check it.\n";
      } else {
        out << "#\n# The " << unchecked << " sizes from " << FormatBytes(first_unchecked)
            << " up were timed only (#wrong N/A): their data needs\n# more host memory than "
            << limit << "; raise it to check them.\n";
      }
    }
  }
  out.flush();
  return any_wrong ? 1 : 0;
}

}  // namespace shardlab::cli
