// NCCL communicators and calls (compiled only with SHARDLAB_HAVE_NCCL).
#include "engine/backends/cuda/nccl_collective.h"

#include <algorithm>
#include <string>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/nccl_call.h"

namespace shardlab::cuda {

void ThrowNcclError(ncclResult_t status, const char* call, const char* file, int line, int rank) {
  std::string base = file;
  const std::size_t slash = base.find_last_of('/');
  if (slash != std::string::npos) base = base.substr(slash + 1);
  std::string message = std::string(call) + " failed at " + base + ":" + std::to_string(line);
  if (rank >= 0) message += " on rank " + std::to_string(rank);
  message += std::string(": ") + ncclGetErrorString(status);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && last[0] != '\0') message += std::string(" (") + last + ")";
  // A CUDA failure under NCCL may have poisoned the context.
  const cudaError_t cuda_status = cudaPeekAtLastError();
  throw DeviceError(message, status == ncclUnhandledCudaError && IsStickyCudaStatus(cuda_status));
}

namespace {

ncclRedOp_t RedOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
    default: return ncclSum;
  }
}

class Communicators final : public NcclCommunicators {
 public:
  explicit Communicators(const std::vector<int>& rank_gpus) : comms_(rank_gpus.size(), nullptr) {
    NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(rank_gpus.size()), rank_gpus.data()),
               -1);
  }

  ~Communicators() override {
    for (ncclComm_t c : comms_)
      if (c != nullptr) ncclCommDestroy(c);
  }

  void Launch(const std::vector<NcclRankCall>& calls) override {
    NCCL_CHECK(ncclGroupStart(), -1);
    for (const NcclRankCall& c : calls) Enqueue(c);
    NCCL_CHECK(ncclGroupEnd(), -1);
  }

 private:
  void Enqueue(const NcclRankCall& c) {
    EnqueueNcclCall(c, comms_[static_cast<std::size_t>(c.rank)], static_cast<int>(comms_.size()));
  }

  std::vector<ncclComm_t> comms_;
};

}  // namespace

void EnqueueNcclCall(const NcclRankCall& c, ncclComm_t comm, int ranks) {
  const int n = ranks;
  const std::size_t count = static_cast<std::size_t>(c.count);
  const std::size_t part = count / static_cast<std::size_t>(n);
  const ncclDataType_t type = c.dtype == DType::kF16    ? ncclHalf
                              : c.dtype == DType::kBF16 ? ncclBfloat16
                                                        : ncclFloat;
  const std::size_t element = static_cast<std::size_t>(DTypeBytes(c.dtype));
  char* const src = static_cast<char*>(c.src);
  char* const dst = static_cast<char*>(c.dst);
  switch (c.call) {
    case LibraryCollective::kAllReduce:
      NCCL_CHECK(ncclAllReduce(c.src, c.dst, count, type, RedOp(c.reduce), comm, c.stream),
                 c.rank);
      break;
    case LibraryCollective::kReduceScatter:  // in place: rank r's chunk of dst
      NCCL_CHECK(ncclReduceScatter(c.src, dst + part * static_cast<std::size_t>(c.rank) * element, part,
                                   type, RedOp(c.reduce), comm, c.stream),
                 c.rank);
      break;
    case LibraryCollective::kAllGather:  // in place: rank r's chunk is its input
      NCCL_CHECK(ncclAllGather(src + part * static_cast<std::size_t>(c.rank) * element, c.dst, part,
                               type, comm, c.stream),
                 c.rank);
      break;
    case LibraryCollective::kBroadcast:
      NCCL_CHECK(ncclBroadcast(c.src, c.dst, count, type, c.root, comm, c.stream), c.rank);
      break;
    case LibraryCollective::kReduce:
      NCCL_CHECK(ncclReduce(c.src, c.dst, count, type, RedOp(c.reduce), c.root, comm,
                            c.stream),
                 c.rank);
      break;
    case LibraryCollective::kAllToAll:  // block j of send to peer j, block i of recv from i
      if (part == 0) break;
      for (int peer = 0; peer < n; ++peer) {
        const std::size_t at = part * static_cast<std::size_t>(peer);
        NCCL_CHECK(ncclSend(src + at * element, part, type, peer, comm, c.stream), c.rank);
        NCCL_CHECK(ncclRecv(dst + at * element, part, type, peer, comm, c.stream), c.rank);
      }
      break;
    case LibraryCollective::kNone:
      throw Error("rank " + std::to_string(c.rank) + ": a collective op names no library call");
  }
}

std::unique_ptr<NcclCommunicators> NcclCommunicators::Create(const std::vector<int>& rank_gpus,
                                                             int device_count) {
  std::vector<int> sorted = rank_gpus;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw Error("NCCL needs one GPU per rank: " + std::to_string(rank_gpus.size()) + " ranks, " +
                    std::to_string(device_count) + (device_count == 1 ? " GPU" : " GPUs") +
                    " (run the hand-written algorithms on virtual devices, or fewer ranks)",
                ErrorKind::kRuntime);
  return std::make_unique<Communicators>(rank_gpus);
}

}  // namespace shardlab::cuda
