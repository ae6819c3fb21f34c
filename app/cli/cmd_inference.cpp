// `shardlab-cli run inference`'s tables: the cost model's decode and prefill
// steps, and the serving policies' latencies (TTFT, TPOT, end to end,
// p50/p99), tokens/s, utilisation and KV cache. The setup, the real run's
// check and the notes around them are the report's (InferenceReport).
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

/// The cost model's table and the serving table, the report's rows around them.
void PrintText(std::ostream& out, const MeasuredRun& measured) {
  const InferenceRun& run = measured.Detail<InferenceRun>();
  const InferenceScenario& s = run.scenario;
  const StepCostModel& cost = run.cost;
  PrintReportRows(out, measured.report, 0);
  out << "# Cost model per step (" << Fixed(cost.tflops, 1) << " TFLOP/s, " << Fixed(cost.memory_gbps, 0)
      << " GB/s HBM; ring alpha " << FormatTime(cost.ring_alpha_ns) << ", B " << Fixed(cost.ring_gbps, 0) << " GB/s)\n"
      << "#   step         compute     memory  all-reduces      total\n";
  auto row = [&](const std::string& name, const StepCostModel::Parts& p) {
    out << "#   " << name << Pad(FormatTime(p.compute_ns), 11) << Pad(FormatTime(p.memory_ns), 11)
        << Pad(FormatTime(p.allreduce_ns), 13) << Pad(FormatTime(p.total_ns()), 11) << "\n";
  };
  row("decode x1  ", run.decode_1);
  row("decode x" + std::to_string(s.batcher.max_batch) + (s.batcher.max_batch < 10 ? "  " : " "), run.decode_batch);
  row("prefill x1 ", run.prefill_1);
  PrintReportRows(out, measured.report, 1);
  out << "# Serving (timing only)\n"
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
  PrintReportRows(out, measured.report, 2);
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
    out.report = InferenceReport(*run);
    out.detail = std::move(run);
    return out;
  };
  c.measured_text = PrintText;
}

}  // namespace shardlab::cli
