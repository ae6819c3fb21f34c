// The collectives' table (engine/plan/collective_def.h) walked def by def:
// every kind of the enum has one; names are unique and parse back; the bus
// factor is nccl-tests'; the reference agrees with a single-device
// computation; the chunk semantics agree with the reference; and every
// algorithm of every def builds a valid plan of its step count that runs
// correct on the host and the simulator, with ChunkState ending where the
// def says. Generic checks run for every registered def (a test's own, as
// tests/collective_added/sendrecv_collective_test.cpp registers, included:
// this file is built into that executable too); the hand-written
// references below are keyed by nccl-tests' program name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "engine/algorithms/collective_internal.h"
#include "engine/core/error.h"
#include "engine/core/fill.h"
#include "engine/run/chunk_state.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

using testing::Describe;
using testing::MakeParams;

constexpr CollectiveKind kEnumKinds[] = {
    CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
    CollectiveKind::kBroadcast, CollectiveKind::kReduce,        CollectiveKind::kAllToAll,
};

// nccl-tests' busBw factors (src/*.cu, *GetBw), by program.
const std::map<std::string, std::function<double(int)>>& NcclTestsFactors() {
  static const std::map<std::string, std::function<double(int)>> factors = {
      {"all_reduce_perf", [](int n) { return 2.0 * (n - 1) / n; }},
      {"reduce_scatter_perf", [](int n) { return 1.0 * (n - 1) / n; }},
      {"all_gather_perf", [](int n) { return 1.0 * (n - 1) / n; }},
      {"alltoall_perf", [](int n) { return 1.0 * (n - 1) / n; }},
      {"broadcast_perf", [](int) { return 1.0; }},
      {"reduce_perf", [](int) { return 1.0; }},
      {"sendrecv_perf", [](int) { return 1.0; }},
  };
  return factors;
}

// An element of a rank's output: not part of the result (NaN), or a value.
using Outputs = std::vector<std::vector<float>>;
constexpr float kUnchecked = NAN;

float Reduce(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
    default: return a + b;
  }
}

// The single-device computation: every rank's input on one host, the
// outputs written out by hand as the collective's definition says.
Outputs HandReference(const std::string& program, const CollectiveParams& p,
                      const std::vector<std::vector<float>>& in) {
  const int n = p.ranks;
  const std::int64_t count = p.count;
  Outputs out(static_cast<std::size_t>(n), std::vector<float>(static_cast<std::size_t>(count), kUnchecked));
  std::vector<float> reduced(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    float acc = in[0][i];
    for (int r = 1; r < n; ++r) acc = Reduce(p.op, acc, in[r][i]);
    reduced[i] = acc;
  }
  auto chunk_of = [&](std::int64_t i) {  // even chunks: the c with ChunkBegin(c) <= i < ChunkBegin(c+1)
    int c = 0;
    while (ChunkBegin(count, n, c + 1) <= i) ++c;
    return c;
  };
  for (int r = 0; r < n; ++r) {
    for (std::int64_t i = 0; i < count; ++i) {
      float& o = out[r][i];
      if (program == "all_reduce_perf") o = reduced[i];
      if (program == "reduce_scatter_perf" && chunk_of(i) == r) o = reduced[i];
      if (program == "all_gather_perf") o = in[chunk_of(i)][i];
      if (program == "broadcast_perf") o = in[p.root][i];
      if (program == "reduce_perf" && r == p.root) o = reduced[i];
      if (program == "alltoall_perf") {
        const std::int64_t b = count / n;
        o = i < n * b ? in[i / b][r * b + i % b] : 0.0f;
      }
      if (program == "sendrecv_perf") o = in[(r + n - 1) % n][i];
    }
  }
  return out;
}

// The def's reference written out into buffers, from the same inputs.
class Materialize : public ReferenceSink {
 public:
  Materialize(const CollectiveParams& p, const std::vector<std::vector<float>>& in)
      : p_(p), in_(in),
        out_(static_cast<std::size_t>(p.ranks), std::vector<float>(static_cast<std::size_t>(p.count), kUnchecked)) {}
  void Reduced(int rank, std::int64_t begin, std::int64_t end) override {
    for (std::int64_t i = begin; i < end; ++i) {
      float acc = in_[0][i];
      for (int r = 1; r < p_.ranks; ++r) acc = Reduce(p_.op, acc, in_[r][i]);
      Set(rank, i, acc);
    }
  }
  void Copied(int rank, std::int64_t begin, std::int64_t end, int from, std::int64_t from_begin) override {
    for (std::int64_t i = begin; i < end; ++i) Set(rank, i, in_.at(from).at(from_begin + i - begin));
  }
  void Zero(int rank, std::int64_t begin, std::int64_t end) override {
    for (std::int64_t i = begin; i < end; ++i) Set(rank, i, 0.0f);
  }
  const Outputs& out() const { return out_; }
  int twice = 0;  // elements a region named again

 private:
  void Set(int rank, std::int64_t i, float v) {
    float& o = out_.at(rank).at(i);
    if (!std::isnan(o)) ++twice;
    o = v;
  }
  const CollectiveParams& p_;
  const std::vector<std::vector<float>>& in_;
  Outputs out_;
};

std::vector<std::vector<float>> Inputs(const CollectiveParams& p, std::uint64_t seed) {
  std::vector<std::vector<float>> in(static_cast<std::size_t>(p.ranks));
  for (int r = 0; r < p.ranks; ++r)
    for (std::int64_t i = 0; i < p.count; ++i) in[r].push_back(InputValue(seed, r, i));
  return in;
}

bool SameOutputs(const Outputs& a, const Outputs& b, std::string* where) {
  for (std::size_t r = 0; r < a.size(); ++r)
    for (std::size_t i = 0; i < a[r].size(); ++i) {
      const bool na = std::isnan(a[r][i]), nb = std::isnan(b[r][i]);
      if (na != nb || (!na && a[r][i] != b[r][i])) {
        *where = "rank " + std::to_string(r) + " element " + std::to_string(i) + ": " +
                 std::to_string(a[r][i]) + " vs " + std::to_string(b[r][i]);
        return false;
      }
    }
  return true;
}

// Chunk c of a rank's output as the def cuts it.
std::pair<std::int64_t, std::int64_t> Chunk(const CollectiveDef& def, std::int64_t count, int n, int c) {
  if (def.chunks == ChunkCut::kBlocks) return {c * (count / n), (c + 1) * (count / n)};
  return {ChunkBegin(count, n, c), ChunkBegin(count, n, c + 1)};
}

CollectiveParams ParamsFor(const CollectiveDef& def, CollectiveAlgo algo, int n, std::int64_t count) {
  CollectiveParams p = MakeParams(def.kind, algo, n, count);
  p.root = n - 1;
  p.op = def.reduces ? ReduceOp::kSum : ReduceOp::kNone;
  p.tree_chunks = 2;
  return p;
}

TEST(CollectiveTable, EveryKindHasOneDefInKindOrder) {
  const std::vector<const CollectiveDef*> all = Collectives();
  for (const CollectiveKind kind : kEnumKinds) {
    const CollectiveDef* def = FindCollective(kind);
    ASSERT_NE(def, nullptr) << static_cast<int>(kind);
    EXPECT_EQ(def->kind, kind);
    EXPECT_EQ(&CollectiveDefOf(kind), def);
    EXPECT_EQ(std::count(all.begin(), all.end(), def), 1);
  }
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1]->kind, all[i]->kind);
  // The built-ins first, in the enum's order, as every list shows them.
  for (std::size_t i = 0; i < std::size(kEnumKinds); ++i) EXPECT_EQ(all.at(i)->kind, kEnumKinds[i]);
  // Their titles parse too: "all-reduce", "reduce-scatter", "all-to-all".
  for (const CollectiveKind kind : kEnumKinds) EXPECT_EQ(ParseCollectiveKind(CollectiveTitle(kind)), kind);
  EXPECT_EQ(FindCollective(static_cast<CollectiveKind>(250)), nullptr);
  EXPECT_THROW(CollectiveDefOf(static_cast<CollectiveKind>(250)), Error);
}

TEST(CollectiveTable, NamesAreUniqueAndParseBack) {
  std::set<std::string> names, titles, tags, programs;
  for (const CollectiveDef* def : Collectives()) {
    EXPECT_TRUE(names.insert(def->name).second) << def->name;
    EXPECT_TRUE(titles.insert(def->title).second) << def->title;
    EXPECT_TRUE(tags.insert(def->tag).second) << def->tag;
    EXPECT_TRUE(programs.insert(def->nccl_tests).second) << def->nccl_tests;
    EXPECT_EQ(ParseCollectiveKind(def->name), def->kind);
    EXPECT_STREQ(CollectiveKindName(def->kind), def->name);
    EXPECT_STREQ(CollectiveTitle(def->kind), def->title);
    EXPECT_NE(std::string(def->tag), "");
    EXPECT_EQ(CollectiveReduces(def->kind), def->reduces);
    EXPECT_EQ(CollectiveHasRoot(def->kind), def->root != RootRole::kNone);
    EXPECT_EQ(LibraryCallOf(def->kind), def->library);
    EXPECT_EQ(CollectiveHasAlgo(def->kind, CollectiveAlgo::kNccl), def->library != LibraryCollective::kNone);
    EXPECT_EQ(CollectiveAlgosFor(def->kind).size(), def->algos.size()) << def->name;
    if (!def->algos.empty()) {
      EXPECT_EQ(DefaultAlgo(def->kind), def->algos.front().algo);
    }
  }
}

TEST(CollectiveTable, BusFactorIsNcclTests) {
  for (const CollectiveDef* def : Collectives()) {
    const auto it = NcclTestsFactors().find(def->nccl_tests);
    ASSERT_NE(it, NcclTestsFactors().end()) << def->name << ": no nccl-tests factor for " << def->nccl_tests;
    for (const int n : {1, 2, 3, 4, 7, 8, 16, 1024}) {
      EXPECT_DOUBLE_EQ(BusBandwidthFactor(def->kind, n), it->second(n)) << def->name << " n=" << n;
      // The text the app shows beside busbw says the same: "2(n-1)/n", "(n-1)/n", "1".
      const std::string text = def->busbw_formula;
      const double from_text = text == "1" ? 1.0 : text == "(n-1)/n" ? (n - 1.0) / n
                               : text == "2(n-1)/n" ? 2.0 * (n - 1) / n : -1.0;
      EXPECT_DOUBLE_EQ(from_text, it->second(n)) << def->name << " '" << text << "'";
    }
  }
}

TEST(CollectiveTable, TheReferenceIsTheSingleDeviceComputation) {
  for (const CollectiveDef* def : Collectives()) {
    for (const int n : {1, 2, 3, 5}) {
      for (const std::int64_t count : {0, 1, 4, 7, 12, 13}) {
        for (const ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
          if (!def->reduces && op != ReduceOp::kSum) continue;
          CollectiveParams p = ParamsFor(*def, def->algos.empty() ? CollectiveAlgo::kNccl
                                                                  : def->algos.front().algo, n, count);
          p.op = def->reduces ? op : ReduceOp::kNone;
          const auto in = Inputs(p, 11);
          Materialize mine(p, in);
          def->reference(p, mine);
          EXPECT_EQ(mine.twice, 0) << Describe(p) << ": a region names an element twice";
          std::string where;
          EXPECT_TRUE(SameOutputs(mine.out(), HandReference(def->nccl_tests, p, in), &where))
              << Describe(p) << " op " << static_cast<int>(op) << ": " << where;
        }
      }
    }
  }
}

// final_contributors says what the reference says, chunk by chunk: all
// ranks where it reduces, rank s where it copies rank s's input.
TEST(CollectiveTable, ChunkSemanticsAgreeWithTheReference) {
  for (const CollectiveDef* def : Collectives()) {
    for (const int n : {1, 2, 3, 4}) {
      const std::int64_t count = 8 * n + 3;
      const CollectiveParams p = ParamsFor(*def, CollectiveAlgo::kRing, n, count);
      // Each rank's input is its rank number plus one: a reduced sum is
      // n(n+1)/2 with max n, a copy from s is s + 1 (sum of inputs ≠ any one).
      std::vector<std::vector<float>> in(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) in[r].assign(static_cast<std::size_t>(count), static_cast<float>(r + 1));
      Materialize ref(p, in);
      def->reference(p, ref);
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
          const std::vector<int> final_set = def->final_contributors(p, r, c);
          const auto [begin, end] = Chunk(*def, count, n, c);
          for (std::int64_t i = begin; i < end; ++i) {
            const float v = ref.out()[r][i];
            std::vector<int> expected;
            if (!std::isnan(v) && v != 0.0f) {
              if (def->reduces && (n == 1 || v == n * (n + 1) / 2.0f)) expected = detail::AllRanks(n);
              else expected = {static_cast<int>(v) - 1};
            }
            EXPECT_EQ(final_set, expected) << def->name << " n=" << n << " rank " << r << " chunk " << c
                                           << " element " << i;
          }
        }
      }
    }
  }
}

TEST(CollectiveTable, EveryAlgorithmBuildsItsStepsAndRunsCorrect) {
  for (const CollectiveDef* def : Collectives()) {
    for (const CollectiveAlgoDef& algo : def->algos) {
      EXPECT_TRUE(CollectiveHasAlgo(def->kind, algo.algo));
      for (const int n : {1, 2, 3, 5, 8}) {
        for (const std::int64_t count : {0, 1, 13, 1003}) {
          const CollectiveParams p = ParamsFor(*def, algo.algo, n, count);
          const testing::HostRun host = testing::RunOnHost(p, 3);  // validates the plan too
          EXPECT_TRUE(host.verify.correct) << Describe(p) << " wrong " << host.verify.wrong;
          EXPECT_EQ(host.plan.num_steps, ExpectedSteps(p)) << Describe(p);
          EXPECT_EQ(host.plan.num_steps, algo.steps(p)) << Describe(p);
          EXPECT_LE(static_cast<std::int64_t>(host.plan.ops.size()), algo.ops(p)) << Describe(p);
          ASSERT_EQ(host.plan.collectives.size(), 1u);
          EXPECT_EQ(host.plan.collectives[0].tag, def->tag);
          EXPECT_EQ(host.plan.collectives[0].two_passes, algo.two_passes);

          // The simulator, with ChunkState following the events: every
          // chunk ends holding what the def's final_contributors says.
          RunOptions options;
          options.seed = 3;
          Executor ex(CreateBackend("sim"), BuildCollective(p), MakeSharedBus(n, 100, 500), options);
          ChunkState chunks(p, ex.plan());
          struct Both : EventSink {
            ChunkState* chunks;
            VectorSink events;
            void OnEvent(const Event& e) override {
              chunks->OnEvent(e);
              events.OnEvent(e);
            }
          } sink;
          sink.chunks = &chunks;
          ex.RunToEnd(sink);
          ASSERT_EQ(ex.state(), ExecutorState::kDone) << Describe(p) << ": " << ex.error();
          const VerifyResult sim = VerifyCollective(
              p, ex.plan(), 3, [&ex](BufferId id) { return ex.backend().BufferData(id); });
          EXPECT_TRUE(sim.correct) << Describe(p);
          EXPECT_EQ(sim.checked, host.verify.checked) << Describe(p);
          for (int r = 0; r < n; ++r) {
            for (int c = 0; c < n; ++c) {
              const auto [begin, end] = Chunk(*def, count, n, c);
              if (begin == end) continue;  // an empty chunk holds nothing
              const std::vector<int> final_set = def->final_contributors(p, r, c);
              if (final_set.empty()) continue;  // not part of the result: anything goes
              EXPECT_EQ(chunks.Contributors(r, c), final_set) << Describe(p) << " rank " << r << " chunk " << c;
            }
          }
        }
      }
    }
  }
}

TEST(CollectiveTable, TheNcclCounterpartIsOneCallPerRank) {
  for (const CollectiveDef* def : Collectives()) {
    if (def->library == LibraryCollective::kNone) continue;
    const int n = 4;
    const CollectiveParams p = ParamsFor(*def, CollectiveAlgo::kNccl, n, 64);
    const Plan plan = BuildCollective(p);
    ASSERT_EQ(plan.ops.size(), static_cast<std::size_t>(n)) << def->name;
    EXPECT_EQ(ExpectedSteps(p), 1);
    for (const Op& op : plan.ops) {
      EXPECT_EQ(op.kind, OpKind::kCollective);
      EXPECT_EQ(op.library, def->library);
      EXPECT_EQ(op.tags.phase, def->nccl_phase);
      EXPECT_EQ(op.peer, def->root != RootRole::kNone ? p.root : -1);
      EXPECT_EQ(op.dst.buffer, def->separate_output() ? n + op.rank : op.rank);
    }
    CollectiveParams odd = ParamsFor(*def, CollectiveAlgo::kNccl, n, 65);
    if (def->nccl_equal_chunks) {
      EXPECT_THROW(BuildCollective(odd), Error) << def->name;
    } else {
      EXPECT_NO_THROW(BuildCollective(odd)) << def->name;
    }
  }
}

TEST(CollectiveTable, RegisteringAnIncompleteOrClashingDefIsRefused) {
  CollectiveDef bare;
  bare.kind = static_cast<CollectiveKind>(240);
  bare.name = "bare";
  EXPECT_THROW(RegisterCollective(bare), Error);  // no functions
  CollectiveDef clash = CollectiveDefOf(CollectiveKind::kAllReduce);
  clash.kind = static_cast<CollectiveKind>(241);  // "allreduce" again under another kind
  EXPECT_THROW(RegisterCollective(clash), Error);
  CollectiveDef nccl_in_algos = CollectiveDefOf(CollectiveKind::kAllReduce);
  nccl_in_algos.kind = static_cast<CollectiveKind>(242);
  nccl_in_algos.name = "nccl_in_algos";
  nccl_in_algos.algos.front().algo = CollectiveAlgo::kNccl;
  EXPECT_THROW(RegisterCollective(nccl_in_algos), Error);
  EXPECT_EQ(FindCollective(static_cast<CollectiveKind>(240)), nullptr);
  EXPECT_EQ(FindCollective(static_cast<CollectiveKind>(241)), nullptr);
  EXPECT_EQ(FindCollective(static_cast<CollectiveKind>(242)), nullptr);
}

}  // namespace
}  // namespace shardlab
