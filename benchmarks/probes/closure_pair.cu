// Probe (benchmarks/GPU_NOTES.md, twenty-sixth session): the pivot closure two steps a barrier
// (close_tile_pair, kernels.cuh: the cluster plan's int32 closures since the twenty-ninth
// session) against close_tile_fast, alone in one block: the two compared bit for bit (and with
// a host Floyd-Warshall where there is no negative cycle) at every kw for int32, float32, int64
// and float64, then ns a step, best of 7 launches of 400 closures.
// Build, on a GPU machine:
//   nvcc -std=c++17 -arch=sm_90 -O3 --expt-relaxed-constexpr -Isrc benchmarks/probes/closure_pair.cu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <type_traits>
#include "cuda/check.cuh"
#include "cuda/kernels.cuh"

using namespace apsp;
using namespace apsp::cuda_detail;

template <class T, int K, int Bar, int V>
__global__ void closure_kernel(T* d, int kw, int reps) {
  constexpr int E = 4, R = K / E;
  const int tx = threadIdx.x % R, ty = threadIdx.x / R;
  T c[E][E];
  for (int a = 0; a < E; ++a)
    for (int b = 0; b < E; ++b) {
      const int i = E * ty + a, j = E * tx + b;
      c[a][b] = i < kw && j < kw ? d[i * K + j] : Semiring<T>::inf();
    }
  for (int r = 0; r < reps; ++r) {
    if constexpr (V == 0)
      close_tile_fast<T, K, E, Bar>(c, kw);
    else
      close_tile_pair<T, K, E, Bar>(c, kw);
  }
  for (int a = 0; a < E; ++a)
    for (int b = 0; b < E; ++b) {
      const int i = E * ty + a, j = E * tx + b;
      if (i < kw && j < kw) d[i * K + j] = c[a][b];
    }
}

// One closure kernel launch: variant v (0 close_tile_fast, 1 close_tile_pair), one block.
template <class T, int K, int Bar>
void launch(int v, T* d, int kw, int reps, int threads) {
  if (v == 0)
    closure_kernel<T, K, Bar, 0><<<1, threads>>>(d, kw, reps);
  else
    closure_kernel<T, K, Bar, 1><<<1, threads>>>(d, kw, reps);
  APSP_CUDA_CHECK_LAUNCH("closure_kernel");
}

template <class T>
std::vector<T> random_tile(int K, int kw, std::mt19937& g, bool neg) {
  std::vector<T> h(K * K, Semiring<T>::inf());
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < kw; ++i)
    for (int j = 0; j < kw; ++j) {
      if (i == j) { h[i * K + j] = T(0); continue; }
      if (u(g) < 0.3) {
        double w = std::is_integral<T>::value ? double(int(u(g) * 100)) : u(g) * 100;
        if (neg) w -= std::is_integral<T>::value ? 5 : 5.5;  // negative edges (cycles possible)
        h[i * K + j] = T(w);
      }
    }
  return h;
}

template <class T>
void host_fw(std::vector<T>& h, int K, int kw) {
  for (int k = 0; k < kw; ++k) {
    std::vector<T> row(h.begin() + k * K, h.begin() + k * K + K), col(K);
    for (int i = 0; i < K; ++i) col[i] = h[i * K + k];
    for (int i = 0; i < kw; ++i)
      for (int j = 0; j < kw; ++j) h[i * K + j] = Semiring<T>::relax(h[i * K + j], col[i], row[j]);
  }
}

template <class T, int K, int Bar>
int check(const char* name, int threads) {
  std::mt19937 g(1234);
  T* d;
  APSP_CUDA_CHECK(cudaMalloc(&d, K * K * sizeof(T)));
  int bad = 0, cases = 0;
  for (int kw = 1; kw <= K; ++kw)
    for (int neg = 0; neg < 2; ++neg) {
      auto h = random_tile<T>(K, kw, g, neg);
      std::vector<T> out[2], ref = h;
      host_fw(ref, K, kw);
      for (int v = 0; v < 2; ++v) {
        out[v].resize(K * K);
        APSP_CUDA_CHECK(cudaMemcpy(d, h.data(), K * K * sizeof(T), cudaMemcpyHostToDevice));
        launch<T, K, Bar>(v, d, kw, 1, threads);
        APSP_CUDA_CHECK(cudaMemcpy(out[v].data(), d, K * K * sizeof(T), cudaMemcpyDeviceToHost));
      }
      const std::vector<T>&a = out[0], &b = out[1];
      ++cases;
      bool diag_neg = false;
      for (int i = 0; i < kw; ++i) diag_neg |= ref[i * K + i] < T(0);
      if (memcmp(a.data(), b.data(), K * K * sizeof(T)) != 0) { ++bad; if (bad < 4) printf("  %s kw=%d neg=%d: pair != fast\n", name, kw, neg); }
      if (!diag_neg && memcmp(a.data(), ref.data(), K * K * sizeof(T)) != 0) { ++bad; if (bad < 4) printf("  %s kw=%d neg=%d: fast != host\n", name, kw, neg); }
    }
  APSP_CUDA_CHECK(cudaFree(d));
  printf("check %-12s %d cases, %d mismatches\n", name, cases, bad);
  return bad;
}

template <class T, int K, int Bar>
void timing(const char* name, int threads) {
  T* d;
  APSP_CUDA_CHECK(cudaMalloc(&d, K * K * sizeof(T)));
  std::mt19937 g(7);
  auto h = random_tile<T>(K, K, g, false);
  APSP_CUDA_CHECK(cudaMemcpy(d, h.data(), K * K * sizeof(T), cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  APSP_CUDA_CHECK(cudaEventCreate(&e0)); APSP_CUDA_CHECK(cudaEventCreate(&e1));
  const int reps = 400;
  float best[2] = {1e30f, 1e30f};
  for (int t = 0; t < 7; ++t)
    for (int v = 0; v < 2; ++v) {
      APSP_CUDA_CHECK(cudaEventRecord(e0));
      launch<T, K, Bar>(v, d, K, reps, threads);
      APSP_CUDA_CHECK(cudaEventRecord(e1));
      APSP_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms;
      APSP_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      best[v] = std::min(best[v], ms);
    }
  const double per_fast = best[0] * 1e6 / reps / K, per_pair = best[1] * 1e6 / reps / K;
  printf("time  %-12s K=%d threads=%d: fast %.1f ns/step (%.2f us a closure), pair %.1f ns/step (%.2f us), pair/fast %.3f\n",
         name, K, threads, per_fast, per_fast * K / 1000, per_pair, per_pair * K / 1000, per_pair / per_fast);
  APSP_CUDA_CHECK(cudaEventDestroy(e0));
  APSP_CUDA_CHECK(cudaEventDestroy(e1));
  APSP_CUDA_CHECK(cudaFree(d));
}

int main() {
  int bad = 0;
  bad += check<int32_t, 64, 0>("int32 K64", 256);
  bad += check<float, 64, 0>("float32 K64", 256);
  bad += check<int32_t, 32, 1>("int32 K32", 64);
  bad += check<float, 32, 1>("float32 K32", 64);
  bad += check<int64_t, 64, 0>("int64 K64", 256);
  bad += check<double, 64, 0>("float64 K64", 256);
  for (int rep = 0; rep < 2; ++rep) {
    timing<int32_t, 64, 0>("int32", 256);
    timing<int32_t, 64, 5>("int32 bar5", 256);
    timing<float, 64, 0>("float32", 256);
    timing<int32_t, 32, 1>("int32", 64);
    timing<float, 32, 1>("float32", 64);
    timing<int64_t, 64, 0>("int64", 256);
    timing<double, 64, 0>("float64", 256);
  }
  printf("mismatches total %d\n", bad);
  return bad != 0;
}
