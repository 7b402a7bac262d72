// Device-array intake for the binding: a DLPack capsule (versioned or legacy) or a
// __cuda_array_interface__ (v2, v3) dict becomes a validated apsp::Matrix view plus its device,
// read-only flag and stream. Capsules are consumed as the DLPack standard asks: renamed to their
// "used_" name, and the producer's deleter called exactly once (also when validation fails).
// Host arrays do not come here: they use the buffer protocol (module.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "apsp/apsp.hpp"
#include "cuda_rt.hpp"
#include "dlpack.h"

namespace apsp_py {

namespace py = pybind11;

// The dtypes the GPU engine computes in, by name; TypeError listing them for anything else.
apsp::DType dtype_from_name(const std::string& name, const char* what);
std::vector<std::string> device_dtype_names();

struct ArrayView {
  apsp::Matrix matrix;
  int device = -1;               // CUDA ordinal
  bool readonly = false;
  bool has_stream = false;       // the producer named a stream (CAI v3 "stream" not None)
  cuda::StreamInt stream = 0;
};

// Owns a consumed DLPack managed tensor; its deleter runs exactly once, in release() or the
// destructor, with the GIL held.
class DLPackTensor {
 public:
  DLPackTensor() = default;
  ~DLPackTensor() { release(); }
  DLPackTensor(const DLPackTensor&) = delete;
  DLPackTensor& operator=(const DLPackTensor&) = delete;

  void consume(py::handle capsule);  // takes ownership of the capsule's tensor
  const DLTensor* tensor() const;
  bool readonly() const;
  void release() noexcept;

 private:
  DLManagedTensor* legacy_ = nullptr;
  DLManagedTensorVersioned* versioned_ = nullptr;
};

// A device array taken in from a DLPack capsule or a __cuda_array_interface__ dict. `writable`:
// apsp will write into it (overwrite=True), so read-only arrays are refused up front. Rows must
// be contiguous (stride[1] == 1 element); the row stride becomes the leading dimension.
class DeviceArray {
 public:
  DeviceArray(py::object source, bool writable, std::string what);
  ~DeviceArray() { close(); }
  void close() noexcept;  // hand the producer's tensor back now (idempotent)
  const ArrayView& view() const;

 private:
  DLPackTensor tensor_;  // empty for the CUDA array interface (the caller holds the producer)
  ArrayView view_;
  std::string what_;
  bool closed_ = false;
};

}  // namespace apsp_py
