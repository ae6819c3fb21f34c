// shardlab: the desktop app.
//
//   shardlab                                   ring all-reduce, 8 GPUs, DGX A100
//   shardlab --topology dgx1-v100 --step 3     the cube-mesh, three steps in
//   shardlab --play --frames 240 --screenshot out.png   render, save, exit
//   shardlab --scenario tp --layer mlp --tp 4  Megatron's MLP over 4 GPUs
//   shardlab --scenario zero --stage 3         ZeRO-3: every model state sharded
//
// Exit codes as shardlab-cli: 0 success, 1 a runtime failure (no display,
// a failed run or export in scripted mode), 2 bad flags. Every failure
// prints one line, "shardlab: error: ...", on stderr.
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "app/gui/app/app.h"
#include "app/gui/app/app_flags.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/session.h"
#include "engine/core/error.h"
#include "engine/lab/lab_loader.h"

#ifndef SHARDLAB_VERSION
#define SHARDLAB_VERSION "0.1.0"
#endif

namespace {

/// Messages go on one line, whatever the engine put in them.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace shardlab;
  using namespace shardlab::gui;
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const AppFlags flags = ParseAppFlags(args);
    if (flags.help) {
      std::cout << AppHelpText();
      return 0;
    }
    if (flags.version) {
      std::cout << kAppProgram << " " << SHARDLAB_VERSION << "\n";
      return 0;
    }
    for (const std::string& notice : flags.notices) std::cerr << notice << "\n";
    // A scenario the flags make impossible (16 ranks on 8 GPUs) is bad input
    // like any other flag: say so before a window opens.
    {
      Session probe;
      if (const std::string problem = probe.Check(flags.settings); !problem.empty()) {
        throw Error(AsFlagMessage(flags.settings, problem), ErrorKind::kInvalidInput);
      }
    }
    // A lab that does not load is bad input too: every problem, one line.
    if (!flags.lab_path.empty()) {
      if (const LabLoadResult lab = ReadLab(flags.lab_path); !lab.ok()) {
        std::string problems = lab.ProblemsText();
        while (!problems.empty() && problems.back() == '\n') problems.pop_back();
        throw Error("--lab: " + problems, ErrorKind::kInvalidInput);
      }
    }
    App app(flags);
    return app.Run();
  } catch (const Error& e) {
    std::cerr << kAppProgram << ": error: " << OneLine(e.what()) << "\n";
    return e.kind() == ErrorKind::kInvalidInput ? 2 : 1;
  } catch (const std::bad_alloc&) {
    std::cerr << kAppProgram << ": error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << kAppProgram << ": error: " << OneLine(e.what()) << "\n";
    return 1;
  }
}
