// A range of one buffer: how ops and kernels name the data they touch.
#pragma once

#include <cstdint>

namespace shardlab {

using BufferId = std::int32_t;
inline constexpr BufferId kNoBuffer = -1;

/// A contiguous range of elements of one buffer.
struct BufferSlice {
  BufferId buffer = kNoBuffer;
  std::int64_t offset = 0;  // elements
  std::int64_t count = 0;   // elements
  bool valid() const { return buffer != kNoBuffer; }
};

}  // namespace shardlab
