// Ceiling microbenchmark: the min-plus peak of this GPU per dtype, i.e. how many
// Semiring<T>::relax(c, a, b) (the exact step the engine's kernels use) the SMs retire per second
// with every operand in registers. The operands of each step are results of the previous one (a
// register-tile Floyd-Warshall), so the compiler can neither hoist the add nor drop a step.
// float32 also for the min3 step of positive graphs (dtype "float32-min3": relax2_nonnegative).
// Prints one JSON object: {"ceilings": [{"name", "dtype", "updates_per_s"}], "gpu": ...}.
// Build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src benchmarks/ceiling.cu
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/semiring.hpp"
#include "cuda/check.cuh"


// Two: the min3 step (Semiring<float>::relax2_nonnegative), two updates per call.
template <class T, int TM, int TN, bool Two>
__global__ void __launch_bounds__(256) peak_kernel(T* out, int iters, int write) {
  T c[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) c[i][j] = T((threadIdx.x + 3 * i + 7 * j) % 97 + 1);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        if constexpr (Two)
          c[i][j] = apsp::Semiring<T>::relax2_nonnegative(c[i][j], c[i][(j + 1) % TN],
                                                          c[(i + 1) % TM][j], c[i][(j + 2) % TN],
                                                          c[(i + 2) % TM][j]);
        else
          c[i][j] = apsp::Semiring<T>::relax(c[i][j], c[i][(j + 1) % TN], c[(i + 1) % TM][j]);
      }
  }
  if (write) {
    T s = 0;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) s += c[i][j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  }
}

template <class T, int TM, int TN, bool Two = false>
double measure(int sms) {
  const int blocks = sms * 8, threads = 256;
  const int iters = sizeof(T) == 4 ? 20000 : 5000;
  T* out = nullptr;
  APSP_CUDA_CHECK(cudaMalloc(&out, sizeof(T) * blocks * threads));
  cudaEvent_t a, b;
  APSP_CUDA_CHECK(cudaEventCreate(&a));
  APSP_CUDA_CHECK(cudaEventCreate(&b));
  auto launch = [&](int iters) { peak_kernel<T, TM, TN, Two><<<blocks, threads>>>(out, iters, 0); };
  launch(100);  // warm-up
  APSP_CUDA_CHECK(cudaGetLastError());
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    APSP_CUDA_CHECK(cudaEventRecord(a));
    launch(iters);
    APSP_CUDA_CHECK(cudaGetLastError());
    APSP_CUDA_CHECK(cudaEventRecord(b));
    APSP_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    APSP_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    const double ups = double(blocks) * threads * double(iters) * TM * TN * (Two ? 2 : 1) /
                       (ms * 1e-3);
    best = ups > best ? ups : best;
  }
  APSP_CUDA_CHECK(cudaFree(out));
  APSP_CUDA_CHECK(cudaEventDestroy(a));
  APSP_CUDA_CHECK(cudaEventDestroy(b));
  return best;
}

int main() {
  cudaDeviceProp prop{};
  APSP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const double i32 = measure<int32_t, 8, 8>(sms);
  const double f32 = measure<float, 8, 8>(sms);
  const double f64 = measure<double, 4, 8>(sms);
  const double i64 = measure<int64_t, 4, 8>(sms);
  const double f32_min3 = measure<float, 8, 8, true>(sms);
  std::printf(
      "{\"gpu\": \"%s\", \"sms\": %d, \"ceilings\": ["
      "{\"name\": \"relax int32 (VIADDMNMX add+min)\", \"dtype\": \"int32\", \"updates_per_s\": %.6g}, "
      "{\"name\": \"relax float32 (FADD + FMNMX)\", \"dtype\": \"float32\", \"updates_per_s\": %.6g}, "
      "{\"name\": \"relax float32, non-negative values (2 FADD + VIMNMX3 per 2 steps)\", "
      "\"dtype\": \"float32-min3\", \"updates_per_s\": %.6g}, "
      "{\"name\": \"relax float64 (DADD + min)\", \"dtype\": \"float64\", \"updates_per_s\": %.6g}, "
      "{\"name\": \"relax int64 (add + min)\", \"dtype\": \"int64\", \"updates_per_s\": %.6g}]}\n",
      prop.name, sms, i32, f32, f32_min3, f64, i64);
  return 0;
}
