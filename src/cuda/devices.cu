// CUDA engine: build facts and the list of usable devices (for apsp.info() and device choice).
// Listing devices makes no CUDA context on any of them (a context holds about 500 MB of a GPU's
// memory for the process's life): free memory comes from NVML, or from a context that is already
// there.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <optional>
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

// Whether `device`'s primary context exists (made by an earlier solve, or by PyTorch or CuPy):
// the driver's cuDevicePrimaryCtxGetState, reached through the runtime.
bool has_context(int device) {
  using GetState = CUresult (*)(CUdevice, unsigned*, int*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &fn, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn) {
    (void)cudaGetLastError();
    return false;
  }
  unsigned flags = 0;
  int active = 0;
  return reinterpret_cast<GetState>(fn)(CUdevice(device), &flags, &active) == CUDA_SUCCESS &&
         active != 0;
}

// NVML (libnvidia-ml, installed with the driver, loaded at run time), initialised for one listing:
// free bytes on a device without a CUDA context, matched by PCI bus id.
class Nvml {
 public:
  Nvml() {
    static void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);  // kept: NVML's own
    if (!lib) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    shutdown_ = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlShutdown"));
    by_bus_id_ = reinterpret_cast<ByBusId>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    memory_info_ = reinterpret_cast<MemoryInfo>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
    ok_ = init && shutdown_ && by_bus_id_ && memory_info_ && init() == 0;  // NVML_SUCCESS is 0
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  ~Nvml() {
    if (ok_) (void)shutdown_();
  }
  // nullopt where NVML is absent or speaks of another amount of memory than the CUDA device has
  // (a MIG instance is a part of its GPU).
  std::optional<uint64_t> free_memory(int device, uint64_t cuda_total) const {
    char bus_id[32] = {};
    if (!ok_ || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
      (void)cudaGetLastError();
      return std::nullopt;
    }
    void* handle = nullptr;
    Memory m{};
    if (by_bus_id_(bus_id, &handle) != 0 || memory_info_(handle, &m) != 0 ||
        std::fabs(double(m.total) - double(cuda_total)) > 0.05 * double(cuda_total))
      return std::nullopt;
    return uint64_t(m.free);
  }

 private:
  struct Memory {
    unsigned long long total, free, used;  // nvmlMemory_t
  };
  using ByBusId = int (*)(const char*, void**);
  using MemoryInfo = int (*)(void*, Memory*);
  int (*shutdown_)() = nullptr;
  ByBusId by_bus_id_ = nullptr;
  MemoryInfo memory_info_ = nullptr;
  bool ok_ = false;
};

// Free bytes on `device` without making a context: NVML's figure, else CUDA's where this device's
// context and the caller's current device's both exist already; nullopt otherwise.
std::optional<uint64_t> free_memory(const Nvml& nvml, int device, uint64_t total) {
  if (auto b = nvml.free_memory(device, total)) return b;
  int prev = 0;
  if (cudaGetDevice(&prev) != cudaSuccess || !has_context(device) || !has_context(prev)) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  size_t free_b = 0, total_b = 0;
  const bool ok = cudaSetDevice(device) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) ==
                                                               cudaSuccess;
  (void)cudaGetLastError();
  (void)cudaSetDevice(prev);
  return ok ? std::optional<uint64_t>(free_b) : std::nullopt;
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
  const Nvml nvml;
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
    d.free_memory = free_memory(nvml, i, d.total_memory);
    out.push_back(d);
  }
  return out;
}

}  // namespace apsp
