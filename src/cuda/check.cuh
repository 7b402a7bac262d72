// CUDA error checking for the CUDA engine: every runtime call and launch goes through these, and
// failures become apsp::CudaError / apsp::MemoryError carrying the operation, file, line and text.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "apsp/apsp.hpp"

namespace apsp::cuda_detail {

[[noreturn]] inline void throw_cuda(cudaError_t err, const char* what, const char* file, int line) {
  std::string msg = std::string("CUDA error in ") + what + " (" + file + ":" + std::to_string(line) +
                    "): " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) {  // not an allocation of ours (those name their bytes)
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
      msg += "; " + std::to_string(free_b) + " of " + std::to_string(total_b) +
             " bytes of GPU memory are free";
    (void)cudaGetLastError();
    throw MemoryError(msg + "; free GPU memory or use a smaller graph");
  }
  throw CudaError(msg);
}

}  // namespace apsp::cuda_detail

#define APSP_CUDA_CHECK(expr)                                                             \
  do {                                                                                    \
    cudaError_t apsp_err_ = (expr);                                                       \
    if (apsp_err_ != cudaSuccess) {                                                       \
      (void)cudaGetLastError(); /* clear a non-sticky error so the process stays usable */ \
      ::apsp::cuda_detail::throw_cuda(apsp_err_, #expr, __FILE__, __LINE__);              \
    }                                                                                     \
  } while (0)

// After every kernel launch: catches bad launch configurations at the launch site.
#define APSP_CUDA_CHECK_LAUNCH(kernel_name)                                                 \
  do {                                                                                    \
    cudaError_t apsp_err_ = cudaGetLastError();                                           \
    if (apsp_err_ != cudaSuccess)                                                         \
      ::apsp::cuda_detail::throw_cuda(apsp_err_, "launch of " kernel_name, __FILE__, __LINE__); \
  } while (0)
