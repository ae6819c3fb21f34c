// The one table of scenarios with tables of their own: a spec name and its
// renderer (cmd_*.cpp). Every other registered scenario runs `run NAME`
// with the defaults of scenario_run.cpp.
#include <map>

#include "app/cli/cmd_elastic.h"
#include "app/cli/scenario_run.h"

namespace shardlab::cli {

RunCommand ElasticRunCommand() {
  RunCommand c;
  c.main = ElasticMain;  // its own command still: several plans of its own (cmd_elastic.cpp)
  return c;
}

const RunCommand* FindRunCommand(const std::string& name) {
  static const std::map<std::string, RunCommand> kTable = {
      {"pipeline", PipelineRunCommand()}, {"tp", TpRunCommand()},   {"zero", ZeroRunCommand()},
      {"3d", ThreeDRunCommand()},         {"moe", MoeRunCommand()}, {"inference", InferenceRunCommand()},
      {"elastic", ElasticRunCommand()},
  };
  const auto it = kTable.find(name);
  return it == kTable.end() ? nullptr : &it->second;
}

}  // namespace shardlab::cli
