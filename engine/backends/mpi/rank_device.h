// Where one mpi process keeps its rank's buffers and runs its local ops,
// when that is a GPU (--backend mpi --device gpu). The mpi backend stays
// free of CUDA: it drives a RankDevice through this interface, and a
// library built only with CUDA (engine/backends/mpi_gpu) installs the
// factory at start-up, as SetGpuCounter is installed.
//
//   op kind          host buffers (mpi_backend.cpp)   RankDevice
//   compute/reduce/  ApplyOpData, done at once         StartLocal: kernels / cuBLAS
//   copy                                               on the lane's stream, two
//                                                      CUDA events; Done() polls
//   collective       refused (needs --device gpu)      StartLocal: one NCCL call
//   send             MPI_Isend(host slice)             staged: StartSendStaging (D2H
//                                                      into pinned), then Isend of
//                                                      SendBuffer; direct: Isend of
//                                                      the device slice
//   recv             MPI_Irecv(slice or staging),      MPI_Irecv(RecvBuffer), then
//                    combine on the host               FinishRecv (H2D / combine
//                                                      kernel); Done() polls
//
// Every poll is non-blocking, so the mpi backend's progress loop bounds
// every wait by --mpi-timeout as it does for MPI requests. Ops the device
// runs are timed by CUDA events; DeviceTimes carries them already on this
// process's host clock (steady_clock ns, the clock of mpi::NowNs).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/units.h"
#include "engine/plan/host_data.h"
#include "engine/plan/plan.h"

namespace shardlab {

/// Bytes of NCCL's unique id (NCCL_UNIQUE_ID_BYTES; checked where NCCL
/// is compiled), which rank 0 broadcasts.
inline constexpr int kNcclUniqueIdBytes = 128;

/// How MPI moves a GPU rank's data between processes.
enum class GpuTransferPath : std::uint8_t {
  kStagedPinned,  // device -> pinned host -> MPI -> pinned host -> device
  kDeviceDirect,  // MPI reads and writes device memory (CUDA-aware MPI)
};

/// The path for this process: direct only when the MPI library was built
/// CUDA-aware (`compiled_cuda_aware`, MPIX_CUDA_AWARE_SUPPORT) and says so
/// at run time (`runtime_query` = MPIX_Query_cuda_support(), -1 when not
/// asked). `override_text` is SHARDLAB_MPI_GPU_TRANSFER ("staged", "direct"
/// or null/empty); "direct" on a library that is not CUDA-aware is an
/// Error naming the variable. `why` receives the reason for the header line.
GpuTransferPath ChooseGpuTransferPath(bool compiled_cuda_aware, int runtime_query,
                                      const char* override_text, std::string& why);

/// The run's header line for --device gpu: "rank 0 on GPU 1 of 2 (NVIDIA
/// H100); transfers staged through pinned host memory (OpenMPI is not
/// CUDA-aware)".
std::string DescribeGpuRun(int rank, int gpu, int gpu_count, const std::string& gpu_name,
                           GpuTransferPath path, const std::string& why);

/// The GPU of a process: its node-local rank (from MPI_Comm_split_type,
/// so any launcher) modulo the GPUs it sees.
int GpuForLocalRank(int local_rank, int gpu_count);

/// One process's GPU, as every rank sees it to find processes that share
/// one: the host name and the GPU's PCI bus id (empty: unknown).
struct GpuIdentity {
  std::string host;
  std::string bus_id;
};

/// NCCL hangs with two ranks of a communicator on one GPU: the first two
/// ranks whose identities match, as "ranks 0 and 2 both hold GPU
/// 0000:3b:00.0 on host node1", or empty when every process has its own.
std::string DescribeSharedGpu(const std::vector<GpuIdentity>& per_rank);

/// A CUDA event's time on the host clock: `reference_host_ns` is the host
/// time taken when the run's reference event completed, `elapsed_ms` what
/// cudaEventElapsedTime(reference, event) returned.
TimeNs DeviceEventHostNs(double reference_host_ns, float elapsed_ms);

/// The host time at which the run's reference event completed: between
/// the last poll that found it not ready (host time taken before that
/// poll) and the poll that found it ready (host time after it), so the
/// midpoint, whose error is at most half that gap.
double ReferenceHostNs(double last_not_ready_ns, double ready_ns);

struct DeviceTimes {
  double start_ns = 0;  // host clock (steady_clock), as mpi::NowNs
  double end_ns = 0;
};

/// A host-timed op (send, recv) of --device gpu: started at `started_ns`,
/// seen finished at `finished_ns`. Its dependencies may be device ops whose
/// CUDA-event times, mapped onto the host clock, come out a little late;
/// the start is clamped to at least `latest_dep_end_ns` (and the end to
/// at least the start), so no op starts before what it waits for ended.
DeviceTimes HostOpTimes(double started_ns, double finished_ns, double latest_dep_end_ns);

class RankDevice {
 public:
  virtual ~RankDevice() = default;

  /// Selects `gpu`, creates a stream per lane, allocates `rank`'s buffers
  /// (float32). `timeout_ns` bounds the device's own waits (uploads,
  /// downloads, the clock's reference event).
  virtual void Load(const Plan& plan, int rank, int gpu, GpuTransferPath path,
                    TimeNs timeout_ns) = 0;
  virtual std::string GpuName() const = 0;
  /// PCI bus id of `gpu` (cudaDeviceGetPCIBusId), asked before Load;
  /// empty when the device cannot say.
  virtual std::string GpuBusId(int gpu) = 0;

  /// The rank's buffers from `host` (as the simulator fills them); with
  /// timing_only, zeros. Waits (bounded) until they are on the device.
  virtual void Upload(const HostBuffers& host, bool timing_only) = 0;
  /// The rank's buffers into `host` (bounded wait).
  virtual void Download(HostBuffers& host) = 0;
  /// Waits (bounded) for the device to be idle, records the reference
  /// event and notes the host time it completed at: the run's time origin.
  virtual void StartClock() = 0;

  /// Compute, reduce, copy or collective: enqueued on the lane's stream
  /// between two events. Returns at once.
  virtual void StartLocal(OpId id) = 0;
  /// Staged path: copies the send's slice into a pinned block (D2H).
  virtual void StartSendStaging(OpId send) = 0;
  /// What MPI_Isend reads: the pinned block (staged) or the device slice.
  virtual const void* SendBuffer(OpId send) = 0;
  /// What MPI_Irecv writes `count` floats into; `into_place` allows the
  /// recv's destination slice itself (direct path, plain receive).
  virtual void* RecvBuffer(OpId recv, std::int64_t count, bool into_place) = 0;
  /// After MPI received: copy / combine into the destination. False when
  /// nothing is left to do on the device (received in place).
  virtual bool FinishRecv(OpId recv) = 0;
  /// Whether what was started for `id` has finished (non-blocking).
  virtual bool Done(OpId id) = 0;
  /// CUDA-event times of a local op, after Done.
  virtual DeviceTimes Times(OpId id) = 0;
  /// Gives back the staging blocks `id` held.
  virtual void Release(OpId id) = 0;

  /// NCCL over MPI: whether this build has NCCL; rank 0's unique id
  /// (ncclGetUniqueId) as bytes; InitNccl starts ncclCommInitRankConfig
  /// (non-blocking) and NcclReady polls it (throws on failure).
  virtual bool HasNccl() const = 0;
  virtual std::vector<char> NcclUniqueId() = 0;
  virtual void InitNccl(const std::vector<char>& unique_id, int rank, int size) = 0;
  virtual bool NcclReady() = 0;
  /// A clean run's end: the NCCL communicator finalized and destroyed
  /// (ncclCommFinalize polled within the timeout, ncclCommDestroy); throws
  /// (after aborting it) when that fails. Nothing to do without NCCL.
  virtual void Close() = 0;
  /// A wait ran out of time or the run failed: ncclCommAbort, so no kernel
  /// waits forever.
  virtual void Abort() = 0;
};

/// Installed by the GPU library (RegisterMpiGpuDevice); without it,
/// CreateRankDevice() throws Error("this build has no CUDA ...").
void SetRankDeviceFactory(std::function<std::unique_ptr<RankDevice>()> factory);
std::unique_ptr<RankDevice> CreateRankDevice();

}  // namespace shardlab
