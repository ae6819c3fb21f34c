#include "engine/backends/cuda/cuda_check.h"

#include <string>

namespace shardlab::cuda {
namespace {

std::string Where(const char* call, const char* file, int line, int rank) {
  std::string base = file;
  const std::size_t slash = base.find_last_of('/');
  if (slash != std::string::npos) base = base.substr(slash + 1);
  std::string text = std::string(call) + " failed at " + base + ":" + std::to_string(line);
  if (rank >= 0) text += " on rank " + std::to_string(rank);
  return text;
}

}  // namespace

bool IsStickyCudaStatus(cudaError_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

void ThrowCudaError(cudaError_t status, const char* call, const char* file, int line, int rank) {
  const bool sticky = IsStickyCudaStatus(status);
  std::string message = Where(call, file, line, rank) + ": " + cudaGetErrorName(status) + " (" +
                        cudaGetErrorString(status) + ")";
  if (sticky) message += " [sticky: the CUDA context is lost until the process exits]";
  throw DeviceError(message, sticky);
}

void ThrowCublasError(cublasStatus_t status, const char* call, const char* file, int line,
                      int rank) {
  throw DeviceError(Where(call, file, line, rank) + ": " + cublasGetStatusName(status) + " (" +
                        cublasGetStatusString(status) + ")",
                    false);
}

}  // namespace shardlab::cuda
