// Sparse (COO) graphs onto the device: fill a dense device matrix with "no edge", then scatter the
// edges with an atomic minimum so duplicate entries keep the smallest weight. NaN weights are
// stored as they are, so the engine's input scan reports them like any dense NaN.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/semiring.hpp"

namespace apsp::cuda_detail {

template <class T>
__global__ void fill_kernel(T* __restrict__ d, int64_t n, int64_t ld, T value) {
  for (int64_t i = blockIdx.y; i < n; i += gridDim.y)
    for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n;
         j += int64_t(gridDim.x) * blockDim.x)
      d[i * ld + j] = value;
}

__device__ __forceinline__ void atomic_min_value(int32_t* a, int32_t v) { atomicMin(a, v); }
__device__ __forceinline__ void atomic_min_value(int64_t* a, int64_t v) {
  atomicMin(reinterpret_cast<long long*>(a), static_cast<long long>(v));
}
__device__ __forceinline__ void atomic_min_value(float* a, float v) {
  auto* bits = reinterpret_cast<unsigned int*>(a);
  unsigned int old = *bits;
  while (v != v || v < __uint_as_float(old)) {
    const unsigned int seen = atomicCAS(bits, old, __float_as_uint(v));
    if (seen == old) break;
    old = seen;
  }
}
__device__ __forceinline__ void atomic_min_value(double* a, double v) {
  auto* bits = reinterpret_cast<unsigned long long*>(a);
  unsigned long long old = *bits;
  while (v != v || v < __longlong_as_double(static_cast<long long>(old))) {
    const unsigned long long seen =
        atomicCAS(bits, old, static_cast<unsigned long long>(__double_as_longlong(v)));
    if (seen == old) break;
    old = seen;
  }
}

template <class T>
__global__ void scatter_kernel(T* __restrict__ d, int64_t ld, const int64_t* __restrict__ rows,
                               const int64_t* __restrict__ cols, const T* __restrict__ values,
                               int64_t nnz) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < nnz;
       e += int64_t(gridDim.x) * blockDim.x)
    atomic_min_value(d + rows[e] * ld + cols[e], values[e]);
}

}  // namespace apsp::cuda_detail
