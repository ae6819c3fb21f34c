// The CUDA backend: executes any Plan on the machine's GPUs.
//
//   rank r ──► model GPU g = RunOptions::rank_to_gpu[r] (default r; the GPU
//              of the topology, used by link emulation)
//          ──► physical GPU g % device_count   ("virtual devices" when ranks
//              share a GPU: each keeps its own buffers and streams)
//
// Each (rank, lane) is a CUDA stream; a dependency is cudaStreamWaitEvent
// on the end event of the op waited for; every op is bracketed by two
// events, converted to ns since the run began (clock kCudaEvent, or
// kEmulated for transfers held by link emulation). A Send and its Recv run
// as one transfer on the receiver's recv stream: cudaMemcpyPeerAsync for a
// plain receive (the runtime stages through host memory itself when the
// GPUs have no peer access), and for a reducing receive a kernel that reads
// the peer's memory directly when peer access is enabled, else one that
// reduces from a local staging copy. Compute ops run their kernels
// (kernels.cu; matrix products with cuBLAS) on the rank's compute stream.
// Kind kCollective runs as one NCCL call per rank (nccl_collective.h).
//
// Device buffers are held in the plan's dtype (device_layout.h): a 16-bit
// plan moves 2 bytes per element on the GPU, the bytes it reports.
// Reductions and element-wise kernels compute in fp32 and store in the
// dtype; 16-bit matrix products run on tensor cores with fp32 accumulation.
// fp32 plans give the simulator's bytes exactly; 16-bit ones are checked
// against the reference with the dtype's error bound (verify/bounds.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/run/backend.h"

namespace shardlab {

/// The backend. Load() throws Error("no CUDA device: ...") when the runtime
/// finds none.
std::unique_ptr<Backend> CreateCudaBackend();

/// What the CUDA backend is and can do: declared in every build (the app
/// runs it in a worker), registered with CreateCudaBackend by
/// RegisterCudaBackend.
inline BackendDeclaration CudaBackendDeclaration() {
  BackendDeclaration d;
  d.name = "cuda";
  d.description =
      "NVIDIA GPUs: streams and events, peer copies, cuBLAS, NCCL; virtual devices when ranks outnumber GPUs";
  BackendTraits& t = d.traits;
  t.event_clock = ClockKind::kCudaEvent;
  t.slow_rank = FaultSupport::kReal;  // a spin on the rank's stream
  t.failed_rank_refusal = "where a stopped GPU would hang the whole process (the mpi backend stops a rank for real)";
  t.emulates_links = true;
  t.default_warmup = 1;
  t.needs_worker = true;
  t.runs_on_local_gpus = true;
  return d;
}

/// Adds "cuda" to the backend registry and installs the machine probe
/// (topo --detect) and the calibrator (calibrate); front ends that link
/// shardlab_cuda call it once.
void RegisterCudaBackend();

/// Number of CUDA devices, or throws Error("no CUDA device: cudaGetDeviceCount
/// returned ...; the simulator (--backend sim) is the default").
int CudaDeviceCountOrThrow();

/// The physical GPU of each rank: model GPU (rank_to_gpu, default the rank)
/// modulo the device count.
std::vector<int> PhysicalGpus(int ranks, const std::vector<int>& rank_to_gpu, int device_count);

/// One line for the user: "4 ranks on 4 GPUs (one each)" or "8 ranks on
/// 1 GPU as virtual devices: GPU 0 holds ranks 0-7".
std::string DescribePlacement(const std::vector<int>& physical_gpus, int device_count);

}  // namespace shardlab
