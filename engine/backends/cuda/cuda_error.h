// Errors from the CUDA runtime, cuBLAS and NCCL, with the call, file, line
// and rank that failed. Host-only header (no CUDA includes), so the worker
// process and the CLI can classify an error without linking CUDA.
//
// A *sticky* error (an illegal address, a kernel that faulted, ECC) poisons
// the CUDA context until the process exits: every later call fails too.
// Such an error is a DeviceError with sticky() true; the worker reports it
// and exits rather than trying the next run in the same process.
#pragma once

#include <exception>
#include <string>

#include "engine/core/error.h"

namespace shardlab {

class DeviceError : public Error {
 public:
  DeviceError(std::string message, bool sticky)
      : Error(std::move(message), ErrorKind::kRuntime), sticky_(sticky) {}
  /// True when the process's CUDA context is unusable from now on.
  bool sticky() const { return sticky_; }

 private:
  bool sticky_;
};

/// Whether `e` reports an error that leaves the CUDA context unusable.
inline bool IsStickyCudaError(const std::exception& e) {
  const auto* device = dynamic_cast<const DeviceError*>(&e);
  return device != nullptr && device->sticky();
}

}  // namespace shardlab
