// CUDA runtime calls of the binding layer (see cuda_rt.hpp); every call is checked and named.
#include "cuda_rt.hpp"

#include <map>
#include <mutex>
#include <string>

#include "apsp/apsp.hpp"

#if APSP_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace apsp_py::cuda {

#if APSP_WITH_CUDA

namespace {

cudaStream_t as_stream(StreamInt s) { return reinterpret_cast<cudaStream_t>(s); }

[[noreturn]] void fail(cudaError_t err, const char* what) {
  (void)cudaGetLastError();  // clear a non-sticky error so the process stays usable
  std::string msg = std::string("CUDA error in ") + what + ": " + cudaGetErrorName(err) + ": " +
                    cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) throw apsp::MemoryError(msg);
  throw apsp::CudaError(msg);
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) fail(err, what);
}

}  // namespace

DeviceGuard::DeviceGuard(int device) {
  int current = -1;
  check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

int current_device() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

uint64_t pool_bytes_in_use(int device) {
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetMemPool(&pool, device), "cudaDeviceGetMemPool");
  uint64_t used = 0;
  check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used),
        "cudaMemPoolGetAttribute");
  return used;
}

int pointer_device(const void* ptr, const char* what) {
  cudaPointerAttributes attr{};
  check(cudaPointerGetAttributes(&attr, ptr), "cudaPointerGetAttributes");
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    throw apsp::ValueError(std::string(what) +
                           "'s __cuda_array_interface__ points to host memory (pointer " +
                           std::to_string(reinterpret_cast<uintptr_t>(ptr)) +
                           "); pass device memory, or a NumPy array for host memory");
  return attr.device;
}

void* alloc_result(std::size_t bytes, int device) {
  DeviceGuard guard(device);
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free = 0, total = 0;
    (void)cudaMemGetInfo(&free, &total);
    throw apsp::MemoryError("not enough memory on cuda:" + std::to_string(device) + " for a " +
                            std::to_string(bytes) + "-byte array (" + std::to_string(free) +
                            " bytes free); free device memory or solve in place with overwrite=True");
  }
  check(err, "cudaMalloc");
  return ptr;
}

void free_result(void* ptr, int device) noexcept {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) return;  // runtime already unloaded at exit
  if (previous != device) (void)cudaSetDevice(device);
  (void)cudaFree(ptr);
  (void)cudaGetLastError();
  if (previous != device) (void)cudaSetDevice(previous);
}

void copy_rows_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                     std::size_t row_bytes, std::size_t rows, StreamInt stream) {
  if (rows == 0 || row_bytes == 0) return;
  check(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows,
                          cudaMemcpyDeviceToDevice, as_stream(stream)),
        "cudaMemcpy2DAsync (copy of the graph into the result array)");
}

void order_streams(StreamInt producer, StreamInt consumer, int device) {
  if (producer == consumer) return;
  DeviceGuard guard(device);
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  cudaError_t err = cudaEventRecord(event, as_stream(producer));
  if (err == cudaSuccess) err = cudaStreamWaitEvent(as_stream(consumer), event, 0);
  (void)cudaEventDestroy(event);  // released once the wait is satisfied
  check(err, "cudaEventRecord/cudaStreamWaitEvent (ordering the consumer's stream after apsp's)");
}

namespace {
// One non-blocking stream per device that apsp owns for the process's lifetime: what a ready
// result's CUDA array interface names while its work is pending. apsp enqueues only event waits on
// it; a consumer may keep it as the array's stream (Numba does), where its later work waits for
// the solve and, like any non-blocking stream's, not for the legacy default stream.
cudaStream_t export_stream(int device) {
  static std::mutex mutex;
  static auto* streams = new std::map<int, cudaStream_t>();  // never destroyed at exit
  std::lock_guard<std::mutex> lock(mutex);
  cudaStream_t& s = (*streams)[device];
  if (s == nullptr) {
    DeviceGuard guard(device);
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  return s;
}
}  // namespace

ReadyEvent::~ReadyEvent() {
  // cudaEventDestroy needs no current device; after the runtime unloads at exit it fails, and
  // that error is cleared as free_result clears its own.
  if (event_ != nullptr && cudaEventDestroy(static_cast<cudaEvent_t>(event_)) != cudaSuccess)
    (void)cudaGetLastError();
}

void ReadyEvent::record(StreamInt stream, int device) {
  DeviceGuard guard(device);
  if (event_ == nullptr) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    event_ = e;
    device_ = device;
  }
  check(cudaEventRecord(static_cast<cudaEvent_t>(event_), as_stream(stream)),
        "cudaEventRecord (the result's ready event)");
}

void ReadyEvent::order_before(StreamInt consumer) const {
  DeviceGuard guard(device_);
  check(cudaStreamWaitEvent(as_stream(consumer), static_cast<cudaEvent_t>(event_), 0),
        "cudaStreamWaitEvent (ordering the consumer's stream after the result's ready event)");
}

StreamInt ReadyEvent::stream_to_name() const {
  const cudaError_t done = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (done == cudaSuccess) return 0;
  if (done != cudaErrorNotReady) fail(done, "cudaEventQuery (the result's ready event)");
  // Not an error, but some runtimes leave it as the thread's last error, where the next launch
  // check (apsp's, torch's) would read it as its own failure.
  if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
  cudaStream_t s = export_stream(device_);
  DeviceGuard guard(device_);
  check(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(event_), 0),
        "cudaStreamWaitEvent (apsp's export stream after the result's ready event)");
  return reinterpret_cast<StreamInt>(s);
}

#else  // built without the CUDA engine

namespace {
[[noreturn]] void absent() {
  throw apsp::CudaError(std::string("this build of apsp has no CUDA engine: ") +
                        apsp::cuda_build_info().detail);
}
}  // namespace

DeviceGuard::DeviceGuard(int) { absent(); }
DeviceGuard::~DeviceGuard() = default;
int current_device() { absent(); }
int pointer_device(const void*, const char*) { absent(); }
uint64_t pool_bytes_in_use(int) { absent(); }
void* alloc_result(std::size_t, int) { absent(); }
void free_result(void*, int) noexcept {}
void copy_rows_async(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t,
                     StreamInt) {
  absent();
}
void order_streams(StreamInt, StreamInt, int) { absent(); }
ReadyEvent::~ReadyEvent() = default;
void ReadyEvent::record(StreamInt, int) { absent(); }
void ReadyEvent::order_before(StreamInt) const { absent(); }
StreamInt ReadyEvent::stream_to_name() const { absent(); }

#endif

}  // namespace apsp_py::cuda
