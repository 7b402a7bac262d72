// CPU engine: blocked Floyd-Warshall with OpenMP across tiles and a register-blocked, vectorised
// min-plus microkernel for the independent phase. Works in place on any n and leading dimension
// (ragged last tiles, no padding copies). Not for: anything CUDA (src/cuda).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "apsp/apsp.hpp"
#include "core/contract.hpp"
#include "core/semiring.hpp"

namespace apsp {
namespace {

// Tile edge: a 64x64 tile of float32 is 16 KiB, three of them sit in L1+L2 of one core.
constexpr int64_t kTile = 64;

template <class T>
struct Cpu {
  using S = Semiring<T>;
  T* d;
  int64_t n, ld;
  int32_t* p;
  int64_t pld;

  T* row(int64_t i) const { return d + i * ld; }
  int32_t* prow(int64_t i) const { return p + i * pld; }

  // ---- prepare: scan (nothing written), then apply the edge rules in place ----------------
  InputStats scan(const Options& opt) const {
    InputStats st;
    for (int64_t i = 0; i < n; ++i) {
      const T* r = row(i);
      for (int64_t j = 0; j < n; ++j) {
        const T w = r[j];
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(w)) {
            if (st.first_nan < 0) st.first_nan = i * n + j;
          } else if (w == -S::inf()) {
            if (st.first_neg_inf < 0) st.first_neg_inf = i * n + j;
          } else if (w != S::inf() && (i != j || w < 0)) {
            st.max_abs_float = std::max(st.max_abs_float, double(std::fabs(w)));
          }
        } else {
          if (w < S::inf() && (i != j || w < 0) && !opt.unweighted) {
            const uint64_t a = w < 0 ? uint64_t(0) - uint64_t(int64_t(w)) : uint64_t(w);
            st.max_abs_int = std::max(st.max_abs_int, a);
          }
        }
      }
    }
    if constexpr (!std::is_floating_point_v<T>) {
      if (opt.unweighted) st.max_abs_int = n > 1 ? 1 : 0;
    }
    return st;
  }

  void apply_rules(const Options& opt) const {
    const T inf = S::inf();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      T* r = row(i);
      for (int64_t j = 0; j < n; ++j) {
        T w = r[j];
        if (w > inf) w = inf;  // integers: anything >= INF is "no edge"
        if (opt.unweighted && w < inf) w = T(1);
        r[j] = w;
      }
    }
    if (!opt.directed) {
#pragma omp parallel for schedule(dynamic, 16)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j) {
          const T w = std::min(row(i)[j], row(j)[i]);
          row(i)[j] = w;
          row(j)[i] = w;
        }
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      T* r = row(i);
      r[i] = std::min(r[i], T(0));
      if (p) {
        int32_t* pr = prow(i);
        for (int64_t j = 0; j < n; ++j)
          pr[j] = (i != j && r[j] < inf) ? int32_t(i) : kNoPredecessor;
      }
    }
  }

  // ---- tile updates -------------------------------------------------------------------------
  // Dependent update (phases 1 and 2): k outermost, exactly the textbook order restricted to a
  // tile, so it is correct even when the tile being written is also read.
  void tile_dependent(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k0, int64_t k1) const {
    for (int64_t k = k0; k < k1; ++k) {
      const T* bk = row(k);
      for (int64_t i = i0; i < i1; ++i) {
        T* c = row(i);
        const T a = c[k];
        if (p) {
          int32_t* pc = prow(i);
          const int32_t* pk = prow(k);
          for (int64_t j = j0; j < j1; ++j) relax_pred(c[j], pc[j], a, bk[j], pk[j]);
        } else {
#pragma omp simd
          for (int64_t j = j0; j < j1; ++j) c[j] = S::relax(c[j], a, bk[j]);
        }
      }
    }
  }

  // Independent update (phase 3): A = D[i-block, k-block] and B = D[k-block, j-block] are final
  // for this round, so the k order is free. R rows of C stay in registers while k runs.
  template <int R>
  void rows_full(int64_t i, int64_t j0, int64_t k0, int64_t k1) const {
    constexpr int W = int(kTile);
    T acc[R][W];
    for (int r = 0; r < R; ++r)
#pragma omp simd
      for (int j = 0; j < W; ++j) acc[r][j] = row(i + r)[j0 + j];
    for (int64_t k = k0; k < k1; ++k) {
      const T* b = row(k) + j0;
      for (int r = 0; r < R; ++r) {
        const T a = row(i + r)[k];
#pragma omp simd
        for (int j = 0; j < W; ++j) acc[r][j] = S::relax(acc[r][j], a, b[j]);
      }
    }
    for (int r = 0; r < R; ++r)
#pragma omp simd
      for (int j = 0; j < W; ++j) row(i + r)[j0 + j] = acc[r][j];
  }

  void tile_independent(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k0, int64_t k1) const {
    if (p || j1 - j0 != kTile) {
      tile_dependent(i0, i1, j0, j1, k0, k1);  // predecessors or a ragged tile: plain loop
      return;
    }
    constexpr int R = 4;
    int64_t i = i0;
    for (; i + R <= i1; i += R) rows_full<R>(i, j0, k0, k1);
    for (; i < i1; ++i) rows_full<1>(i, j0, k0, k1);
  }

  // ---- the round loop -----------------------------------------------------------------------
  void solve(const Options& opt) const {
    const int64_t nb = (n + kTile - 1) / kTile;
    auto lo = [](int64_t b) { return b * kTile; };
    auto hi = [&](int64_t b) { return std::min(n, (b + 1) * kTile); };
    for (int64_t r = 0; r < nb; ++r) {
      const int64_t k0 = lo(r), k1 = hi(r);
      tile_dependent(k0, k1, k0, k1, k0, k1);  // phase 1: the pivot tile
#pragma omp parallel for schedule(dynamic, 1)
      for (int64_t t = 0; t < 2 * nb; ++t) {  // phase 2: pivot row and pivot column
        const int64_t b = t / 2;
        if (b == r) continue;
        if (t % 2 == 0)
          tile_dependent(k0, k1, lo(b), hi(b), k0, k1);
        else
          tile_dependent(lo(b), hi(b), k0, k1, k0, k1);
      }
#pragma omp parallel for schedule(dynamic, 1) collapse(2)
      for (int64_t bi = 0; bi < nb; ++bi)  // phase 3: everything else
        for (int64_t bj = 0; bj < nb; ++bj) {
          if (bi == r || bj == r) continue;
          tile_independent(lo(bi), hi(bi), lo(bj), hi(bj), k0, k1);
        }
      if (opt.progress) opt.progress(opt.progress_ctx, r + 1, nb);
    }
  }

  // ---- finalize: unreachable -> INF, predecessors cleaned, negative diagonal collected -------
  std::vector<int64_t> finalize() const {
    const T inf = S::inf();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      T* r = row(i);
      if constexpr (!std::is_floating_point_v<T>) {
        const T limit = unreachable_threshold<T>();
        for (int64_t j = 0; j < n; ++j)
          if (r[j] > limit) r[j] = inf;
      }
      if (p) {
        int32_t* pr = prow(i);
        for (int64_t j = 0; j < n; ++j)
          if (r[j] == inf || i == j) pr[j] = kNoPredecessor;
      }
    }
    std::vector<int64_t> negative;
    for (int64_t i = 0; i < n; ++i)
      if (row(i)[i] < T(0)) negative.push_back(i);
    return negative;
  }
};

template <class T>
void run(const Matrix& dist, const PredMatrix& pred, const Options& opt) {
  Cpu<T> e{static_cast<T*>(dist.data), dist.n, dist.ld, pred.data, pred.ld};
  if (opt.check_input) check_input_stats(dist, e.scan(opt));
  e.apply_rules(opt);
  e.solve(opt);
  const std::vector<int64_t> negative = e.finalize();
  if (opt.check_negative_cycles) check_negative_cycles(negative, dist.n);
}

}  // namespace

void solve_cpu(Matrix dist, PredMatrix pred, const Options& options) {
  check_views(dist, pred);
  if (dist.n == 0) return;
  switch (dist.dtype) {  // the one run-time -> compile-time dtype dispatch of the CPU engine
    case DType::float32: return run<float>(dist, pred, options);
    case DType::float64: return run<double>(dist, pred, options);
    case DType::int32: return run<int32_t>(dist, pred, options);
    case DType::int64: return run<int64_t>(dist, pred, options);
  }
  throw ValueError(std::string("unsupported dtype code ") + std::to_string(int(dist.dtype)) +
                   "; supported: float32, float64, int32, int64");
}

int cpu_threads() { return omp_get_max_threads(); }

}  // namespace apsp
