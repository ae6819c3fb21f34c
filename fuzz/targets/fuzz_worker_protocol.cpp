// The worker pipe stream: bytes fed to a RecordReader in uneven chunks (the
// first byte picks the chunk size), as a pipe delivers them. Every decoded
// record must encode and decode back to the same bytes.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/io/worker_protocol.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    if (size == 0) return;
    const std::size_t chunk = 1 + data[0] % 64;
    std::span<const std::uint8_t> rest(data + 1, size - 1);
    shardlab::RecordReader reader;
    while (true) {
      shardlab::WorkerRecord record;
      const shardlab::DecodeStatus status = reader.Next(&record);
      if (status == shardlab::DecodeStatus::kBad) return;
      if (status == shardlab::DecodeStatus::kRecord) {
        std::vector<std::uint8_t> encoded;
        shardlab::EncodeRecord(record, encoded);
        shardlab::WorkerRecord again;
        const shardlab::DecodeResult result = shardlab::DecodeRecord(encoded, &again);
        if (result.status != shardlab::DecodeStatus::kRecord || result.consumed != encoded.size())
          shardlab::fuzz::Broken("re-encoded record does not decode");
        std::vector<std::uint8_t> twice;
        shardlab::EncodeRecord(again, twice);
        if (twice != encoded) shardlab::fuzz::Broken("worker record round trip");
        continue;
      }
      if (rest.empty()) break;
      const std::size_t n = std::min(chunk, rest.size());
      reader.Feed(rest.first(n));
      rest = rest.subspan(n);
    }
    (void)reader.EndOfStreamError();
  });
}
