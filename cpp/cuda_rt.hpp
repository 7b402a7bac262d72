// The few CUDA runtime calls the binding layer itself needs (device guard, pointer lookup for the
// CUDA array interface, stream-ordered allocation and row copies for arrays apsp allocates, and
// cross-stream ordering for DLPack export). Built without CUDA they raise apsp::CudaError saying
// why; the solve itself is the core's (src/apsp/apsp.hpp), not this file's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace apsp_py::cuda {

// Streams travel as integers: 0 = the legacy default stream, 1 = cudaStreamLegacy,
// 2 = cudaStreamPerThread, anything else a cudaStream_t handle.
using StreamInt = uintptr_t;

// Sets the current device for its lifetime and restores the previous one (so that a solve on
// cuda:1 does not change what torch or CuPy consider the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

int current_device();
// Device ordinal owning `ptr` (device or managed memory); apsp::ValueError for host memory.
int pointer_device(const void* ptr, const char* what);
// A result buffer on `device` (apsp::MemoryError with bytes needed and free). cudaMalloc, not the
// stream-ordered pool: consumers may use the result on any stream, and cudaFree waits for them.
void* alloc_result(std::size_t bytes, int device);
// Frees memory from alloc_result. cudaFree waits for the device's work itself; an explicit
// cudaDeviceSynchronize here would break any stream capture in another thread (a caller's, or,
// before the graphs were recorded node by node, apsp's round loop), which the CUDA 13.0 driver
// can crash on (GPU_NOTES.md, forty-fourth session).
void free_result(void* ptr, int device) noexcept;
// Row-by-row device-to-device copy, enqueued on `stream`.
void copy_rows_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                     std::size_t row_bytes, std::size_t rows, StreamInt stream);
// Makes `consumer` wait for the work enqueued so far on `producer` (no host wait).
void order_streams(StreamInt producer, StreamInt consumer, int device);
// Bytes of `device`'s stream-ordered pool (the engine's scratch and split buffers) that this
// process's allocations use now: a count other processes on the GPU do not change (tests).
uint64_t pool_bytes_in_use(int device);

// The moment a result's contents are produced: an event recorded on the producing stream, so that
// the result's exports wait for the event and never name that stream, which its owner may destroy
// before the result is read (a CUDA-array-interface producer's stream, say).
class ReadyEvent {
 public:
  ReadyEvent() = default;
  ~ReadyEvent();
  ReadyEvent(const ReadyEvent&) = delete;
  ReadyEvent& operator=(const ReadyEvent&) = delete;

  // Records the work enqueued so far on `stream` of `device` (again, if recorded before).
  void record(StreamInt stream, int device);
  bool recorded() const { return event_ != nullptr; }
  // Makes `consumer` wait for it (no host wait).
  void order_before(StreamInt consumer) const;
  // What a CUDA array interface v3 names: 0 (no stream: the work is done), or apsp's own stream
  // on the device, made to wait for the event (it lives as long as the process).
  StreamInt stream_to_name() const;

 private:
  void* event_ = nullptr;  // cudaEvent_t
  int device_ = -1;
};

}  // namespace apsp_py::cuda
