#include "engine/scenarios/inference_scenario.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/model/model_presets.h"
#include "engine/run/executor.h"
#include "engine/run/memory_tracker.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/verify/bounds.h"
#include "engine/verify/decoder_bounds.h"

namespace shardlab {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

// The real run holds every rank's buffers on the host and its attention is
// one kernel per row and head: keep it small.
constexpr std::int64_t kMaxRealParameters = std::int64_t{1} << 24;
constexpr int kMaxRealTokens = 512;

DecoderConfig ServedModel(const InferenceScenario& s) {
  if (s.serve_model == "small") return s.model;
  const TransformerShape& shape = FindModelPreset(s.serve_model);
  DecoderConfig m;
  m.layers = shape.layers;
  m.hidden = shape.hidden;
  m.heads = shape.heads;
  m.ffn = shape.ffn_hidden;
  m.vocab = shape.vocab;
  m.max_context = shape.seq_len;
  return m;
}

StepCostModel MakeCost(const InferenceScenario& s, const DecoderConfig& served, DType dtype, const Topology& topology) {
  StepCostModel m;
  m.model = served;
  m.tp = s.layout.tp;
  m.pp = s.layout.pp;
  m.dtype = dtype;
  m.weight_bytes_per_param = DTypeBytes(dtype);
  const DeviceSpec& dev = topology.nodes[static_cast<std::size_t>(topology.gpus.front())].device;
  m.tflops = dtype == DType::kF32 ? dev.fp32_tflops : dev.fp16_tflops;
  m.memory_gbps = dev.memory_gbps;
  // α and B of the ring the tp ranks of replica 0 form (GPUs 0..tp-1), as the tp scenario.
  const int ring = std::max(2, s.layout.tp);
  CollectiveScenario cs;
  cs.kind = CollectiveKind::kAllReduce;
  cs.algo = CollectiveAlgo::kRing;
  cs.ranks = ring;
  cs.dtype = dtype;
  cs.size_bytes = 1 << 20;
  cs.topology = s.topology;
  cs.ring_order = "rank";
  cs.timing_only = true;
  const auto checked = CheckCollectiveScenario(cs, topology);
  m.ring_alpha_ns = checked->alpha_ns;
  m.ring_gbps = checked->bandwidth_gbps;
  m.hop_alpha_ns = checked->alpha_ns;
  m.hop_gbps = checked->bandwidth_gbps;
  return m;
}

std::vector<ServedRequest> RealRequests(const InferenceRun& run, int count) {
  std::vector<ServedRequest> out;
  const DecoderConfig& m = run.scenario.model;
  for (int i = 0; i < count; ++i) {
    const RequestArrival& a = run.arrivals[static_cast<std::size_t>(i)];
    const int fed = std::min(a.prompt + a.output - 1, m.max_context);
    ServedRequest q;
    q.prompt = std::min(a.prompt, fed);
    q.tokens = DecoderTokens(run.scenario.seed, i, fed, m.vocab);
    out.push_back(q);
  }
  return out;
}

void RealRun(InferenceRun& run, const Topology& topology) {
  const InferenceScenario& s = run.scenario;
  InferenceCheck& c = run.check;
  if (s.timing_only) {
    c.not_checked_reason = "timing only: the decoder was not run";
    c.verdict = NotChecked(c.not_checked_reason);
    return;
  }
  int count = std::min<int>(s.check_requests, static_cast<int>(run.arrivals.size()));
  DecodePlanConfig pc;
  pc.model = s.model;
  pc.layout = s.layout;
  pc.microbatches = s.microbatches;
  pc.dtype = s.dtype;
  pc.requests = RealRequests(run, count);
  std::int64_t tokens = 0;
  for (const ServedRequest& q : pc.requests) tokens += static_cast<std::int64_t>(q.tokens.size());
  if (s.model.parameters() > kMaxRealParameters || tokens > kMaxRealTokens) {
    c.not_checked_reason = "the model or the checked requests are too large to run for real on the host (at most " +
                           std::to_string(kMaxRealParameters) + " parameters and " + std::to_string(kMaxRealTokens) +
                           " tokens); use --timing-only or fewer --check-requests";
    c.verdict = NotChecked(c.not_checked_reason);
    return;
  }
  const DecodePlan plan = BuildDecodePlan(pc);
  c.requests = count;
  c.passes = plan.passes;
  c.kv_cache_bytes_per_gpu = plan.kv_cache_bytes.empty() ? 0 : plan.kv_cache_bytes.front();
  RunOptions options;
  options.seed = s.seed;
  Executor ex(CreateBackend("sim"), plan.plan, topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  if (ex.state() != ExecutorState::kDone) throw Error("the served decoder failed on the simulator: " + ex.error());
  VerdictJudge judge;
  for (const DecodeLogitsBuffer& b : plan.logits) {
    const DecoderLogits ref = DecoderReferenceLogits(s.model, s.seed, pc.requests[static_cast<std::size_t>(b.request)].tokens,
                                                     UnitRoundoff(DType::kF32));
    judge.Compare("logits of request " + std::to_string(b.request) + " (rank " + std::to_string(b.rank) + ")",
                  ex.backend().BufferData(b.buffer), ref.value, ref.bound);
  }
  c.verdict = judge.Finish();
  c.checked = true;
  if (s.int8_weights) {
    // The accuracy cost: the same requests with int8 matrices, against fp (both in double).
    double worst = 0, largest = 0;
    int agree = 0, positions = 0;
    for (const ServedRequest& q : pc.requests) {
      const DecoderLogits fp = DecoderReferenceLogits(s.model, s.seed, q.tokens, 0);
      const DecoderLogits i8 = DecoderReferenceLogits(s.model, s.seed, q.tokens, 0, true);
      for (std::int64_t r = 0; r < fp.rows; ++r) {
        std::int64_t best_fp = 0, best_i8 = 0;
        for (std::int64_t v = 0; v < fp.cols; ++v) {
          const std::size_t at = static_cast<std::size_t>(r * fp.cols + v);
          worst = std::max(worst, std::abs(i8.value[at] - fp.value[at]));
          largest = std::max(largest, std::abs(fp.value[at]));
          if (fp.value[at] > fp.value[static_cast<std::size_t>(r * fp.cols + best_fp)]) best_fp = v;
          if (i8.value[at] > i8.value[static_cast<std::size_t>(r * fp.cols + best_i8)]) best_i8 = v;
        }
        agree += best_fp == best_i8;
        ++positions;
      }
    }
    run.int8.accuracy_checked = true;
    run.int8.logit_error = largest > 0 ? worst / largest : 0;
    run.int8.positions = positions;
    run.int8.top1_agreement = positions > 0 ? static_cast<double>(agree) / positions : 0;
  }
  // The hand count: every pass of every micro-batch, 2 per layer (tp > 1).
  std::map<std::tuple<int, int, int>, int> passes;  // (replica, mb, pass)
  for (std::size_t i = 0; i < pc.requests.size(); ++i)
    for (int p = 0; p <= pc.requests[i].decode_steps(); ++p) passes[{plan.replica_of[i], plan.microbatch_of[i], p}] = 1;
  c.allreduces_expected = s.layout.tp > 1 ? static_cast<int>(passes.size()) * 2 * s.model.layers : 0;
  c.allreduces = static_cast<int>(plan.allreduces.size());
  c.allreduce_bytes_ok = true;
  for (const DecodeAllReduce& a : plan.allreduces)
    c.allreduce_bytes_ok = c.allreduce_bytes_ok && a.bytes == a.tokens * s.model.hidden * DTypeBytes(s.dtype);
  // A decode all-reduce's span from the events beside the ring formula.
  std::map<int, std::pair<TimeNs, TimeNs>> span;
  for (const Event& e : sink.events) {
    const Op& op = ex.plan().ops[static_cast<std::size_t>(e.op)];
    if (op.collective_seq < 0) continue;
    auto [it, added] = span.emplace(op.collective_seq, std::make_pair(e.start_ns, e.end_ns));
    if (!added) {
      it->second.first = std::min(it->second.first, e.start_ns);
      it->second.second = std::max(it->second.second, e.end_ns);
    }
  }
  double sum = 0;
  int n = 0;
  for (const DecodeAllReduce& a : plan.allreduces) {
    if (a.pass == 0 || span.count(a.seq) == 0) continue;
    if (c.decode_allreduce_tokens == 0) c.decode_allreduce_tokens = a.tokens;
    if (a.tokens != c.decode_allreduce_tokens) continue;
    sum += static_cast<double>(span[a.seq].second - span[a.seq].first);
    ++n;
  }
  if (n > 0) {
    c.decode_allreduce_ns = static_cast<TimeNs>(sum / n);
    c.decode_allreduce_formula_ns = run.cost.AllReduceNs(c.decode_allreduce_tokens);
  }
  if (const MemoryUsage* memory = ex.backend().memory(); memory != nullptr && !memory->ranks.empty())
    c.kv_cache_tracked_bytes = memory->ranks.front().peak[static_cast<int>(MemoryCategory::kActivations)];
  else
    c.kv_cache_tracked_bytes = -1;
  run.real_plan = ex.plan();
  run.real_events = std::move(sink.events);
}

}  // namespace

const ServingResult* InferenceRun::Find(BatchingPolicy policy) const {
  for (const ServingResult& r : results)
    if (r.policy == policy) return &r;
  return nullptr;
}

InferenceRun RunInference(const InferenceScenario& s) {
  InferenceRun run;
  run.scenario = s;
  // The small decoder is what the real run computes (and what a "small" serving run times).
  if (!s.timing_only || s.serve_model == "small") CheckServingLayout(s.layout, s.model);
  const Topology topology = LoadScenarioTopology(s.topology);
  CheckRanksFitTopology("tp", s.layout.ranks(), "rank (tp x pp x replicas)", s.topology, topology);
  if (s.dtype != DType::kF32 && !s.timing_only)
    Fail(std::string("dtype: ") + (s.dtype == DType::kBF16 ? "bf16" : "fp16") +
         " is timing-only here (the host computes in float32): add --timing-only");
  if (s.check_requests < 1) Fail("check-requests: " + std::to_string(s.check_requests) + " must be at least 1");
  run.arrivals = s.requests_file.empty() ? GenerateArrivals(s.arrivals)
                                         : LoadRequestFile(s.requests_file, s.arrivals.prefix_tokens);
  run.served = ServedModel(s);
  if (s.serve_model != "small") {
    try {
      CheckServingLayout(s.layout, run.served);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " (model " + s.serve_model + ")", ErrorKind::kInvalidInput);
    }
  }
  run.cost = MakeCost(s, run.served, s.serve_model == "small" ? s.dtype : DType::kF16, topology);
  if (s.int8_weights) {
    StepWork one;
    one.decode_rows = 1;
    one.decode_context = s.arrivals.prompt_mean;
    run.int8.weight_bytes_fp = run.cost.WeightBytesPerGpu();
    run.int8.decode_fp_ns = run.cost.StepNs(one);
    // One byte a weight, and an fp16 scale per output channel (about 2/H more).
    run.cost.weight_bytes_per_param = 1.0 + 2.0 / run.served.hidden;
    run.int8.weight_bytes_int8 = run.cost.WeightBytesPerGpu();
    run.int8.decode_int8_ns = run.cost.StepNs(one);
    run.int8.speedup = run.int8.decode_int8_ns > 0 ? static_cast<double>(run.int8.decode_fp_ns) / run.int8.decode_int8_ns : 0;
  }
  if (s.kv_block_tokens < 1) Fail("kv-block: " + std::to_string(s.kv_block_tokens) + " must be at least 1");
  run.kv_bytes_per_block = run.cost.KvBytesPerToken() * s.kv_block_tokens;
  Bytes kv = s.kv_cache_bytes;
  if (kv == 0) {
    const DeviceSpec& dev = topology.nodes[static_cast<std::size_t>(topology.gpus.front())].device;
    kv = std::max<Bytes>(0, static_cast<Bytes>(0.9 * static_cast<double>(dev.memory_bytes)) - run.cost.WeightBytesPerGpu());
    if (kv == 0)
      Fail("kv-cache: the weights (" + FormatBytes(run.cost.WeightBytesPerGpu()) + " per GPU) leave no room for a KV cache in " +
           FormatBytes(dev.memory_bytes) + "; use more tp or pp");
  }
  run.kv_cache_bytes = kv;
  run.kv_blocks = run.kv_bytes_per_block > 0 ? static_cast<std::int64_t>(kv / run.kv_bytes_per_block) : 0;
  if (run.kv_blocks < 1)
    Fail("kv-cache: " + FormatBytes(kv) + " per GPU holds no block of " + std::to_string(s.kv_block_tokens) +
         " tokens (" + FormatBytes(run.kv_bytes_per_block) + " each)");
  ServingConfig sc;
  sc.batcher = s.batcher;
  sc.replicas = s.layout.replicas;
  sc.kv_blocks = run.kv_blocks;
  sc.kv_block_tokens = s.kv_block_tokens;
  sc.record_steps = s.record_steps;
  const StepCostFn cost = [&run](const StepWork& w) { return run.cost.StepNs(w); };
  std::vector<BatchingPolicy> policies{s.batcher.policy};
  if (s.all_policies) policies = {BatchingPolicy::kStatic, BatchingPolicy::kDynamic, BatchingPolicy::kContinuous};
  for (BatchingPolicy p : policies) {
    sc.batcher.policy = p;
    run.results.push_back(SimulateServing(run.arrivals, sc, cost));
  }
  if (std::any_of(run.arrivals.begin(), run.arrivals.end(), [](const RequestArrival& a) { return a.prefix_group >= 0; })) {
    std::vector<RequestArrival> alone = run.arrivals;
    for (RequestArrival& a : alone) a.prefix_group = -1;
    sc.record_steps = false;
    run.kv_peak_unshared_blocks = SimulateServing(alone, sc, cost).peak_kv_blocks;
  }
  StepWork w;
  w.decode_rows = 1;
  w.decode_context = s.arrivals.prompt_mean;
  run.decode_1 = run.cost.Cost(w);
  w.decode_rows = s.batcher.max_batch;
  w.decode_context = std::int64_t{s.batcher.max_batch} * s.arrivals.prompt_mean;
  run.decode_batch = run.cost.Cost(w);
  StepWork p;
  p.prefill_tokens = s.arrivals.prompt_mean;
  p.prefill_pairs = p.prefill_tokens * (p.prefill_tokens + 1) / 2;
  run.prefill_1 = run.cost.Cost(p);
  RealRun(run, topology);
  return run;
}

std::map<std::string, double> InferenceMeasured(const InferenceRun& run) {
  std::map<std::string, double> m;
  const ServingResult& r = run.results.back();
  m["tokens_per_s"] = r.tokens_per_s;
  m["ttft_p50_ms"] = r.ttft_ns.p50 / 1e6;
  m["ttft_p99_ms"] = r.ttft_ns.p99 / 1e6;
  m["tpot_p50_ms"] = r.tpot_ns.p50 / 1e6;
  m["e2e_p50_ms"] = r.e2e_ns.p50 / 1e6;
  m["e2e_p99_ms"] = r.e2e_ns.p99 / 1e6;
  m["busy"] = r.busy;
  m["kv_cache_peak_bytes"] = static_cast<double>(r.peak_kv_blocks * run.kv_bytes_per_block);
  if (run.kv_peak_unshared_blocks >= 0)
    m["kv_cache_peak_unshared_bytes"] = static_cast<double>(run.kv_peak_unshared_blocks * run.kv_bytes_per_block);
  m["decode_step_us"] = static_cast<double>(run.decode_1.total_ns()) / 1e3;
  m["decode_allreduce_us"] = static_cast<double>(run.cost.AllReduceNs(1)) / 1e3;
  m["prefill_step_us"] = static_cast<double>(run.prefill_1.total_ns()) / 1e3;
  if (run.check.checked) {
    m["correct"] = run.check.verdict.correct() ? 1 : 0;
    m["allreduces"] = run.check.allreduces;
    m["kv_cache_plan_bytes"] = static_cast<double>(run.check.kv_cache_bytes_per_gpu);
  }
  if (run.scenario.int8_weights) {
    m["int8_weight_bytes"] = static_cast<double>(run.int8.weight_bytes_int8);
    m["int8_decode_speedup"] = run.int8.speedup;
    if (run.int8.accuracy_checked) {
      m["int8_logit_error"] = run.int8.logit_error;
      m["int8_top1_agreement"] = run.int8.top1_agreement;
    }
  }
  for (const ServingResult& x : run.results) {
    const std::string p = BatchingPolicyName(x.policy);
    m[p + "_tokens_per_s"] = x.tokens_per_s;
    m[p + "_e2e_p50_ms"] = x.e2e_ns.p50 / 1e6;
  }
  return m;
}

InferenceScenario InferenceFromParams(const ScenarioParams& p) {
  InferenceScenario s;
  s.model.layers = static_cast<int>(p.Int("layers"));
  s.model.hidden = static_cast<int>(p.Int("hidden"));
  s.model.heads = static_cast<int>(p.Int("heads"));
  s.model.ffn = static_cast<int>(p.Int("ffn"));
  s.model.vocab = static_cast<int>(p.Int("vocab"));
  s.model.max_context = static_cast<int>(p.Int("max_context"));
  s.layout.tp = static_cast<int>(p.Int("tp"));
  s.layout.pp = static_cast<int>(p.Int("pp"));
  s.layout.replicas = static_cast<int>(p.Int("replicas"));
  s.microbatches = static_cast<int>(p.Int("microbatches"));
  s.arrivals.rate_per_s = p.Number("rate");
  s.arrivals.requests = static_cast<int>(p.Int("requests"));
  s.arrivals.prompt_mean = static_cast<int>(p.Int("prompt_mean"));
  s.arrivals.output_mean = static_cast<int>(p.Int("output_mean"));
  s.arrivals.prefix_tokens = static_cast<int>(p.Int("prefix_tokens"));
  s.requests_file = p.Text("requests_file");
  s.serve_model = p.Text("model");
  const std::string batching = p.Text("batching");
  s.all_policies = batching == "all";
  if (!s.all_policies) s.batcher.policy = ParseBatchingPolicy(batching);
  s.batcher.max_batch = static_cast<int>(p.Int("max_batch"));
  s.batcher.timeout_ns = static_cast<TimeNs>(p.Number("timeout_ms") * 1e6);
  s.kv_cache_bytes = static_cast<Bytes>(p.Size("kv_cache"));
  s.kv_block_tokens = static_cast<int>(p.Int("kv_block"));
  s.dtype = ParamDType(p);
  s.topology = p.Text("topology");
  s.timing_only = p.Bool("timing_only");
  s.check_requests = static_cast<int>(p.Int("check_requests"));
  s.seed = static_cast<std::uint64_t>(p.Int("seed"));
  s.int8_weights = p.Bool("int8");
  return s;
}

Report InferenceReport(const InferenceRun& run) {
  const InferenceScenario& s = run.scenario;
  const DecoderConfig& m = s.model;
  const DecoderConfig& sm = run.served;
  const StepCostModel& cost = run.cost;
  const InferenceCheck& check = run.check;
  Report r;
  ReportBlock& setup = r.Block();
  setup.position = 0;
  auto line = [&setup](std::string text) { setup.rows.push_back({"", std::move(text)}); };
  line("ShardLab: inference on tp " + std::to_string(s.layout.tp) + " x pp " + std::to_string(s.layout.pp) + " x " +
       std::to_string(s.layout.replicas) + " replicas = " + std::to_string(s.layout.ranks()) + " GPUs of " + s.topology);
  line("  served (timing): " + s.serve_model + ", " + std::to_string(sm.layers) + " layers, H " +
       std::to_string(sm.hidden) + ", " + std::to_string(sm.heads) + " heads, F " + std::to_string(sm.ffn_width()) +
       ", V " + std::to_string(sm.vocab) + ", " + DTypeName(cost.dtype));
  line("  real run: a " + std::to_string(m.layers) + "-layer decoder, H " + std::to_string(m.hidden) + ", " +
       std::to_string(m.heads) + " heads, F " + std::to_string(m.ffn_width()) + ", V " + std::to_string(m.vocab) +
       ", " + DTypeName(s.dtype) + ", the same layout");
  line("  " + std::to_string(run.arrivals.size()) + " requests" +
       (s.requests_file.empty() ? " at " + FormatFixed(s.arrivals.rate_per_s, 1) + "/s (Poisson, seed " +
                                      std::to_string(s.seed) + "), prompt mean " + std::to_string(s.arrivals.prompt_mean) +
                                      ", output mean " + std::to_string(s.arrivals.output_mean) + " tokens"
                                : " from " + s.requests_file) +
       "; max batch " + std::to_string(s.batcher.max_batch) + " per replica");
  line("");
  line("Real run: prefill then decode with a KV cache, on the simulator");
  if (check.checked) {
    line("  " + std::to_string(check.requests) + " requests of the trace (" + std::to_string(check.passes) +
         " passes: prefill + decode steps)");
    line("  all-reduces " + std::to_string(check.allreduces) + " (hand count 2 per layer per pass: " +
         std::to_string(check.allreduces_expected) + "), each T x H x " + std::to_string(DTypeBytes(s.dtype)) +
         " B: " + (check.allreduce_bytes_ok ? "yes" : "NO"));
    if (check.decode_allreduce_ns > 0)
      line("  a decode all-reduce (T = " + std::to_string(check.decode_allreduce_tokens) + "): " +
           FormatTime(check.decode_allreduce_ns) + " simulated, ring formula 2(n-1)/n M/B + 2(n-1) alpha = " +
           FormatTime(check.decode_allreduce_formula_ns));
    line("  KV cache of the real run on GPU 0: " + FormatBytes(check.kv_cache_bytes_per_gpu) +
         (check.kv_cache_tracked_bytes >= 0 ? ", memory tracker " + FormatBytes(check.kv_cache_tracked_bytes)
                                            : std::string()) +
         " (2 x " + std::to_string((m.layers + s.layout.pp - 1) / s.layout.pp) + " layers x requests x " +
         std::to_string(m.max_context) + " positions x H/tp x " + std::to_string(DTypeBytes(s.dtype)) + " B)");
  }
  line("  Result: " + LayerCheckText(check.verdict, check.checked, check.not_checked_reason,
                                     "every logit of every position within its bound of the single-device decoder", ""));
  line("");
  ReportBlock& notes = r.Block();
  auto bound = [](const StepCostModel::Parts& p, const char* allreduce, const char* memory, const char* flops) {
    return p.allreduce_ns > std::max(p.compute_ns, p.memory_ns) ? allreduce
           : p.memory_ns > p.compute_ns                          ? memory
                                                                 : flops;
  };
  notes.rows.push_back({"", std::string("  decode is bound by ") +
                                bound(run.decode_1, "the all-reduces' latency (2L x 2(tp-1) alpha)",
                                      "reading the weights (memory)", "FLOPs") +
                                "; prefill by " + bound(run.prefill_1, "the all-reduces", "memory", "FLOPs")});
  const Int8Report& q = run.int8;
  if (s.int8_weights) {
    notes.rows.push_back({"", "  int8 weights: " + FormatBytes(q.weight_bytes_fp) + " -> " +
                                  FormatBytes(q.weight_bytes_int8) + " per GPU; decode x1 " + FormatTime(q.decode_fp_ns) +
                                  " -> " + FormatTime(q.decode_int8_ns) + " (" + FormatFixed(q.speedup, 2) +
                                  "x, the bytes read per step)"});
    if (q.accuracy_checked)
      notes.rows.push_back({"", "  int8 accuracy (small decoder, " + std::to_string(q.positions) +
                                    " positions): max |logit error| " + FormatFixed(100 * q.logit_error, 2) +
                                    "% of the largest logit, top-1 token kept at " +
                                    FormatFixed(100 * q.top1_agreement, 1) + "% of positions"});
  }
  notes.rows.push_back({"", "  KV cache: " + FormatBytes(run.kv_cache_bytes) + " per GPU = " +
                                std::to_string(run.kv_blocks) + " blocks of " + std::to_string(s.kv_block_tokens) +
                                " tokens (" + FormatBytes(run.kv_bytes_per_block) + " each)"});
  notes.rows.push_back({});
  ReportBlock& serving = r.Block();
  serving.position = 2;
  if (run.kv_peak_unshared_blocks >= 0) {
    const ServingResult& last = run.results.back();
    serving.rows.push_back({"", "  prefix sharing (" + std::to_string(s.arrivals.prefix_tokens) + " tokens, " +
                                    std::to_string(s.arrivals.prefix_tokens / s.kv_block_tokens) +
                                    " full blocks shared): " + BatchingPolicyName(last.policy) + "'s KV peak " +
                                    FormatBytes(last.peak_kv_blocks * run.kv_bytes_per_block) + " per GPU, " +
                                    FormatBytes(run.kv_peak_unshared_blocks * run.kv_bytes_per_block) +
                                    " if each request held its own copy"});
  }
  serving.rows.push_back({"", "  useful: real tokens / tokens computed (static and dynamic pad to the batch's "
                              "longest prompt and output)"});
  serving.rows.push_back({"", "  frag: KV positions allocated but empty at the peak (the last block of each request)"});

  ReportValue& f = r.fields;
  f.Add("tp", s.layout.tp).Add("pp", s.layout.pp).Add("replicas", s.layout.replicas).Add("gpus", s.layout.ranks());
  f.Add("layers", m.layers).Add("hidden", m.hidden).Add("heads", m.heads).Add("model", s.serve_model);
  f.Add("topology", s.topology).Add("requests", static_cast<std::int64_t>(run.arrivals.size()));
  f.Add("max_batch", s.batcher.max_batch).Add("kv_blocks_per_replica", run.kv_blocks);
  f.Add("kv_bytes_per_block", run.kv_bytes_per_block);
  f.Add("decode_step_us", static_cast<double>(run.decode_1.total_ns()) / 1e3);
  f.Add("decode_allreduce_us", static_cast<double>(cost.AllReduceNs(1)) / 1e3);
  f.Add("prefill_step_us", static_cast<double>(run.prefill_1.total_ns()) / 1e3);
  if (s.int8_weights) {
    f.Add("int8_weight_bytes_fp", q.weight_bytes_fp).Add("int8_weight_bytes", q.weight_bytes_int8);
    f.Add("int8_decode_fp_us", static_cast<double>(q.decode_fp_ns) / 1e3);
    f.Add("int8_decode_us", static_cast<double>(q.decode_int8_ns) / 1e3).Add("int8_decode_speedup", q.speedup);
    if (q.accuracy_checked) f.Add("int8_logit_error", q.logit_error).Add("int8_top1_agreement", q.top1_agreement);
  }
  f.Add("checked", check.checked);
  if (check.checked) {
    f.Add("correct", check.verdict.correct()).Add("check_requests", check.requests);
    f.Add("allreduces", check.allreduces).Add("allreduces_expected", check.allreduces_expected);
    f.Add("allreduce_bytes_ok", check.allreduce_bytes_ok).Add("kv_cache_plan_bytes", check.kv_cache_bytes_per_gpu);
    f.Add("kv_cache_tracked_bytes", check.kv_cache_tracked_bytes);
  } else {
    f.Add("not_checked_reason", check.not_checked_reason);
  }
  if (run.kv_peak_unshared_blocks >= 0)
    f.Add("kv_peak_unshared_bytes_per_gpu", run.kv_peak_unshared_blocks * run.kv_bytes_per_block);
  ReportValue policies = ReportValue::List();
  for (const ServingResult& p : run.results) {
    ReportValue v = ReportValue::Object();
    v.Add("policy", BatchingPolicyName(p.policy)).Add("tokens_per_s", p.tokens_per_s);
    v.Add("ttft_p50_ms", p.ttft_ns.p50 / 1e6).Add("ttft_p99_ms", p.ttft_ns.p99 / 1e6);
    v.Add("tpot_p50_ms", p.tpot_ns.p50 / 1e6).Add("tpot_p99_ms", p.tpot_ns.p99 / 1e6);
    v.Add("e2e_p50_ms", p.e2e_ns.p50 / 1e6).Add("e2e_p99_ms", p.e2e_ns.p99 / 1e6);
    v.Add("makespan_ms", static_cast<double>(p.makespan_ns) / 1e6).Add("busy", p.busy).Add("useful", p.useful);
    v.Add("steps", p.step_count).Add("padded_tokens", p.padded_tokens);
    v.Add("kv_peak_bytes_per_gpu", p.peak_kv_blocks * run.kv_bytes_per_block);
    v.Add("kv_fragmentation", 1 - p.kv_occupancy).Add("idle_slot_steps", p.idle_slot_steps);
    policies.Push(std::move(v));
  }
  f.Add("policies", std::move(policies));
  return r;
}

void RegisterScenario_inference_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "inference";
  s.title = "Inference serving";
  s.summary = "serve a small decoder on tp x pp x replicas GPUs: prefill, decode with a KV cache, batching policies";
  s.params = {
      Param("tp", T::kInteger, "4", "tensor-parallel GPUs per replica (must divide the heads)").Range(1, 4096).Unit("GPUs"),
      Param("pp", T::kInteger, "1", "pipeline stages per replica (at most the layers)").Range(1, 4096).Unit("stages"),
      Param("replicas", T::kInteger, "1", "model replicas behind a round-robin router").Range(1, 4096),
      Param("microbatches", T::kInteger, "1", "micro-batches of requests per replica in the real run (pp > 1)").Range(1, 4096),
      Param("batching", T::kChoice, "continuous", "static, dynamic, continuous, or all (side by side on the same arrivals)")
          .Choices({"static", "dynamic", "continuous", "all"}).Noun("policy"),
      Param("max_batch", T::kInteger, "8", "slots per replica: the most requests in one batch").Range(1, 65536),
      Param("timeout_ms", T::kNumber, "5", "dynamic batching: the longest the oldest request waits for a full batch").Range(0, 1e9).Unit("ms"),
      Param("rate", T::kNumber, "50", "Poisson arrivals per second (above 0)").Unit("requests/s").ValueName("R"),
      Param("requests", T::kInteger, "200", "requests to serve").Range(1, 10000000),
      Param("prompt_mean", T::kInteger, "32", "prompt tokens, uniform in [mean/2, 3 mean/2]").Range(1, 1000000).Unit("tokens"),
      Param("output_mean", T::kInteger, "32", "output tokens, uniform in [mean/2, 3 mean/2]").Range(1, 1000000).Unit("tokens"),
      Param("prefix_tokens", T::kInteger, "0", "a prompt prefix every request shares (its full KV blocks stored once)").Range(0, 1000000).Unit("tokens"),
      Param("requests_file", T::kText, "", "a request file (arrival_ms prompt output [prefix] per line) instead of the arrivals").ValueName("FILE"),
      Param("model", T::kChoice, "llama-7b-ish",
            "what the serving simulation times: small (the decoder below) or a model preset, in fp16")
          .Choices({"small", "gpt3-1.3b", "llama-7b-ish", "gpt3-13b", "gpt3-175b"}),
      Param("layers", T::kInteger, "2", "the small decoder's layers L (the real run)").Range(1, 1024),
      Param("hidden", T::kInteger, "64", "hidden size H").Range(1, 65536),
      Param("heads", T::kInteger, "4", "attention heads (a multiple of tp)").Range(1, 65536),
      Param("ffn", T::kInteger, "0", "MLP width F (0: 4H)").Range(0, 1 << 20),
      Param("vocab", T::kInteger, "128", "vocabulary V").Range(2, 1 << 20),
      Param("max_context", T::kInteger, "512", "positions per request the real run's KV cache holds").Range(1, 1 << 20).Unit("tokens"),
      Param("kv_cache", T::kSize, "0", "KV-cache memory per GPU, in paged blocks (0: 90% of the GPU less the weights)").Unit("bytes"),
      Param("kv_block", T::kInteger, "16", "tokens per KV-cache block").Range(1, 65536).Unit("tokens"),
      DTypeParam("the small decoder's element type: fp32 (the real run), fp16 or bf16 (timing only)"),
      TopologyParam("a topology preset or file; replica r's rank (s, t) on GPU (r pp + s) tp + t"),
      TimingOnlyParam("skip the real run of the decoder: the serving simulation only"),
      Param("int8", T::kBool, "false",
            "the served model's matrices in int8 with per-channel scales: memory, decode speed-up, accuracy"),
      Param("check_requests", T::kInteger, "4", "requests of the trace the real run serves and checks").Range(1, 64),
      Param("seed", T::kInteger, "1", "seed of the arrivals, the weights and the token ids").Range(0, 999999999),
  };
  s.measured = {
      {"tokens_per_s", "tokens/s", "output tokens over the makespan (the chosen policy; continuous with 'all')"},
      {"ttft_p50_ms", "ms", "time to first token, median"},
      {"ttft_p99_ms", "ms", "time to first token, 99th percentile"},
      {"tpot_p50_ms", "ms", "time per output token after the first, median"},
      {"e2e_p50_ms", "ms", "end-to-end latency, median"},
      {"e2e_p99_ms", "ms", "end-to-end latency, 99th percentile"},
      {"busy", "", "fraction of the makespan the GPUs run steps"},
      {"kv_cache_peak_bytes", "bytes", "KV cache per GPU at the busiest moment (paged blocks)"},
      {"kv_cache_peak_unshared_bytes", "bytes", "the same peak if every request held the shared prefix itself (prefix_tokens > 0)"},
      {"decode_step_us", "us", "one decode token at batch 1 (cost model)"},
      {"decode_allreduce_us", "us", "one decode all-reduce of 1 x H x dtype bytes (ring formula)"},
      {"prefill_step_us", "us", "the prefill of one prompt of prompt_mean tokens (cost model)"},
      {"correct", "", "1 when every logit of the real run is within its bound"},
      {"allreduces", "", "all-reduces in the real run's plan"},
      {"kv_cache_plan_bytes", "bytes", "the real run's K and V buffers on GPU 0"},
      {"int8_weight_bytes", "bytes", "the served model's weights per GPU in int8 (int8 = true)"},
      {"int8_decode_speedup", "", "decode step fp / int8 at batch 1 (cost model; int8 = true)"},
      {"int8_logit_error", "", "max |int8 - fp| over max |fp| of the real run's logits (int8 = true)"},
      {"int8_top1_agreement", "", "share of positions whose top token int8 keeps (int8 = true)"},
      {"static_tokens_per_s", "tokens/s", "static batching's throughput (batching static or all)"},
      {"static_e2e_p50_ms", "ms", "static batching's median end-to-end latency"},
      {"dynamic_tokens_per_s", "tokens/s", "dynamic batching's throughput (batching dynamic or all)"},
      {"dynamic_e2e_p50_ms", "ms", "dynamic batching's median end-to-end latency"},
      {"continuous_tokens_per_s", "tokens/s", "continuous batching's throughput (batching continuous or all)"},
      {"continuous_e2e_p50_ms", "ms", "continuous batching's median end-to-end latency"},
  };
  s.check = [](const ScenarioParams& p) {
    const InferenceScenario sc = InferenceFromParams(p);
    CheckServingLayout(sc.layout, sc.model);
    CheckArrivalSpec(sc.arrivals);
  };
  s.measure = [](const ScenarioParams& p, std::string* summary) {
    InferenceScenario sc = InferenceFromParams(p);
    const InferenceRun run = RunInference(sc);
    if (run.check.checked && !run.check.verdict.correct())
      throw Error("inference: the served decoder's logits are WRONG: " + run.check.verdict.Detail(), ErrorKind::kRuntime);
    if (summary != nullptr)
      *summary = "tp " + std::to_string(sc.layout.tp) + " x pp " + std::to_string(sc.layout.pp) + " x " +
                 std::to_string(sc.layout.replicas) + " replicas, " + std::to_string(run.arrivals.size()) + " requests, " +
                 (sc.all_policies ? std::string("all policies") : BatchingPolicyName(sc.batcher.policy));
    return InferenceMeasured(run);
  };
  s.panels = {"inference_metrics", "serving"};
  RegisterScenario(std::move(s));
}

}  // namespace shardlab
