// CPU ceiling microbenchmark: the min-plus peak of this machine's cores per dtype, i.e. how many
// Semiring<T>::relax(c, a, b) (the exact step the CPU engine uses) all cores retire per second
// with no memory traffic beyond L1. The CPU twin of ceiling.cu: the engine's own register tile
// (src/cpu/register_tile.hpp: 8 rows x 2 vectors of 64 bytes) takes step after step on operands
// that stay in L1, on every OpenMP thread at once, so the figure is what the engine's products
// could reach at best on this machine (its add + min issue limit). "narrow16" is the step of the
// narrow solve (fw_cpu.cpp: solve_narrow), on 16-bit lengths.
// Prints one JSON object: {"ceilings": [{"name", "dtype", "updates_per_s"}], "threads": ...}.
// Build (bench_cpu.py does): c++ -O3 -march=native -fopenmp -std=c++17 -Isrc
//                            benchmarks/ceiling_cpu.cpp -o ceiling_cpu
#include <omp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "cpu/register_tile.hpp"

namespace {

using apsp::cpu_tile::kRows;
using apsp::cpu_tile::kWidth;
using apsp::cpu_tile::tile_full;

// One pass is kSteps steps of the engine's register tile, C[r][u] = relax(C[r][u], A[r][k],
// B[k][u]), with A broadcast and B loaded from L1: the x86 form of the register operands of
// ceiling.cu (a broadcast folds into the add's memory operand, so a step is one add and one min
// per vector), with no matrix traffic, packing or barrier timed.
constexpr int kSteps = 64;

// One thread's share: `passes` passes over its own tile and operands (about 10 KB, in L1). One
// A entry changes after every pass, so no pass can be skipped; the sum of the tile depends on
// every step.
template <class T>
T tile_loop(int64_t passes, int seed) {
  constexpr int W = kWidth<T>;
  alignas(64) T c[kRows * W], a[kRows * kSteps], b[kSteps * W];
  for (int i = 0; i < kRows * W; ++i) c[i] = T(1000 + (seed + i) % 7);
  for (int i = 0; i < kRows * kSteps; ++i) a[i] = T((seed + i) % 13 + 1);
  for (int i = 0; i < kSteps * W; ++i) b[i] = T((seed + i) % 11 + 1);
  for (int64_t p = 0; p < passes; ++p) {
    tile_full<T, kSteps>(c, W, a, b);
    a[p % (kRows * kSteps)] -= T(1);
  }
  T s = 0;
  for (T v : c) s += v;
  return s;
}

// Updates per second of all threads together: the best of `tries` timed runs of `passes` passes.
template <class T>
double peak(int64_t passes, int tries) {
  const int threads = omp_get_max_threads();
  double best = 0;
  volatile T sink = 0;
  for (int t = 0; t < tries; ++t) {
    T total = 0;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : total)
    total += tile_loop<T>(passes, omp_get_thread_num() + t);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sink = sink + total;
    const double ups = double(threads) * double(passes) * kSteps * kRows * kWidth<T> / s;
    if (ups > best) best = ups;
  }
  return best;
}

}  // namespace

int main() {
  // About 0.3 s a try on a 2-core AVX-512 machine; the best of 5 rides out the machine's noise.
  const int64_t passes = 1'000'000;
  const int tries = 5;
  const struct {
    const char* name;
    const char* dtype;
    double ups;
  } rows[] = {
      {"relax int32 (register tile, operands in L1)", "int32", peak<int32_t>(passes, tries)},
      {"relax float32 (register tile, operands in L1)", "float32", peak<float>(passes, tries)},
      {"relax float64 (register tile, operands in L1)", "float64", peak<double>(passes / 2, tries)},
      {"relax int64 (register tile, operands in L1)", "int64", peak<int64_t>(passes / 2, tries)},
      {"relax 16-bit lengths (register tile, operands in L1; the narrow solve)", "narrow16",
       peak<uint16_t>(passes * 2, tries)},
  };
  std::printf("{\"threads\": %d, \"ceilings\": [", omp_get_max_threads());
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); ++i)
    std::printf("%s{\"name\": \"%s\", \"dtype\": \"%s\", \"updates_per_s\": %.4g}", i ? ", " : "",
                rows[i].name, rows[i].dtype, rows[i].ups);
  std::printf("]}\n");
  return 0;
}
