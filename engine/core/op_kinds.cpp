#include "engine/core/op_kinds.h"


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

}  // namespace shardlab
