// TpLayerView: the weights of a tensor-parallel layer as blocks per rank.
// Splits and captions are read from the blocks alone (hand-made ones here,
// and the engine's for every layer kind), a split weight is covered exactly
// once and a replicated one tp times, the panel layout keeps every drawing
// inside the panel and apart, and the collectives get unique short names.
#include "app/gui/model/tp_layer_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "app/gui/model/link_activity.h"
#include "engine/algorithms/tensor_parallel.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab::gui {
namespace {

/// Rank r's block of a rows × cols weight split into n column ranges.
TpTensorBlock ColumnShard(const std::string& name, std::int64_t rows, std::int64_t cols, int n, int r) {
  TpTensorBlock b;
  b.tensor = name;
  b.role = TpTensorRole::kWeight;
  b.rank = r;
  b.block = {0, rows, r * cols / n, cols / n, rows, cols};
  return b;
}

TpTensorBlock RowShard(const std::string& name, std::int64_t rows, std::int64_t cols, int n, int r) {
  TpTensorBlock b;
  b.tensor = name;
  b.rank = r;
  b.block = {r * rows / n, rows / n, 0, cols, rows, cols};
  return b;
}

TpTensorBlock Whole(const std::string& name, std::int64_t rows, std::int64_t cols, int r) {
  TpTensorBlock b;
  b.tensor = name;
  b.rank = r;
  b.block = {0, rows, 0, cols, rows, cols};
  return b;
}

/// Megatron's MLP over n ranks as the engine would list it (biases as
/// one-column tensors, the second bias replicated), plus outputs that the
/// view must ignore.
std::vector<TpTensorBlock> MlpBlocks(int n, std::int64_t h = 32, std::int64_t f = 128) {
  std::vector<TpTensorBlock> blocks;
  for (int r = 0; r < n; ++r) {
    blocks.push_back(ColumnShard("A", h, f, n, r));
    blocks.push_back(RowShard("a", f, 1, n, r));
    blocks.push_back(RowShard("B", f, h, n, r));
    blocks.push_back(Whole("b", h, 1, r));
    TpTensorBlock y = Whole("y", 16, h, r);
    y.role = TpTensorRole::kOutput;
    blocks.push_back(y);
  }
  return blocks;
}

const TpWeightMatrix* Find(const std::vector<TpWeightMatrix>& ms, const std::string& name) {
  for (const TpWeightMatrix& m : ms)
    if (m.tensor == name) return &m;
  return nullptr;
}

float FixedAdvance(const std::string& text) { return 7.0f * static_cast<float>(text.size()); }

bool Inside(const Rect& inner, const Rect& outer, float slack = 0.01f) {
  return inner.min.x >= outer.min.x - slack && inner.min.y >= outer.min.y - slack &&
         inner.max.x <= outer.max.x + slack && inner.max.y <= outer.max.y + slack;
}

TEST(TpLayerView, MlpWeightsAreSplitByColumnsThenRowsAndTheBiasesFollow) {
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(MlpBlocks(4));
  ASSERT_EQ(ms.size(), 4u) << "outputs are not weights";
  EXPECT_EQ(ms[0].tensor, "A") << "in the order the engine lists them";
  const TpWeightMatrix& a = *Find(ms, "A");
  EXPECT_EQ(a.split, TpSplit::kColumns);
  EXPECT_EQ(a.coverage, 1);
  EXPECT_FALSE(a.vector);
  EXPECT_EQ(TpSplitCaptions(a).front(), "A: split by columns (column-parallel)");
  const TpWeightMatrix& b = *Find(ms, "B");
  EXPECT_EQ(b.split, TpSplit::kRows);
  EXPECT_EQ(TpSplitCaptions(b).front(), "B: split by rows (row-parallel)");
  // A column-split bias is one range per rank, not "rows", though stored as a column.
  const TpWeightMatrix& bias1 = *Find(ms, "a");
  EXPECT_TRUE(bias1.vector);
  EXPECT_EQ(bias1.split, TpSplit::kParts);
  EXPECT_EQ(TpSplitCaptions(bias1).front(), "a: split in 4 parts (one per GPU)");
  const TpWeightMatrix& bias2 = *Find(ms, "b");
  EXPECT_EQ(bias2.split, TpSplit::kReplicated);
  EXPECT_EQ(bias2.coverage, 4);
  EXPECT_EQ(TpSplitCaptions(bias2).front(), "b: replicated (all 4 GPUs hold all of it)");
  for (const TpWeightMatrix& m : ms) {
    ASSERT_EQ(m.blocks.size(), 4u);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(m.blocks[static_cast<std::size_t>(r)].rank, r) << m.tensor;
  }
}

TEST(TpLayerView, CaptionsComeFromTheBlocksNotTheName) {
  // A tensor called "B" split by columns is captioned by its columns.
  std::vector<TpTensorBlock> blocks;
  for (int r = 0; r < 2; ++r) blocks.push_back(ColumnShard("B", 8, 8, 2, r));
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(blocks);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(TpSplitCaptions(ms[0]).front(), "B: split by columns (column-parallel)");
  // One rank holding everything is not "replicated".
  const std::vector<TpWeightMatrix> one = TpWeightMatrices({Whole("W", 8, 8, 0)});
  EXPECT_EQ(TpSplitCaptions(one[0]).front(), "W: whole on GPU 0");
}

TEST(TpLayerView, CoverageCountsEveryElementOrSaysItIsUneven) {
  std::vector<TpRankBlock> split;
  for (int r = 0; r < 4; ++r) split.push_back({r, {0, 8, 2 * r, 2, 8, 8}});
  EXPECT_EQ(BlockCoverage(8, 8, split), 1);
  std::vector<TpRankBlock> copies;
  for (int r = 0; r < 3; ++r) copies.push_back({r, {0, 8, 0, 8, 8, 8}});
  EXPECT_EQ(BlockCoverage(8, 8, copies), 3);
  // A hole (columns 6-7 nobody holds) and an overlap are both uneven.
  std::vector<TpRankBlock> hole(split.begin(), split.end() - 1);
  EXPECT_EQ(BlockCoverage(8, 8, hole), -1);
  std::vector<TpRankBlock> overlap = split;
  overlap.push_back({0, {0, 4, 0, 8, 8, 8}});
  EXPECT_EQ(BlockCoverage(8, 8, overlap), -1);
  EXPECT_EQ(ClassifySplit(8, 8, overlap), TpSplit::kOther);
  // A block past the tensor's edge.
  EXPECT_EQ(BlockCoverage(8, 8, {{0, {0, 8, 4, 8, 8, 8}}}), -1);
  // A 2 x 2 grid covers exactly once but is neither rows nor columns.
  const std::vector<TpRankBlock> grid = {
      {0, {0, 4, 0, 4, 8, 8}}, {1, {0, 4, 4, 4, 8, 8}}, {2, {4, 4, 0, 4, 8, 8}}, {3, {4, 4, 4, 4, 8, 8}}};
  EXPECT_EQ(BlockCoverage(8, 8, grid), 1);
  EXPECT_EQ(ClassifySplit(8, 8, grid), TpSplit::kOther);
}

TEST(TpLayerView, BlockRangesAndRankListsReadAsWords) {
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(MlpBlocks(4));
  const TpWeightMatrix& a = *Find(ms, "A");
  EXPECT_EQ(TpBlockRange(a, a.blocks[1]), "rows 0-31, cols 32-63 (32\xC3\x97" "32)");
  const TpWeightMatrix& bias = *Find(ms, "a");
  EXPECT_EQ(TpBlockRange(bias, bias.blocks[2]), "elements 64-95 (32 values)");
  EXPECT_EQ(RankList({3, 1, 2, 0}), "GPUs 0-3");
  EXPECT_EQ(RankList({2}), "GPU 2");
  EXPECT_EQ(RankList({0, 2, 5}), "GPUs 0, 2, 5");
}

/// Checks every geometric promise of a layout of `ms` in a w × h panel.
void ExpectSoundLayout(const std::vector<TpWeightMatrix>& ms, const TpWeightLayout& layout, float w, float h) {
  const Rect panel{{0, 0}, {w, h}};
  ASSERT_EQ(layout.boxes.size(), ms.size());
  EXPECT_LE(layout.height, h + 0.01f);
  std::set<int> seen;
  for (std::size_t i = 0; i < layout.boxes.size(); ++i) {
    const TpWeightBox& box = layout.boxes[i];
    const TpWeightMatrix& m = ms[static_cast<std::size_t>(box.matrix)];
    seen.insert(box.matrix);
    EXPECT_TRUE(Inside(box.item, panel)) << m.tensor;
    EXPECT_TRUE(Inside(box.shape, box.item)) << m.tensor;
    EXPECT_TRUE(Inside(box.title, box.item)) << m.tensor;
    EXPECT_TRUE(Inside(box.caption, box.item)) << m.tensor;
    EXPECT_FALSE(box.shape.Overlaps(box.title)) << m.tensor;
    ASSERT_EQ(box.blocks.size(), m.blocks.size());
    double block_area = 0;
    for (const Rect& r : box.blocks) {
      EXPECT_TRUE(Inside(r, box.shape)) << m.tensor;
      block_area += static_cast<double>(r.width()) * r.height();
    }
    if (m.split == TpSplit::kColumns || m.split == TpSplit::kRows || m.split == TpSplit::kParts) {
      // An exact split tiles the drawing: the blocks' areas add up to it.
      EXPECT_NEAR(block_area, static_cast<double>(box.shape.width()) * box.shape.height(), 0.5) << m.tensor;
    }
    if (m.split == TpSplit::kColumns) {
      for (std::size_t k = 0; k + 1 < box.blocks.size(); ++k) {
        EXPECT_NEAR(box.blocks[k].max.x, box.blocks[k + 1].min.x, 1e-3) << "columns side by side";
      }
    }
    if (m.split == TpSplit::kRows) {
      for (std::size_t k = 0; k + 1 < box.blocks.size(); ++k) {
        EXPECT_NEAR(box.blocks[k].max.y, box.blocks[k + 1].min.y, 1e-3) << "rows stacked";
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(box.item.Overlaps(layout.boxes[j].item))
          << m.tensor << " and " << ms[static_cast<std::size_t>(layout.boxes[j].matrix)].tensor;
    }
  }
  EXPECT_EQ(seen.size(), ms.size()) << "every weight once";
}

TEST(TpLayerView, LayoutKeepsEveryWeightInsideAndApartAtOneScale) {
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(MlpBlocks(4));
  for (const auto& [w, h] : std::vector<std::pair<float, float>>{{640, 330}, {300, 500}, {1200, 200}}) {
    const TpWeightLayout layout = LayoutTpWeights(ms, w, h, 14, FixedAdvance);
    ExpectSoundLayout(ms, layout, w, h);
    // A (32×128) and B (128×32) at one scale: the same area, turned.
    const TpWeightBox* a = nullptr;
    const TpWeightBox* b = nullptr;
    for (const TpWeightBox& box : layout.boxes) {
      if (ms[static_cast<std::size_t>(box.matrix)].tensor == "A") a = &box;
      if (ms[static_cast<std::size_t>(box.matrix)].tensor == "B") b = &box;
    }
    ASSERT_TRUE(a != nullptr && b != nullptr);
    EXPECT_NEAR(a->shape.width(), b->shape.height(), 1e-3);
    EXPECT_NEAR(a->shape.height(), b->shape.width(), 1e-3);
    EXPECT_NEAR(a->shape.width() / a->shape.height(), 4.0, 1e-3) << "aspect ratio kept";
  }
}

TEST(TpLayerView, ExtremeAspectRatiosAreClampedAndCopiesStack) {
  std::vector<TpTensorBlock> blocks;
  for (int r = 0; r < 4; ++r) {
    blocks.push_back(ColumnShard("Wide", 16, 1024, 4, r));  // 64:1
    blocks.push_back(Whole("Norm", 16, 16, r));              // replicated matrix
  }
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(blocks);
  const TpWeightLayout layout = LayoutTpWeights(ms, 600, 300, 14, FixedAdvance);
  ExpectSoundLayout(ms, layout, 600, 300);
  const TpWeightBox& wide = layout.boxes[0];
  EXPECT_NEAR(wide.shape.width() / wide.shape.height(), kMaxAspect, 1e-3);
  // The stack: four copies of one size, each a step right and down.
  const TpWeightBox& norm = layout.boxes[1];
  ASSERT_EQ(norm.blocks.size(), 4u);
  for (std::size_t k = 1; k < 4; ++k) {
    EXPECT_NEAR(norm.blocks[k].min.x - norm.blocks[k - 1].min.x, kStackStepPx, 1e-3);
    EXPECT_NEAR(norm.blocks[k].width(), norm.blocks[0].width(), 1e-3);
  }
}

TEST(TpLayerView, ManyWeightsStillFitASmallPanel) {
  // A transformer's worth: six matrices and ten vectors.
  std::vector<TpTensorBlock> blocks;
  const int n = 4;
  for (int r = 0; r < n; ++r) {
    for (const char* name : {"ln1_g", "ln1_b"}) blocks.push_back(Whole(name, 64, 1, r));
    for (const char* name : {"Wq", "Wk", "Wv"}) blocks.push_back(ColumnShard(name, 64, 64, n, r));
    for (const char* name : {"bq", "bk", "bv"}) blocks.push_back(RowShard(name, 64, 1, n, r));
    blocks.push_back(RowShard("Wo", 64, 64, n, r));
    blocks.push_back(Whole("bo", 64, 1, r));
    for (const char* name : {"ln2_g", "ln2_b"}) blocks.push_back(Whole(name, 64, 1, r));
    blocks.push_back(ColumnShard("W1", 64, 256, n, r));
    blocks.push_back(RowShard("b1", 256, 1, n, r));
    blocks.push_back(RowShard("W2", 256, 64, n, r));
    blocks.push_back(Whole("b2", 64, 1, r));
  }
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(blocks);
  ASSERT_EQ(ms.size(), 16u);
  const TpWeightLayout layout = LayoutTpWeights(ms, 640, 330, 14, FixedAdvance);
  ExpectSoundLayout(ms, layout, 640, 330);
  // Matrices first, vectors after them.
  bool vectors_started = false;
  for (const TpWeightBox& box : layout.boxes) {
    const bool vector = ms[static_cast<std::size_t>(box.matrix)].vector;
    EXPECT_FALSE(vectors_started && !vector) << "a matrix after the vectors";
    vectors_started = vectors_started || vector;
  }
}

TEST(TpLayerView, CollectivesGetUniqueNamesPerKind) {
  std::vector<TpCollective> mlp(2);
  mlp[0] = {0, GroupCollectiveKind::kAllReduce, true, 512, "MLP output (g)"};
  mlp[1] = {1, GroupCollectiveKind::kAllReduce, false, 512, "MLP input gradient (f)"};
  const std::vector<TpCollectiveName> names = NameTpCollectives(mlp);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].name, "AR1 fwd");
  EXPECT_EQ(names[1].name, "AR2 bwd");
  EXPECT_TRUE(names[0].two_passes);
  EXPECT_EQ(FindTpCollective(names, 1)->what, "MLP input gradient (f)");
  EXPECT_EQ(FindTpCollective(names, 7), nullptr);

  std::vector<TpCollective> sp = {
      {0, GroupCollectiveKind::kAllGather, true, 512, "MLP input"},
      {1, GroupCollectiveKind::kReduceScatter, true, 512, "MLP output"},
      {2, GroupCollectiveKind::kAllGather, false, 512, "MLP output gradient"},
      {3, GroupCollectiveKind::kReduceScatter, false, 512, "MLP input gradient"},
  };
  std::set<std::string> tags;
  for (const TpCollectiveName& n : NameTpCollectives(sp)) {
    EXPECT_FALSE(n.two_passes);
    tags.insert(n.tag);
  }
  EXPECT_EQ(tags, (std::set<std::string>{"AG1", "RS1", "AG2", "RS2"}));
}

TEST(TpLayerView, TransferLabelsNameTheCollectiveItsPassAndTheChunk) {
  OpTags tags;
  tags.phase = Phase::kReduceScatter;
  tags.chunk = 1;
  EXPECT_EQ(TransferLabel(tags, CollectiveLabel{"AR1", true}), "AR1 RS\xC2\xB7" "B");
  tags.phase = Phase::kAllGather;
  tags.chunk = 2;
  EXPECT_EQ(TransferLabel(tags, CollectiveLabel{"AR2", true}), "AR2 AG\xC2\xB7" "C");
  EXPECT_EQ(TransferLabel(tags, CollectiveLabel{"AG1", false}), "AG1\xC2\xB7" "C");
  EXPECT_EQ(TransferLabel(tags, CollectiveLabel{}), "C") << "no name: the plain chunk letter";
}

TEST(TpLayerView, RanksComputingAtATimeFollowTheComputeLanes) {
  Plan plan;
  plan.num_ranks = 3;
  plan.ops.resize(3);
  plan.ops[0].tags.phase = Phase::kForward;
  plan.ops[1].tags.phase = Phase::kBackward;
  plan.ops[2].kind = OpKind::kSend;
  auto event = [](int op, int rank, Lane lane, OpKind kind, TimeNs start, TimeNs end) {
    Event e;
    e.op = op;
    e.rank = rank;
    e.lane = lane;
    e.kind = kind;
    e.start_ns = start;
    e.end_ns = end;
    return e;
  };
  TimelineStore store;
  const std::vector<Event> events = {
      event(0, 0, Lane::kCompute, OpKind::kCompute, 0, 10),
      event(1, 0, Lane::kCompute, OpKind::kCompute, 20, 30),
      event(0, 1, Lane::kCompute, OpKind::kCompute, 5, 15),
      event(2, 2, Lane::kSend, OpKind::kSend, 0, 30),  // sending is not computing
  };
  store.Add(events);
  auto ranks_where = [&](TimeNs t, bool (*pick)(const RankCompute&)) {
    std::vector<int> out;
    const std::vector<RankCompute> ranks = RanksComputingAt(store, plan, t);
    for (std::size_t r = 0; r < ranks.size(); ++r)
      if (pick(ranks[r])) out.push_back(static_cast<int>(r));
    return out;
  };
  auto busy = [&](TimeNs t) { return ranks_where(t, [](const RankCompute& r) { return r.busy; }); };
  auto lit = [&](TimeNs t) { return ranks_where(t, [](const RankCompute& r) { return r.lit(); }); };
  EXPECT_EQ(busy(0), (std::vector<int>{0}));
  EXPECT_EQ(busy(7), (std::vector<int>{0, 1}));
  EXPECT_EQ(busy(10), (std::vector<int>{1})) << "an op that ends at t is over";
  EXPECT_EQ(lit(10), (std::vector<int>{0, 1})) << "but lit: paused right after it";
  EXPECT_TRUE(RanksComputingAt(store, plan, 10)[0].just_done);
  EXPECT_EQ(busy(17), (std::vector<int>{}));
  EXPECT_EQ(lit(17), (std::vector<int>{}));
  EXPECT_EQ(busy(20), (std::vector<int>{0})) << "starting at t counts";
  EXPECT_EQ(busy(25), (std::vector<int>{0}));
  EXPECT_EQ(RanksComputingAt(store, plan, 25)[0].phase, Phase::kBackward);
  EXPECT_EQ(RanksComputingAt(store, plan, 2)[0].phase, Phase::kForward);
  EXPECT_EQ(RanksComputingAt(store, plan, 30)[0].phase, Phase::kBackward) << "just done";
}

// --- The engine's own layers ----------------------------------------------

TpLayerConfig Layer(TpLayerKind kind, int tp, bool sp = false) {
  TpLayerConfig c;
  c.kind = kind;
  c.tp = tp;
  c.batch = 2;
  c.seq = 8;
  c.hidden = 32;
  c.heads = c.has_attention() ? 4 : 0;
  c.sequence_parallel = sp;
  return c;
}

TEST(TpLayerView, EveryEngineWeightIsSplitOnceOrHeldByEveryRank) {
  for (TpLayerKind kind : {TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear, TpLayerKind::kMlp,
                           TpLayerKind::kAttention, TpLayerKind::kTransformer}) {
    for (int tp : {1, 2, 4}) {
      for (bool sp : {false, true}) {
        const bool linear = kind == TpLayerKind::kColumnLinear || kind == TpLayerKind::kRowLinear;
        if (sp && (linear || tp == 1)) continue;
        const TpLayerConfig config = Layer(kind, tp, sp);
        SCOPED_TRACE(std::string(TpLayerKindName(kind)) + " tp " + std::to_string(tp) + (sp ? " SP" : ""));
        const TpLayerPlan layer = BuildTpLayer(config);
        const std::vector<TpWeightMatrix> ms = TpWeightMatrices(layer.blocks);
        ASSERT_FALSE(ms.empty());
        int by_columns = 0, by_rows = 0;
        for (const TpWeightMatrix& m : ms) {
          EXPECT_TRUE(m.coverage == 1 || m.coverage == tp) << m.tensor << " covered " << m.coverage;
          EXPECT_NE(m.split, TpSplit::kOther) << m.tensor;
          for (const TpRankBlock& b : m.blocks) {
            EXPECT_GE(b.rank, 0);
            EXPECT_LT(b.rank, tp);
          }
          if (tp > 1 && m.split == TpSplit::kColumns) ++by_columns;
          if (tp > 1 && m.split == TpSplit::kRows) ++by_rows;
        }
        if (tp > 1 && kind != TpLayerKind::kRowLinear) {
          EXPECT_GT(by_columns, 0) << "a column-parallel weight";
        }
        if (tp > 1 && kind != TpLayerKind::kColumnLinear) {
          EXPECT_GT(by_rows, 0) << "a row-parallel weight";
        }
        const TpWeightLayout layout = LayoutTpWeights(ms, 640, 330, 14, FixedAdvance);
        ExpectSoundLayout(ms, layout, 640, std::max(330.0f, layout.height));
        // Every collective of the plan has a unique name.
        std::set<std::string> names;
        for (const TpCollectiveName& n : NameTpCollectives(layer.collectives)) names.insert(n.name);
        EXPECT_EQ(names.size(), layer.collectives.size());
      }
    }
  }
}

TEST(TpLayerView, TransformerWeightsComeInTheEnginesTensorOrder) {
  const TpLayerPlan layer = BuildTpLayer(Layer(TpLayerKind::kTransformer, 4, true));
  std::vector<std::string> want;
  for (const TpTensorSpec& spec : TpLayerTensors(layer.config))
    if (spec.weight) want.push_back(spec.name);
  std::vector<std::string> got;
  for (const TpWeightMatrix& m : TpWeightMatrices(layer)) got.push_back(m.tensor);
  EXPECT_EQ(got, want);
  // Attention's projections split as Megatron splits them.
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(layer);
  for (const char* name : {"Wq", "Wk", "Wv"}) {
    ASSERT_NE(Find(ms, name), nullptr) << name;
    EXPECT_EQ(Find(ms, name)->split, TpSplit::kColumns) << name;
  }
  ASSERT_NE(Find(ms, "Wo"), nullptr);
  EXPECT_EQ(Find(ms, "Wo")->split, TpSplit::kRows);
}

// The weights view lights the blocks the running op uses: each compute op
// of the transformer touches only its own rank's weights, the attention
// weights and the MLP's are in use at different ops, and every weight block
// is used by some forward op of its rank.
TEST(TpLayerView, ComputeOpsUseTheirRanksWeightsAttentionAndMlpApart) {
  const TpLayerPlan layer = BuildTpLayer(Layer(TpLayerKind::kTransformer, 2));
  const std::vector<TpWeightMatrix> ms = TpWeightMatrices(layer);
  std::set<std::pair<std::string, int>> used_forward;
  bool attention_and_mlp_together = false;
  for (std::size_t op = 0; op < layer.plan.ops.size(); ++op) {
    const Op& o = layer.plan.ops[op];
    if (o.kind != OpKind::kCompute) {
      EXPECT_TRUE(BuffersOfOp(layer.plan, static_cast<int>(op)).empty());
      continue;
    }
    const std::vector<BufferId> buffers = BuffersOfOp(layer.plan, static_cast<int>(op));
    EXPECT_TRUE(std::is_sorted(buffers.begin(), buffers.end()));
    bool attention = false, mlp = false;
    for (const TpWeightMatrix& m : ms) {
      for (const TpRankBlock& b : m.blocks) {
        if (!std::binary_search(buffers.begin(), buffers.end(), b.buffer)) continue;
        EXPECT_EQ(b.rank, o.rank) << m.tensor << " of another rank in op " << op;
        if (o.tags.phase == Phase::kForward) used_forward.insert({m.tensor, b.rank});
        (m.tensor[0] == 'W' || m.tensor.size() == 2 ? attention : mlp) = true;
      }
    }
    attention_and_mlp_together = attention_and_mlp_together || (attention && mlp);
  }
  EXPECT_FALSE(attention_and_mlp_together) << "one op used attention's and the MLP's weights";
  for (const TpWeightMatrix& m : ms) {
    for (const TpRankBlock& b : m.blocks) {
      EXPECT_TRUE(used_forward.count({m.tensor, b.rank})) << m.tensor << " of rank " << b.rank << " never used forward";
    }
  }
}

TEST(TpLayerView, MachineViewNamesEveryTransferOfTheMlpByItsAllReduce) {
  const TpLayerPlan layer = BuildTpLayer(Layer(TpLayerKind::kMlp, 4));
  const Topology topology = MakeTopologyPreset("dgx-a100");
  Executor run(CreateBackend("sim"), layer.plan, topology);
  VectorSink sink;
  run.RunToEnd(sink);
  TimelineStore store;
  store.Add(sink.events);
  LinkActivity activity(topology, layer.plan);
  const std::vector<TpCollectiveName> names = NameTpCollectives(layer.collectives);
  std::vector<CollectiveLabel> labels;
  for (const TpCollectiveName& n : names) {
    if (labels.size() <= static_cast<std::size_t>(n.seq)) labels.resize(static_cast<std::size_t>(n.seq) + 1);
    labels[static_cast<std::size_t>(n.seq)] = {n.tag, n.two_passes};
  }
  activity.SetCollectiveLabels(labels);
  int seen = 0;
  for (const Event& e : sink.events) {
    if (e.kind != OpKind::kRecv) continue;
    activity.Update(store, (e.start_ns + e.end_ns) / 2);
    for (const InFlight& f : activity.in_flight()) {
      const TpCollectiveName* n = FindTpCollective(names, f.collective_seq);
      ASSERT_NE(n, nullptr) << f.label;
      EXPECT_EQ(f.label.rfind(n->tag + (f.phase == Phase::kReduceScatter ? " RS" : " AG"), 0), 0u) << f.label;
      ++seen;
    }
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace shardlab::gui
