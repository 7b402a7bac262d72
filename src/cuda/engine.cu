// CUDA engine: the launch plan (tile shape by n and, with predecessors, by the weights), the one
// run-time -> compile-time dispatch (dtype x tile shape), the round loop (phase 1 pivot closure,
// phase 2 pivot panels, phase 3 min-plus GEMM), the one-launch solves for n <= 64 (one block),
// n <= 256 (one thread-block cluster) and, 4-byte types, 256 < n <= 1728 (the flow plan, the
// pivot chain on one cluster and the rest as dataflow items: choose_tiles), the argmin plan's
// predecessor check and its fallback (solve_argmin), CUDA-graph replay for small n, and the
// entry points of apsp.hpp.
// Kernels live in kernels.cuh, small.cuh, cluster.cuh, flow.cuh and tagged.cuh, the graphs'
// recorder in graph.cuh, host staging in staging.cpp.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "apsp/apsp.hpp"
#include "core/contract.hpp"
#include "core/pred_repair.hpp"
#include "cuda/check.cuh"
#include "cuda/cluster.cuh"
#include "cuda/flow.cuh"
#include "cuda/graph.cuh"
#include "cuda/kernels.cuh"
#include "cuda/narrow.cuh"
#include "cuda/scatter.cuh"
#include "cuda/small.cuh"
#include "cuda/staging.hpp"
#include "cuda/tagged.cuh"

namespace apsp {
namespace cuda_detail {
namespace {

// ---- tile shapes ---------------------------------------------------------------------------------
enum class Tiles { k64o, k64q, k64d, k64w, pred32, tagged, argmin, small, cluster, flow, narrow2,
                    narrow4 };
const char* tiles_name(Tiles t) {
  switch (t) {
    case Tiles::small: return "small";
    case Tiles::cluster: return "cluster";
    case Tiles::flow: return "flow";
    case Tiles::k64o: return "k64o";
    case Tiles::k64q: return "k64q";
    case Tiles::k64d: return "k64d";
    case Tiles::k64w: return "k64w";
    case Tiles::pred32: return "pred32";
    case Tiles::tagged: return "tagged";
    case Tiles::argmin: return "argmin";
    case Tiles::narrow2: return "narrow2";
    case Tiles::narrow4: return "narrow4";
  }
  return "?";
}

// Each plan names its pivot width K and the kernels of its rounds. Min3: the round loops' min-plus
// step by two FADD and one VIMNMX3 per two pivots (float32 graphs of non-negative weights:
// Semiring<float>::relax2_nonnegative).
template <class T, Tiles, bool Min3 = false>
struct Plan;

// 64 x 64 tiles, 8 x 4 per thread (8-byte types 8 x 2). k64w: rounds of one 64-wide pivot
// block. k64d, k64q, k64o: super-rounds of 2, 4 and 8 pivot blocks, so that phase 3 runs k-depth
// 128, 256 and 512 and every tile's fixed cost (C load and store, the pipeline's fill and drain,
// the tile's index math) is paid once per super-round.
template <class T, int Depth, bool Min3>
struct Plan64 {
  using type = T;
  static constexpr int K = 64;
  static constexpr int depth = Depth;
  static constexpr int BK = 32;
  static constexpr int TN = sizeof(T) == 4 ? 4 : 2;  // 8-byte types: 8 x 2, 256 threads
  // Blocks per SM the register budget must allow. 4-byte types: 3 (up to 168 registers) measured
  // as fast as 4 at k-depth 64 and faster at 128 (the copies of later chunks need registers);
  // 8-byte types: 2, all that shared memory holds.
  static constexpr int MINB = sizeof(T) == 4 ? 3 : 2;
  using G = Gemm<T, K, 8, TN, BK, 3, MINB>;
  static constexpr bool pred = false, small = false, cluster = false, tagged = false, argmin = false;
  static constexpr bool min3 = Min3;
  static constexpr auto pivot = pivot_kernel<T, K, 4, false>;
  static constexpr auto gemm = minplus_kernel<T, K, 8, TN, BK, 3, MINB, Track::None, Min3>;
  using PP = PivotPanels<T, K, 4>;  // phases 1 and 2 in one launch (k64w)
  static constexpr auto pivot_panels = pivot_panels_kernel<T, K, 4>;
};
template <class T, bool M>
struct Plan<T, Tiles::k64w, M> : Plan64<T, 64, M> {};
template <class T, bool M>
struct Plan<T, Tiles::k64d, M> : Plan64<T, 128, M> {};
template <class T, bool M>
struct Plan<T, Tiles::k64q, M> : Plan64<T, 256, M> {};
template <class T, bool M>
struct Plan<T, Tiles::k64o, M> : Plan64<T, 512, M> {};
// The super-round plans' pivot depth (the same for every T), 0 for every other plan: the plans a
// solve split over GPUs (enqueue_split) or solved while it arrives runs.
constexpr Tiles kSuperRoundPlans[] = {Tiles::k64d, Tiles::k64q, Tiles::k64o};
int64_t super_round_depth(Tiles t) {
  switch (t) {
    case Tiles::k64d: return Plan<int32_t, Tiles::k64d>::depth;
    case Tiles::k64q: return Plan<int32_t, Tiles::k64q>::depth;
    case Tiles::k64o: return Plan<int32_t, Tiles::k64o>::depth;
    default: return 0;
  }
}
// The general plan's super-rounds (below) from this n: fewer, larger phase-3 launches, and the
// matrix, predecessors and hop counts read and written once per 128 pivots instead of 32. Below it
// the one-round loop's three launches a round set the pace (H100, int32, ms, one round / super-
// rounds: n = 512 0.41 / 0.56, 1024 1.25 / 1.32, 1536 2.95 / 2.97, 2048 6.25 / 5.43, 4096 41.4 /
// 32.7, 10000 574 / 437; GPU_NOTES.md, fortieth session).
constexpr int64_t kPredDeepMinN = 1536;
// Positive int32 weights (and float32 integer ones on the int32 twin) take the argmin plan below
// this n, the tagged plan from it where the paths fit the tags; int64 ones the argmin plan at every
// n (solve_on_stream).
constexpr int64_t kArgminMaxN = 15360;
template <class T>
struct Plan<T, Tiles::pred32> {  // with predecessors, any weights: 32 x 32 tiles
  using type = T;
  static constexpr int K = 32;
  static constexpr bool pred = true, small = false, cluster = false, tagged = false, argmin = false;
  static constexpr bool min3 = false;
  static constexpr auto pivot = pivot_kernel<T, K, 2, true>;
  static constexpr auto gemm_pred = minplus_pred_kernel<T, K>;
  // From kPredDeepMinN, super-rounds of four pivot blocks; phase 3 at k-depth 128 on tiles of TK,
  // BK pivots at a time.
  static constexpr int depth = 4 * K, TK = 32, BK = 32;
  static constexpr auto gemm_deep = minplus_pred_deep_kernel<T, TK, BK>;
};
// Floats whose weights are all positive integers run the plans of the integer type of the same
// size on the same buffer (solve_on_stream): with predecessors the argmin plan (float32:
// solve_argmin) or the tagged plan (float32 as int32 from kArgminMaxN; float64 where the argmin
// plan is left out), and for float32 the round loops without (float64's own round loops are
// faster than int64's: DADD, DSETP and two selects against six integer
// instructions a step; H100, integer weights, checks on, float64 / int64 kernels, ms: n = 512
// 0.434 / 0.550, 2048 2.500 / 3.491, 4096 14.78 / 23.57, 10000 203.4 / 327.2; GPU_NOTES.md,
// thirty-seventh session).
template <class F>
struct IntegerTwin {
  using type = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
};
// With predecessors where tagged.cuh applies (integers: hop-scaled keys, or positive 4-byte
// weights from kArgminMaxN; short enough paths):
// super-rounds of four 32-wide pivot blocks whose rows and columns the pred32 kernels finish, then
// phase 3 at k-depth 128 by the k64d GEMM with tags, at about the speed of the solve without.
template <class T>
struct Plan<T, Tiles::tagged> : Plan<T, Tiles::pred32> {
  using Deep = Plan64<T, 128, false>;  // phase 3's shape: 64 x 64 tiles, k-depth 128
  static constexpr bool tagged = true;
  static constexpr int depth = Deep::depth, TK = Deep::K;
  using G = typename Deep::G;
  static constexpr auto gemm =
      minplus_kernel<T, TK, 8, Deep::TN, Deep::BK, 3, Deep::MINB, Track::Tags>;
};
// With predecessors for graphs of positive weights: int32 (and float32 integer weights on the
// int32 twin) below kArgminMaxN or with paths too long for the tags, int64, floats that the tagged
// plan cannot take (fractional weights, or paths too long for the tags) or float64 ones
// (solve_on_stream). The tagged plan's super-rounds with look-ahead, phases 1 and 2 by the pred32
// kernels taking strict improvements (no hop counts: where float sums round, the hop buffer holds
// the input meanwhile, solve_argmin) and phase 3 by the GEMM tracking the winning group of pivots
// (kernels.cuh, Track::Argmin), which leaves "as in pivot row k" entries for resolve_kernel.
// Float rounding can make a predecessor as far as its successor (x + w == x); where float sums
// can round, solve_argmin checks every predecessor afterwards and, where one is not strictly
// closer, solves again on the pred32 plan. Exact integer sums need no check.
template <class T>
struct Plan<T, Tiles::argmin> : Plan<T, Tiles::pred32> {
  static constexpr bool argmin = true;
  static constexpr auto pivot = pivot_kernel<T, 32, 2, true, false>;
  static constexpr auto gemm_pred = minplus_pred_kernel<T, 32, false>;
  // 4-byte types: k-depth 128 in 4 stages of 32 (73.7 KB, 3 blocks per SM); 8-byte types: k-depth
  // 64 in 2 stages (71.6 KB; 2 blocks per SM, as the plain float64 kernel).
  static constexpr int TK = 64, TN = sizeof(T) == 4 ? 4 : 2, BK = 32;
  static constexpr int STAGES = sizeof(T) == 4 ? 4 : 2, MINB = sizeof(T) == 4 ? 3 : 2;
  using G = ArgminGemm<T, TK, 8, TN, BK, STAGES, MINB>;
  static constexpr int depth = G::depth;
  // float32: the group minimum by the min3 step (positive weights), two sums per VIMNMX3.
  static constexpr auto gemm = minplus_kernel<T, TK, 8, TN, BK, STAGES, MINB, Track::Argmin,
                                              std::is_same_v<T, float>>;
};

template <class T>
struct Plan<T, Tiles::small> {  // n <= 64: one block, one launch (small.cuh)
  using type = T;
  static constexpr bool pred = false, small = true, cluster = false, tagged = false, argmin = false;
  static constexpr bool min3 = false;
};
template <class T>
struct Plan<T, Tiles::cluster> {  // n <= 256: one thread-block cluster, one launch (cluster.cuh)
  using type = T;
  static constexpr bool pred = false, small = false, cluster = true, tagged = false, argmin = false;
  static constexpr bool min3 = false;
};
// 4-byte types, n <= Flow::max_n: the rounds in one launch, the pivot chain on one cluster and
// the rest as dataflow items (flow.cuh), between the rules and, where a float matrix runs its
// integer twin, the unpack. Its step is relax (no min3).
template <class T, bool M>
struct Plan<T, Tiles::flow, M> {
  using type = T;
  static constexpr int K = Flow::K;
  static constexpr bool pred = false, small = false, cluster = false, tagged = false, argmin = false;
  static constexpr bool min3 = false, flow = true;
};
// Matrices of non-negative integer weights (any dtype) whose every path length fits in 15 bits
// (narrow.cuh): 128 x 128 tiles of two 16-bit lengths a word, super-rounds of Depth / 128 pivot
// blocks (never one: the one-block rounds' fused phases 1 and 2 are the 64-wide plans'). The
// matrix is narrowed in place after the rules and widened before finalize (run_plan).
template <int Depth>
struct PlanNarrow {
  using type = uint16_t;
  static constexpr int K = NarrowGemm::tile;
  static constexpr int depth = Depth;
  static_assert(Depth >= 2 * K && Depth % K == 0, "super-rounds of whole pivot blocks");
  using G = NarrowGemm;
  static constexpr bool pred = false, small = false, cluster = false, tagged = false, argmin = false;
  static constexpr bool min3 = false, narrow = true;
  // Phase 1 on 16-bit lengths closed as int32 in registers (every length <= its INF, so every
  // sum fits), 8 x 8 a thread: 256 threads, the round loop's pivot launch.
  static constexpr auto pivot = pivot_kernel<int32_t, K, 8, false, false, uint16_t>;
  static constexpr auto gemm = narrow_minplus_kernel;
};
template <class P, class = void>
struct is_narrow : std::false_type {};
template <class P>
struct is_narrow<P, std::void_t<decltype(P::narrow)>> : std::bool_constant<P::narrow> {};

template <class P, class = void>
struct is_flow : std::false_type {};
template <class P>
struct is_flow<P, std::void_t<decltype(P::flow)>> : std::bool_constant<P::flow> {};

// Measured on an H100 (benchmarks/GPU_NOTES.md): 64 x 64 tiles with 8 x 4 per thread beat
// 128 x 128 tiles and 4 x 4 per thread for every dtype and n. Deeper super-rounds pay each tile's
// fixed cost less often but lengthen the chain of pivot work that phase 3 must hide: single rounds
// (k64w) below kDoubleMinN (by the dtype of the kernels that run: a float matrix's integer twin's
// where it takes it), k-depth 128 (k64d) from there, 256 (k64q) from kDeepMinN, 512 (k64o) from
// kOctoMinN (int32: 88.1% of the ceiling against 84.6% for k-depth 128 at n = 10000, 93.2%
// against 89.1% at 16384; float64 no difference). The crossovers below kDeepMinN, measured with
// the CUDA graphs' nodes at their own priorities and k64d's chain launched early
// (enqueue_rounds: chain_pdl; H100, us, k64w / k64d; GPU_NOTES.md, thirty-fourth session): int32
// 2176 981 / 978, 2240 1032 / 1046, 2304 1119 / 1046, 2560 1461 / 1341; float32 2304 1360 / 1356,
// 2560 1772 / 1669; int64 1280 1480 / 1463, 1408 1676 / 1655, 1536 2084 / 1817; float64 1664
// 2752 / 2845, 1792 3136 / 3172, 2048 4543 / 3930. k64d / k64q (thirty-third): int32 4608 7155
// / 7346, 4864 8357 / 8358, 5120 9800 / 9590. n <= 64 is one launch of one block (small), n <= 256
// one launch of one cluster where the GPU has clusters (`cluster_ok`), and for 4-byte types
// n <= kFlowMaxN the flow plan where it fits (`flow_ok`): with one worker per block up to n = 832
// it beat the round loop at every n measured, ragged or not (H100, int32, flow / k64w, us: 257
// 86.1 / 90.6, 289 87.7 / 94.1, 330 99.8 / 108.2, 470 127.2 / 140.2, 512 99.0 / 120.5, 577
// 154.6 / 178.8, 768 144.8 / 179.0, 832 167.2 / 198.1), and with two above (1024 222.7 / 241.7,
// 1152 281.8 / 314.2; 1280 386.2 / 371.7 lost; GPU_NOTES.md, eighteenth session) and, with more
// workers on the SMs its clusters leave free past n = 1024 (flow_extra; 1152 252.7 / 311.9, 1280
// 318.0 / 376.1, 1408 422.6 / 436.6; 1536 538.3 / 517.2 lost; twenty-first) and three workers per
// block past 1280 (flow_workers), up to kFlowMaxN (1408 375.7 / 434.1, 1536 447.0 / 513.5, 1664
// 568.3 / 590.7; 1792 707.9 / 693.8 lost; float32 1536 517.1 / 622.4, 1792 815.1 / 825.1;
// twenty-third), except with two or three workers on a matrix whose rows are not 16-byte aligned
// (`aligned`; a device array's own layout: a host solve's working matrix always is), where
// element-by-element copies made it lose (ld = n: 833 288.8 / 253.2 us, 1000 with ld 1001 339.1
// against 244.5 with ld 1000). With predecessors: the tagged plan where `tagged_fits`
// (tagged.cuh), else the argmin plan where `argmin_fits` (positive weights), pred32 otherwise
// (solve_on_stream decides). APSP_CUDA_TILES=cluster|flow|k64o|k64q|k64d|k64w forces the plan of
// solves without predecessors, =pred32 that of solves with them (benchmarks and tests).
constexpr int64_t kDoubleMinN4 = 2240, kDoubleMinInt64 = 1536, kDoubleMinFloat64 = 1920;
constexpr int64_t kDeepMinN = 4864, kOctoMinN = 12288;
// The narrow plan (narrow.cuh) where the weights fit it, from these n (H100, us, narrow / the
// plan of the matrix's own dtype; GPU_NOTES.md, forty-seventh session): int32 3072 2332 / 2269,
// 3328 2612 / 2969, 4096 3662 / 4932; int64 256 (the cluster plan) 234 / 223, 384 303 / 412,
// 1024 672 / 985. Its super-rounds of four blocks from kNarrowDeepMinN (four / two: 6144 10257 /
// 9234, 10000 36972 / 37217, 16384 151982 / 153696).
constexpr int64_t kNarrowMinN4 = 3328, kNarrowMinN8 = 384, kNarrowDeepMinN = 9216;
int64_t narrow_min_n(DType dtype) { return dtype_size(dtype) == 8 ? kNarrowMinN8 : kNarrowMinN4; }
constexpr int64_t kChainPdlMaxN4 = 3392, kChainPdlMaxN8 = 2816;
constexpr int64_t kFlowMaxN = 1728, kFlowOneWorkerMaxN = 832, kFlowTwoWorkersMaxN = 1280,
                  kFlowExtraMinN = 1024;
Tiles choose_tiles(int64_t n, DType kernels, bool pred, bool tagged_fits, bool argmin_fits,
                   bool cluster_ok, bool flow_ok, bool aligned, bool narrow_fits = false) {
  constexpr Tiles forceable[] = {Tiles::cluster, Tiles::flow,    Tiles::k64o,   Tiles::k64q,
                                 Tiles::k64d,    Tiles::k64w,    Tiles::pred32, Tiles::narrow2,
                                 Tiles::narrow4};
  const char* force = std::getenv("APSP_CUDA_TILES");
  const std::string forced = force ? force : "";
  const Tiles* hit = std::find_if(std::begin(forceable), std::end(forceable),
                                  [&](Tiles t) { return forced == tiles_name(t); });
  if (force && hit == std::end(forceable)) {
    std::string names;
    for (Tiles t : forceable) names += std::string(names.empty() ? "" : ", ") + tiles_name(t);
    throw ValueError("APSP_CUDA_TILES=" + forced + " is not a plan; supported: " + names);
  }
  if (pred) {
    if (forced == "pred32") return Tiles::pred32;
    return tagged_fits ? Tiles::tagged : argmin_fits ? Tiles::argmin : Tiles::pred32;
  }
  if (force && *hit == Tiles::cluster && !cluster_ok)
    throw ValueError("APSP_CUDA_TILES=cluster needs n <= " + std::to_string(ClusterShape::max_n) +
                     " (n = " + std::to_string(n) +
                     ") and a GPU with thread-block clusters (compute capability 9.0 or later)");
  if (force && *hit == Tiles::flow && !flow_ok)
    throw ValueError("APSP_CUDA_TILES=flow needs a 4-byte dtype, " +
                     std::to_string(ClusterShape::max_n) + " < n <= " + std::to_string(Flow::max_n) +
                     " (n = " + std::to_string(n) +
                     ") and a GPU that holds two clusters of 16 blocks (compute capability 9.0)");
  if (force && (*hit == Tiles::narrow2 || *hit == Tiles::narrow4) && !narrow_fits)
    throw ValueError("APSP_CUDA_TILES=" + forced + " needs no predecessors and non-negative "
                     "integer weights with (n - 1) * max weight <= " +
                     std::to_string(kNarrowMaxLength) + " (n = " + std::to_string(n) + ")");
  if (force && *hit != Tiles::pred32) return *hit;
  if (narrow_fits && n >= narrow_min_n(kernels))
    return n >= kNarrowDeepMinN ? Tiles::narrow4 : Tiles::narrow2;
  if (n <= Small::K) return Tiles::small;
  if (n <= ClusterShape::max_n && cluster_ok) return Tiles::cluster;
  if (n <= kFlowMaxN && flow_ok && (aligned || n <= kFlowOneWorkerMaxN)) return Tiles::flow;
  if (n >= kOctoMinN) return Tiles::k64o;
  if (n >= kDeepMinN) return Tiles::k64q;
  const int64_t double_min_n = kernels == DType::int64     ? kDoubleMinInt64
                               : kernels == DType::float64 ? kDoubleMinFloat64
                                                           : kDoubleMinN4;
  return n >= double_min_n ? Tiles::k64d : Tiles::k64w;
}

// The plan K of a T matrix, or of its integer twin (same buffer, converted in place: run_plan)
// where `twin` says every weight is an integer (solve_on_stream; float32 round loops only), or
// with the min3 step where `min3` says float32 weights are all non-negative. The tagged plan of a
// float matrix is always its twin's; the one-launch plans and pred32 always run on T itself (the
// argmin plan: solve_argmin).
template <class T, Tiles K, class F>
void with_plan(bool twin, bool min3, F&& f) {
  using I = typename IntegerTwin<T>::type;
  constexpr bool floats = std::is_floating_point_v<T>;
  if constexpr (floats && K == Tiles::tagged) {
    f(Plan<I, K>{});
  } else if constexpr (std::is_same_v<T, float> && K != Tiles::small && K != Tiles::cluster &&
                       K != Tiles::pred32 && K != Tiles::argmin) {
    if (twin)
      f(Plan<I, K>{});
    else if (min3)
      f(Plan<T, K, true>{});
    else
      f(Plan<T, K>{});
  } else {
    f(Plan<T, K>{});
  }
}

// The one run-time -> compile-time dispatch of the CUDA engine.
template <class T, class F>
void with_tiles(Tiles t, bool twin, bool min3, F&& f) {
  switch (t) {
    case Tiles::k64o: return with_plan<T, Tiles::k64o>(twin, min3, f);
    case Tiles::k64q: return with_plan<T, Tiles::k64q>(twin, min3, f);
    case Tiles::k64d: return with_plan<T, Tiles::k64d>(twin, min3, f);
    case Tiles::k64w: return with_plan<T, Tiles::k64w>(twin, min3, f);
    case Tiles::pred32: return with_plan<T, Tiles::pred32>(twin, min3, f);
    case Tiles::small: return with_plan<T, Tiles::small>(twin, min3, f);
    case Tiles::cluster: return with_plan<T, Tiles::cluster>(twin, min3, f);
    case Tiles::flow:
      if constexpr (sizeof(T) == 4) return with_plan<T, Tiles::flow>(twin, min3, f);
      break;
    case Tiles::tagged: return with_plan<T, Tiles::tagged>(twin, min3, f);
    case Tiles::argmin: break;  // solve_argmin (floats: with its check, or on the int32 twin)
    case Tiles::narrow2: return f(PlanNarrow<2 * NarrowGemm::tile>{});
    case Tiles::narrow4: return f(PlanNarrow<4 * NarrowGemm::tile>{});
  }
  throw ValueError(std::string("unsupported tile shape ") + tiles_name(t) + " for " +
                   dtype_name(Semiring<T>::dtype) +
                   "; supported: small, cluster, flow (4-byte types), k64o, k64q, k64d, k64w, "
                   "pred32, tagged, narrow2 and narrow4");
}
template <class F>
void with_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32: return f(float{});
    case DType::float64: return f(double{});
    case DType::int32: return f(int32_t{});
    case DType::int64: return f(int64_t{});
  }
  throw ValueError(std::string("unsupported dtype code ") + std::to_string(int(dtype)) +
                   "; supported: float32, float64, int32, int64");
}

// ---- RAII ----------------------------------------------------------------------------------------
struct AsyncBuffer {  // stream-ordered scratch (cudaMallocAsync), freed on the same stream
  void* ptr = nullptr;
  cudaStream_t stream;
  AsyncBuffer(size_t bytes, cudaStream_t s) : stream(s) {
    check_allocation(malloc_async(&ptr, bytes, stream), bytes, "the solve's scratch");
  }
  AsyncBuffer(void* allocated, cudaStream_t s) : ptr(allocated), stream(s) {}  // takes ownership
  ~AsyncBuffer() {
    if (ptr) (void)cudaFreeAsync(ptr, stream);
  }
};

// Whether every row of a T matrix at d, ld apart, starts on 16 bytes: the kernels' 16-byte copies
// apply (kernels.cuh: minplus_kernel's `aligned`; flow.cuh).
template <class T>
bool rows_aligned(const void* d, int64_t ld) {
  return reinterpret_cast<uintptr_t>(d) % 16 == 0 && ld % (16 / int(sizeof(T))) == 0;
}

// Leading dimension of a host solve's working matrix: its rows start on 128-byte lines whatever n
// is, so that the kernels' 16-byte copies apply (rows_aligned) and no tile row straddles one more
// line than it must. Rows on 16 bytes only (ld = 10000, int32: every other row 64 bytes into a
// line) cost int32 n = 10000 1.2% (H100: 9984 x 9984 at 14.73 T updates/s, at ld = 10000 14.56;
// GPU_NOTES.md, thirty-seventh session). A device array's layout is its caller's.
int64_t working_ld(int64_t n, int elem_size) {
  const int64_t v = 128 / elem_size;
  return (n + v - 1) / v * v;
}

struct DeviceBuffer {  // the working matrix of a host solve
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    check_allocation(cudaMalloc(&ptr, bytes), bytes, "the working matrix");
  }
  ~DeviceBuffer() {
    if (ptr) (void)cudaFree(ptr);
  }
};

struct OwnStream {
  cudaStream_t s = nullptr;
  // CUDA's priorities: 0 is the default and the lowest, lower numbers rank higher.
  explicit OwnStream(int priority = 0) {
    APSP_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  ~OwnStream() {
    if (s) (void)cudaStreamDestroy(s);
  }
};

struct OwnEvent {  // without timing: for ordering and waits only
  cudaEvent_t e = nullptr;
  OwnEvent() { APSP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)); }
  OwnEvent(const OwnEvent&) = delete;
  OwnEvent& operator=(const OwnEvent&) = delete;
  ~OwnEvent() {
    if (e) (void)cudaEventDestroy(e);
  }
};

// ---- the round loop ------------------------------------------------------------------------------
struct Job {
  void* d;
  int64_t n, ld;
  int32_t* p;
  int64_t pld;
  uint32_t* h = nullptr;  // hop counts (n x n, compact) when predecessors are wanted
  int64_t hop_scale = 0;  // tagged plan: keys w * hop_scale + hops where > 0 (tagged.cuh)
  bool check_closer = false;  // argmin plan on float sums that can round: resolve_kernel's check
  unsigned* below_zero = nullptr;  // min3 kernels: the rules' flag (kernels.cuh: minplus_kernel)
  bool tma = false;  // TMA copies for the min-plus kernel's interior tiles (gemm_maps)
  bool pdl = false;  // programmatic dependent launch: the round loop's (`launch`), the flow kernel's
  int flow_workers = 2;  // the flow plan's workers per block (flow_workers)
  bool flow_extra = false;  // and its workers on the SMs its clusters leave free (flow_extra)
  // More GPUs that take a share of the rows (enqueue_split), or null: the solve's GPU alone.
  const std::vector<int>* split = nullptr;
};

// The attribute of a programmatic dependent launch (`launch`, enqueue_flow).
cudaLaunchAttribute programmatic_launch() {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  return attr;
}

// A launch on `s`. With `pdl` (sm_90) the kernel may be launched while the kernel before it on
// `s` is still running: its blocks wait in wait_for_previous_grid (kernels.cuh) until that one has
// finished, so the launch latency between the round loop's dependent kernels is hidden (in a CUDA
// graph, a programmatic edge: graph.cuh). Only for kernels that call wait_for_previous_grid before
// touching memory. Where a GraphRecorder is active, a node of its graph instead.
template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
            cudaStream_t s, bool pdl, Args&&... args) {
  if (GraphRecorder* g = GraphRecorder::active()) {
    std::tuple<std::decay_t<Params>...> values(std::forward<Args>(args)...);
    std::apply(
        [&](auto&... v) {
          void* pointers[] = {static_cast<void*>(&v)...};
          g->kernel(s, reinterpret_cast<const void*>(kernel), grid, block, smem, pointers, pdl);
        },
        values);
    return;
  }
  cudaLaunchAttribute attr = programmatic_launch();
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = pdl ? 1 : 0;
  const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw_cuda(err, (std::string("launch of ") + name).c_str(), __FILE__, __LINE__);
  }
}

// Whether plan P has a min-plus kernel (pred32 has only its 32-wide one).
template <class P, class = void>
struct has_gemm : std::false_type {};
template <class P>
struct has_gemm<P, std::void_t<typename P::G>> : std::true_type {};

// cuTensorMapEncodeTiled, from the driver through the runtime's entry point (the runtime is
// linked statically, the driver is not); null where the driver lacks it. Looked up once.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      f = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

template <class T>
constexpr CUtensorMapDataType tensor_map_type() {
  if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, double>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  else if constexpr (sizeof(T) == 4) return CU_TENSOR_MAP_DATA_TYPE_INT32;
  else return CU_TENSOR_MAP_DATA_TYPE_INT64;
}

// The TMA descriptors of the matrix for plan P's min-plus kernel (kernels.cuh: GemmMaps, the
// Bulk copies of interior tiles): where job.tma (sm_90, APSP_CUDA_TMA not 0) and the rows start
// on 16 bytes (`aligned`, as TMA requires of the base and the row pitch). Otherwise, or where the
// driver cannot encode them, not valid: the kernel's cp.async copies. The boxes are the GEMM's
// tile (64) by its k chunk, not P::K (32 for the predecessor plans' pivot blocks).
template <class P>
GemmMaps gemm_maps(const Job& job, bool aligned) {
  GemmMaps maps{};
  maps.valid = 0;
  if constexpr (has_gemm<P>::value && !is_narrow<P>::value) {  // narrow: cp.async only
    using T = typename P::type;
    using G = typename P::G;
    constexpr int K = G::tile;
    const PFN_cuTensorMapEncodeTiled_v12000 encode = job.tma && aligned ? tensor_map_encoder()
                                                                        : nullptr;
    if (!encode || job.n > INT32_MAX) return maps;  // TMA coordinates are 32-bit
    const cuuint64_t dims[2] = {cuuint64_t(job.n), cuuint64_t(job.n)};
    const cuuint64_t pitch[1] = {cuuint64_t(job.ld) * sizeof(T)};
    const cuuint32_t box_a[2] = {cuuint32_t(G::k_chunk), cuuint32_t(K)};  // BK columns, K rows
    const cuuint32_t box_b[2] = {cuuint32_t(K), cuuint32_t(G::k_chunk)};  // K columns, BK rows
    const cuuint32_t unit[2] = {1, 1};
    auto encode_box = [&](CUtensorMap* m, const cuuint32_t* box) {
      return encode(m, tensor_map_type<T>(), 2, job.d, dims, pitch, box, unit,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    };
    maps.valid = encode_box(&maps.a, box_a) == CUDA_SUCCESS && encode_box(&maps.b, box_b) ==
                 CUDA_SUCCESS;
  }
  return maps;
}

// One launch of plan P's min-plus kernel over a tile set, k range [k0, k0 + kw) (the predecessor
// plans: their phase 3, with job.p; the others: with the min3 flag job.below_zero, or null).
template <class P, class L>
void launch_gemm(const Job& job, cudaStream_t s, bool pdl, const L& l, int64_t k0, int kw,
                 bool aligned, const GemmMaps& maps) {
  if constexpr (has_gemm<P>::value) {
    using G = typename P::G;
    if (l.grid.x == 0 || l.grid.y == 0) return;
    launch("minplus_kernel", P::gemm, l.grid, G::threads, G::smem_bytes, s, pdl,
           static_cast<typename P::type*>(job.d), job.n, job.ld, job.p, job.pld, l.ts, k0, kw,
           aligned, job.below_zero, maps);
  }
}

// One bit per device (devices >= 64 have none: their work is redone on every call).
class DeviceBits {
 public:
  bool has(int device) const {
    return device < 64 && (bits_.load(std::memory_order_acquire) & bit(device)) != 0;
  }
  void set(int device) { bits_.fetch_or(bit(device), std::memory_order_acq_rel); }

 private:
  static uint64_t bit(int device) { return device < 64 ? uint64_t(1) << device : 0; }
  std::atomic<uint64_t> bits_{0};
};

// Whether `device` has compute capability 9.0 or later (VIMNMX3, clusters, programmatic
// dependent launch); asked once per device.
bool sm90(int device) {
  static DeviceBits known, yes;
  if (known.has(device)) return yes.has(device);
  int major = 0;
  APSP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major >= 9) yes.set(device);
  known.set(device);
  return major >= 9;
}

// A launch of `blocks` blocks in clusters of `cluster` (the one-cluster and flow plans); `attr`
// holds the cluster shape and must outlive the launch call.
cudaLaunchConfig_t cluster_launch(unsigned blocks, unsigned cluster, unsigned threads, size_t smem,
                                  cudaStream_t stream, cudaLaunchAttribute& attr) {
  attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cfg;
}

// How many clusters of `cfg`'s shape `kernel` holds resident at once (0 where it cannot run:
// no clusters, or not that much shared memory); sets the kernel's attributes (its dynamic shared
// memory, cluster sizes beyond the portable 8). The one-cluster and flow plans' checks.
template <class... Params>
int resident_clusters(void (*kernel)(Params...), const cudaLaunchConfig_t& cfg) {
  APSP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(cfg.dynamicSmemBytes)));
  APSP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();  // not this plan here: another one runs
    clusters = 0;
  }
  return clusters;
}

// The flow plan's launch configuration (flow.cuh): `clusters` clusters of Flow::G blocks.
// With W workers per block (Workers<W>::block threads).
template <class T, int W>
cudaLaunchConfig_t flow_config(unsigned clusters, cudaStream_t stream, cudaLaunchAttribute& attr) {
  return cluster_launch(clusters * unsigned(Flow::G), unsigned(Flow::G), Workers<W>::block,
                        Flow::smem_bytes<T>(), stream, attr);
}

// f(std::integral_constant<int, W>{}) for each count of workers per block the flow plan has
// (flow.cuh: Workers), or for the one equal to `w` only.
template <class F, int... W>
void each_flow_workers(F&& f, int w, std::integer_sequence<int, W...>) {
  ((w == 0 || w == W ? f(std::integral_constant<int, W>{}) : void()), ...);
}
template <class F>
void each_flow_workers(F&& f, int w = 0) {
  each_flow_workers(f, w, std::integer_sequence<int, 1, 2, 3>{});
}

// The flow plan's grid on `device` (flow.cuh): how many of its clusters the GPU holds at once,
// with one, two or three workers per block (0: none, or not compute capability 9.0), and how
// many SMs they leave free (flow_extra_kernel's blocks, one per SM). Sets the kernels'
// attributes. Once per device and dtype.
struct FlowGrid {
  int clusters = 0, extra = 0;
};
template <class T>
FlowGrid flow_grid(int device) {
  static std::atomic<int> known[64];  // 1 + clusters + 256 extra (0: not asked yet)
  if (device < 64) {
    const int k = known[device].load(std::memory_order_relaxed);
    if (k > 0) return {(k - 1) % 256, (k - 1) / 256};
  }
  FlowGrid g;
  if (sm90(device)) {
    g.clusters = std::numeric_limits<int>::max();
    each_flow_workers([&](auto w) {
      constexpr int W = decltype(w)::value;
      cudaLaunchAttribute attr;
      const cudaLaunchConfig_t cfg = flow_config<T, W>(1, nullptr, attr);
      g.clusters = std::min(g.clusters, resident_clusters(flow_kernel<T, W>, cfg));
      APSP_CUDA_CHECK(cudaFuncSetAttribute(flow_extra_kernel<T, W>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(Flow::smem_bytes<T>())));
    });
    int sms = 0;
    APSP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    g.extra = std::max(0, std::min(255, sms - g.clusters * Flow::G));
  }
  if (device < 64) known[device].store(1 + g.clusters + 256 * g.extra, std::memory_order_relaxed);
  return g;
}

// Kernel attributes (dynamic shared memory above 48 KB); outside any stream capture. Once per
// plan and device: it is a driver call, and small solves count every microsecond of host time.
template <class P>
void prepare_kernels(int device) {
  if constexpr (is_flow<P>::value) {
    (void)flow_grid<typename P::type>(device);  // sets the kernels' attributes
  } else if constexpr (has_gemm<P>::value) {
    static DeviceBits done;
    if (done.has(device)) return;
    APSP_CUDA_CHECK(cudaFuncSetAttribute(P::gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(P::G::smem_bytes)));
    if constexpr (!P::pred && !is_narrow<P>::value)
      APSP_CUDA_CHECK(cudaFuncSetAttribute(P::pivot_panels,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(P::PP::smem_bytes)));
    done.set(device);
  }
}

// The cluster plan's launch configuration: one cluster of S x S blocks (cluster.cuh).
template <class T>
cudaLaunchConfig_t cluster_config(int S, cudaStream_t stream, cudaLaunchAttribute& attr) {
  return cluster_launch(unsigned(S * S), unsigned(S * S), ClusterShape::threads,
                        ClusterShape::smem_bytes<T>(), stream, attr);
}

// Whether the cluster plan runs on `device` for T: compute capability 9.0 or later, and the
// largest cluster (16 blocks, beyond the portable 8) with T's shared memory fits on the GPU.
// Sets the kernel's attributes; once per device and dtype.
template <class T>
bool cluster_fits(int device) {
  static DeviceBits known, fits;
  if (known.has(device)) return fits.has(device);
  bool ok = false;
  if (sm90(device)) {
    cudaLaunchAttribute attr;
    ok = resident_clusters(cluster_solve_kernel<T>,
                           cluster_config<T>(ClusterShape::S_max, nullptr, attr)) > 0;
  }
  if (ok) fits.set(device);
  known.set(device);
  return ok;
}

// Waits for the work queued on `s`, unless `s` is being captured into a graph (a caller's capture,
// which a wait would break); leaves no error behind. For cleanup after an exception.
void finish_unless_capturing(cudaStream_t s) noexcept {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &capturing) == cudaSuccess &&
      capturing == cudaStreamCaptureStatusNone)
    (void)cudaStreamSynchronize(s);
  (void)cudaGetLastError();
}

// Per-call helper stream (high priority) and the two events of the look-ahead pipeline.
struct Lookahead {
  OwnStream aux_stream{highest_priority()};
  OwnEvent aux_done_event, main_done_event;
  cudaStream_t aux = aux_stream.s;
  cudaEvent_t aux_done = aux_done_event.e, main_done = main_done_event.e;
  ~Lookahead() {
    // On a normal exit the main stream has joined all aux work, and a stream or event with work
    // pending is released once that work completes. After an exception between rounds, wait so
    // that nothing is left running.
    if (std::uncaught_exceptions() > 0) finish_unless_capturing(aux);
  }
  static int highest_priority() {
    int lo = 0, hi = 0;
    APSP_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    return hi;
  }
};

// The part of a solve that one call of the round loop does: round r (pivot block r) for r in
// [p0, p1), on the tile rows [w0, w1) (every row, and every round, unless a host input is still
// arriving: upload_and_enqueue_arriving). Every pivot block of [p0, p1) lies inside the window
// (its rows go through their own rounds) or outside it (its rows are done and only read).
struct Window {
  int64_t w0, w1, p0, p1;
  static Window all(int64_t nb) { return {0, nb, 0, nb}; }
  bool has(int64_t r) const { return in_window(r, w0, w1); }
};

// Tile sets (kernels.cuh) of one launch, with their grids, cut to a window's rows.
struct Launch {
  TileSet ts;
  dim3 grid;
};
// Row and column block r without the pivot tile.
Launch panels(int64_t nb, int64_t r, const Window& w) {
  const int64_t rows = w.has(r) ? nb - 1 : 0, columns = window_rows(w.w0, w.w1, r, r + 1);
  return {TileSet{kPanels, 1, 0, r, 0, nb - 1, w.w0, w.w1}, dim3(unsigned(rows + columns))};
}
// Rows/columns [b0, b0+bc) outside [e0, e0+ec).
Launch band(int64_t nb, int64_t b0, int bc, int64_t e0, int ec, const Window& w) {
  const int64_t others = nb - ec, u0 = std::min(e0, b0);
  const int64_t rows = w.has(b0) ? bc * others : 0,
                columns = window_rows(w.w0, w.w1, u0, u0 + ec + bc) * bc;
  return {TileSet{kBand, ec, bc, e0, b0, others, w.w0, w.w1}, dim3(unsigned(rows + columns))};
}
// Every tile outside row/column blocks [e0, e0+ec).
Launch rest(int64_t nb, int64_t e0, int ec, const Window& w) {
  const int64_t others = nb - ec;
  return {TileSet{kRest, ec, 0, e0, 0, others, w.w0, w.w1},
          dim3(unsigned(others), unsigned(window_rows(w.w0, w.w1, e0, e0 + ec)))};
}

// Rows and columns of pivot blocks [r0, r0 + m) made final for the rounds of all m blocks, from
// race-free one-block steps (the blocked algorithm of width m K with its phases 1 and 2 built
// from width-K rounds): for t = 0 .. m-1, `pivot_and_panels(r)` for r = r0 + t (its closure and
// its whole row and column), then `update(launch, r)` with round r on the rows and columns of the
// later blocks outside r (they need it before their own pivot) and of the earlier ones (they
// already hold their own rounds and now get r's).
template <class PivotAndPanels, class Update>
void finish_pivot_rows(int64_t nb, int64_t r0, int m, const Window& w,
                       PivotAndPanels&& pivot_and_panels, Update&& update) {
  for (int t = 0; t < m; ++t) {
    const int64_t r = r0 + t;
    pivot_and_panels(r);
    if (t + 1 < m) update(band(nb, r + 1, m - t - 1, r, 1, w), r);
    if (t > 0) update(band(nb, r0, t, r, 1, w), r);
  }
}

// Look-ahead over super-rounds of `step` pivot blocks (r0 = w.p0, + step, ...) on the main
// stream and a high-priority aux stream, so that the next super-round's pivot work (the critical
// path) overlaps the bulk of this one's phase 3:
//   aux:  `panels(aux, r0)` makes the rows and columns of super-round r0 final (r0 = 0 first);
//         then for each r0 with a next super-round: `band(aux, r0)`, phase 3 of r0 on the rows
//         and columns of the next, and `panels(aux, r0 + step)`
//   main: `start(r0)`, then `rest(r0, next)`: phase 3 of r0 on every tile outside the rows and
//         columns of r0 and, where `next`, of the next super-round
// `after(r0)` runs on the host once super-round r0 is enqueued.
template <class Panels, class Band, class Start, class Rest, class After>
void lookahead_rounds(cudaStream_t stream, const Window& w, int64_t step, Panels&& panels,
                      Band&& band_of, Start&& start, Rest&& rest_of, After&& after) {
  if (w.p0 >= w.p1) return;
  Lookahead la;
  record_event(la.main_done, stream);  // fork: aux starts after the rules
  wait_event(la.aux, la.main_done);
  panels(la.aux, w.p0);
  record_event(la.aux_done, la.aux);
  for (int64_t r0 = w.p0; r0 < w.p1; r0 += step) {
    wait_event(stream, la.aux_done);  // rows/columns of r0 final
    start(r0);
    const bool next = r0 + step < w.p1;
    if (next) {
      wait_event(la.aux, la.main_done);  // main's last part done
      band_of(la.aux, r0);
      panels(la.aux, r0 + step);
      record_event(la.aux_done, la.aux);
    }
    rest_of(r0, next);
    if (next) record_event(la.main_done, stream);
    after(r0);
  }
}

// An override of a choice of the flow plan: -1 where `name` is unset, else the index in `values`
// of the value it holds; any other value raises, naming it and what `name` takes.
int choice_override(const char* name, const char* what, std::initializer_list<const char*> values) {
  const char* v = std::getenv(name);
  if (!v) return -1;
  const std::string value = v;
  std::string names;
  int i = 0;
  for (const char* x : values) {
    if (value == x) return i;
    names += std::string(i++ ? ", " : "") + x;
  }
  throw ValueError(std::string(name) + "=" + value + " is not " + what + "; supported: " + names +
                   " (or leave it unset)");
}

// Workers per block of the flow plan (flow.cuh: Workers). Measured on an H100 (int32, us, one
// worker / two; GPU_NOTES.md, eighteenth session): up to n = kFlowOneWorkerMaxN the chain waits
// on the workers' items, and whole-block items, each at the SM's full rate, shorten that wait;
// above it the two halves' overlap of one item's loads and waits with the other's arithmetic
// gives more items a microsecond, which is what the bigger rounds need. Past
// kFlowTwoWorkersMaxN three workers of 128 threads overlap more of it (two / three, us;
// twenty-third session: 1024 218.9 / 263.5, 1280 315.2 / 327.2, 1344 363.0 / 351.6, 1408 418.4 /
// 375.7, 1536 532.2 / 447.0; float32 1408 466.4 / 448.0): the chain waits on longer items, so
// only where the rounds' items outnumber the workers. APSP_CUDA_FLOW_WORKERS=1|2|3 forces it
// (benchmarks and tests).
int flow_workers(int64_t n) {
  const int forced =
      choice_override("APSP_CUDA_FLOW_WORKERS", "a number of workers per block", {"1", "2", "3"});
  if (forced >= 0) return forced + 1;
  return n <= kFlowOneWorkerMaxN ? 1 : n <= kFlowTwoWorkersMaxN ? 2 : 3;
}

// Whether the flow plan puts more workers on the SMs that its clusters leave free
// (flow.cuh: flow_extra_kernel; it needs programmatic dependent launch). Measured on an H100
// (int32, flow plan forced, us, without / with; GPU_NOTES.md, twenty-first session): past
// n = kFlowExtraMinN the rounds' items outnumber the workers (1088 240.2 / 234.0, 1152 273.1 /
// 252.7, 1280 374.0 / 318.0, 1408 485.1 / 422.6); up to it the extra launch costs more than
// they give (512 96.7 / 99.0, 1024 218.6 / 220.5, float32 1024 244.6 / 251.3).
// APSP_CUDA_FLOW_EXTRA=0|1 forces it (benchmarks and tests).
bool flow_extra(int64_t n) {
  const int forced = choice_override("APSP_CUDA_FLOW_EXTRA", "a switch", {"0", "1"});
  if (forced >= 0) return forced == 1;
  return n > kFlowExtraMinN;
}

// The flow plan's counters (flow.cuh: Flow::counter_bytes), cleared on the stream before the
// rules, so that only the rules lie between the clearing and the flow kernel (enqueue_flow).
std::unique_ptr<AsyncBuffer> flow_counters(int64_t n, cudaStream_t stream) {
  const int64_t nb = (n + Flow::K - 1) / Flow::K;
  auto counters = std::make_unique<AsyncBuffer>(Flow::counter_bytes(nb), stream);
  APSP_CUDA_CHECK(cudaMemsetAsync(counters->ptr, 0, Flow::counter_bytes(nb), stream));
  return counters;
}

// The flow plan's rounds (flow.cuh): one launch of as many clusters as the GPU holds at once
// (more would only wait to claim); finalize included. With Job::pdl it is launched while the
// kernel before it (the rules) runs: its blocks elect the chain, then wait for that kernel in
// wait_for_previous_grid, so its launch latency overlaps the rules (1.2 us at n = 1024, H100;
// GPU_NOTES.md, twentieth session). With Job::flow_extra (which needs Job::pdl),
// flow_extra_kernel puts more workers on the SMs that the clusters leave free.
template <class T>
void enqueue_flow(const Job& job, int device, cudaStream_t stream, const AsyncBuffer& counters,
                  DeviceStats* st, int64_t* negative) {
  const FlowGrid grid = flow_grid<T>(device);
  const bool aligned = rows_aligned<T>(job.d, job.ld);
  T* d = static_cast<T*>(job.d);
  unsigned* c = static_cast<unsigned*>(counters.ptr);
  each_flow_workers(
      [&](auto w) {
        constexpr int W = decltype(w)::value;
        cudaLaunchAttribute attr[2];
        cudaLaunchConfig_t cfg = flow_config<T, W>(unsigned(grid.clusters), stream, attr[0]);
        attr[1] = programmatic_launch();
        cfg.attrs = attr;
        cfg.numAttrs = job.pdl ? 2 : 1;
        APSP_CUDA_CHECK(cudaLaunchKernelEx(&cfg, flow_kernel<T, W>, d, job.n, job.ld, aligned, c,
                                           st, negative));
        if (job.flow_extra)
          launch("flow_extra_kernel", flow_extra_kernel<T, W>, dim3(unsigned(grid.extra)),
                 dim3(Workers<W>::block), Flow::smem_bytes<T>(), stream, true, d, job.n, job.ld,
                 aligned, c, st, negative);
      },
      job.flow_workers);
}

// Round loop. Without predecessors it runs with look-ahead on two streams. k64w, round r:
//   aux:  phase 3 (r) on row/column r+1; phases 1 and 2 (r+1) in one launch (pivot_panels_kernel)
//   main: store the closed pivot tile r (pivot_kernel); phase 3 (r) on every other tile (outside
//         rows/columns r and r+1)
// so the next round's pivot work (the critical path) overlaps the bulk of this round's phase 3.
// k64d (k64q, k64o alike with 4 and 8 blocks), super-round s over pivot blocks r0 = 2s and
// r1 = 2s+1 (the 128-wide blocked algorithm with its phases 1 and 2 built from 64-wide steps,
// every one race-free: finish_pivot_rows):
//   aux:  super-panels: pivot r0; panels r0; band r1 outside r0 with round r0; pivot r1;
//         panels r1; band r0 outside r1 with round r1 (rows/columns r0 and r1 now hold both rounds)
//   then, look-ahead: phase 3 (k-depth 128) on rows/columns r2, r3 outside r0, r1; super-panels
//         of s+1
//   main: phase 3 (k-depth 128, k0 = 64 r0) on every tile outside rows/columns r0..r3
// `after_round(r)` is called on the host after round r has been enqueued (progress reporting).
// `part`: the rounds and tile rows to do (Window; none: the whole solve). Only the super-rounds
// without predecessors (k64d, k64q, k64o) take a part, in units of their pivot blocks, whose
// bounds it keeps (upload_and_enqueue_arriving).
template <class P, class AfterRound>
void enqueue_rounds(const Job& job, cudaStream_t stream, AfterRound&& after_round,
                    const Window* part = nullptr) {
  using T = typename P::type;
  constexpr int K = P::K;
  T* d = static_cast<T*>(job.d);
  const int64_t n = job.n, ld = job.ld;
  const int64_t nb = (n + K - 1) / K;
  const Window all = Window::all(nb);
  auto kwidth = [&](int64_t r) { return int(std::min<int64_t>(K, n - r * K)); };
  constexpr int pivot_threads = 256;
  // The min-plus kernel's 16-byte copies apply (kernels.cuh: minplus_kernel's `aligned`).
  const bool aligned = rows_aligned<T>(d, ld);
  // 64-wide rounds (k64w) of 4-byte types: programmatic dependent launch on the critical (aux)
  // stream, and each pivot tile stored by the next round's phases 1 and 2. H100, n = 1024 int32:
  // 251 us against 269. Not on the main stream: phase 3's blocks, launched early, would take the
  // SMs that the next band (high priority) needs (300 us). Not for 8-byte types: there the early
  // panel blocks (68 KB of shared memory each) crowd phase 3 out, and the store in the next
  // launch lengthens the chain (float64 n = 1024: 1000 and 989 us against 897 for neither). Not
  // for deep super-rounds: int32 n = 10000 70.2 ms against 69.2, float32 71.0 against 68.9.
  // Measured: GPU_NOTES.md, eleventh session.
  constexpr bool tuned_chain = [] {
    if constexpr (P::pred)
      return false;
    else
      return sizeof(T) == 4 && P::depth == K;
  }();
  // Super-rounds of two blocks (k64d) below kChainPdlMaxN, every type: programmatic dependent
  // launch on the critical stream too (its pivot and band launches, kept apart), where the chain
  // of pivot work sets the pace; past it phase 3 does, and the early blocks only crowd it (H100,
  // k64d without / with, us: int32 2560 1575 / 1341, 3072 2334 / 2201, 3328 2815 / 2763, 3456
  // 3063 / 3109, 4096 5019 / 5054; int64 2048 3688 / 3257, 2560 6112 / 6022, 2816 7708 / 7740;
  // float64 2048 4422 / 3930, 3072 10672 / 10858; GPU_NOTES.md, thirty-fourth session). Phases
  // 1 and 2 in one launch there too lost to this (int32 2560 1434, 3072 2336).
  const bool chain_pdl = [&] {
    if constexpr (P::pred)
      return false;
    else
      return tuned_chain ||
             (P::depth == 2 * K && n < (sizeof(T) == 4 ? kChainPdlMaxN4 : kChainPdlMaxN8));
  }();
  auto pdl_on = [&](cudaStream_t s) { return chain_pdl && job.pdl && s != stream; };
  // One launch of the plan's min-plus kernel over a tile set, k range [k0, k0 + kw).
  const GemmMaps maps = gemm_maps<P>(job, aligned);
  auto gemm = [&](cudaStream_t s, const Launch& l, int64_t k0, int kw) {
    launch_gemm<P>(job, s, pdl_on(s), l, k0, kw, aligned, maps);
  };
  if constexpr (P::pred) {
    // One launch of the 32-wide predecessor kernel over a tile set with round r.
    auto update = [&](cudaStream_t s, const Launch& l, int64_t r) {
      if (l.grid.x == 0 || l.grid.y == 0) return;
      P::gemm_pred<<<l.grid, K * 8, 0, s>>>(d, n, ld, job.p, job.pld, job.h, n, l.ts, r * K,
                                            kwidth(r));
      APSP_CUDA_CHECK_LAUNCH("minplus_pred_kernel");
    };
    auto pivot_and_panels = [&](cudaStream_t s, int64_t r) {
      P::pivot<<<1, pivot_threads, 0, s>>>(d, ld, job.p, job.pld, job.h, n, r * K, kwidth(r));
      APSP_CUDA_CHECK_LAUNCH("pivot_kernel");
      update(s, panels(nb, r, all), r);
    };
    // Per super-round of m 32-wide blocks, their rows and columns by the pred32 kernels, then
    // phase 3 (k-depth m K, tiles of TK): by the deep predecessor kernel (the general plan), with
    // tagged B rows (tagged.cuh, on values shifted for the whole loop: run_plan), or tracking the
    // winning group of pivots (argmin).
    constexpr int m = P::depth / K;
    static_assert(P::depth % P::TK == 0, "super-rounds cover whole phase-3 tiles");
    const int64_t tnb = (n + P::TK - 1) / P::TK;  // phase-3 tiles per row
    const Window tiles_all = Window::all(tnb);
    auto blocks_in = [&](int64_t r0) { return int(std::min<int64_t>(m, nb - r0)); };
    auto round_panels = [&](cudaStream_t s, int64_t r0) {  // rows/columns of r0 .. r0+m final
      finish_pivot_rows(
          nb, r0, blocks_in(r0), all, [&](int64_t r) { pivot_and_panels(s, r); },
          [&](const Launch& l, int64_t r) { update(s, l, r); });
    };
    auto kw_of = [&](int64_t r0) { return int(std::min<int64_t>(P::depth, n - r0 * K)); };
    // Phase-3 tile blocks of the super-round at r0: first and count.
    auto tiles_of = [&](int64_t r0) {
      return std::pair<int64_t, int>(r0 * K / P::TK, (kw_of(r0) + P::TK - 1) / P::TK);
    };
    if constexpr (!P::tagged && !P::argmin) {
      if (n < kPredDeepMinN) {  // one 32-wide round at a time, three launches
        for (int64_t r = 0; r < nb; ++r) {
          pivot_and_panels(stream, r);
          update(stream, rest(nb, r, 1, all), r);
          after_round(r);
        }
        return;
      }
      for (int64_t r0 = 0; r0 < nb; r0 += m) {
        round_panels(stream, r0);
        const auto [e0, ec] = tiles_of(r0);
        const Launch l = rest(tnb, e0, ec, tiles_all);
        if (l.grid.x > 0 && l.grid.y > 0) {
          P::gemm_deep<<<l.grid, PredDeep<T, P::TK, P::BK>::threads, 0, stream>>>(
              d, n, ld, job.p, job.pld, job.h, l.ts, r0 * K, kw_of(r0));
          APSP_CUDA_CHECK_LAUNCH("minplus_pred_deep_kernel");
        }
        for (int64_t r = r0; r < r0 + blocks_in(r0); ++r) after_round(r);
      }
    } else if constexpr (P::tagged) {
      // The tags shift the pivot rows across every column, which the next super-round's
      // phases 1 and 2 read: no look-ahead.
      for (int64_t r0 = 0; r0 < nb; r0 += m) {
        round_panels(stream, r0);
        const int64_t k0 = r0 * K;
        const int kw = kw_of(r0);
        const auto [e0, ec] = tiles_of(r0);
        const Launch l = rest(tnb, e0, ec, tiles_all);
        if (l.grid.x > 0) {
          const dim3 rgrid(unsigned((n + 255) / 256), unsigned(kw));
          tags_rows_kernel<T><<<rgrid, 256, 0, stream>>>(d, n, ld, k0, true);
          APSP_CUDA_CHECK_LAUNCH("tags_rows_kernel");
          gemm(stream, l, k0, kw);
          tags_rows_kernel<T><<<rgrid, 256, 0, stream>>>(d, n, ld, k0, false);
          APSP_CUDA_CHECK_LAUNCH("tags_rows_kernel");
        }
        for (int64_t r = r0; r < r0 + blocks_in(r0); ++r) after_round(r);
      }
    } else {
      // argmin: with look-ahead, so that the small latency-bound launches of the next
      // super-round's phases 1 and 2 hide behind the bulk of phase 3.
      auto next_tiles = [&](int64_t r0, bool next) { return next ? tiles_of(r0 + m).second : 0; };
      lookahead_rounds(
          stream, all, m, round_panels,
          [&](cudaStream_t s, int64_t r0) {
            const auto [e0, ec] = tiles_of(r0);
            gemm(s, band(tnb, e0 + ec, next_tiles(r0, true), e0, ec, tiles_all), r0 * K,
                 kw_of(r0));
          },
          [](int64_t) {},
          [&](int64_t r0, bool next) {
            const auto [e0, ec] = tiles_of(r0);
            gemm(stream, rest(tnb, e0, ec + next_tiles(r0, next), tiles_all), r0 * K, kw_of(r0));
          },
          [&](int64_t r0) {
            for (int64_t r = r0; r < r0 + blocks_in(r0); ++r) after_round(r);
          });
    }
  } else {
    constexpr int64_t step = P::depth / K;  // pivot blocks per (super-)round
    // k64w: phases 1 and 2 in one launch on the critical stream, which never writes this round's
    // pivot tile; the next round's launch stores it (one more block, the same closure), and the
    // main stream stores the last one (pivot_kernel). Super-rounds keep them apart: their bands
    // use the stored pivot tiles at once.
    constexpr bool fused = step == 1;
    if (fused && part) throw CudaError("internal error: a part of a solve on 64-wide rounds");
    const Window w = part ? *part : all;
    auto pivot = [&](cudaStream_t s, int64_t r) {
      launch("pivot_kernel", P::pivot, 1, pivot_threads, 0, s, pdl_on(s), d, ld, nullptr, 0, nullptr,
             0, r * K, kwidth(r));
    };
    auto pivot_and_panels = [&](cudaStream_t s, int64_t r) {
      if constexpr (fused) {
        using PP = typename P::PP;
        const Launch l = panels(nb, r, all);
        if (l.grid.x == 0) return;
        const bool store_prev = tuned_chain && r > 0;  // pivot tile r - 1 (full: r - 1 < nb - 1)
        launch("pivot_panels_kernel", P::pivot_panels, dim3(l.grid.x + store_prev), PP::threads,
               PP::smem_bytes, s, pdl_on(s), d, n, ld, l.ts, r * K, kwidth(r),
               store_prev ? (r - 1) * K : int64_t(-1));
      } else {
        if (w.has(r)) pivot(s, r);  // outside the window: closed in an earlier part, only read
        gemm(s, panels(nb, r, w), r * K, kwidth(r));
      }
    };
    auto blocks_in = [&](int64_t r) { return int(std::min<int64_t>(step, w.p1 - r)); };
    auto round_panels = [&](cudaStream_t s, int64_t r0) {  // rows/columns r0 .. r0+step final
      finish_pivot_rows(
          nb, r0, blocks_in(r0), w, [&](int64_t r) { pivot_and_panels(s, r); },
          [&](const Launch& l, int64_t r) { gemm(s, l, r * K, kwidth(r)); });
    };
    auto kw_of = [&](int64_t r0) {
      return int(std::min<int64_t>(blocks_in(r0) * K, n - r0 * K));
    };
    lookahead_rounds(
        stream, w, step, round_panels,
        [&](cudaStream_t s, int64_t r0) {
          gemm(s, band(nb, r0 + step, blocks_in(r0 + step), r0, blocks_in(r0), w), r0 * K,
               kw_of(r0));
        },
        [&](int64_t r0) {
          // Pivot tile r0 (tuned_chain: only the last, which no later launch stores). This
          // round's phase 3 does not read it; the next one's, after it on this stream, does.
          if constexpr (fused)
            if (!tuned_chain || r0 + 1 == nb) pivot(stream, r0);
        },
        [&](int64_t r0, bool next) {
          const int ec = blocks_in(r0) + (next ? blocks_in(r0 + step) : 0);
          gemm(stream, rest(nb, r0, ec, w), r0 * K, kw_of(r0));
        },
        [&](int64_t r0) {
          for (int64_t r = r0; r < r0 + blocks_in(r0); ++r) after_round(r);
        });
  }
}

// Plans whose round loop takes a part of a solve (enqueue_rounds' `part`; upload_and_enqueue_
// arriving) or splits over several GPUs (enqueue_split): super-rounds without predecessors.
template <class P, class = void>
struct takes_parts : std::false_type {};
template <class P>
struct takes_parts<P, std::void_t<decltype(P::depth), typename P::G>>
    : std::bool_constant<!P::pred && (P::depth > P::K) && !is_narrow<P>::value> {};

// ---- a solve's rounds split over several GPUs ----------------------------------------------------
// The tile rows are cut into contiguous windows of whole super-rounds, one a GPU (the solve's own
// GPU first, then its helpers: Job::split). Every GPU holds a copy of the whole n x n matrix
// (the solve's GPU the real one, at its caller's leading dimension; each helper its own buffer,
// rows on 128-byte lines) and takes every round on its
// window's rows only; a row's rounds read only that row and the pivot rows (upload_and_enqueue_
// arriving says why), so a window needs nothing of the other rows but their pivot rows, once a
// super-round:
//   - the owner of a super-round (the GPU whose window holds its pivot blocks) makes its pivot
//     rows final (finish_pivot_rows, on its whole window) and sends them to every other GPU, into
//     the same rows of their matrices;
//   - every other GPU then takes that super-round's phases 1 and 2 on its own rows only (the
//     column panels, finish_pivot_rows on its window, which leaves the pivot blocks out) and its
//     phase 3, as the owner does.
// Phase 3 reads the pivot rows outside the super-round's own columns as they end the
// super-round; the column panels read the pivot rows inside them (the square of the super-round's
// blocks) as each was right after its own step, before later steps of the super-round updated it.
// So the owner snapshots each pivot block's part of that square after its step, and sends the
// rows and then the square over them: every GPU reads exactly what the one-GPU round loop reads,
// and the results are the one-GPU results bit for bit (floats too). Each GPU runs the look-ahead
// of lookahead_rounds on its own two streams; the owner's sends go on its critical (aux) stream,
// whose later writes to those rows come after them. At the end the solve's GPU gathers the
// helpers' windows into its matrix.
template <class P>
struct SplitPart {
  int device = 0;
  Window w{};
  Job job{};  // its own matrix and leading dimension
  bool aligned = false;
  GemmMaps maps{};
  cudaStream_t main = nullptr, aux = nullptr;
  std::unique_ptr<OwnStream> own_main, own_aux;
  std::unique_ptr<OwnEvent> main_done, aux_done, sent, allocated;
  // From the stream-ordered pool (a cudaMalloc of a GiB and its free cost 7-8 ms a solve at
  // n = 16384: GPU_NOTES.md, fifty-fifth session), freed on the stream that used them last once
  // the solve's GPU has gathered the windows (enqueue_split), so the host never waits for them.
  // Other GPUs copy into a helper's matrix from their aux streams, after its allocation (the
  // event `allocated`).
  std::unique_ptr<AsyncBuffer> matrix, flag, square;
  SplitPart() = default;
  SplitPart(const SplitPart&) = delete;
  SplitPart& operator=(const SplitPart&) = delete;
  ~SplitPart() {
    if (!square && !flag && !matrix) return;  // never set up (an exception before its turn)
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess || cudaSetDevice(device) != cudaSuccess) prev = -1;
    square.reset();
    flag.reset();
    matrix.reset();
    if (prev >= 0) (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
  }
};

// Rows [row, row + rows) of an n-column matrix from one GPU's copy to another's, each at its own
// leading dimension, on `stream`: the n columns only, never the gaps between rows (a device
// array's gaps are its caller's).
template <class T>
void copy_rows_peer(T* dst, int64_t dst_ld, int dst_device, const T* src, int64_t src_ld,
                    int src_device, int64_t row, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0) return;
  cudaMemcpy3DPeerParms c{};
  c.srcPtr = make_cudaPitchedPtr(const_cast<T*>(src + row * src_ld), size_t(src_ld) * sizeof(T),
                                 size_t(cols) * sizeof(T), size_t(rows));
  c.srcDevice = src_device;
  c.dstPtr = make_cudaPitchedPtr(dst + row * dst_ld, size_t(dst_ld) * sizeof(T),
                                 size_t(cols) * sizeof(T), size_t(rows));
  c.dstDevice = dst_device;
  c.extent = make_cudaExtent(size_t(cols) * sizeof(T), size_t(rows), 1);
  APSP_CUDA_CHECK(cudaMemcpy3DPeerAsync(&c, stream));
}

// Device b reads and writes the allocations of device a's stream-ordered pool (the split's
// buffers: SplitPart). Peer access (cudaDeviceEnablePeerAccess) does not reach a pool's memory:
// without this, a copy between two pool buffers on different GPUs (the owner's snapshot of the
// square into a helper; over 3 GPUs or more, one helper's pivot rows into another's matrix)
// went through the host, DtoH then HtoD, at about 20 GB/s where NVLink gives 380 (GPU_NOTES.md,
// fifty-seventh session). Asked on every split, as a device's pool can be replaced
// (cudaDeviceSetMemPool). Where the driver refuses, the copies still work, through the host:
// the split goes on.
void grant_pool_access(int a, int b) {
  cudaMemPool_t pool = nullptr;
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = b;
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  cudaMemAccessDesc access{};
  access.location = where;
  access.flags = cudaMemAccessFlagsProtReadWrite;
  if (cudaDeviceGetMemPool(&pool, a) != cudaSuccess ||
      cudaMemPoolGetAccess(&flags, pool, &where) != cudaSuccess ||
      (flags != cudaMemAccessFlagsProtReadWrite &&
       cudaMemPoolSetAccess(pool, &access, 1) != cudaSuccess)) {
    (void)cudaGetLastError();
    if (std::getenv("APSP_CUDA_TRACE"))
      std::fprintf(stderr, "apsp cuda: cuda:%d cannot reach cuda:%d's memory pool: the split's "
                   "copies between them go through the host\n", b, a);
  }
}

// Peer access between every pair of `devices`, enabled once per pair, and to each other's
// stream-ordered pools; false where a pair cannot have it (the split then runs on the first
// device alone).
bool enable_peer_access(const std::vector<int>& devices) {
  static std::mutex m;
  static std::vector<std::pair<int, int>> enabled;
  std::lock_guard<std::mutex> lock(m);
  for (int a : devices)
    for (int b : devices) {
      if (a == b) continue;
      if (std::find(enabled.begin(), enabled.end(), std::make_pair(a, b)) == enabled.end()) {
        int can = 0;
        APSP_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
        if (!can) return false;
        DeviceGuard guard(a);
        const cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);
        if (err == cudaErrorPeerAccessAlreadyEnabled || err == cudaErrorTooManyPeers) {
          (void)cudaGetLastError();
          if (err == cudaErrorTooManyPeers) return false;
        } else {
          APSP_CUDA_CHECK(err);
        }
        enabled.emplace_back(a, b);
      }
      grant_pool_access(a, b);
    }
  return true;
}

// The split from this n (below it the solve's GPU alone). Two H200s, the solve alone against one
// GPU (benchmarks/bench_split.py; results/split_h200x2_s56a_summary.md): int32 6144 1.38x, 8192
// 1.68x, 10000 1.80x, 16384 1.90x, 24576 1.92x (91.1% of twice one GPU's ceiling); float32 the
// same within 0.02. Where the gain falls off with n was not profiled (likely: each super-round's
// chain, its pivot rows and then their send, hidden behind less phase-3 work, and the fixed costs
// of each helper's streams and its window's copies in and out); n < 6144 was not measured split.
constexpr int64_t kSplitMinN = 6144;
// GPUs past what pays at this n are left out: each GPU of a split gets at least this many rows
// (half the threshold, where two GPUs start to pay). Four H200s, before the pool grant
// (results/split_h200x4_s57a_summary.md), against two (s56a): int32 6144 0.78x against 1.38x one
// GPU, 8192 1.02x against 1.68x, 10000 1.42x against 1.80x, 16384 1.89x against 1.90x, 24576
// 2.97x against 1.92x: each super-round's chain paces the split once phase 3 is spread too thin.
constexpr int64_t kSplitMinRows = kSplitMinN / 2;

// Whether APSP_CUDA_TILES forces a super-round plan (tests: the split at any n).
bool forced_super_rounds() {
  const char* f = std::getenv("APSP_CUDA_TILES");
  return f && std::any_of(std::begin(kSuperRoundPlans), std::end(kSuperRoundPlans),
                          [&](Tiles t) { return std::strcmp(f, tiles_name(t)) == 0; });
}

template <class P, class AfterRound>
void enqueue_split(const Job& job, int device, cudaStream_t stream, AfterRound&& after_round) {
  using T = typename P::type;
  constexpr int K = P::K;
  constexpr int64_t step = P::depth / K;
  static_assert(step > 1, "the split runs the super-round plans");
  const std::vector<int>& helpers = *job.split;
  const int64_t n = job.n, nb = (n + K - 1) / K;
  const int64_t supers = (nb + step - 1) / step;
  const int count = int(std::min<int64_t>(int64_t(helpers.size()) + 1, supers));
  const int64_t helper_ld = working_ld(n, int(sizeof(T)));
  auto kwidth = [&](int64_t r) { return int(std::min<int64_t>(K, n - r * K)); };
  auto blocks_in = [&](int64_t r0) { return int(std::min<int64_t>(step, nb - r0)); };
  auto kw_of = [&](int64_t r0) { return int(std::min<int64_t>(blocks_in(r0) * K, n - r0 * K)); };
  auto rows_of = [&](int64_t b0, int64_t b1) {  // elements rows of tile rows [b0, b1)
    return std::pair<int64_t, int64_t>(b0 * K, std::min(n, b1 * K));
  };

  std::vector<SplitPart<P>> parts(static_cast<size_t>(count));
  // Every part's streams finish before its buffers go, also after an exception between
  // launches (a progress callback that raised): no GPU is left writing another's memory.
  struct FinishAll {
    std::vector<SplitPart<P>>& parts;
    ~FinishAll() {
      if (std::uncaught_exceptions() == 0) return;
      for (auto& g : parts) {
        if (g.aux) (void)cudaStreamSynchronize(g.aux);
        if (g.main) (void)cudaStreamSynchronize(g.main);
      }
      (void)cudaGetLastError();
    }
  } finish_all{parts};
  std::unique_ptr<OwnEvent> ready, gathered;  // on the solve's GPU
  {
    DeviceGuard guard(device);
    ready = std::make_unique<OwnEvent>();  // the rules (and any pack) done
    gathered = std::make_unique<OwnEvent>();
    APSP_CUDA_CHECK(cudaEventRecord(ready->e, stream));
  }
  const T* d0 = static_cast<const T*>(job.d);
  auto pool_buffer = [](size_t bytes, cudaStream_t s, const char* what) {
    auto buffer = std::make_unique<AsyncBuffer>(nullptr, s);
    check_allocation(malloc_async(&buffer->ptr, bytes, s), bytes, what);
    return buffer;
  };
  for (int i = 0; i < count; ++i) {
    SplitPart<P>& g = parts[size_t(i)];
    g.device = i == 0 ? device : helpers[size_t(i - 1)];
    g.w = Window{std::min(nb, i * supers / count * step), std::min(nb, (i + 1) * supers / count * step),
                 0, nb};
    DeviceGuard guard(g.device);
    prepare_kernels<P>(g.device);
    g.job = job;
    g.job.split = nullptr;
    set_sm90_features(g.job, sm90(g.device));
    g.own_aux = std::make_unique<OwnStream>(Lookahead::highest_priority());
    g.aux = g.own_aux->s;
    g.main_done = std::make_unique<OwnEvent>();
    g.aux_done = std::make_unique<OwnEvent>();
    g.sent = std::make_unique<OwnEvent>();
    if (i == 0) {
      g.main = stream;
    } else {  // its own copy of the matrix, its window's rows from the solve's GPU
      g.own_main = std::make_unique<OwnStream>();
      g.main = g.own_main->s;
      g.matrix = pool_buffer(size_t(n) * size_t(helper_ld) * sizeof(T), g.main,
                             "the copy of the matrix a split solve puts here");
      g.job.d = g.matrix->ptr;
      g.job.ld = helper_ld;
      g.allocated = std::make_unique<OwnEvent>();
      record_event(g.allocated->e, g.main);
      wait_event(g.main, ready->e);
      const auto [a, b] = rows_of(g.w.w0, g.w.w1);
      copy_rows_peer(static_cast<T*>(g.job.d), helper_ld, g.device, d0, job.ld, device, a, b - a,
                     n, g.main);
      if (job.below_zero) {  // the min3 flag the rules set, read by every min-plus launch
        g.flag = pool_buffer(sizeof(unsigned), g.main, "the split's min3 flag");
        g.job.below_zero = static_cast<unsigned*>(g.flag->ptr);
        APSP_CUDA_CHECK(cudaMemcpyPeerAsync(g.job.below_zero, g.device, job.below_zero, device,
                                            sizeof(unsigned), g.main));
      }
    }
    // The snapshot of a super-round's square of pivot blocks, as each block was after its step
    // (written and read on the aux stream only).
    g.square = pool_buffer(size_t(P::depth) * P::depth * sizeof(T), g.aux,
                           "the split's snapshot of pivot blocks");
    g.aligned = rows_aligned<T>(g.job.d, g.job.ld);
    g.maps = gemm_maps<P>(g.job, g.aligned);
    record_event(g.main_done->e, g.main);  // fork: aux starts after the copy in
    wait_event(g.aux, g.main_done->e);
  }
  // Every GPU sends into the others' matrices from its aux stream: after their allocation.
  for (auto& a : parts) {
    DeviceGuard guard(a.device);
    for (auto& b : parts)
      if (&a != &b && b.allocated) wait_event(a.aux, b.allocated->e);
  }
  if (std::getenv("APSP_CUDA_TRACE")) {
    std::string where;
    for (const auto& g : parts) {
      const auto [a, b] = rows_of(g.w.w0, g.w.w1);
      where += (where.empty() ? "" : ", ") + std::string("rows ") + std::to_string(a) + ".." +
               std::to_string(b - 1) + " on cuda:" + std::to_string(g.device);
    }
    std::fprintf(stderr, "apsp cuda: rounds split over %d GPUs: %s, n = %lld\n", count,
                 where.c_str(), static_cast<long long>(n));
  }
  auto owner_of = [&](int64_t r0) -> SplitPart<P>& {
    for (auto& g : parts)
      if (g.w.has(r0)) return g;
    throw CudaError("internal error: a super-round without an owner");
  };

  auto gemm = [&](SplitPart<P>& g, cudaStream_t s, const Launch& l, int64_t k0, int kw) {
    launch_gemm<P>(g.job, s, false, l, k0, kw, g.aligned, g.maps);
  };
  // The rows and columns of super-round r0 final on g's window, on g's aux stream. The owner
  // snapshots each pivot block's part of the square after its step and then sends the pivot rows
  // and the square to every other GPU; the others wait for them first.
  auto round_panels = [&](SplitPart<P>& g, int64_t r0) {
    DeviceGuard guard(g.device);
    T* d = static_cast<T*>(g.job.d);
    const int64_t ld = g.job.ld, k0 = r0 * K;
    const int kw = kw_of(r0);
    SplitPart<P>& owner = owner_of(r0);
    const bool owns = &owner == &g;
    if (!owns) wait_event(g.aux, owner.sent->e);  // the pivot rows and the square are in
    T* square = static_cast<T*>(g.square->ptr);
    finish_pivot_rows(
        nb, r0, blocks_in(r0), g.w,
        [&](int64_t r) {
          if (owns)
            launch("pivot_kernel", P::pivot, 1, 256, 0, g.aux, false, d, ld, nullptr, 0, nullptr,
                   0, r * K, kwidth(r));
          gemm(g, g.aux, panels(nb, r, g.w), r * K, kwidth(r));
          if (owns)
            APSP_CUDA_CHECK(cudaMemcpy2DAsync(square + (r - r0) * K * P::depth,
                                              P::depth * sizeof(T), d + r * K * ld + k0,
                                              size_t(ld) * sizeof(T),
                                              size_t(kw) * sizeof(T), size_t(kwidth(r)),
                                              cudaMemcpyDeviceToDevice, g.aux));
        },
        [&](const Launch& l, int64_t r) { gemm(g, g.aux, l, r * K, kwidth(r)); });
    if (!owns) return;
    for (auto& other : parts) {
      if (&other == &g) continue;
      T* od = static_cast<T*>(other.job.d);
      const int64_t old = other.job.ld;
      copy_rows_peer(od, old, other.device, d, ld, g.device, k0, kw, n, g.aux);
      // then the square over those rows' own columns
      copy_rows_peer(od + k0 * old + k0, old, other.device, square, P::depth, g.device, 0, kw, kw,
                     g.aux);
    }
    record_event(g.sent->e, g.aux);
  };
  // Phase 3 of super-round r0 on the rows and columns of the next one (look-ahead, aux stream).
  auto band_of = [&](SplitPart<P>& g, int64_t r0) {
    DeviceGuard guard(g.device);
    const int64_t r1 = r0 + step;
    gemm(g, g.aux, band(nb, r1, blocks_in(r1), r0, blocks_in(r0), g.w), r0 * K, kw_of(r0));
  };
  // Phase 3 of super-round r0 on every other tile of g's window (main stream).
  auto rest_of = [&](SplitPart<P>& g, int64_t r0, bool next) {
    DeviceGuard guard(g.device);
    const int ec = blocks_in(r0) + (next ? blocks_in(r0 + step) : 0);
    gemm(g, g.main, rest(nb, r0, ec, g.w), r0 * K, kw_of(r0));
  };
  // The owner of a super-round enqueues its pivot work first, so that the others' waits name
  // its send.
  auto owner_first = [&](int64_t r0) {
    std::vector<SplitPart<P>*> order{&owner_of(r0)};
    for (auto& g : parts)
      if (&g != order[0]) order.push_back(&g);
    return order;
  };
  for (SplitPart<P>* g : owner_first(0)) {
    round_panels(*g, 0);
    DeviceGuard guard(g->device);
    record_event(g->aux_done->e, g->aux);
  }
  for (int64_t r0 = 0; r0 < nb; r0 += step) {
    const bool next = r0 + step < nb;
    for (auto& g : parts) {
      DeviceGuard guard(g.device);
      wait_event(g.main, g.aux_done->e);  // rows/columns of r0 final
    }
    if (next)
      for (SplitPart<P>* g : owner_first(r0 + step)) {
        {
          DeviceGuard guard(g->device);
          wait_event(g->aux, g->main_done->e);  // main's last part done
        }
        band_of(*g, r0);
        round_panels(*g, r0 + step);
        DeviceGuard guard(g->device);
        record_event(g->aux_done->e, g->aux);
      }
    for (auto& g : parts) {
      rest_of(g, r0, next);
      DeviceGuard guard(g.device);
      if (next) record_event(g.main_done->e, g.main);
    }
    for (int64_t r = r0; r < r0 + blocks_in(r0); ++r) after_round(r);
  }
  // The helpers' windows back into the solve's matrix, on the solve's stream. Every copy into or
  // out of a helper's buffers is done by then (its main stream's last work waited for all of
  // them), so each helper frees its matrix and flag on its main stream after the gather, and every
  // GPU its square on its aux stream: the host does not wait (a device array's solve stays
  // asynchronous).
  T* d = static_cast<T*>(job.d);
  for (size_t i = 1; i < parts.size(); ++i) {
    SplitPart<P>& g = parts[i];
    {
      DeviceGuard guard(g.device);
      record_event(g.main_done->e, g.main);
    }
    DeviceGuard guard(device);  // `stream` may be the legacy default stream: the solve's GPU's
    wait_event(stream, g.main_done->e);
    const auto [a, b] = rows_of(g.w.w0, g.w.w1);
    copy_rows_peer(d, job.ld, device, static_cast<const T*>(g.job.d), g.job.ld, g.device, a, b - a,
                   n, stream);
  }
  {
    DeviceGuard guard(device);
    record_event(gathered->e, stream);
  }
  for (auto& g : parts) {
    DeviceGuard guard(g.device);
    wait_event(g.main, gathered->e);
    wait_event(g.aux, gathered->e);
  }
}

// progress=True without draining the GPU's queue: after every `every`-th round (about 32 reports
// a solve) an event is recorded, and a round is reported once its event has completed. The host
// waits only on the event kLag reports behind the newest, so the GPU keeps that much work queued
// (a full sync per report cost 3% at n = 10000 with super-rounds: each drained the look-ahead).
class Progress {
 public:
  Progress(const Options& opt, cudaStream_t stream, int64_t nb)
      : opt_(opt), stream_(stream), nb_(nb), every_(std::max<int64_t>(1, (nb + 31) / 32)) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() {
    for (const auto& p : pending_) (void)cudaEventDestroy(p.first);
  }
  void enqueued(int64_t r) {  // round r is on the stream
    if ((r + 1) % every_ != 0 && r + 1 != nb_) return;
    cudaEvent_t e = nullptr;
    APSP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    pending_.emplace_back(e, r + 1);
    APSP_CUDA_CHECK(cudaEventRecord(e, stream_));
    while (pending_.size() > kLag) report_oldest();
  }
  void finish() {
    while (!pending_.empty()) report_oldest();
  }

 private:
  static constexpr size_t kLag = 3;
  void report_oldest() {
    const auto [e, done] = pending_.front();
    APSP_CUDA_CHECK(cudaEventSynchronize(e));
    (void)cudaEventDestroy(e);
    pending_.pop_front();
    opt_.progress(opt_.progress_ctx, done, nb_);
  }
  const Options& opt_;
  cudaStream_t stream_;
  int64_t nb_, every_;
  std::deque<std::pair<cudaEvent_t, int64_t>> pending_;
};

// Whether the environment variable `name` is "0" (a feature switched off: benchmarks).
bool switched_off(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "0";
}

// Whether n allows the narrow plan: every path of fewer than n edges below its INF once the
// weights fit (narrow_fits), each row within NarrowRows; APSP_CUDA_NARROW=0 leaves it out
// (benchmarks: both plans on the same graph; tests).
bool narrow_size_fits(int64_t n) {
  return n - 1 < int64_t(NarrowPair::inf) && n <= NarrowRows::max_n &&
         !switched_off("APSP_CUDA_NARROW");
}
static_assert(NarrowPair::inf - 1 == kNarrowMaxLength, "contract.hpp's rule is this plan's");

// The hub bound (contract.hpp; narrow.cuh): where the narrow plan's weights fit all but the bound
// (n - 1) * max w, whether every finite distance still fits, from these n (its passes read the
// matrix up to kHubPasses + 1 times where it fails).
constexpr int64_t kHubMinN4 = 4096, kHubMinN8 = 1024;
int64_t hub_min_n(DType dtype) { return dtype_size(dtype) == 8 ? kHubMinN8 : kHubMinN4; }
// Two reads of the verdict: after the first pass (where most graphs that fit are shown to), and
// after the rest.
template <class T>
bool hub_bound_fits(const T* d, int64_t n, int64_t ld, bool directed, cudaStream_t stream) {
  AsyncBuffer buf((size_t(2) * size_t(n) + 4) * sizeof(uint32_t), stream);
  uint32_t* x = static_cast<uint32_t*>(buf.ptr);
  uint32_t* y = directed ? x + n : x;
  unsigned* state = x + 2 * n;
  hub_init_kernel<T><<<unsigned((n + 255) / 256), 256, 0, stream>>>(d, n, ld, directed, x, y,
                                                                      state);
  APSP_CUDA_CHECK_LAUNCH("hub_init_kernel");
  const int rows = HubRelax::rows(n);
  const dim3 grid(unsigned((n + HubRelax::threads - 1) / HubRelax::threads),
                  unsigned((n + rows - 1) / rows));
  unsigned verdict[3] = {kHubOpen, 0, 0};
  auto read = [&] {
    APSP_CUDA_CHECK(cudaMemcpyAsync(verdict, state, sizeof verdict, cudaMemcpyDeviceToHost,
                                    stream));
    APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  for (int pass = 0; pass <= kHubPasses; ++pass) {  // pass 0: the hub's own row and column
    if (pass > 0) {
      hub_relax_kernel<T><<<grid, HubRelax::threads, 0, stream>>>(d, n, ld, rows, x, y,
                                                                    state);
      APSP_CUDA_CHECK_LAUNCH("hub_relax_kernel");
    }
    hub_check_kernel<<<1, 1024, 0, stream>>>(x, y, n, pass == kHubPasses, state);
    APSP_CUDA_CHECK_LAUNCH("hub_check_kernel");
    if (pass == 1) {
      read();
      if (verdict[0] != kHubOpen) break;
    }
  }
  if (verdict[0] == kHubOpen) read();
  if (std::getenv("APSP_CUDA_TRACE"))
    std::fprintf(stderr, "apsp cuda: hub bound %s after %u passes, n = %lld\n",
                 verdict[0] == kHubFits ? "fits" : "refused", verdict[2] - 1,
                 static_cast<long long>(n));
  return verdict[0] == kHubFits;
}

// ---- CUDA graphs for small n: the whole round loop replayed with one launch ------------------------
// Above kGraphMaxN launch gaps are a small share of a round: graphs up to n = 8192 measured no
// faster (H100, int32; GPU_NOTES.md, thirty-third session). The graph is built node by node
// (graph.cuh), never by stream capture, so another thread's device-wide sync cannot meet it.
constexpr int64_t kGraphMaxN = 4096;
// At most kGraphCacheSize graphs, of which kGraphBuffersPerShape of one round loop on buffers at
// different addresses; another buffer of that round loop takes the least recently used one's
// graph, its kernel arguments set anew (graph.cuh), which costs less than recording and
// instantiating one (a loop that keeps every result of a new buffer; GPU_NOTES.md, forty-sixth
// session), while that many buffers in turn keep a graph each.
constexpr size_t kGraphCacheSize = 32, kGraphBuffersPerShape = 4;

struct GraphKey {
  int device;
  void* d;
  int64_t n, ld;
  int32_t* p;
  int64_t pld;
  int dtype, tiles;  // the dtype of the kernels in the graph (a float matrix may run its twin's)
  bool min3;         // the kernels' min-plus step (Plan)
  bool pdl;          // Job::pdl
  bool tma;          // Job::tma (the graph's min-plus launches carry the TMA descriptors or not)
  bool aligned;      // rows_aligned of d and ld (the kernels' 16-byte copies and TMA)
  int priority;      // the launch stream's: the main stream's nodes keep it (record_rounds)
  // The same round loop, on any buffer.
  bool same_round_loop(const GraphKey& o) const {
    return std::tie(device, n, ld, pld, dtype, tiles, min3, pdl, tma, aligned, priority) ==
           std::tie(o.device, o.n, o.ld, o.pld, o.dtype, o.tiles, o.min3, o.pdl, o.tma,
                    o.aligned, o.priority);
  }
  bool operator==(const GraphKey& o) const {
    return d == o.d && p == o.p && same_round_loop(o);
  }
};
struct GraphEntry {
  GraphKey key;
  RoundsGraph graph;
};
std::mutex graph_mutex;
std::list<GraphEntry>& graph_cache() {  // most recently used first; never destroyed at exit
  static auto* c = new std::list<GraphEntry>();
  return *c;
}

void trace_graph(const char* what, size_t kernels, int64_t n) {
  if (std::getenv("APSP_CUDA_TRACE"))
    std::fprintf(stderr, "apsp cuda: rounds graph %s, %zu kernels, n = %lld\n", what, kernels,
                 static_cast<long long>(n));
}

// The round loop as a graph (graph.cuh), its main stream's nodes at the priority of `stream`.
template <class P>
RoundsGraph record_rounds(const Job& job, cudaStream_t stream) {
  GraphRecorder recorder;
  enqueue_rounds<P>(job, stream, [](int64_t) {});
  trace_graph("recorded", recorder.kernels(), job.n);
  return recorder.instantiate();
}

// Launches the round loop as its cached graph on `stream`: the graph of this buffer; else, where
// kGraphBuffersPerShape buffers of the same round loop have one, the least recently used of
// them with its arguments set for this buffer; else one recorded now. Graphs are updated and
// launched under the cache's lock, so that no other thread's update or eviction changes one
// between its lookup and its launch. An update affects only later launches: one still running
// keeps its arguments.
template <class P>
void launch_rounds_graph(const GraphKey& key, const Job& job, cudaStream_t stream) {
  auto& c = graph_cache();
  auto launch = [&](std::list<GraphEntry>::iterator it) {  // as the most recently used
    c.splice(c.begin(), c, it);
    APSP_CUDA_CHECK(cudaGraphLaunch(c.front().graph.exec, stream));
  };
  {
    std::lock_guard<std::mutex> lock(graph_mutex);
    size_t same = 0;
    auto oldest_same = c.end();
    for (auto it = c.begin(); it != c.end(); ++it) {
      if (it->key == key) return launch(it);
      if (it->key.same_round_loop(key)) {
        ++same;
        oldest_same = it;
      }
    }
    if (same >= kGraphBuffersPerShape) {
      // A graph updated in part would replay a mix of two buffers' arguments: it is dropped
      // where the update fails or throws, and one is recorded below.
      auto drop = [&]() {
        oldest_same->graph.destroy();
        c.erase(oldest_same);
      };
      bool updated = false;
      try {
        GraphRecorder updater(oldest_same->graph);
        enqueue_rounds<P>(job, stream, [](int64_t) {});
        updated = updater.updated();
      } catch (...) {
        drop();
        throw;
      }
      if (!updated) {
        drop();
      } else {
        trace_graph("updated", oldest_same->graph.nodes.size(), job.n);
        oldest_same->key = key;
        return launch(oldest_same);
      }
    }
  }
  RoundsGraph graph = record_rounds<P>(job, stream);  // outside the lock: it takes milliseconds
  std::lock_guard<std::mutex> lock(graph_mutex);
  for (auto it = c.begin(); it != c.end(); ++it)
    if (it->key == key) {  // another thread built the same one meanwhile: keep one
      graph.destroy();
      return launch(it);
    }
  c.push_front({key, graph});
  if (c.size() > kGraphCacheSize) {
    // An evicted graph may still be running on some stream; destroying it is legal (the launch
    // completes), so no wait is needed.
    c.back().graph.destroy();
    c.pop_back();
  }
  launch(c.begin());
}

// ---- one solve -----------------------------------------------------------------------------------
// Scratch of one solve: hop counts (with predecessors), statistics and the negative-cycle list
// (only for the checks and the predecessor plan choice: a solve without either allocates and
// clears nothing here).
struct SolveScratch {
  std::unique_ptr<AsyncBuffer> hops, stats;
  std::unique_ptr<AsyncBuffer> rest;  // argmin plan, 8-byte types: the input rows the hops lack
  std::unique_ptr<AsyncBuffer> flag;  // min3 chosen on the device: Job::below_zero
  DeviceStats* st = nullptr;
  int64_t* negative = nullptr;
};

// The directed rules without predecessors on rows [row0, row1) of a matrix whose rows start on
// 16 bytes (kernels.cuh: rules_rows_kernel).
template <class T>
void enqueue_rules_rows(T* d, int64_t n, int64_t ld, int64_t row0, int64_t row1, bool unweighted,
                        unsigned* below_zero, cudaStream_t stream) {
  rules_rows_kernel<T><<<rules_rows_grid(n, row1 - row0, int(sizeof(T))), kRulesRowsThreads, 0,
                         stream>>>(d, n, ld, row0, row1, unweighted, below_zero);
  APSP_CUDA_CHECK_LAUNCH("rules_rows_kernel");
}

// The dtype code of plan P's kernels (a graph's key): its type's, or -1 for the narrow plan's
// 16-bit lengths (whichever integer matrix they came from: the graph holds only the rounds).
template <class P>
constexpr int kernels_dtype() {
  if constexpr (is_narrow<P>::value)
    return -1;
  else
    return int(Semiring<typename P::type>::dtype);
}

// The rounds of one plan, between the statistics and the negative-cycle readout. V is the
// matrix's dtype: the plan's own, or a float dtype whose integer weights run a plan of its
// integer twin on the same buffer (a round loop or the tagged plan: the pack after the rules
// converts, the unpack before finalize converts back).
template <class P, class V = typename P::type>
void run_plan(const Job& job, const Options& opt, int device, cudaStream_t stream, Tiles tiles,
              const SolveScratch& sc) {
  using T = typename P::type;
  static_assert(std::is_same_v<T, V> || !(P::small || P::cluster),
                "the one-launch plans run on the matrix's own dtype");
  constexpr bool narrow = is_narrow<P>::value;  // in place to 16-bit lengths and back
  constexpr bool packs = !narrow && (P::tagged || !std::is_same_v<T, V>);
  const int64_t n = job.n, ld = job.ld;
  prepare_kernels<P>(device);
  auto report_at_end = [&](int64_t rounds) {  // the one-launch plans: all rounds at once
    if (!opt.progress) return;
    APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
    opt.progress(opt.progress_ctx, rounds, rounds);
  };
  if constexpr (P::small) {
    enqueue_small_solve(static_cast<T*>(job.d), int(n), ld, opt.directed, opt.unweighted, sc.st,
                        sc.negative, 1, 0, stream);
    report_at_end(1);
  } else if constexpr (P::cluster) {
    const int S = int((n + ClusterShape::W - 1) / ClusterShape::W);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config<T>(S, stream, attr);
    APSP_CUDA_CHECK(cudaLaunchKernelEx(&cfg, cluster_solve_kernel<T>, static_cast<T*>(job.d),
                                       int(n), ld, S, opt.directed, opt.unweighted, sc.st,
                                       sc.negative, int64_t(0)));
    report_at_end((n + ClusterShape::P - 1) / ClusterShape::P);
  } else {
    const Elementwise ew = elementwise(n);
    V* d = static_cast<V*>(job.d);
    std::unique_ptr<AsyncBuffer> counters;
    if constexpr (is_flow<P>::value) counters = flow_counters(n, stream);
    if (opt.directed && !job.p && !job.h && rows_aligned<V>(d, ld)) {
      enqueue_rules_rows(d, n, ld, 0, n, opt.unweighted, job.below_zero, stream);
    } else {
      rules_kernel<V><<<ew.grid, ew.block, 0, stream>>>(d, n, ld, job.p, job.pld, job.h,
                                                     opt.directed, opt.unweighted, job.below_zero);
      APSP_CUDA_CHECK_LAUNCH("rules_kernel");
    }
    if constexpr (packs) {
      pack_kernel<V, T, P::tagged><<<ew.grid, ew.block, 0, stream>>>(d, n, ld, job.hop_scale);
      APSP_CUDA_CHECK_LAUNCH("pack_kernel");
    }
    Job rounds = job;  // the narrow plan's rounds: ld in 16-bit lengths (the same row pitch)
    if constexpr (narrow) {
      narrow_rows_kernel<V><<<unsigned(n), NarrowRows::threads, 0, stream>>>(d, n, ld);
      APSP_CUDA_CHECK_LAUNCH("narrow_rows_kernel");
      rounds.ld = ld * int64_t(sizeof(V) / sizeof(T));
    }

    // Back to V's values: after the rounds, and after an exception between them (a progress
    // callback that raised, Ctrl-C), so that a matrix solved in place then holds path lengths of
    // its own dtype (an upper bound of each distance), not 16-bit pairs or its twin's bits.
    auto back_to_own_dtype = [&] {
      if constexpr (narrow) {
        widen_rows_kernel<V><<<unsigned(n), NarrowRows::threads, 0, stream>>>(d, n, ld);
        APSP_CUDA_CHECK_LAUNCH("widen_rows_kernel");
      }
      if constexpr (packs) {
        unpack_kernel<T, V, P::tagged><<<ew.grid, ew.block, 0, stream>>>(d, n, ld,
                                                                          job.hop_scale, sc.st);
        APSP_CUDA_CHECK_LAUNCH("unpack_kernel");
      }
    };
    const int64_t nb = (n + P::K - 1) / P::K;
    // The round loop on this GPU, or split over more (Job::split: solve_on_stream's choice).
    auto enqueue_all_rounds = [&](auto&& after) {
      if constexpr (takes_parts<P>::value)
        if (rounds.split) return enqueue_split<P>(rounds, device, stream, after);
      enqueue_rounds<P>(rounds, stream, after);
    };
    try {
      if constexpr (is_flow<P>::value) {
        enqueue_flow<T>(job, device, stream, *counters, sc.st, sc.negative);  // finalize included
        report_at_end(nb);
      } else if (opt.progress) {
        Progress progress(opt, stream, nb);
        enqueue_all_rounds([&](int64_t r) { progress.enqueued(r); });
        progress.finish();
      } else if (n <= kGraphMaxN && !P::pred && !job.split && !switched_off("APSP_CUDA_GRAPHS")) {
        // pred solves: the hop buffer is new each call. APSP_CUDA_GRAPHS=0: every kernel
        // launched on its own (diagnostics).
        int priority = 0;
        APSP_CUDA_CHECK(cudaStreamGetPriority(stream, &priority));
        const GraphKey key{device,   job.d,      n,          rounds.ld, job.p,   job.pld,
                           kernels_dtype<P>(), int(tiles), P::min3, job.pdl, job.tma,
                           rows_aligned<T>(job.d, rounds.ld), priority};
        launch_rounds_graph<P>(key, rounds, stream);
      } else {
        enqueue_all_rounds([](int64_t) {});
      }
    } catch (...) {
      back_to_own_dtype();  // a failed launch here raises its own error instead
      throw;
    }
    back_to_own_dtype();
    if constexpr (P::tagged || P::argmin) {  // phase 3's "as in pivot row k" entries
      constexpr bool can_round = P::argmin && std::is_floating_point_v<T>;
      const auto resolve =
          can_round && job.check_closer ? resolve_kernel<V, true> : resolve_kernel<V, false>;
      resolve<<<resolve_grid(n), dim3(32, 8), 0, stream>>>(d, n, ld, job.p, job.pld, sc.st);
      APSP_CUDA_CHECK_LAUNCH("resolve_kernel");
    }
    // The flow kernel finalized its values. Every other plan's, on V again after any unpack,
    // are finalized here (a negative diagonal is listed).
    if constexpr (!is_flow<P>::value) {
      finalize_kernel<V><<<ew.grid, ew.block, 0, stream>>>(d, n, ld, job.p, job.pld, sc.st,
                                                           sc.negative);
      APSP_CUDA_CHECK_LAUNCH("finalize_kernel");
    }
  }
}

// The argmin plan (positive weights). Where its sums are exact (`exact`: integer weights, and
// every path length below the integer type's INF / 2, or for floats short enough that the sum of
// two is exact: solve_on_stream; a float32 matrix then runs its int32 twin's plan on the same
// buffer, packed and unpacked by run_plan), every chain of predecessors strictly shortens: no
// backup, no check. Otherwise (float rounding) the input waits in the hop buffer (n x n x 4 bytes, unused by
// this plan; for 8-byte types its first n / 2 rows, the rest in sc.rest); run_plan resolves phase
// 3's "as in pivot row k" entries and checks that every predecessor is strictly closer to its
// source than its vertex (resolve_kernel); where one is not, the input is put back and solved
// again on the pred32 plan, whose (length, hops) step needs no check.
template <class T>
int64_t argmin_rows_in_hops(int64_t n) {
  return sizeof(T) == 4 ? n : n / 2;
}
// The input to the float argmin plan's backup (the hop buffer and sc.rest), or back from it.
template <class T>
void argmin_backup(const Job& job, const SolveScratch& sc, cudaStream_t stream, bool restore) {
  const int64_t n = job.n, ld = job.ld, h = argmin_rows_in_hops<T>(n);
  const size_t row = size_t(n) * sizeof(T), pitch = size_t(ld) * sizeof(T);
  T* d = static_cast<T*>(job.d);
  auto rows = [&](T* m, void* keep, int64_t count) {
    if (count == 0) return;
    APSP_CUDA_CHECK(restore ? cudaMemcpy2DAsync(m, pitch, keep, row, row, size_t(count),
                                                cudaMemcpyDeviceToDevice, stream)
                            : cudaMemcpy2DAsync(keep, row, m, pitch, row, size_t(count),
                                                cudaMemcpyDeviceToDevice, stream));
  };
  rows(d, job.h, h);
  if (h < n) rows(d + h * ld, sc.rest->ptr, n - h);
}
template <class T>
void solve_argmin(const Job& job, const Options& opt, int device, cudaStream_t stream,
                  const SolveScratch& sc, bool exact) {
  Job fast = job;
  fast.h = nullptr;  // no hop counts: strict improvements
  if constexpr (std::is_same_v<T, float>) {
    if (exact) {  // on the int32 twin
      run_plan<Plan<int32_t, Tiles::argmin>, float>(fast, opt, device, stream, Tiles::argmin, sc);
      return;
    }
  }
  fast.check_closer = std::is_floating_point_v<T> && !exact;
  if (fast.check_closer) argmin_backup<T>(job, sc, stream, false);
  run_plan<Plan<T, Tiles::argmin>>(fast, opt, device, stream, Tiles::argmin, sc);
  if constexpr (std::is_floating_point_v<T>) {
    if (!fast.check_closer) return;
    unsigned long long not_closer = 0;
    APSP_CUDA_CHECK(cudaMemcpyAsync(&not_closer, &sc.st->not_closer, sizeof(not_closer),
                                    cudaMemcpyDeviceToHost, stream));
    APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!not_closer) return;
    if (std::getenv("APSP_CUDA_TRACE"))
      std::fprintf(stderr, "apsp cuda: argmin predecessors not strictly closer (float rounding): "
                           "solved again on pred32\n");
    argmin_backup<T>(job, sc, stream, true);
    if (sc.negative)  // finalize counts negative diagonals again (none: positive weights)
      APSP_CUDA_CHECK(
          cudaMemsetAsync(&sc.st->negative_count, 0, sizeof(unsigned long long), stream));
    run_plan<Plan<T, Tiles::pred32>>(job, opt, device, stream, Tiles::pred32, sc);
  }
}

// The sm_90 features of a job's launches, on an sm_90 device unless switched off (benchmarks:
// both ways on the same graph; tests): programmatic dependent launch in the round loop and the
// flow plan (APSP_CUDA_PDL=0 launches without it), and TMA copies of the min-plus kernels'
// interior tiles, round loops and predecessor plans (APSP_CUDA_TMA=0 keeps cp.async).
void set_sm90_features(Job& job, bool sm90_device) {
  job.pdl = sm90_device && !switched_off("APSP_CUDA_PDL");
  job.tma = sm90_device && !switched_off("APSP_CUDA_TMA");
}

// count DeviceStats (one a graph of a batch) to their start: first_nan and first_neg_inf "none"
// (all ones), every later field 0.
void reset_stats(DeviceStats* st, int64_t count, cudaStream_t stream) {
  constexpr size_t ones = offsetof(DeviceStats, max_abs_float);
  APSP_CUDA_CHECK(cudaMemset2DAsync(st, sizeof(DeviceStats), 0xff, ones, size_t(count), stream));
  APSP_CUDA_CHECK(cudaMemset2DAsync(&st->max_abs_float, sizeof(DeviceStats), 0,
                                    sizeof(DeviceStats) - ones, size_t(count), stream));
}

// The statistics buffer (DeviceStats, then room for n vertices with a negative diagonal where
// check_negative_cycles is on), reset, into sc.
void init_stats(SolveScratch& sc, const Options& opt, int64_t n, cudaStream_t stream) {
  const size_t neg_bytes = opt.check_negative_cycles ? size_t(n) * sizeof(int64_t) : 0;
  sc.stats = std::make_unique<AsyncBuffer>(sizeof(DeviceStats) + neg_bytes, stream);
  sc.st = static_cast<DeviceStats*>(sc.stats->ptr);
  if (opt.check_negative_cycles)
    sc.negative = reinterpret_cast<int64_t*>(static_cast<char*>(sc.stats->ptr) +
                                             sizeof(DeviceStats));
  reset_stats(sc.st, 1, stream);
}

// The input statistics of rows [row0, row1) into st (a few blocks: the grid is kept small).
template <class T>
void enqueue_scan(const T* d, int64_t n, int64_t ld, int64_t row0, int64_t row1, DeviceStats* st,
                  cudaStream_t stream) {
  const dim3 block(256), grid(unsigned(std::min<int64_t>((n + 255) / 256, 4)),
                              unsigned(std::min<int64_t>(row1 - row0, 256)));
  scan_kernel<T><<<grid, block, 0, stream>>>(d, n, ld, row0, row1, st);
  APSP_CUDA_CHECK_LAUNCH("scan_kernel");
}

// The scanned statistics on the host (read_stats: one sync), as the input checks and the plan
// choices read them: InputStats (its `negative` and `fractional` too), and whether every
// off-diagonal weight is above zero.
struct ScannedStats {
  InputStats input;
  bool positive;
};
ScannedStats to_input_stats(const DeviceStats& h, const Options& opt, int64_t n) {
  ScannedStats r{};
  InputStats& s = r.input;
  s.first_nan = h.first_nan == ~0ull ? -1 : int64_t(h.first_nan);
  s.first_neg_inf = h.first_neg_inf == ~0ull ? -1 : int64_t(h.first_neg_inf);
  double f = 0;
  std::memcpy(&f, &h.max_abs_float, sizeof(f));
  s.max_abs_float = f;
  s.max_abs_int = h.max_abs_int;
  r.positive = h.nonpositive == 0;
  s.negative = h.nonpositive == 2;
  s.fractional = h.nonintegral != 0;
  if (opt.unweighted) {  // every edge weighs 1 after the rules
    s.max_abs_int = n > 1 ? 1 : 0;
    s.max_abs_float = n > 1 ? 1.0 : 0.0;
    r.positive = true;
    s.negative = s.fractional = false;
  }
  return r;
}
ScannedStats read_stats(const DeviceStats* st, const Options& opt, int64_t n,
                        cudaStream_t stream) {
  DeviceStats h{};
  APSP_CUDA_CHECK(cudaMemcpyAsync(&h, st, sizeof(h), cudaMemcpyDeviceToHost, stream));
  APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return to_input_stats(h, opt, n);
}

// The vertices with a negative diagonal that the solve listed (st->negative_count of them, at
// list), sorted (two syncs).
std::vector<int64_t> read_negative(const DeviceStats* st, const int64_t* list, int64_t n,
                                   cudaStream_t stream) {
  unsigned long long count = 0;
  APSP_CUDA_CHECK(cudaMemcpyAsync(&count, &st->negative_count, sizeof(count),
                                  cudaMemcpyDeviceToHost, stream));
  APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (count > uint64_t(n)) throw CudaError("internal error: negative-diagonal count exceeds n");
  std::vector<int64_t> v(static_cast<size_t>(count));
  if (count > 0) {
    APSP_CUDA_CHECK(cudaMemcpyAsync(v.data(), list, size_t(count) * sizeof(int64_t),
                                    cudaMemcpyDeviceToHost, stream));
    APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::sort(v.begin(), v.end());
  }
  return v;
}
// None where check_negative_cycles is off (init_stats made no list).
std::vector<int64_t> read_negative(const SolveScratch& sc, int64_t n, cudaStream_t stream) {
  return sc.negative ? read_negative(sc.st, sc.negative, n, stream) : std::vector<int64_t>{};
}

// Returns the vertices with a negative diagonal (sorted; only when check_negative_cycles is on):
// the caller raises NegativeCycleError once the results are where the caller wants them.
template <class T>
std::vector<int64_t> solve_on_stream(const Matrix& dist, const PredMatrix& pred, const Options& opt,
                                     int device, cudaStream_t stream,
                                     const std::vector<int>& helpers) {
  const int64_t n = dist.n, ld = dist.ld;
  T* d = static_cast<T*>(dist.data);
  Job job{dist.data, n, ld, pred.data, pred.ld};
  SolveScratch sc;
  // The (length, hops) step's hop counts (pred32 and the tagged plan), or the float argmin
  // plan's backup of its input (solve_argmin): allocated once the plan needs them, so that the
  // argmin plans that use neither (integer sums: exact) do without the n x n x 4 bytes.
  auto allocate_hops = [&] {
    if (sc.hops) return;
    sc.hops = std::make_unique<AsyncBuffer>(size_t(n) * size_t(n) * sizeof(uint32_t), stream);
    job.h = static_cast<uint32_t*>(sc.hops->ptr);
  };

  // Statistics: for the input checks, and for the choice of the tagged plan (predecessors; for
  // floats, where every weight is an integer).
  const bool tagged_candidate = pred.data && n > Plan<int32_t, Tiles::tagged>::depth;
  const bool scan = opt.check_input || tagged_candidate;
  if (scan || opt.check_negative_cycles) init_stats(sc, opt, n, stream);
  bool tagged_fits = false, twin_fits = false, argmin_fits = false, min3_fits = false;
  bool argmin_exact = false;  // the argmin plan on exact integer sums: no backup, no check
  bool hop_scaled = false;  // the tagged plan on keys w * n + hops (tagged.cuh)
  // The narrow plan's weights (narrow.cuh; contract.hpp: narrow_weights_fit). Without the scan,
  // known only for unweighted graphs (lengths < n).
  bool narrow_weights = opt.unweighted;
  if (scan) {
    enqueue_scan(d, n, ld, 0, n, sc.st, stream);
    const ScannedStats scanned = read_stats(sc.st, opt, n, stream);
    const InputStats& s = scanned.input;
    [[maybe_unused]] const bool positive = scanned.positive, nonnegative = !s.negative,
                                integral = !s.fractional;
    if (opt.check_input) check_input_stats(dist, s);
    // tagged.cuh: positive weights and every path length (n - 1) * max w within the tags' range.
    // Floats whose weights are all positive integers, every path length exact in the float type
    // and within the integer twin's range, run the twin's kernels (float32: the argmin or tagged
    // plan with predecessors, by the integers' rule, and the round loops without; float64: the
    // tagged plan where the argmin plan's backup does not fit): the same results, since every sum
    // is exact, and one instruction per min-plus step (VIADDMNMX) where float32 needs two.
    // APSP_CUDA_TAGS=0 leaves the tagged plan out for positive weights, APSP_CUDA_ARGMIN=0 the
    // argmin plan (benchmarks: both plans on the same graph; tests).
    const bool tags_on = !switched_off("APSP_CUDA_TAGS");
    const bool argmin_on = !switched_off("APSP_CUDA_ARGMIN");
    // Where exact sums allow both, the argmin plan before the tagged plan: for 8-byte types at
    // every n, for 4-byte ones (int32, and float32 on it) below kArgminMaxN (measured below).
    auto argmin_preferred = [&](bool tags_fit) {
      return sizeof(T) == 8 || n < kArgminMaxN || !tags_fit;
    };
    if constexpr (std::is_integral_v<T>) {
      // Positive integer weights: the argmin plan, exact on integers (no check, no backup); for
      // int32 below kArgminMaxN, from it the tagged plan where the paths fit the tags. The argmin
      // plan's look-ahead and its phases 1 and 2 without hop counts win at small n; int32's
      // tagged plan's phase 3 at large n (H100, weights 1..99, ms, argmin / tagged: int32 n =
      // 1024 0.88 / 1.09, 4096 8.2 / 10.4, 10000 89.5 / 93.7, 12288 156.7 / 159.4, 14336 243.6 /
      // 244.8, 16384 358.0 / 354.2; int64 1024 1.15 / 1.64, 4096 25.3 / 29.1, 10000 340.0 /
      // 351.7, GPU_NOTES.md, forty-second session; int64 12288 611 / 632, 16384 1428 / 1464,
      // forty-third). Past the tags (int32: (n - 1) * max w > 2^22 - 2, any w > 419 at n =
      // 10000) the argmin plan at every n, where every path length stays below INF / 2 (the input
      // checks' bound, here also with the checks off): no sum overflows.
      const bool tags_fit = tagged_candidate && positive && tags_on &&
                            s.max_abs_int <= uint64_t(Tags<T>::max_length) / uint64_t(n - 1);
      argmin_fits = tagged_candidate && positive && argmin_on && argmin_preferred(tags_fit) &&
                    s.max_abs_int <= (uint64_t(unreachable_threshold<T>()) - 1) / uint64_t(n - 1);
      tagged_fits = tags_fit && !argmin_fits;
      argmin_exact = argmin_fits;
    } else {
      using I = typename IntegerTwin<T>::type;
      const bool no_nan_or_neg_inf = s.first_nan < 0 && s.first_neg_inf < 0;
      const bool whole = positive && integral && no_nan_or_neg_inf;
      auto within = [&](int64_t longest) {
        longest = std::min<int64_t>(longest, int64_t(1) << std::numeric_limits<T>::digits);
        return s.max_abs_float * double(n - 1) <= double(longest);
      };
      const bool tagged_exact = tagged_candidate && whole && tags_on && within(Tags<I>::max_length);
      twin_fits = std::is_same_v<T, float> && !pred.data && whole &&
                  within(int64_t(Semiring<I>::inf()) - 1);
      // The min3 step: float32 weights all >= 0 (so every value is 0 .. +inf and orders as its
      // bits do), no NaN.
      min3_fits = std::is_same_v<T, float> && nonnegative && no_nan_or_neg_inf;
      // The argmin plan: every off-diagonal weight > 0, no NaN and no -inf; for 8-byte types,
      // where the rest of the input's backup fits in free memory (else the tagged plan where its
      // weights allow, else pred32). Where every weight is a positive integer and every path
      // short enough that every sum is exact (`argmin_exact`; `exact_length` below): no backup,
      // no check. Such float64 weights take the argmin plan on float64's own kernels, faster
      // than the plans on int64's (H100, n = 10000, integer weights: 257 against 358 ms for the
      // tagged plan; GPU_NOTES.md, thirty-seventh session); float32 ones the argmin plan on the
      // int32 twin by the integers' rule above (below kArgminMaxN, or where the paths are too
      // long for the tags; GPU_NOTES.md, forty-third session), else the tagged plan on it.
      // APSP_CUDA_ARGMIN=0 leaves the argmin plan out, as if its backup did not fit (benchmarks:
      // both plans on the same graph; tests: that fallback).
      constexpr bool argmin_first = std::is_same_v<T, double>;
      // float32 runs the int32 twin, whose sums of two path lengths below INF / 2 are exact;
      // float64 its own kernels, whose sums of two path lengths up to 2^52 are.
      const int64_t exact_length = argmin_first ? int64_t(1) << 52
                                                : int64_t(unreachable_threshold<I>()) - 1;
      argmin_exact = tagged_candidate && whole && argmin_on && argmin_preferred(tagged_exact) &&
                     within(exact_length);
      argmin_fits = tagged_candidate && (argmin_first || !tagged_exact || argmin_exact) &&
                    positive && no_nan_or_neg_inf && argmin_on;
      if (argmin_fits && !argmin_exact) allocate_hops();  // the backup's first rows, first
      const int64_t rest_rows = n - argmin_rows_in_hops<T>(n);
      if (argmin_fits && !argmin_exact && rest_rows > 0) {
        void* ptr = nullptr;
        const cudaError_t err =
            malloc_async(&ptr, size_t(rest_rows) * size_t(n) * sizeof(T), stream);
        if (err == cudaErrorMemoryAllocation) {
          (void)cudaGetLastError();  // not sticky: clear it
          argmin_fits = false;
        } else {
          APSP_CUDA_CHECK(err);
          sc.rest = std::make_unique<AsyncBuffer>(ptr, stream);
        }
      }
      tagged_fits = tagged_exact && !((argmin_first || argmin_exact) && argmin_fits);
    }
    // contract.hpp's rule, for every dtype: float weights that are whole numbers >= 0 narrow as
    // integers do (the same sums; widened back they are the float plan's results exactly, except
    // that a weight of -0.0 comes back as 0.0).
    narrow_weights = narrow_weights_fit(s, n);
    // Weights that fit all but the bound (n - 1) * max w: the hub bound may show that every
    // finite distance does (random weights 1..99 at n = 10000, most graphs of small weights).
    if (!narrow_weights && !pred.data && !opt.unweighted && narrow_weights_fit_with_hub(s) &&
        n >= hub_min_n(dist.dtype) && narrow_size_fits(n))
      narrow_weights = hub_bound_fits(d, n, ld, opt.directed, stream);
    // Integer weights with a zero or a negative one take the tagged plan on hop-scaled keys where
    // those fit (tagged.cuh: hop_scaled_max_weight), else pred32; float ones on the integer twin
    // (an integer dtype is its own twin; the scan finds no NaN, -inf or fraction in it).
    const int64_t most = hop_scaled_max_weight<typename IntegerTwin<T>::type>(n);
    const bool keys_fit = most >= 0 && (std::is_integral_v<T> ? s.max_abs_int <= uint64_t(most)
                                                              : s.max_abs_float <= double(most));
    hop_scaled = tagged_candidate && !positive && integral && s.first_nan < 0 &&
                 s.first_neg_inf < 0 && keys_fit;
    tagged_fits = tagged_fits || hop_scaled;
  }

  const bool cluster_ok = !pred.data && n <= ClusterShape::max_n && cluster_fits<T>(device);
  // The flow plan's grid on this GPU where the plan could run (4-byte types, no predecessors);
  // none elsewhere.
  const FlowGrid flow_shape = [&] {
    if constexpr (sizeof(T) == 4)
      if (!pred.data && n > ClusterShape::max_n && n <= Flow::max_n) return flow_grid<T>(device);
    return FlowGrid{};
  }();
  const bool flow_ok = flow_shape.clusters >= 2;
  const bool aligned = rows_aligned<T>(d, ld);
  // The narrow plan: matrices without predecessors whose weights fit it. Measured on an H100:
  // GPU_NOTES.md, forty-seventh and forty-eighth sessions.
  const bool narrow_fits = !pred.data && narrow_weights && narrow_size_fits(n);
  // The round loop runs the integer twin's kernels where the weights let it (`twin` below; float32
  // only on 64-wide rounds, whose bound is the same for both 4-byte kernels).
  const DType kernels =
      twin_fits ? Semiring<typename IntegerTwin<T>::type>::dtype : Semiring<T>::dtype;
  const Tiles tiles = choose_tiles(n, kernels, pred.data != nullptr, tagged_fits, argmin_fits,
                                   cluster_ok, flow_ok, aligned, narrow_fits);
  const bool round_loop = tiles != Tiles::small && tiles != Tiles::cluster && !pred.data;
  const bool narrow = tiles == Tiles::narrow2 || tiles == Tiles::narrow4;  // its own step
  // The min3 step (VIMNMX3: sm_90): where the scan found the float32 weights non-negative; where
  // nothing scanned them (checks off), decided on the device by the rules kernel's flag, past
  // the sizes whose rounds replay as a CUDA graph (the flag is a new buffer each solve).
  // APSP_CUDA_MIN3=0 keeps FADD + FMNMX (benchmarks: both steps on the same graph).
  const bool hopper = sm90(device);
  const bool min3_ok =
      round_loop && !narrow && tiles != Tiles::flow && hopper && !switched_off("APSP_CUDA_MIN3");
  // The twin only where the engine chose a round loop itself: a forced plan (tests, benchmarks)
  // runs the kernels of the matrix's own dtype. float32 takes it only on 64-wide rounds where
  // the min3 step applies: on super-rounds the float32 kernels with min3 are faster (H100,
  // integer weights, checks on: twin / min3 0.87 at n = 1024, 0.94 at 3000, 1.03 at 4096, 1.02
  // at 10000, 1.01 at 16384; GPU_NOTES.md, twelfth session; on k64d 1.02 at 3072 and 1.04 at
  // 4608, thirty-third).
  const bool min3_beats_twin =
      std::is_same_v<T, float> && min3_fits && min3_ok && tiles != Tiles::k64w;
  const bool twin =
      twin_fits && !std::getenv("APSP_CUDA_TILES") && round_loop && !narrow && !min3_beats_twin;
  // The argmin plan on exact sums uses no hop buffer; float32's runs on the int32 twin.
  const bool argmin_on_exact_sums = tiles == Tiles::argmin && argmin_exact;
  const bool argmin_on_twin = argmin_on_exact_sums && std::is_same_v<T, float>;
  if (pred.data && !argmin_on_exact_sums) allocate_hops();
  set_sm90_features(job, hopper);
  // Split over the helper GPUs (enqueue_split): the super-round plans, from kSplitMinN (at any n
  // where APSP_CUDA_TILES forces one of them: tests).
  // Two super-rounds at least, so that two GPUs have rows.
  const int64_t super_round_n = super_round_depth(tiles);
  if (!helpers.empty() && super_round_n > 0 && n > super_round_n &&
      (n >= kSplitMinN || forced_super_rounds()))
    job.split = &helpers;
  if (tiles == Tiles::tagged && hop_scaled) job.hop_scale = n;
  if (tiles == Tiles::flow) {  // a bad override raises here
    job.flow_workers = flow_workers(n);
    job.flow_extra = flow_extra(n) && job.pdl && flow_shape.extra > 0;
  }
  const bool min3_on_device =
      std::is_same_v<T, float> && !scan && !twin && n > kGraphMaxN && min3_ok;
  const bool min3 = (min3_fits && !twin && min3_ok) || min3_on_device;
  if (min3_on_device) {
    sc.flag = std::make_unique<AsyncBuffer>(sizeof(unsigned), stream);
    job.below_zero = static_cast<unsigned*>(sc.flag->ptr);
    APSP_CUDA_CHECK(cudaMemsetAsync(job.below_zero, 0, sizeof(unsigned), stream));
  }
  const bool trace = std::getenv("APSP_CUDA_TRACE") != nullptr;
  if (trace)  // diagnostics, and how the tests see which plan ran
    std::fprintf(stderr, "apsp cuda: plan %s, %s%s%s, n = %lld\n", tiles_name(tiles),
                 dtype_name(dist.dtype),
                 job.hop_scale > 0  ? " with hop counts in its keys"
                 : narrow           ? " on 16-bit lengths"
                 : twin || argmin_on_twin ? " on integer kernels"
                 : min3_on_device   ? " with the 3-input min where every value is >= 0"
                 : min3             ? " with the 3-input min"
                 : tiles != Tiles::flow ? ""
                 : job.flow_workers == 1 ? " with one worker per block"
                 : job.flow_workers == 2 ? " with two workers per block"
                                         : " with three workers per block",
                 job.flow_extra ? " and more on the SMs its clusters leave free" : "",
                 static_cast<long long>(n));
  auto run_chosen = [&] {
    with_tiles<T>(tiles, twin, min3, [&](auto plan) {
      run_plan<decltype(plan), T>(job, opt, device, stream, tiles, sc);
    });
  };
  if (tiles == Tiles::argmin)
    solve_argmin<T>(job, opt, device, stream, sc, argmin_exact);
  else
    run_chosen();
  if (trace && job.below_zero) {  // which step the device chose (one sync, diagnostics only)
    unsigned below = 0;
    APSP_CUDA_CHECK(cudaMemcpyAsync(&below, job.below_zero, sizeof(below), cudaMemcpyDeviceToHost,
                                    stream));
    APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::fprintf(stderr, "apsp cuda: min3 step %s\n", below ? "off (a value below zero)" : "on");
  }
  std::vector<int64_t> negative = read_negative(sc, n, stream);
  // Float sums that round can leave predecessor chains that loop (core/pred_repair.hpp); exact
  // ones (integer weights on the argmin or tagged plan) cannot, and under a negative cycle chains
  // loop by right (the error names one). The hop counts go back to the stream's pool first, for
  // the mend's scratch.
  if (negative.empty() && pred.data && !std::is_integral_v<T> && !argmin_on_exact_sums &&
      tiles != Tiles::tagged) {
    sc.hops.reset();
    repair_predecessor_loops_cuda(dist, pred, device, stream);
  }
  return negative;
}

std::vector<int64_t> solve_device_matrix(const Matrix& dist, const PredMatrix& pred,
                                         const Options& opt, int device, cudaStream_t stream,
                                         const std::vector<int>& helpers = {}) {
  // After an exception between launches (Ctrl-C or a progress callback that raised), what was
  // already enqueued ends before the error reaches the caller: no work is left writing the matrix
  // (apsp.hpp).
  struct FinishOnThrow {
    cudaStream_t s;
    ~FinishOnThrow() {
      if (std::uncaught_exceptions() > 0) finish_unless_capturing(s);
    }
  } finish_on_throw{stream};
  std::vector<int64_t> negative;
  with_dtype(dist.dtype, [&](auto zero) {
    negative = solve_on_stream<decltype(zero)>(dist, pred, opt, device, stream, helpers);
  });
  return negative;
}

// APSP_CUDA_TRACE=1 prints the host path's stage times to stderr (diagnostics only; every solve
// also prints its plan: solve_on_stream).
struct Trace {
  bool on = std::getenv("APSP_CUDA_TRACE") != nullptr;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void operator()(const char* what) {
    if (!on) return;
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "apsp cuda: %-10s %8.3f ms\n", what,
                 std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  }
};

// Device memory a host-input solve needs besides the n x n matrix, known before the input is
// scanned: the predecessors (4 bytes per pair), the negative-cycle list and a margin for scratch.
// The plan's own scratch (hop counts or a backup, where it needs them) is checked where it is
// allocated, with the same MemoryError, once the scan has chosen the plan.
uint64_t device_extra_bytes(int64_t n, bool pred) {
  const uint64_t nn = uint64_t(n) * uint64_t(n);
  return (pred ? 4 * nn : 0) + uint64_t(n) * 8 + (uint64_t(8) << 20);
}

// MemoryError with bytes needed and free, before anything is allocated.
void require_device_memory(uint64_t needed, const std::string& what) {
  size_t free_b = 0, total_b = 0;
  APSP_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (needed > free_b) throw_out_of_memory(needed, what);
}

// Room on the current device for a helper's buffers (split_helpers). The stream-ordered pool's
// reserved bytes that no allocation uses count as free (cudaMallocAsync takes them first). On a
// shortfall, the work still pending there is waited for and the pool trimmed before the check is
// made again: an unchecked split of a device array returns before its helpers' buffers go back
// (enqueue_split), so a next split at once would otherwise find them taken.
void require_helper_memory(int device, uint64_t needed, const std::string& what) {
  cudaMemPool_t pool = nullptr;
  APSP_CUDA_CHECK(cudaDeviceGetMemPool(&pool, device));
  auto available = [&] {
    size_t free_b = 0, total_b = 0;
    uint64_t reserved = 0, used = 0;
    APSP_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    APSP_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    APSP_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    return uint64_t(free_b) + (reserved > used ? reserved - used : 0);
  };
  if (needed <= available()) return;
  APSP_CUDA_CHECK(cudaDeviceSynchronize());
  APSP_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  if (needed > available()) throw_out_of_memory(needed, what);
}

// The helper GPUs of a solve (Job::split), checked: distinct devices other than `device`; of
// them the list's first, as many as pay at this n (kSplitMinRows), each with room for its copy
// of the matrix (`matrix_bytes`; MemoryError naming it otherwise), and peer access between every
// pair (where a pair cannot have it, the solve runs on `device` alone: none returned).
// `why_alone`, when given, also makes it run there alone, once the list is checked (a device
// array's stream in capture: solve_cuda).
std::vector<int> split_helpers(int device, const std::vector<int>& helpers, int64_t n, bool pred,
                               uint64_t matrix_bytes, const std::string& what,
                               const char* why_alone = nullptr) {
  std::vector<int> all{device};
  int count = 0;
  APSP_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int h : helpers) {
    if (std::find(all.begin(), all.end(), h) != all.end())
      throw ValueError("device cuda:" + std::to_string(h) +
                       " is named twice in the list of devices; name each GPU once");
    if (h < 0 || h >= count)
      throw ValueError("device cuda:" + std::to_string(h) + " is not a GPU of this machine; " +
                       std::to_string(count) + " device(s) visible: use 0.." +
                       std::to_string(count - 1));
    all.push_back(h);
  }
  // Solves that cannot split use none (no context, no memory check on the helpers, and an int32
  // input still solved while it arrives): predecessors, and n below the split's.
  if (helpers.empty() || pred || (n < kSplitMinN && !forced_super_rounds())) return {};
  const char* alone = why_alone;
  auto trace_alone = [&] {
    if (std::getenv("APSP_CUDA_TRACE"))
      std::fprintf(stderr, "apsp cuda: %s: solved on cuda:%d alone\n", alone, device);
    return std::vector<int>{};
  };
  if (alone) return trace_alone();
  // The list's first GPUs, as many as pay at this n (forced plans, in tests: all of them).
  std::vector<int> used = helpers;
  const size_t pay = size_t(std::max<int64_t>(2, n / kSplitMinRows) - 1);
  if (used.size() > pay && !forced_super_rounds()) {
    if (std::getenv("APSP_CUDA_TRACE"))
      std::fprintf(stderr, "apsp cuda: n = %lld: split over the first %d of the %d GPUs listed "
                   "(at least %lld rows a GPU)\n", static_cast<long long>(n), int(pay + 1),
                   int(used.size() + 1), static_cast<long long>(kSplitMinRows));
    used.resize(pay);
    all.resize(pay + 1);
  }
  // The plan is chosen on `device`: GPUs of another kind (compute capability, shared memory a
  // block) might not run it.
  auto kind = [](int d) {
    int major = 0, minor = 0, smem = 0;
    APSP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    APSP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d));
    APSP_CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, d));
    return std::make_tuple(major, minor, smem);
  };
  for (int h : used) {
    DeviceGuard guard(h);  // an invalid ordinal raises here, naming the visible ones
    if (kind(h) != kind(device)) alone = "GPUs of different kinds";
    require_helper_memory(h, matrix_bytes + (uint64_t(8) << 20),
                          what + "'s copy of the matrix on cuda:" + std::to_string(h));
  }
  if (!alone && !enable_peer_access(all)) alone = "no peer access between the GPUs";
  return alone ? trace_alone() : used;
}

// ---- a host input solved while it arrives -------------------------------------------------------
// Round r of blocked Floyd-Warshall on tile row i reads only row i and the pivot rows r, each
// through its own earlier rounds. So while a host input is copied to the GPU, the rows already
// there can go through their rounds. Each time rows [0, b) are in (b a multiple of the
// super-round's rows, or n; parts at least doubling), the new rows [a, b) take the rounds of
// every earlier pivot block [0, a), whose rows they only read; then rows [0, b) take the rounds
// of the new blocks [a, b). After the last part every row has had every round. The rounds are
// enqueue_rounds' own launches cut to a window of tile rows (kernels.cuh: TileSet): the same
// work and kernels as the round loop, in another order.
// Exact for integers: a row that reads an earlier part's pivot rows later finds them further
// along (rounds of later blocks applied too). Its values are still lengths of paths, and, min-plus
// being monotone, no larger than the round loop's at the same step; the round loop ends at the
// shortest lengths, so this order does too. Floats could round differently (sums in another
// order), so they keep the upload-first path. With a negative cycle the values past it depend on
// the order (as between the CPU and CUDA engines); the cycle's vertices are reported either way.
// Measured (H200, int32 n = 10000): GPU_NOTES.md, twenty-eighth session.

// Whether an integer host input's weights could take the narrow plan (contract.hpp: whole, >= 0,
// each at most kNarrowMaxLength, "no edge" at INF and above), from kNarrowSampleRows rows spread
// over it (0.5-0.8 ms at n = 10000 int32 on one core of the development machine). The input
// scan and the hub bound that decide the plan read a matrix uploaded whole, so such an input is
// not solved while it arrives (H100, int32 n = 10000 weights 1..99 from NumPy: 1.47x faster;
// GPU_NOTES.md, fiftieth session). A row the sample misses that does not fit costs the overlap,
// not the result.
constexpr int64_t kNarrowSampleRows = 64;
template <class T>
bool sample_fits_narrow(const Matrix& input) {
  const T* a = static_cast<const T*>(input.data);
  const int64_t n = input.n, rows = std::min(n, kNarrowSampleRows);
  for (int64_t k = 0; k < rows; ++k) {
    const int64_t i = k * n / rows;
    const T* row = a + i * input.ld;
    for (int64_t j = 0; j < n; ++j)
      if (row[j] < 0 || (j != i && row[j] > T(kNarrowMaxLength) && row[j] < Semiring<T>::inf()))
        return false;
  }
  return true;
}

// The plan of a host input solved while it arrives, or Tiles::small where it is not: integer
// dtypes, directed, no predecessors, past the sizes whose rounds replay as a CUDA graph, on the
// super-round plans (choose_tiles' pick, or APSP_CUDA_TILES). APSP_CUDA_OVERLAP=0: upload first
// (benchmarks and tests, both ways on the same graph). Graphs the narrow plan may take upload
// first too, unless another plan is forced: unweighted ones (their rows are narrowed whole, after
// the rules), and, with the input checks on, those whose sampled weights fit (sample_fits_narrow).
Tiles arriving_tiles(const Matrix& input, const Options& opt, bool pred) {
  const DType dtype = input.dtype;
  const int64_t n = input.n;
  const bool integers = dtype == DType::int32 || dtype == DType::int64;
  if (!integers || pred || !opt.directed || n <= kGraphMaxN || switched_off("APSP_CUDA_OVERLAP"))
    return Tiles::small;
  // Past kGraphMaxN, n is past narrow_min_n and hub_min_n for every dtype.
  static_assert(kGraphMaxN >= kNarrowMinN4 && kGraphMaxN >= kNarrowMinN8 &&
                kGraphMaxN >= kHubMinN4 && kGraphMaxN >= kHubMinN8);
  const char* forced = std::getenv("APSP_CUDA_TILES");
  const bool narrow_allowed =
      narrow_size_fits(n) && (!forced || std::strncmp(forced, "narrow", 6) == 0);
  if (narrow_allowed && opt.unweighted) return Tiles::small;
  if (narrow_allowed && !opt.unweighted && opt.check_input) {
    const bool fits = dtype == DType::int32 ? sample_fits_narrow<int32_t>(input)
                                            : sample_fits_narrow<int64_t>(input);
    if (std::getenv("APSP_CUDA_TRACE"))
      std::fprintf(stderr, "apsp cuda: a sample of %lld rows %s 16-bit lengths, n = %lld\n",
                   static_cast<long long>(std::min(n, kNarrowSampleRows)),
                   fits ? "fits: uploaded whole for" : "does not fit", static_cast<long long>(n));
    if (fits) return Tiles::small;
  }
  const Tiles t = choose_tiles(n, dtype, false, false, false, false, false, true);
  return super_round_depth(t) > 0 ? t : Tiles::small;
}

// Uploads `input` into `dev` on `copy` (a stream of its own) and enqueues, on `stream`, the scan
// and the rules of each part as it arrives, its rounds (above), then finalize. Returns when the
// copies are done; the rounds go on. `sc` takes the statistics.
template <class T>
void upload_and_enqueue_arriving(const Matrix& input, const Matrix& dev, const Options& opt,
                                 int device, cudaStream_t stream, cudaStream_t copy, Tiles tiles,
                                 SolveScratch& sc, std::unique_ptr<Progress>& progress) {
  const int64_t n = dev.n, ld = dev.ld;
  T* d = static_cast<T*>(dev.data);
  if (opt.check_input || opt.check_negative_cycles) init_stats(sc, opt, n, stream);
  with_tiles<T>(tiles, false, false, [&](auto plan) {
    using P = decltype(plan);
    if constexpr (!takes_parts<P>::value) {
      throw CudaError(std::string("internal error: plan ") + tiles_name(tiles) +
                      " cannot solve an arriving input");
    } else {
      constexpr int64_t K = P::K, step = P::depth / P::K;
      const int64_t nb = (n + K - 1) / K;
      prepare_kernels<P>(device);
      Job job{dev.data, n, ld, nullptr, 0};
      set_sm90_features(job, sm90(device));
      // progress=True: rounds counted as tile rows x rounds done over nb (the rows of a round
      // arrive in parts).
      int64_t row_rounds = 0, reported = 0;
      if (opt.progress) progress = std::make_unique<Progress>(opt, stream, nb);
      OwnEvent arrived_event;
      int64_t done_rows = 0;  // rows [0, done_rows) hold the rounds of blocks [0, done_rows / K)
      int64_t parts = 0;
      auto arrived = [&](int64_t rows) {
        // Parts at least double: each part's new rows take the rounds of every block before them,
        // so many small parts cut the same work into many more, smaller launches (H200, int32
        // n = 10000: 13 parts of 768 rows took 89.5 ms to upload and solve, 5 doubling parts 73;
        // GPU_NOTES.md, twenty-eighth session). The first part is the first pinned chunk, the
        // GPU's only wait.
        if (rows < n && rows < 2 * done_rows) return;
        APSP_CUDA_CHECK(cudaEventRecord(arrived_event.e, copy));
        APSP_CUDA_CHECK(cudaStreamWaitEvent(stream, arrived_event.e, 0));
        if (opt.check_input) enqueue_scan(d, n, ld, done_rows, rows, sc.st, stream);
        enqueue_rules_rows(d, n, ld, done_rows, rows, opt.unweighted, nullptr, stream);
        const int64_t a = done_rows / K, b = (rows + K - 1) / K;
        auto count = [&](const Window& w) {
          return [&, width = w.w1 - w.w0](int64_t) {
            row_rounds += width;
            for (; progress && reported < row_rounds / nb; ++reported) progress->enqueued(reported);
          };
        };
        const Window catch_up{a, b, 0, a}, own{0, b, a, b};
        enqueue_rounds<P>(job, stream, count(catch_up), &catch_up);
        enqueue_rounds<P>(job, stream, count(own), &own);
        done_rows = rows;
        ++parts;
      };
      upload_matrix_arriving(dev.data, ld, input.data, n, input.ld, int(sizeof(T)), copy,
                             step * K, arrived);
      if (done_rows != n) throw CudaError("internal error: an arriving input ended early");
      if (std::getenv("APSP_CUDA_TRACE"))
        std::fprintf(stderr, "apsp cuda: plan %s, %s while it arrives in %lld parts, n = %lld\n",
                     tiles_name(tiles), dtype_name(dev.dtype), static_cast<long long>(parts),
                     static_cast<long long>(n));
      const Elementwise ew = elementwise(n);
      finalize_kernel<T><<<ew.grid, ew.block, 0, stream>>>(d, n, ld, nullptr, 0, sc.st,
                                                           sc.negative);
      APSP_CUDA_CHECK_LAUNCH("finalize_kernel");
    }
  });
}

// The options a solve runs with. A progress callback that only polls for Ctrl-C
// (Options::progress_polls_only) is kept where the host waits for the solve anyway (`host_waits`:
// a host input, or the negative-cycle check's readout) and the rounds are launched one by one: its
// event waits then cost nothing measurable (H100 int32 n = 10000: +0.0% on a device buffer,
// -2.2% on the host path; results/gpu_h100_s44e_summary.md). Smaller solves take milliseconds and
// replay as one CUDA graph, which a callback would forgo.
Options with_interrupt_polls(const Options& opt, int64_t n, bool host_waits) {
  Options o = opt;
  if (o.progress_polls_only && (!host_waits || n <= kGraphMaxN)) o.progress = nullptr;
  return o;
}

// The end of every host-input solve: `solve()` (the solve of the device matrix `dev`, or the
// rest of it, returning the vertices with a negative diagonal), then its results into the host
// matrices (also when a negative cycle is reported, like the CPU engine), then NegativeCycleError
// if there is one. The host outputs' pages are faulted in while the GPU solves (staging.cpp,
// OutputPrefault): the predecessors, and `dist` when `dist_is_output` (it is not the input the
// solve was uploaded from).
template <class Solve>
void solve_and_download(const Matrix& dev, const PredMatrix& dpred, const Matrix& dist,
                        const PredMatrix& pred, bool dist_is_output, Solve&& solve,
                        cudaStream_t stream, Trace& trace) {
  const int64_t n = dist.n;
  const size_t es = size_t(dtype_size(dist.dtype));
  std::vector<int64_t> negative;
  {
    std::vector<HostRows> outputs;
    if (dist_is_output) outputs.push_back({dist.data, n, size_t(n) * es, size_t(dist.ld) * es});
    if (pred.data) outputs.push_back({pred.data, n, size_t(n) * 4, size_t(pred.ld) * 4});
    OutputPrefault prefault(std::move(outputs));
    negative = solve();
    if (trace.on) APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
    trace("solve");
    const double prefault_ms = prefault.wait();  // within "solve" unless it took longer
    trace("prefault");
    if (trace.on && prefault_ms > 0)
      std::fprintf(stderr, "apsp cuda: (prefault %8.3f ms, on a helper thread)\n", prefault_ms);
  }
  download_matrix(dist.data, dist.ld, dev.data, n, dev.ld, int(es), stream);
  if (pred.data) download_matrix(pred.data, pred.ld, dpred.data, n, dpred.ld, 4, stream);
  trace("download");
  check_negative_cycles(negative, n);
}

// ---- batches of graphs of one n (solve_cuda_batch) ---------------------------------------------
// The one-launch plans that one solve takes at these n run a whole batch in one launch: graphs of
// n <= Small::K small_solve_kernel one block each, 64 < n <= 256 cluster_solve_kernel one cluster
// each (where clusters fit); their input scans one launch of scan_kernel (blockIdx.z picks the
// graph). Each graph has its own DeviceStats and list of negative vertices, so each is solved
// and checked exactly as its own solve is (same kernels, same statistics, contract.cpp's checks).
// Larger graphs are solved one after another (solve_device_matrix), each by its own plan.
constexpr int64_t kBatchLaunch = 65535;  // graphs per launch (gridDim.z's limit)
// Ctrl-C in a long one-launch batch: where the host waits for the batch anyway (a host input, or
// the negative-cycle check's readout), its graphs go in launches of about kBatchPollUpdates
// updates (count x n^3: 1024 graphs of n = 256, about 6 ms of an H200); once launch l is queued,
// the host waits for launch l - 1 to end and polls. The GPU's queue never drains, and an
// interrupt waits for two launches at most. Otherwise a launch takes kBatchLaunch graphs.
constexpr int64_t kBatchPollUpdates = int64_t(1) << 34;

// The first graph of a batch with a negative cycle (-1: none) and its vertices, sorted.
struct BatchNegative {
  int64_t graph = -1;
  std::vector<int64_t> vertices;
};

// Reads a batch's statistics folded (fold_batch_kernel) over graphs [0, count) (one sync).
BatchFold fold_batch_stats(const DeviceStats* st, int64_t count, BatchFold* fold,
                           cudaStream_t stream) {
  fold_batch_kernel<<<1, 1024, 0, stream>>>(st, count, fold);
  APSP_CUDA_CHECK_LAUNCH("fold_batch_kernel");
  BatchFold h{};
  APSP_CUDA_CHECK(cudaMemcpyAsync(&h, fold, sizeof(h), cudaMemcpyDeviceToHost, stream));
  APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

// An input error of graph e (input checks on) is raised only once graphs [0, e) are solved and
// none of them has a negative cycle: the lowest failing graph's error is the batch's, as on the
// CPU engine (graphs from e on are left as they were). The host reads the statistics folded over
// the batch, and graph by graph only where the fold fails the input checks. `poll` (or empty):
// polls for Ctrl-C between launches (kBatchPollUpdates).
template <class T>
BatchNegative enqueue_batch_launch(const Batch& batch, const Options& opt, Tiles tiles,
                                   const std::function<void()>& poll, cudaStream_t stream) {
  const int64_t n = batch.first.n, ld = batch.first.ld, count = batch.count;
  T* d = static_cast<T*>(batch.first.data);
  const bool stats = opt.check_input || opt.check_negative_cycles;
  const size_t stats_bytes = stats ? size_t(count) * sizeof(DeviceStats) + sizeof(BatchFold) : 0;
  const size_t neg_bytes = opt.check_negative_cycles ? size_t(count) * size_t(n) * 8 : 0;
  std::unique_ptr<AsyncBuffer> buf;
  DeviceStats* st = nullptr;
  BatchFold* fold = nullptr;
  int64_t* negative = nullptr;
  if (stats) {
    buf = std::make_unique<AsyncBuffer>(stats_bytes + neg_bytes, stream);
    st = static_cast<DeviceStats*>(buf->ptr);
    fold = reinterpret_cast<BatchFold*>(st + count);
    if (opt.check_negative_cycles)
      negative = reinterpret_cast<int64_t*>(static_cast<char*>(buf->ptr) + stats_bytes);
    reset_stats(st, count, stream);
  }
  int64_t solved = count;  // graphs [0, solved) are solved: all, or those before an input error
  std::exception_ptr input_error;
  if (opt.check_input) {
    const unsigned threads = unsigned(std::clamp<int64_t>((n + 31) / 32 * 32, 64, 256));
    for (int64_t b0 = 0; b0 < count; b0 += kBatchLaunch) {
      const dim3 grid(1, unsigned(std::min<int64_t>(n, 8)),
                      unsigned(std::min(kBatchLaunch, count - b0)));
      scan_kernel<T><<<grid, threads, 0, stream>>>(d + b0 * batch.stride, n, ld, 0, n, st + b0,
                                                   batch.stride);
      APSP_CUDA_CHECK_LAUNCH("scan_kernel");
    }
    const BatchFold folded = fold_batch_stats(st, count, fold, stream);
    const ScannedStats worst = to_input_stats(folded.worst, opt, n);
    bool all_pass = true;
    try {  // only the input checks' errors: a CUDA error of the fold raises above
      check_input_stats(batch.first, worst.input);
    } catch (const Error&) {
      all_pass = false;
    }
    if (!all_pass) {  // which graph fails first
      std::vector<DeviceStats> h(static_cast<size_t>(count));
      APSP_CUDA_CHECK(cudaMemcpyAsync(h.data(), st, size_t(count) * sizeof(DeviceStats),
                                      cudaMemcpyDeviceToHost, stream));
      APSP_CUDA_CHECK(cudaStreamSynchronize(stream));
      for (int64_t b = 0; b < count && !input_error; ++b) {
        try {
          check_input_stats(batch.graph(b), to_input_stats(h[size_t(b)], opt, n).input);
        } catch (...) {
          input_error = std::current_exception();
          solved = b;
        }
      }
      if (!input_error)
        throw CudaError("internal error: a batch's folded statistics fail, no graph's do");
    }
  }
  const int64_t per_launch =
      poll ? std::clamp<int64_t>(kBatchPollUpdates / (n * n * n), 1, kBatchLaunch) : kBatchLaunch;
  const int64_t launches = (solved + per_launch - 1) / per_launch;
  const bool polled = poll && launches > 1;
  if (launches > 1 && std::getenv("APSP_CUDA_TRACE"))
    std::fprintf(stderr, "apsp cuda: the batch in %lld launches of up to %lld graphs%s\n",
                 static_cast<long long>(launches), static_cast<long long>(per_launch),
                 polled ? ", Ctrl-C polled between them" : "");
  // launches l - 1 and l, where polled
  const std::unique_ptr<OwnEvent[]> ended = polled ? std::make_unique<OwnEvent[]>(2) : nullptr;
  try {
    for (int64_t l = 0; l < launches; ++l) {
      const int64_t b0 = l * per_launch;
      const unsigned graphs = unsigned(std::min(per_launch, solved - b0));
      T* first = d + b0 * batch.stride;
      DeviceStats* gst = st ? st + b0 : nullptr;
      int64_t* neg = negative ? negative + b0 * n : nullptr;
      if (tiles == Tiles::small) {
        enqueue_small_solve(first, int(n), ld, opt.directed, opt.unweighted, gst, neg, graphs,
                            batch.stride, stream);
      } else {
        const int S = int((n + ClusterShape::W - 1) / ClusterShape::W);
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg = cluster_config<T>(S, stream, attr);
        cfg.gridDim = dim3(unsigned(S * S) * graphs);
        APSP_CUDA_CHECK(cudaLaunchKernelEx(&cfg, cluster_solve_kernel<T>, first, int(n), ld, S,
                                           opt.directed, opt.unweighted, gst, neg, batch.stride));
      }
      if (!polled) continue;
      APSP_CUDA_CHECK(cudaEventRecord(ended[l % 2].e, stream));
      if (l == 0) continue;
      APSP_CUDA_CHECK(cudaEventSynchronize(ended[(l - 1) % 2].e));
      poll();
    }
  } catch (...) {  // Ctrl-C: what is enqueued ends first, as between the graphs of a larger n
    finish_unless_capturing(stream);
    throw;
  }
  BatchNegative found;
  if (negative && solved > 0) {
    const unsigned long long b = fold_batch_stats(st, solved, fold, stream).first_negative;
    if (b != ~0ull) {
      found.graph = int64_t(b);
      found.vertices = read_negative(st + b, negative + int64_t(b) * n, n, stream);
    }
  }
  if (input_error && found.graph < 0) rethrow_for_graph(input_error, solved);
  return found;
}

// A batch on the device (validated, count and n > 0), solved in place on `stream`: input errors
// raise here (for the first graph that has one), a negative cycle is returned. `host_waits`: the
// host waits for the solve anyway (a host input), so Ctrl-C may be polled between launches.
BatchNegative solve_batch_on_stream(const Batch& batch, const Options& options, int device,
                                    bool host_waits, cudaStream_t stream) {
  Options opt = options;
  opt.progress = nullptr;  // no rounds to report (Ctrl-C: polled between launches or graphs)
  opt.poll = nullptr;
  const int64_t n = batch.first.n;
  Tiles tiles = Tiles::k64w;  // for "one after another"
  with_dtype(batch.first.dtype, [&](auto zero) {
    using T = decltype(zero);
    if (n <= Small::K)
      tiles = Tiles::small;
    else if (n <= ClusterShape::max_n && cluster_fits<T>(device))
      tiles = Tiles::cluster;
  });
  const bool one_launch = tiles == Tiles::small || tiles == Tiles::cluster;
  if (std::getenv("APSP_CUDA_TRACE"))
    std::fprintf(stderr, "apsp cuda: batch of %lld graphs, %s%s, %s, n = %lld\n",
                 static_cast<long long>(batch.count),
                 one_launch ? "one launch, plan " : "one after another",
                 one_launch ? tiles_name(tiles) : "", dtype_name(batch.first.dtype),
                 static_cast<long long>(n));
  if (one_launch) {
    BatchNegative found;
    with_dtype(batch.first.dtype, [&](auto zero) {
      std::function<void()> poll;  // Ctrl-C between launches
      if (options.poll && (host_waits || options.check_negative_cycles))
        poll = [&] { options.poll(options.progress_ctx); };
      found = enqueue_batch_launch<decltype(zero)>(batch, opt, tiles, poll, stream);
    });
    return found;
  }
  BatchNegative found;
  for (int64_t b = 0; b < batch.count; ++b) {
    if (b > 0 && options.poll) {  // Ctrl-C between graphs; what is enqueued ends first
      try {
        options.poll(options.progress_ctx);
      } catch (...) {
        finish_unless_capturing(stream);
        throw;
      }
    }
    std::vector<int64_t> negative;
    try {
      negative = solve_device_matrix(batch.graph(b), PredMatrix{}, opt, device, stream);
    } catch (const Error& e) {
      // a lower graph's negative cycle goes before this graph's input error
      const bool input =
          dynamic_cast<const ValueError*>(&e) || dynamic_cast<const OverflowError*>(&e);
      if (input && found.graph >= 0) return found;
      rethrow_for_graph(std::current_exception(), b);
    }
    if (!negative.empty() && found.graph < 0) found = BatchNegative{b, std::move(negative)};
  }
  return found;
}

void raise_batch_negative(const BatchNegative& found, int64_t n) {
  if (found.graph < 0) return;
  try {
    check_negative_cycles(found.vertices, n);
  } catch (...) {
    rethrow_for_graph(std::current_exception(), found.graph);
  }
}

}  // namespace
}  // namespace cuda_detail

void solve_cuda(Matrix dist, PredMatrix pred, const Options& options, int device, void* stream,
                const std::vector<int>& helper_devices) {
  using namespace cuda_detail;
  check_views(dist, pred);
  if (dist.n == 0) return;
  DeviceGuard guard(device);
  const Options opt = with_interrupt_polls(options, dist.n, options.check_negative_cycles);
  std::vector<int> helpers;
  if (!helper_devices.empty()) {  // each helper's copy has rows on 128-byte lines (enqueue_split)
    const int es = dtype_size(dist.dtype);
    std::ostringstream what;
    what << "an n=" << dist.n << " " << dtype_name(dist.dtype) << " solve";
    // A stream in capture (torch.cuda.graph) solves on its own GPU: the helpers' streams, their
    // pool buffers and their frees after the gather would not join the caller's capture.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    APSP_CUDA_CHECK(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture));
    helpers = split_helpers(device, helper_devices, dist.n, pred.data != nullptr,
                            uint64_t(dist.n) * uint64_t(working_ld(dist.n, es)) * uint64_t(es),
                            what.str(),
                            capture == cudaStreamCaptureStatusNone
                                ? nullptr
                                : "the caller's stream is being captured into a CUDA graph");
  }
  const std::vector<int64_t> negative = solve_device_matrix(
      dist, pred, opt, device, static_cast<cudaStream_t>(stream), helpers);
  check_negative_cycles(negative, dist.n);
}

void solve_cuda_host(Matrix input, Matrix dist, PredMatrix pred, const Options& caller_options,
                     int device, const std::vector<int>& helper_devices) {
  using namespace cuda_detail;
  const Options options = with_interrupt_polls(caller_options, dist.n, true);
  check_views(input, PredMatrix{});
  check_views(dist, pred);
  if (input.n != dist.n || input.dtype != dist.dtype)
    throw ValueError("the input and output matrices differ in n or dtype");
  if (dist.n == 0) return;
  DeviceGuard guard(device);
  const int64_t n = dist.n;
  const int es = dtype_size(dist.dtype);
  const int64_t dev_ld = working_ld(n, es);
  const uint64_t mat_bytes = uint64_t(n) * uint64_t(dev_ld) * uint64_t(es);
  const uint64_t pred_bytes = pred.data ? uint64_t(n) * uint64_t(n) * 4 : 0;
  std::ostringstream what;
  what << "an n=" << n << " " << dtype_name(dist.dtype) << " solve"
       << (pred.data ? " with predecessors" : "");
  require_device_memory(mat_bytes + device_extra_bytes(n, pred.data != nullptr), what.str());
  const std::vector<int> helpers =
      split_helpers(device, helper_devices, n, pred.data != nullptr, mat_bytes, what.str());
  Trace trace;
  OwnStream stream;
  DeviceBuffer dbuf(mat_bytes);
  std::unique_ptr<DeviceBuffer> pbuf;
  if (pred.data) pbuf = std::make_unique<DeviceBuffer>(pred_bytes);
  trace("allocate");
  Matrix dev{dbuf.ptr, n, dev_ld, dist.dtype};
  PredMatrix dpred{pbuf ? static_cast<int32_t*>(pbuf->ptr) : nullptr, n};
  const bool is_output = dist.data != input.data;
  // A solve split over several GPUs uploads first (enqueue_split copies the rows out from here).
  const Tiles arriving =
      helpers.empty() ? arriving_tiles(input, options, pred.data != nullptr) : Tiles::small;
  if (arriving == Tiles::small) {
    // Ctrl-C between the upload's chunks too (2.4 GB of float32 took 1 s beside other work)
    std::function<void()> poll;
    if (options.progress && options.poll) poll = [&] { options.poll(options.progress_ctx); };
    upload_matrix(dbuf.ptr, dev_ld, input.data, n, input.ld, es, stream.s, poll);
    trace("upload");
    solve_and_download(
        dev, dpred, dist, pred, is_output,
        [&] { return solve_device_matrix(dev, dpred, options, device, stream.s, helpers); },
        stream.s, trace);
    return;
  }
  // Solved while it arrives (arriving_tiles): the copies on a stream of their own.
  OwnStream copy;
  SolveScratch sc;
  std::unique_ptr<Progress> progress;
  with_dtype(dist.dtype, [&](auto zero) {
    upload_and_enqueue_arriving<decltype(zero)>(input, dev, options, device, stream.s, copy.s,
                                                arriving, sc, progress);
  });
  trace("upload");  // the rounds of the rows in go on meanwhile
  solve_and_download(
      dev, dpred, dist, pred, is_output,
      [&] {
        if (progress) progress->finish();
        // The input checks of the round loop's path, after the solve here: the input is left as
        // it was, and nothing is downloaded, when one fails.
        if (options.check_input)
          check_input_stats(dist, read_stats(sc.st, options, n, stream.s).input);
        return read_negative(sc, n, stream.s);
      },
      stream.s, trace);
}

void solve_cuda_sparse_host(const CooGraph& graph, Matrix dist, PredMatrix pred,
                            const Options& caller_options, int device,
                            const std::vector<int>& helper_devices) {
  using namespace cuda_detail;
  const Options options = with_interrupt_polls(caller_options, dist.n, true);
  check_views(dist, pred);
  const int64_t n = dist.n, nnz = graph.nnz;
  if (graph.n != n || graph.dtype != dist.dtype)
    throw ValueError("the sparse graph and the output matrix differ in n or dtype");
  if (nnz < 0 || (nnz > 0 && (!graph.rows || !graph.cols || !graph.values)))
    throw ValueError("the sparse graph has nnz=" + std::to_string(nnz) + " but no entries");
  for (int64_t e = 0; e < nnz; ++e)  // the scatter writes where the indices say: check them all
    if (graph.rows[e] < 0 || graph.rows[e] >= n || graph.cols[e] < 0 || graph.cols[e] >= n)
      throw ValueError("sparse entry " + std::to_string(e) + " (" + std::to_string(graph.rows[e]) +
                       ", " + std::to_string(graph.cols[e]) + ") is outside the " +
                       std::to_string(n) + " x " + std::to_string(n) + " matrix");
  if (n == 0) return;
  DeviceGuard guard(device);
  const uint64_t es = uint64_t(dtype_size(dist.dtype));
  const int64_t dev_ld = working_ld(n, int(es));
  const uint64_t mat_bytes = uint64_t(n) * uint64_t(dev_ld) * es;
  const uint64_t pred_bytes = pred.data ? uint64_t(n) * uint64_t(n) * 4 : 0;
  const uint64_t edge_bytes = uint64_t(nnz) * (16 + es);
  std::ostringstream what;
  what << "an n=" << n << " " << dtype_name(dist.dtype) << " sparse solve with " << nnz << " edges"
       << (pred.data ? " and predecessors" : "");
  require_device_memory(mat_bytes + edge_bytes + device_extra_bytes(n, pred.data != nullptr),
                        what.str());
  const std::vector<int> helpers =
      split_helpers(device, helper_devices, n, pred.data != nullptr, mat_bytes, what.str());
  OwnStream stream;
  DeviceBuffer dbuf(mat_bytes);
  std::unique_ptr<DeviceBuffer> pbuf;
  if (pred.data) pbuf = std::make_unique<DeviceBuffer>(pred_bytes);
  {
    AsyncBuffer ebuf(std::max<uint64_t>(edge_bytes, 1), stream.s);  // freed in stream order
    auto* rows = static_cast<int64_t*>(ebuf.ptr);
    int64_t* cols = rows + nnz;
    void* values = cols + nnz;
    APSP_CUDA_CHECK(cudaMemcpyAsync(rows, graph.rows, size_t(nnz) * 8, cudaMemcpyHostToDevice, stream.s));
    APSP_CUDA_CHECK(cudaMemcpyAsync(cols, graph.cols, size_t(nnz) * 8, cudaMemcpyHostToDevice, stream.s));
    APSP_CUDA_CHECK(cudaMemcpyAsync(values, graph.values, size_t(nnz) * es, cudaMemcpyHostToDevice,
                                    stream.s));
    with_dtype(dist.dtype, [&](auto zero) {
      using T = decltype(zero);
      const dim3 grid(unsigned((n + 255) / 256), unsigned(std::min<int64_t>(n, 8192)));
      fill_kernel<T><<<grid, 256, 0, stream.s>>>(static_cast<T*>(dbuf.ptr), n, dev_ld,
                                                 Semiring<T>::inf());
      APSP_CUDA_CHECK_LAUNCH("fill_kernel");
      if (nnz > 0) {
        scatter_kernel<T><<<unsigned(std::min<int64_t>((nnz + 255) / 256, 65535)), 256, 0, stream.s>>>(
            static_cast<T*>(dbuf.ptr), dev_ld, rows, cols, static_cast<const T*>(values), nnz);
        APSP_CUDA_CHECK_LAUNCH("scatter_kernel");
      }
    });
  }
  Matrix dev{dbuf.ptr, n, dev_ld, dist.dtype};
  PredMatrix dpred{pbuf ? static_cast<int32_t*>(pbuf->ptr) : nullptr, n};
  Trace trace;
  solve_and_download(
      dev, dpred, dist, pred, true,
      [&] { return solve_device_matrix(dev, dpred, options, device, stream.s, helpers); },
      stream.s, trace);
}

void solve_cuda_batch(const Batch& dist, const Options& options, int device, void* stream) {
  using namespace cuda_detail;
  check_batch(dist);
  if (dist.count == 0 || dist.first.n == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  raise_batch_negative(solve_batch_on_stream(dist, options, device, false, s), dist.first.n);
}

void solve_cuda_batch_host(const Batch& input, const Batch& dist, const Options& options,
                           int device) {
  using namespace cuda_detail;
  check_batch(input);
  check_batch(dist);
  if (input.count != dist.count || input.first.n != dist.first.n ||
      input.first.dtype != dist.first.dtype)
    throw ValueError("the input and output batches differ in count, n or dtype");
  const int64_t n = dist.first.n, count = dist.count;
  if (count == 0 || n == 0) return;
  DeviceGuard guard(device);
  const int es = dtype_size(dist.first.dtype);
  // Rows on 128-byte lines, as one host solve's working matrix (working_ld): the same plans.
  const int64_t dev_ld = working_ld(n, es);
  const uint64_t graph_bytes = uint64_t(n) * uint64_t(dev_ld) * uint64_t(es);
  std::ostringstream what;
  what << "a batch of " << count << " n=" << n << " " << dtype_name(dist.first.dtype) << " graphs";
  const uint64_t stats_bytes = uint64_t(count) * (sizeof(DeviceStats) + 8 * n) + sizeof(BatchFold) +
                               (n > ClusterShape::max_n ? device_extra_bytes(n, false) : 0);
  require_device_memory(uint64_t(count) * graph_bytes + stats_bytes, what.str());
  OwnStream stream;
  DeviceBuffer dbuf(size_t(count) * graph_bytes);
  const Batch dev{Matrix{dbuf.ptr, n, dev_ld, dist.first.dtype}, count, n * dev_ld};
  // Host graphs whose rows lie evenly (stride n * ld) travel as one matrix of count * n rows.
  auto copies = [&](const Batch& host) {
    return host.stride == n * host.first.ld || count == 1 ? int64_t(1) : count;
  };
  auto rows = [&](const Batch& host) { return copies(host) == 1 ? count * n : n; };
  std::function<void()> poll;  // Ctrl-C between the upload's chunks
  if (options.poll) poll = [&] { options.poll(options.progress_ctx); };
  for (int64_t b = 0; b < copies(input); ++b)
    upload_matrix(static_cast<char*>(dbuf.ptr) + size_t(b) * graph_bytes, dev_ld,
                  input.graph(b).data, n, input.first.ld, es, stream.s, poll, rows(input));
  const BatchNegative found = solve_batch_on_stream(dev, options, device, true, stream.s);
  for (int64_t b = 0; b < copies(dist); ++b)
    download_matrix(dist.graph(b).data, dist.first.ld,
                    static_cast<char*>(dbuf.ptr) + size_t(b) * graph_bytes, n, dev_ld, es,
                    stream.s, rows(dist));
  raise_batch_negative(found, n);
}

}  // namespace apsp
