// 16-bit plans report the bytes they move: every transfer's bytes equal its
// buffer's element size times the elements it sends, so a backend that
// moves the dtype (2 bytes for fp16 and bf16) moves exactly what the plan
// reports, and the simulator times the same bytes.
#include <gtest/gtest.h>

#include <string>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/three_d.h"
#include "engine/algorithms/zero.h"
#include "engine/model/model_presets.h"

namespace shardlab {
namespace {

// Returns how many transfers were checked.
std::size_t ExpectTransferBytesAreElementSizeTimesCount(const Plan& plan, const std::string& what) {
  std::size_t checked = 0;
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) continue;
    const BufferSlice& slice = op.kind == OpKind::kSend ? op.src : op.dst;
    const DType dtype = plan.buffers[static_cast<std::size_t>(slice.buffer)].dtype;
    EXPECT_EQ(op.bytes, DTypeBytes(dtype) * slice.count)
        << what << ": op " << i << " (" << DTypeName(dtype) << ", " << slice.count << " elements)";
    ++checked;
  }
  return checked;
}

TEST(SixteenBitBytes, CollectivesMoveTwoBytesPerElement) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                                CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                                CollectiveKind::kReduce, CollectiveKind::kAllToAll}) {
      CollectiveParams p;
      p.kind = kind;
      p.algo = kind == CollectiveKind::kAllToAll ? CollectiveAlgo::kDirect : CollectiveAlgo::kRing;
      p.ranks = 4;
      p.count = 4096;
      p.dtype = dtype;
      const Plan plan = BuildCollective(p);
      const std::string what = std::string(CollectiveKindName(kind)) + " " + DTypeName(dtype);
      EXPECT_GT(ExpectTransferBytesAreElementSizeTimesCount(plan, what), 0u) << what;
      for (const Buffer& b : plan.buffers) EXPECT_EQ(b.dtype, dtype) << what << ": " << b.name;
    }
    CollectiveParams tree;
    tree.algo = CollectiveAlgo::kTree;
    tree.ranks = 8;
    tree.count = 1 << 14;
    tree.dtype = dtype;
    EXPECT_GT(ExpectTransferBytesAreElementSizeTimesCount(BuildCollective(tree), "tree"), 0u);
  }
}

TEST(SixteenBitBytes, ZeroMovesItsHalfPrecisionTensorsAtTwoBytes) {
  for (int stage = 0; stage <= 3; ++stage) {
    ZeroParams p;
    p.stage = stage;
    const ZeroPlan zero = BuildZero(p);
    EXPECT_GT(ExpectTransferBytesAreElementSizeTimesCount(zero.plan, "zero " + std::to_string(stage)),
              0u);
  }
}

TEST(SixteenBitBytes, ThreeDAtPaperScaleMovesHalfPrecision) {
  ThreeDTimingParams params;
  params.grid = ParallelGrid{2, 2, 2};
  params.model = FindModelPreset("gpt3-1.3b");
  params.model.global_batch = 16;
  const ThreeDPlan plan = BuildThreeDTiming(params);
  EXPECT_GT(ExpectTransferBytesAreElementSizeTimesCount(plan.plan, "3d timing"), 0u);
}

}  // namespace
}  // namespace shardlab
