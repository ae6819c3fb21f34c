#include "engine/run/chunk_state.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"

namespace shardlab {
namespace {

Event EventFor(const Plan& plan, OpId id, EventStatus status = EventStatus::kOk) {
  const Op& op = plan.ops[id];
  Event event;
  event.op = id;
  event.rank = op.rank;
  event.peer = op.peer;
  event.step = op.step;
  event.lane = op.lane;
  event.kind = op.kind;
  event.status = status;
  return event;
}

// Feeds every op of steps [first, last] to `state` in plan order.
void RunSteps(const Plan& plan, ChunkState& state, int first, int last) {
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const int step = plan.ops[id].step;
    if (step >= first && step <= last) state.OnEvent(EventFor(plan, id));
  }
}

CollectiveParams Params(CollectiveKind kind, int ranks) {
  CollectiveParams params;
  params.kind = kind;
  params.ranks = ranks;
  return params;
}

int Mod(int a, int n) { return ((a % n) + n) % n; }

// The textbook ring all-reduce, written out by hand. Reduce-scatter step s
// (0 .. n-2): rank r sends chunk r-s to r+1, which adds it in. All-gather
// step n-1+s: rank r sends chunk r+1-s to r+1, which overwrites.
Plan MakeRingAllReduce(int n, std::int64_t per_chunk) {
  PlanBuilder b("hand-written ring all-reduce", n);
  std::vector<BufferId> data;
  for (int r = 0; r < n; ++r) data.push_back(b.AddBuffer(r, "data", n * per_chunk));
  auto slice = [&](int rank, int c) { return BufferSlice{data[rank], c * per_chunk, per_chunk}; };
  for (int step = 0; step < 2 * (n - 1); ++step) {
    const bool reduce_scatter = step < n - 1;
    for (int r = 0; r < n; ++r) {
      const int c = reduce_scatter ? Mod(r - step, n) : Mod(r + 1 - (step - (n - 1)), n);
      const OpTags tags{reduce_scatter ? Phase::kReduceScatter : Phase::kAllGather, c, -1, -1};
      b.AddTransfer(r, (r + 1) % n, slice(r, c), slice((r + 1) % n, c),
                    reduce_scatter ? ReduceOp::kSum : ReduceOp::kNone, step, tags, {}, {});
    }
  }
  return b.Finish();
}

TEST(ChunkState, RingAllReduceStartsWithEachRanksOwnInput) {
  const Plan plan = MakeRingAllReduce(4, 2);
  const ChunkState state(Params(CollectiveKind::kAllReduce, 4), plan);
  const auto lines = state.FormatRanks();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "GPU0: [A0, B0, C0, D0]");
  EXPECT_EQ(lines[3], "GPU3: [A3, B3, C3, D3]");
  EXPECT_EQ(state.Contributors(2, 1), std::vector<int>{2});
}

TEST(ChunkState, RingReduceScatterLeavesEachRankOneFullChunk) {
  const Plan plan = MakeRingAllReduce(4, 2);
  ChunkState state(Params(CollectiveKind::kAllReduce, 4), plan);
  RunSteps(plan, state, 0, 2);
  const std::vector<int> all{0, 1, 2, 3};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(state.Contributors(r, (r + 1) % 4), all) << "rank " << r;
    EXPECT_EQ(state.Contributors(r, r), std::vector<int>{r}) << "rank " << r;
  }
  // Rank 0 received chunk 3 (from 3), then 2 (3+2), then 1 (3+2+1).
  EXPECT_EQ(state.FormatRanks()[0], "GPU0: [A0, B0+B1+B2+B3, C0+C2+C3, D0+D3]");
}

TEST(ChunkState, RingAllGatherCompletesEveryChunk) {
  const Plan plan = MakeRingAllReduce(4, 2);
  ChunkState state(Params(CollectiveKind::kAllReduce, 4), plan);
  RunSteps(plan, state, 0, plan.num_steps - 1);
  for (const std::string& line : state.FormatRanks()) {
    EXPECT_EQ(line.substr(6), "[A0+A1+A2+A3, B0+B1+B2+B3, C0+C1+C2+C3, D0+D1+D2+D3]") << line;
  }
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(state.Contributors(r, c), (std::vector<int>{0, 1, 2, 3}));
  }
}

TEST(ChunkState, CompactsLargeSetsIntoRuns) {
  const Plan plan = MakeRingAllReduce(8, 3);
  ChunkState state(Params(CollectiveKind::kAllReduce, 8), plan);
  RunSteps(plan, state, 0, 6);
  EXPECT_EQ(state.FormatRanks()[0],
            "GPU0: [A0, B0..7, C0+C2..7, D0+D3..7, E0+E4..7, F0+F5+F6+F7, G0+G6+G7, H0+H7]");
  RunSteps(plan, state, 7, plan.num_steps - 1);
  EXPECT_EQ(state.FormatRanks()[5],
            "GPU5: [A0..7, B0..7, C0..7, D0..7, E0..7, F0..7, G0..7, H0..7]");
}

TEST(ChunkState, ScalesToHundredsOfRanks) {
  constexpr int kRanks = 128;
  const Plan plan = MakeRingAllReduce(kRanks, 1);
  ChunkState state(Params(CollectiveKind::kAllReduce, kRanks), plan);
  RunSteps(plan, state, 0, kRanks - 2);
  EXPECT_EQ(state.Contributors(0, 1).size(), static_cast<std::size_t>(kRanks));
  RunSteps(plan, state, kRanks - 1, plan.num_steps - 1);
  EXPECT_EQ(state.Contributors(77, 31).size(), static_cast<std::size_t>(kRanks));
  EXPECT_EQ(state.FormatRanks(4)[9], "GPU9: [A0..127, B0..127, C0..127, D0..127]");
}

TEST(ChunkState, AllGatherStartsWithOnlyTheOwnChunk) {
  // Ring all-gather: step s, rank r forwards chunk r-s to r+1.
  constexpr int n = 4;
  PlanBuilder b("hand-written ring all-gather", n);
  std::vector<BufferId> data;
  for (int r = 0; r < n; ++r) data.push_back(b.AddBuffer(r, "data", 10));  // uneven chunks
  for (int step = 0; step < n - 1; ++step) {
    for (int r = 0; r < n; ++r) {
      const int c = Mod(r - step, n);
      const std::int64_t begin = c * 10 / n;
      const std::int64_t count = (c + 1) * 10 / n - begin;
      b.AddTransfer(r, (r + 1) % n, {data[r], begin, count}, {data[(r + 1) % n], begin, count},
                    ReduceOp::kNone, step, OpTags{Phase::kAllGather, c, -1, -1}, {}, {});
    }
  }
  const Plan plan = b.Finish();
  ChunkState state(Params(CollectiveKind::kAllGather, n), plan);
  EXPECT_EQ(state.FormatRanks()[1], "GPU1: [_, B1, _, _]");
  EXPECT_TRUE(state.Contributors(1, 0).empty());
  RunSteps(plan, state, 0, 0);
  EXPECT_EQ(state.FormatRanks()[1], "GPU1: [A0, B1, _, _]");
  RunSteps(plan, state, 1, plan.num_steps - 1);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(state.FormatRanks()[r], "GPU" + std::to_string(r) + ": [A0, B1, C2, D3]");
  }
}

TEST(ChunkState, BroadcastStartsAtTheRootOnly) {
  PlanBuilder b("broadcast buffers", 4);
  for (int r = 0; r < 4; ++r) b.AddBuffer(r, "data", 8);
  const Plan plan = b.Finish();
  CollectiveParams params = Params(CollectiveKind::kBroadcast, 4);
  params.root = 2;
  const ChunkState state(params, plan);
  EXPECT_EQ(state.FormatRanks()[2], "GPU2: [A2, B2, C2, D2]");
  EXPECT_EQ(state.FormatRanks()[0], "GPU0: [_, _, _, _]");
}

TEST(ChunkState, AllToAllFillsRecvChunksFromEachSender) {
  // Chunk j of rank i's "send" lands in chunk i of rank j's "recv"; the
  // chunk a rank keeps is a local Copy.
  constexpr int n = 3;
  PlanBuilder b("hand-written all-to-all", n);
  std::vector<BufferId> send, recv;
  for (int r = 0; r < n; ++r) send.push_back(b.AddBuffer(r, "send", 6));
  for (int r = 0; r < n; ++r) recv.push_back(b.AddBuffer(r, "recv", 6));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const BufferSlice src{send[i], 2 * j, 2};
      const BufferSlice dst{recv[j], 2 * i, 2};
      if (i == j) {
        Op copy;
        copy.kind = OpKind::kCopy;
        copy.lane = Lane::kCopy;
        copy.rank = i;
        copy.src = src;
        copy.dst = dst;
        b.AddOp(copy);
      } else {
        b.AddTransfer(i, j, src, dst, ReduceOp::kNone, 0, OpTags{Phase::kAllToAll, j, -1, -1}, {},
                      {});
      }
    }
  }
  const Plan plan = b.Finish();
  ChunkState state(Params(CollectiveKind::kAllToAll, n), plan);
  EXPECT_EQ(state.FormatRanks()[1], "GPU1: [_, _, _]");
  RunSteps(plan, state, 0, 0);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(state.FormatRanks()[r], "GPU" + std::to_string(r) + ": [A0, B1, C2]");
  }
}

// Ranks in `senders` each add their whole buffer into rank 0's.
Plan MakeGather(int n, const std::vector<int>& senders) {
  PlanBuilder b("sum into rank 0", n);
  std::vector<BufferId> data;
  for (int r = 0; r < n; ++r) data.push_back(b.AddBuffer(r, "data", 16));
  for (int s : senders) {
    b.AddTransfer(s, 0, {data[s], 0, 16}, {data[0], 0, 16}, ReduceOp::kSum, 0, {}, {}, {});
  }
  return b.Finish();
}

TEST(ChunkState, PrintsScatteredLargeSetsAsACount) {
  const Plan plan = MakeGather(8, {1, 3, 5, 7});
  ChunkState state(Params(CollectiveKind::kReduce, 8), plan);
  RunSteps(plan, state, 0, 0);
  EXPECT_EQ(state.FormatRanks(1)[0], "GPU0: [A(5 ranks)]");
  EXPECT_EQ(state.Contributors(0, 0, 1), (std::vector<int>{0, 1, 3, 5, 7}));
}

TEST(ChunkState, PrintsTwoRunsAndShortSetsInFull) {
  const Plan few = MakeGather(8, {5, 6, 7});
  ChunkState a(Params(CollectiveKind::kReduce, 8), few);
  RunSteps(few, a, 0, 0);
  EXPECT_EQ(a.FormatRanks(2)[0], "GPU0: [A0+A5+A6+A7, B0+B5+B6+B7]");

  const Plan more = MakeGather(8, {1, 5, 6, 7});
  ChunkState b(Params(CollectiveKind::kReduce, 8), more);
  RunSteps(more, b, 0, 0);
  EXPECT_EQ(b.FormatRanks(1)[0], "GPU0: [A0+A1+A5..7]");
}

TEST(ChunkState, MarksChunksWhoseElementsDisagree) {
  const Plan plan = MakeRingAllReduce(4, 2);
  ChunkState state(Params(CollectiveKind::kAllReduce, 4), plan);
  RunSteps(plan, state, 0, 0);
  // Rank 1 got chunk 0 from rank 0; its chunk 1 is still its own.
  EXPECT_EQ(state.FormatRanks()[1], "GPU1: [A0+A1, B1, C1, D1]");
  EXPECT_EQ(state.FormatRanks(2)[1], "GPU1: [A0+A1*, B1]");
  EXPECT_TRUE(state.Contributors(1, 0, 2).empty());
  EXPECT_EQ(state.Contributors(1, 1, 2), std::vector<int>{1});
}

TEST(ChunkState, ShortensLinesOfManyChunks) {
  const Plan plan = MakeRingAllReduce(4, 8);
  const ChunkState state(Params(CollectiveKind::kAllReduce, 4), plan);
  EXPECT_EQ(state.FormatRanks(16)[0],
            "GPU0: [A0, B0, C0, D0, E0, F0, G0, H0, I0, J0, K0, L0, M0, N0, O0, P0]");
  EXPECT_EQ(state.FormatRanks(20)[0], "GPU0: [A0, B0, C0, D0, E0, F0, G0, H0, ... (20 chunks)]");
}

TEST(ChunkState, AppliesCopyAndReduceThroughAScratchBuffer) {
  // Rank 1 receives rank 0's data into "tmp" (overwrite), adds it into its
  // "data", then copies chunk 0 of "data" over chunk 1 of the same buffer.
  PlanBuilder b("scratch", 2);
  const BufferId d0 = b.AddBuffer(0, "data", 4);
  const BufferId d1 = b.AddBuffer(1, "data", 4);
  const BufferId tmp = b.AddBuffer(1, "tmp", 2);
  b.AddTransfer(0, 1, {d0, 0, 2}, {tmp, 0, 2}, ReduceOp::kNone, 0, {}, {}, {});
  Op reduce;
  reduce.kind = OpKind::kReduce;
  reduce.lane = Lane::kCompute;
  reduce.reduce = ReduceOp::kSum;
  reduce.rank = 1;
  reduce.step = 1;
  reduce.src = {tmp, 0, 2};
  reduce.dst = {d1, 0, 2};
  b.AddOp(reduce);
  Op copy;
  copy.kind = OpKind::kCopy;
  copy.lane = Lane::kCopy;
  copy.rank = 1;
  copy.step = 2;
  copy.src = {d1, 0, 2};
  copy.dst = {d1, 2, 2};
  b.AddOp(copy);
  const Plan plan = b.Finish();

  ChunkState state(Params(CollectiveKind::kAllReduce, 2), plan);
  RunSteps(plan, state, 0, 0);
  EXPECT_EQ(state.FormatRanks()[1], "GPU1: [A1, B1]");  // only tmp changed
  RunSteps(plan, state, 1, 1);
  EXPECT_EQ(state.FormatRanks()[1], "GPU1: [A0+A1, B1]");
  RunSteps(plan, state, 2, 2);
  EXPECT_EQ(state.FormatRanks()[1], "GPU1: [A0+A1, B0+B1]");
}

TEST(ChunkState, IgnoresFailedEventsAndOpsWithoutData) {
  const Plan plan = MakeRingAllReduce(4, 2);
  ChunkState state(Params(CollectiveKind::kAllReduce, 4), plan);
  const auto before = state.FormatRanks();
  state.OnEvent(EventFor(plan, 1, EventStatus::kFailed));  // a Recv that failed
  state.OnEvent(EventFor(plan, 0));                        // a Send moves nothing
  Event stray;
  stray.op = 1'000'000;
  state.OnEvent(stray);
  EXPECT_EQ(state.FormatRanks(), before);
}

TEST(ChunkState, RejectsMismatchedParamsAndOutOfRangeQueries) {
  const Plan plan = MakeRingAllReduce(4, 2);
  EXPECT_THROW(ChunkState(Params(CollectiveKind::kAllReduce, 8), plan), Error);
  const ChunkState state(Params(CollectiveKind::kAllReduce, 4), plan);
  EXPECT_THROW(state.Contributors(4, 0), Error);
  EXPECT_THROW(state.Contributors(0, 4), Error);
  EXPECT_THROW(state.Contributors(0, 2, 2), Error);
}

// --- The generators' plans, run by the simulator, end where the layout in
// collective.h says they must.

Topology Star(int gpus) {
  Topology topology;
  topology.name = "star";
  for (int g = 0; g < gpus; ++g) {
    Node gpu;
    gpu.name = "gpu" + std::to_string(g);
    gpu.device = DeviceSpec{"test-gpu", 10, 100, 1000, 1LL << 30};
    topology.nodes.push_back(gpu);
    topology.gpus.push_back(g);
  }
  Node sw;
  sw.name = "switch";
  sw.kind = NodeKind::kNvSwitch;
  topology.nodes.push_back(sw);
  for (int g = 0; g < gpus; ++g) {
    topology.links.push_back(Link{g, gpus, LinkKind::kNvLink3, 10, 5, 1});
  }
  return topology;
}

struct Expectation {
  CollectiveKind kind;
  CollectiveAlgo algo;
};

class ChunkStateOfCollective : public testing::TestWithParam<Expectation> {};

TEST_P(ChunkStateOfCollective, EndsWithTheLayoutsOutput) {
  constexpr int kRanks = 5;
  CollectiveParams params = Params(GetParam().kind, kRanks);
  params.algo = GetParam().algo;
  params.count = 37;  // uneven chunks (all-to-all: two elements left out)
  params.root = 3;
  RunOptions options;
  options.timing_only = true;
  Executor executor(CreateBackend("sim"), BuildCollective(params), Star(kRanks), options);
  ChunkState state(params, executor.plan());
  executor.RunToEnd(state);

  const std::vector<int> all{0, 1, 2, 3, 4};
  for (int r = 0; r < kRanks; ++r) {
    for (int c = 0; c < kRanks; ++c) {
      const std::vector<int> got = state.Contributors(r, c);
      switch (params.kind) {
        case CollectiveKind::kAllReduce: EXPECT_EQ(got, all); break;
        case CollectiveKind::kReduceScatter:
          if (c == r) {
            EXPECT_EQ(got, all);
          }
          break;
        case CollectiveKind::kAllGather:
        case CollectiveKind::kAllToAll: EXPECT_EQ(got, std::vector<int>{c}); break;
        case CollectiveKind::kBroadcast: EXPECT_EQ(got, std::vector<int>{3}); break;
        case CollectiveKind::kReduce:
          if (r == 3) {
            EXPECT_EQ(got, all);
          }
          break;
      }
      if (HasFailure()) {
        ADD_FAILURE() << "rank " << r << " chunk " << c << "\n"
                      << testing::PrintToString(state.FormatRanks());
        return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Generators, ChunkStateOfCollective,
    testing::Values(Expectation{CollectiveKind::kAllReduce, CollectiveAlgo::kRing},
                    Expectation{CollectiveKind::kAllReduce, CollectiveAlgo::kTree},
                    Expectation{CollectiveKind::kReduceScatter, CollectiveAlgo::kRing},
                    Expectation{CollectiveKind::kAllGather, CollectiveAlgo::kRing},
                    Expectation{CollectiveKind::kBroadcast, CollectiveAlgo::kRing},
                    Expectation{CollectiveKind::kReduce, CollectiveAlgo::kRing},
                    Expectation{CollectiveKind::kAllToAll, CollectiveAlgo::kDirect}),
    [](const testing::TestParamInfo<Expectation>& param_info) {
      std::string name = std::string(CollectiveKindName(param_info.param.kind)) + "_" +
                         CollectiveAlgoName(param_info.param.algo);
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace shardlab
