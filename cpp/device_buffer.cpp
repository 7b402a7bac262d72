// DeviceBuffer (see device_buffer.hpp): allocation, the copy of a graph into it, and its DLPack
// and CUDA-array-interface exports.
#include "device_buffer.hpp"

#include <optional>
#include <string>

#include "dlpack.h"

namespace apsp_py {

namespace {

const char* typestr(apsp::DType d) {
  switch (d) {
    case apsp::DType::float32: return "<f4";
    case apsp::DType::float64: return "<f8";
    case apsp::DType::int32: return "<i4";
    case apsp::DType::int64: return "<i8";
  }
  return "";
}

DLDataType dl_dtype(apsp::DType d) {
  const bool is_float = d == apsp::DType::float32 || d == apsp::DType::float64;
  return DLDataType{static_cast<uint8_t>(is_float ? kDLFloat : kDLInt),
                    static_cast<uint8_t>(8 * apsp::dtype_size(d)), 1};
}

// The legacy default stream travels as 1 in DLPack and the CUDA array interface (0 is
// disallowed there); inside apsp, 0 and 1 both mean it.
cuda::StreamInt interchange_stream(cuda::StreamInt s) { return s == 0 ? 1 : s; }

// What a capsule's manager_ctx points to: the shape it describes and a strong reference to the
// DeviceBuffer that owns the memory.
struct Export {
  PyObject* owner;
  int64_t shape[2];
};

void drop_owner(Export* e) noexcept {
  // Consumers may run the deleter from any thread, without the GIL; after interpreter shutdown
  // the reference is left alone (the process is going away).
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(e->owner);
    PyGILState_Release(gil);
  }
  delete e;
}

void delete_legacy(DLManagedTensor* t) {
  drop_owner(static_cast<Export*>(t->manager_ctx));
  delete t;
}

void delete_versioned(DLManagedTensorVersioned* t) {
  drop_owner(static_cast<Export*>(t->manager_ctx));
  delete t;
}

// A capsule nobody consumed still owns its tensor (the DLPack rule: consumers rename it).
void capsule_destructor_legacy(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    t->deleter(t);
  }
}

void capsule_destructor_versioned(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* t = static_cast<DLManagedTensorVersioned*>(
        PyCapsule_GetPointer(cap, "dltensor_versioned"));
    t->deleter(t);
  }
}

DLTensor dl_tensor(const DeviceBuffer& b, Export* e) {
  DLTensor t{};
  t.data = reinterpret_cast<void*>(b.ptr());
  t.device = DLDevice{kDLCUDA, b.device()};
  t.ndim = 2;
  t.dtype = dl_dtype(b.dtype());
  t.shape = e->shape;
  t.strides = nullptr;  // compact row-major
  t.byte_offset = 0;
  return t;
}

}  // namespace

DeviceBuffer::DeviceBuffer(int64_t n, apsp::DType dtype, int device, cuda::StreamInt stream)
    : n_(n), dtype_(dtype), device_(device), stream_(stream) {
  if (n < 0) throw py::value_error("n must be >= 0, got " + std::to_string(n));
  const auto bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(n) *
                     static_cast<std::size_t>(apsp::dtype_size(dtype));
  if (bytes > 0) ptr_ = cuda::alloc_result(bytes, device);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ == nullptr) return;
  std::optional<py::gil_scoped_release> release;  // the free waits for the device: not with the GIL
  if (Py_IsInitialized() && PyGILState_Check()) release.emplace();
  cuda::free_result(ptr_, device_);
}

ArrayView DeviceBuffer::view() const {
  ArrayView v;
  v.matrix = apsp::Matrix{ptr_, n_, n_, dtype_};
  v.device = device_;
  v.has_stream = true;
  v.stream = stream_;
  return v;
}

void DeviceBuffer::copy_from(const ArrayView& src) {
  const apsp::Matrix& m = src.matrix;
  if (m.n != n_ || m.dtype != dtype_ || src.device != device_)
    throw py::value_error("internal: copy between arrays of different n, dtype or device");
  const auto item = static_cast<std::size_t>(apsp::dtype_size(dtype_));
  cuda::DeviceGuard guard(device_);
  cuda::copy_rows_async(ptr_, static_cast<std::size_t>(n_) * item, m.data,
                        static_cast<std::size_t>(m.ld) * item, static_cast<std::size_t>(n_) * item,
                        static_cast<std::size_t>(n_), stream_);
}

void DeviceBuffer::mark_ready(cuda::StreamInt stream) {
  if (ptr_ != nullptr) ready_.record(stream, device_);
}

py::dict DeviceBuffer::cuda_array_interface() const {
  py::dict d;
  d["shape"] = py::make_tuple(n_, n_);
  d["typestr"] = typestr(dtype_);
  d["data"] = py::make_tuple(ptr(), false);
  d["strides"] = py::none();
  d["version"] = 3;
  if (ptr_ == nullptr) {
    d["stream"] = py::none();  // no data: nothing to wait for
  } else if (!ready_.recorded()) {
    d["stream"] = py::int_(interchange_stream(stream_));
  } else if (const cuda::StreamInt s = ready_.stream_to_name()) {
    d["stream"] = py::int_(s);
  } else {
    d["stream"] = py::none();  // the solve is done: nothing to wait for
  }
  return d;
}

py::tuple DeviceBuffer::dlpack_device() const { return py::make_tuple(int(kDLCUDA), device_); }

py::capsule DeviceBuffer::dlpack(py::object self, py::object stream, py::object max_version,
                                 py::object dl_device, py::object copy) {
  const DeviceBuffer& b = self.cast<const DeviceBuffer&>();
  if (!dl_device.is_none()) {
    const auto want = dl_device.cast<py::tuple>();
    if (want.size() != 2 || want[0].cast<int>() != kDLCUDA || want[1].cast<int>() != b.device_)
      throw py::buffer_error("this apsp result lives on cuda:" + std::to_string(b.device_) +
                             " and cannot be exported to DLPack device " +
                             py::str(dl_device).cast<std::string>());
  }
  if (!copy.is_none() && copy.cast<bool>())
    throw py::buffer_error("__dlpack__(copy=True): apsp results are exported without copying; "
                           "copy with your framework after importing");
  // Consumer's stream: None = legacy default, -1 = the consumer orders the work itself.
  const int64_t consumer = stream.is_none() ? 1 : stream.cast<int64_t>();
  if (consumer != -1 && b.ptr_ != nullptr) {
    const auto to = interchange_stream(static_cast<cuda::StreamInt>(consumer));
    if (b.ready_.recorded())
      b.ready_.order_before(to);
    else
      cuda::order_streams(interchange_stream(b.stream_), to, b.device_);
  }

  bool versioned = false;
  if (!max_version.is_none()) versioned = max_version.cast<py::tuple>()[0].cast<int>() >= 1;
  auto* e = new Export{self.ptr(), {b.n_, b.n_}};
  Py_INCREF(e->owner);
  if (versioned) {
    auto* t = new DLManagedTensorVersioned{};
    t->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    t->manager_ctx = e;
    t->deleter = &delete_versioned;
    t->flags = 0;
    t->dl_tensor = dl_tensor(b, e);
    PyObject* cap = PyCapsule_New(t, "dltensor_versioned", &capsule_destructor_versioned);
    if (cap == nullptr) {
      delete_versioned(t);
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::capsule>(cap);
  }
  auto* t = new DLManagedTensor{};
  t->manager_ctx = e;
  t->deleter = &delete_legacy;
  t->dl_tensor = dl_tensor(b, e);
  PyObject* cap = PyCapsule_New(t, "dltensor", &capsule_destructor_legacy);
  if (cap == nullptr) {
    delete_legacy(t);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

void bind_device_buffer(py::module_& m) {
  py::class_<DeviceBuffer>(m, "DeviceBuffer",
                           "An n x n CUDA array allocated by apsp (results of producers other "
                           "than torch and CuPy). Import it with your framework's from_dlpack, "
                           "or through __cuda_array_interface__; it owns its memory.")
      .def(py::init([](int64_t n, const std::string& dtype, int device, uintptr_t stream) {
             return new DeviceBuffer(n, dtype_from_name(dtype, "array"), device, stream);
           }),
           py::arg("n"), py::arg("dtype"), py::arg("device"), py::arg("stream"))
      .def_property_readonly("shape", [](const DeviceBuffer& b) { return py::make_tuple(b.n(), b.n()); })
      .def_property_readonly("dtype", [](const DeviceBuffer& b) { return apsp::dtype_name(b.dtype()); })
      .def_property_readonly("device", &DeviceBuffer::device)
      .def_property_readonly("ptr", &DeviceBuffer::ptr)
      .def_property_readonly("__cuda_array_interface__", &DeviceBuffer::cuda_array_interface)
      .def("__dlpack_device__", &DeviceBuffer::dlpack_device)
      .def("__dlpack__", &DeviceBuffer::dlpack, py::kw_only(),
           py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
           py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("copy_from", [](DeviceBuffer& b, const DeviceArray& src) { b.copy_from(src.view()); },
           py::arg("src"), "Enqueue a copy of `src` (rows contiguous) into this buffer.")
      .def("_hold", &DeviceBuffer::hold, py::arg("source"),
           "Keep `source` until this buffer is freed (after the device is done with it).")
      .def("_mark_ready", &DeviceBuffer::mark_ready, py::arg("stream"),
           "Record the work enqueued so far on `stream` (the solve's) as what its exports wait "
           "for.")
      .def("__repr__", [](const DeviceBuffer& b) {
        return "apsp DeviceBuffer(shape=(" + std::to_string(b.n()) + ", " + std::to_string(b.n()) +
               "), dtype=" + apsp::dtype_name(b.dtype()) + ", device=cuda:" +
               std::to_string(b.device()) + ")";
      });
}

}  // namespace apsp_py
