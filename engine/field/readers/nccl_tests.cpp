// `nccl-tests`: an nccl-tests benchmark's output (engine/field/nccl_tests_output.h).
#include <algorithm>
#include <memory>

#include "engine/core/error.h"
#include "engine/field/field_reader.h"
#include "engine/field/inspect_text.h"
#include "engine/field/nccl_tests_output.h"

namespace shardlab {
namespace {

Inspection Inspect(const FieldFile& file) {
  auto t = std::make_shared<NcclTestsOutput>(ReadNcclTestsOutput(file));
  if (t->tables.empty()) throw Error(file.path + ":" + std::to_string(file.line_count()) + ": no nccl-tests table in the file");
  Inspection out;
  out.summary = Count(t->rows(), "row") + " in " + Count(static_cast<long>(t->tables.size()), "table") + ", " +
                Count(t->ranks(), "rank") + ", " + Count(static_cast<long>(t->hosts().size()), "host");
  if (!t->parameters.empty()) out.page += t->parameters + "\n";
  const std::vector<std::string> hosts = t->hosts();
  constexpr std::size_t kMaxHostLines = 16;
  for (std::size_t h = 0; h < std::min(kMaxHostLines, hosts.size()); ++h) {
    const std::string& host = hosts[h];
    int n = 0;
    std::string name;
    for (const NcclTestsDevice& d : t->devices) {
      if (d.host != host) continue;
      ++n;
      name = d.name;
    }
    out.page += "host " + host + ": " + Count(n, "rank") + " (" + name + ")\n";
  }
  if (hosts.size() > kMaxHostLines) out.page += "... and " + Count(static_cast<long>(hosts.size() - kMaxHostLines), "more host") + "\n";
  if (t->devices.empty()) out.page += "(no '# Using devices' lines: ranks and devices unknown)\n";
  out.page += NcclTestsTablesText(*t);
  out.warnings = t->warnings;
  out.json = [t](JsonWriter& json) { WriteNcclTestsJson(json, *t, true); };
  return out;
}

}  // namespace

void RegisterFieldReader_nccl_tests() {
  RegisterFieldReader({"nccl-tests", "nccl-tests output (all_reduce_perf, ...)",
                       [](std::string_view head) { return LooksLikeNcclTestsOutput(head) ? 3 : 0; }, Inspect});
}

}  // namespace shardlab
