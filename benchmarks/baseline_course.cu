// Baseline: the course reports' blocked Floyd-Warshall design, int32, for side-by-side timing:
// 64 x 64 tiles, 32 x 32 threads (4 cells per thread), three kernels per round (pivot tile, pivot
// row/column, the rest), the matrix padded to a multiple of 64 with INF. It uses the same
// min-plus step as apsp (Semiring<int32_t>::relax), so the comparison is of the design only.
// Usage: baseline_course N REPS  -> one JSON line {"impl": "course-baseline", "n", "seconds"};
// it first checks itself against a CPU Floyd-Warshall at n = 300 and exits 1 on a mismatch.
// Build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src benchmarks/baseline_course.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/semiring.hpp"
#include "cuda/check.cuh"


using S = apsp::Semiring<int32_t>;
constexpr int B = 64;

__global__ void phase1(int32_t* d, int N, int r) {
  __shared__ int32_t t[B][B];
  const int tx = threadIdx.x, ty = threadIdx.y, o = r * B;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) t[ty + 32 * a][tx + 32 * b] = d[(o + ty + 32 * a) * N + o + tx + 32 * b];
  __syncthreads();
  for (int k = 0; k < B; ++k) {
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        t[ty + 32 * a][tx + 32 * b] = S::relax(t[ty + 32 * a][tx + 32 * b], t[ty + 32 * a][k], t[k][tx + 32 * b]);
    __syncthreads();
  }
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) d[(o + ty + 32 * a) * N + o + tx + 32 * b] = t[ty + 32 * a][tx + 32 * b];
}

__global__ void phase2(int32_t* d, int N, int r) {
  if (int(blockIdx.x) == r) return;
  __shared__ int32_t p[B][B], t[B][B];
  const int tx = threadIdx.x, ty = threadIdx.y, o = r * B;
  const bool row = blockIdx.y == 0;
  const int i0 = row ? o : blockIdx.x * B, j0 = row ? blockIdx.x * B : o;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      p[ty + 32 * a][tx + 32 * b] = d[(o + ty + 32 * a) * N + o + tx + 32 * b];
      t[ty + 32 * a][tx + 32 * b] = d[(i0 + ty + 32 * a) * N + j0 + tx + 32 * b];
    }
  __syncthreads();
  for (int k = 0; k < B; ++k) {
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        const int i = ty + 32 * a, j = tx + 32 * b;
        t[i][j] = row ? S::relax(t[i][j], p[i][k], t[k][j]) : S::relax(t[i][j], t[i][k], p[k][j]);
      }
    __syncthreads();
  }
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) d[(i0 + ty + 32 * a) * N + j0 + tx + 32 * b] = t[ty + 32 * a][tx + 32 * b];
}

__global__ void phase3(int32_t* d, int N, int r) {
  if (int(blockIdx.x) == r || int(blockIdx.y) == r) return;
  __shared__ int32_t col[B][B], row[B][B];
  const int tx = threadIdx.x, ty = threadIdx.y, o = r * B;
  const int i0 = blockIdx.y * B, j0 = blockIdx.x * B;
  int32_t c[2][2];
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      col[ty + 32 * a][tx + 32 * b] = d[(i0 + ty + 32 * a) * N + o + tx + 32 * b];
      row[ty + 32 * a][tx + 32 * b] = d[(o + ty + 32 * a) * N + j0 + tx + 32 * b];
      c[a][b] = d[(i0 + ty + 32 * a) * N + j0 + tx + 32 * b];
    }
  __syncthreads();
#pragma unroll 16
  for (int k = 0; k < B; ++k)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) c[a][b] = S::relax(c[a][b], col[ty + 32 * a][k], row[k][tx + 32 * b]);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) d[(i0 + ty + 32 * a) * N + j0 + tx + 32 * b] = c[a][b];
}

void solve(int32_t* d, int N) {
  const int nb = N / B;
  const dim3 t(32, 32);
  for (int r = 0; r < nb; ++r) {
    phase1<<<1, t>>>(d, N, r);
    phase2<<<dim3(nb, 2), t>>>(d, N, r);
    phase3<<<dim3(nb, nb), t>>>(d, N, r);
  }
  APSP_CUDA_CHECK(cudaGetLastError());
}

std::vector<int32_t> random_padded(int n, int N, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<int32_t> h(size_t(N) * N, S::inf());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const uint32_t x = g();
      h[size_t(i) * N + j] = i == j ? 0 : (x % 10 < 3 ? int32_t(x % 100 + 1) : S::inf());
    }
  for (int i = n; i < N; ++i) h[size_t(i) * N + i] = 0;
  return h;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  {  // self-check at n = 300 against a CPU Floyd-Warshall
    const int m = 300, M = (m + B - 1) / B * B;
    std::vector<int32_t> h = random_padded(m, M, 7), ref = h;
    for (int k = 0; k < m; ++k)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j)
          ref[size_t(i) * M + j] = std::min(ref[size_t(i) * M + j], ref[size_t(i) * M + k] + ref[size_t(k) * M + j]);
    int32_t* d = nullptr;
    APSP_CUDA_CHECK(cudaMalloc(&d, h.size() * 4));
    APSP_CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    solve(d, M);
    APSP_CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost));
    APSP_CUDA_CHECK(cudaFree(d));
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        if (h[size_t(i) * M + j] != ref[size_t(i) * M + j]) {
          std::fprintf(stderr, "baseline mismatch at (%d, %d)\n", i, j);
          return 1;
        }
  }
  const int N = (n + B - 1) / B * B;
  std::vector<int32_t> h = random_padded(n, N, 1);
  int32_t *d = nullptr, *orig = nullptr;
  APSP_CUDA_CHECK(cudaMalloc(&d, h.size() * 4));
  APSP_CUDA_CHECK(cudaMalloc(&orig, h.size() * 4));
  APSP_CUDA_CHECK(cudaMemcpy(orig, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  APSP_CUDA_CHECK(cudaEventCreate(&a));
  APSP_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> times;
  for (int rep = 0; rep < reps + 1; ++rep) {  // the first run warms up
    APSP_CUDA_CHECK(cudaMemcpy(d, orig, h.size() * 4, cudaMemcpyDeviceToDevice));
    APSP_CUDA_CHECK(cudaEventRecord(a));
    solve(d, N);
    APSP_CUDA_CHECK(cudaEventRecord(b));
    APSP_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    APSP_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    if (rep) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  std::printf("{\"impl\": \"course-baseline\", \"dtype\": \"int32\", \"n\": %d, \"seconds\": %.6g}\n", n,
              times[times.size() / 2] * 1e-3);
  return 0;
}
