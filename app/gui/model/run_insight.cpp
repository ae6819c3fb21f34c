#include "app/gui/model/run_insight.h"
#include "app/gui/model/run_detail.h"
#include "engine/core/backend_traits.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab::gui {
namespace {

/// The pattern of the run the session shows (an empty one before a run).
CommPattern PatternOf(const Session& session) {
  const Topology* topology = session.topology();
  const Plan* plan = session.plan();
  if (topology == nullptr || plan == nullptr) return {};
  if (const PreparedCollective* c = CollectiveOf(session.prepared())) {
    const CollectiveParams& params = c->params;
    std::vector<int> order = c->ring_order;
    if (order.empty()) order = params.ring_order;
    if (order.empty()) {
      for (int r = 0; r < params.ranks; ++r) order.push_back(r);
    }
    switch (params.algo) {
      case CollectiveAlgo::kRing:
        return RingPattern(*topology, order, "ring (" + c->ring_order_mode + " order)");
      case CollectiveAlgo::kTree: return DoubleTreePattern(*topology, order);
      case CollectiveAlgo::kDirect: return MeshPattern(*topology, params.ranks);
      case CollectiveAlgo::kNccl:
        return RingPattern(*topology, order, "ring the NCCL model assumes (" + c->ring_order_mode + " order)");
    }
  }
  if (const PreparedPipeline* p = PreparedDetail<PreparedPipeline>(session, "pipeline_metrics")) {
    return StageChainPattern(*topology, p->pipeline.params.shape.stages);
  }
  if (const PreparedThreeD* t = PreparedDetail<PreparedThreeD>(session, "three_d_metrics")) return GridPattern(*topology, t->three_d.params.grid);
  if (RunHasPanel(session, "moe_metrics")) return MeshPattern(*topology, plan->num_ranks);
  return TransferPattern(*topology, *plan, "the plan's transfers");
}

}  // namespace

void RunInsight::Refresh(const Session& session) {
  session_ = &session;
  const Plan* plan = session.plan();
  const bool complete = plan != nullptr && session.state() != SessionState::kRunning;
  const std::size_t events = session.store().event_count();
  const bool new_run = session.run_id() != run_id_ || plan == nullptr;
  if (new_run) {
    selection_.Clear();
    details_ = OpDetails{};
    pattern_ = CommPattern{};
    if (plan != nullptr) pattern_ = PatternOf(session);
  }
  if (new_run || events != events_ || complete != complete_) {
    usage_.reset();
    if (complete && session.topology() != nullptr && events > 0) {
      usage_ = std::make_unique<LinkUsage>(*plan, *session.topology(), session.store());
    }
    run_id_ = session.run_id();
    events_ = events;
    complete_ = complete;
    Describe();
  }
  if (CurrentLanguage() != language_) {  // the details' words: in the language of the moment
    language_ = CurrentLanguage();
    Describe();
  }
  // Link wait is measured against the modelled links only (the simulator's).
  const bool modelled = BackendTraitsOrDefault(session.backend()).simulator;
  const bool pipeline = RunHasPanel(session, "pipeline_metrics") && session.prepared() != nullptr;
  critical_ = path_cache_.Get(session.run_id(), complete, plan, session.store(),
                              modelled ? session.topology() : nullptr, &session.faults(), pipeline);
}

void RunInsight::SelectOp(OpId op) {
  selection_.Clear();
  selection_.op = usage_ ? usage_->Unit(op) : op;
  Describe();
}

void RunInsight::SelectLink(int link) {
  selection_.Clear();
  selection_.link = link;
  Describe();
}

void RunInsight::Describe() {
  details_ = OpDetails{};
  if (session_ == nullptr || selection_.op == kNoOp || !usage_) return;
  const Plan* plan = session_->plan();
  const Topology* topology = session_->topology();
  if (plan == nullptr || topology == nullptr) return;
  details_ = DescribeOp(*plan, *topology, session_->store(), *usage_, selection_.op, &session_->faults());
}

}  // namespace shardlab::gui
