// A backend for the warm-up and iteration tests (tests/run/iterations_test,
// tests/gui_model/run_iterations_test): every op of its k-th run ends at
// (k + 1) us, so a test can tell which runs were timed; it counts the runs
// that finished.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/run/backend.h"
#include "engine/run/executor.h"
#include "engine/topology/presets.h"

namespace shardlab::test_util {

class SlowerEachRunBackend final : public Backend {
 public:
  explicit SlowerEachRunBackend(int* runs) : runs_(runs) {}
  std::string name() const override { return "slower-each-run"; }
  void Load(const Plan& plan, const Topology&, const RunOptions&) override {
    plan_ = &plan;
    done_.assign(plan.ops.size(), 0);
  }
  void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>&) override {
    const TimeNs end = (*runs_ + 1) * 1000.0;
    for (std::size_t i = 0; i < plan_->ops.size(); ++i) {
      const Op& op = plan_->ops[i];
      if (op.step > last_step || done_[i]) continue;
      done_[i] = 1;
      Event e;
      e.op = static_cast<OpId>(i);
      e.rank = op.rank;
      e.step = op.step;
      e.kind = op.kind;
      e.start_ns = 0;
      e.end_ns = end;
      sink.OnEvent(e);
    }
    if (last_step >= plan_->num_steps - 1) ++*runs_;
  }
  void Reset() override { done_.assign(plan_->ops.size(), 0); }
  std::span<const float> BufferData(BufferId) const override { return {}; }
  std::size_t completed_ops() const override { return 0; }

 private:
  const Plan* plan_ = nullptr;
  int* runs_;
  std::vector<char> done_;
};

/// A 2-rank all-reduce of 8 elements on that backend; `runs` counts its runs.
inline Executor MakeSlowerEachRunExecutor(int* runs) {
  CollectiveParams p;
  p.ranks = 2;
  p.count = 8;
  return Executor(std::make_unique<SlowerEachRunBackend>(runs), BuildCollective(p),
                  MakeTopologyPreset("dgx-a100"));
}

}  // namespace shardlab::test_util
