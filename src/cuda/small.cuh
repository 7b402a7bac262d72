// The whole solve of a graph with n <= 64 in one block and one launch: rules, the closure of the
// single pivot tile (that closure is the answer), finalize. Small solves are bound by launches
// and host calls, not arithmetic: the round loop would be three launches (rules, the pivot
// kernel, finalize). Measured on an H100 (benchmarks/GPU_NOTES.md): a persistent multi-block
// version of this for larger n lost to the round loop at every n, so only n <= 64 lands here.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/kernels.cuh"

namespace apsp::cuda_detail {

struct Small {
  static constexpr int K = 64, E = 4, R = K / E, threads = R * R;  // 256 threads, 4 x 4 each
};

// A batch of such graphs (engine.cu: solve_cuda_batch) runs one block a graph: block b solves the
// graph `stride` elements after block b - 1's, with its own statistics and negative-vertex list.
template <class T>
__global__ void __launch_bounds__(Small::threads)
    small_solve_kernel(T* __restrict__ d, int n, int64_t ld, bool directed, bool unweighted,
                       DeviceStats* st, int64_t* negative, int64_t stride = 0) {
  constexpr int K = Small::K, E = Small::E, R = Small::R;
  d += int64_t(blockIdx.x) * stride;
  if (negative) {  // (st is read only where negative is given)
    st += blockIdx.x;
    negative += int64_t(blockIdx.x) * n;
  }
  for (int e = threadIdx.x; e < n * n; e += Small::threads)
    rules_at<T>(d, n, ld, nullptr, 0, nullptr, directed, unweighted, e / n, e % n);
  __syncthreads();  // undirected rules write the transposed element too
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  T c[E][E];
#pragma unroll
  for (int a = 0; a < E; ++a)
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int i = E * ty + a, j = E * tx + b;
      c[a][b] = i < n && j < n ? d[i * ld + j] : Semiring<T>::inf();
    }
  close_tile_fast<T, K, E>(c, n);
#pragma unroll
  for (int a = 0; a < E; ++a)
#pragma unroll
    for (int b = 0; b < E; ++b) {
      const int i = E * ty + a, j = E * tx + b;
      if (i < n && j < n) d[i * ld + j] = finalize_value(c[a][b], st, negative, i, j);
    }
}

}  // namespace apsp::cuda_detail
