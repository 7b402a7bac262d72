// Probe (sixty-first session): the CPU engine's predecessor step on one round's third phase of an
// n = 1024 matrix (64-deep, tiles off the pivot rows and columns), solve_pred's loop (k outermost,
// each row's length, predecessor and hops loaded and stored at every step) against the register
// strips (register_tile.hpp: pred_strip) on pivot rows packed as solve_pred packs them; checks
// that both leave the same lengths, predecessors and hops. One thread.
//   c++ -O3 -march=native -fopenmp -std=gnu++17 -I src benchmarks/probes/pred_strip_tile.cpp -o /tmp/pst && /tmp/pst
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "core/semiring.hpp"
#include "cpu/register_tile.hpp"

using namespace apsp;
constexpr int64_t kBlock = 64, n = 1024;

template <class T>
__attribute__((noinline)) void loop_tile(T* d, int32_t* p, uint32_t* h, int64_t i0, int64_t j0) {
  for (int64_t k = 0; k < kBlock; ++k)
    for (int64_t i = i0; i < i0 + kBlock; ++i) {
      const T a = d[i * n + k];
      const uint32_t ha = h[i * n + k];
#pragma omp simd
      for (int64_t j = j0; j < j0 + kBlock; ++j)
        relax_pred(d[i * n + j], p[i * n + j], h[i * n + j], a, d[k * n + j], p[k * n + j], ha,
                   h[k * n + j]);
    }
}

template <class T>
void run(const char* name) {
  constexpr int64_t L = cpu_tile::kPredLanes<T>, R = cpu_tile::kPredRows;
  std::mt19937 rng(1);
  std::vector<T> d0(n * n);
  std::vector<int32_t> p0(n * n);
  std::vector<uint32_t> h0(n * n);
  for (int64_t x = 0; x < n * n; ++x) {
    d0[x] = T(rng() % 100);
    p0[x] = int32_t(x / n);
    h0[x] = 1 + rng() % 3;
  }
  std::vector<T> bd(kBlock * n);
  std::vector<int32_t> bp(kBlock * n);
  std::vector<uint32_t> bh(kBlock * n);
  double t_loop = 1e9, t_strip = 1e9;
  bool same = true;
  for (int rep = 0; rep < 5; ++rep) {
    auto d1 = d0, d2 = d0;
    auto p1 = p0, p2 = p0;
    auto h1 = h0, h2 = h0;
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t bi = 1; bi < n / kBlock; ++bi)
      for (int64_t bj = 1; bj < n / kBlock; ++bj)
        loop_tile<T>(d1.data(), p1.data(), h1.data(), bi * kBlock, bj * kBlock);
    auto t1 = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < n / L; ++s)  // the pivot rows, strip-major (solve_pred's packing)
      for (int64_t k = 0; k < kBlock; ++k)
        for (int64_t l = 0; l < L; ++l) {
          bd[(s * kBlock + k) * L + l] = d2[k * n + s * L + l];
          bp[(s * kBlock + k) * L + l] = p2[k * n + s * L + l];
          bh[(s * kBlock + k) * L + l] = h2[k * n + s * L + l];
        }
    alignas(64) T a[R * kBlock];
    alignas(64) uint32_t ha[R * kBlock];
    for (int64_t bi = 1; bi < n / kBlock; ++bi)
      for (int64_t bj = 1; bj < n / kBlock; ++bj)
        for (int64_t i = bi * kBlock; i < (bi + 1) * kBlock; i += R) {
          for (int64_t q = 0; q < R; ++q)
            for (int64_t k = 0; k < kBlock; ++k) {
              a[q * kBlock + k] = d2[(i + q) * n + k];
              ha[q * kBlock + k] = h2[(i + q) * n + k];
            }
          for (int64_t j = bj * kBlock; j < (bj + 1) * kBlock; j += L)
            cpu_tile::pred_strip<T, int(kBlock)>(&d2[i * n + j], &p2[i * n + j], &h2[i * n + j],
                                                 n, n, n, a, ha, &bd[j / L * kBlock * L],
                                                 &bp[j / L * kBlock * L], &bh[j / L * kBlock * L]);
        }
    auto t2 = std::chrono::steady_clock::now();
    t_loop = std::min(t_loop, std::chrono::duration<double>(t1 - t0).count());
    t_strip = std::min(t_strip, std::chrono::duration<double>(t2 - t1).count());
    same = same && d1 == d2 && p1 == p2 && h1 == h2;
  }
  const double upd = double(n - kBlock) * double(n - kBlock) * double(kBlock);
  std::printf("%s: loop %.2f G updates/s, strips %.2f G/s (packing and A included): %.2fx; "
              "same results: %s\n", name, upd / t_loop / 1e9, upd / t_strip / 1e9, t_loop / t_strip,
              same ? "yes" : "NO");
}

int main() {
  static_assert(cpu_tile::kPredStrips<int32_t>, "build with -march=native on an AVX-512 machine");
  run<int32_t>("int32");
  run<float>("float32");
}
