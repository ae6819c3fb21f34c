#include "engine/plan/op_kinds.h"

#include "engine/plan/plan.h"

namespace shardlab {

const char* LaneName(Lane lane) {
  switch (lane) {
    case Lane::kCompute: return "compute";
    case Lane::kSend: return "send";
    case Lane::kRecv: return "recv";
    case Lane::kCopy: return "copy";
  }
  return "?";
}

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kCompute: return "compute";
    case OpKind::kSend: return "send";
    case OpKind::kRecv: return "recv";
    case OpKind::kReduce: return "reduce";
    case OpKind::kCopy: return "copy";
    case OpKind::kCollective: return "collective";
  }
  return "?";
}

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kNone: return "none";
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "float";
    case DType::kF16: return "half";
    case DType::kBF16: return "bfloat16";
  }
  return "?";
}

int DTypeBytes(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kNone: return "";
    case Phase::kReduceScatter: return "reduce-scatter";
    case Phase::kAllGather: return "all-gather";
    case Phase::kBroadcast: return "broadcast";
    case Phase::kReduce: return "reduce";
    case Phase::kAllToAll: return "all-to-all";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kWeightGrad: return "weight-grad";
    case Phase::kRouter: return "router";
    case Phase::kDispatch: return "dispatch";
    case Phase::kExpert: return "expert";
    case Phase::kCombine: return "combine";
  }
  return "?";
}

const char* MemoryCategoryName(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::kOther: return "other";
    case MemoryCategory::kParameters: return "parameters";
    case MemoryCategory::kGradients: return "gradients";
    case MemoryCategory::kOptimizerStates: return "optimizer states";
    case MemoryCategory::kActivations: return "activations";
    case MemoryCategory::kGatheredParameters: return "gathered parameters";
  }
  return "?";
}

}  // namespace shardlab
