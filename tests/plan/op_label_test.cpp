// Op labels (engine/plan/op_label.h): every scenario's generators name
// every op, the names tell different ops apart, and a Chrome trace written
// from the plan carries them (and reads back with them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/moe.h"
#include "engine/algorithms/pipeline.h"
#include "engine/algorithms/tensor_parallel.h"
#include "engine/algorithms/three_d.h"
#include "engine/algorithms/zero.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/model/model_presets.h"
#include "engine/model/moe_layer.h"
#include "engine/plan/dump.h"
#include "engine/plan/op_label.h"
#include "engine/plan/validate.h"
#include "engine/io/trace_reader.h"
#include "engine/io/trace_writer.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

// Issue 31 wants ops smaller; names must not make them bigger.
static_assert(sizeof(Op) <= 120, "an Op grew: labels live in Plan::collectives, not in ops");

struct NamedPlan {
  std::string name;
  Plan plan;
};

Plan Collective(CollectiveKind kind, CollectiveAlgo algo, int ranks = 4) {
  CollectiveParams p;
  p.kind = kind;
  p.algo = algo;
  p.ranks = ranks;
  p.count = 64;
  p.collective_seq = 0;
  return BuildCollective(p);
}

Plan Pipeline(PipelineSchedule schedule, int chunks) {
  PipelineParams p;
  p.schedule = schedule;
  p.shape = {4, 4, chunks};
  p.model.layers = 8;
  p.model.width = 8;
  p.model.batch = 8;
  return BuildPipeline(p).plan;
}

Plan Tp(TpLayerKind kind, bool sequence_parallel) {
  TpLayerConfig c;
  c.kind = kind;
  c.seq = 8;
  c.hidden = 16;
  c.heads = 2;
  c.tp = 2;
  c.sequence_parallel = sequence_parallel;
  return BuildTpLayer(c).plan;
}

ZeroParams ZeroSmall(int stage) {
  ZeroParams p;
  p.ranks = 4;
  p.stage = stage;
  p.steps = 2;
  p.model.layers = 4;
  p.model.width = 8;
  p.model.batch = 8;
  p.bucket_bytes = 2 * (8 * 8 + 8) * 2;  // two layers of fp16 parameters a bucket
  return p;
}

Plan ThreeD(int zero_stage) {
  ThreeDParams p;
  p.grid = ParallelGrid{2, 2, 2};
  p.microbatches = 2;
  p.zero_stage = zero_stage;
  p.model.layers = 4;
  p.model.width = 8;
  p.model.batch = 8;
  return BuildThreeD(p).plan;
}

Plan ThreeDTiming() {
  ThreeDTimingParams p;
  p.grid = ParallelGrid{2, 2, 2};
  p.model = FindModelPreset("gpt3-1.3b");
  p.model.global_batch = 8;
  p.dp_buckets = 2;
  return BuildThreeDTiming(p).plan;
}

Plan Moe() {
  MoeLayerConfig c;
  c.ranks = 4;
  c.experts = 8;
  c.tokens = 64;
  c.hidden = 8;
  c.ffn = 16;
  return BuildMoeLayer(c, RouteMoeTokens(c, MoeRouterLogits(c, 7), 7)).plan;
}

/// A small plan of every scenario and of every generator each one uses.
std::vector<NamedPlan> EveryScenario() {
  std::vector<NamedPlan> plans;
  plans.push_back({"ring all-reduce", Collective(CollectiveKind::kAllReduce, CollectiveAlgo::kRing)});
  plans.push_back({"tree all-reduce", Collective(CollectiveKind::kAllReduce, CollectiveAlgo::kTree)});
  plans.push_back({"ring reduce-scatter", Collective(CollectiveKind::kReduceScatter, CollectiveAlgo::kRing)});
  plans.push_back({"ring all-gather", Collective(CollectiveKind::kAllGather, CollectiveAlgo::kRing)});
  plans.push_back({"ring broadcast", Collective(CollectiveKind::kBroadcast, CollectiveAlgo::kRing)});
  plans.push_back({"ring reduce", Collective(CollectiveKind::kReduce, CollectiveAlgo::kRing)});
  plans.push_back({"direct all-to-all", Collective(CollectiveKind::kAllToAll, CollectiveAlgo::kDirect)});
  plans.push_back({"nccl all-reduce", Collective(CollectiveKind::kAllReduce, CollectiveAlgo::kNccl)});
  plans.push_back({"nccl broadcast", Collective(CollectiveKind::kBroadcast, CollectiveAlgo::kNccl)});
  plans.push_back({"gpipe", Pipeline(PipelineSchedule::kGPipe, 1)});
  plans.push_back({"1f1b", Pipeline(PipelineSchedule::k1F1B, 1)});
  plans.push_back({"interleaved", Pipeline(PipelineSchedule::kInterleaved1F1B, 2)});
  plans.push_back({"zb-h1", Pipeline(PipelineSchedule::kZeroBubbleH1, 1)});
  plans.push_back({"tp mlp", Tp(TpLayerKind::kMlp, false)});
  plans.push_back({"tp column", Tp(TpLayerKind::kColumnLinear, false)});
  plans.push_back({"tp row", Tp(TpLayerKind::kRowLinear, false)});
  plans.push_back({"tp transformer sp", Tp(TpLayerKind::kTransformer, true)});
  for (int stage = 0; stage <= 3; ++stage) {
    plans.push_back({"zero " + std::to_string(stage), BuildZero(ZeroSmall(stage)).plan});
  }
  plans.push_back({"3d", ThreeD(0)});
  plans.push_back({"3d zero-1", ThreeD(1)});
  plans.push_back({"3d timing", ThreeDTiming()});
  plans.push_back({"moe", Moe()});
  return plans;
}

/// What an op is, as far as a reader should tell ops apart: everything
/// the labels read except the op's own rank (its row says it).
using Meaning = std::tuple<OpKind, Phase, int, int, int, int, std::string, std::string, ReduceOp, LibraryCollective>;
Meaning MeaningOf(const Plan& plan, const Op& op) {
  const CollectiveNote* note = NoteOf(plan, op);
  // An MoE transfer's chunk is its receiver: the peer of a send, the op's
  // own GPU otherwise; nothing a label needs to repeat.
  const bool receiver = op.tags.phase == Phase::kDispatch || op.tags.phase == Phase::kCombine;
  return {op.kind, op.tags.phase, op.tags.microbatch, op.tags.layer, receiver ? -1 : op.tags.chunk, op.peer,
          note != nullptr ? note->tag : "", note != nullptr ? note->what : "", op.reduce, op.library};
}

TEST(OpLabels, EveryOpOfEveryScenarioHasNonEmptyDistinctLabels) {
  for (const NamedPlan& p : EveryScenario()) {
    SCOPED_TRACE(p.name);
    ASSERT_FALSE(p.plan.ops.empty());
    std::map<std::string, Meaning> by_text;
    for (OpId id = 0; id < static_cast<OpId>(p.plan.ops.size()); ++id) {
      const OpLabel label = LabelOp(p.plan, id);
      ASSERT_FALSE(label.bar.empty()) << DescribeOp(p.plan, id);
      ASSERT_FALSE(label.compact.empty()) << DescribeOp(p.plan, id);
      ASSERT_FALSE(label.tiny.empty()) << DescribeOp(p.plan, id);
      ASSERT_FALSE(label.text.empty()) << DescribeOp(p.plan, id);
      // The long form says more than the bar, and the tiny one fits in it.
      EXPECT_GT(label.text.size(), label.bar.size()) << label.bar << " | " << label.text;
      EXPECT_LE(label.compact.size(), label.bar.size()) << label.compact << " | " << label.bar;
      EXPECT_LE(label.tiny.size(), label.compact.size()) << label.tiny << " | " << label.compact;
      EXPECT_EQ(label.text.find("  "), std::string::npos) << label.text;
      // Ops that are different things read differently.
      const Meaning meaning = MeaningOf(p.plan, p.plan.ops[static_cast<std::size_t>(id)]);
      const auto [it, added] = by_text.emplace(label.text, meaning);
      EXPECT_TRUE(added || it->second == meaning) << DescribeOp(p.plan, id) << " reads as another op: " << label.text;
    }
  }
}

const char* PhaseAbbrevForTest(Phase phase) { return phase == Phase::kReduceScatter ? "RS" : "AG"; }

std::string FirstWordOf(const std::string& text) { return text.substr(0, text.find(' ')); }

/// The first op that `pick` accepts, or null.
template <typename Pick>
const Op* Find(const Plan& plan, Pick pick) {
  for (const Op& op : plan.ops)
    if (pick(op)) return &op;
  return nullptr;
}

TEST(OpLabels, ZeroThreeNamesTheLayerAndThePassOfEachGather) {
  const Plan plan = BuildZero(ZeroSmall(3)).plan;
  auto gather_send = [&](int layer, const char* pass) {
    return Find(plan, [&](const Op& op) {
      const CollectiveNote* note = NoteOf(plan, op);
      return op.kind == OpKind::kSend && op.tags.layer == layer && op.tags.phase == Phase::kAllGather &&
             note != nullptr && note->tag.find(pass) != std::string::npos;
    });
  };
  const Op* fwd3 = gather_send(3, "fwd");
  const Op* bwd3 = gather_send(3, "bwd");
  const Op* fwd2 = gather_send(2, "fwd");
  ASSERT_NE(fwd3, nullptr);
  ASSERT_NE(bwd3, nullptr);
  ASSERT_NE(fwd2, nullptr);
  const OpLabel f3 = LabelOp(plan, *fwd3);
  EXPECT_EQ(f3.bar.rfind("AG L3 fwd\xC2\xB7", 0), 0u) << f3.bar;
  EXPECT_EQ(f3.compact, "AG L3\xC2\xB7" + ChunkName(fwd3->tags.chunk));
  EXPECT_EQ(f3.tiny, ChunkName(fwd3->tags.chunk));
  EXPECT_NE(f3.bar.find(" ->" + std::to_string(fwd3->peer)), std::string::npos) << f3.bar;
  EXPECT_EQ(f3.text.rfind("all-gather of layer 3's parameters before its forward, chunk ", 0), 0u) << f3.text;
  EXPECT_NE(f3.text.find("to GPU " + std::to_string(fwd3->peer)), std::string::npos) << f3.text;
  const OpLabel b3 = LabelOp(plan, *bwd3);
  EXPECT_NE(b3.text.find("layer 3"), std::string::npos) << b3.text;
  EXPECT_NE(b3.text.find("backward"), std::string::npos) << b3.text;
  EXPECT_EQ(b3.text.find("forward"), std::string::npos) << b3.text;
  // Two gathers of different layers differ in both forms.
  const OpLabel f2 = LabelOp(plan, *fwd2);
  EXPECT_NE(f2.bar.substr(0, 9), f3.bar.substr(0, 9));
  EXPECT_NE(f2.text.substr(0, 30), f3.text.substr(0, 30));
  // Compute says its layer: "F L3", "forward of layer 3".
  const Op* forward3 = Find(plan, [](const Op& op) {
    return op.kind == OpKind::kCompute && op.tags.phase == Phase::kForward && op.tags.layer == 3;
  });
  ASSERT_NE(forward3, nullptr);
  EXPECT_EQ(LabelOp(plan, *forward3).bar, "F L3");
  EXPECT_EQ(LabelOp(plan, *forward3).text, "forward of layer 3");
  EXPECT_EQ(LabelOp(plan, *forward3).compact, "F3");
}

TEST(OpLabels, ZeroBucketsKeepTheViewsNames) {
  // Stage 0: an all-reduce per bucket, in two passes; the GUI's names.
  const Plan plan = BuildZero(ZeroSmall(0)).plan;
  ASSERT_GE(plan.collectives.size(), 2u);
  EXPECT_EQ(plan.collectives[0].tag, "AR b0");
  EXPECT_EQ(plan.collectives[0].what, "all-reduce of the gradients of bucket 0 (layers 3-2)");
  EXPECT_TRUE(plan.collectives[0].two_passes);
  const Op* recv = Find(plan, [](const Op& op) {
    return op.kind == OpKind::kRecv && op.collective_seq == 0 && op.tags.phase == Phase::kReduceScatter;
  });
  ASSERT_NE(recv, nullptr);
  const OpLabel label = LabelOp(plan, *recv);
  EXPECT_EQ(label.bar.rfind("AR b0 RS\xC2\xB7", 0), 0u) << label.bar;
  EXPECT_EQ(label.compact, "AR b0 RS\xC2\xB7" + ChunkName(recv->tags.chunk));
  EXPECT_NE(label.text.find("reduce-scatter pass"), std::string::npos) << label.text;
  EXPECT_NE(label.text.find("reduced in (sum)"), std::string::npos) << label.text;
}

TEST(OpLabels, CollectivesPipelinesLayersGridsAndExpertsSayWhatTheyAre) {
  {  // Ring all-reduce: the call, its pass, the chunk, the peer.
    const Plan plan = Collective(CollectiveKind::kAllReduce, CollectiveAlgo::kRing);
    const Op* send = Find(plan, [](const Op& op) { return op.kind == OpKind::kSend && op.tags.phase == Phase::kAllGather; });
    ASSERT_NE(send, nullptr);
    const OpLabel label = LabelOp(plan, *send);
    EXPECT_EQ(label.bar, "AR AG\xC2\xB7" + ChunkName(send->tags.chunk) + " ->" + std::to_string(send->peer));
    EXPECT_EQ(label.tiny, ChunkName(send->tags.chunk));
    EXPECT_EQ(label.text, "all-reduce (ring), all-gather pass, chunk " + ChunkName(send->tags.chunk) + ", to GPU " +
                              std::to_string(send->peer));
  }
  {  // NCCL: one library call per rank.
    const Plan plan = Collective(CollectiveKind::kBroadcast, CollectiveAlgo::kNccl);
    const OpLabel label = LabelOp(plan, 0);
    EXPECT_EQ(label.bar, "BC");
    EXPECT_EQ(label.text, "broadcast (NCCL), root GPU 0");
  }
  {  // Pipeline: micro-batch, layer, model chunk; the activation sent on.
    const Plan plan = Pipeline(PipelineSchedule::kInterleaved1F1B, 2);
    const Op* forward = Find(plan, [](const Op& op) {
      return op.kind == OpKind::kCompute && op.tags.phase == Phase::kForward && op.tags.microbatch == 2 && op.tags.chunk == 5;
    });
    ASSERT_NE(forward, nullptr);
    const std::string layer = std::to_string(forward->tags.layer);
    EXPECT_EQ(LabelOp(plan, *forward).bar, "F mb2 L" + layer);
    EXPECT_EQ(LabelOp(plan, *forward).compact, "F2");
    EXPECT_EQ(LabelOp(plan, *forward).text, "forward of micro-batch 2, layer " + layer + ", model chunk 5");
    const Op* send = Find(plan, [](const Op& op) {
      return op.kind == OpKind::kSend && op.tags.phase == Phase::kBackward && op.tags.microbatch == 1;
    });
    ASSERT_NE(send, nullptr);
    EXPECT_EQ(LabelOp(plan, *send).bar, "B mb1 ->" + std::to_string(send->peer));
    EXPECT_EQ(LabelOp(plan, *send).compact, "B1");
    EXPECT_EQ(LabelOp(plan, *send).text, "micro-batch 1's gradient of layer " + std::to_string(send->tags.layer) +
                                             "'s output (backward), to GPU " + std::to_string(send->peer));
  }
  {  // ZB-H1's weight-gradient pass.
    const Plan plan = Pipeline(PipelineSchedule::kZeroBubbleH1, 1);
    const Op* w = Find(plan, [](const Op& op) { return op.tags.phase == Phase::kWeightGrad && op.tags.microbatch == 0; });
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(LabelOp(plan, *w).text.rfind("weight gradient of micro-batch 0", 0), 0u) << LabelOp(plan, *w).text;
  }
  {  // Tensor parallelism: the GUI's collective names, forward and backward.
    const Plan plan = Tp(TpLayerKind::kMlp, false);
    ASSERT_EQ(plan.collectives.size(), 2u);
    EXPECT_EQ(plan.collectives[0].tag, "AR1 fwd");
    EXPECT_EQ(plan.collectives[1].tag, "AR2 bwd");
    const Op* send = Find(plan, [](const Op& op) { return op.kind == OpKind::kSend && op.collective_seq == 1; });
    ASSERT_NE(send, nullptr);
    EXPECT_EQ(LabelOp(plan, *send).compact.rfind("AR2 " + std::string(PhaseAbbrevForTest(send->tags.phase)), 0), 0u)
        << LabelOp(plan, *send).compact;
    EXPECT_NE(plan.collectives[0].what.find("in the forward"), std::string::npos) << plan.collectives[0].what;
  }
  {  // 3D: each collective names its group kind and group.
    const Plan plan = ThreeD(0);
    bool tp = false, pp = false, dp = false;
    for (const Op& op : plan.ops) {
      if (op.kind != OpKind::kSend) continue;
      const OpLabel label = LabelOp(plan, op);
      tp |= label.bar.rfind("TP g", 0) == 0 && label.text.find("tensor-parallel all-reduce of layer") == 0;
      pp |= label.bar.rfind("PP g", 0) == 0 && label.text.find(", micro-batch ") != std::string::npos &&
            label.compact.find(std::string(op.tags.phase == Phase::kForward ? " F" : " B") +
                               std::to_string(op.tags.microbatch)) != std::string::npos;
      dp |= label.bar.rfind("DP g", 0) == 0 && label.text.find("gradients of") != std::string::npos;
    }
    EXPECT_TRUE(tp && pp && dp);
  }
  {  // MoE: router, dispatch, each expert, combine.
    const Plan plan = Moe();
    std::map<std::string, int> heads;
    for (const Op& op : plan.ops) ++heads[FirstWordOf(LabelOp(plan, op).bar)];
    for (const char* head : {"router", "pack", "dispatch", "E3", "combine", "sum"}) EXPECT_GT(heads[head], 0) << head;
  }
}

/// A run of every op of `plan`, one after another by step.
std::vector<Event> FakeRun(const Plan& plan) {
  std::vector<Event> events;
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    Event e;
    e.op = id;
    e.rank = op.rank;
    e.peer = op.peer;
    e.step = op.step;
    e.collective_seq = op.collective_seq;
    e.lane = op.lane;
    e.kind = op.kind;
    e.start_ns = 1000.0 * op.step + id % 7;
    e.end_ns = e.start_ns + 500;
    e.bytes = op.bytes;
    events.push_back(e);
  }
  return events;
}

TEST(OpLabels, TracesCarryTheLabelsAndReadBackWithThem) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  for (const NamedPlan& p : EveryScenario()) {
    SCOPED_TRACE(p.name);
    const std::string path = (dir / ("shardlab_op_label_" + std::to_string(::getpid()) + ".json")).string();
    const std::vector<Event> events = FakeRun(p.plan);
    WriteChromeTraceFile(path, p.plan, MakeUniformRing(p.plan.num_ranks, 100, 1000), events, TraceInfo{});
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    // Every slice names its op's labels in args.
    const JsonValue doc = ParseJson(text.str(), path, JsonLimits{std::size_t{1} << 30, 64, std::size_t{1} << 24, std::size_t{1} << 28});
    const JsonValue* slices = doc.Find("traceEvents");
    ASSERT_NE(slices, nullptr);
    std::size_t labelled = 0;
    for (const JsonValue& slice : slices->items) {
      const JsonValue* ph = slice.Find("ph");
      const JsonValue* args = slice.Find("args");
      if (ph == nullptr || ph->string != "X" || args == nullptr || args->Find("kind") == nullptr) continue;
      const OpId id = static_cast<OpId>(args->Find("op")->number);
      const OpLabel label = LabelOp(p.plan, id);
      ASSERT_NE(args->Find("label"), nullptr) << DescribeOp(p.plan, id);
      ASSERT_NE(args->Find("what"), nullptr) << DescribeOp(p.plan, id);
      EXPECT_EQ(args->Find("label")->string, label.bar);
      EXPECT_EQ(args->Find("what")->string, label.text);
      // The slice's name leads with the call's tag.
      const CollectiveNote* note = NoteOf(p.plan, p.plan.ops[static_cast<std::size_t>(id)]);
      if (note != nullptr) {
        EXPECT_EQ(slice.Find("name")->string.rfind(note->tag + ": ", 0), 0u);
      }
      ++labelled;
    }
    EXPECT_EQ(labelled, p.plan.ops.size());
    // Read back, the ops label as they were written.
    const LoadedTrace loaded = ReadChromeTraceFile(path);
    std::remove(path.c_str());
    ASSERT_EQ(loaded.events.size(), events.size());
    for (std::size_t i = 0; i < loaded.events.size(); ++i) {
      const OpLabel read = LabelOp(loaded.plan, static_cast<OpId>(i));
      const OpLabel written = LabelOp(p.plan, loaded.original_op[i]);
      ASSERT_EQ(read.bar, written.bar);
      ASSERT_EQ(read.text, written.text);
    }
  }
}

TEST(OpLabels, ATraceNamingACallFarPastItsSlicesIsRefused) {
  auto trace = [](long long seq) {
    return std::string(R"({"traceEvents":[{"ph":"X","name":"AR: send c0 →1","pid":1,"tid":1000001,"ts":0,"dur":1,)") +
           R"("args":{"op":0,"kind":"send","peer":1,"seq":)" + std::to_string(seq) +
           R"j(,"call":"AR","call_what":"all-reduce (ring)","call_passes":2}}],)j" +
           R"("otherData":{"plan":"p","ranks":2,"steps":1,"topology":"dgx-a100"}})";
  };
  const LoadedTrace ok = ReadChromeTrace(trace(3), "ok.json");
  ASSERT_EQ(ok.plan.collectives.size(), 4u);
  EXPECT_EQ(ok.plan.collectives[3].tag, "AR");
  EXPECT_TRUE(ok.plan.collectives[3].two_passes);
  EXPECT_EQ(LabelOp(ok.plan, 0).text, "all-reduce (ring), to GPU 1");
  try {
    ReadChromeTrace(trace(kMaxTraceCalls), "far.json");
    FAIL() << "a call number past kMaxTraceCalls was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("far.json:1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("args.seq: "), std::string::npos) << e.what();
  }
}

TEST(OpLabels, PlanDumpsShowTheLongLabel) {
  const Plan plan = BuildZero(ZeroSmall(3)).plan;
  const std::string dump = DumpPlan(plan, plan.ops.size());
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    EXPECT_NE(dump.find(DescribeOp(plan, id) + " "), std::string::npos);
    EXPECT_NE(dump.find("  # " + LabelOp(plan, id).text + "\n"), std::string::npos) << LabelOp(plan, id).text;
  }
}

TEST(OpLabels, ChunkNamesAreSpreadsheetColumns) {
  EXPECT_EQ(ChunkName(0), "A");
  EXPECT_EQ(ChunkName(25), "Z");
  EXPECT_EQ(ChunkName(26), "AA");
  EXPECT_EQ(ChunkName(27), "AB");
  EXPECT_EQ(ChunkName(-1), "");
}

}  // namespace
}  // namespace shardlab
