#include "engine/backends/cuda/device_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/verify/bounds.h"

namespace shardlab::cuda {

std::size_t DeviceElementBytes(DType dtype) { return static_cast<std::size_t>(DTypeBytes(dtype)); }

std::size_t DeviceBufferBytes(const Buffer& buffer) {
  return static_cast<std::size_t>(buffer.count) * DeviceElementBytes(buffer.dtype);
}

std::size_t TransferDeviceBytes(const Plan& plan, const Op& send) {
  const Op& recv = plan.ops[static_cast<std::size_t>(send.match)];
  const std::int64_t count = std::min(send.src.count, recv.dst.count);
  return static_cast<std::size_t>(count) *
         DeviceElementBytes(plan.buffers[static_cast<std::size_t>(send.src.buffer)].dtype);
}

GemmPath ChooseGemm(DType a, DType b, DType c) {
  if (a == DType::kF32 && b == DType::kF32 && c == DType::kF32) return GemmPath::kSgemm;
  if (a == b && a != DType::kF32 && (c == a || c == DType::kF32)) return GemmPath::kTensorCore;
  return GemmPath::kStaged;
}

namespace {

DType DTypeOf(const Plan& plan, const BufferSlice& s) {
  return plan.buffers[static_cast<std::size_t>(s.buffer)].dtype;
}

}  // namespace

std::vector<StagedRegion> StagedRegions(const Plan& plan, const KernelCall& call) {
  std::vector<StagedRegion> regions;
  if (call.kind == KernelKind::kCopy) return regions;  // a memcpy or a cast kernel
  if (call.kind == KernelKind::kMatMul) {
    const GemmPath path = ChooseGemm(DTypeOf(plan, call.a), DTypeOf(plan, call.b), DTypeOf(plan, call.c));
    if (path != GemmPath::kStaged) return regions;
  }
  struct Operand { const BufferSlice* slice; std::int64_t count; bool written; };
  const bool adam = call.kind == KernelKind::kAdam;
  const Operand operands[] = {{&call.a, call.a_count(), false},
                              {&call.b, call.b_count(), adam},  // Adam's first moment
                              {&call.c, call.c_count(), true},
                              {&call.d, call.d_count(), adam}};  // and second
  for (const Operand& o : operands) {
    if (!o.slice->valid() || o.count <= 0 || DTypeOf(plan, *o.slice) == DType::kF32) continue;
    const std::int64_t begin = o.slice->offset, end = o.slice->offset + o.count;
    auto same = std::find_if(regions.begin(), regions.end(),
                             [&](const StagedRegion& r) { return r.buffer == o.slice->buffer; });
    if (same == regions.end()) {
      StagedRegion r{o.slice->buffer, begin, end, 0, 0, 0};
      if (o.written) r.written_begin = begin, r.written_end = end;
      regions.push_back(r);
      continue;
    }
    same->begin = std::min(same->begin, begin);
    same->end = std::max(same->end, end);
    if (!o.written) continue;
    if (same->written()) {
      same->written_begin = std::min(same->written_begin, begin);
      same->written_end = std::max(same->written_end, end);
    } else {
      same->written_begin = begin;
      same->written_end = end;
    }
  }
  std::int64_t at = 0;
  for (StagedRegion& r : regions) {
    r.scratch_offset = at;
    at += r.end - r.begin;
  }
  return regions;
}

std::int64_t StagingFloats(const std::vector<StagedRegion>& regions) {
  std::int64_t total = 0;
  for (const StagedRegion& r : regions) total += r.end - r.begin;
  return total;
}

std::vector<std::int64_t> ScratchFloatsPerRank(const Plan& plan) {
  std::vector<std::int64_t> need(static_cast<std::size_t>(plan.num_ranks), 0);
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::kCompute) continue;
    for (std::int32_t k = 0; k < op.kernel_count; ++k) {
      const KernelCall& call = plan.kernels[static_cast<std::size_t>(op.kernel_begin + k)];
      std::int64_t& slot = need[static_cast<std::size_t>(op.rank)];
      slot = std::max(slot, StagingFloats(StagedRegions(plan, call)));
    }
  }
  return need;
}

std::uint16_t HalfBits(float value) {
  std::uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | 0x7E00);
  const double v = RoundTo(DType::kF16, value);  // the project's rounding, ties to even
  if (std::isinf(v)) return static_cast<std::uint16_t>(sign | 0x7C00);
  const double a = std::fabs(v);
  if (a == 0) return sign;
  if (a < std::ldexp(1.0, -14))  // subnormal: a multiple of 2^-24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(a * std::ldexp(1.0, 24)));
  int exp = 0;
  const double f = std::frexp(a, &exp);  // a = f·2^exp, 0.5 ≤ f < 1
  const auto field = static_cast<std::uint16_t>(exp - 1 + 15);
  const auto mantissa = static_cast<std::uint16_t>((f * 2 - 1) * 1024);  // exact: 10 bits
  return static_cast<std::uint16_t>(sign | (field << 10) | mantissa);
}

float HalfValue(std::uint16_t bits) {
  const int field = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (field == 0x1F)
    return static_cast<float>(mantissa ? std::nan("") : sign * HUGE_VAL);
  if (field == 0) return static_cast<float>(sign * std::ldexp(mantissa, -24));
  return static_cast<float>(sign * std::ldexp(1024 + mantissa, field - 15 - 10));
}

std::uint16_t Bf16Bits(float value) {
  std::uint32_t bits = 0;
  if (std::isnan(value)) {
    std::memcpy(&bits, &value, 4);
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040);  // a quiet NaN
  }
  // RoundTo gives a value that bf16 holds exactly: its float has 16 zero low bits.
  const float rounded = static_cast<float>(RoundTo(DType::kBF16, value));
  std::memcpy(&bits, &rounded, 4);
  return static_cast<std::uint16_t>(bits >> 16);
}

float Bf16Value(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value = 0;
  std::memcpy(&value, &wide, 4);
  return value;
}

void PackDType(DType dtype, std::span<const float> values, void* out) {
  switch (dtype) {
    case DType::kF32: std::memcpy(out, values.data(), values.size() * sizeof(float)); return;
    case DType::kF16: {
      auto* bits = static_cast<std::uint16_t*>(out);
      for (std::size_t i = 0; i < values.size(); ++i) bits[i] = HalfBits(values[i]);
      return;
    }
    case DType::kBF16: {
      auto* bits = static_cast<std::uint16_t*>(out);
      for (std::size_t i = 0; i < values.size(); ++i) bits[i] = Bf16Bits(values[i]);
      return;
    }
  }
}

void UnpackDType(DType dtype, const void* in, std::span<float> values) {
  switch (dtype) {
    case DType::kF32: std::memcpy(values.data(), in, values.size() * sizeof(float)); return;
    case DType::kF16: {
      const auto* bits = static_cast<const std::uint16_t*>(in);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = HalfValue(bits[i]);
      return;
    }
    case DType::kBF16: {
      const auto* bits = static_cast<const std::uint16_t*>(in);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = Bf16Value(bits[i]);
      return;
    }
  }
}

}  // namespace shardlab::cuda
