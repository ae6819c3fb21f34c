// `shardlab-cli run elastic`: a data-parallel job loses a GPU and recovers
// (engine/scenarios/elastic_scenario.h). Prints when the rank failed, what
// was lost since the checkpoint, the restart and the re-shard, a line per
// phase of the timeline, and whether the final parameters equal the
// single-device reference; --json the same as one object, --trace the
// timeline (every op named: "F s5 lost", "reload ckpt 4", "re-shard").
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "app/cli/cmd_elastic.h"
#include "app/cli/commands.h"
#include "app/cli/fault_flags.h"
#include "app/cli/output.h"
#include "app/cli/scenario_flags.h"
#include "engine/core/json.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/elastic_scenario.h"

namespace shardlab::cli {
namespace {

constexpr std::pair<const char*, const char*> kFieldFlags[] = {
    {"ranks: ", "ranks"},       {"steps: ", "steps"},     {"checkpoint_every: ", "checkpoint-every"},
    {"fail_rank: ", "fail-rank"}, {"layers: ", "layers"}, {"width: ", "width"},
    {"batch: ", "batch"},       {"optimizer: ", "lr"},    {"learning rate: ", "lr"},
    {"topology: ", "topology"},
};

// Per role: the span from its first op's start to its last op's end, and
// the GPU time of its ops.
struct RoleSpan {
  TimeNs first = -1, last = 0, busy = 0;
  int ops = 0;
};

std::map<ElasticRole, RoleSpan> Spans(const ElasticPlan& job, const ElasticOutcome& o) {
  std::map<ElasticRole, RoleSpan> spans;
  for (const Event& e : o.events) {
    RoleSpan& s = spans[job.roles[static_cast<std::size_t>(e.op)]];
    s.first = s.first < 0 ? e.start_ns : std::min(s.first, e.start_ns);
    s.last = std::max(s.last, e.end_ns);
    if (job.plan.ops[static_cast<std::size_t>(e.op)].kind != OpKind::kRecv) s.busy += e.end_ns - e.start_ns;
    ++s.ops;
  }
  return spans;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : " ") + std::to_string(r);
  return out;
}

void PrintText(std::ostream& out, const ElasticScenario& sc, const ElasticPlan& job, const ElasticOutcome& o) {
  const ElasticParams& p = job.params;
  out << "# checkpoints: " << o.checkpoint_files.size() << " files of " << FormatBytes(job.checkpoint_bytes)
      << " (every " << p.checkpoint_every << " steps, written as a temp file + rename)\n";
  out << "# rank " << p.fail_rank << " failed during step " << p.fail_step << ", at " << FormatTime(o.failure_ns)
      << "; the job restarts from the checkpoint after step " << job.restart_from << "\n";
  out << "# lost: " << job.lost_steps << (job.lost_steps == 1 ? " step" : " steps")
      << " and the survivors' share of step " << p.fail_step << ": " << FormatTime(o.lost_ns)
      << " since that checkpoint, " << FormatTime(o.lost_gpu_ns) << " of GPU time on all ranks\n";
  out << "# restart: rank " << job.writer << " reloads " << o.reloaded_file.substr(o.reloaded_file.rfind('/') + 1)
      << " (read back: the same bytes) and re-shards " << FormatBytes(job.reshard_bytes) << " of parameters to "
      << job.ranks_after.size() - 1 << " ranks\n";
  out << "# recovery: " << FormatTime(o.recovery_ns) << " from the failure to the end of the re-shard\n";
  out << "# ranks after: " << job.ranks_after.size() << " (" << RankList(job.ranks_after) << "), "
      << p.model.batch / static_cast<int>(job.ranks_after.size()) << " rows each (before: "
      << p.model.batch / p.ranks << ")\n";
  out << "# job: " << FormatTime(o.job_ns) << "\n#\n# phase        ops   from       to         GPU time\n";
  for (const auto& [role, s] : Spans(job, o)) {
    out << "# " << std::left << std::setw(11) << ElasticRoleName(role) << std::right << std::setw(6) << s.ops
        << "   " << std::left << std::setw(10) << FormatTime(s.first) << " " << std::setw(10) << FormatTime(s.last)
        << " " << FormatTime(s.busy) << std::right << "\n";
  }
  out << "#\n# Result: " << o.verdict.Text() << "\n#   every rank's final parameters against the single-device "
      << "reference that trains " << p.steps << " steps and redoes the lost ones from the same checkpoint\n";
  (void)sc;
}

void WriteJson(std::ostream& out, const ElasticScenario& sc, const ElasticPlan& job, const ElasticOutcome& o,
               const std::string& trace_path) {
  const ElasticParams& p = job.params;
  JsonWriter w(out, /*pretty=*/true);
  w.BeginObject();
  w.Field("scenario", "elastic");
  w.Field("ranks", p.ranks);
  w.Field("steps", p.steps);
  w.Field("checkpoint_every", p.checkpoint_every);
  w.Field("fail_rank", p.fail_rank);
  w.Field("fail_step", p.fail_step);
  w.Field("recovery", p.replace ? "replace" : "shrink");
  w.Field("topology", sc.topology);
  w.Field("backend", "sim");
  w.Field("restart_from_step", job.restart_from);
  w.Field("lost_steps", job.lost_steps);
  w.Field("time_ms", o.job_ns / 1e6);
  w.Field("failure_ms", o.failure_ns / 1e6);
  w.Field("lost_ms", o.lost_ns / 1e6);
  w.Field("lost_gpu_ms", o.lost_gpu_ns / 1e6);
  w.Field("recovery_ms", o.recovery_ns / 1e6);
  w.Field("reshard_bytes", static_cast<std::int64_t>(job.reshard_bytes));
  w.Field("checkpoint_bytes", static_cast<std::int64_t>(job.checkpoint_bytes));
  w.Key("checkpoint_files");
  w.BeginArray();
  for (const std::string& f : o.checkpoint_files) w.String(f);
  w.EndArray();
  w.Field("reloaded_file", o.reloaded_file);
  w.Key("ranks_after");
  w.BeginArray();
  for (int r : job.ranks_after) w.Int(r);
  w.EndArray();
  w.Key("phases");
  w.BeginArray();
  for (const auto& [role, s] : Spans(job, o)) {
    w.BeginObject();
    w.Field("phase", ElasticRoleName(role));
    w.Field("ops", s.ops);
    w.Field("start_us", s.first / 1e3);
    w.Field("end_us", s.last / 1e3);
    w.Field("gpu_us", s.busy / 1e3);
    w.EndObject();
  }
  w.EndArray();
  w.Field("max_error", o.max_error);
  WriteVerdictJson(w, o.verdict);
  if (!trace_path.empty()) w.Field("trace", trace_path);
  w.EndObject();
  out << "\n";
}

}  // namespace

CommandSpec ElasticSpec() {
  CommandSpec s;
  s.name = "run elastic";
  s.summary = "data-parallel training that loses a GPU: checkpoint, restart, re-shard, resume";
  s.usage = "run elastic [flags]";
  s.description =
      "--ranks ranks train the small MLP data-parallel with SGD for --steps steps, writing a\n"
      "checkpoint file every --checkpoint-every steps (temp file + rename). Rank R of\n"
      "--fail-rank R@STEP fails during that step; the job restarts from the last checkpoint\n"
      "(read back from its file) on the survivors (--recovery shrink) or with a replacement\n"
      "in R's place (--recovery replace), re-splits the batch, re-shards the parameters and\n"
      "trains on. Prints what was lost, the recovery's time and bytes, the timeline's phases,\n"
      "and whether the final parameters equal the single-device reference that redoes the\n"
      "lost steps. Exit code 0 when they do, 1 when they do not.";
  AddScenarioFlags(s.flags, ScenarioSpecOf("elastic"));
  s.flags.insert(s.flags.end(), {
      {"seed", 0, "N", "seed of the weights and data (default: 1)"},
      {"json", 0, "", "print one JSON object instead of the text"},
      {"trace", 0, "FILE", "write a Chrome trace of the whole job"},
  });
  s.examples =
      "  shardlab-cli run elastic --ranks 4 --steps 8 --checkpoint-every 2 --fail-rank 2@5\n"
      "  shardlab-cli run elastic --recovery replace --json\n";
  return s;
}

int ElasticMain(std::span<const std::string> words) {
  ParsedArgs args;
  if (HelpPrinted(ElasticSpec(), words, args)) return 0;
  const bool json = args.Has("json");
  const std::string trace_path = args.Get("trace");
  if (args.Has("trace")) CheckTracePath(args, trace_path);
  const ScenarioParams params = ParamsFromArgs(ScenarioSpecOf("elastic"), args);
  ElasticScenario sc;
  ElasticPlan job;
  Topology topology;
  Faults faults;
  try {
    sc = ElasticFromParams(params);
    if (args.Has("seed")) sc.seed = ParseSeedValue(args.Spelling("seed"), args.Get("seed"));
    CheckElasticParams(sc.params);
    topology = LoadScenarioTopology(sc.topology);
    CheckRanksFitTopology("ranks", sc.params.ranks, "rank", sc.topology, topology);
    job = BuildElastic(sc.params);
  } catch (const Error& e) {
    throw FieldErrorAsFlagError(e, args, kFieldFlags);
  }
  try {
    faults = ElasticFaults(params, topology, job);
  } catch (const Error& e) {
    throw FaultErrorAsFlagError(e, args);
  }
  std::ostream& out = std::cout;
  if (!json) {
    out << "# ShardLab: " << job.plan.name << ", on " << sc.topology << ", backend sim\n";
    if (!faults.empty()) out << "#   faults: " << faults.Describe() << "\n";
    out.flush();
  }
  const ElasticOutcome o = RunElastic(sc, job, topology, faults);
  if (args.Has("trace")) WriteRunTrace(trace_path, job.plan, topology, o.events, sc.topology, "sim");
  if (json) {
    WriteJson(out, sc, job, o, trace_path);
  } else {
    PrintText(out, sc, job, o);
    if (!trace_path.empty()) out << "# Trace: " << trace_path << "\n";
  }
  out.flush();
  return o.verdict.correct() ? 0 : 1;
}

}  // namespace shardlab::cli
