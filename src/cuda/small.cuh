// The whole solve of a graph with n <= 64 in one block and one launch: rules, the closure of the
// single pivot tile (that closure is the answer), finalize. Small solves are bound by launches
// and host calls, not arithmetic: the round loop would be three launches (rules, the pivot
// kernel, finalize). Measured on an H100 (benchmarks/GPU_NOTES.md): a persistent multi-block
// version of this for larger n lost to the round loop at every n, so only n <= 64 lands here.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "cuda/check.cuh"
#include "cuda/kernels.cuh"

namespace apsp::cuda_detail {

// The tile: 64 x 64, or 32 x 32 for batches of n <= 32 that fill the GPU (enqueue_small_solve).
template <int Tile>
struct SmallShape {
  static constexpr int K = Tile, E = 4, R = K / E, threads = R * R;  // 4 x 4 elements a thread
};
using Small = SmallShape<64>;  // Small::K: the largest n of this plan

// A batch of such graphs (engine.cu: enqueue_batch_launch) runs one block a graph: block b
// solves the graph `stride` elements after block b - 1's, with its own statistics and
// negative-vertex list.
template <class T, int Tile>
__global__ void __launch_bounds__(SmallShape<Tile>::threads)
    small_solve_kernel(T* __restrict__ d, int n, int64_t ld, bool directed, bool unweighted,
                       DeviceStats* st, int64_t* negative, int64_t stride) {
  using Shape = SmallShape<Tile>;
  constexpr int K = Shape::K, E = Shape::E, R = Shape::R;
  d += int64_t(blockIdx.x) * stride;
  if (negative) {  // (st is read only where negative is given)
    st += blockIdx.x;
    negative += int64_t(blockIdx.x) * n;
  }
  for (int e = threadIdx.x; e < n * n; e += Shape::threads)
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

// `graphs` graphs of n <= Small::K, `stride` elements apart (one solve: 1 and 0), one launch on
// the current device. The 32 x 32 tile does a quarter of the 64 x 64 one's work a step, in blocks
// of 64 threads, not 256: batches of n <= 32 of two graphs an SM or more take it (H200, GPU
// time: 1024 graphs of n = 32 int32 23.2 -> 11.7 us, 8192 166 -> 59, 65535 1329 -> 410). With
// fewer, each graph is bound by latency, and 256 threads read and write it sooner (n = 32 alone:
// 6.4 us on 64 x 64, 7.8 on 32 x 32). benchmarks/GPU_NOTES.md, fifty-ninth session.
template <class T>
void enqueue_small_solve(T* d, int n, int64_t ld, bool directed, bool unweighted, DeviceStats* st,
                         int64_t* negative, unsigned graphs, int64_t stride, cudaStream_t stream) {
  bool tile32 = false;
  if (n <= SmallShape<32>::K && graphs > 1) {
    int device = 0, sms = 0;
    APSP_CUDA_CHECK(cudaGetDevice(&device));
    APSP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    tile32 = graphs >= 2 * unsigned(sms);
    if (tile32 && std::getenv("APSP_CUDA_TRACE"))
      std::fprintf(stderr, "apsp cuda: small plan on 32 x 32 tiles, %u graphs of n = %d\n", graphs,
                   n);
  }
  if (tile32)
    small_solve_kernel<T, 32><<<graphs, SmallShape<32>::threads, 0, stream>>>(
        d, n, ld, directed, unweighted, st, negative, stride);
  else
    small_solve_kernel<T, 64><<<graphs, Small::threads, 0, stream>>>(
        d, n, ld, directed, unweighted, st, negative, stride);
  APSP_CUDA_CHECK_LAUNCH("small_solve_kernel");
}

}  // namespace apsp::cuda_detail
