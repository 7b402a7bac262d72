// apsp._core: the pybind11 extension module. Wiring only: host arrays through the buffer
// protocol, device arrays through the intake in intake.cpp (DLPack, CUDA array interface) and
// DeviceBuffer, GIL release, progress/interrupt callbacks, and the mapping of apsp's C++
// exceptions to Python exceptions. No algorithm here: it calls src/apsp/apsp.hpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "apsp/apsp.hpp"
#include "core/pred_repair.hpp"
#include "device_buffer.hpp"
#include "intake.hpp"

namespace py = pybind11;

namespace {

using apsp_py::ArrayView;
using apsp_py::DeviceArray;
using apsp_py::DeviceBuffer;

apsp::DType dtype_from_buffer(const py::buffer_info& info) {
  if (info.item_type_is_equivalent_to<float>()) return apsp::DType::float32;
  if (info.item_type_is_equivalent_to<double>()) return apsp::DType::float64;
  if (info.item_type_is_equivalent_to<int32_t>()) return apsp::DType::int32;
  if (info.item_type_is_equivalent_to<int64_t>()) return apsp::DType::int64;
  throw py::type_error("unsupported buffer format '" + info.format +
                       "'; apsp computes in float32, float64, int32 or int64, aligned and in this "
                       "machine's byte order (a format that starts with '=', '<' or '>' can mean "
                       "unaligned data: pass a copy)");
}

// Row-major view of a writable 2-D host buffer whose rows are contiguous.
apsp::Matrix host_matrix(const py::buffer_info& info, const char* what, bool writable = true) {
  if (info.ndim != 2 || info.shape[0] != info.shape[1])
    throw py::value_error(std::string(what) + " must be a square 2-D array");
  if (writable && info.readonly) throw py::value_error(std::string(what) + " is read-only");
  const auto item = info.itemsize;
  if (info.shape[0] > 1 && info.strides[1] != item)
    throw py::value_error(std::string(what) + " rows must be contiguous (stride[1] == itemsize)");
  if (info.strides[0] % item != 0 || info.strides[0] < 0)
    throw py::value_error(std::string(what) + " row stride must be a positive multiple of the itemsize");
  apsp::Matrix m;
  m.data = info.ptr;
  m.n = info.shape[0];
  m.ld = info.shape[0] > 1 ? info.strides[0] / item : info.shape[0];
  if (m.ld < m.n)
    throw py::value_error(std::string(what) + " rows overlap (row stride below n * itemsize)");
  m.dtype = dtype_from_buffer(info);
  return m;
}

apsp::PredMatrix host_pred(const py::object& obj, int64_t n) {
  apsp::PredMatrix p;
  if (obj.is_none()) return p;
  py::buffer_info info = py::buffer(obj).request(true);
  if (!info.item_type_is_equivalent_to<int32_t>() || info.ndim != 2 || info.shape[0] != n ||
      info.shape[1] != n || (n > 1 && info.strides[1] != 4))
    throw py::value_error("predecessor buffer must be a writable n x n int32 array with contiguous rows");
  p.data = static_cast<int32_t*>(info.ptr);
  p.ld = n > 1 ? info.strides[0] / 4 : n;
  if (p.ld < n) throw py::value_error("predecessor buffer rows overlap (row stride below n * 4)");
  return p;
}

// Progress and Ctrl-C: called by the engines between rounds (on_poll: between a host input's
// upload chunks), with the GIL released around them.
struct Callback {
  py::object progress;  // callable(done, total) or None
};
void on_round(void* ctx, int64_t done, int64_t total) {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  auto* cb = static_cast<Callback*>(ctx);
  if (!cb->progress.is_none()) cb->progress(done, total);
}
void on_poll(void*) {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// `cb` (or nullptr): the engine calls on_round, for the bar in cb->progress or, where that is
// None, only to poll for Ctrl-C (Options::progress_polls_only says where that is free).
apsp::Options make_options(bool directed, bool unweighted, bool check_input,
                           bool check_negative_cycles, Callback* cb) {
  apsp::Options o;
  o.directed = directed;
  o.unweighted = unweighted;
  o.check_input = check_input;
  o.check_negative_cycles = check_negative_cycles;
  if (cb) {
    o.progress = &on_round;
    o.progress_ctx = cb;
    o.poll = &on_poll;
    o.progress_polls_only = cb->progress.is_none();
  }
  return o;
}

// `out` (None or a host array like `graph`): the CUDA engine then reads `graph` without writing it
// and puts the distances in `out`; without it, `graph` is solved in place (the CPU engine always).
void solve_host(py::buffer graph, py::object pred, const std::string& engine, int device,
                bool directed, bool unweighted, bool check_input, bool check_negative_cycles,
                py::object progress, py::object out, const std::vector<int>& helpers) {
  const bool cpu = engine == "cpu";
  if (!cpu && engine != "cuda")
    throw py::value_error("engine must be 'cpu' or 'cuda', got '" + engine + "'");
  if (cpu && !out.is_none()) throw py::value_error("the CPU engine solves in place: out must be None");
  if (cpu && !helpers.empty()) throw py::value_error("the CPU engine takes no helper GPUs");
  py::buffer_info info = graph.request(out.is_none());
  apsp::Matrix input = host_matrix(info, "graph", out.is_none());
  py::buffer_info out_info;
  apsp::Matrix dist = input;
  if (!out.is_none()) {
    out_info = py::buffer(out).request(true);
    dist = host_matrix(out_info, "out");
  }
  apsp::PredMatrix p = host_pred(pred, input.n);
  Callback cb{progress};
  // Ctrl-C is polled: the host waits for a host input's solve anyway (the CUDA engine: where
  // that costs nothing, Options::progress_polls_only).
  apsp::Options o = make_options(directed, unweighted, check_input, check_negative_cycles, &cb);
  py::gil_scoped_release release;
  if (cpu) {
    apsp::solve_cpu(input, p, o);
    apsp::repair_predecessor_loops(dist, p);  // float rounding (pred_repair.hpp); O(n^2)
  } else {
    apsp::solve_cuda_host(input, dist, p, o, device, helpers);  // mended on the device
  }
}

// A (count, n, n) host array of graphs with contiguous rows, as an apsp::Batch.
apsp::Batch host_batch(const py::buffer_info& info, const char* what) {
  if (info.ndim != 3 || info.shape[1] != info.shape[2])
    throw py::value_error(std::string(what) + " must be a (count, n, n) array");
  const auto item = info.itemsize;
  const int64_t n = info.shape[1], count = info.shape[0];
  // Strides of a dimension of length 1 (or 0) are never used, whatever they are.
  auto bad = [&](int64_t stride) { return stride < 0 || stride % item != 0; };
  if ((n > 1 && (info.strides[2] != item || bad(info.strides[1]))) ||
      (count > 1 && bad(info.strides[0])))
    throw py::value_error(std::string("the rows of ") + what +
                          " must be contiguous, with positive strides in whole items");
  apsp::Batch batch;
  batch.first = apsp::Matrix{info.ptr, n, n > 1 ? info.strides[1] / item : n,
                             dtype_from_buffer(info)};
  batch.count = count;
  batch.stride = count > 1 ? info.strides[0] / item : n * batch.first.ld;
  return batch;
}

// A batch's predecessors: None, or a writable (count, n, n) int32 array with contiguous rows.
apsp::PredBatch host_pred_batch(const py::object& obj, const apsp::Batch& dist,
                                py::buffer_info& info) {
  apsp::PredBatch p;
  if (obj.is_none()) return p;
  info = py::buffer(obj).request(true);
  if (!info.item_type_is_equivalent_to<int32_t>() || info.ndim != 3 ||
      info.shape[0] != dist.count || info.shape[1] != dist.first.n ||
      info.shape[2] != dist.first.n)
    throw py::value_error("predecessor buffer must be a writable (count, n, n) int32 array like "
                          "the graphs");
  const apsp::Batch as_batch = host_batch(info, "the predecessor buffer");
  p.first = static_cast<int32_t*>(info.ptr);
  p.ld = as_batch.first.ld;
  p.stride = as_batch.stride;
  return p;
}

// A batch of host graphs solved with every check (apsp.solve_batch): in place on the CPU engine,
// with predecessors into `pred` (None: none; the CPU engine only); on the CUDA engine into `out`
// (None: in place), `graphs` then only read.
void solve_batch_host(py::buffer graphs, const std::string& engine, int device, bool directed,
                      bool unweighted, py::object out, py::object pred) {
  const bool cpu = engine == "cpu";
  if (!cpu && engine != "cuda")
    throw py::value_error("engine must be 'cpu' or 'cuda', got '" + engine + "'");
  if (cpu && !out.is_none()) throw py::value_error("the CPU engine solves in place: out must be None");
  if (!cpu && !pred.is_none())
    throw py::value_error("the CUDA engine's batches have no predecessors: pred must be None");
  py::buffer_info info = graphs.request(out.is_none());
  const apsp::Batch input = host_batch(info, "graphs");
  py::buffer_info out_info, pred_info;
  apsp::Batch dist = input;
  if (!out.is_none()) {
    out_info = py::buffer(out).request(true);
    dist = host_batch(out_info, "out");
  }
  const apsp::PredBatch p = host_pred_batch(pred, input, pred_info);
  Callback cb{py::none()};  // Ctrl-C is polled between graphs
  apsp::Options o = make_options(directed, unweighted, true, true, &cb);
  py::gil_scoped_release release;
  if (cpu)
    apsp::solve_cpu_batch(input, p, o);
  else
    apsp::solve_cuda_batch_host(input, dist, o, device);
}

// A batch in device memory as raw pointers (apsp.solve_batch takes them from torch and CuPy):
// graph b of `count` at data + b * stride elements, n x n rows `ld` apart, solved in place on
// `stream` of `device`. The host waits only for the enabled checks.
void solve_batch_device(uintptr_t data, int64_t count, int64_t n, int64_t ld, int64_t stride,
                        const std::string& dtype, int device, uintptr_t stream, bool directed,
                        bool unweighted, bool check_input, bool check_negative_cycles) {
  apsp::Batch batch;
  batch.first = apsp::Matrix{reinterpret_cast<void*>(data), n, ld,
                             apsp_py::dtype_from_name(dtype, "graphs")};
  batch.count = count;
  batch.stride = stride;
  Callback cb{py::none()};
  apsp::Options o = make_options(directed, unweighted, check_input, check_negative_cycles, &cb);
  py::gil_scoped_release release;
  apsp::solve_cuda_batch(batch, o, device, reinterpret_cast<void*>(stream));
}

// A scipy.sparse graph in COO form for the CUDA engine: the edges go to the device and are
// scattered there; `out` (a fresh host n x n array of the computed dtype) receives the distances.
void solve_sparse_host(int64_t n, py::array_t<int64_t, py::array::c_style> rows,
                       py::array_t<int64_t, py::array::c_style> cols, py::array values,
                       py::buffer out, py::object pred, int device, bool directed,
                       bool unweighted, bool check_input, bool check_negative_cycles,
                       py::object progress, const std::vector<int>& helpers) {
  py::buffer_info info = out.request(true);
  apsp::Matrix m = host_matrix(info, "out");
  if (m.n != n) throw py::value_error("out must be n x n");
  py::buffer_info vinfo = values.request();
  const int64_t nnz = rows.size();
  if (cols.size() != nnz || vinfo.size != nnz || vinfo.ndim != 1 ||
      (nnz > 1 && vinfo.strides[0] != vinfo.itemsize))
    throw py::value_error("rows, cols and values must be contiguous 1-D arrays of one length");
  apsp::CooGraph g;
  g.n = n;
  g.nnz = nnz;
  g.rows = rows.data();
  g.cols = cols.data();
  g.values = vinfo.ptr;
  g.dtype = dtype_from_buffer(vinfo);
  if (g.dtype != m.dtype) throw py::value_error("values and out must have one dtype");
  apsp::PredMatrix p = host_pred(pred, n);
  Callback cb{progress};
  apsp::Options o = make_options(directed, unweighted, check_input, check_negative_cycles, &cb);
  py::gil_scoped_release release;
  apsp::solve_cuda_sparse_host(g, m, p, o, device, helpers);  // predecessors mended there
}

// An operand of solve_array: a DeviceArray, a DeviceBuffer, or a DLPack capsule, which is taken
// in here (held by `holder`, so its deleter runs when solve_array returns or throws).
ArrayView view_of(py::handle obj, const char* what, std::unique_ptr<DeviceArray>& holder) {
  if (PyCapsule_CheckExact(obj.ptr())) {
    holder = std::make_unique<DeviceArray>(py::reinterpret_borrow<py::object>(obj), true, what);
    return holder->view();
  }
  if (py::isinstance<DeviceArray>(obj)) return obj.cast<const DeviceArray&>().view();
  if (py::isinstance<DeviceBuffer>(obj)) return obj.cast<const DeviceBuffer&>().view();
  throw py::type_error(std::string(what) +
                       " must be a DLPack capsule, an apsp._core.DeviceArray or a DeviceBuffer, got " +
                       std::string(Py_TYPE(obj.ptr())->tp_name));
}

// Solves in place on device memory, enqueued on `stream` (0 = legacy default) of the array's
// device (the engine sets that device and restores the caller's), with `helpers` sharing the
// rounds. The host waits only for the enabled checks. Capsules are handed back to their producers
// once the work is enqueued.
void solve_array(py::object work, py::object pred, uintptr_t stream, bool directed,
                 bool unweighted, bool check_input, bool check_negative_cycles,
                 py::object progress, const std::vector<int>& helpers) {
  std::unique_ptr<DeviceArray> work_holder, pred_holder;  // outlive the GIL release below
  const ArrayView w = view_of(work, "graph", work_holder);
  if (w.readonly) throw py::value_error("graph is read-only; apsp cannot write the result into it");
  apsp::PredMatrix p;
  if (!pred.is_none()) {
    const ArrayView v = view_of(pred, "predecessor array", pred_holder);
    if (v.matrix.dtype != apsp::DType::int32 || v.matrix.n != w.matrix.n || v.device != w.device)
      throw py::value_error("predecessor array must be an n x n int32 array on cuda:" +
                            std::to_string(w.device) + ", got " +
                            apsp::dtype_name(v.matrix.dtype) + " n=" + std::to_string(v.matrix.n) +
                            " on cuda:" + std::to_string(v.device));
    p.data = static_cast<int32_t*>(v.matrix.data);
    p.ld = v.matrix.ld;
  }
  Callback cb{progress};  // Ctrl-C is polled where the host waits anyway (the checks)
  apsp::Options o = make_options(directed, unweighted, check_input, check_negative_cycles, &cb);
  py::gil_scoped_release release;
  apsp::solve_cuda(w.matrix, p, o, w.device, reinterpret_cast<void*>(stream), helpers);
}

// Raw-pointer entry used by the engine's own tests and benchmarks (no intake, no checks on the
// pointers): the public path for device arrays is solve_array.
void solve_device(uintptr_t data, int64_t n, int64_t ld, const std::string& dtype, uintptr_t pred,
                  int64_t pred_ld, int device, uintptr_t stream, bool directed, bool unweighted,
                  bool check_input, bool check_negative_cycles, py::object progress) {
  apsp::Matrix m{reinterpret_cast<void*>(data), n, ld, apsp_py::dtype_from_name(dtype, "graph")};
  apsp::PredMatrix p{reinterpret_cast<int32_t*>(pred), pred_ld};
  Callback cb{progress};
  apsp::Options o = make_options(directed, unweighted, check_input, check_negative_cycles,
                                 progress.is_none() ? nullptr : &cb);
  py::gil_scoped_release release;
  apsp::solve_cuda(m, p, o, device, reinterpret_cast<void*>(stream));
}

// The predecessor mends alone (core/pred_repair.hpp), for the tests' crafted loops: on host arrays
// (returns the rows mended) and on device arrays, enqueued on `stream` of their device.
int64_t repair_host(py::buffer dist, py::object pred) {
  py::buffer_info info = dist.request();
  const apsp::Matrix d = host_matrix(info, "dist", false);
  const apsp::PredMatrix p = host_pred(pred, d.n);
  py::gil_scoped_release release;
  return apsp::repair_predecessor_loops(d, p);
}
void repair_device(py::object dist, py::object pred, uintptr_t stream) {
  std::unique_ptr<DeviceArray> dist_holder, pred_holder;
  const ArrayView d = view_of(dist, "dist", dist_holder);
  const ArrayView p = view_of(pred, "predecessor array", pred_holder);
  if (p.matrix.dtype != apsp::DType::int32 || p.matrix.n != d.matrix.n || p.device != d.device)
    throw py::value_error("the predecessor array must be an n x n int32 array on dist's device");
  const apsp::PredMatrix pm{static_cast<int32_t*>(p.matrix.data), p.matrix.ld};
  py::gil_scoped_release release;
  apsp::repair_predecessor_loops_cuda(d.matrix, pm, d.device, reinterpret_cast<void*>(stream));
}

// `with _core.OnDevice(i):` makes CUDA device i current inside the block and the previous one
// current again after it (a DLPack producer may export for the consumer's stream only while its
// own device is current: torch does).
class OnDevice {
 public:
  explicit OnDevice(int device) : device_(device) {}
  void enter() { guard_ = std::make_unique<apsp_py::cuda::DeviceGuard>(device_); }
  void exit() { guard_.reset(); }

 private:
  int device_;
  std::unique_ptr<apsp_py::cuda::DeviceGuard> guard_;
};

void bind_device_array(py::module_& m) {
  py::class_<OnDevice>(m, "OnDevice",
                       "Context manager: CUDA device `device` is current inside the block.")
      .def(py::init<int>(), py::arg("device"))
      .def("__enter__", [](OnDevice& d) { d.enter(); })
      .def("__exit__", [](OnDevice& d, py::args) { d.exit(); });
  py::class_<DeviceArray>(m, "DeviceArray",
                          "A device array taken in from a DLPack capsule (consumed) or a "
                          "__cuda_array_interface__ dict; close() hands a capsule's tensor back "
                          "to its producer.")
      .def(py::init<py::object, bool, std::string>(), py::arg("source"), py::arg("writable"),
           py::arg("what") = "graph")
      .def_property_readonly("n", [](const DeviceArray& a) { return a.view().matrix.n; })
      .def_property_readonly("ld", [](const DeviceArray& a) { return a.view().matrix.ld; })
      .def_property_readonly("dtype",
                             [](const DeviceArray& a) { return apsp::dtype_name(a.view().matrix.dtype); })
      .def_property_readonly("device", [](const DeviceArray& a) { return a.view().device; })
      .def_property_readonly("readonly", [](const DeviceArray& a) { return a.view().readonly; })
      .def_property_readonly("stream",
                             [](const DeviceArray& a) -> py::object {
                               const ArrayView& v = a.view();
                               return v.has_stream ? py::object(py::int_(v.stream)) : py::none();
                             },
                             "The producer's stream (CUDA array interface v3), or None.")
      .def("close", &DeviceArray::close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](DeviceArray& a, py::args) {
        a.close();
        return false;
      });
}

py::dict info() {
  py::dict d;
  const apsp::CudaBuildInfo b = apsp::cuda_build_info();
  d["cuda_compiled"] = b.compiled;
  d["cuda_build"] = b.detail;
  d["cpu_threads"] = apsp::cpu_threads();
  std::string why;
  std::vector<apsp::CudaDevice> devs = apsp::cuda_devices(&why);
  py::list list;
  for (const auto& dev : devs) {
    py::dict e;
    e["index"] = dev.index;
    e["name"] = dev.name;
    e["compute_capability"] = py::make_tuple(dev.major, dev.minor);
    e["multiprocessors"] = dev.multiprocessors;
    e["total_memory"] = dev.total_memory;
    e["free_memory"] = dev.free_memory;  // None where unknown
    list.append(e);
  }
  d["devices"] = list;
  d["why_no_devices"] = devs.empty() ? py::object(py::str(why)) : py::object(py::none());
  return d;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "apsp's compiled core (private: use the apsp package)";
  m.attr("INT32_INF") = py::int_(apsp::kInt32Inf);
  m.attr("INT64_INF") = py::int_(apsp::kInt64Inf);
  m.attr("NO_PREDECESSOR") = py::int_(apsp::kNoPredecessor);
  // The predecessor mends' pool of searches (core/pred_repair.hpp), for the tests that spend it.
  m.attr("MEND_SEARCHES_PER_VERTEX") = py::int_(apsp::kMendSearchesPerVertex);

  py::register_exception_translator([](std::exception_ptr ptr) {
    try {
      if (ptr) std::rethrow_exception(ptr);
    } catch (const apsp::NegativeCycleError& e) {
      py::object cls = py::module_::import("apsp._errors").attr("NegativeCycleError");
      py::object exc = cls(e.what());
      exc.attr("vertices") = py::cast(e.vertices);
      if (e.graph >= 0) exc.attr("graph") = py::int_(e.graph);
      PyErr_SetObject(cls.ptr(), exc.ptr());
    } catch (const apsp::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const apsp::OverflowError& e) {
      PyErr_SetString(PyExc_OverflowError, e.what());
    } catch (const apsp::MemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const apsp::Error& e) {  // CudaError and anything else from the core
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.def("solve_host", &solve_host, py::arg("graph"), py::arg("pred"), py::arg("engine"),
        py::arg("device"), py::arg("directed"), py::arg("unweighted"), py::arg("check_input"),
        py::arg("check_negative_cycles"), py::arg("progress"), py::arg("out") = py::none(),
        py::arg("helpers") = std::vector<int>{},
        "Solve a host array (rows contiguous) with the CPU or CUDA engine, in place or into `out`; "
        "`helpers`: more CUDA devices that share the rounds with `device`.");
  m.def("solve_batch_host", &solve_batch_host, py::arg("graphs"), py::arg("engine"),
        py::arg("device"), py::arg("directed"), py::arg("unweighted"),
        py::arg("out") = py::none(), py::arg("pred") = py::none(),
        "Solve a (count, n, n) host array of graphs with the CPU engine (in place; `pred`: its\n"
        "predecessors) or the CUDA engine (into `out`, or in place).");
  m.def("solve_batch_device", &solve_batch_device, py::arg("data"), py::arg("count"),
        py::arg("n"), py::arg("ld"), py::arg("stride"), py::arg("dtype"), py::arg("device"),
        py::arg("stream"), py::arg("directed"), py::arg("unweighted"), py::arg("check_input"),
        py::arg("check_negative_cycles"),
        "Solve a batch of graphs in device memory (raw pointer) in place, on `stream`.");
  m.def("solve_sparse_host", &solve_sparse_host, py::arg("n"), py::arg("rows"), py::arg("cols"),
        py::arg("values"), py::arg("out"), py::arg("pred"), py::arg("device"), py::arg("directed"),
        py::arg("unweighted"), py::arg("check_input"), py::arg("check_negative_cycles"),
        py::arg("progress"), py::arg("helpers") = std::vector<int>{},
        "Solve a COO graph on a CUDA device (edges scattered there) into the host array `out`; "
        "`helpers`: more CUDA devices that share the rounds with `device`.");
  bind_device_array(m);
  apsp_py::bind_device_buffer(m);
  m.attr("DEVICE_DTYPES") = py::tuple(py::cast(apsp_py::device_dtype_names()));
  m.def(
      "check_device_dtype",
      [](const std::string& name, const std::string& what) {
        apsp_py::dtype_from_name(name, what.c_str());
      },
      py::arg("name"), py::arg("what") = "graph",
      "TypeError unless apsp computes in this dtype on the GPU.");
  m.def("solve_device", &solve_device, py::arg("data"), py::arg("n"), py::arg("ld"),
        py::arg("dtype"), py::arg("pred"), py::arg("pred_ld"), py::arg("device"),
        py::arg("stream"), py::arg("directed"), py::arg("unweighted"), py::arg("check_input"),
        py::arg("check_negative_cycles"), py::arg("progress"),
        "Solve in place on device memory given as raw pointers (engine tests and benchmarks).");
  m.def("solve_array", &solve_array, py::arg("work"), py::arg("pred"), py::arg("stream"),
        py::arg("directed"), py::arg("unweighted"), py::arg("check_input"),
        py::arg("check_negative_cycles"), py::arg("progress"),
        py::arg("helpers") = std::vector<int>{},
        "Solve in place on a DLPack capsule (consumed), DeviceArray or DeviceBuffer, enqueued on\n"
        "`stream` of its device. `helpers`: more CUDA devices that share the rounds.");
  m.def("pool_bytes_in_use", &apsp_py::cuda::pool_bytes_in_use, py::arg("device"),
        "Bytes of the device's stream-ordered pool this process's allocations use now (tests: the\n"
        "engine's scratch and split buffers go back).");
  m.def("repair_predecessor_loops", &repair_host, py::arg("dist"), py::arg("pred"),
        "Mend looping predecessor chains of a float host result in place (tests).");
  m.def("repair_predecessor_loops_device", &repair_device, py::arg("dist"), py::arg("pred"),
        py::arg("stream"),
        "Mend looping predecessor chains of a float device result in place, on `stream` (tests).");
  m.def("info", &info, "Build and device facts.");
}
