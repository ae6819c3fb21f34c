#include "engine/backends/device/emulated_windows.h"

#include <atomic>

#include "engine/backends/sim/sim_backend.h"
#include "engine/run/backend.h"

namespace shardlab::device {

namespace {

class DurationSink final : public EventSink {
 public:
  explicit DurationSink(std::vector<TimeNs>& out) : out_(out) {}
  void OnEvent(const Event& e) override {
    if (e.op >= 0 && static_cast<std::size_t>(e.op) < out_.size())
      out_[static_cast<std::size_t>(e.op)] = e.end_ns - e.start_ns;
  }

 private:
  std::vector<TimeNs>& out_;
};

}  // namespace

std::vector<TimeNs> EmulatedTransferWindows(const Plan& plan, const Topology& topology,
                                            const std::vector<int>& rank_to_gpu) {
  std::vector<TimeNs> windows(plan.ops.size(), 0);
  if (plan.num_steps <= 0) return windows;
  std::unique_ptr<Backend> sim = CreateSimBackend();
  RunOptions options;
  options.timing_only = true;
  options.rank_to_gpu = rank_to_gpu;
  sim->Load(plan, topology, options);
  DurationSink sink(windows);
  const std::atomic<bool> cancel{false};
  sim->RunThroughStep(plan.num_steps - 1, sink, cancel);
  return windows;
}

}  // namespace shardlab::device
