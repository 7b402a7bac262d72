// CUDA engine kernels, templated on the dtype T and the tile shape. Every update goes through
// Semiring<T>::relax / relax_pred (src/core/semiring.hpp). No padding copies: ragged tiles and any
// leading dimension are handled here (TMA copies of interior tiles and zero-filled 16-byte copies
// of edge tiles where the matrix is aligned, clamped indices elsewhere: a duplicated row, column
// or pivot is harmless, min-plus is idempotent) and by guarding stores. Not for: dispatch or the
// round loop (engine.cu), host staging.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/contract.hpp"
#include "core/semiring.hpp"
#include "cuda/tagged.cuh"

namespace apsp::cuda_detail {

// Programmatic dependent launch (engine.cu's `launch` and enqueue_flow, sm_90): the round loop's
// kernels and the flow kernel may be launched while the kernel before them on the stream is still
// running. Each waits here until that kernel has finished and its writes are visible, before
// touching memory, and then lets the next one launch, whose blocks wait in turn. Launched without
// the attribute, both are no-ops.
__device__ __forceinline__ void let_next_grid_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
  let_next_grid_launch();
}

// ---- statistics, rules, finalize ---------------------------------------------------------------
struct DeviceStats {
  unsigned long long first_nan;      // ULLONG_MAX = none
  unsigned long long first_neg_inf;  // ULLONG_MAX = none
  unsigned long long max_abs_float;  // bits of a non-negative double (orders like the value)
  unsigned long long max_abs_int;
  unsigned long long negative_count;  // vertices with a negative diagonal after the solve
  unsigned long long nonpositive;     // 1 if an off-diagonal weight is 0, 2 if any weight < 0
  unsigned long long nonintegral;     // floats: 1 if a finite off-diagonal weight is not an integer
  unsigned long long not_closer;      // argmin plan: 1 if a predecessor is not strictly closer
  unsigned long long negative_diagonal;  // tagged plan on hop-scaled keys: 1 if a d[i][i] < 0
};

__device__ __forceinline__ unsigned long long warp_min_u64(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w < v ? w : v;
  }
  return v;
}
// The minimum of each v[k] over the block, in every thread (a maximum goes in and comes out as
// its complement, ~v). red: K x 32 words of shared memory, free again on return.
template <int K>
__device__ __forceinline__ void block_min_u64(unsigned long long (&v)[K],
                                              unsigned long long (*red)[32]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = int(blockDim.x >> 5);
#pragma unroll
  for (int k = 0; k < K; ++k) v[k] = warp_min_u64(v[k]);
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) red[k][warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) v[k] = warp_min_u64(lane < warps ? red[k][lane] : ~0ull);
  __syncthreads();  // every warp has read red
}

// Scan of rows [row0, row1): nothing written. Grid-stride over rows (blockIdx.y) and columns (x);
// blockIdx.z picks a graph of a batch (`stride` elements apart, each with its own statistics).
template <class T>
__global__ void scan_kernel(const T* __restrict__ d, int64_t n, int64_t ld, int64_t row0,
                            int64_t row1, DeviceStats* st, int64_t stride = 0) {
  using S = Semiring<T>;
  d += int64_t(blockIdx.z) * stride;
  st += blockIdx.z;
  unsigned long long nan_i = ~0ull, ninf_i = ~0ull, mabs = 0, nonpos = 0, nonint = 0;
  for (int64_t i = row0 + blockIdx.y; i < row1; i += gridDim.y) {
    const T* row = d + i * ld;
    for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
         j += int64_t(gridDim.x) * blockDim.x) {
      const T w = row[j];
      const unsigned long long flat = (unsigned long long)(i * n + j);
      // nonpositive: 2 for a negative weight, else 1 for a zero off the diagonal
      auto sign_level = [&] {
        if (w < 0) nonpos = 2;
        else if (i != j && w == 0 && nonpos == 0) nonpos = 1;
      };
      if constexpr (std::is_floating_point_v<T>) {
        if (w != w) {
          nan_i = flat < nan_i ? flat : nan_i;
        } else if (w == -S::inf()) {
          ninf_i = flat < ninf_i ? flat : ninf_i;
        } else if (w != S::inf() && (i != j || w < 0)) {
          sign_level();
          if (i != j && w != floor(w)) nonint = 1;
          const double a = fabs(double(w));
          const unsigned long long bits = (unsigned long long)__double_as_longlong(a);
          mabs = bits > mabs ? bits : mabs;
        }
      } else {
        sign_level();
        if (w < S::inf() && (i != j || w < 0)) {
          const unsigned long long a =
              w < 0 ? 0ull - (unsigned long long)(int64_t(w)) : (unsigned long long)(w);
          mabs = a > mabs ? a : mabs;
        }
      }
    }
  }
  // Block reduction first, then one atomic per statistic per block (the grid is kept small).
  __shared__ unsigned long long red[5][32];
  unsigned long long v[5] = {nan_i, ninf_i, ~mabs, ~nonpos, ~nonint};
  block_min_u64(v, red);
  if (threadIdx.x == 0) {
    if (v[0] != ~0ull) atomicMin(&st->first_nan, v[0]);
    if (v[1] != ~0ull) atomicMin(&st->first_neg_inf, v[1]);
    if (~v[2]) atomicMax(std::is_floating_point_v<T> ? &st->max_abs_float : &st->max_abs_int, ~v[2]);
    if (~v[3]) atomicMax(&st->nonpositive, ~v[3]);
    if (~v[4]) atomicMax(&st->nonintegral, ~v[4]);
  }
}

// A batch's statistics (one DeviceStats a graph: engine.cu, enqueue_batch_launch) folded into one
// BatchFold by one block, so the host reads a few words, not count of them. `worst` holds each
// input field's worst over the graphs: check_input_stats passes it only if it passes every graph
// (its tests are monotone in each field; which graph fails first is then read graph by graph).
// first_negative is the lowest graph whose solve found a negative diagonal.
struct BatchFold {
  DeviceStats worst;
  unsigned long long first_negative;  // ULLONG_MAX = none
};

// One block; every field written (no reset needed).
__global__ void fold_batch_kernel(const DeviceStats* __restrict__ st, int64_t count,
                                  BatchFold* out) {
  __shared__ unsigned long long red[7][32];
  unsigned long long nan_i = ~0ull, ninf_i = ~0ull, mabs_f = 0, mabs_i = 0, neg = ~0ull;
  unsigned long long nonpos = 0, nonint = 0;
  for (int64_t b = threadIdx.x; b < count; b += blockDim.x) {
    const DeviceStats& s = st[b];
    nan_i = s.first_nan < nan_i ? s.first_nan : nan_i;
    ninf_i = s.first_neg_inf < ninf_i ? s.first_neg_inf : ninf_i;
    mabs_f = s.max_abs_float > mabs_f ? s.max_abs_float : mabs_f;
    mabs_i = s.max_abs_int > mabs_i ? s.max_abs_int : mabs_i;
    nonpos = s.nonpositive > nonpos ? s.nonpositive : nonpos;
    nonint = s.nonintegral > nonint ? s.nonintegral : nonint;
    if (s.negative_count != 0 && neg == ~0ull) neg = (unsigned long long)b;  // b rises
  }
  unsigned long long v[7] = {nan_i, ninf_i, ~mabs_f, ~mabs_i, ~nonpos, ~nonint, neg};
  block_min_u64(v, red);
  if (threadIdx.x == 0) {
    DeviceStats w{};
    w.first_nan = v[0];
    w.first_neg_inf = v[1];
    w.max_abs_float = ~v[2];
    w.max_abs_int = ~v[3];
    w.nonpositive = ~v[4];
    w.nonintegral = ~v[5];
    out->worst = w;
    out->first_negative = v[6];
  }
}

template <class T>
__device__ __forceinline__ T edge_rule(T w, bool unweighted) {
  const T inf = Semiring<T>::inf();
  if (w > inf) w = inf;  // integers: anything >= INF is "no edge"
  if (unweighted && w < inf) w = T(1);
  return w;
}

// The weight of (i, j) after the rules, from its input weight w and that of (j, i), wt (read only
// when undirected); ruled_weight reads both from the input (nothing written).
template <class T>
__device__ __forceinline__ T rule_pair(T w, T wt, bool directed, bool unweighted, bool diagonal) {
  w = edge_rule(w, unweighted);
  if (diagonal) return w < T(0) ? w : T(0);
  if (directed) return w;
  const T t = edge_rule(wt, unweighted);
  return w < t ? w : t;
}
template <class T>
__device__ __forceinline__ T ruled_weight(const T* __restrict__ d, int64_t ld, bool directed,
                                          bool unweighted, int64_t i, int64_t j) {
  const bool one = directed || i == j;
  return rule_pair(d[i * ld + j], one ? T(0) : d[j * ld + i], directed, unweighted, i == j);
}
// Rules: clamp, unweighted, symmetric min (directed=false), diagonal min(w, 0), predecessor init,
// exactly as the CPU engine's apply_rules; with predecessors also the hop counts of the
// (length, hops) step (n x n, compact: 0 on the diagonal, 1 elsewhere, as the CPU's solve_pred).
// Element (i, j); when undirected the i<j element owns both (i, j) and (j, i). Returns the value
// written to (i, j), or 0 where the element of (j, i) writes it.
template <class T>
__device__ __forceinline__ T rules_at(T* __restrict__ d, int64_t n, int64_t ld,
                                         int32_t* __restrict__ p, int64_t pld,
                                         uint32_t* __restrict__ h, bool directed, bool unweighted,
                                         int64_t i, int64_t j) {
  const T inf = Semiring<T>::inf();
  if (h) h[i * n + j] = i == j ? 0u : 1u;
  if (directed || i == j) {
    const T w = ruled_weight(d, ld, directed, unweighted, i, j);
    d[i * ld + j] = w;
    if (p) p[i * pld + j] = (i != j && w < inf) ? int32_t(i) : kNoPredecessor;
    return w;
  }
  if (i > j) return T(0);
  const T w = ruled_weight(d, ld, directed, unweighted, i, j);
  d[i * ld + j] = w;
  d[j * ld + i] = w;
  if (p) {
    p[i * pld + j] = w < inf ? int32_t(i) : kNoPredecessor;
    p[j * pld + i] = w < inf ? int32_t(j) : kNoPredecessor;
  }
  return w;
}
// Elementwise kernels over the n x n matrix: x over columns, y strided over rows, launched with
// `elementwise(n)`.
struct Elementwise {
  dim3 block, grid;
};
inline Elementwise elementwise(int64_t n) {
  return {dim3(32, 8), dim3(unsigned((n + 31) / 32), unsigned(std::min<int64_t>((n + 7) / 8, 8192)))};
}
template <class F>
__device__ __forceinline__ void each_element(int64_t n, F&& f) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  for (int64_t i = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; i < n;
       i += int64_t(gridDim.y) * blockDim.y)
    f(i, j);
}

// below_zero (optional, floats): set where a ruled value is not >= 0 (negative, NaN, -inf), for
// the min3 step's choice on the device (minplus_kernel).
template <class T>
__global__ void rules_kernel(T* __restrict__ d, int64_t n, int64_t ld, int32_t* __restrict__ p,
                             int64_t pld, uint32_t* __restrict__ h, bool directed, bool unweighted,
                             unsigned* below_zero) {
  let_next_grid_launch();  // the flow kernel waits for the rules in wait_for_previous_grid
  bool below = false;
  each_element(n, [&](int64_t i, int64_t j) {
    const T w = rules_at(d, n, ld, p, pld, h, directed, unweighted, i, j);
    if constexpr (std::is_floating_point_v<T>) below |= !(w >= T(0));
  });
  if (below && below_zero) atomicOr(below_zero, 1u);
}

// The same rules for a directed solve without predecessors (clamp, unweighted, diagonal
// min(w, 0): each element on its own) in 16-byte groups, rows starting on 16 bytes, a
// grid-stride loop of `rules_rows_grid` blocks over rows [row0, row1). rules_kernel takes one
// element a thread: 6.8 against 3.0 us at n = 1024 (int32, H100; GPU_NOTES.md, twentieth session).
template <class T>
__global__ void rules_rows_kernel(T* __restrict__ d, int64_t n, int64_t ld, int64_t row0,
                                  int64_t row1, bool unweighted, unsigned* below_zero) {
  let_next_grid_launch();  // the flow kernel waits for the rules in wait_for_previous_grid
  constexpr int V = 16 / int(sizeof(T));
  const int64_t per_row = (n + V - 1) / V;
  bool below = false;
  for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < (row1 - row0) * per_row;
       g += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = row0 + g / per_row, j = (g - (i - row0) * per_row) * V;
    T* row = d + i * ld + j;
    auto rule = [&](T w, int64_t col) {
      w = rule_pair(w, T(0), true, unweighted, i == col);
      if constexpr (std::is_floating_point_v<T>) below |= !(w >= T(0));
      return w;
    };
    if (j + V <= n) {
      uint4 x = *reinterpret_cast<const uint4*>(row);
      T v[V];
      memcpy(v, &x, 16);
#pragma unroll
      for (int e = 0; e < V; ++e) v[e] = rule(v[e], j + e);
      memcpy(&x, v, 16);
      *reinterpret_cast<uint4*>(row) = x;
    } else {
      for (int e = 0; j + e < n; ++e) row[e] = rule(row[e], j + e);
    }
  }
  if (below && below_zero) atomicOr(below_zero, 1u);
}
constexpr int kRulesRowsThreads = 256;
inline unsigned rules_rows_grid(int64_t n, int64_t rows, int elem_size) {
  const int64_t groups = rows * ((n + 16 / elem_size - 1) / (16 / elem_size));
  return unsigned(std::min<int64_t>((groups + kRulesRowsThreads - 1) / kRulesRowsThreads, 2048));
}

// Finalize: integers above INF/2 -> INF; predecessors -9999 where unreachable and on the
// diagonal; vertices with a negative diagonal appended to `negative` (order not kept).
// finalize_value: the final value of (i, j) from its solved value w (the one-launch plans store
// it once); finalize_at: in place.
template <class T>
__device__ __forceinline__ T finalize_value(T w, DeviceStats* st, int64_t* negative, int64_t i,
                                            int64_t j) {
  if constexpr (!std::is_floating_point_v<T>) {
    if (w > unreachable_threshold<T>()) w = Semiring<T>::inf();
  }
  if (i == j && w < T(0) && negative) {
    const unsigned long long slot = atomicAdd(&st->negative_count, 1ull);
    negative[slot] = i;
  }
  return w;
}
template <class T>
__device__ __forceinline__ void finalize_at(T* __restrict__ d, int64_t ld, int32_t* __restrict__ p,
                                            int64_t pld, DeviceStats* st, int64_t* negative,
                                            int64_t i, int64_t j) {
  const T v = d[i * ld + j];
  const T w = finalize_value(v, st, negative, i, j);
  if (w != v) d[i * ld + j] = w;
  if (p && (w == Semiring<T>::inf() || i == j)) p[i * pld + j] = kNoPredecessor;
}
template <class T>
__global__ void finalize_kernel(T* __restrict__ d, int64_t n, int64_t ld, int32_t* __restrict__ p,
                                int64_t pld, DeviceStats* st, int64_t* negative) {
  each_element(n, [&](int64_t i, int64_t j) { finalize_at(d, ld, p, pld, st, negative, i, j); });
}

// ---- values in another dtype's kernels (engine.cu) and the tagged plan's (tagged.cuh) ---------
// In place, after the rules: w -> w as T, shifted left by Tags::bits for the tagged plan; "no edge"
// -> T's (or Tags') infinity. V is the matrix's dtype: T itself (tagged plan), or a float dtype of
// T's size whose weights are all integers (the scan checked that every path length is exact in
// both), which runs its integer twin's plan. Where `scale` > 0 (the tagged plan of integer weights
// with a zero or a negative one, tagged.cuh), the key of an edge is w * scale + 1, of the diagonal
// w * scale: a path's key is its length times scale plus its hop count. A float diagonal below
// zero (a negative cycle, the one weight the scan does not require to be whole) is rounded down,
// so that it stays below zero.
template <class V, class T, bool Tagged>
__global__ void pack_kernel(void* __restrict__ d, int64_t n, int64_t ld, int64_t scale) {
  static_assert(sizeof(V) == sizeof(T), "in place: same element size");
  constexpr T unit = T(1) << (Tagged ? Tags<T>::bits : 0);
  const T inf = Tagged ? Tags<T>::inf : Semiring<T>::inf();
  each_element(n, [&](int64_t i, int64_t j) {
    const V w = static_cast<V*>(d)[i * ld + j];
    const bool none =
        std::is_floating_point_v<V> ? w == Semiring<V>::inf() : w >= V(Tags<T>::no_edge);
    T x;
    if constexpr (std::is_floating_point_v<V>)
      x = T(floor(w));
    else
      x = T(w);
    if (scale > 0) x = x * T(scale) + T(i != j);
    static_cast<T*>(d)[i * ld + j] = none ? inf : T(x * unit);
  });
}

// Before finalize: back to plain values of V (V's "no edge" where no path). On hop-scaled keys
// (`scale` > 0) negative lengths can take a pair without a path below "no edge", but never below
// half of it (tagged.cuh); the length is the key divided by scale, rounded down; a diagonal below
// zero is flagged in st->negative_diagonal for resolve_kernel.
template <class T, class V, bool Tagged>
__global__ void unpack_kernel(void* __restrict__ d, int64_t n, int64_t ld, int64_t scale,
                              DeviceStats* st) {
  constexpr int shift = Tagged ? Tags<T>::bits : 0;
  const T inf = Tagged ? Tags<T>::inf : Semiring<T>::inf();
  each_element(n, [&](int64_t i, int64_t j) {
    const T w = static_cast<T*>(d)[i * ld + j];
    V& out = static_cast<V*>(d)[i * ld + j];
    if (scale > 0 ? w > inf / 2 : w >= inf) {
      out = Semiring<V>::inf();
      return;
    }
    T x = w >> shift;  // the tags' bits are clear here
    if (scale > 0) {
      const T q = x / T(scale);
      x = q * T(scale) > x ? q - 1 : q;
      if (i == j && x < 0) st->negative_diagonal = 1;
    }
    out = V(x);
  });
}

// Rows [k0, k0 + kw), every column: add the tag kk + 1 to row k0 + kk, or take it off again.
template <class T>
__global__ void tags_rows_kernel(T* __restrict__ d, int64_t n, int64_t ld, int64_t k0, bool on) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  T* x = d + (k0 + blockIdx.y) * ld + j;
  *x = on ? *x + T(blockIdx.y + 1) : *x & ~Tags<T>::mask;
}

// ---- phase 1: closure of the pivot tile --------------------------------------------------------
// One predecessor step: the (length, hops) step where Hops, else strict improvement (the argmin
// plan, positive weights: float chains are checked afterwards, engine.cu).
template <bool Hops, class T>
__device__ __forceinline__ void relax_step(T& c, int32_t& pc, uint32_t& hc, T a, T b, int32_t pb,
                                           uint32_t ha, uint32_t hb) {
  if constexpr (Hops) {
    relax_pred(c, pc, hc, a, b, pb, ha, hb);
  } else {
    const T s = a + b;
    if (s < c) {
      c = s;
      pc = pb;
    }
  }
}

// With predecessors: (K/E)^2 threads; thread (ty, tx) keeps elements (ty + R*a, tx + R*b),
// R = K/E, with their predecessors and hop counts in registers (out-of-range ones at INF). Row k
// and column k of the tile travel through double-buffered shared rows, so each pivot step costs
// one barrier and no thread reads what another writes in the same step.
template <class T, int K, int E, bool Hops>
__device__ __forceinline__ void close_tile_pred(T (&c)[E][E], int32_t (&pc)[E][E],
                                                uint32_t (&hc)[E][E], int kw) {
  constexpr int R = K / E;
  __shared__ T row_buf[2][K];
  __shared__ T col_buf[2][K];
  __shared__ int32_t prow_buf[2][K];
  __shared__ uint32_t hrow_buf[2][K];  // hops of row k / column k
  __shared__ uint32_t hcol_buf[2][K];
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  auto publish = [&](int k, int buf) {
#pragma unroll
    for (int a = 0; a < E; ++a)
      if (ty + R * a == k)
#pragma unroll
        for (int b = 0; b < E; ++b) {
          row_buf[buf][tx + R * b] = c[a][b];
          prow_buf[buf][tx + R * b] = pc[a][b];
          if constexpr (Hops) hrow_buf[buf][tx + R * b] = hc[a][b];
        }
#pragma unroll
    for (int b = 0; b < E; ++b)
      if (tx + R * b == k)
#pragma unroll
        for (int a = 0; a < E; ++a) {
          col_buf[buf][ty + R * a] = c[a][b];
          if constexpr (Hops) hcol_buf[buf][ty + R * a] = hc[a][b];
        }
  };
  publish(0, 0);
  __syncthreads();
  for (int k = 0; k < kw; ++k) {
    const int buf = k & 1;
    T av[E], bv[E];
#pragma unroll
    for (int a = 0; a < E; ++a) av[a] = col_buf[buf][ty + R * a];
#pragma unroll
    for (int b = 0; b < E; ++b) bv[b] = row_buf[buf][tx + R * b];
#pragma unroll
    for (int a = 0; a < E; ++a)
#pragma unroll
      for (int b = 0; b < E; ++b)
        relax_step<Hops>(c[a][b], pc[a][b], hc[a][b], av[a], bv[b], prow_buf[buf][tx + R * b],
                         Hops ? hcol_buf[buf][ty + R * a] : 0u,
                         Hops ? hrow_buf[buf][tx + R * b] : 0u);
    publish(k + 1, buf ^ 1);
    __syncthreads();
  }
}

// The same closure without predecessors, tuned for latency (phase 1 is the serial part of every
// round): thread (ty, tx) keeps the contiguous E x E block (E*ty + a, E*tx + b), so its pivot row
// and column values are E contiguous shared elements (vector loads), and the k loop is unrolled
// by E so that the published row/column of the next step is a compile-time register. It runs
// whole groups of E steps: the steps past kw go through INF rows and columns and change nothing.
// About 3x fewer instructions per step than the strided layout (ncu: 89 per warp and step).
// Between two barriers a thread updates the row and column that the next step publishes and
// publishes them; 4-byte types leave the step's other updates for after the barrier, where they
// fill the next step's shared-load latency (each element still takes the steps in order). Alone
// on an H100 (benchmarks/GPU_NOTES.md): int32 75.6 -> 66.1 ns a step at K = 64, 49.7 -> 44.7 at
// K = 32, float32 85.9 -> 73.3; int64 got slower (221 -> 225) and float64 solves too, so 8-byte
// types keep every update before the barrier. mbarriers (arrive after publishing, wait before
// loading) were slower than either: 90 ns at K = 64.
// Bar = 0: the whole block closes the tile; Bar > 0: threads 0 .. (K/E)^2 - 1 do, meeting at named
// barrier Bar, while the rest of the block does other work.
template <class F, int... S>
__device__ __forceinline__ void each_step(F&& f, std::integer_sequence<int, S...>) {
  (f(std::integral_constant<int, S>{}), ...);
}
// The closures' barrier: the whole block (Bar = 0), else named barrier Bar over Threads threads.
template <int Bar, int Threads>
__device__ __forceinline__ void closure_sync() {
  if constexpr (Bar == 0)
    __syncthreads();
  else
    asm volatile("bar.sync %0, %1;\n" ::"n"(Bar), "n"(Threads) : "memory");
}
template <class T, int K, int E, int Bar = 0>
__device__ __forceinline__ void close_tile_fast(T (&c)[E][E], int kw) {
  constexpr int R = K / E;
  auto sync = closure_sync<Bar, R * R>;
  static_assert(E % 2 == 0, "the double buffer alternates within a group of E steps");
  __shared__ __align__(16) T row_buf[2][K];
  __shared__ __align__(16) T col_buf[2][K];
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  auto publish = [&](int q, auto s, int buf) {  // row and column E*q + s
    if (ty == q)
#pragma unroll
      for (int b = 0; b < E; ++b) row_buf[buf][E * tx + b] = c[decltype(s)::value][b];
    if (tx == q)
#pragma unroll
      for (int a = 0; a < E; ++a) col_buf[buf][E * ty + a] = c[a][decltype(s)::value];
  };
  // A step (pivot column values av, row values bv) on every element outside row and column x
  // of the block (x = -1: on every element).
  auto relax_outside = [&](const T(&av)[E], const T(&bv)[E], int x) {
#pragma unroll
    for (int a = 0; a < E; ++a)
#pragma unroll
      for (int b = 0; b < E; ++b)
        if (a != x && b != x) c[a][b] = Semiring<T>::relax(c[a][b], av[a], bv[b]);
  };
  T pa[E], pb[E];  // the previous step's pivot column and row values, for its deferred updates
  auto deferred = [&](int x) { relax_outside(pa, pb, x); };  // x: the row and column it published
  constexpr bool defer = sizeof(T) == 4;
  auto step = [&](int q, auto s, auto after_first) {
    // Step E*q + S publishes row/column x = S + 1 of the block (0 of the next group); the
    // previous step published x = S.
    constexpr int S = decltype(s)::value, buf = S & 1;
    T av[E], bv[E];
#pragma unroll
    for (int a = 0; a < E; ++a) av[a] = col_buf[buf][E * ty + a];
#pragma unroll
    for (int b = 0; b < E; ++b) bv[b] = row_buf[buf][E * tx + b];
    if constexpr (defer) {
      constexpr int x = (S + 1) % E;
      if constexpr (decltype(after_first)::value) deferred(S);
#pragma unroll
      for (int b = 0; b < E; ++b) c[x][b] = Semiring<T>::relax(c[x][b], av[x], bv[b]);
#pragma unroll
      for (int a = 0; a < E; ++a)
        if (a != x) c[a][x] = Semiring<T>::relax(c[a][x], av[a], bv[x]);
#pragma unroll
      for (int e = 0; e < E; ++e) pa[e] = av[e], pb[e] = bv[e];
    } else {
      relax_outside(av, bv, -1);
    }
    if constexpr (S + 1 < E)
      publish(q, std::integral_constant<int, S + 1>{}, buf ^ 1);
    else
      publish(q + 1, std::integral_constant<int, 0>{}, buf ^ 1);
    sync();
  };
  publish(0, std::integral_constant<int, 0>{}, 0);
  sync();
  const int groups = (kw + E - 1) / E;
  if constexpr (defer) {  // group 0 (no previous step) unrolled apart; it runs even at kw = 0
    each_step([&](auto s) { step(0, s, std::bool_constant<(decltype(s)::value > 0)>{}); },
              std::make_integer_sequence<int, E>{});
    for (int q = 1; q < groups; ++q)
      each_step([&](auto s) { step(q, s, std::true_type{}); }, std::make_integer_sequence<int, E>{});
    deferred(0);  // the last step published x = 0
  } else {
    for (int q = 0; q < groups; ++q)
      each_step([&](auto s) { step(q, s, std::false_type{}); }, std::make_integer_sequence<int, E>{});
  }
}

// The same closure two pivot steps a barrier (the cluster plan's 32-wide int32 pivots).
// Rows k and k + 1 and columns k and k + 1, as they are before step k, are published together;
// every thread forms row k + 1 and column k + 1 after step k itself (the relax their owners
// apply, so the same values bit for bit) and takes both steps. The rows and columns that the
// next pair publishes are updated before the barrier, the other 4 elements after it, as in
// close_tile_fast (8-byte types: every update before it). Alone on an H100
// (benchmarks/GPU_NOTES.md, twenty-sixth session): K = 32, 64 threads, int32 44.0 -> 37.8 ns a
// step, float32 48.3 -> 43.6 (but a whole float32 solve read 0.2 us slower); at K = 64 (256
// threads) 7% slower, the 25% more updates before each barrier costing more than the barriers
// saved; 8-byte types 14-16% slower.
template <class T, int K, int E, int Bar = 0>
__device__ __forceinline__ void close_tile_pair(T (&c)[E][E], int kw) {
  static_assert(E % 4 == 0, "two pairs a group of E steps: the double buffer alternates inside");
  constexpr int R = K / E;
  auto sync = closure_sync<Bar, R * R>;
  __shared__ __align__(16) T row_buf[2][2][K];  // [buffer][row k, row k + 1][column]
  __shared__ __align__(16) T col_buf[2][2][K];
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  auto publish = [&](int q, auto s, int buf) {  // rows and columns E*q + S, E*q + S + 1
    constexpr int S = decltype(s)::value;
    if (ty == q)
#pragma unroll
      for (int b = 0; b < E; ++b) {
        row_buf[buf][0][E * tx + b] = c[S][b];
        row_buf[buf][1][E * tx + b] = c[S + 1][b];
      }
    if (tx == q)
#pragma unroll
      for (int a = 0; a < E; ++a) {
        col_buf[buf][0][E * ty + a] = c[a][S];
        col_buf[buf][1][E * ty + a] = c[a][S + 1];
      }
  };
  // Steps k and k + 1 on one element: column values a0, a1, row values b0, b1.
  auto both = [](T v, T a0, T b0, T a1, T b1) {
    return Semiring<T>::relax(Semiring<T>::relax(v, a0, b0), a1, b1);
  };
  T pa[E], pb[E], pa1[E], pb1[E];  // the previous pair's columns and rows
  constexpr bool defer = sizeof(T) == 4;
  auto deferred = [&](int x) {  // its updates outside the rows and columns x, x + 1 it published
#pragma unroll
    for (int a = 0; a < E; ++a)
#pragma unroll
      for (int b = 0; b < E; ++b)
        if (a != x && a != x + 1 && b != x && b != x + 1)
          c[a][b] = both(c[a][b], pa[a], pb[b], pa1[a], pb1[b]);
  };
  auto pair = [&](int q, auto s, auto after_first) {  // steps E*q + S, E*q + S + 1
    constexpr int S = decltype(s)::value, buf = (S / 2) & 1;
    constexpr int x = (S + 2) % E;  // the next pair publishes rows and columns x, x + 1
    T ak[E], ak1[E], bk[E], bk1[E];
#pragma unroll
    for (int a = 0; a < E; ++a) {
      ak[a] = col_buf[buf][0][E * ty + a];
      ak1[a] = col_buf[buf][1][E * ty + a];
    }
#pragma unroll
    for (int b = 0; b < E; ++b) {
      bk[b] = row_buf[buf][0][E * tx + b];
      bk1[b] = row_buf[buf][1][E * tx + b];
    }
    const T d10 = col_buf[buf][0][E * q + S + 1];  // element (k + 1, k)
    const T d01 = row_buf[buf][0][E * q + S + 1];  // element (k, k + 1)
    if constexpr (defer && decltype(after_first)::value) deferred(S);
    T r1[E], c1[E];  // row k + 1 and column k + 1 after step k
#pragma unroll
    for (int b = 0; b < E; ++b) r1[b] = Semiring<T>::relax(bk1[b], d10, bk[b]);
#pragma unroll
    for (int a = 0; a < E; ++a) c1[a] = Semiring<T>::relax(ak1[a], ak[a], d01);
#pragma unroll
    for (int a = 0; a < E; ++a)
#pragma unroll
      for (int b = 0; b < E; ++b)
        if (!defer || a == x || a == x + 1 || b == x || b == x + 1)
          c[a][b] = both(c[a][b], ak[a], bk[b], c1[a], r1[b]);
    if constexpr (defer)
#pragma unroll
      for (int e = 0; e < E; ++e) pa[e] = ak[e], pb[e] = bk[e], pa1[e] = c1[e], pb1[e] = r1[e];
    if constexpr (S + 2 < E)
      publish(q, std::integral_constant<int, S + 2>{}, buf ^ 1);
    else
      publish(q + 1, std::integral_constant<int, 0>{}, buf ^ 1);
    sync();
  };
  publish(0, std::integral_constant<int, 0>{}, 0);
  sync();
  const int groups = (kw + E - 1) / E;
  auto pairs = std::make_integer_sequence<int, E / 2>{};
  each_step([&](auto p) {  // group 0 unrolled apart: its first pair has no previous one
    constexpr int P = decltype(p)::value;
    pair(0, std::integral_constant<int, 2 * P>{}, std::bool_constant<(P > 0)>{});
  }, pairs);
  for (int q = 1; q < groups; ++q)
    each_step([&](auto p) {
      pair(q, std::integral_constant<int, 2 * decltype(p)::value>{}, std::true_type{});
    }, pairs);
  if constexpr (defer) deferred(0);  // the last pair published x = 0
}

// Phase 1: one block loads the pivot tile, closes it and stores it (with predecessors: and their
// hop counts where Hops). Its own kernel, or one block of pivot_panels_kernel. The matrix holds
// S, the closure runs on T: the same type, or the narrow plan's 16-bit lengths closed as int32
// (narrow.cuh: every length <= its INF, so every sum fits and each result fits S again).
template <class T, int K, int E, bool Pred, bool Hops = Pred, class S = T>
__device__ __forceinline__ void close_and_store_pivot(S* __restrict__ d, int64_t ld,
                                                      int32_t* __restrict__ p, int64_t pld,
                                                      uint32_t* __restrict__ h, int64_t hld,
                                                      int64_t k0, int kw) {
  constexpr int R = K / E;
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  T c[E][E];
  int32_t pc[Pred ? E : 1][Pred ? E : 1];
  uint32_t hc[Pred ? E : 1][Pred ? E : 1];
#pragma unroll
  for (int a = 0; a < E; ++a)
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int i = Pred ? ty + R * a : E * ty + a, j = Pred ? tx + R * b : E * tx + b;
      const bool in = i < kw && j < kw;
      c[a][b] = in ? T(d[(k0 + i) * ld + k0 + j]) : Semiring<T>::inf();
      if constexpr (Pred) {
        pc[a][b] = in ? p[(k0 + i) * pld + k0 + j] : kNoPredecessor;
        hc[a][b] = in && Hops ? h[(k0 + i) * hld + k0 + j] : 1u;
      }
    }
  if constexpr (Pred)
    close_tile_pred<T, K, E, Hops>(c, pc, hc, kw);
  else
    close_tile_fast<T, K, E>(c, kw);
#pragma unroll
  for (int a = 0; a < E; ++a)
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int i = Pred ? ty + R * a : E * ty + a, j = Pred ? tx + R * b : E * tx + b;
      if (i < kw && j < kw) {
        d[(k0 + i) * ld + k0 + j] = S(c[a][b]);
        if constexpr (Pred) {
          p[(k0 + i) * pld + k0 + j] = pc[a][b];
          if constexpr (Hops) h[(k0 + i) * hld + k0 + j] = hc[a][b];
        }
      }
    }
}
template <class T, int K, int E, bool Pred, bool Hops = Pred, class S = T>
__global__ void __launch_bounds__((K / E) * (K / E))
    pivot_kernel(S* __restrict__ d, int64_t ld, int32_t* __restrict__ p, int64_t pld,
                 uint32_t* __restrict__ h, int64_t hld, int64_t k0, int kw) {
  wait_for_previous_grid();
  close_and_store_pivot<T, K, E, Pred, Hops, S>(d, ld, p, pld, h, hld, k0, kw);
}

// ---- phases 2 and 3: C = min(C, A (x) B) ------------------------------------------------------
// Tiles are K x K and aligned to the pivot blocks; A = D[ib, k0 : k0+kw], B = D[k0 : k0+kw, jb],
// kw up to 8K (a super-round of up to eight pivot blocks in one pass, engine.cu). Phase 2:
// the pivot row panel, C = D[kb, jb] with A = the closed pivot tile and B = C itself, and the pivot
// column panel, C = D[ib, kb] with A = C and B = the pivot tile. A block reads all of its own tile
// before it writes any of it, so the aliasing is safe. Every other launch updates tiles whose A
// and B it does not write. Which tiles one launch updates is a TileSet:
//   kPanels: row and column block r, without the pivot tile (grid.x = 2 (nb - 1));
//   kBand:   tiles in row or column blocks [b0, b0+bc), outside row/column blocks [e0, e0+ec)
//            (grid.x = bc * others + (others - bc) * bc, others = nb - ec); the excluded and band
//            blocks are adjacent;
//   kRest:   tiles outside row/column blocks [e0, e0+ec) (grid others x others).
// Each set is cut to the tile rows of its window [w0, w1) (every row, w0 = 0 and w1 = nb, but
// where a host input is still arriving: engine.cu: upload_and_enqueue_arriving); a band's own
// rows lie all inside it or all outside, and so does a panel's pivot row. The grids shrink with
// the window (engine.cu: panels, band, rest); with every row they are the ones above.
enum TileKind : int { kPanels = 2, kBand = 3, kRest = 4 };
struct TileSet {
  int kind;
  int ec, bc;       // excluded and band block counts
  int64_t e0, b0;   // first excluded block (kPanels: the round), first band block
  int64_t others;   // nb - ec
  int64_t w0, w1;   // the window of tile rows
};
struct TileCoords {
  int64_t i0, j0;
};
__device__ __forceinline__ int64_t skip(int64_t t, int64_t at, int64_t by) {
  return t + by * (t >= at);
}
// Blocks [x0, x1) inside the window [w0, w1), as [a, b) (empty: a == b).
struct Cut {
  int64_t a, b;
};
__host__ __device__ __forceinline__ Cut window_cut(int64_t w0, int64_t w1, int64_t x0, int64_t x1) {
  const int64_t a = x0 > w0 ? x0 : w0, e = x1 < w1 ? x1 : w1;
  return {a, e > a ? e : a};
}
// Tile rows of the window outside blocks [x0, x1): how many, and the t-th of them.
__host__ __device__ __forceinline__ int64_t window_rows(int64_t w0, int64_t w1, int64_t x0,
                                                        int64_t x1) {
  const Cut c = window_cut(w0, w1, x0, x1);
  return (w1 - w0) - (c.b - c.a);
}
__device__ __forceinline__ int64_t window_row(int64_t t, int64_t w0, int64_t w1, int64_t x0,
                                              int64_t x1) {
  const Cut c = window_cut(w0, w1, x0, x1);
  return skip(w0 + t, c.a, c.b - c.a);
}
__host__ __device__ __forceinline__ bool in_window(int64_t r, int64_t w0, int64_t w1) {
  return r >= w0 && r < w1;
}
// Block indices run backwards over the tiles so that the last tile row and column (ragged when
// K does not divide n, and slower) are scheduled first instead of forming a long tail.
__device__ __forceinline__ TileCoords tile_coords(const TileSet& s, int64_t K) {
  const int64_t x = int64_t(gridDim.x) - 1 - blockIdx.x, y = int64_t(gridDim.y) - 1 - blockIdx.y;
  switch (s.kind) {
    case kPanels: {  // pairs of a row-panel and a column-panel tile while both last
      const int64_t r = s.e0, pr = in_window(r, s.w0, s.w1) ? s.others : 0,
                    pc = window_rows(s.w0, s.w1, r, r + 1), m = pr < pc ? pr : pc;
      const bool column = x < 2 * m ? (x & 1) != 0 : pc > pr;
      const int64_t t = x < 2 * m ? x >> 1 : x - m;
      return column ? TileCoords{window_row(t, s.w0, s.w1, r, r + 1) * K, r * K}
                    : TileCoords{r * K, skip(t, r, 1) * K};
    }
    case kBand: {
      const int64_t first = in_window(s.b0, s.w0, s.w1) ? s.bc * s.others : 0;
      if (x < first) return TileCoords{(s.b0 + x / s.others) * K, skip(x % s.others, s.e0, s.ec) * K};
      const int64_t x2 = x - first;
      const int64_t u0 = s.e0 < s.b0 ? s.e0 : s.b0;
      return TileCoords{window_row(x2 / s.bc, s.w0, s.w1, u0, u0 + s.ec + s.bc) * K,
                        (s.b0 + x2 % s.bc) * K};
    }
    default:
      return TileCoords{window_row(y, s.w0, s.w1, s.e0, s.e0 + s.ec) * K, skip(x, s.e0, s.ec) * K};
  }
}

// One element (4 or 8 bytes) from global to shared memory.
template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem) {
  static_assert(Bytes == 4 || Bytes == 8, "16-byte copies: cp_async_16");
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(Bytes));
}
// 16 bytes of shared memory from the first `bytes` (0..16) at gmem, the rest zero-filled.
__device__ __forceinline__ void cp_async_zfill(void* smem, const void* gmem, int bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ int clamp_bytes(int64_t elems, int size) {  // elems * size in 0..16
  return elems <= 0 ? 0 : elems * size >= 16 ? 16 : int(elems) * size;
}
// 16 bytes to a 32-bit shared-memory address (computed once per tile, offset by immediates).
__device__ __forceinline__ void cp_async_16(unsigned smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// GEMM-shaped min-plus kernel: block tile K x K, thread tile TM x TN, k chunks of BK staged in
// shared memory by cp.async or TMA (STAGES deep). A is kept m-major, rows padded by one 16-byte
// vector (dense under TMA), and read V k-steps at a time as 16-byte vectors (two distinct rows
// per warp: conflict-free where padded); B is k-major and read as 16-byte vectors. Thread
// (ty, tx) owns rows ty + RY*a and column groups (tx + RX*g)*V .. +V.
template <class T, int K, int TM, int TN, int BK, int STAGES, int MINB>
struct Gemm {
  static constexpr int RY = K / TM, RX = K / TN;
  static constexpr int threads = RY * RX;
  static constexpr int tile = K, k_chunk = BK;  // the TMA boxes' sides (engine.cu: gemm_maps)
  static constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte vector
  static constexpr int G = TN / V;                // vector groups per thread
  static constexpr int A_LD = BK + V;
  static constexpr int A_ELEMS = K * A_LD, B_ELEMS = BK * K;
  static constexpr int STAGE_ELEMS = A_ELEMS + B_ELEMS;
  // The stages, then one mbarrier a stage (Mode::Bulk), then ArgminGemm's group bytes.
  static constexpr size_t bars_offset = size_t(STAGES) * STAGE_ELEMS * sizeof(T);
  static constexpr size_t smem_bytes = bars_offset + 8 * STAGES;
  static constexpr int min_blocks = MINB;  // blocks per SM the register budget must allow
  static_assert(TN % V == 0, "TN must be a multiple of the 16-byte vector width");
  static_assert((K * BK) % threads == 0 && (K * BK / V) % threads == 0, "chunk must split evenly");
  static_assert(threads % (BK / V) == 0 && threads % (K / V) == 0, "copies: whole rows per pass");
  static_assert(K % BK == 0 && BK % V == 0, "pivot width must be a multiple of the k chunk");
};

// How a tile is loaded and stored:
//   Interior: a 16-byte-aligned matrix, the tile inside it, kw a multiple of BK: 16-byte copies,
//             no bounds checks.
//   Edge:     a 16-byte-aligned matrix, any tile and kw: 16-byte copies, zero-filled outside the
//             matrix (those rows and columns are never stored) and past kw (B rows past kw are
//             then set to INF, so those k change nothing).
//   Any:      any leading dimension: 1-element copies with clamped indices (a duplicated row,
//             column or pivot is harmless: min-plus is idempotent), guarded stores.
//   Bulk:     as Interior, but each chunk of A and of B is one TMA copy (cp.async.bulk.tensor,
//             GemmMaps) issued by thread 0 and counted on the stage's mbarrier (sm_90). The
//             copies leave the threads' load pipeline and their address math, and rows that
//             straddle 128-byte lines no longer cost more. H100, int32, ms, cp.async / TMA:
//             n = 10000 at ld = 10000 68.7 / 66.1, at ld = 10016 67.6 / 66.0; 16384 290.0 /
//             280.7; float64 10000 200.7 / 197.8 (GPU_NOTES.md, thirty-eighth session). With
//             predecessors, n = 10000: int32 (tagged) 96.6 / 93.3, fractional float32 (argmin)
//             108.8 / 106.3, fractional float64 267.1 / 257.5 (thirty-ninth session).
enum class Mode { Interior, Edge, Any, Bulk };

// The two TMA descriptors of a matrix for the Bulk copies (engine.cu: gemm_maps): A boxes of BK
// columns by K rows, B boxes of K columns by BK rows, each landing dense in its stage. `valid`
// false: no Bulk copies.
struct GemmMaps {
  CUtensorMap a, b;
  int valid;
};

// mbarrier and TMA primitives (sm_90; shared-memory operands as 32-bit shared addresses).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// Makes the initialised mbarriers visible to the TMA unit (the async proxy).
__device__ __forceinline__ void mbar_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::
                   : "memory");
#endif
}
// The box of `map` at (column x, row y) to shared memory at dst, completing on mbarrier bar.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap* map, int x, int y,
                                            unsigned bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
#endif
}

// Which pivot won each element, for the predecessors p[i][j] = "as in pivot row k" (kViaPivot + k,
// resolved after the rounds by resolve_kernel; k = k0 + kk) written before a result is stored:
//   None:   no predecessors.
//   Tags:   (integers only, tagged.cuh) B carries the tags of its pivot rows; a non-zero tag t of
//           the result says kk = t - 1 and is taken off the value.
//   Argmin: (positive weights) the k loop runs in groups of ArgminGroup pivots: each element takes
//           the minimum m of the group's sums and, where m < C, C = m and the group's number goes
//           to a byte per element in shared memory (one predicated store, no register). Per group
//           of 8 pivots that is 18 instructions against the plain step's 16 (float32, whose weights
//           are positive here, takes the group minimum by the min3 step: 15). Every chunk stays in
//           shared memory (STAGES * BK covers the whole k-depth: ArgminGemm), so after the loop
//           each thread finds the pivot of each of its improved elements, one per trip of a loop
//           over a bit mask (a warp runs as many trips as its busiest lane): the first k of the
//           last improving group whose sum is the group's minimum, and the store writes its entry
//           without loading p[k][j]. H100, n = 10000, per super-round: the plain step 1.10 ms; a
//           search of every element slot that any lane of the warp improved and a gather of p[k][j]
//           per improved element 1.80 ms; the search per lane 1.56 ms; and with the entries
//           resolved afterwards 1.54 ms (GPU_NOTES.md).
enum class Track { None, Tags, Argmin };
constexpr int ArgminGroup = 8;
constexpr int32_t kViaPivot = int32_t(1) << 30;  // + k: "as in pivot row k" (n < 2^30)
template <class T, int K, int TM, int TN, int BK, int STAGES, int MINB>
struct ArgminGemm : Gemm<T, K, TM, TN, BK, STAGES, MINB> {
  static constexpr int depth = STAGES * BK;  // the largest kw: no stage is refilled
  static_assert(depth <= 255, "group numbers, then pivots, fit a byte; 255 = none");
  static constexpr size_t group_bytes = size_t(K) * K;
  static constexpr size_t smem_bytes =
      Gemm<T, K, TM, TN, BK, STAGES, MINB>::smem_bytes + group_bytes;  // after the mbarriers
};

template <class T, int K, int TM, int TN, int BK, int STAGES, int MINB, Track Tr, Mode M,
          bool Min3 = false, int H = K, int W = K>
__device__ __forceinline__ void minplus_tile(T* __restrict__ d, int64_t n, int64_t ld,
                                             int32_t* __restrict__ p, int64_t pld, int64_t k0,
                                             int kw, TileCoords tc, T* smem,
                                             const GemmMaps& maps) {
  constexpr bool Tagged = Tr == Track::Tags, Argmin = Tr == Track::Argmin;
  static_assert(!Tagged || std::is_integral_v<T>, "tags live in integer values");
  static_assert(!Min3 || (std::is_same_v<T, float> && Tr != Track::Tags), "min3: float32 only");
  static_assert(!Argmin || BK % ArgminGroup == 0, "argmin tracking: whole groups per chunk");
  using Cfg = Gemm<T, K, TM, TN, BK, STAGES, MINB>;
  constexpr int V = Cfg::V, G = Cfg::G, threads = Cfg::threads;
  // The threads cover the tile's first H rows and W columns (all of it, or an edge strip):
  // thread (ty, tx) owns rows ty + RY*a, a < TR, and column groups (tx + RX*g)*V .. +V.
  constexpr int RX = W / TN, RY = threads / RX, TR = H / RY;
  static_assert(W % TN == 0 && threads % RX == 0 && H % RY == 0 && TR >= 1, "strip mapping");
  static_assert((H == K && W == K) || Tr == Track::None, "edge strips: plain solves only");
  constexpr bool Inside = M == Mode::Interior || M == Mode::Bulk;  // no bounds anywhere
  // A's row pitch in shared memory: padded by one vector (conflict-free reads of two rows a
  // warp), but dense where a TMA box lands (two rows a warp then take two wavefronts).
  constexpr int A_LD = M == Mode::Bulk ? BK : Cfg::A_LD;
  const int tid = threadIdx.x;
  const int tx = tid % RX, ty = tid / RX;
  auto crow = [&](int64_t i) { return M == Mode::Any ? (i < n ? i : n - 1) : i; };
  auto ck = [&](int kk) { return M == Mode::Any ? (kk < kw ? kk : kw - 1) : kk; };

  // Interior copies: thread t copies vector t % AV of A rows t / AV + q * (threads / AV) and
  // vector t % BV of B rows t / BV + q * (threads / BV). Their first sources and shared-memory
  // slots are computed once per tile; per chunk each source is one multiply-add away (IMAD.WIDE,
  // off the ALU pipe that the min-plus step keeps busy) and each slot an immediate offset.
  constexpr int AV = BK / V, BV = K / V;           // 16-byte vectors per A row, per B row
  constexpr int copies = (K * BK / V) / threads;    // per operand per chunk
  const unsigned ut = threadIdx.x;
  const char* a_src = reinterpret_cast<const char*>(d + (tc.i0 + ut / AV) * ld + k0 + (ut % AV) * V);
  const char* b_src = reinterpret_cast<const char*>(d + (k0 + ut / BV) * ld + tc.j0 + (ut % BV) * V);
  const unsigned row_bytes = unsigned(ld) * unsigned(sizeof(T));
  const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const unsigned bars = smem_base + unsigned(Cfg::bars_offset);  // Bulk: one mbarrier a stage
  const unsigned a_slot = smem_base + ((ut / AV) * Cfg::A_LD + (ut % AV) * V) * unsigned(sizeof(T));
  const unsigned b_slot = smem_base + (Cfg::A_ELEMS + (ut / BV) * K + (ut % BV) * V) * unsigned(sizeof(T));

  auto load_chunk = [&](int chunk, int stage) {
    T* As = smem + stage * Cfg::STAGE_ELEMS;
    T* Bs = As + Cfg::A_ELEMS;
    const int kc = chunk * BK;
    if constexpr (M == Mode::Bulk) {
      if (tid == 0) {
        const unsigned stage_at = smem_base + unsigned(stage) * unsigned(Cfg::STAGE_ELEMS * sizeof(T));
        const unsigned bar = bars + 8 * unsigned(stage);
        mbar_expect_tx(bar, unsigned(2 * K * BK * sizeof(T)));
        tma_load_2d(stage_at, &maps.a, int(k0 + kc), int(tc.i0), bar);
        tma_load_2d(stage_at + unsigned(Cfg::A_ELEMS * sizeof(T)), &maps.b, int(tc.j0),
                    int(k0 + kc), bar);
      }
    } else if constexpr (M == Mode::Interior) {
      const unsigned stage_bytes = unsigned(stage) * unsigned(Cfg::STAGE_ELEMS * sizeof(T));
      const char* a = a_src + uint64_t(unsigned(kc)) * sizeof(T);
      const char* b = b_src + uint64_t(unsigned(kc)) * row_bytes;
#pragma unroll
      for (int q = 0; q < copies; ++q)
        cp_async_16(a_slot + stage_bytes + q * (threads / AV) * Cfg::A_LD * unsigned(sizeof(T)),
                    a + uint64_t(unsigned(q * (threads / AV))) * row_bytes);
#pragma unroll
      for (int q = 0; q < copies; ++q)
        cp_async_16(b_slot + stage_bytes + q * (threads / BV) * K * unsigned(sizeof(T)),
                    b + uint64_t(unsigned(q * (threads / BV))) * row_bytes);
    } else if constexpr (M == Mode::Edge) {
#pragma unroll
      for (int q = 0; q < copies; ++q) {
        const int e = tid + q * threads;
        const int m = e / AV, kv = e % AV;
        const T* src = d + (tc.i0 + m) * ld + k0 + kc + kv * V;
        const int bytes = tc.i0 + m < n ? clamp_bytes(kw - kc - kv * V, sizeof(T)) : 0;
        cp_async_zfill(As + m * Cfg::A_LD + kv * V, bytes ? src : d, bytes);
      }
#pragma unroll
      for (int q = 0; q < copies; ++q) {
        const int e = tid + q * threads;
        const int kk = e / BV, cv = e % BV;
        const T* src = d + (k0 + kc + kk) * ld + tc.j0 + cv * V;
        const int bytes = kc + kk < kw ? clamp_bytes(n - tc.j0 - cv * V, sizeof(T)) : 0;
        cp_async_zfill(Bs + kk * K + cv * V, bytes ? src : d, bytes);
      }
    } else {
#pragma unroll 1
      for (int q = 0; q < (K * BK) / threads; ++q) {
        const int e = tid + q * threads;
        const int m = e / BK, kk = e % BK;
        cp_async<sizeof(T)>(As + m * Cfg::A_LD + kk, d + crow(tc.i0 + m) * ld + k0 + ck(kc + kk));
      }
#pragma unroll 1
      for (int q = 0; q < (K * BK) / threads; ++q) {
        const int e = tid + q * threads;
        const int kk = e / K, cc = e % K;
        cp_async<sizeof(T)>(Bs + kk * K + cc, d + (k0 + ck(kc + kk)) * ld + crow(tc.j0 + cc));
      }
    }
  };

  const int chunks = (kw + BK - 1) / BK;
  if constexpr (M == Mode::Bulk) {
    if (tid == 0) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) mbar_init(bars + 8 * s, 1);
      mbar_init_fence();
    }
    __syncthreads();
  }
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < chunks) load_chunk(s, s);
    cp_async_commit();
  }

  // Row a of the thread's C elements: RY * a rows below its first (one multiply-add, as above).
  char* c_first = reinterpret_cast<char*>(d + (tc.i0 + ty) * ld);
  auto c_row = [&](int a) -> T* {
    if constexpr (M == Mode::Any) return d + crow(tc.i0 + ty + RY * a) * ld;
    return reinterpret_cast<T*>(c_first + uint64_t(unsigned(RY * a)) * row_bytes);
  };

  // Argmin: the group number of element e of this thread, 255 where no group improved it.
  unsigned char* group_of = reinterpret_cast<unsigned char*>(smem) + Cfg::smem_bytes + tid;
  if constexpr (Argmin) {
#pragma unroll
    for (int e = 0; e < TR * TN; ++e) group_of[e * threads] = 255;
  }

  T c[TR][TN];
  T m[Argmin ? TR : 1][Argmin ? TN : 1];  // Argmin: the minimum of the current group's sums
#pragma unroll
  for (int a = 0; a < TR; ++a) {
    const int64_t gi = tc.i0 + ty + RY * a;
    const T* row = c_row(a);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int64_t gj = tc.j0 + (tx + RX * g) * V;
      if constexpr (Inside) {
        *reinterpret_cast<uint4*>(&c[a][g * V]) = *reinterpret_cast<const uint4*>(row + gj);
      } else if constexpr (M == Mode::Edge) {
        // Rows and columns outside the matrix are never stored: any value will do.
        if (gi < n && gj + V <= n)
          *reinterpret_cast<uint4*>(&c[a][g * V]) = *reinterpret_cast<const uint4*>(row + gj);
        else
#pragma unroll
          for (int v = 0; v < V; ++v)
            c[a][g * V + v] = gi < n && gj + v < n ? row[gj + v] : Semiring<T>::inf();
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) c[a][g * V + v] = row[crow(gj + v)];
      }
    }
  }

  for (int chunk = 0; chunk < chunks; ++chunk) {
    if constexpr (M == Mode::Bulk)
      mbar_wait(bars + 8 * unsigned(chunk % STAGES), unsigned(chunk / STAGES) & 1);
    else
      cp_async_wait<STAGES - 2>();
    __syncthreads();  // chunk's stage is visible; everyone is done with the stage refilled next
    if constexpr (M == Mode::Edge) {
      const int klim = kw - chunk * BK;
      if (klim < BK) {  // ragged last chunk: B rows past kw become INF, so those k change nothing
        T* Bs = smem + (chunk % STAGES) * Cfg::STAGE_ELEMS + Cfg::A_ELEMS;
        T none = Semiring<T>::inf();
        if constexpr (Tagged) none = Tags<T>::inf;  // no tag bits
        for (int e = klim * K + tid; e < BK * K; e += threads) Bs[e] = none;
        __syncthreads();
      }
    }
    {
      const int next = chunk + STAGES - 1;
      if (next < chunks) load_chunk(next, next % STAGES);
      cp_async_commit();
    }
    const T* As = smem + (chunk % STAGES) * Cfg::STAGE_ELEMS;
    const T* Bs = As + Cfg::A_ELEMS;
#pragma unroll
    for (int k4 = 0; k4 < BK; k4 += V) {
      T av[TR][V];  // V consecutive k of each of the thread's rows: one 16-byte load per row
#pragma unroll
      for (int a = 0; a < TR; ++a) {
        const uint4 u = *reinterpret_cast<const uint4*>(As + (ty + RY * a) * A_LD + k4);
        const T* uv = reinterpret_cast<const T*>(&u);
#pragma unroll
        for (int v = 0; v < V; ++v) av[a][v] = uv[v];
      }
#pragma unroll
      for (int kv = 0; kv < V; kv += Min3 ? 2 : 1) {
        T bv[TN], bw[Min3 ? TN : 1];  // B rows k4 + kv and, for min3, k4 + kv + 1
#pragma unroll
        for (int g = 0; g < G; ++g) {
          const uint4 u = *reinterpret_cast<const uint4*>(Bs + (k4 + kv) * K + (tx + RX * g) * V);
          const T* uv = reinterpret_cast<const T*>(&u);
#pragma unroll
          for (int v = 0; v < V; ++v) bv[g * V + v] = uv[v];
          if constexpr (Min3) {
            const uint4 w =
                *reinterpret_cast<const uint4*>(Bs + (k4 + kv + 1) * K + (tx + RX * g) * V);
            const T* wv = reinterpret_cast<const T*>(&w);
#pragma unroll
            for (int v = 0; v < V; ++v) bw[g * V + v] = wv[v];
          }
        }
#pragma unroll
        for (int a = 0; a < TR; ++a)
#pragma unroll
          for (int b = 0; b < TN; ++b) {
            if constexpr (Min3 && Argmin) {  // the group's minimum, two sums at a time
              if ((k4 + kv) % ArgminGroup == 0)
                m[a][b] = Semiring<T>::relax(av[a][kv] + bv[b], av[a][kv + 1], bw[b]);
              else
                m[a][b] = Semiring<T>::relax2_nonnegative(m[a][b], av[a][kv], bv[b],
                                                           av[a][kv + 1], bw[b]);
            } else if constexpr (Min3) {
              c[a][b] = Semiring<T>::relax2_nonnegative(c[a][b], av[a][kv], bv[b], av[a][kv + 1],
                                                         bw[b]);
            } else if constexpr (Argmin) {  // k4, kv: compile-time after unrolling
              if ((k4 + kv) % ArgminGroup == 0)
                m[a][b] = av[a][kv] + bv[b];
              else
                m[a][b] = Semiring<T>::relax(m[a][b], av[a][kv], bv[b]);
            } else {
              c[a][b] = Semiring<T>::relax(c[a][b], av[a][kv], bv[b]);
            }
          }
      }
      if constexpr (Argmin) {
        if ((k4 + V) % ArgminGroup == 0) {  // the group's last pivot: fold it into C
          const unsigned char q = (unsigned char)((chunk * BK + k4) / ArgminGroup);
#pragma unroll
          for (int a = 0; a < TR; ++a)
#pragma unroll
            for (int b = 0; b < TN; ++b)
              if (m[a][b] < c[a][b]) {
                c[a][b] = m[a][b];
                group_of[(a * TN + b) * threads] = q;
              }
        }
      }
    }
  }
  cp_async_wait<0>();

  // Argmin: each thread finds the winning pivot of just its own improved elements, one per trip
  // of a loop over a bit mask (so a warp runs as many trips as its busiest lane, not one per
  // element slot that any lane improved), and leaves it in the element's byte (0 .. depth - 1).
  // The winner is the first k of the last improving group whose sum is the group's minimum, which
  // is the result (min returns one of its operands; the same FADD recomputes the sums).
  if constexpr (Argmin) {
    static_assert(TR * TN <= 32, "one bit per element");
    unsigned todo = 0;
#pragma unroll
    for (int e = 0; e < TR * TN; ++e) {
      const int a = e / TN, b = e % TN;
      const bool inside = Inside || (tc.i0 + ty + RY * a < n &&
                                                  tc.j0 + (tx + RX * (b / V)) * V + b % V < n);
      if (inside && group_of[e * threads] != 255) todo |= 1u << e;
    }
    while (todo) {
      const int e = __ffs(todo) - 1;
      todo &= todo - 1;
      const int a = e / TN, b = e % TN;
      const int k = group_of[e * threads] * ArgminGroup, kc = k % BK;
      const T* stage = smem + (k / BK) * Cfg::STAGE_ELEMS;
      const T* Ap = stage + (ty + RY * a) * A_LD + kc;  // 16-byte aligned
      const T* Bp = stage + Cfg::A_ELEMS + kc * K + (tx + RX * (b / V)) * V + b % V;
      T av[ArgminGroup];
#pragma unroll
      for (int t = 0; t < ArgminGroup; t += V)
        *reinterpret_cast<uint4*>(&av[t]) = *reinterpret_cast<const uint4*>(Ap + t);
      T best = av[0] + Bp[0];
      int found = 0;
#pragma unroll
      for (int t = 1; t < ArgminGroup; ++t) {
        const T sum = av[t] + Bp[t * K];
        found = sum < best ? t : found;
        best = sum < best ? sum : best;
      }
      group_of[e * threads] = (unsigned char)(k + found);
    }
  }

#pragma unroll
  for (int a = 0; a < TR; ++a) {
    const int64_t gi = tc.i0 + ty + RY * a;
    if (!Inside && gi >= n) continue;
    T* row = M == Mode::Any ? d + gi * ld : c_row(a);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int64_t gj = tc.j0 + (tx + RX * g) * V;
      if constexpr (Tagged) {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const T t = c[a][g * V + v] & Tags<T>::mask;
          if (t && (Inside || gj + v < n))  // resolved after the rounds
            p[gi * pld + gj + v] = kViaPivot + int32_t(k0 + t - 1);
          c[a][g * V + v] -= t;
        }
      }
      if constexpr (Argmin) {  // "as the pivot row's": resolved after the loop (kViaPivot)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const int kk = group_of[(a * TN + g * V + v) * threads];
          if (kk != 255 && (Inside || gj + v < n))
            p[gi * pld + gj + v] = kViaPivot + int32_t(k0 + ck(kk));
        }
      }
      if constexpr (Inside) {
        *reinterpret_cast<uint4*>(row + gj) = *reinterpret_cast<const uint4*>(&c[a][g * V]);
      } else if (M == Mode::Edge && gj + V <= n) {
        *reinterpret_cast<uint4*>(row + gj) = *reinterpret_cast<const uint4*>(&c[a][g * V]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v)
          if (gj + v < n) row[gj + v] = c[a][g * V + v];
      }
    }
  }
}

// A tile that the matrix's edge cuts (or a ragged k range): the threads take only the strip of it
// inside the matrix where that is at most half of it, rows or columns, so that the edge tiles of
// an n that K does not divide (two of every K + 1 tile rows at n = 10000) cost a quarter or half
// of a whole tile, not all of it. The copies still fill whole tiles (zeros outside the matrix).
template <class T, int K, int TM, int TN, int BK, int STAGES, int MINB, Track Tr, bool Min3>
__device__ __forceinline__ void edge_tile(T* __restrict__ d, int64_t n, int64_t ld,
                                          int32_t* __restrict__ p, int64_t pld, int64_t k0, int kw,
                                          TileCoords tc, T* smem, const GemmMaps& maps) {
  // The threads on the tile's first H rows and W columns (Edge copies and stores).
  auto strip = [&](auto h, auto w) {
    minplus_tile<T, K, TM, TN, BK, STAGES, MINB, Tr, Mode::Edge, Min3, decltype(h)::value,
                 decltype(w)::value>(d, n, ld, p, pld, k0, kw, tc, smem, maps);
  };
  using Full = std::integral_constant<int, K>;
  using Half = std::integral_constant<int, K / 2>;
  using Quarter = std::integral_constant<int, K / 4>;
  if constexpr (Tr == Track::None) {
    const int64_t rows = n - tc.i0, cols = n - tc.j0;
    if (rows >= K && cols <= K / 4) return strip(Full{}, Quarter{});
    if (cols >= K && rows <= K / 4) return strip(Quarter{}, Full{});
    if (rows >= K && cols <= K / 2) return strip(Full{}, Half{});
    if (cols >= K && rows <= K / 2) return strip(Half{}, Full{});
  }
  strip(Full{}, Full{});
}

// `aligned`: the matrix starts on 16 bytes and ld is a multiple of V (engine.cu). p: the
// predecessors when Tr tracks the winning pivot, else unused. Interior tiles take the TMA copies
// where `maps` are valid (sm_90, aligned rows: engine.cu's gemm_maps).
template <class T, int K, int TM, int TN, int BK, int STAGES, int MINB, Track Tr, bool Min3>
__device__ __forceinline__ void minplus_kernel_body(T* __restrict__ d, int64_t n, int64_t ld,
                                                    int32_t* __restrict__ p, int64_t pld,
                                                    TileSet ts, int64_t k0, int kw, bool aligned,
                                                    const GemmMaps& maps) {
  extern __shared__ __align__(128) unsigned char gemm_smem[];  // TMA boxes land on 128 bytes
  T* smem = reinterpret_cast<T*>(gemm_smem);
  const TileCoords tc = tile_coords(ts, K);
  if (!aligned) {
    minplus_tile<T, K, TM, TN, BK, STAGES, MINB, Tr, Mode::Any, Min3>(d, n, ld, p, pld, k0, kw, tc,
                                                                     smem, maps);
  } else if (kw % BK == 0 && tc.i0 + K <= n && tc.j0 + K <= n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (maps.valid) {
      minplus_tile<T, K, TM, TN, BK, STAGES, MINB, Tr, Mode::Bulk, Min3>(d, n, ld, p, pld, k0, kw,
                                                                         tc, smem, maps);
      return;
    }
#endif
    minplus_tile<T, K, TM, TN, BK, STAGES, MINB, Tr, Mode::Interior, Min3>(d, n, ld, p, pld, k0, kw,
                                                                           tc, smem, maps);
  } else {
    edge_tile<T, K, TM, TN, BK, STAGES, MINB, Tr, Min3>(d, n, ld, p, pld, k0, kw, tc, smem, maps);
  }
}

// Min3: the min3 step, unless `below_zero` points at a non-zero flag (rules_kernel found a value
// below zero: then the FADD + FMNMX step); without Min3 the flag is not read.
template <class T, int K, int TM, int TN, int BK, int STAGES, int MINB, Track Tr, bool Min3 = false>
__global__ void __launch_bounds__(Gemm<T, K, TM, TN, BK, STAGES, MINB>::threads, MINB)
    minplus_kernel(T* __restrict__ d, int64_t n, int64_t ld, int32_t* __restrict__ p, int64_t pld,
                   TileSet ts, int64_t k0, int kw, bool aligned, const unsigned* below_zero,
                   const __grid_constant__ GemmMaps maps) {
  wait_for_previous_grid();
  if constexpr (Min3) {
    if (below_zero && *below_zero) {
      minplus_kernel_body<T, K, TM, TN, BK, STAGES, MINB, Tr, false>(d, n, ld, p, pld, ts, k0, kw,
                                                                     aligned, maps);
      return;
    }
  }
  minplus_kernel_body<T, K, TM, TN, BK, STAGES, MINB, Tr, Min3>(d, n, ld, p, pld, ts, k0, kw,
                                                                aligned, maps);
}

// ---- phases 1 and 2 in one launch (k64w rounds) ---------------------------------------------------
// Every block of a kPanels tile set closes the pivot tile itself (close_tile_fast, the same
// deterministic steps on the same unmodified input in every block) and then updates its own panel
// tile with it: a row panel tile is min(T, P* (x) T), a column panel tile min(T, T (x) P*), one
// pass each since P* is closed. No block writes this round's pivot tile, so no block can read it
// half written. Where `k_prev` >= 0, one more block (blockIdx.x 0, beyond the tile set) closes
// and stores the previous round's pivot tile, which still holds its input: nothing else in this
// launch reads it, and the next phase 3 that does runs after it (engine.cu). Saves a pivot launch
// and its gap on the chain of every round. Shared memory: the closed pivot and the tile as it
// was, rows padded by one 16-byte vector.
template <class T, int K, int E>
struct PivotPanels {
  static constexpr int R = K / E, threads = R * R;
  static constexpr int LD = K + 16 / int(sizeof(T));
  static constexpr size_t smem_bytes = size_t(2) * K * LD * sizeof(T);
};
template <class T, int K, int E>
__global__ void __launch_bounds__((K / E) * (K / E))
    pivot_panels_kernel(T* __restrict__ d, int64_t n, int64_t ld, TileSet ts, int64_t k0, int kw,
                        int64_t k_prev) {
  wait_for_previous_grid();
  if (k_prev >= 0 && blockIdx.x == 0) {
    close_and_store_pivot<T, K, E, false, false>(d, ld, nullptr, 0, nullptr, 0, k_prev, K);
    return;
  }
  using Cfg = PivotPanels<T, K, E>;
  constexpr int R = Cfg::R, LD = Cfg::LD;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* Ps = reinterpret_cast<T*>(smem_raw);  // the closed pivot tile
  T* Ts = Ps + K * LD;                      // this block's tile before the update
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  const TileCoords tc = tile_coords(ts, K);
  const T inf = Semiring<T>::inf();
  T c[E][E], t[E][E];
#pragma unroll
  for (int a = 0; a < E; ++a)
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int i = E * ty + a, j = E * tx + b;
      const int64_t gi = tc.i0 + i, gj = tc.j0 + j;
      c[a][b] = i < kw && j < kw ? d[(k0 + i) * ld + k0 + j] : inf;
      t[a][b] = gi < n && gj < n ? d[gi * ld + gj] : inf;  // in flight during the closure
    }
  close_tile_fast<T, K, E>(c, kw);
#pragma unroll
  for (int a = 0; a < E; ++a)
#pragma unroll
    for (int b = 0; b < E; ++b) {
      Ps[(E * ty + a) * LD + E * tx + b] = c[a][b];
      Ts[(E * ty + a) * LD + E * tx + b] = t[a][b];
    }
  __syncthreads();
  const bool row_panel = tc.i0 == k0;  // else a column panel tile (tc.j0 == k0)
  const T* A = row_panel ? Ps : Ts;
  const T* B = row_panel ? Ts : Ps;
  for (int k = 0; k < kw; ++k) {
    T av[E], bv[E];
#pragma unroll
    for (int a = 0; a < E; ++a) av[a] = A[(E * ty + a) * LD + k];
#pragma unroll
    for (int b = 0; b < E; ++b) bv[b] = B[k * LD + E * tx + b];
#pragma unroll
    for (int a = 0; a < E; ++a)
#pragma unroll
      for (int b = 0; b < E; ++b) t[a][b] = Semiring<T>::relax(t[a][b], av[a], bv[b]);
  }
#pragma unroll
  for (int a = 0; a < E; ++a)
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int64_t gi = tc.i0 + E * ty + a, gj = tc.j0 + E * tx + b;
      if (gi < n && gj < n) d[gi * ld + gj] = t[a][b];
    }
}

// ---- phases 2 and 3 with predecessors, one 32-wide round ----------------------------------------
// Tile K x K (K = 32), 32 x 8 threads, K/8 elements each; A, B and B's predecessors go to shared
// memory whole before anything is written (phase-2 aliasing). Many threads a tile: these launches
// are small and on the chain (phase 2 and the super-rounds' bands of every plan with predecessors,
// and phase 3 of the general plan below kPredDeepMinN); blocks of 64 threads with 4 x 4 elements
// each made the tagged plan slower (H100 int32 n = 10000: 96.6 against 93.0 ms; GPU_NOTES.md,
// fortieth session). The predecessor of a path through pivot k to j is pred[k][j], read from B's
// tile; where Hops, hop counts travel with A and B for the (length, hops) step (relax_step).
template <class T, int K, bool Hops = true>
__global__ void __launch_bounds__(K * 8)
    minplus_pred_kernel(T* __restrict__ d, int64_t n, int64_t ld, int32_t* __restrict__ p,
                        int64_t pld, uint32_t* __restrict__ h, int64_t hld, TileSet ts, int64_t k0,
                        int kw) {
  __shared__ T As[K][K + 1];
  __shared__ T Bs[K][K];
  __shared__ int32_t Ps[K][K];
  __shared__ uint32_t Ha[K][K + 1];
  __shared__ uint32_t Hb[K][K];
  const TileCoords tc = tile_coords(ts, K);
  const int tx = threadIdx.x % K, ty = threadIdx.x / K;
  auto crow = [&](int64_t i) { return i < n ? i : n - 1; };
  for (int y = ty; y < K; y += 8) {
    const int64_t kk = k0 + (y < kw ? y : kw - 1);
    const int64_t ai = crow(tc.i0 + y), ak = k0 + (tx < kw ? tx : kw - 1), bj = crow(tc.j0 + tx);
    As[y][tx] = d[ai * ld + ak];
    Bs[y][tx] = d[kk * ld + bj];
    Ps[y][tx] = p[kk * pld + bj];
    if constexpr (Hops) {
      Ha[y][tx] = h[ai * hld + ak];
      Hb[y][tx] = h[kk * hld + bj];
    }
  }
  constexpr int E = K / 8;
  T c[E];
  int32_t pc[E];
  uint32_t hc[E];
  const int64_t gj = tc.j0 + tx;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int64_t gi = crow(tc.i0 + ty + 8 * e);
    c[e] = d[gi * ld + crow(gj)];
    pc[e] = p[gi * pld + crow(gj)];
    hc[e] = Hops ? h[gi * hld + crow(gj)] : 0u;
  }
  __syncthreads();
  for (int k = 0; k < kw; ++k)
#pragma unroll
    for (int e = 0; e < E; ++e)
      relax_step<Hops>(c[e], pc[e], hc[e], As[ty + 8 * e][k], Bs[k][tx], Ps[k][tx],
                       Hops ? Ha[ty + 8 * e][k] : 0u, Hops ? Hb[k][tx] : 0u);
  if (gj >= n) return;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int64_t gi = tc.i0 + ty + 8 * e;
    if (gi < n) {
      d[gi * ld + gj] = c[e];
      p[gi * pld + gj] = pc[e];
      if constexpr (Hops) h[gi * hld + gj] = hc[e];
    }
  }
}

// ---- phase 3 of the general plan with predecessors: k-depth up to 128 ----------------------------
// Phase 3 of the general predecessor plan (engine.cu: super-rounds of four 32-wide pivot blocks),
// on TM x TM tiles outside the super-round's rows and columns. (TM / 4)^2 threads a tile; thread
// (ty, tx) keeps the contiguous 4 x 4 block (4 ty + a, 4 tx + b) with its predecessors and hop
// counts in registers for the whole k range, which goes through shared memory BK pivots at a time:
// A transposed, so that a pivot step costs a thread five 16-byte shared loads (A's column and its
// hops, B's row, its predecessors and its hops) for 16 (length, hops) steps (relax_step). Each
// element takes its steps in order of k. The matrix, its predecessors and hop counts are read and
// written once per 128 pivots instead of once per 32 (H100, int32 n = 10000: 437 ms against 574 for
// one round at a time with the 32 x 8 thread kernel above, which register tiles alone took only to
// 517; 64 x 64 tiles: 447. GPU_NOTES.md, fortieth session).
template <class T, int TM, int BK>
struct PredDeep {
  static constexpr int E = 4, R = TM / E, threads = R * R;
  // Transposed A: a pitch of TM + one 16-byte vector keeps the column loads 16-byte aligned and
  // spreads the transposing stores over 8 banks (4-way at worst, once per BK pivots).
  static constexpr int LDA = TM + 16 / int(sizeof(T)), LDH = TM + 4;
};
// Four consecutive elements from 16-byte aligned shared memory.
template <class V>
__device__ __forceinline__ void load4(V (&v)[4], const V* s) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "4- or 8-byte elements");
  if constexpr (sizeof(V) == 4) {
    const uint4 q = *reinterpret_cast<const uint4*>(s);
    v[0] = __builtin_bit_cast(V, q.x), v[1] = __builtin_bit_cast(V, q.y);
    v[2] = __builtin_bit_cast(V, q.z), v[3] = __builtin_bit_cast(V, q.w);
  } else {
    const ulonglong2 q0 = *reinterpret_cast<const ulonglong2*>(s);
    const ulonglong2 q1 = *reinterpret_cast<const ulonglong2*>(s + 2);
    v[0] = __builtin_bit_cast(V, q0.x), v[1] = __builtin_bit_cast(V, q0.y);
    v[2] = __builtin_bit_cast(V, q1.x), v[3] = __builtin_bit_cast(V, q1.y);
  }
}
template <class T, int TM, int BK>
__global__ void __launch_bounds__(PredDeep<T, TM, BK>::threads)
    minplus_pred_deep_kernel(T* __restrict__ d, int64_t n, int64_t ld, int32_t* __restrict__ p,
                             int64_t pld, uint32_t* __restrict__ h, TileSet ts, int64_t k0,
                             int kw) {
  using Cfg = PredDeep<T, TM, BK>;
  constexpr int E = Cfg::E, R = Cfg::R, LDA = Cfg::LDA, LDH = Cfg::LDH;
  __shared__ __align__(16) T At[BK * LDA];         // At[k * LDA + i] = A[i][k]
  __shared__ __align__(16) uint32_t Ha[BK * LDH];  // Ha[k * LDH + i]: hops of A[i][k]
  __shared__ __align__(16) T Bs[BK * TM];
  __shared__ __align__(16) int32_t Ps[BK * TM];
  __shared__ __align__(16) uint32_t Hb[BK * TM];
  const TileCoords tc = tile_coords(ts, TM);
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  auto crow = [&](int64_t i) { return i < n ? i : n - 1; };
  T c[E][E];  // with predecessors and hop counts (whose pitch is n)
  int32_t pc[E][E];
  uint32_t hc[E][E];
#pragma unroll
  for (int a = 0; a < E; ++a) {
    const int64_t gi = crow(tc.i0 + E * ty + a);
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int64_t gj = crow(tc.j0 + E * tx + b);
      c[a][b] = d[gi * ld + gj];
      pc[a][b] = p[gi * pld + gj];
      hc[a][b] = h[gi * n + gj];
    }
  }
  for (int c0 = 0; c0 < kw; c0 += BK) {
    const int cw = kw - c0 < BK ? kw - c0 : BK;
    // Pivots past cw are clamped copies, never read; rows or columns past n likewise.
    auto ck = [&](int x) { return k0 + c0 + (x < cw ? x : cw - 1); };
    if (c0 > 0) __syncthreads();  // every thread is done with the last BK pivots
    for (int e = threadIdx.x; e < TM * BK; e += Cfg::threads) {  // A: rows of BK pivots
      const int y = e / BK, x = e % BK;
      const int64_t ai = crow(tc.i0 + y);
      At[x * LDA + y] = d[ai * ld + ck(x)];
      Ha[x * LDH + y] = h[ai * n + ck(x)];
    }
    for (int e = threadIdx.x; e < BK * TM; e += Cfg::threads) {  // B: rows of TM columns
      const int y = e / TM, x = e % TM;
      const int64_t bk = ck(y), bj = crow(tc.j0 + x);
      Bs[y * TM + x] = d[bk * ld + bj];
      Ps[y * TM + x] = p[bk * pld + bj];
      Hb[y * TM + x] = h[bk * n + bj];
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < cw; ++k) {
      T av[E], bv[E];
      int32_t pb[E];
      uint32_t ha[E], hb[E];
      load4(av, &At[k * LDA + E * ty]);
      load4(ha, &Ha[k * LDH + E * ty]);
      load4(bv, &Bs[k * TM + E * tx]);
      load4(pb, &Ps[k * TM + E * tx]);
      load4(hb, &Hb[k * TM + E * tx]);
#pragma unroll
      for (int a = 0; a < E; ++a)
#pragma unroll
        for (int b = 0; b < E; ++b)
          relax_step<true>(c[a][b], pc[a][b], hc[a][b], av[a], bv[b], pb[b], ha[a], hb[b]);
    }
  }
#pragma unroll
  for (int a = 0; a < E; ++a) {
    const int64_t gi = tc.i0 + E * ty + a;
    if (gi >= n) break;
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int64_t gj = tc.j0 + E * tx + b;
      if (gj < n) {
        d[gi * ld + gj] = c[a][b];
        p[gi * pld + gj] = pc[a][b];
        h[gi * n + gj] = hc[a][b];
      }
    }
  }
}

// ---- predecessors of the tagged and argmin plans, resolved (engine.cu: run_plan) -----------------
// Phase 3 of those plans does not gather p[k][j] for a pair (i, j) that pivot k improved: it
// writes kViaPivot + k, "the predecessor of j in row k" (no dependent load in the hot kernel).
// Phases 1 and 2 copy such entries like any other: they mean the same in every row. After the
// rounds each is followed down its chain of pivots to a vertex. With exact arithmetic this is
// right with the final values too: if (i, j) last improved through k, then d[i][k] + d[k][j] =
// d[i][j] at the end, so the predecessor of j on a shortest path from k is one from i. With
// positive weights d[k][j] < d[i][j], so the chain strictly shortens and ends within n steps; on
// hop-scaled keys (tagged.cuh, negative edges too) it cannot loop either, since a loop of such
// tight pairs would be a cycle of key zero, and every cycle's key is above zero.
// The tagged plan's sums are exact. The argmin plan's (Check) are not: float rounding can break
// that (x + w == x for a weight below the rounding step of a long path), so past kUncheckedVia
// steps each step must be strictly closer, or the solve is marked failed; and every predecessor
// q = p[i][j] (j != i) must be strictly closer to i than j, so that chains of predecessors cannot
// loop. Where any is not, the engine solves again on the general plan (not_closer).
constexpr int kUncheckedVia = 64;
template <class T, bool Check>
__global__ void resolve_kernel(const T* __restrict__ d, int64_t n, int64_t ld,
                               int32_t* __restrict__ p, int64_t pld, DeviceStats* st) {
  // Column strips of 32 in blockIdx.y, rows in blockIdx.x: the blocks running at once share a
  // few strips, so the chains' loads p[k][j] hit L2.
  const int64_t j = int64_t(blockIdx.y) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  // With a negative cycle (hop-scaled keys) chains need not shorten: no predecessors, no walks.
  const bool negative = st && st->negative_diagonal != 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; i < n;
       i += int64_t(gridDim.x) * blockDim.y) {
    int32_t q = p[i * pld + j];
    bool bad = false;
    if (q >= kViaPivot && negative) {
      p[i * pld + j] = kNoPredecessor;
    } else if (q >= kViaPivot) {
      int64_t x = i;  // the row the chain has reached
      for (int64_t steps = 1; q >= kViaPivot; ++steps) {
        const int64_t k = q - kViaPivot;
        if (Check ? steps > kUncheckedVia && !(d[k * ld + j] < d[x * ld + j]) : steps > n) {
          bad = true;
          break;
        }
        x = k;
        q = p[k * pld + j];
      }
      bad = bad || q < 0;
      if (!bad) p[i * pld + j] = q;
    }
    if constexpr (Check) {
      if (bad || (q >= 0 && i != j && !(d[i * ld + q] < d[i * ld + j])))
        atomicOr(&st->not_closer, 1ull);
    }
  }
}
inline dim3 resolve_grid(int64_t n) {  // blocks of 32 x 8 threads
  return dim3(unsigned(std::min<int64_t>((n + 7) / 8, 65535)), unsigned((n + 31) / 32));
}

}  // namespace apsp::cuda_detail
