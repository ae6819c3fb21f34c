#include "engine/io/trace_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/run/executor.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/io/trace_writer.h"
#include "engine/run/vector_sink.h"

namespace shardlab {
namespace {

struct RecordedRun {
  Plan plan;
  Topology topology;
  std::vector<Event> events;
  std::string trace;
};

RecordedRun Record(const Plan& plan, const Topology& topology) {
  RecordedRun run;
  Executor executor(CreateBackend("sim"), plan, topology);
  VectorSink sink;
  executor.RunToEnd(sink);
  run.plan = executor.plan();
  run.topology = topology;
  run.events = sink.events;
  std::ostringstream out;
  TraceInfo info;
  info.title = "test run";
  info.backend = "sim";
  WriteChromeTrace(out, run.plan, run.topology, run.events, info);
  run.trace = out.str();
  return run;
}

RecordedRun RecordRingAllReduce() {
  CollectiveScenario scenario;
  scenario.ranks = 4;
  scenario.size_bytes = 4096;
  scenario.topology = "dgx1-v100";
  scenario.ring_order = "rank";
  const auto prepared = PrepareCollective(scenario);
  return Record(prepared->plan, prepared->topology);
}

// ts and dur are written as microseconds with 9 significant digits.
void ExpectNear(TimeNs a, TimeNs b) { EXPECT_NEAR(a, b, std::max(1e-3, std::abs(b) * 2e-9)); }

TEST(TraceReader, ReadsBackTheEventsOfARun) {
  const RecordedRun run = RecordRingAllReduce();
  const LoadedTrace trace = ReadChromeTrace(run.trace, "ring.json");
  ASSERT_EQ(trace.events.size(), run.events.size());
  for (std::size_t i = 0; i < run.events.size(); ++i) {
    const Event& want = run.events[i];
    const Event& got = trace.events[i];
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(got.op, static_cast<int>(i));
    EXPECT_EQ(trace.original_op[i], want.op);
    EXPECT_EQ(got.rank, want.rank);
    EXPECT_EQ(got.peer, want.peer);
    EXPECT_EQ(got.step, want.step);
    EXPECT_EQ(got.collective_seq, want.collective_seq);
    EXPECT_EQ(got.lane, want.lane);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.clock, want.clock);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.bytes, want.bytes);
    ExpectNear(got.start_ns, want.start_ns);
    ExpectNear(got.end_ns, want.end_ns);
    // The op the views read: the written op's tags.
    const Op& op = trace.plan.ops[i];
    const Op& written = run.plan.ops[static_cast<std::size_t>(want.op)];
    EXPECT_EQ(op.tags.chunk, written.tags.chunk);
    EXPECT_EQ(op.tags.phase, written.tags.phase);
    EXPECT_EQ(op.reduce, written.reduce);
    EXPECT_EQ(op.kind, written.kind);
  }
  EXPECT_EQ(trace.plan.name, run.plan.name);
  EXPECT_EQ(trace.plan.num_ranks, run.plan.num_ranks);
  EXPECT_EQ(trace.plan.num_steps, run.plan.num_steps);
  EXPECT_EQ(trace.backend, "sim");
  EXPECT_EQ(trace.title, "test run");
  EXPECT_EQ(trace.clock, "simulated");
  // The machine came from the trace itself, link for link.
  EXPECT_EQ(trace.topology.name, run.topology.name);
  ASSERT_EQ(trace.topology.links.size(), run.topology.links.size());
  for (std::size_t l = 0; l < run.topology.links.size(); ++l) {
    EXPECT_EQ(trace.topology.links[l].a, run.topology.links[l].a);
    EXPECT_EQ(trace.topology.links[l].b, run.topology.links[l].b);
    EXPECT_EQ(trace.topology.links[l].kind, run.topology.links[l].kind);
  }
  EXPECT_TRUE(trace.topology_note.empty());
}

TEST(TraceReader, KeepsAPipelinesPhasesAndMicrobatches) {
  PipelineScenario scenario;
  scenario.params.shape.stages = 2;
  scenario.params.shape.microbatches = 3;
  scenario.params.model.layers = 2;
  scenario.params.model.width = 8;
  scenario.params.model.batch = 6;
  const auto prepared = PreparePipeline(scenario);
  const RecordedRun run = Record(prepared->pipeline.plan, prepared->topology);
  const LoadedTrace trace = ReadChromeTrace(run.trace, "pipe.json");
  ASSERT_EQ(trace.events.size(), run.events.size());
  int forward = 0;
  for (std::size_t i = 0; i < run.events.size(); ++i) {
    const Op& written = run.plan.ops[static_cast<std::size_t>(run.events[i].op)];
    EXPECT_EQ(trace.plan.ops[i].tags.phase, written.tags.phase);
    EXPECT_EQ(trace.plan.ops[i].tags.microbatch, written.tags.microbatch);
    EXPECT_EQ(trace.plan.ops[i].tags.layer, written.tags.layer);
    EXPECT_NEAR(trace.plan.ops[i].flops, written.flops, written.flops * 2e-9);
    if (written.tags.phase == Phase::kForward) ++forward;
  }
  EXPECT_GT(forward, 0);
}

std::string ErrorOf(const std::string& text) {
  try {
    ReadChromeTrace(text, "bad.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TraceReader, BrokenFilesGetOneClearMessage) {
  EXPECT_EQ(ErrorOf(""), "bad.json: the file is empty");
  EXPECT_TRUE(Contains(ErrorOf("not json"), "bad.json:1:1: expected '{'"));
  const std::string good = RecordRingAllReduce().trace;
  // Cut anywhere: an error, never a crash or a half-read run.
  for (std::size_t cut = 1; cut < good.size(); cut += good.size() / 97 + 1) {
    EXPECT_NE(ErrorOf(good.substr(0, cut)), "") << "cut at " << cut;
  }
  // A Chrome trace from another tool.
  EXPECT_TRUE(Contains(ErrorOf(R"({"traceEvents": [{"ph": "X", "name": "f", "pid": 1, "tid": 7, "ts": 0, "dur": 1}]})"),
                       "not a ShardLab trace"));
  EXPECT_TRUE(Contains(ErrorOf(R"({"traceEvents": []})"), "not a ShardLab trace"));
  EXPECT_TRUE(Contains(ErrorOf(R"([{"ph": "X"}])"), "expected '{'"));
  EXPECT_TRUE(Contains(ErrorOf(R"({"other": 1})"), "no traceEvents"));
  // Fields out of range or of the wrong type name themselves.
  EXPECT_TRUE(Contains(ErrorOf(R"({"traceEvents": [{"ph": "X", "pid": 0, "tid": 1000000, "ts": 0, "dur": 1}]})"),
                       "pid: 0 is not a whole number in 1..65536"));
  EXPECT_TRUE(Contains(ErrorOf(R"({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1000000, "ts": "a", "dur": 1}]})"),
                       "bad.json:1:18: ts: missing or not a number"));
  EXPECT_TRUE(Contains(ErrorOf(R"({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1000000, "ts": 0, "dur": 1, "args": {"kind": "teleport"}}]})"),
                       "args.kind: unknown op kind 'teleport'"));
}

TEST(TraceReader, ATraceThatOnlyNamesAPresetGetsThatPreset) {
  const std::string text =
      R"({"traceEvents": [{"ph": "X", "name": "send", "cat": "op", "pid": 2, "tid": 1000011, "ts": 1.5, "dur": 2,
          "args": {"bytes": 64, "step": 0, "seq": 0, "op": 9, "peer": 0, "clock": "cuda-event"}}],
          "otherData": {"plan": "p", "topology": "dgx-a100", "ranks": 2, "steps": 1, "backend": "cuda"}})";
  const LoadedTrace trace = ReadChromeTrace(text, "old.json");
  ASSERT_EQ(trace.events.size(), 1u);
  EXPECT_EQ(trace.events[0].kind, OpKind::kSend);  // from the name: no args.kind
  EXPECT_EQ(trace.events[0].lane, Lane::kSend);
  EXPECT_EQ(trace.events[0].rank, 1);
  EXPECT_EQ(trace.events[0].clock, ClockKind::kCudaEvent);
  EXPECT_EQ(trace.events[0].start_ns, 1500);
  EXPECT_EQ(trace.events[0].end_ns, 3500);
  EXPECT_EQ(trace.topology.name, "dgx-a100");
  EXPECT_FALSE(trace.topology_note.empty());

  std::string unknown = text;
  unknown.replace(unknown.find("dgx-a100"), 8, "my-cluster");
  EXPECT_TRUE(Contains(ErrorOf(unknown), "which it does not embed and which is no preset"));
}

TEST(TraceReader, AMissingFileNamesThePath) {
  try {
    ReadChromeTraceFile("/nonexistent/run.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "/nonexistent/run.json: cannot open")) << e.what();
  }
}

}  // namespace
}  // namespace shardlab
