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

}  // namespace apsp::cpu_tile
