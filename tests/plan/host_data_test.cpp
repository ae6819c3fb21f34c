// Buffer initialisation on the host: a kRandom buffer that describes a block
// of a larger tensor starts with exactly that block's values, so every
// shard of a tensor-parallel or ZeRO plan starts from the same model.
#include "engine/plan/host_data.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/core/fill.h"
#include "engine/plan/validate.h"

namespace shardlab {
namespace {

constexpr std::uint64_t kSeed = 11;

TEST(HostData, ABufferBlockHoldsThatBlockOfItsStream) {
  // A 6 x 10 tensor on stream 5: rank 0 holds all of it, rank 1 columns
  // 4..6 (a column shard), rank 2 rows 2..3 (a contiguous row shard).
  PlanBuilder builder("blocks", 3);
  Buffer full{"full", 0, 60, DType::kF32, BufferInit::kRandom, 5, 1.0f};
  Buffer columns = full;
  columns.name = "columns";
  columns.rank = 1;
  columns.count = 6 * 3;
  columns.init_offset = 4;
  columns.init_row = 3;
  columns.init_stride = 10;
  Buffer rows = full;
  rows.name = "rows";
  rows.rank = 2;
  rows.count = 2 * 10;
  rows.init_offset = 2 * 10;
  rows.init_scale = 0.5f;
  builder.AddBuffer(full);
  builder.AddBuffer(columns);
  builder.AddBuffer(rows);
  const Plan plan = builder.Finish();
  ValidatePlan(plan);
  HostBuffers host;
  AllocateHostBuffers(plan, kSeed, host);
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(host.view(1)[static_cast<std::size_t>(r * 3 + c)], host.view(0)[static_cast<std::size_t>(r * 10 + 4 + c)]);
    }
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(host.view(2)[static_cast<std::size_t>(i)], 0.5f * InputValue(kSeed, 5, 20 + i));
  }
}

TEST(HostData, AnImpossibleBlockIsRejected) {
  PlanBuilder builder("bad block", 1);
  Buffer b{"b", 0, 6, DType::kF32, BufferInit::kRandom, 1, 1.0f};
  b.init_row = 4;
  b.init_stride = 3;  // rows would overlap
  builder.AddBuffer(b);
  const Plan plan = builder.Finish();
  try {
    ValidatePlan(plan);
    FAIL() << "a stride shorter than the row was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stride"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace shardlab
