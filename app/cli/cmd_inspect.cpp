// `shardlab-cli inspect FILE... [--json]`: what a file from the field holds
// (an NCCL topology or graph XML, `nvidia-smi topo -m`, an NCCL_DEBUG=INFO
// log, nccl-tests output, or ShardLab's own trace or topology file), its
// kind recognised from its content and .gz read transparently
// (engine/field/field_reader.h). A file no reader knows, or a broken one,
// is bad input (exit 2, "file:line[:column]: what"); unfamiliar lines in a
// known format are warnings on stderr.
#include <iostream>

#include "app/cli/commands.h"
#include "engine/core/json.h"
#include "engine/field/field_reader.h"

namespace shardlab::cli {

CommandSpec InspectSpec() {
  CommandSpec s;
  s.name = "inspect";
  s.summary = "say what a file from the field holds: NCCL topology, graph or log, topo -m, nccl-tests";
  s.usage = "inspect FILE... [--json]";
  std::string kinds;
  for (const FieldReader& r : FieldReaders()) kinds += "  " + r.kind + std::string(22 - std::min<std::size_t>(20, r.kind.size()), ' ') + r.title + "\n";
  s.description =
      "Reads each FILE, recognises its kind from its content (not its name; .gz is read\n"
      "transparently) and prints what it found on one page: machines as counts of GPUs,\n"
      "NICs, NUMA nodes and NVLinks; NCCL logs as ranks, hosts, version, rings, trees and\n"
      "transports; nccl-tests output as its table rows. The kinds:\n" +
      kinds +
      "A file of no known kind, or a broken one, exits 2 with file:line[:column]: what.\n"
      "Lines or elements a reader does not know are warned about on stderr and skipped.";
  s.flags = {{"json", 0, "", "print what was found as JSON (an object per file; an array for several)"}};
  s.max_positionals = 1 << 16;
  s.examples =
      "  shardlab-cli inspect tests/data/real/azure-ndv4-topo.xml\n"
      "  shardlab-cli inspect run.log.gz --json\n";
  return s;
}

namespace {

constexpr std::size_t kMaxWarningsShown = 20;

void PrintWarnings(const Inspection& inspection) {
  const std::size_t shown = std::min(kMaxWarningsShown, inspection.warnings.size());
  for (std::size_t i = 0; i < shown; ++i) std::cerr << kProgram << ": warning: " << inspection.warnings[i] << "\n";
  if (inspection.warnings.size() > shown) {
    std::cerr << kProgram << ": warning: ... and " << inspection.warnings.size() - shown << " more\n";
  }
}

}  // namespace

int InspectMain(const ParsedArgs& args) {
  const std::vector<std::string>& paths = args.positionals();
  if (paths.empty()) throw UsageError("inspect needs a file (see 'shardlab-cli inspect --help')");
  const bool json = args.Has("json");
  std::vector<std::pair<FieldFile, Inspection>> found;
  for (const std::string& path : paths) {
    FieldFile file = ReadFieldFile(path);
    Inspection inspection = InspectFieldFile(file);
    PrintWarnings(inspection);
    found.emplace_back(std::move(file), std::move(inspection));
  }
  if (json) {
    JsonWriter w(std::cout, true);
    if (found.size() > 1) w.BeginArray();
    for (const auto& [file, inspection] : found) {
      w.BeginObject();
      w.Field("file", file.path);
      w.Field("kind", inspection.kind);
      w.Field("gzip", file.gzip);
      w.Field("summary", inspection.summary);
      if (inspection.json) inspection.json(w);
      w.Key("warnings");
      w.BeginArray();
      for (const std::string& warning : inspection.warnings) w.String(warning);
      w.EndArray();
      w.EndObject();
    }
    if (found.size() > 1) w.EndArray();
    std::cout << "\n";
    return 0;
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& [file, inspection] = found[i];
    if (i > 0) std::cout << "\n";
    std::cout << file.path << ": " << inspection.kind << (file.gzip ? " (gzip)" : "") << "\n"
              << "  " << inspection.summary << "\n";
    std::size_t begin = 0;
    while (begin < inspection.page.size()) {
      std::size_t end = inspection.page.find('\n', begin);
      if (end == std::string::npos) end = inspection.page.size();
      std::cout << "  " << inspection.page.substr(begin, end - begin) << "\n";
      begin = end + 1;
    }
    if (!inspection.warnings.empty()) {
      std::cout << "  (" << inspection.warnings.size() << " warning" << (inspection.warnings.size() == 1 ? "" : "s")
                << " on stderr)\n";
    }
  }
  return 0;
}

}  // namespace shardlab::cli
