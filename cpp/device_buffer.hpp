// DeviceBuffer: an n x n device array that apsp allocates itself, for results of producers that
// apsp cannot allocate through (anything that is neither torch nor CuPy). It owns its memory and
// exports it back through __dlpack__ / __dlpack_device__ (versioned or legacy capsules, ordered
// on the consumer's stream after the solve) and __cuda_array_interface__ v3 (naming a stream that
// waits for the solve, or none once it is done).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "apsp/apsp.hpp"
#include "cuda_rt.hpp"
#include "intake.hpp"

namespace apsp_py {

class DeviceBuffer {
 public:
  // Allocated stream-ordered on `stream` of `device`; contents undefined until written.
  DeviceBuffer(int64_t n, apsp::DType dtype, int device, cuda::StreamInt stream);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  ArrayView view() const;
  // Copies `src` (same n, dtype and device, rows contiguous) into this buffer on its stream.
  void copy_from(const ArrayView& src);
  // Keeps `source` (the DeviceArray a pending copy reads) until this buffer is freed, which
  // waits for the device first: DLPack's producer gets its memory back only when apsp is done.
  void hold(py::object source) { held_ = std::move(source); }
  // Marks the work enqueued so far on `stream` (the solve's: a buffer solved again in place may be
  // solved on another stream than its first) as what makes its contents: exports wait for that
  // from now on, not for any stream, which its owner may destroy first.
  void mark_ready(cuda::StreamInt stream);

  py::dict cuda_array_interface() const;
  py::tuple dlpack_device() const;
  // `self` is this buffer's Python object: every capsule keeps it alive until its deleter runs.
  static py::capsule dlpack(py::object self, py::object stream, py::object max_version,
                            py::object dl_device, py::object copy);

  int64_t n() const { return n_; }
  apsp::DType dtype() const { return dtype_; }
  int device() const { return device_; }
  uintptr_t ptr() const { return reinterpret_cast<uintptr_t>(ptr_); }

 private:
  int64_t n_;
  apsp::DType dtype_;
  int device_;
  cuda::StreamInt stream_;  // where it was allocated and copied into, until mark_ready
  void* ptr_ = nullptr;
  cuda::ReadyEvent ready_;  // recorded by mark_ready
  py::object held_;  // released after ~DeviceBuffer's free has waited for the device
};

void bind_device_buffer(py::module_& m);

}  // namespace apsp_py
