// The CPU engine's min-plus register tile: C[kRows x kWidth] = min(C, A (x) B) over Depth steps.
// fw_cpu.cpp runs it on the matrix; benchmarks/ceiling_cpu.cpp times the same code on operands
// in L1 for the CPU ceiling, so the two can never drift apart. Not for: anything CUDA.
#pragma once

#include <cstdint>

#include "core/semiring.hpp"

namespace apsp::cpu_tile {

// kRows rows of C x kVecs vectors of kLanes elements. kLanes elements make one 512-bit vector;
// on narrower machines the compiler splits them, so the code stays portable. 8 rows x 2 vectors
// = 16 accumulators + 2 B vectors + temporaries fit the 32 zmm registers and keep the
// floating-point pipes busy (measured on one core of the 2-core AVX-512 AMD EPYC this was tuned
// on: 28.8 G float32, 14.4 G float64, 55 G int32, 27 G int64 updates/s, which is its add + min
// issue limit; benchmarks/ceiling_cpu.cpp measures it in every CPU benchmark run).
constexpr int kRows = 8;
constexpr int kVecs = 2;
template <class T>
constexpr int kLanes = 64 / int(sizeof(T));
template <class T>
constexpr int kWidth = kVecs * kLanes<T>;  // columns of one register tile

// A is kRows x Depth (row stride Depth), B is Depth x kWidth (one packed column strip), C has row
// stride ldc. Every stride but ldc and the depth are compile-time constants: GCC vectorises the
// outer j loop only then. The j loop is the SIMD loop and holds the k loop inside (outer-loop
// vectorisation): lane j keeps kRows x kVecs accumulators in registers for the whole k loop, B
// is loaded once per k and A is broadcast. Out of line and with restrict pointers on purpose:
// inlined into the round loop, GCC 12 kept only its scalar version (measured 7 instead of 50 G
// float32 updates/s on 2 cores).
template <class T, int Depth>
__attribute__((noinline)) void tile_full(T* __restrict c, int64_t ldc, const T* __restrict a,
                                         const T* __restrict b) {
  constexpr int L = kLanes<T>, W = kWidth<T>;
#pragma omp simd
  for (int j = 0; j < L; ++j) {
    T acc[kRows][kVecs];
    for (int r = 0; r < kRows; ++r)
      for (int u = 0; u < kVecs; ++u) acc[r][u] = c[r * ldc + u * L + j];
    for (int k = 0; k < Depth; ++k) {
      T bk[kVecs];
      for (int u = 0; u < kVecs; ++u) bk[u] = b[k * W + u * L + j];
      for (int r = 0; r < kRows; ++r) {
        const T ak = a[r * Depth + k];
        for (int u = 0; u < kVecs; ++u) acc[r][u] = Semiring<T>::relax(acc[r][u], ak, bk[u]);
      }
    }
    for (int r = 0; r < kRows; ++r)
      for (int u = 0; u < kVecs; ++u) c[r * ldc + u * L + j] = acc[r][u];
  }
}

// With predecessors (fw_cpu.cpp, solve_pred's third phase): semiring.hpp's relax_pred, the
// lexicographic (length, hops) step that also takes the predecessor, on kPredRows rows x one
// vector of lanes whose (length, predecessor, hops) stay in registers for the Depth steps.
// Written with GCC vector types: outer-loop vectorisation gave up on the three outputs ("not
// vectorized: complicated access pattern"), and solve_pred's own loop (k outermost, the row's
// three arrays loaded and stored at every step) ran at about 2 G updates/s on one core. A and HA
// (lengths and hops of the rows' pivot columns) are kPredRows x Depth, B, PB, HB (the pivot
// rows) Depth x lanes, packed; c, pc, hc are the matrix's, with their own row strides.
// 4-byte lengths only, and only where the build targets AVX-512. One round's third phase at
// n = 1024 on one core of this project's AVX-512 Xeon: 2.9-3.4x solve_pred's loop on int32 and
// float32, packing included (benchmarks/probes/pred_strip_tile.cpp,
// results/cpu_pred_strip_tile_s61.txt); whole solves (2 cores): 2-2.5x at n = 1024 and 2048
// (GPU_NOTES.md, sixty-first session). The rest keep the loop: 8-byte lengths gained 1.5x on
// the tile but lost up to 20% on whole solves at n = 2048; AVX2 vectors gained 1.8x on the tile
// and nothing seen on whole solves; as SSE2 vectors (a portable build) the registers spill and
// the tile ran 3-6x slower.
#if defined(__AVX512F__)
constexpr int kPredVectorBytes = 64;
#else
constexpr int kPredVectorBytes = 0;
#endif
template <class T>
constexpr bool kPredStrips = kPredVectorBytes > 0 && sizeof(T) == 4;
constexpr int kPredRows = 8;
template <class T>
constexpr int kPredLanes = (kPredVectorBytes > 0 ? kPredVectorBytes : 16) / int(sizeof(T));

template <class T, int Depth>
__attribute__((noinline)) void pred_strip(T* __restrict c, int32_t* __restrict pc,
                                          uint32_t* __restrict hc, int64_t ldc, int64_t ldp,
                                          int64_t ldh, const T* __restrict a,
                                          const uint32_t* __restrict ha, const T* __restrict b,
                                          const int32_t* __restrict pb,
                                          const uint32_t* __restrict hb) {
  constexpr int L = kPredLanes<T>;
  typedef T VT __attribute__((vector_size(L * sizeof(T))));
  typedef int32_t VI __attribute__((vector_size(L * 4)));  // predecessors, and the masks
  typedef uint32_t VU __attribute__((vector_size(L * 4)));  // hops
  static_assert(sizeof(T) == 4, "4-byte lengths: their comparisons' masks are the 32-bit lanes");
  VT d[kPredRows];
  VI p[kPredRows];
  VU h[kPredRows];
  for (int r = 0; r < kPredRows; ++r) {
    __builtin_memcpy(&d[r], c + r * ldc, sizeof(VT));
    __builtin_memcpy(&p[r], pc + r * ldp, sizeof(VI));
    __builtin_memcpy(&h[r], hc + r * ldh, sizeof(VU));
  }
  for (int k = 0; k < Depth; ++k) {
    VT bk;
    VI pk;
    VU hk;
    __builtin_memcpy(&bk, b + k * L, sizeof(VT));
    __builtin_memcpy(&pk, pb + k * L, sizeof(VI));
    __builtin_memcpy(&hk, hb + k * L, sizeof(VU));
#pragma GCC unroll 8
    for (int r = 0; r < kPredRows; ++r) {
      const VT s = bk + a[r * Depth + k];
      const VU hs = hk + ha[r * Depth + k];
      const VI better = (s < d[r]) | ((s == d[r]) & (hs < h[r]));
      d[r] = better ? s : d[r];
      p[r] = better ? pk : p[r];
      h[r] = better ? hs : h[r];
    }
  }
  for (int r = 0; r < kPredRows; ++r) {
    __builtin_memcpy(c + r * ldc, &d[r], sizeof(VT));
    __builtin_memcpy(pc + r * ldp, &p[r], sizeof(VI));
    __builtin_memcpy(hc + r * ldh, &h[r], sizeof(VU));
  }
}

}  // namespace apsp::cpu_tile
