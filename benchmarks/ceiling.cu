// Ceiling microbenchmark: the min-plus peak of this GPU per dtype, i.e. how many
// Semiring<T>::relax(c, a, b) (the exact step the engine's kernels use) the SMs retire per second
// with every operand in registers. The operands of each step are results of the previous one (a
// register-tile Floyd-Warshall), so the compiler can neither hoist the add nor drop a step.
// float32 also for the min3 step of positive graphs (dtype "float32-min3": relax2_nonnegative),
// and two 16-bit lengths a word for the narrow plan (dtype "narrow16x2": NarrowPair::relax, two
// updates a step).
//
// Each shape runs as exactly one wave (every SM holds the kernel's maximum number of resident
// blocks) for about 100 ms a repetition, best of 3; the ceiling is the best shape (`measure_4byte`,
// `measure_8byte`). The SMs' clock during it is measured in the kernel (clock64 against the global
// timer), so a reading can be told apart from the clock it ran at. `per_sm_clock` is updates per
// SM per cycle: 64 for int32 is VIADDMNMX at half rate on each of the 4 schedulers (16 lanes a
// cycle). Before, one shape in 2.67 waves read 16.23-16.65 T for int32 across processes and
// machines; the best shape reads 16.67 T within 0.1% (GPU_NOTES.md, thirty-seventh session).
// Prints one JSON object: {"gpu", "sms", "ceilings": [{"name", "dtype", "updates_per_s",
// "sm_clock_mhz", "per_sm_clock", "tile", "blocks_per_sm", "rep_ms", "variants"}]}.
// Build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src benchmarks/ceiling.cu
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/semiring.hpp"
#include "cuda/check.cuh"

__device__ __forceinline__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Two: the min3 step (Semiring<float>::relax2_nonnegative), two updates per call. Pair (T =
// uint32_t): NarrowPair::relax, two 16-bit updates per call. Outer: the
// steps of phase 3 (kernels.cuh: minplus_kernel), an outer product per k whose operands (column k
// and row k of the tile, as the previous k left them) each serve a row or a column of updates;
// otherwise a stencil whose every step reads two neighbours. Thread 0 of each block writes its
// start and end (clock64, global timer) to stamps[4 * block ..].
template <class T, int TM, int TN, bool Two, bool Outer, bool Pair>
__device__ __forceinline__ T step(T c, T a, T b) {
  if constexpr (Pair)
    return apsp::NarrowPair::relax(c, a, b);
  else
    return apsp::Semiring<T>::relax(c, a, b);
}

template <class T, int TM, int TN, bool Two, bool Outer, bool Pair = false>
__global__ void __launch_bounds__(256) peak_kernel(T* out, long long* stamps, int iters, int write) {
  const long long c0 = clock64(), g0 = global_ns();
  constexpr int TK = TM < TN ? TM : TN;
  T c[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      c[i][j] = T((threadIdx.x + 3 * i + 7 * j) % 97 + 1);
      if constexpr (Pair) c[i][j] |= c[i][j] << 16;  // both halves
    }
  for (int it = 0; it < iters; ++it) {
    if constexpr (Outer) {
#pragma unroll
      for (int k = 0; k < TK; k += Two ? 2 : 1) {
        T a[TM], b[TN], a2[TM], b2[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) a[i] = c[i][k], a2[i] = c[i][(k + 1) % TK];
#pragma unroll
        for (int j = 0; j < TN; ++j) b[j] = c[k][j], b2[j] = c[(k + 1) % TK][j];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            if constexpr (Two)
              c[i][j] = apsp::Semiring<T>::relax2_nonnegative(c[i][j], a[i], b[j], a2[i], b2[j]);
            else
              c[i][j] = step<T, TM, TN, Two, Outer, Pair>(c[i][j], a[i], b[j]);
          }
      }
    } else {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          if constexpr (Two)
            c[i][j] = apsp::Semiring<T>::relax2_nonnegative(c[i][j], c[i][(j + 1) % TN],
                                                            c[(i + 1) % TM][j], c[i][(j + 2) % TN],
                                                            c[(i + 2) % TM][j]);
          else
            c[i][j] = step<T, TM, TN, Two, Outer, Pair>(c[i][j], c[i][(j + 1) % TN],
                                                        c[(i + 1) % TM][j]);
        }
    }
  }
  T s = 0;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) s += c[i][j];
  if (write) out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  // The end stamp after the sum, which needs every step: it cannot be taken before the loop ends.
  if (threadIdx.x == 0) {
    const long long c1 = clock64(), g1 = global_ns();
    long long* st = stamps + 4 * blockIdx.x;
    st[0] = c0;
    st[1] = c1 + (s == T(-1));  // keeps s live on every path (s > 0: never -1)
    st[2] = g0;
    st[3] = g1;
  }
}

struct Reading {
  double updates_per_s = 0, mhz = 0, rep_ms = 0;
  int blocks_per_sm = 0, tm = 0, tn = 0;
  bool outer = false;
};

// One register-tile shape: one wave of the kernel's resident blocks, ~100 ms a repetition, best
// of 3.
template <class T, int TM, int TN, bool Two = false, bool Outer = false, bool Pair = false>
Reading measure(int sms) {
  constexpr int per_iter = TM * TN * (Outer ? (TM < TN ? TM : TN) : Two ? 2 : 1) * (Pair ? 2 : 1);
  constexpr int threads = 256, reps = 3;
  constexpr double target_ms = 100;
  auto kernel = peak_kernel<T, TM, TN, Two, Outer, Pair>;
  int per_sm = 0;
  APSP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  const int blocks = sms * per_sm;
  T* out = nullptr;
  long long* stamps = nullptr;
  APSP_CUDA_CHECK(cudaMalloc(&out, sizeof(T) * blocks * threads));
  APSP_CUDA_CHECK(cudaMalloc(&stamps, sizeof(long long) * 4 * blocks));
  long long* host = static_cast<long long*>(std::malloc(sizeof(long long) * 4 * blocks));
  cudaEvent_t a, b;
  APSP_CUDA_CHECK(cudaEventCreate(&a));
  APSP_CUDA_CHECK(cudaEventCreate(&b));
  auto timed = [&](int iters) {
    APSP_CUDA_CHECK(cudaEventRecord(a));
    kernel<<<blocks, threads>>>(out, stamps, iters, 0);
    APSP_CUDA_CHECK(cudaGetLastError());
    APSP_CUDA_CHECK(cudaEventRecord(b));
    APSP_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    APSP_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return double(ms);
  };
  timed(100);  // warm-up
  const int probe = (sizeof(T) == 4 ? 256000 : 64000) / per_iter;
  const int iters = int(probe * target_ms / timed(probe)) + 1;
  Reading best;
  best.blocks_per_sm = per_sm;
  best.tm = TM;
  best.tn = TN;
  best.outer = Outer;
  for (int rep = 0; rep < reps; ++rep) {
    const double ms = timed(iters);
    const double ups =
        double(blocks) * threads * double(iters) * per_iter / (ms * 1e-3);
    if (ups <= best.updates_per_s) continue;
    APSP_CUDA_CHECK(cudaMemcpy(host, stamps, sizeof(long long) * 4 * blocks, cudaMemcpyDeviceToHost));
    double ghz = 0;
    for (int i = 0; i < blocks; ++i)
      ghz += double(host[4 * i + 1] - host[4 * i]) / double(host[4 * i + 3] - host[4 * i + 2]);
    best.updates_per_s = ups;
    best.mhz = 1e3 * ghz / blocks;
    best.rep_ms = ms;
  }
  std::free(host);
  APSP_CUDA_CHECK(cudaFree(out));
  APSP_CUDA_CHECK(cudaFree(stamps));
  APSP_CUDA_CHECK(cudaEventDestroy(a));
  APSP_CUDA_CHECK(cudaEventDestroy(b));
  return best;
}

// The best of several tile shapes: how fast the step can go is the hardware's; how close one
// shape comes to it depends on the compiler's register allocation (operand bank conflicts) and on
// the blocks per SM that its registers allow, which moved one shape's reading by several percent
// (GPU_NOTES.md, thirty-seventh session). `variants` lists every shape's reading.
struct Best {
  Reading top;
  char variants[1024] = "";
  void add(const Reading& r) {
    const size_t used = std::strlen(variants);
    std::snprintf(variants + used, sizeof variants - used, "%s\"%s %dx%d\": %.6g", used ? ", " : "",
                  r.outer ? "outer" : "stencil", r.tm, r.tn, r.updates_per_s);
    if (r.updates_per_s > top.updates_per_s) top = r;
  }
};

template <class T, bool Two = false, bool Pair = false>
Best measure_4byte(int sms) {
  Best b;
  b.add(measure<T, 8, 8, Two, false, Pair>(sms));
  b.add(measure<T, 4, 8, Two, false, Pair>(sms));
  b.add(measure<T, 8, 4, Two, false, Pair>(sms));
  b.add(measure<T, 4, 4, Two, false, Pair>(sms));
  b.add(measure<T, 6, 6, Two, false, Pair>(sms));
  b.add(measure<T, 8, 8, Two, true, Pair>(sms));
  b.add(measure<T, 4, 8, Two, true, Pair>(sms));
  b.add(measure<T, 8, 4, Two, true, Pair>(sms));
  b.add(measure<T, 4, 4, Two, true, Pair>(sms));
  return b;
}

template <class T>
Best measure_8byte(int sms) {
  Best b;
  b.add(measure<T, 4, 8>(sms));
  b.add(measure<T, 8, 4>(sms));
  b.add(measure<T, 4, 4>(sms));
  b.add(measure<T, 3, 6>(sms));
  b.add(measure<T, 4, 8, false, true>(sms));
  b.add(measure<T, 4, 4, false, true>(sms));
  return b;
}

void print(const char* name, const char* dtype, const Best& b, int sms, bool last) {
  const Reading& r = b.top;
  std::printf(
      "{\"name\": \"%s\", \"dtype\": \"%s\", \"updates_per_s\": %.6g, \"sm_clock_mhz\": %.1f, "
      "\"per_sm_clock\": %.2f, \"tile\": \"%s %dx%d\", \"blocks_per_sm\": %d, \"rep_ms\": %.1f, "
      "\"variants\": {%s}}%s",
      name, dtype, r.updates_per_s, r.mhz, r.updates_per_s / (sms * r.mhz * 1e6), r.outer ? "outer" : "stencil", r.tm, r.tn,
      r.blocks_per_sm, r.rep_ms, b.variants, last ? "" : ", ");
}

int main() {
  cudaDeviceProp prop{};
  APSP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const Best i32 = measure_4byte<int32_t>(sms);
  const Best f32 = measure_4byte<float>(sms);
  const Best f32_min3 = measure_4byte<float, true>(sms);
  const Best f64 = measure_8byte<double>(sms);
  const Best i64 = measure_8byte<int64_t>(sms);
  const Best pair = measure_4byte<uint32_t, false, true>(sms);
  std::printf("{\"gpu\": \"%s\", \"sms\": %d, \"ceilings\": [", prop.name, sms);
  print("relax int32 (VIADDMNMX add+min)", "int32", i32, sms, false);
  print("relax float32 (FADD + FMNMX)", "float32", f32, sms, false);
  print("relax float32, non-negative values (2 FADD + VIMNMX3 per 2 steps)", "float32-min3",
        f32_min3, sms, false);
  print("relax float64 (DADD + min)", "float64", f64, sms, false);
  print("relax int64 (add + min)", "int64", i64, sms, false);
  print("relax two 16-bit lengths (VIADDMNMX.U16x2, two updates)", "narrow16x2", pair, sms, true);
  std::printf("]}\n");
  return 0;
}
