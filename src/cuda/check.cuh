// CUDA error checking for the CUDA engine: every runtime call and launch goes through these, and
// failures become apsp::CudaError / apsp::MemoryError carrying the operation, file, line and text
// (allocations: the bytes needed and free); malloc_async, the stream-ordered allocation every
// scratch buffer takes; and DeviceGuard, which sets the device an entry point works on.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <sstream>
#include <string>

#include "apsp/apsp.hpp"

namespace apsp::cuda_detail {

// "N bytes (X GiB)", for MemoryError messages.
inline std::string bytes_text(uint64_t b) {
  std::ostringstream s;
  s << b << " bytes (" << double(b) / double(1ull << 30) << " GiB)";
  return s.str();
}

// The current device and its free and total memory, for MemoryError messages; leaves no error.
struct GpuMemory {
  int device = -1;
  size_t free = 0, total = 0;
};
inline GpuMemory gpu_memory() {
  GpuMemory m;
  (void)cudaGetDevice(&m.device);
  (void)cudaMemGetInfo(&m.free, &m.total);
  (void)cudaGetLastError();
  return m;
}

[[noreturn]] inline void throw_cuda(cudaError_t err, const char* what, const char* file, int line) {
  std::string msg = std::string("CUDA error in ") + what + " (" + file + ":" + std::to_string(line) +
                    "): " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) {  // not an allocation of ours (those name their bytes)
    const GpuMemory m = gpu_memory();
    throw MemoryError(msg + "; " + bytes_text(m.free) + " of " + bytes_text(m.total) +
                      " are free on CUDA device " + std::to_string(m.device) +
                      "; free GPU memory or use a smaller graph");
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

namespace apsp::cuda_detail {

// MemoryError with bytes needed and free (the error contract), for `what`.
[[noreturn]] inline void throw_out_of_memory(uint64_t needed, const std::string& what) {
  const GpuMemory g = gpu_memory();
  std::ostringstream m;
  m << "not enough GPU memory on CUDA device " << g.device << ": " << what << " needs "
    << bytes_text(needed) << " but only " << bytes_text(g.free) << " of " << bytes_text(g.total)
    << " are free; free GPU memory, use a smaller graph or float32/int32, or pass device='cpu'";
  throw MemoryError(m.str());
}

// cudaMalloc / cudaMallocAsync, with out-of-memory as throw_out_of_memory's MemoryError.
inline void check_allocation(cudaError_t err, size_t bytes, const char* what) {
  if (err == cudaErrorMemoryAllocation) throw_out_of_memory(bytes, what);
  APSP_CUDA_CHECK(err);
}

// Freed bytes the stream-ordered pool keeps across synchronizations. At the pool's default
// threshold, 0, every sync handed them back to the OS, so each call's scratch (statistics, lists)
// was mapped afresh while the GPU waited: about 180 µs of every checked call on an H200
// (benchmarks/probes/pool_threshold.py; benchmarks/GPU_NOTES.md, fifty-ninth session).
constexpr uint64_t kPoolKeepBytes = 64ull << 20;

// cudaMallocAsync, from the current device's pool, whose release threshold is first raised to
// kPoolKeepBytes, once per device: never lowered (a caller's larger threshold stays), and not
// asked again (a caller who lowers it later keeps theirs; a pool set in its place,
// cudaDeviceSetMemPool, keeps its own). Not while `stream` is being captured into a CUDA graph
// (the allocation is recorded; a later call raises it), and in relaxed capture mode, so that
// another thread's capture in global mode is not invalidated by these calls.
inline cudaError_t malloc_async(void** ptr, size_t bytes, cudaStream_t stream) {
  static std::atomic<uint64_t> raised{0};  // one bit per device (devices >= 64: asked each time)
  int device = 0;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaGetDevice(&device) == cudaSuccess &&
      (device >= 64 || !(raised.load(std::memory_order_acquire) >> device & 1))) {
    cudaError_t err = cudaStreamIsCapturing(stream, &capture);
    if (err == cudaSuccess && capture == cudaStreamCaptureStatusNone) {
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      err = cudaThreadExchangeStreamCaptureMode(&mode);
      if (err == cudaSuccess) {
        cudaMemPool_t pool = nullptr;
        uint64_t threshold = 0;
        err = cudaDeviceGetMemPool(&pool, device);
        if (err == cudaSuccess)
          err = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
        if (err == cudaSuccess && threshold < kPoolKeepBytes) {
          threshold = kPoolKeepBytes;
          err = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
        }
        (void)cudaThreadExchangeStreamCaptureMode(&mode);  // the caller's mode back
      }
      if (err == cudaSuccess && device < 64)
        raised.fetch_or(uint64_t(1) << device, std::memory_order_acq_rel);
    }
    // None of these errors is the allocation's: a device without pools fails below.
    if (err != cudaSuccess) (void)cudaGetLastError();
  }
  return cudaMallocAsync(ptr, bytes, stream);
}


struct DeviceGuard {  // sets the current device, restores the caller's on exit
  int prev = -1;
  explicit DeviceGuard(int device) {
    // A non-sticky error left on this thread by an earlier call (ours or the caller's, e.g. a
    // caller's stream capture that another thread's device-wide sync invalidated) would
    // otherwise fail this solve's first launch check: every error is checked where it happens, so
    // none is owed.
    (void)cudaGetLastError();
    APSP_CUDA_CHECK(cudaGetDevice(&prev));
    if (prev == device) return;
    const cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      int count = 0;
      (void)cudaGetDeviceCount(&count);
      std::ostringstream m;
      m << "CUDA device " << device << " cannot be used (" << cudaGetErrorName(err) << ": "
        << cudaGetErrorString(err) << "); " << count << " device(s) visible: use 0.." << count - 1;
      prev = -1;
      throw CudaError(m.str());
    }
  }
  ~DeviceGuard() {
    if (prev >= 0) (void)cudaSetDevice(prev);
  }
};

}  // namespace apsp::cuda_detail
