// NCCL over MPI (compiled only with NCCL).
#include "engine/backends/mpi_gpu/rank_nccl.h"

#include <cstring>
#include <string>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/nccl_call.h"
#include "engine/run/rank_device.h"

namespace shardlab::mpi_gpu {
namespace {

static_assert(NCCL_UNIQUE_ID_BYTES == kNcclUniqueIdBytes,
              "the mpi backend broadcasts kNcclUniqueIdBytes of NCCL's unique id");

// Closes an open ncclGroupStart on every way out: a group left open would
// swallow this thread's later NCCL calls.
class GroupGuard {
 public:
  GroupGuard() = default;
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;
  ~GroupGuard() {
    if (open_) ncclGroupEnd();  // result ignored: an error is already on its way out
  }
  ncclResult_t End() {
    open_ = false;
    return ncclGroupEnd();
  }

 private:
  bool open_ = true;
};

class Communicator final : public RankNccl {
 public:
  Communicator(const std::vector<char>& unique_id, int rank, int size) : rank_(rank), size_(size) {
    if (unique_id.size() != sizeof(ncclUniqueId))
      throw Error("rank " + std::to_string(rank) + ": NCCL unique id of " +
                      std::to_string(unique_id.size()) + " bytes (expected " +
                      std::to_string(sizeof(ncclUniqueId)) + ")",
                  ErrorKind::kRuntime);
    ncclUniqueId id;
    std::memcpy(&id, unique_id.data(), sizeof(id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // returns at once; Ready() polls, bounded by the caller
    const ncclResult_t status = ncclCommInitRankConfig(&comm_, size, id, rank, &config);
    if (status != ncclSuccess && status != ncclInProgress) {
      Abort();  // NCCL may have made the communicator before it failed
      cuda::ThrowNcclError(status, "ncclCommInitRankConfig", __FILE__, __LINE__, rank);
    }
  }

  // Abort rather than destroy: it never waits for the other ranks, and a
  // clean run has nothing left in flight on the communicator.
  ~Communicator() override { Abort(); }

  bool Ready() override {
    if (ready_) return true;
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(comm_, &state), rank_);
    if (state == ncclInProgress) return false;
    if (state != ncclSuccess)
      cuda::ThrowNcclError(state, "ncclCommInitRankConfig (asynchronous)", __FILE__, __LINE__,
                           rank_);
    ready_ = true;
    return true;
  }

  bool Launch(const cuda::NcclRankCall& call) override {
    // A group, so that all-to-all's sends and receives go in together.
    NCCL_CHECK(ncclGroupStart(), rank_);
    GroupGuard group;  // a throw while enqueuing still closes the group
    cuda::EnqueueNcclCall(call, comm_, size_);
    const ncclResult_t status = group.End();
    if (status != ncclSuccess && status != ncclInProgress)
      cuda::ThrowNcclError(status, "ncclGroupEnd", __FILE__, __LINE__, rank_);
    return Issued();
  }

  bool Issued() override {
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(comm_, &state), rank_);
    if (state == ncclInProgress) return false;
    if (state != ncclSuccess)
      cuda::ThrowNcclError(state, "ncclGroupEnd (asynchronous)", __FILE__, __LINE__, rank_);
    return true;
  }

  void Abort() override {
    if (comm_ == nullptr) return;
    ncclCommAbort(comm_);  // result ignored: called on the way out of a failed run
    comm_ = nullptr;
  }

 private:
  int rank_;
  int size_;
  ncclComm_t comm_ = nullptr;
  bool ready_ = false;
};

}  // namespace

bool RankNccl::Available() { return true; }

std::vector<char> RankNccl::UniqueId(int rank) {
  ncclUniqueId id;
  NCCL_CHECK(ncclGetUniqueId(&id), rank);
  const char* bytes = reinterpret_cast<const char*>(&id);
  return std::vector<char>(bytes, bytes + sizeof(id));
}

std::unique_ptr<RankNccl> RankNccl::Start(const std::vector<char>& unique_id, int rank, int size) {
  return std::make_unique<Communicator>(unique_id, rank, size);
}

}  // namespace shardlab::mpi_gpu
