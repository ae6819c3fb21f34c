// A student's answers file; what parses must round-trip through WriteLabAnswers.
#include <cstdint>
#include <string>

#include "engine/lab/lab_grader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    const shardlab::LabAnswers first =
        shardlab::ParseLabAnswers(shardlab::fuzz::AsText(data, size), "fuzz-answers.toml");
    const std::string written = shardlab::WriteLabAnswers(first);
    const shardlab::LabAnswers second = shardlab::ParseLabAnswers(written, "fuzz-answers.toml");
    if (shardlab::WriteLabAnswers(second) != written) shardlab::fuzz::Broken("answers round trip");
  });
}
