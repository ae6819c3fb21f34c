#include "engine/scenarios/elastic_scenario.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "engine/core/error.h"
#include "engine/core/file_io.h"
#include "engine/core/units.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"

namespace shardlab {
namespace {

std::string CheckpointDir(const std::string& asked) {
  if (asked != "auto") return asked;
  static int runs = 0;
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return (std::filesystem::temp_directory_path() /
          ("shardlab-elastic-" + std::to_string(::getpid()) + "-" + std::to_string(now % 1000000) + "-" +
           std::to_string(runs++)))
      .string();
}

// The file: a header line, then the parameters as little-endian float32.
std::string CheckpointBytes(int after_steps, std::span<const float> values) {
  std::string bytes = "shardlab checkpoint 1: parameters after step " + std::to_string(after_steps) + ", " +
                      std::to_string(values.size()) + " float32\n";
  const std::size_t header = bytes.size();
  bytes.resize(header + values.size() * sizeof(float));
  std::memcpy(bytes.data() + header, values.data(), values.size() * sizeof(float));
  return bytes;
}

// Runs the plan's logical steps up to and including `last_step`.
void StepThrough(Executor& executor, int last_step, EventSink& sink) {
  while (executor.steps_done() <= last_step && executor.StepOnce(sink)) {
  }
}

}  // namespace

Faults ElasticFaults(const ScenarioParams& params, Topology& topology, const ElasticPlan& job) {
  Faults faults = PrepareRunFaults(params, "sim", topology, job.plan);
  // fail_rank is the scenario's own failure (in training steps), which the
  // plan already holds, not the simulator's switch.
  faults.failed_ranks.clear();
  return faults;
}

ElasticScenario ElasticFromParams(const ScenarioParams& p) {
  ElasticScenario sc;
  ElasticParams& e = sc.params;
  e.ranks = static_cast<int>(p.Int("ranks"));
  e.steps = static_cast<int>(p.Int("steps"));
  e.checkpoint_every = static_cast<int>(p.Int("checkpoint_every"));
  const RankFailure failure = ParseRankFailure(p.Text("fail_rank"));
  e.fail_rank = failure.rank;
  e.fail_step = failure.step;
  e.replace = p.Text("recovery") == "replace";
  e.model.layers = static_cast<int>(p.Int("layers"));
  e.model.width = static_cast<int>(p.Int("width"));
  e.model.batch = static_cast<int>(p.Int("batch"));
  e.model.optimizer = OptimizerKind::kSgd;
  e.model.learning_rate = static_cast<float>(p.Number("lr"));
  sc.topology = p.Text("topology");
  sc.checkpoint_dir = p.Text("checkpoint_dir");
  return sc;
}

ElasticOutcome RunElastic(const ElasticScenario& scenario, const ElasticPlan& job, const Topology& topology,
                          const Faults& faults) {
  ElasticOutcome out;
  RunOptions options;
  options.seed = scenario.seed;
  options.faults = faults;
  Executor executor(CreateBackend("sim"), job.plan, topology, options);
  VectorSink sink;

  // Each checkpoint becomes a file once the plan has run through its copy.
  const std::string dir = CheckpointDir(scenario.checkpoint_dir);
  FileIo& io = RealFileIo();
  io.MakeDirs(dir);
  std::vector<std::string> paths;
  for (const ElasticCheckpoint& ck : job.checkpoints) {
    StepThrough(executor, ck.plan_step, sink);
    const std::string path = (std::filesystem::path(dir) / ("ckpt-" + std::to_string(ck.after_steps) + ".bin")).string();
    AtomicWriteFile(io, path, CheckpointBytes(ck.after_steps, executor.backend().BufferData(ck.buffer)));
    paths.push_back(path);
  }
  out.checkpoint_files = paths;

  // The restart reads its checkpoint back: the bytes must be what the plan reloads.
  StepThrough(executor, job.reload_step - 1, sink);
  const ElasticCheckpoint& used = job.checkpoints[static_cast<std::size_t>(job.used_checkpoint)];
  out.reloaded_file = paths[static_cast<std::size_t>(job.used_checkpoint)];
  std::string read;
  if (!io.ReadFile(out.reloaded_file, std::size_t{1} << 32, &read))
    throw Error(out.reloaded_file + ": the checkpoint file is gone", ErrorKind::kRuntime);
  if (read != CheckpointBytes(used.after_steps, executor.backend().BufferData(used.buffer)))
    throw Error(out.reloaded_file + ": the checkpoint file differs from the parameters it was written from",
                ErrorKind::kRuntime);
  executor.RunToEnd(sink);
  out.events = sink.events;

  // Times from the events.
  const Plan& plan = job.plan;
  for (const Event& e : out.events) {
    out.job_ns = std::max(out.job_ns, e.end_ns);
    const Op& op = plan.ops[static_cast<std::size_t>(e.op)];
    if (op.rank == job.params.fail_rank && e.op < job.reload) out.failure_ns = std::max(out.failure_ns, e.end_ns);
    if (e.op == used.op) out.checkpoint_ns = e.end_ns;
    const ElasticRole role = job.roles[static_cast<std::size_t>(e.op)];
    if (role == ElasticRole::kLost && op.kind != OpKind::kRecv) out.lost_gpu_ns += e.end_ns - e.start_ns;
  }
  TimeNs restored = 0;
  for (const Event& e : out.events) {
    const ElasticRole role = job.roles[static_cast<std::size_t>(e.op)];
    if (role == ElasticRole::kReload || role == ElasticRole::kReshard) restored = std::max(restored, e.end_ns);
  }
  out.lost_ns = out.failure_ns - out.checkpoint_ns;
  out.recovery_ns = restored - out.failure_ns;

  // The reference: one device, the same steps, the lost ones redone from
  // the same checkpoint.
  const ElasticParams& p = job.params;
  MlpBoundedReference reference(p.model, scenario.seed, UnitRoundoff(DType::kF32));
  MlpBoundedReference saved = reference;
  for (int t = 0; t < p.fail_step; ++t) {
    if (t == job.restart_from) saved = reference;
    reference.TrainStep();
  }
  if (job.restart_from == p.fail_step) saved = reference;
  reference = saved;
  for (int t = job.restart_from; t < p.steps; ++t) reference.TrainStep();

  VerdictJudge judge;
  for (int r : job.ranks_after) {
    const ElasticRankParams& rp = job.params_of[static_cast<std::size_t>(r)];
    for (int l = 0; l < p.model.layers; ++l) {
      const std::string where = std::to_string(l) + " (rank " + std::to_string(r) + ")";
      for (int which = 0; which < 2; ++which) {
        const BoundedTensor& want = which == 0 ? reference.weight(l) : reference.bias(l);
        const auto got = executor.backend().BufferData(which == 0 ? rp.weights[l] : rp.biases[l]);
        judge.Compare((which == 0 ? "w" : "b") + where, got, want.value, want.Bound());
        double scale = 0, worst = 0;
        for (std::size_t i = 0; i < want.value.size() && i < got.size(); ++i) {
          scale = std::max(scale, std::abs(want.value[i]));
          worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want.value[i]));
        }
        if (scale > 0) out.max_error = std::max(out.max_error, worst / scale);
      }
    }
  }
  out.verdict = judge.Finish();
  return out;
}

void RegisterScenario_elastic_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "elastic";
  s.title = "Elastic recovery";
  s.summary = "data-parallel training that loses a GPU: checkpoint, restart, re-shard, resume";
  s.params = {
      Param("ranks", T::kInteger, "4", "data-parallel ranks N before the failure").Range(2, 1024).Unit("GPUs"),
      Param("steps", T::kInteger, "8", "training steps T the job completes").Range(1, 10000).Unit("steps"),
      Param("checkpoint_every", T::kInteger, "2", "a checkpoint file after every C steps")
          .Range(1, 10000)
          .Unit("steps")
          .ValueName("C"),
      Param("fail_rank", T::kText, "2@5", "rank R fails during training step STEP (0 .. steps-1)")
          .ValueName("R@STEP"),
      Param("recovery", T::kChoice, "shrink",
            "shrink: go on with N-1 ranks; replace: wait for a replacement in R's place")
          .Choices({"shrink", "replace"}),
      Param("layers", T::kInteger, "2", "layers of the MLP").Range(1, 64).Unit("layers"),
      Param("width", T::kInteger, "32", "features of every layer").Range(1, 1024).Unit("features"),
      Param("batch", T::kInteger, "24", "rows of one step; must split over N and the ranks after")
          .Range(1, 1 << 16)
          .Unit("rows"),
      Param("lr", T::kNumber, "0.05", "SGD learning rate").ValueName("X"),
      TopologyParam(),
      Param("checkpoint_dir", T::kText, "auto",
            "folder of the checkpoint files; auto: a fresh folder under the system's temp folder")
          .ValueName("DIR"),
  };
  for (ParamSpec& p : FaultParams())  // stragglers and slow links; the failure is fail_rank above
    if (p.name == "slow_rank" || p.name == "throttle_link") s.params.push_back(std::move(p));
  for (ParamSpec& p : s.params)
    if (p.name == "checkpoint_dir") p.lab = false;
  s.measured = {
      {"time_ms", "ms", "the whole job, recovery included"},
      {"failure_ms", "ms", "when the failed rank's last op ended"},
      {"lost_steps", "steps", "whole steps done after the checkpoint the job restarts from"},
      {"lost_ms", "ms", "failure time minus the time of that checkpoint"},
      {"lost_gpu_ms", "ms", "GPU time of the lost ops, all ranks"},
      {"recovery_ms", "ms", "failure to the end of the re-shard"},
      {"reshard_bytes", "bytes", "bytes sent to restore the parameters"},
      {"checkpoint_bytes", "bytes", "one checkpoint"},
      {"checkpoints", "", "checkpoint files written"},
      {"ranks_after", "GPUs", "ranks of the job after the recovery"},
  };
  s.check = [](const ScenarioParams& params) {
    const ElasticScenario sc = ElasticFromParams(params);
    CheckElasticParams(sc.params);
    CheckRanksFitTopology("ranks", sc.params.ranks, "rank", sc.topology, LoadScenarioTopology(sc.topology));
    FaultsFromParams(params);
  };
  s.measure = [](const ScenarioParams& params, std::string* summary) {
    const ElasticScenario sc = ElasticFromParams(params);
    CheckElasticParams(sc.params);
    Topology topology = LoadScenarioTopology(sc.topology);
    CheckRanksFitTopology("ranks", sc.params.ranks, "rank", sc.topology, topology);
    const ElasticPlan job = BuildElastic(sc.params);
    const Faults faults = ElasticFaults(params, topology, job);
    const ElasticOutcome o = RunElastic(sc, job, topology, faults);
    if (!o.verdict.correct())
      throw Error("the recovered job's parameters differ from the single-device reference (" +
                      o.verdict.Detail() + "): a bug in the engine, please report it",
                  ErrorKind::kRuntime);
    if (summary != nullptr)
      *summary = "rank " + std::to_string(sc.params.fail_rank) + " failed in step " +
                 std::to_string(sc.params.fail_step) + ": " + std::to_string(job.lost_steps) +
                 " steps lost, restart from the checkpoint after step " + std::to_string(job.restart_from) +
                 " on " + std::to_string(job.ranks_after.size()) + " ranks; recovery " +
                 FormatTime(o.recovery_ns) + ", re-shard " + FormatBytes(job.reshard_bytes) + "; " +
                 o.verdict.Text();
    return std::map<std::string, double>{
        {"time_ms", o.job_ns / 1e6},
        {"failure_ms", o.failure_ns / 1e6},
        {"lost_steps", static_cast<double>(job.lost_steps)},
        {"lost_ms", o.lost_ns / 1e6},
        {"lost_gpu_ms", o.lost_gpu_ns / 1e6},
        {"recovery_ms", o.recovery_ns / 1e6},
        {"reshard_bytes", static_cast<double>(job.reshard_bytes)},
        {"checkpoint_bytes", static_cast<double>(job.checkpoint_bytes)},
        {"checkpoints", static_cast<double>(o.checkpoint_files.size())},
        {"ranks_after", static_cast<double>(job.ranks_after.size())},
    };
  };
  RegisterScenario(std::move(s));
}

}  // namespace shardlab
