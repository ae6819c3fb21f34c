// `shardlab-cli run inference`: a small decoder served on tp × pp ×
// replicas GPUs. Runs the first requests for real (prefill, decode with a
// KV cache) and checks every logit against the single-device decoder, then
// simulates serving every request (timing only) under a batching policy,
// or all three side by side on the same arrivals. Prints the per-request
// latencies (TTFT, TPOT, end to end, p50/p99), tokens/s, GPU utilisation,
// the KV cache, and the cost model's decode and prefill steps beside the
// formulas they come from.
#include <iomanip>
#include <iostream>
#include <memory>

#include "app/cli/scenario_run.h"
#include "app/cli/zero_args.h"
#include "engine/core/units.h"
#include "engine/scenarios/inference_scenario.h"

namespace shardlab::cli {
namespace {

std::string Fixed(double value, int digits) { return FormatFixed(value, digits); }

std::string Pad(const std::string& text, std::size_t width) { return PadColumns(text, width); }

std::string Ms(double ns) { return Fixed(ns / 1e6, 2); }

std::string CheckText(const InferenceCheck& c) {
  return LayerCheckText(c.verdict, c.checked, c.not_checked_reason,
                        "every logit of every position within its bound of the single-device decoder", "");
}

void PrintText(std::ostream& out, const InferenceRun& run) {
  const InferenceScenario& s = run.scenario;
  const DecoderConfig& m = s.model;
  const StepCostModel& cost = run.cost;
  const DecoderConfig& sm = run.served;
  out << "# ShardLab: inference on tp " << s.layout.tp << " x pp " << s.layout.pp << " x " << s.layout.replicas
      << " replicas = " << s.layout.ranks() << " GPUs of " << s.topology << "\n";
  out << "#   served (timing): " << s.serve_model << ", " << sm.layers << " layers, H " << sm.hidden << ", " << sm.heads
      << " heads, F " << sm.ffn_width() << ", V " << sm.vocab << ", " << DTypeName(cost.dtype) << "\n";
  out << "#   real run: a " << m.layers << "-layer decoder, H " << m.hidden << ", " << m.heads << " heads, F "
      << m.ffn_width() << ", V " << m.vocab << ", " << DTypeName(s.dtype) << ", the same layout\n";
  out << "#   " << run.arrivals.size() << " requests"
      << (s.requests_file.empty() ? " at " + Fixed(s.arrivals.rate_per_s, 1) + "/s (Poisson, seed " +
                                        std::to_string(s.seed) + "), prompt mean " + std::to_string(s.arrivals.prompt_mean) +
                                        ", output mean " + std::to_string(s.arrivals.output_mean) + " tokens"
                                  : " from " + s.requests_file)
      << "; max batch " << s.batcher.max_batch << " per replica\n";
  out << "#\n# Real run: prefill then decode with a KV cache, on the simulator\n";
  if (run.check.checked) {
    out << "#   " << run.check.requests << " requests of the trace (" << run.check.passes << " passes: prefill + decode steps)\n";
    out << "#   all-reduces " << run.check.allreduces << " (hand count 2 per layer per pass: "
        << run.check.allreduces_expected << "), each T x H x " << DTypeBytes(s.dtype)
        << " B: " << (run.check.allreduce_bytes_ok ? "yes" : "NO") << "\n";
    if (run.check.decode_allreduce_ns > 0)
      out << "#   a decode all-reduce (T = " << run.check.decode_allreduce_tokens << "): "
          << FormatTime(run.check.decode_allreduce_ns) << " simulated, ring formula 2(n-1)/n M/B + 2(n-1) alpha = "
          << FormatTime(run.check.decode_allreduce_formula_ns) << "\n";
    out << "#   KV cache of the real run on GPU 0: " << FormatBytes(run.check.kv_cache_bytes_per_gpu)
        << (run.check.kv_cache_tracked_bytes >= 0 ? ", memory tracker " + FormatBytes(run.check.kv_cache_tracked_bytes) : std::string())
        << " (2 x "
        << (m.layers + s.layout.pp - 1) / s.layout.pp << " layers x requests x " << m.max_context << " positions x H/tp x "
        << DTypeBytes(s.dtype) << " B)\n";
  }
  out << "#   Result: " << CheckText(run.check) << "\n";
  out << "#\n# Cost model per step (" << Fixed(cost.tflops, 1) << " TFLOP/s, " << Fixed(cost.memory_gbps, 0)
      << " GB/s HBM; ring alpha " << FormatTime(cost.ring_alpha_ns) << ", B " << Fixed(cost.ring_gbps, 0) << " GB/s)\n"
      << "#   step         compute     memory  all-reduces      total\n";
  auto row = [&](const char* name, const StepCostModel::Parts& p) {
    out << "#   " << name << Pad(FormatTime(p.compute_ns), 11) << Pad(FormatTime(p.memory_ns), 11)
        << Pad(FormatTime(p.allreduce_ns), 13) << Pad(FormatTime(p.total_ns()), 11) << "\n";
  };
  row("decode x1  ", run.decode_1);
  row(("decode x" + std::to_string(s.batcher.max_batch) + std::string(s.batcher.max_batch < 10 ? "  " : " ")).c_str(),
      run.decode_batch);
  row("prefill x1 ", run.prefill_1);
  out << "#   decode is bound by " << (run.decode_1.allreduce_ns > std::max(run.decode_1.compute_ns, run.decode_1.memory_ns)
                                           ? "the all-reduces' latency (2L x 2(tp-1) alpha)"
                                           : run.decode_1.memory_ns > run.decode_1.compute_ns ? "reading the weights (memory)"
                                                                                             : "FLOPs")
      << "; prefill by "
      << (run.prefill_1.allreduce_ns > std::max(run.prefill_1.compute_ns, run.prefill_1.memory_ns) ? "the all-reduces"
          : run.prefill_1.compute_ns > run.prefill_1.memory_ns                                   ? "FLOPs"
                                                                                                  : "memory")
      << "\n";
  if (s.int8_weights) {
    const Int8Report& q = run.int8;
    out << "#   int8 weights: " << FormatBytes(q.weight_bytes_fp) << " -> " << FormatBytes(q.weight_bytes_int8)
        << " per GPU; decode x1 " << FormatTime(q.decode_fp_ns) << " -> " << FormatTime(q.decode_int8_ns) << " ("
        << Fixed(q.speedup, 2) << "x, the bytes read per step)\n";
    if (q.accuracy_checked)
      out << "#   int8 accuracy (small decoder, " << q.positions << " positions): max |logit error| "
          << Fixed(100 * q.logit_error, 2) << "% of the largest logit, top-1 token kept at "
          << Fixed(100 * q.top1_agreement, 1) << "% of positions\n";
  }
  out << "#   KV cache: " << FormatBytes(run.kv_cache_bytes) << " per GPU = " << run.kv_blocks << " blocks of "
      << s.kv_block_tokens << " tokens (" << FormatBytes(run.kv_bytes_per_block) << " each)\n";
  out << "#\n# Serving (timing only)\n"
      << "#  policy        tokens/s   TTFT p50   TTFT p99   TPOT p50    E2E p50    E2E p99   busy  useful   KV peak  frag\n"
      << "#                                (ms)       (ms)       (ms)       (ms)       (ms)                 per GPU\n";
  for (const ServingResult& r : run.results) {
    out << "#  " << std::left << std::setw(11) << BatchingPolicyName(r.policy) << std::right
        << Pad(Fixed(r.tokens_per_s, 1), 11) << Pad(Ms(r.ttft_ns.p50), 11) << Pad(Ms(r.ttft_ns.p99), 11)
        << Pad(Ms(r.tpot_ns.p50), 11) << Pad(Ms(r.e2e_ns.p50), 11) << Pad(Ms(r.e2e_ns.p99), 11)
        << Pad(Fixed(100 * r.busy, 0) + "%", 7) << Pad(Fixed(100 * r.useful, 0) + "%", 8)
        << Pad(FormatBytes(r.peak_kv_blocks * run.kv_bytes_per_block), 10)
        << Pad(Fixed(100 * (1 - r.kv_occupancy), 0) + "%", 6) << "\n";
  }
  if (run.kv_peak_unshared_blocks >= 0) {
    const ServingResult& last = run.results.back();
    out << "#   prefix sharing (" << s.arrivals.prefix_tokens << " tokens, " << s.arrivals.prefix_tokens / s.kv_block_tokens
        << " full blocks shared): " << BatchingPolicyName(last.policy) << "'s KV peak "
        << FormatBytes(last.peak_kv_blocks * run.kv_bytes_per_block) << " per GPU, "
        << FormatBytes(run.kv_peak_unshared_blocks * run.kv_bytes_per_block) << " if each request held its own copy\n";
  }
  out << "#   useful: real tokens / tokens computed (static and dynamic pad to the batch's longest prompt and output)\n";
  out << "#   frag: KV positions allocated but empty at the peak (the last block of each request)\n";
}

void WriteJson(JsonWriter& w, const InferenceRun& run) {
  const InferenceScenario& s = run.scenario;
  w.Field("tp", s.layout.tp);
  w.Field("pp", s.layout.pp);
  w.Field("replicas", s.layout.replicas);
  w.Field("gpus", s.layout.ranks());
  w.Field("layers", s.model.layers);
  w.Field("hidden", s.model.hidden);
  w.Field("heads", s.model.heads);
  w.Field("model", s.serve_model);
  w.Field("topology", s.topology);
  w.Field("requests", static_cast<std::int64_t>(run.arrivals.size()));
  w.Field("max_batch", s.batcher.max_batch);
  w.Field("kv_blocks_per_replica", run.kv_blocks);
  w.Field("kv_bytes_per_block", run.kv_bytes_per_block);
  w.Field("decode_step_us", static_cast<double>(run.decode_1.total_ns()) / 1e3);
  w.Field("decode_allreduce_us", static_cast<double>(run.cost.AllReduceNs(1)) / 1e3);
  w.Field("prefill_step_us", static_cast<double>(run.prefill_1.total_ns()) / 1e3);
  if (s.int8_weights) {
    w.Field("int8_weight_bytes_fp", run.int8.weight_bytes_fp);
    w.Field("int8_weight_bytes", run.int8.weight_bytes_int8);
    w.Field("int8_decode_fp_us", static_cast<double>(run.int8.decode_fp_ns) / 1e3);
    w.Field("int8_decode_us", static_cast<double>(run.int8.decode_int8_ns) / 1e3);
    w.Field("int8_decode_speedup", run.int8.speedup);
    if (run.int8.accuracy_checked) {
      w.Field("int8_logit_error", run.int8.logit_error);
      w.Field("int8_top1_agreement", run.int8.top1_agreement);
    }
  }
  w.Field("checked", run.check.checked);
  if (run.check.checked) {
    w.Field("correct", run.check.verdict.correct());
    w.Field("check_requests", run.check.requests);
    w.Field("allreduces", run.check.allreduces);
    w.Field("allreduces_expected", run.check.allreduces_expected);
    w.Field("allreduce_bytes_ok", run.check.allreduce_bytes_ok);
    w.Field("kv_cache_plan_bytes", run.check.kv_cache_bytes_per_gpu);
    w.Field("kv_cache_tracked_bytes", run.check.kv_cache_tracked_bytes);
  } else {
    w.Field("not_checked_reason", run.check.not_checked_reason);
  }
  if (run.kv_peak_unshared_blocks >= 0)
    w.Field("kv_peak_unshared_bytes_per_gpu", run.kv_peak_unshared_blocks * run.kv_bytes_per_block);
  w.Key("policies");
  w.BeginArray();
  for (const ServingResult& r : run.results) {
    w.BeginObject();
    w.Field("policy", BatchingPolicyName(r.policy));
    w.Field("tokens_per_s", r.tokens_per_s);
    w.Field("ttft_p50_ms", r.ttft_ns.p50 / 1e6);
    w.Field("ttft_p99_ms", r.ttft_ns.p99 / 1e6);
    w.Field("tpot_p50_ms", r.tpot_ns.p50 / 1e6);
    w.Field("tpot_p99_ms", r.tpot_ns.p99 / 1e6);
    w.Field("e2e_p50_ms", r.e2e_ns.p50 / 1e6);
    w.Field("e2e_p99_ms", r.e2e_ns.p99 / 1e6);
    w.Field("makespan_ms", static_cast<double>(r.makespan_ns) / 1e6);
    w.Field("busy", r.busy);
    w.Field("useful", r.useful);
    w.Field("steps", r.step_count);
    w.Field("padded_tokens", r.padded_tokens);
    w.Field("kv_peak_bytes_per_gpu", r.peak_kv_blocks * run.kv_bytes_per_block);
    w.Field("kv_fragmentation", 1 - r.kv_occupancy);
    w.Field("idle_slot_steps", r.idle_slot_steps);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

void InferenceRenderers(RunCommand& c) {
  c.measure = [](const ParsedArgs&, const ScenarioParams& params) {
    auto run = std::make_shared<InferenceRun>(RunInference(InferenceFromParams(params)));
    MeasuredRun out;
    out.verdict = run->check.checked ? run->check.verdict : NotChecked(run->check.not_checked_reason);
    out.plan = &run->real_plan;
    out.events = run->real_events;
    out.topology = run->scenario.topology;
    out.detail = std::move(run);
    return out;
  };
  c.measured_text = [](std::ostream& out, const MeasuredRun& run) { PrintText(out, run.Detail<InferenceRun>()); };
  c.measured_json = [](JsonWriter& w, const MeasuredRun& run) { WriteJson(w, run.Detail<InferenceRun>()); };
}

}  // namespace shardlab::cli
