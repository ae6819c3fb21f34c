// `shardlab-trace`: a Chrome trace ShardLab wrote (engine/io/trace_reader.h).
#include <memory>

#include "engine/field/field_reader.h"
#include "engine/field/inspect_text.h"
#include "engine/io/trace_reader.h"

namespace shardlab {
namespace {

Inspection Inspect(const FieldFile& file) {
  auto t = std::make_shared<LoadedTrace>(ReadChromeTrace(file.text, file.path));
  Inspection out;
  out.summary = Count(t->plan.num_ranks, "rank") + ", " + Count(static_cast<long>(t->events.size()), "event") +
                ", backend " + t->backend + ", clock " + t->clock;
  if (!t->title.empty()) out.page += "run: " + t->title + "\n";
  out.page += "plan: " + t->plan.name + "\n";
  out.page += "topology: " + t->topology.name + " (" + Count(t->topology.num_gpus(), "GPU") + ")\n";
  out.json = [t](JsonWriter& json) {
    json.Field("ranks", t->plan.num_ranks);
    json.Field("events", static_cast<int>(t->events.size()));
    json.Field("backend", t->backend);
    json.Field("clock", t->clock);
    json.Field("plan", t->plan.name);
    json.Field("topology", t->topology.name);
    json.Field("gpus", t->topology.num_gpus());
  };
  return out;
}

int Recognise(std::string_view head) {
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '{') return 0;
  return head.find("\"traceEvents\"") != std::string_view::npos ? 2 : 0;
}

}  // namespace

void RegisterFieldReader_shardlab_trace() {
  RegisterFieldReader({"shardlab-trace", "ShardLab Chrome trace (run --trace)", Recognise, Inspect});
}

}  // namespace shardlab
