// apsp public C++ API: the only header the binding layer (cpp/) includes.
// Plain pointers, n, leading dimension, dtype and a stream; no kernel templates, no CUDA headers.
// Every entry point enforces the whole contract (edge rules, checks, negative cycles) and reports
// violations with the typed exceptions below, so both engines behave identically.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace apsp {

enum class DType : int { float32 = 0, float64 = 1, int32 = 2, int64 = 3 };
const char* dtype_name(DType dtype);
int dtype_size(DType dtype);

// "No edge" for integer dtypes. Chosen so that INF + INF does not overflow; results that are
// unreachable are exactly this value. Floats use +infinity.
constexpr int32_t kInt32Inf = (int32_t{1} << 30) - 1;  // 1073741823, the course file format's INF
constexpr int64_t kInt64Inf = (int64_t{1} << 62) - 1;

// Row-major n x n matrix: element (i, j) lives at data[i * ld + j] (ld >= n, counted in elements).
struct Matrix {
  void* data = nullptr;
  int64_t n = 0;
  int64_t ld = 0;
  DType dtype = DType::float32;
};

// Optional predecessor matrix (int32, same n). data == nullptr means "not wanted".
struct PredMatrix {
  int32_t* data = nullptr;
  int64_t ld = 0;
};
constexpr int32_t kNoPredecessor = -9999;  // SciPy's convention

// Called between rounds with (rounds done, rounds in all). May throw to abort the solve (for
// example on KeyboardInterrupt); the engine leaves no work in flight when it does.
using ProgressFn = void (*)(void* ctx, int64_t done, int64_t total);
// Called where the CUDA engine copies a host input before its first round (between the pinned
// chunks of the upload), with no rounds to report; may throw to stop, like ProgressFn.
using PollFn = void (*)(void* ctx);

struct Options {
  bool directed = true;     // false: weight(i,j) = min(G[i,j], G[j,i])
  bool unweighted = false;  // true: every edge weighs 1
  // Validation needs a look at the data before solving (NaN, -inf, integer overflow bound) and
  // after it (negative diagonal). On the CUDA engine each costs one stream synchronisation;
  // switching them off makes a device solve fully asynchronous.
  bool check_input = true;
  bool check_negative_cycles = true;
  ProgressFn progress = nullptr;
  void* progress_ctx = nullptr;
  // `progress` only polls for Ctrl-C: nobody shows the counts. The CPU engine still calls it
  // every round; the CUDA engine only where the host waits for the solve anyway and the calls cost
  // nothing measurable: past the sizes replayed as one CUDA graph, on host inputs and on device
  // arrays whose negative cycles are checked (a solve without the checks stays asynchronous).
  bool progress_polls_only = false;
  PollFn poll = nullptr;  // with progress_ctx; called only where `progress` is kept
};

// ---- errors (the binding maps each to one Python exception type) ----------------------------
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ValueError : Error {  // NaN or -inf weight, bad shape/ld
  using Error::Error;
};
struct OverflowError : Error {  // an integer path length could overflow the dtype
  using Error::Error;
};
struct MemoryError : Error {  // not enough device (or host) memory
  using Error::Error;
};
struct CudaError : Error {  // any CUDA failure, with the CUDA error text
  using Error::Error;
};
struct NegativeCycleError : Error {
  NegativeCycleError(const std::string& msg, std::vector<int64_t> v, int64_t g = -1)
      : Error(msg), vertices(std::move(v)), graph(g) {}
  std::vector<int64_t> vertices;  // vertices whose shortest closed walk is negative
  int64_t graph = -1;             // in a batch (solve_*_batch), the graph's index
};

// ---- batches: many graphs of one n, solved in one call ------------------------------------
// Graph b of `count` is the Matrix `first` moved b * stride elements on (stride >= n * ld when
// count > 1: graphs do not overlap). Every graph gets exactly the contract of one solve (edge
// rules, checks, unreachable as INF, negative cycles). When graphs break it, the lowest such
// index raises what its own solve would, its message led by "graph b of the batch: " (a
// NegativeCycleError also carries `graph`); the other graphs may have been solved in place by
// then. Predecessors on the CPU engine only (solve_cpu_batch); no progress calls: Options::poll,
// for Ctrl-C, between graphs or launches.
struct Batch {
  Matrix first;
  int64_t count = 0;
  int64_t stride = 0;
  Matrix graph(int64_t b) const {
    return Matrix{static_cast<char*>(first.data) + b * stride * dtype_size(first.dtype), first.n,
                  first.ld, first.dtype};
  }
};
// A batch's predecessors (solve_cpu_batch): graph b's n x n int32 rows start b * stride entries
// after `first` (none: first == nullptr).
struct PredBatch {
  int32_t* first = nullptr;
  int64_t ld = 0;
  int64_t stride = 0;
  PredMatrix graph(int64_t b) const {
    return first ? PredMatrix{first + b * stride, ld} : PredMatrix{};
  }
};
// n >= 0, ld >= n, count >= 0, stride >= n * ld where count > 1; ValueError naming the values.
void check_batch(const Batch& batch);
// Rethrows `error` (thrown by graph b's solve) as the same type, its message led by the graph.
[[noreturn]] void rethrow_for_graph(std::exception_ptr error, int64_t b);

// ---- CPU engine ----------------------------------------------------------------------------
// Solves in place: `dist` holds edge weights on entry and distances on return.
void solve_cpu(Matrix dist, PredMatrix pred, const Options& options);
int cpu_threads();  // OpenMP threads the CPU engine uses
// A batch in place: graphs below the size where one solve uses threads run side by side, one a
// thread; larger ones one after another, each with every thread. With `pred` (first != nullptr),
// graph b's predecessors too, exactly as solve_cpu and repair_predecessor_loops give them.
void solve_cpu_batch(const Batch& dist, const PredBatch& pred, const Options& options);

// ---- CUDA engine ---------------------------------------------------------------------------
struct CudaBuildInfo {
  bool compiled = false;
  std::string detail;  // compiler and architectures, or why the engine is absent
};
CudaBuildInfo cuda_build_info();

struct CudaDevice {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  uint64_t total_memory = 0;
  std::optional<uint64_t> free_memory;  // none where it cannot be known without a context
};
// Usable devices; when there are none, *why_none says why (no driver, no device, not compiled).
// Makes no CUDA context on any device (free memory comes from NVML, or from a context already
// there; unknown where neither can say).
std::vector<CudaDevice> cuda_devices(std::string* why_none);

// `dist` (and `pred`) are device pointers on `device`; work is enqueued on `stream`
// (a cudaStream_t passed as void*; nullptr = the legacy default stream). Host waits happen only
// for the checks that Options enables. `helpers`: more devices that share the rounds, as for
// solve_cuda_host below (each holds its own copy of the matrix; the work on them starts after
// what `stream` held and ends before what `stream` gets next).
void solve_cuda(Matrix dist, PredMatrix pred, const Options& options, int device, void* stream,
                const std::vector<int>& helpers = {});

// `input`, `dist` (and `pred`) are host pointers; the weights are read from `input` (left
// untouched unless it is `dist` itself) and staged through pinned memory to one device buffer,
// and the distances are written to `dist` (same n and dtype). Pass the same matrix twice to solve
// in place; a separate `dist` spares the caller a host copy that keeps the input intact.
// `helpers`: more devices that share the round loop's rows with `device` (a multi-GPU solve):
// each holds its own copy of the n x n working matrix, takes the rounds of a contiguous share of
// the rows and receives each super-round's pivot rows from their owner; the results are gathered
// on `device`, bit for bit those of `device` alone. Plans that do not split (predecessors, the
// one-launch and narrow plans, n below the split's threshold) run on `device` alone.
void solve_cuda_host(Matrix input, Matrix dist, PredMatrix pred, const Options& options,
                     int device, const std::vector<int>& helpers = {});

// A batch in device memory on `device`, in place, enqueued on `stream` (as solve_cuda). Graphs
// of n <= 256 are solved in one launch, one block (n <= 64) or one thread-block cluster each;
// larger ones one after another, each as solve_cuda solves it. The host waits only for the
// enabled checks.
void solve_cuda_batch(const Batch& dist, const Options& options, int device, void* stream);
// A batch in host memory: `input` copied to one device buffer through pinned staging, solved,
// and the distances copied to `dist` (the same count, n and dtype; `input` itself to solve in
// place) unless an input check failed (then `dist` is left as it was).
void solve_cuda_batch_host(const Batch& input, const Batch& dist, const Options& options,
                           int device);

// A sparse graph in coordinate form on the host: edge e is rows[e] -> cols[e] with weight
// values[e] (of `dtype`); duplicates are allowed (the smallest weight wins).
struct CooGraph {
  int64_t n = 0;
  int64_t nnz = 0;
  const int64_t* rows = nullptr;
  const int64_t* cols = nullptr;
  const void* values = nullptr;
  DType dtype = DType::float32;
};
// The edges are uploaded and scattered into one n x n device matrix (the dense graph is never
// built on the host); the distances land in the host matrix `dist` (same n and dtype).
void solve_cuda_sparse_host(const CooGraph& graph, Matrix dist, PredMatrix pred,
                            const Options& options, int device,
                            const std::vector<int>& helpers = {});

}  // namespace apsp
