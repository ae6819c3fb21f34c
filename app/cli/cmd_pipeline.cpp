// `shardlab-cli run pipeline`'s tables: the per-stage table and the text
// Gantt (the run and the rows under them, the bubble beside its formulas,
// are scenario_run.cpp's and the Summary's).
#include <iomanip>
#include <iostream>
#include <sstream>
#include <vector>

#include "app/cli/output.h"
#include "app/cli/pipeline_chart.h"
#include "app/cli/scenario_run.h"
#include "engine/core/units.h"
#include "engine/scenarios/pipeline_scenario.h"

namespace shardlab::cli {
namespace {

void Tables(std::ostream& out, const RunView& v) {
  const PreparedPipeline& prepared = v.prepared.Detail<PreparedPipeline>();
  const PipelineOutcomeSummary& s = v.summary.Detail<PipelineOutcomeSummary>();
  const Plan& plan = v.plan;
  const std::span<const Event> events = v.events;
  const PipelinePlan& pipeline = prepared.pipeline;
  const PipelineShape& shape = pipeline.params.shape;
  const PipelineMetrics& m = s.metrics;
  const int p = shape.stages;
  const bool split = SplitsBackward(pipeline.params.schedule);
  out << "#\n# stage  layers      F (us)    B (us)" << (split ? "    W (us)" : "")
      << "  busy (us)  idle (us)  bubble  in-flight (formula)\n";
  for (int st = 0; st < p; ++st) {
    const PipelineStageMetrics& sm = m.stages[static_cast<std::size_t>(st)];
    out << "# " << std::setw(5) << st << "  " << std::left << std::setw(9) << PipelineStageLayers(pipeline, st)
        << std::right << std::setw(9) << FormatFixed(sm.forward_ns / 1e3, 2) << std::setw(10)
        << FormatFixed(sm.backward_ns / 1e3, 2)
        << (split ? (std::ostringstream() << std::setw(10) << FormatFixed(sm.weight_ns / 1e3, 2)).str()
                  : std::string())
        << std::setw(11) << FormatFixed(sm.busy_ns / 1e3, 2)
        << std::setw(11) << FormatFixed(sm.idle_ns / 1e3, 2) << std::setw(8)
        << FormatFixed(sm.bubble_over_useful, 3) << std::setw(6) << sm.peak_inflight << " ("
        << sm.formula_peak_inflight << ")\n";
  }
  out << "#\n# Timeline: F forward, B backward"
      << (split ? " (input gradient), W weight gradient" : "")
      << " (F3 = micro-batch 3;\n# letters alternate case by micro-batch when too narrow to"
      << " label), . idle: the bubble.\n";
  for (const std::string& row : PipelineChart(plan, shape, events)) out << "# " << row << "\n";
}

}  // namespace

void PipelineRenderers(RunCommand& c) {
  c.bind = BindBackendAndSeed<PreparedPipeline>;
  c.tables = Tables;
}

}  // namespace shardlab::cli
