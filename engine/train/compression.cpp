#include "engine/train/compression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/train/loss_scale.h"

namespace shardlab {

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kFp16: return "fp16";
    case Compression::kBf16: return "bf16";
    case Compression::kInt8: return "int8";
    case Compression::kTopK: return "topk";
    default: return "none";
  }
}

Compression ParseCompression(std::string_view text) {
  if (text == "none") return Compression::kNone;
  if (text == "fp16") return Compression::kFp16;
  if (text == "bf16") return Compression::kBf16;
  if (text == "int8") return Compression::kInt8;
  if (text == "topk") return Compression::kTopK;
  throw Error("compress: unknown compression '" + std::string(text) + "' (none, fp16, bf16, int8 or topk)",
              ErrorKind::kInvalidInput);
}

Compression WireCompression(DType working) {
  switch (working) {
    case DType::kF16: return Compression::kFp16;
    case DType::kBF16: return Compression::kBf16;
    default: return Compression::kNone;
  }
}

bool IsFloatCompression(Compression c) { return c == Compression::kFp16 || c == Compression::kBf16; }

static std::string Shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void CheckCompressionConfig(const CompressionConfig& c) {
  if (!(c.topk_fraction > 0.0 && c.topk_fraction <= 1.0))
    throw Error("topk: the fraction kept must be in (0, 1] (got " + Shortest(c.topk_fraction) + ")",
                ErrorKind::kInvalidInput);
  if (c.bucket_elements < 1)
    throw Error("compress_bucket: an int8 bucket needs at least one element", ErrorKind::kInvalidInput);
}

std::int64_t TopKCount(const CompressionConfig& c, std::int64_t count) {
  const auto k = static_cast<std::int64_t>(std::ceil(c.topk_fraction * static_cast<double>(count) - 1e-9));
  return std::clamp<std::int64_t>(k, 1, count);
}

namespace {

std::int64_t Buckets(std::int64_t count, std::int64_t bucket) { return (count + bucket - 1) / bucket; }

// Bytes of one ring message carrying `count` elements.
Bytes MessageBytes(const CompressionConfig& c, std::int64_t count) {
  switch (c.kind) {
    case Compression::kFp16:
    case Compression::kBf16: return 2 * count;
    case Compression::kInt8: return count + 4 * Buckets(count, c.bucket_elements);
    default: return 4 * count;
  }
}

// Quantises `x` in place (fp16, bf16, or int8 with a scale per bucket of
// the message) and adds each element's half-step to `half_steps`.
void Quantise(const CompressionConfig& c, std::span<float> x, std::span<double> half_steps) {
  if (IsFloatCompression(c.kind)) {
    // Half a step: 2^-p·|x| with p significant bits (11 for fp16, 8 for
    // bf16), or half the subnormal spacing near zero.
    const bool bf16 = c.kind == Compression::kBf16;
    const DType to = bf16 ? DType::kBF16 : DType::kF16;
    const int p = bf16 ? 8 : 11;
    const double subnormal_half = std::ldexp(1.0, bf16 ? -134 : -25);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float q = RoundToWorking(to, x[i]);
      half_steps[i] += std::ldexp(std::fabs(static_cast<double>(x[i])), -p) + subnormal_half;
      x[i] = q;
    }
    return;
  }
  for (std::size_t begin = 0; begin < x.size(); begin += static_cast<std::size_t>(c.bucket_elements)) {
    const std::size_t end = std::min(x.size(), begin + static_cast<std::size_t>(c.bucket_elements));
    float most = 0.0f;
    for (std::size_t i = begin; i < end; ++i) most = std::max(most, std::fabs(x[i]));
    const float scale = most / 127.0f;
    for (std::size_t i = begin; i < end; ++i) {
      const float q = scale > 0.0f ? std::nearbyint(x[i] / scale) : 0.0f;  // -127 .. 127
      x[i] = q * scale;
      half_steps[i] += 0.5 * scale * (1 + 1e-6);  // the product q·scale rounds too
    }
  }
}

}  // namespace

Bytes CompressedAllReduceBytes(const CompressionConfig& c, std::int64_t count, int ranks) {
  if (ranks <= 1) return 0;
  if (c.kind == Compression::kTopK) return Bytes{ranks - 1} * 8 * TopKCount(c, count);
  // Rank r sends, over 2(N−1) ring steps, every chunk but one twice, once
  // in each pass (rank r's sends: chunks r, r−1, ... in the reduce-scatter).
  Bytes most = 0;
  for (int r = 0; r < ranks; ++r) {
    Bytes sent = 0;
    for (int s = 0; s < ranks - 1; ++s) {
      const int rs_chunk = ((r - s) % ranks + ranks) % ranks;
      const int ag_chunk = ((r + 1 - s) % ranks + ranks) % ranks;
      sent += MessageBytes(c, ChunkCount(count, ranks, rs_chunk));
      sent += MessageBytes(c, ChunkCount(count, ranks, ag_chunk));
    }
    most = std::max(most, sent);
  }
  return most;
}

CompressedSum CompressedAllReduce(const CompressionConfig& c, const std::vector<std::vector<float>>& grads,
                                  std::vector<std::vector<float>>* residuals) {
  CheckCompressionConfig(c);
  const int n = static_cast<int>(grads.size());
  const std::int64_t count = static_cast<std::int64_t>(grads[0].size());
  CompressedSum out;
  out.bytes_sent_per_rank = CompressedAllReduceBytes(c, count, n);
  out.sum.assign(static_cast<std::size_t>(count), 0.0f);
  if (c.kind == Compression::kTopK) {
    const std::int64_t k = TopKCount(c, count);
    std::vector<float> acc(static_cast<std::size_t>(count));
    std::vector<std::int64_t> order(static_cast<std::size_t>(count));
    for (int r = 0; r < n; ++r) {
      for (std::int64_t i = 0; i < count; ++i)
        acc[i] = grads[r][i] + (c.error_feedback && residuals != nullptr ? (*residuals)[r][i] : 0.0f);
      std::iota(order.begin(), order.end(), 0);
      std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), [&](std::int64_t x, std::int64_t y) {
        const float ax = std::fabs(acc[x]), ay = std::fabs(acc[y]);
        return ax != ay ? ax > ay : x < y;
      });
      std::vector<float> kept(static_cast<std::size_t>(count), 0.0f);
      for (std::int64_t j = 0; j < k; ++j) kept[order[j]] = acc[order[j]];
      // Every rank adds the gathered pairs in rank order: the same sum everywhere.
      for (std::int64_t i = 0; i < count; ++i) out.sum[i] += kept[i];
      if (residuals != nullptr && c.error_feedback)
        for (std::int64_t i = 0; i < count; ++i) (*residuals)[r][i] = acc[i] - kept[i];
    }
    return out;
  }
  if (c.kind == Compression::kNone) {
    // The ring's order: chunk j is summed from rank j+1 round to rank j.
    for (int chunk = 0; chunk < n; ++chunk) {
      const std::int64_t b = ChunkBegin(count, n, chunk), len = ChunkCount(count, n, chunk);
      for (std::int64_t i = b; i < b + len; ++i) {
        float s = grads[(chunk + 1) % n][i];
        for (int hop = 1; hop < n; ++hop) s += grads[(chunk + 1 + hop) % n][i];
        out.sum[i] = s;
      }
    }
    return out;
  }
  out.bound.assign(static_cast<std::size_t>(count), 0.0);
  for (int chunk = 0; chunk < n; ++chunk) {
    const std::int64_t b = ChunkBegin(count, n, chunk), len = ChunkCount(count, n, chunk);
    if (len == 0) continue;
    std::vector<float> partial(grads[(chunk + 1) % n].begin() + b, grads[(chunk + 1) % n].begin() + b + len);
    std::vector<double> abs_sum(static_cast<std::size_t>(len), 0.0);
    std::span<double> bound(out.bound.data() + b, static_cast<std::size_t>(len));
    for (std::int64_t i = 0; i < len; ++i) abs_sum[i] = std::fabs(partial[i]);
    for (int hop = 1; hop < n; ++hop) {
      Quantise(c, partial, bound);  // sent to the next rank, which adds its own
      const std::vector<float>& mine = grads[(chunk + 1 + hop) % n];
      for (std::int64_t i = 0; i < len; ++i) {
        partial[i] += mine[b + i];
        abs_sum[i] += std::fabs(mine[b + i]) + bound[i];
      }
    }
    Quantise(c, partial, bound);  // the all-gather sends the reduced chunk, quantised once
    for (std::int64_t i = 0; i < len; ++i) {
      out.sum[b + i] = partial[i];
      bound[i] += n * std::ldexp(abs_sum[i], -24);  // fp32's rounding of the n − 1 additions
    }
  }
  return out;
}

}  // namespace shardlab
