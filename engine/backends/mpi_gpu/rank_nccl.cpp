// NCCL over MPI (compiled only with NCCL).
#include "engine/backends/mpi_gpu/rank_nccl.h"

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/nccl_call.h"
#include "engine/backends/mpi/rank_device.h"

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

  // A communicator not closed by Close() belongs to a failed run: abort,
  // which never waits for the other ranks.
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

  void Close(double timeout_ns) override {
    if (comm_ == nullptr) return;
    const ncclResult_t status = ncclCommFinalize(comm_);
    if (status != ncclSuccess && status != ncclInProgress) {
      Abort();
      cuda::ThrowNcclError(status, "ncclCommFinalize", __FILE__, __LINE__, rank_);
    }
    const auto start = std::chrono::steady_clock::now();
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) {
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) state = ncclInternalError;
      if (state != ncclInProgress) break;
      if (std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
              .count() > timeout_ns) {
        Abort();
        throw Error("rank " + std::to_string(rank_) + ": ncclCommFinalize did not finish within "
                        "--mpi-timeout; the communicator was aborted",
                    ErrorKind::kRuntime);
      }
      std::this_thread::yield();
    }
    if (state != ncclSuccess) {
      Abort();
      cuda::ThrowNcclError(state, "ncclCommFinalize (asynchronous)", __FILE__, __LINE__, rank_);
    }
    NCCL_CHECK(ncclCommDestroy(comm_), rank_);
    comm_ = nullptr;
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
