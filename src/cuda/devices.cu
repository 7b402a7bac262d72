// CUDA engine: build facts and the list of usable devices (for apsp.info() and device choice).
#include <cuda_runtime.h>

#include <string>

#include "apsp/apsp.hpp"
#include "cuda/check.cuh"

namespace apsp {

CudaBuildInfo cuda_build_info() { return {true, APSP_CUDA_WHY}; }

namespace {
std::string cuda_version(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// Why cudaGetDeviceCount failed, in the user's terms. Without libcuda the static runtime reports
// "driver version is insufficient", which would send the user to upgrade a driver that is not
// there: cudaDriverGetVersion gives 0 when no driver is installed.
std::string why_count_failed(cudaError_t err) {
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaGetLastError();
  if (driver == 0) return "no NVIDIA driver is installed (libcuda.so.1 was not found)";
  if (err == cudaErrorInsufficientDriver)
    return "the NVIDIA driver supports CUDA " + cuda_version(driver) + ", older than the CUDA " +
           cuda_version(runtime) + " runtime apsp was built with; update the driver";
  return std::string("no usable CUDA device: ") + cudaGetErrorString(err);
}
}  // namespace

std::vector<CudaDevice> cuda_devices(std::string* why_none) {
  std::vector<CudaDevice> out;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (why_none) *why_none = why_count_failed(err);
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
    // Free memory needs a context on device i. A device that cannot make one (say, exclusive to
    // another process) reports 0 free instead of failing the whole list; solving on it raises
    // RuntimeError with the reason. The caller's current device is restored either way.
    int prev = 0;
    APSP_CUDA_CHECK(cudaGetDevice(&prev));
    size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(i) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
      free_b = 0;
    (void)cudaGetLastError();
    APSP_CUDA_CHECK(cudaSetDevice(prev));
    d.free_memory = free_b;
    out.push_back(d);
  }
  return out;
}

}  // namespace apsp
