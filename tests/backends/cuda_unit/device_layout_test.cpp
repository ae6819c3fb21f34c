// How the CUDA backend lays plans out on the device (device_layout.h),
// checked without a GPU: a 16-bit buffer takes DTypeBytes × count bytes,
// every transfer copies the bytes its plan reports, 16-bit products take the
// tensor-core path, element-wise kernels stage exactly their 16-bit
// operands in fp32, and the host's packing agrees with the project's own
// rounding (verify/bounds.h's RoundTo).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/zero.h"
#include "engine/backends/cuda/device_layout.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/verify/bounds.h"

namespace shardlab {
namespace {

using cuda::DeviceBufferBytes;
using cuda::TransferDeviceBytes;

// Every buffer's device bytes and every transfer's copied bytes; returns
// the transfers checked.
std::size_t ExpectDeviceBytesAreTheReportedBytes(const Plan& plan, const std::string& what) {
  for (const Buffer& b : plan.buffers)
    EXPECT_EQ(DeviceBufferBytes(b), static_cast<std::size_t>(DTypeBytes(b.dtype) * b.count))
        << what << ": " << b.name;
  std::size_t checked = 0;
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::kSend) continue;
    EXPECT_EQ(TransferDeviceBytes(plan, op), static_cast<std::size_t>(op.bytes))
        << what << ": rank " << op.rank << " to " << op.peer;
    ++checked;
  }
  return checked;
}

TEST(CudaDeviceLayout, SixteenBitCollectivesHoldAndMoveTwoBytesPerElement) {
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                              CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                              CollectiveKind::kReduce, CollectiveKind::kAllToAll}) {
    for (CollectiveAlgo algo : CollectiveAlgosFor(kind)) {
      if (algo == CollectiveAlgo::kNccl) continue;  // one library call, no transfers
      CollectiveParams p;
      p.kind = kind;
      p.algo = algo;
      p.ranks = 4;
      p.count = 4099;
      p.root = CollectiveHasRoot(kind) ? 3 : 0;
      const std::string what = std::string(CollectiveAlgoName(algo)) + " " + CollectiveKindName(kind);
      const Plan f32 = BuildCollective(p);
      std::size_t f32_bytes = 0;
      for (const Buffer& b : f32.buffers) f32_bytes += DeviceBufferBytes(b);
      for (DType dtype : {DType::kF16, DType::kBF16}) {
        p.dtype = dtype;
        const Plan plan = BuildCollective(p);
        EXPECT_GT(ExpectDeviceBytesAreTheReportedBytes(plan, what + " " + DTypeName(dtype)), 0u);
        std::size_t bytes = 0;
        for (const Buffer& b : plan.buffers) bytes += DeviceBufferBytes(b);
        EXPECT_EQ(2 * bytes, f32_bytes) << what << " " << DTypeName(dtype);
      }
      p.dtype = DType::kF32;
    }
  }
}

TEST(CudaDeviceLayout, ZeroAndHalfPrecisionTensorParallelMoveWhatTheyReport) {
  for (int stage = 0; stage <= 3; ++stage) {
    ZeroParams p;
    p.stage = stage;
    const ZeroPlan zero = BuildZero(p);
    bool half = false;
    for (const Buffer& b : zero.plan.buffers) half = half || b.dtype == DType::kF16;
    EXPECT_TRUE(half) << "zero " << stage << " has fp16 buffers";
    EXPECT_GT(ExpectDeviceBytesAreTheReportedBytes(zero.plan, "zero " + std::to_string(stage)), 0u);
  }
  TpScenario tp;
  tp.layer.dtype = DType::kF16;
  tp.timing_only = true;
  const std::unique_ptr<PreparedTp> prepared = PrepareTp(tp);
  EXPECT_GT(ExpectDeviceBytesAreTheReportedBytes(prepared->layer.plan, "tp fp16"), 0u);
}

TEST(CudaDeviceLayout, SixteenBitProductsRunOnTensorCores) {
  using cuda::ChooseGemm;
  using cuda::GemmPath;
  EXPECT_EQ(ChooseGemm(DType::kF32, DType::kF32, DType::kF32), GemmPath::kSgemm);
  for (DType h : {DType::kF16, DType::kBF16}) {
    EXPECT_EQ(ChooseGemm(h, h, h), GemmPath::kTensorCore) << DTypeName(h);
    EXPECT_EQ(ChooseGemm(h, h, DType::kF32), GemmPath::kTensorCore) << DTypeName(h);
    EXPECT_EQ(ChooseGemm(h, DType::kF32, h), GemmPath::kStaged) << DTypeName(h);
    EXPECT_EQ(ChooseGemm(DType::kF32, DType::kF32, h), GemmPath::kStaged) << DTypeName(h);
  }
  EXPECT_EQ(ChooseGemm(DType::kF16, DType::kBF16, DType::kF32), GemmPath::kStaged);
  // fp16 TP: every product of the plan takes the tensor-core path and needs
  // no scratch.
  TpScenario tp;
  tp.layer.dtype = DType::kF16;
  tp.timing_only = true;
  const std::unique_ptr<PreparedTp> prepared = PrepareTp(tp);
  const Plan& plan = prepared->layer.plan;
  int products = 0;
  for (const KernelCall& k : plan.kernels) {
    if (k.kind != KernelKind::kMatMul) continue;
    ++products;
    const auto type = [&](const BufferSlice& s) { return plan.buffers[static_cast<std::size_t>(s.buffer)].dtype; };
    EXPECT_EQ(ChooseGemm(type(k.a), type(k.b), type(k.c)), GemmPath::kTensorCore);
    EXPECT_TRUE(cuda::StagedRegions(plan, k).empty());
  }
  EXPECT_GT(products, 0);
}

// Every staged region covers each 16-bit operand of its buffer, regions lie
// one after another in the scratch, the written ones are those the kernel
// writes, and fp32 operands are never staged.
TEST(CudaDeviceLayout, ElementwiseKernelsStageExactlyTheirSixteenBitOperands) {
  ZeroParams p;
  p.stage = 2;
  const ZeroPlan zero = BuildZero(p);
  const Plan& plan = zero.plan;
  const auto type = [&](const BufferSlice& s) { return plan.buffers[static_cast<std::size_t>(s.buffer)].dtype; };
  int staged_calls = 0;
  for (const KernelCall& k : plan.kernels) {
    const std::vector<cuda::StagedRegion> regions = cuda::StagedRegions(plan, k);
    std::int64_t at = 0;
    for (const cuda::StagedRegion& r : regions) {
      EXPECT_EQ(r.scratch_offset, at);
      EXPECT_LT(r.begin, r.end);
      EXPECT_NE(plan.buffers[static_cast<std::size_t>(r.buffer)].dtype, DType::kF32);
      at += r.end - r.begin;
    }
    EXPECT_EQ(cuda::StagingFloats(regions), at);
    if (k.kind == KernelKind::kCopy) {
      EXPECT_TRUE(regions.empty());
      continue;
    }
    if (k.kind == KernelKind::kMatMul &&
        cuda::ChooseGemm(type(k.a), type(k.b), type(k.c)) != cuda::GemmPath::kStaged) {
      EXPECT_TRUE(regions.empty());
      continue;
    }
    const struct { const BufferSlice* s; std::int64_t count; } operands[] = {
        {&k.a, k.a_count()}, {&k.b, k.b_count()}, {&k.c, k.c_count()}, {&k.d, k.d_count()}};
    for (const auto& o : operands) {
      if (!o.s->valid() || o.count == 0) continue;
      const cuda::StagedRegion* found = nullptr;
      for (const cuda::StagedRegion& r : regions)
        if (r.buffer == o.s->buffer) found = &r;
      if (type(*o.s) == DType::kF32) {
        EXPECT_EQ(found, nullptr) << KernelKindName(k.kind) << ": an fp32 operand was staged";
        continue;
      }
      ASSERT_NE(found, nullptr) << KernelKindName(k.kind) << ": a 16-bit operand is not staged";
      EXPECT_LE(found->begin, o.s->offset);
      EXPECT_GE(found->end, o.s->offset + o.count);
      const bool written = o.s == &k.c || (k.kind == KernelKind::kAdam && (o.s == &k.b || o.s == &k.d));
      if (written) {  // converted back: the written range covers it
        EXPECT_LE(found->written_begin, o.s->offset) << KernelKindName(k.kind);
        EXPECT_GE(found->written_end, o.s->offset + o.count) << KernelKindName(k.kind);
      }
    }
    // Nothing but written operands is converted back.
    for (const cuda::StagedRegion& r : regions) {
      if (!r.written()) continue;
      EXPECT_LE(r.begin, r.written_begin);
      EXPECT_GE(r.end, r.written_end);
      bool from_a_written_operand = false;
      for (const BufferSlice* w : {&k.c, &k.b, &k.d}) {
        if (w != &k.c && k.kind != KernelKind::kAdam) continue;
        if (w->valid() && w->buffer == r.buffer && w->offset == r.written_begin) from_a_written_operand = true;
      }
      EXPECT_TRUE(from_a_written_operand) << KernelKindName(k.kind);
    }
    if (!regions.empty()) ++staged_calls;
  }
  EXPECT_GT(staged_calls, 0) << "ZeRO's fp16 activations go through the scratch";
  const std::vector<std::int64_t> scratch = cuda::ScratchFloatsPerRank(plan);
  ASSERT_EQ(scratch.size(), static_cast<std::size_t>(plan.num_ranks));
  for (std::int64_t s : scratch) EXPECT_GT(s, 0);
  // An fp32 plan stages nothing.
  CollectiveParams c;
  c.ranks = 4;
  c.count = 100;
  EXPECT_EQ(cuda::ScratchFloatsPerRank(BuildCollective(c)), std::vector<std::int64_t>(4, 0));
}

// A call that reads one end of a 16-bit buffer and writes the other stages
// the span between, but converts back only what it writes (the rest may be
// another stream's); fp32 operands stay where they are.
TEST(CudaDeviceLayout, OnlyTheWrittenRangeIsConvertedBack) {
  PlanBuilder b("staging", 1);
  const BufferId x = b.AddBuffer(0, "x", 1000, DType::kF16);
  const BufferId y = b.AddBuffer(0, "y", 64, DType::kBF16);
  const BufferId f = b.AddBuffer(0, "f", 64, DType::kF32);
  const KernelCall relu = ElementwiseCall(KernelKind::kRelu, {x, 0, 10}, {}, {x, 500, 10}, 1, 10);
  const KernelCall bias = ElementwiseCall(KernelKind::kAddBias, {f, 0, 8}, {}, {y, 16, 32}, 4, 8);
  Op op;
  b.AddCompute(op, {relu, bias}, {});
  const Plan plan = b.Finish();
  const std::vector<cuda::StagedRegion> r = cuda::StagedRegions(plan, relu);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].buffer, x);
  EXPECT_EQ(r[0].begin, 0);
  EXPECT_EQ(r[0].end, 510);
  EXPECT_EQ(r[0].written_begin, 500);
  EXPECT_EQ(r[0].written_end, 510);
  const std::vector<cuda::StagedRegion> s = cuda::StagedRegions(plan, bias);
  ASSERT_EQ(s.size(), 1u) << "the fp32 bias is read in place";
  EXPECT_EQ(s[0].buffer, y);
  EXPECT_EQ(s[0].begin, 16);
  EXPECT_EQ(s[0].end, 48);
  EXPECT_EQ(s[0].written_begin, 16);
  EXPECT_EQ(s[0].written_end, 48);
  EXPECT_EQ(cuda::ScratchFloatsPerRank(plan), std::vector<std::int64_t>{510});
}

TEST(CudaDeviceLayout, PackingRoundsAsTheProjectsRoundToAndUnpacksExactly) {
  // IEEE 754 binary16 and bfloat16 encodings of a few values.
  EXPECT_EQ(cuda::HalfBits(1.0f), 0x3C00);
  EXPECT_EQ(cuda::HalfBits(-2.0f), 0xC000);
  EXPECT_EQ(cuda::HalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(cuda::HalfBits(65520.0f), 0x7C00);  // rounds past the largest finite value
  EXPECT_EQ(cuda::HalfBits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(cuda::HalfBits(-0.0f), 0x8000);
  EXPECT_EQ(cuda::Bf16Bits(1.0f), 0x3F80);
  EXPECT_EQ(cuda::Bf16Bits(-2.0f), 0xC000);
  EXPECT_TRUE(std::isnan(cuda::HalfValue(cuda::HalfBits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(cuda::Bf16Value(cuda::Bf16Bits(std::numeric_limits<float>::quiet_NaN()))));
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-30, 20);
  std::vector<float> values;
  for (int i = 0; i < 20000; ++i) values.push_back(std::ldexp(mantissa(gen), exponent(gen)));
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    std::vector<std::uint16_t> bits(values.size());
    cuda::PackDType(dtype, values, bits.data());
    std::vector<float> back(values.size());
    cuda::UnpackDType(dtype, bits.data(), back);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double want = RoundTo(dtype, values[i]);
      ASSERT_EQ(static_cast<double>(back[i]), want) << DTypeName(dtype) << " of " << values[i];
    }
    // Unpacking then packing again gives the same bits: the round trip is exact.
    std::vector<std::uint16_t> again(values.size());
    cuda::PackDType(dtype, back, again.data());
    EXPECT_EQ(again, bits) << DTypeName(dtype);
  }
  // Every fp16 bit pattern (but NaNs) unpacks to a value that packs back to it.
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float v = cuda::HalfValue(static_cast<std::uint16_t>(b));
    if (std::isnan(v)) continue;
    ASSERT_EQ(cuda::HalfBits(v), b) << std::hex << b;
  }
}

}  // namespace
}  // namespace shardlab
