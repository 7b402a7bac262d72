// Device-array intake (see intake.hpp): DLPack capsules and the CUDA array interface become
// validated matrix views. Every refusal names the offending value and what to do instead.
#include "intake.hpp"

#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

namespace apsp_py {

namespace {
// The one list of dtypes the GPU engine computes in (the error text and Python read it from here).
const std::pair<const char*, apsp::DType> kDeviceDtypes[] = {
    {"float32", apsp::DType::float32},
    {"float64", apsp::DType::float64},
    {"int32", apsp::DType::int32},
    {"int64", apsp::DType::int64},
};
}  // namespace

std::vector<std::string> device_dtype_names() {
  std::vector<std::string> names;
  for (const auto& d : kDeviceDtypes) names.emplace_back(d.first);
  return names;
}

apsp::DType dtype_from_name(const std::string& name, const char* what) {
  std::string accepted;
  for (const auto& d : kDeviceDtypes) {
    if (name == d.first) return d.second;
    accepted += (accepted.empty() ? "" : ", ") + std::string(d.first);
  }
  throw py::type_error(std::string(what) + " has dtype " + name +
                       ", which apsp does not compute in on the GPU; accepted: " + accepted +
                       " (convert it first, e.g. tensor.float() or array.astype('float32'))");
}

namespace {

const char* kDLPack = "dltensor";
const char* kDLPackUsed = "used_dltensor";
const char* kDLPackVersioned = "dltensor_versioned";
const char* kDLPackVersionedUsed = "used_dltensor_versioned";

std::string dlpack_dtype_name(DLDataType t) {
  std::string base;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case kDLBool: base = "bool"; break;
    default: base = "dlpack-type-code-" + std::to_string(t.code) + "-bits-"; break;
  }
  std::string name = base == "bool" ? base : base + std::to_string(t.bits);
  if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
  return name;
}

std::string shape_text(int ndim, const int64_t* shape) {
  std::ostringstream os;
  os << "(";
  for (int i = 0; i < ndim; ++i) os << (i ? ", " : "") << shape[i];
  os << (ndim == 1 ? ",)" : ")");
  return os.str();
}

std::string device_type_name(int type) {
  switch (type) {
    case kDLCPU: return "CPU";
    case kDLCUDA: return "CUDA";
    case kDLCUDAHost: return "CUDA pinned host memory";
    case kDLROCM: return "ROCm";
    case kDLROCMHost: return "ROCm host memory";
    case kDLMetal: return "Metal";
    case kDLOneAPI: return "oneAPI";
    case kDLVulkan: return "Vulkan";
    case kDLCUDAManaged: return "CUDA managed memory";
    default: return "DLPack device type " + std::to_string(type);
  }
}

// The shared layout rule: square 2-D, rows contiguous, row stride (in elements) >= n becomes ld.
apsp::Matrix matrix_view(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                         apsp::DType dtype, const std::string& what) {
  if (ndim != 2 || shape[0] != shape[1])
    throw py::value_error(what + " must be a square 2-D (n, n) array, got shape " +
                          shape_text(ndim, shape));
  const int64_t n = shape[0];
  int64_t ld = n;
  if (strides != nullptr && n > 1) {
    if (strides[1] != 1 || strides[0] < n)
      throw py::value_error(
          what + "'s rows are not contiguous in memory (shape " + shape_text(2, shape) +
          ", strides (" + std::to_string(strides[0]) + ", " + std::to_string(strides[1]) +
          ") in elements); apsp needs stride[1] == 1 and stride[0] >= n. With overwrite=False, "
          "torch and CuPy arrays are copied to a contiguous array for you; for other producers, "
          "or to solve in place, make it contiguous first (tensor.contiguous(), "
          "cupy.ascontiguousarray)");
    ld = strides[0];
  }
  const int item = apsp::dtype_size(dtype);
  if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(item) != 0)
    throw py::value_error(what + "'s data pointer " +
                          std::to_string(reinterpret_cast<uintptr_t>(data)) +
                          " is not aligned to its " + std::to_string(item) +
                          "-byte elements; pass an aligned array");
  return apsp::Matrix{data, n, ld, dtype};
}

apsp::DType dtype_from_dlpack(DLDataType t, const std::string& what) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32) return apsp::DType::float32;
    if (t.code == kDLFloat && t.bits == 64) return apsp::DType::float64;
    if (t.code == kDLInt && t.bits == 32) return apsp::DType::int32;
    if (t.code == kDLInt && t.bits == 64) return apsp::DType::int64;
  }
  return dtype_from_name(dlpack_dtype_name(t), what.c_str());
}

// "<f4" -> float32; the byte order must be little-endian or not applicable.
apsp::DType dtype_from_typestr(const std::string& typestr, const std::string& what) {
  if (typestr.size() >= 3 && (typestr[0] == '<' || typestr[0] == '|' || typestr[0] == '=')) {
    const std::string code = typestr.substr(1);
    if (code == "f4") return apsp::DType::float32;
    if (code == "f8") return apsp::DType::float64;
    if (code == "i4") return apsp::DType::int32;
    if (code == "i8") return apsp::DType::int64;
    const char kind = typestr[1];
    int bytes = 0;
    try {
      bytes = std::stoi(typestr.substr(2));
    } catch (const std::exception&) {
    }
    std::string name = kind == 'f' ? "float" : kind == 'i' ? "int" : kind == 'u' ? "uint"
                     : kind == 'c' ? "complex" : kind == 'b' ? "bool" : "";
    if (!name.empty() && bytes > 0)
      return dtype_from_name(name == "bool" ? name : name + std::to_string(8 * bytes), what.c_str());
  }
  return dtype_from_name("'" + typestr + "' (CUDA array interface typestr)", what.c_str());
}

}  // namespace

// ---- DLPack -------------------------------------------------------------------------------

void DLPackTensor::consume(py::handle capsule) {
  release();
  PyObject* obj = capsule.ptr();
  if (!PyCapsule_CheckExact(obj))
    throw py::type_error("expected a DLPack capsule, got " +
                         std::string(Py_TYPE(obj)->tp_name));
  const char* name = PyCapsule_GetName(obj);
  if (name == nullptr) {  // a capsule with no name sets no Python error
    if (PyErr_Occurred()) throw py::error_already_set();
    throw py::type_error("expected a DLPack capsule, got a capsule with no name");
  }
  const bool versioned = std::strcmp(name, kDLPackVersioned) == 0;
  if (!versioned && std::strcmp(name, kDLPack) != 0) {
    if (std::strcmp(name, kDLPackUsed) == 0 || std::strcmp(name, kDLPackVersionedUsed) == 0)
      throw py::value_error("this DLPack capsule was already consumed; call __dlpack__() again");
    throw py::type_error(std::string("expected a DLPack capsule, got a capsule named '") + name +
                         "'");
  }
  void* ptr = PyCapsule_GetPointer(obj, name);
  if (ptr == nullptr) throw py::error_already_set();
  // Rename first: once it succeeds the capsule's own destructor no longer calls the deleter, so
  // from here on it is ours to call, exactly once.
  if (PyCapsule_SetName(obj, versioned ? kDLPackVersionedUsed : kDLPackUsed) != 0)
    throw py::error_already_set();
  if (versioned)
    versioned_ = static_cast<DLManagedTensorVersioned*>(ptr);
  else
    legacy_ = static_cast<DLManagedTensor*>(ptr);
  if (versioned_ != nullptr && versioned_->version.major > DLPACK_MAJOR_VERSION) {
    const auto major = versioned_->version.major, minor = versioned_->version.minor;
    release();  // the standard: a consumer that cannot read the version still calls the deleter
    throw py::buffer_error("the DLPack capsule has version " + std::to_string(major) + "." +
                           std::to_string(minor) + ", newer than the " +
                           std::to_string(DLPACK_MAJOR_VERSION) +
                           ".x that apsp reads; pass max_version=(1, 0) to __dlpack__");
  }
}

const DLTensor* DLPackTensor::tensor() const {
  if (versioned_ != nullptr) return &versioned_->dl_tensor;
  if (legacy_ != nullptr) return &legacy_->dl_tensor;
  return nullptr;
}

bool DLPackTensor::readonly() const {
  return versioned_ != nullptr && (versioned_->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
}

void DLPackTensor::release() noexcept {
  if (versioned_ != nullptr) {
    DLManagedTensorVersioned* t = std::exchange(versioned_, nullptr);
    if (t->deleter != nullptr) t->deleter(t);
  }
  if (legacy_ != nullptr) {
    DLManagedTensor* t = std::exchange(legacy_, nullptr);
    if (t->deleter != nullptr) t->deleter(t);
  }
}

// ---- DeviceArray --------------------------------------------------------------------------

namespace {

ArrayView view_from_dlpack(const DLPackTensor& owner, const std::string& what) {
  const DLTensor& t = *owner.tensor();
  const int type = t.device.device_type;
  if (type != kDLCUDA && type != kDLCUDAManaged)
    throw py::value_error(what + " lives on " + device_type_name(type) + " (DLPack device " +
                          std::to_string(type) + ":" + std::to_string(t.device.device_id) +
                          "); apsp's device intake takes CUDA memory (host arrays go through "
                          "NumPy)");
  ArrayView v;
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  const apsp::DType dtype = dtype_from_dlpack(t.dtype, what);
  v.matrix = matrix_view(data, t.ndim, t.shape, t.strides, dtype, what);
  v.device = t.device.device_id;
  v.readonly = owner.readonly();
  return v;
}

ArrayView view_from_cai(const py::dict& cai, const std::string& what) {
  auto need = [&](const char* key) -> py::object {
    if (!cai.contains(key))
      throw py::value_error(what + "'s __cuda_array_interface__ has no '" + key + "' entry");
    return cai[key];
  };
  // An entry of the wrong type: the interface's words, not pybind11's cast error.
  auto bad = [&](const char* key, py::handle value, const char* expected) {
    return py::value_error(what + "'s __cuda_array_interface__ '" + key + "' is " +
                           py::repr(value).cast<std::string>() + "; the interface asks for " +
                           expected);
  };
  auto as_int = [&](const char* key, py::handle value, const char* expected) -> int64_t {
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
      throw bad(key, value, expected);
    try {
      return value.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw bad(key, value, expected);
    }
  };
  auto as_tuple = [&](const char* key, py::handle value, const char* expected) -> py::tuple {
    if (!py::isinstance<py::tuple>(value)) throw bad(key, value, expected);
    return py::reinterpret_borrow<py::tuple>(value);
  };
  const int64_t version = as_int("version", need("version"), "an int");
  if (version < 0 || version > 3)
    throw py::value_error(what + "'s __cuda_array_interface__ has version " +
                          std::to_string(version) + "; apsp reads versions 0 to 3");
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw py::value_error(what + " has a mask (__cuda_array_interface__ 'mask'); apsp takes "
                          "unmasked arrays: fill masked entries with the no-edge value instead");
  std::vector<int64_t> shape;
  for (py::handle d : as_tuple("shape", need("shape"), "a tuple of ints"))
    shape.push_back(as_int("shape", d, "a tuple of ints"));
  const py::object typestr = need("typestr");
  if (!py::isinstance<py::str>(typestr)) throw bad("typestr", typestr, "a string such as '<i4'");
  const apsp::DType dtype = dtype_from_typestr(typestr.cast<std::string>(), what);
  const py::tuple data = as_tuple("data", need("data"), "(pointer, read_only)");
  if (data.size() != 2 || !py::isinstance<py::int_>(data[0]))
    throw bad("data", data, "(pointer, read_only) with an int pointer");
  uintptr_t address = 0;
  try {
    address = data[0].cast<uintptr_t>();
  } catch (const py::cast_error&) {  // negative, or past 64 bits
    throw bad("data", data, "(pointer, read_only) with an int pointer");
  }
  void* ptr = reinterpret_cast<void*>(address);
  const int item = apsp::dtype_size(dtype);
  std::vector<int64_t> strides;
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    const py::tuple given = as_tuple("strides", cai["strides"], "None or a tuple of ints (bytes)");
    for (py::handle s : given) {
      const int64_t bytes = as_int("strides", s, "None or a tuple of ints (bytes)");
      const bool matters = shape.size() == 2 && shape[0] == shape[1] && shape[0] > 1;
      if (bytes % item != 0 && matters)  // not a whole number of items: no leading dimension
        throw py::value_error(what + "'s __cuda_array_interface__ strides " +
                              py::repr(given).cast<std::string>() + " (bytes) are not multiples "
                              "of its " + std::to_string(item) + "-byte items; pass an array "
                              "whose rows are contiguous (copy it first)");
      strides.push_back(bytes % item == 0 ? bytes / item : -1);  // -1: n <= 1, never read
    }
    if (strides.size() != shape.size())
      throw py::value_error(what + "'s __cuda_array_interface__ strides and shape differ in length");
  }
  ArrayView v;
  v.matrix = matrix_view(ptr, static_cast<int>(shape.size()), shape.data(),
                         strides.empty() ? nullptr : strides.data(), dtype, what);
  if (version >= 3 && cai.contains("stream") && !cai["stream"].is_none()) {
    const int64_t s = as_int("stream", cai["stream"], "None or an int (a cudaStream_t)");
    if (s == 0)
      throw py::value_error(what + "'s __cuda_array_interface__ has stream 0, which the "
                            "interface disallows (1 = legacy default, 2 = per-thread default)");
    if (s < 0)
      throw py::value_error(what + "'s __cuda_array_interface__ has stream " + std::to_string(s) +
                            ", which names no CUDA stream (1 = legacy default, 2 = per-thread "
                            "default, else a cudaStream_t)");
    v.has_stream = true;
    v.stream = static_cast<cuda::StreamInt>(s);
  }
  v.readonly = py::bool_(data[1]).cast<bool>();
  v.device = ptr != nullptr ? cuda::pointer_device(ptr, what.c_str()) : cuda::current_device();
  return v;
}

}  // namespace

DeviceArray::DeviceArray(py::object source, bool writable, std::string what)
    : what_(std::move(what)) {
  if (PyCapsule_CheckExact(source.ptr())) {
    tensor_.consume(source);
    view_ = view_from_dlpack(tensor_, what_);
  } else if (py::isinstance<py::dict>(source)) {
    view_ = view_from_cai(source.cast<py::dict>(), what_);
  } else {
    throw py::type_error(what_ + ": expected a DLPack capsule or a __cuda_array_interface__ "
                         "dict, got " + std::string(Py_TYPE(source.ptr())->tp_name));
  }
  if (writable && view_.readonly)
    throw py::value_error(what_ + " is read-only (its producer flagged it so), so overwrite=True "
                          "cannot write into it; pass overwrite=False to get a new array");
}

void DeviceArray::close() noexcept {
  closed_ = true;
  tensor_.release();
}

const ArrayView& DeviceArray::view() const {
  if (closed_) throw py::value_error(what_ + " was already handed back to its producer");
  return view_;
}

}  // namespace apsp_py
