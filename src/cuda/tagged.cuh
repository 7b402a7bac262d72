// Predecessors at the speed of the plain int32 solve ("tagged" plan, engine.cu). Values are stored
// shifted left by Tags::bits; while phase 3 of a super-round runs, the low bits of its B rows
// (pivot rows k0 + kk) hold the tag kk + 1. One VIADDMNMX then computes min(C, A + B) and the
// winning pivot together: the low bits of the result are 0 where C stayed (ties keep C) and the
// tag of the smallest improving k otherwise, which the GEMM epilogue turns into pred[i][j] =
// pred[k][j] (kernels.cuh, minplus_tile<..., Tagged>). Phases 1 and 2 run the general 32-wide
// predecessor kernels on untagged values.
//
// Used only where it is exact and its predecessor chains cannot loop (engine.cu, tagged_fits):
// int32 or int64, every off-diagonal weight >= 1 (positive weights: a chain of tight edges
// strictly shortens, whatever order the blocked algorithm relaxed them in), and (n - 1) * max w
// at most Tags::max_length, so every path length survives the shift and no sum overflows: stored
// values never exceed Tags::inf, and 2 * Tags::inf + a tag < 2^31 (2^63).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/contract.hpp"

namespace apsp::cuda_detail {

template <class T>
struct Tags {
  static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>, "integer dtypes only");
  static constexpr T no_edge = std::is_same_v<T, int32_t> ? T(kInt32Inf) : T(kInt64Inf);
  static constexpr int bits = 8;  // tags 1..128: k-depth 128
  static constexpr T mask = (T(1) << bits) - 1;
  static constexpr T inf = (no_edge + 1) - (T(1) << bits);  // "no edge", shifted, tag-free
  static constexpr int64_t max_length = int64_t(inf >> bits) - 1;  // longest exact path
};

// Elementwise over the n x n matrix (grid: x over columns, y strided over rows).
template <class F>
__device__ __forceinline__ void each_element(int64_t n, F&& f) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  for (int64_t i = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; i < n;
       i += int64_t(gridDim.y) * blockDim.y)
    f(i, j);
}

// After the rules: w -> w << bits (w >= 0 here), "no edge" (>= INF) -> Tags::inf.
template <class T>
__global__ void tags_pack_kernel(T* __restrict__ d, int64_t n, int64_t ld) {
  each_element(n, [&](int64_t i, int64_t j) {
    const T w = d[i * ld + j];
    d[i * ld + j] = w >= Tags<T>::no_edge ? Tags<T>::inf : T(w << Tags<T>::bits);
  });
}

// Before finalize: back to plain values (INF where no path).
template <class T>
__global__ void tags_unpack_kernel(T* __restrict__ d, int64_t n, int64_t ld) {
  each_element(n, [&](int64_t i, int64_t j) {
    const T w = d[i * ld + j];
    d[i * ld + j] = w >= Tags<T>::inf ? Tags<T>::no_edge : T(w >> Tags<T>::bits);
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

}  // namespace apsp::cuda_detail
