// `shardlab-cli demo`: what README's first command ends with. It runs two
// real commands and prints them first, so every line can be reproduced:
// ring all-reduce step by step on a small buffer, then a short size sweep.
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/commands.h"

namespace shardlab::cli {
namespace {

int RunShown(const char* intro, int (*command)(std::span<const std::string>),
             const std::vector<std::string>& words) {
  std::cout << intro << "\n$ " << kProgram;
  for (const std::string& w : words) std::cout << " " << w;
  std::cout << "\n";
  std::cout.flush();
  // The words after the command name are what that command parses.
  return command(std::span<const std::string>(words).subspan(1));
}

}  // namespace

CommandSpec DemoSpec() {
  CommandSpec s;
  s.name = "demo";
  s.summary = "ring all-reduce on a simulated DGX A100, step by step, then a size sweep";
  s.usage = "demo";
  s.description =
      "Runs two commands on the simulator and shows them first:\n"
      "  run allreduce --algo ring --ranks 8 --size 1M --topology dgx-a100 --step\n"
      "  sweep allreduce -b 1K -e 1G -f 4 --ranks 8 --topology dgx-a100";
  s.max_positionals = 0;
  return s;
}

int DemoMain(const ParsedArgs& args) {
  std::cout
      << "ShardLab demo: ring all-reduce on a simulated DGX A100\n"
      << "\n"
      << "Eight A100 GPUs, each linked to the NVSwitches by NVLink3 at 300 GB/s per\n"
      << "direction. Every GPU starts with its own buffer (think: its gradients) cut into\n"
      << "8 chunks, A to H. In each step every GPU sends one chunk to its ring neighbour.\n"
      << "7 reduce-scatter steps add the chunks up until each GPU owns one complete sum,\n"
      << "then 7 all-gather steps pass the finished chunks around: 2(N-1) = 14 steps.\n"
      << "\n";
  const int first = RunShown(
      "The chunk state after every step:", RunMain,
      {"run", "allreduce", "--algo", "ring", "--ranks", "8", "--size", "1M", "--topology",
       "dgx-a100", "--step"});
  std::cout
      << "\n"
      << "Small buffers are bound by the per-step latency, 14 times over; large ones by\n"
      << "bandwidth. busbw = algbw x 2(N-1)/N is what each GPU's link carried, so it is\n"
      << "the number to hold against the 300 GB/s that one A100 can send (the 600 GB/s\n"
      << "often quoted counts both directions).\n"
      << "\n";
  const int second = RunShown(
      "The same collective from 1 KiB to 1 GiB:", SweepMain,
      {"sweep", "allreduce", "-b", "1K", "-e", "1G", "-f", "4", "--ranks", "8", "--topology",
       "dgx-a100"});
  std::cout
      << "\n"
      << "The simulator models links and latency only, so large sizes approach the 300 GB/s\n"
      << "a ring can carry here; NCCL on a real DGX A100 reaches about 230 GB/s busbw.\n"
      << "\n"
      << "Next: shardlab-cli topo --preset dgx1-v100    (a ring that must avoid slow hops)\n"
      << "      shardlab-cli run allreduce --trace ar.json    (open it in ui.perfetto.dev)\n"
      << "      shardlab-cli --help\n";
  return first != 0 ? first : second;
}

}  // namespace shardlab::cli
