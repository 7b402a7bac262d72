// CUDA engine: build facts and the list of usable devices (for apsp.info() and device choice).
#include <cuda_runtime.h>

#include "apsp/apsp.hpp"
#include "cuda/check.cuh"

namespace apsp {

CudaBuildInfo cuda_build_info() { return {true, APSP_CUDA_WHY}; }

std::vector<CudaDevice> cuda_devices(std::string* why_none) {
  std::vector<CudaDevice> out;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (why_none) *why_none = std::string("no usable CUDA driver or device: ") + cudaGetErrorString(err);
    return out;
  }
  if (count == 0) {
    if (why_none) *why_none = "the CUDA driver reports no devices";
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    APSP_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    CudaDevice d;
    d.index = i;
    d.name = prop.name;
    d.major = prop.major;
    d.minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.total_memory = prop.totalGlobalMem;
    int prev = 0;
    APSP_CUDA_CHECK(cudaGetDevice(&prev));
    APSP_CUDA_CHECK(cudaSetDevice(i));
    size_t free_b = 0, total_b = 0;
    APSP_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    APSP_CUDA_CHECK(cudaSetDevice(prev));
    d.free_memory = free_b;
    out.push_back(d);
  }
  return out;
}

}  // namespace apsp
