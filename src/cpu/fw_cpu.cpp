// CPU engine: blocked Floyd-Warshall with OpenMP and an outer-loop-vectorised min-plus
// microkernel (a register tile of C rows x 2 vectors, like a GEMM microkernel). Works in place on
// any n and leading dimension (ragged last tiles, no padding copies of the matrix; only small
// per-round panels are packed). Not for: anything CUDA (src/cuda).
//
// One round per pivot block K = [k0, k1). Each round is written so that every row outside K
// depends only on its own pre-round values, the closed pivot tile and the pre-round pivot rows,
// which makes rows independent and lets all the O(n^2 kb) work of a round run as one parallel
// loop of GEMM-like products (shortest paths are split at their first / last vertex in K):
//   1. pivot tile:   P = closure of D[K,K] (classic k-outer loop; kb^3, tiny)
//   2. pack:         B = D[K,:] before the round (other columns), strip-major, padded to kBlock
//   3. per row i:    D[i,K] = min(D[i,K], D[i,K] (x) P)               (i not in K; first vertex)
//                    D[i,j] = min(D[i,j], D[i,K] (x) B[:,j])  j not in K (last vertex in K)
// where (x) is the min-plus product. Steps 1 and 2 run side by side; step 3 is the bulk, and
// it needs one barrier per round (after 1 and 2) besides the end of the round. Graphs of small
// whole weights run the same loop on 16-bit lengths (solve_narrow).
#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "apsp/apsp.hpp"
#include "core/contract.hpp"
#include "core/pred_repair.hpp"
#include "core/semiring.hpp"
#include "cpu/register_tile.hpp"

namespace apsp {
namespace {

// Round depth (pivot block edge). 64 keeps a pivot tile and the A rows of a register tile in L1
// and makes the per-round pass over C (one load and store per 64 updates) cheap.
constexpr int64_t kBlock = 64;
// Rows of the register tile (register_tile.hpp), which computes every whole tile of the
// products. Predecessors take solve_pred instead (5-7x slower for 4-byte lengths, 10-13x for 8).
using cpu_tile::kRows;
// Below this n a solve takes well under a millisecond on one core, and OpenMP barriers cost more
// than they save (on a loaded machine a barrier can wait a whole scheduler slice), so smaller
// graphs run on the calling thread.
constexpr int64_t kParallelMinN = 256;

// GNU OpenMP's thread pool does not survive fork(): a forked child whose parent ran a parallel
// region would wait forever for pool threads it does not have (multiprocessing's "fork", PyTorch
// DataLoader workers). The thread that forked computes on one thread in the child, as PyTorch's
// workers do; threads the child starts later get a fresh pool.
const int kForkGuard = [] {
  pthread_atfork(nullptr, nullptr, [] { omp_set_num_threads(1); });
  return 0;
}();

// The narrow solve (Cpu::solve_narrow) where the weights fit it, for n in [kNarrowMinN, 32767]
// (each length below the 16-bit INF); APSP_CPU_NARROW=0 leaves it out (benchmarks: both solves on
// the same graph; tests: the reference).
constexpr int64_t kNarrowMinN = 128;
// Where only the bound (n - 1) * max w keeps a graph off it, the hub bound (contract.hpp) is
// looked for from this n: a pass costs a few percent of a solve there (2-core AVX-512 EPYC, n =
// 1024, one pass / the solve: int32 0.9 / 11 ms, float64 4.4 / 44 ms), and the narrow solve saves
// half (int32) to four fifths (float64) of it.
constexpr int64_t kHubMinN = 1024;
bool narrow_size_fits(int64_t n) {
  const char* off = std::getenv("APSP_CPU_NARROW");
  return n >= kNarrowMinN && n - 1 <= kNarrowMaxLength && !(off && std::string(off) == "0");
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
std::unique_ptr<T[], FreeDeleter> aligned_buffer(
    int64_t count, const char* what = "its pivot panels; free some memory") {
  const size_t bytes = (size_t(std::max<int64_t>(count, 1)) * sizeof(T) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw MemoryError("the CPU engine could not allocate " + std::to_string(bytes) +
                            " bytes of host memory for " + what);
  return std::unique_ptr<T[], FreeDeleter>(static_cast<T*>(p));
}

template <class T>
struct Cpu {
  using S = Semiring<T>;
  static constexpr int kWidth = cpu_tile::kWidth<T>;  // columns of one register tile
  static_assert(kBlock % kWidth == 0 && kBlock % kRows == 0, "tiles must divide the block");

  T* d;
  int64_t n, ld;
  int32_t* p;
  int64_t pld;

  T* row(int64_t i) const { return d + i * ld; }
  int32_t* prow(int64_t i) const { return p + i * pld; }

  // ---- prepare: scan (nothing written), then apply the edge rules in place ----------------
  // Rows are scanned in parallel with vectorised reductions; only a row that holds a NaN or
  // -inf is walked again to find the first one.
  InputStats scan(const Options& opt) const {
    const int threads = omp_get_max_threads();
    std::vector<InputStats> part(size_t(threads) * 2);  // 2x: keep neighbours off one line
#pragma omp parallel if(n >= kParallelMinN) num_threads(threads)
    {
      InputStats& st = part[size_t(omp_get_thread_num()) * 2];
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) scan_row(i, opt, st);
    }
    InputStats all;
    auto first = [](int64_t a, int64_t b) { return a < 0 ? b : (b < 0 ? a : std::min(a, b)); };
    for (int t = 0; t < threads; ++t) {
      const InputStats& s = part[size_t(t) * 2];
      all.first_nan = first(all.first_nan, s.first_nan);
      all.first_neg_inf = first(all.first_neg_inf, s.first_neg_inf);
      all.max_abs_float = std::max(all.max_abs_float, s.max_abs_float);
      all.max_abs_int = std::max(all.max_abs_int, s.max_abs_int);
      all.negative = all.negative || s.negative;
      all.fractional = all.fractional || s.fractional;
    }
    if (opt.unweighted) {  // every edge weighs 1 after the rules
      all.max_abs_int = n > 1 ? 1 : 0;
      all.max_abs_float = n > 1 ? 1.0 : 0.0;
      all.negative = all.fractional = false;
    }
    return all;
  }

  void scan_row(int64_t i, const Options& opt, InputStats& st) const {
    const T* r = row(i);
    const T inf = S::inf();
    if constexpr (std::is_floating_point_v<T>) {
      // Off-diagonal finite edges and negative diagonal entries count towards max |w|. The
      // off-diagonal columns in two branch-free runs, so that they vectorize (one loop with the
      // diagonal's test in it compiled to scalar code: 9 ns an element, more than a small graph's
      // solve; GPU_NOTES.md, fifty-eighth session), then the diagonal entry.
      T m = 0;
      int bad = 0, neg = 0, frac = 0;
      auto off_diagonal = [&](int64_t j0, int64_t j1) {
        // locals: through the lambda's captures (the row pointer, the reductions) it did not
        // vectorize
        const T* __restrict__ row_j = r;
        const T no_edge = inf;
        T m1 = 0;
        int bad1 = 0, neg1 = 0, frac1 = 0;
#pragma omp simd reduction(max : m1) reduction(| : bad1, neg1, frac1)
        for (int64_t j = j0; j < j1; ++j) {
          const T w = row_j[j];
          const T a = std::fabs(w);
          const int finite = int(a < no_edge);  // 0 for NaN too
          bad1 |= int(w != w) | int(w == -no_edge);
          neg1 |= int(w < 0);
          m1 = std::max(m1, finite ? a : T(0));
          frac1 |= finite & int(w != std::floor(w));
        }
        m = std::max(m, m1);
        bad |= bad1;
        neg |= neg1;
        frac |= frac1;
      };
      off_diagonal(0, i);
      off_diagonal(i + 1, n);
      const T d = r[i];
      bad |= int(d != d) | int(d == -inf);
      neg |= int(d < 0);
      if (d < 0 && d > -inf) m = std::max(m, -d);
      st.max_abs_float = std::max(st.max_abs_float, double(m));
      st.negative = st.negative || neg;
      st.fractional = st.fractional || frac;
      if (bad) {
        for (int64_t j = 0; j < n; ++j) {
          if (std::isnan(r[j]) && st.first_nan < 0) st.first_nan = i * n + j;
          if (r[j] == -inf && st.first_neg_inf < 0) st.first_neg_inf = i * n + j;
        }
      }
    } else {
      if (opt.unweighted) return;
      uint64_t m = 0;
      int neg = 0;
#pragma omp simd reduction(max : m) reduction(| : neg)
      for (int64_t j = 0; j < n; ++j) {
        const T w = r[j];
        neg |= int(w < 0);
        const uint64_t a = w < 0 ? uint64_t(0) - uint64_t(int64_t(w)) : uint64_t(w);
        m = std::max(m, (w < inf && (j != i || w < 0)) ? a : uint64_t(0));
      }
      st.max_abs_int = std::max(st.max_abs_int, m);
      st.negative = st.negative || neg;
    }
  }

  void apply_rules(const Options& opt) const {
    const T inf = S::inf();
    // Integers: anything >= INF is "no edge"; unweighted: every edge weighs 1. Floats need
    // neither pass unless unweighted (nothing compares above +inf).
    const bool clamp = opt.unweighted || !std::is_floating_point_v<T>;
    auto clamp_row = [&](T* r) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        T w = r[j];
        if (w > inf) w = inf;
        if (opt.unweighted && w < inf) w = T(1);
        r[j] = w;
      }
    };
    auto finish_row = [&](int64_t i) {
      T* r = row(i);
      r[i] = std::min(r[i], T(0));
      if (p) {
        int32_t* pr = prow(i);
        const int32_t self = int32_t(i);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) pr[j] = r[j] < inf ? self : kNoPredecessor;
        pr[i] = kNoPredecessor;
      }
    };
    if (opt.directed) {
#pragma omp parallel for schedule(static) if(n >= kParallelMinN)
      for (int64_t i = 0; i < n; ++i) {
        if (clamp) clamp_row(row(i));
        finish_row(i);
      }
      return;
    }
    if (clamp) {
#pragma omp parallel for schedule(static) if(n >= kParallelMinN)
      for (int64_t i = 0; i < n; ++i) clamp_row(row(i));
    }
#pragma omp parallel for schedule(dynamic, 16) if(n >= kParallelMinN)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) {
        const T w = std::min(row(i)[j], row(j)[i]);
        row(i)[j] = w;
        row(j)[i] = w;
      }
#pragma omp parallel for schedule(static) if(n >= kParallelMinN)
    for (int64_t i = 0; i < n; ++i) finish_row(i);
  }

  // ---- the hub bound (contract.hpp), on the matrix after the rules ---------------------------
  // (directed: an undirected graph is symmetric by then). Each thread passes over its rows with
  // its own copies of x and y, in place (a row reads what the thread's earlier rows lowered, so a
  // path whose vertices come in index order is found in one pass); the copies are merged after
  // each pass.
  bool hub_bound_fits() const {
    const auto start = std::chrono::steady_clock::now();
    const size_t count = static_cast<size_t>(n);
    std::vector<uint32_t> x(count), y(count);
    for (int64_t j = 0; j < n; ++j) x[j] = hub_weight(row(0)[j]), y[j] = hub_weight(row(j)[0]);
    x[0] = y[0] = 0;
    const int threads = n >= kParallelMinN ? omp_get_max_threads() : 1;
    std::vector<std::vector<uint32_t>> own(static_cast<size_t>(threads) * 2);
    int passes = 0;
    bool fits = false, lowered = true;
    for (;; ++passes) {
      const uint32_t most = *std::max_element(x.begin(), x.end()) +
                            *std::max_element(y.begin(), y.end());
      fits = most <= uint32_t(kNarrowMaxLength);
      if (fits || !lowered || passes == kHubPasses) break;
#pragma omp parallel num_threads(threads)
      {
        const size_t t = static_cast<size_t>(omp_get_thread_num());
        std::vector<uint32_t>&ox = own[2 * t], &oy = own[2 * t + 1];
        ox = x;
        oy = y;
        uint32_t* xo = ox.data();
        uint32_t* yo = oy.data();
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i) {
          const T* r = row(i);
          const uint32_t xi = xo[i];
          uint32_t to_hub = yo[i];
#pragma omp simd reduction(min : to_hub)
          for (int64_t j = 0; j < n; ++j) {
            const uint32_t w = hub_weight(r[j]);
            xo[j] = std::min(xo[j], hub_sum(xi, w));         // s -> i -> j
            to_hub = std::min(to_hub, hub_sum(w, yo[j]));  // i -> j -> s
          }
          yo[i] = to_hub;
        }
      }
      lowered = false;
      for (int t = 0; t < threads; ++t) {
        const uint32_t* ox = own[2 * size_t(t)].data();
        const uint32_t* oy = own[2 * size_t(t) + 1].data();
        for (size_t j = 0; j < count; ++j) {
          if (ox[j] < x[j]) x[j] = ox[j], lowered = true;
          if (oy[j] < y[j]) y[j] = oy[j], lowered = true;
        }
      }
    }
    if (std::getenv("APSP_CPU_TRACE"))
      std::fprintf(stderr, "apsp cpu: hub bound %s after %d passes, n = %lld (%.3f ms)\n",
                   fits ? "fits" : "refused", passes, static_cast<long long>(n),
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             start).count());
    return fits;
  }

  // ---- kernels ------------------------------------------------------------------------------
  // Operands are packed so that every stride and the depth are compile-time constants (GCC
  // vectorises the register tile's outer j loop only then): A is kRows x kBlock, B is kBlock x
  // kWidth (one column strip), and depths below kBlock (the last round) are padded with "no
  // edge", which never wins: inf + x = inf for floats, and for integers INF + b <= 2 INF never
  // overflows and is never below a stored value except through an INF operand, exactly as an
  // unreachable vertex behaves (see semiring.hpp).

  // The last row group (fewer than kRows rows): one row at a time, k outermost, the j loop
  // vectorised.
  static void tile_ragged(int64_t rows, int64_t cols, T* c, int64_t ldc, const T* a, const T* b) {
    for (int64_t r = 0; r < rows; ++r) {
      T* cr = c + r * ldc;
      for (int64_t k = 0; k < kBlock; ++k) {
        const T ak = a[r * kBlock + k];
        const T* bk = b + k * kWidth;
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) cr[j] = S::relax(cr[j], ak, bk[j]);
      }
    }
  }

  // Rows [i0, i0 + rows) x column strips [s0, s1): C = min(C, A (x) B), B packed strip-major
  // (strip s = columns [s kWidth, (s+1) kWidth), kBlock x kWidth each) starting at strip s0.
  void product(int64_t i0, int64_t rows, int64_t s0, int64_t s1, int64_t j_end, const T* a,
               const T* b) const {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t j = s * kWidth, cols = std::min<int64_t>(kWidth, j_end - j);
      T* c = row(i0) + j;
      const T* bs = b + (s - s0) * kBlock * kWidth;
      if (rows == kRows && cols == kWidth) {
        cpu_tile::tile_full<T, int(kBlock)>(c, ld, a, bs);
      } else if (rows == kRows) {  // the ragged last strip: a whole tile on a copy (B is padded)
        alignas(64) T cbuf[kRows * kWidth];
        for (int r = 0; r < kRows; ++r) {
          std::copy(c + r * ld, c + r * ld + cols, cbuf + r * kWidth);
          std::fill(cbuf + r * kWidth + cols, cbuf + (r + 1) * kWidth, S::inf());
        }
        cpu_tile::tile_full<T, int(kBlock)>(cbuf, kWidth, a, bs);
        for (int r = 0; r < kRows; ++r)
          std::copy(cbuf + r * kWidth, cbuf + r * kWidth + cols, c + r * ld);
      } else {
        tile_ragged(rows, cols, c, ld, a, bs);
      }
    }
  }

  // Packs rows [k0, k0 + kk) x columns [j0, j1) of (src, lds) into strip-major dst, strips
  // [j0 / kWidth, ...), padding rows >= kk and columns >= j1 of the last strip with `pad`.
  template <class U>
  static void pack(const U* src, int64_t lds, int64_t k0, int64_t kk, int64_t j0, int64_t j1,
                   U* dst, U pad) {
    for (int64_t j = j0; j < j1; j += kWidth) {
      const int64_t cols = std::min<int64_t>(kWidth, j1 - j);
      U* out = dst + (j / kWidth) * kBlock * kWidth;
      for (int64_t k = 0; k < kBlock; ++k) {
        U* o = out + k * kWidth;
        const U* in = src + (k0 + k) * lds + j;
        const int64_t real = k < kk ? cols : 0;
        for (int64_t c = 0; c < real; ++c) o[c] = in[c];
        for (int64_t c = real; c < kWidth; ++c) o[c] = pad;
      }
    }
  }

  // Pivot tile closure in a copy (kk x kk, stride kBlock): the textbook k-outer order. At
  // step k the row being written may be row k itself; every lane then reads and writes only its
  // own element, and the pivot value is read before the loop, so the SIMD loop is exact.
  static void close_pivot(T* pt, int64_t kk) {
    for (int64_t k = 0; k < kk; ++k) {
      const T* bk = pt + k * kBlock;
      for (int64_t i = 0; i < kk; ++i) {
        T* ci = pt + i * kBlock;
        const T ak = ci[k];
#pragma omp simd
        for (int64_t j = 0; j < kk; ++j) ci[j] = S::relax(ci[j], ak, bk[j]);
      }
    }
  }

  // ---- the round loop -----------------------------------------------------------------------
  void solve(const Options& opt) const {
    const T inf = S::inf();
    const int64_t strips = (n + kWidth - 1) / kWidth;
    constexpr int64_t kStrip = kBlock * kWidth;
    constexpr int64_t kPivotStrips = kBlock / kWidth;
    auto bp = aligned_buffer<T>(strips * kStrip);      // pre-round pivot rows, strip-major
    auto pt = aligned_buffer<T>(kBlock * kBlock);      // pivot tile being closed
    auto ps = aligned_buffer<T>(kPivotStrips * kStrip);  // closed pivot tile, strip-major
    const int64_t rounds = (n + kBlock - 1) / kBlock;
    const int64_t groups = (n + kRows - 1) / kRows;  // row groups never straddle a block
    constexpr int64_t kPackStrips = 4;

    for (int64_t round = 0; round < rounds; ++round) {
      const int64_t k0 = round * kBlock, k1 = std::min(n, k0 + kBlock), kk = k1 - k0;
      const int64_t sk0 = k0 / kWidth, sk1 = (k1 + kWidth - 1) / kWidth;  // pivot strips
#pragma omp parallel if(n >= kParallelMinN)
      {
        // 1. One thread closes the pivot tile ...
#pragma omp single nowait
        {
          for (int64_t i = 0; i < kk; ++i)
            std::copy(row(k0 + i) + k0, row(k0 + i) + k1, pt.get() + i * kBlock);
          close_pivot(pt.get(), kk);
          for (int64_t i = 0; i < kk; ++i)
            std::copy(pt.get() + i * kBlock, pt.get() + i * kBlock + kk, row(k0 + i) + k0);
          pack<T>(pt.get(), kBlock, 0, kk, 0, kk, ps.get(), inf);
        }
        // 2. ... while the others pack the pre-round pivot rows outside the pivot columns.
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t s = 0; s < strips; s += kPackStrips) {
          const int64_t s_end = std::min(strips, s + kPackStrips);
          for (const auto& [a, z] : {std::pair{s, std::min(s_end, sk0)},
                                     std::pair{std::max(s, sk1), s_end}}) {
            if (a >= z) continue;
            const int64_t j0 = a * kWidth, j1 = std::min(n, z * kWidth);
            pack<T>(d, ld, k0, kk, j0, j1, bp.get(), inf);
          }
        }
#pragma omp barrier
        // 3. Every row group: its pivot columns (first vertex in K), then the rest (last vertex).
        alignas(64) T abuf[kRows * kBlock];
#pragma omp for schedule(dynamic, 1)
        for (int64_t g = 0; g < groups; ++g) {
          const int64_t i0 = g * kRows, rows = std::min<int64_t>(kRows, n - i0);
          auto load_a = [&] {
            for (int64_t r = 0; r < rows; ++r) {
              std::copy(row(i0 + r) + k0, row(i0 + r) + k1, abuf + r * kBlock);
              std::fill(abuf + r * kBlock + kk, abuf + (r + 1) * kBlock, inf);
            }
          };
          load_a();
          if (i0 < k0 || i0 >= k1) {
            product(i0, rows, sk0, sk1, k1, abuf, ps.get());
            load_a();
          }
          product(i0, rows, 0, sk0, n, abuf, bp.get());
          product(i0, rows, sk1, strips, n, abuf, bp.get() + sk1 * kStrip);
        }
      }
      if (opt.progress) opt.progress(opt.progress_ctx, round + 1, rounds);
    }
  }

  // ---- the narrow solve: 16-bit lengths, in place -------------------------------------------
  // Graphs whose weights fit contract.hpp's rule (narrow_weights_fit) run the round loop above on
  // 16-bit lengths (Semiring<uint16_t>): twice int32's lanes a vector, four times the 8-byte
  // types'. No memory is added: a whole matrix (ld = n) holds its 16-bit rows packed at its
  // start, row after row (a pitch of n: 13% faster than the next layout for int32 and 17% for
  // float64 at n = 4096, on 2 AVX-512 cores); a view (ld > n) holds each at the start of its
  // own row's bytes (a pitch of ld * sizeof(T) / 2), so the bytes between its rows are never
  // touched. The rows are widened back before finalize, and after an exception too (a progress
  // callback that raised, Ctrl-C). The lengths are the same integers as T's sums, so the results
  // are the same (a weight of -0.0 comes back as 0.0).
  // Rows move in blocks [a, 2a) (row 0 alone first): packed, the block's 16-bit rows fill bytes
  // [2na, 4na), below the wide rows of the block and of every later one (from byte
  // sizeof(T) * n * a >= 4na), so narrowing runs the blocks in order, widening in reverse, and
  // the rows of one block in parallel. A row changes views only through memcpy of a row buffer.
  void solve_narrow(const Options& opt) const {
    constexpr uint16_t inf16 = Semiring<uint16_t>::inf();
    static_assert(sizeof(T) >= 2 * sizeof(uint16_t), "the 16-bit rows fit below the wide ones");
    char* bytes = reinterpret_cast<char*>(d);
    const size_t row16 = size_t(n) * sizeof(uint16_t);
    const int64_t ld16 = ld == n ? n : ld * int64_t(sizeof(T) / sizeof(uint16_t));
    auto by_blocks = [&](bool reverse, auto&& convert) {
      std::vector<std::pair<int64_t, int64_t>> blocks{{0, 1}};
      for (int64_t a = 1; a < n; a *= 2) blocks.emplace_back(a, std::min(n, 2 * a));
      if (reverse) std::reverse(blocks.begin(), blocks.end());
#pragma omp parallel if(n >= kParallelMinN)
      {
        std::vector<uint16_t> buf(static_cast<size_t>(n));
        for (const auto& [a, z] : blocks) {
#pragma omp for schedule(static)
          for (int64_t i = a; i < z; ++i)
            convert(row(i), bytes + size_t(i * ld16) * sizeof(uint16_t), buf.data());
        }
      }
    };
    by_blocks(false, [&](const T* r, char* out, uint16_t* buf) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) buf[j] = r[j] < T(inf16) ? uint16_t(r[j]) : inf16;
      std::memcpy(out, buf, row16);  // anything not below the 16-bit INF (INF, +inf) is INF
    });
    auto widen = [&] {
      by_blocks(true, [&](T* r, const char* in, uint16_t* buf) {
        std::memcpy(buf, in, row16);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) r[j] = buf[j] >= inf16 ? S::inf() : T(buf[j]);
      });
    };
    try {
      Cpu<uint16_t>{reinterpret_cast<uint16_t*>(d), n, ld16, nullptr, 0}.solve(opt);
    } catch (...) {
      widen();
      throw;
    }
    widen();
  }

  // ---- predecessors --------------------------------------------------------------------------
  // The textbook three-phase blocked order (pivot tile, pivot row and column, the rest) with k
  // outermost inside every tile, which is exact in place, and the lexicographic (length, hops)
  // step of semiring.hpp, so that ties never close a loop in the predecessor chains. Needs an
  // n x n scratch of hop counts (4 bytes per pair). The third phase reads only the pivot rows and
  // columns, which it does not write, so there any order of (i, j) is exact; in whole rounds it
  // runs on register strips (register_tile.hpp: pred_strip; 4-byte lengths on AVX-512 builds),
  // the pivot rows packed once a round after the second phase. Each entry still takes its steps
  // in increasing k, so the results are the loop's bit for bit.
  void solve_pred(const Options& opt) const {
    const size_t nn = size_t(n);
    auto hops = aligned_buffer<uint32_t>(
        int64_t(nn * nn), "the predecessors' hop counts (n x n x 4 bytes); free some memory, or "
                          "solve without return_predecessors=True");
    uint32_t* h = hops.get();
#pragma omp parallel for schedule(static) if(n >= kParallelMinN)
    for (int64_t i = 0; i < n; ++i) {
      std::fill(h + i * nn, h + (i + 1) * nn, 1u);  // non-edges count as INF-weight edges
      h[i * nn + i] = 0;
    }
    auto tile = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        const T* dk = row(k);
        const int32_t* pk = prow(k);
        const uint32_t* hk = h + k * nn;
        for (int64_t i = i0; i < i1; ++i) {
          T* di = row(i);
          int32_t* pi = prow(i);
          uint32_t* hi = h + i * nn;
          const T a = di[k];
          const uint32_t ha = hi[k];
#pragma omp simd
          for (int64_t j = j0; j < j1; ++j) relax_pred(di[j], pi[j], hi[j], a, dk[j], pk[j], ha, hk[j]);
        }
      }
    };
    // The register strips: whole strips of L columns, rows in groups of R, whole rounds.
    constexpr bool strips_built = cpu_tile::kPredStrips<T>;
    constexpr int64_t L = cpu_tile::kPredLanes<T>, R = cpu_tile::kPredRows;
    const int64_t strips = strips_built ? n / L : 0;
    const size_t packed = strips > 0 ? size_t(strips * kBlock * L) : 1;  // none without strips
    auto bd = aligned_buffer<T>(int64_t(packed), "the predecessors' packed pivot rows");
    auto bp = aligned_buffer<int32_t>(int64_t(packed), "the predecessors' packed pivot rows");
    auto bh = aligned_buffer<uint32_t>(int64_t(packed), "the predecessors' packed pivot rows");
    auto rest = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k0, int64_t k1) {
      if constexpr (strips_built) {
        if (k1 - k0 == kBlock) {
          const int64_t ie = i0 + (i1 - i0) / R * R, je = j0 + (j1 - j0) / L * L;  // j0 % L == 0
          alignas(64) T a[R * kBlock];
          alignas(64) uint32_t ha[R * kBlock];
          for (int64_t i = i0; i < ie; i += R) {
            for (int64_t q = 0; q < R; ++q)
              for (int64_t k = 0; k < kBlock; ++k) {
                a[q * kBlock + k] = row(i + q)[k0 + k];
                ha[q * kBlock + k] = h[(i + q) * nn + size_t(k0 + k)];
              }
            for (int64_t j = j0; j < je; j += L) {
              const size_t at = size_t(j / L * kBlock * L);
              cpu_tile::pred_strip<T, int(kBlock)>(row(i) + j, prow(i) + j, h + i * nn + size_t(j),
                                                    ld, pld, int64_t(nn), a, ha, bd.get() + at,
                                                    bp.get() + at, bh.get() + at);
            }
          }
          if (ie < i1) tile(ie, i1, j0, j1, k0, k1);
          if (je < j1) tile(i0, ie, je, j1, k0, k1);
          return;
        }
      }
      tile(i0, i1, j0, j1, k0, k1);
    };
    const int64_t nb = (n + kBlock - 1) / kBlock;
    auto lo = [](int64_t b) { return b * kBlock; };
    auto hi = [&](int64_t b) { return std::min(n, (b + 1) * kBlock); };
    for (int64_t r = 0; r < nb; ++r) {
      const int64_t k0 = lo(r), k1 = hi(r);
      tile(k0, k1, k0, k1, k0, k1);
#pragma omp parallel for schedule(dynamic, 1) if(n >= kParallelMinN)
      for (int64_t t = 0; t < 2 * nb; ++t) {
        const int64_t b = t / 2;
        if (b == r) continue;
        if (t % 2 == 0)
          tile(k0, k1, lo(b), hi(b), k0, k1);
        else
          tile(lo(b), hi(b), k0, k1, k0, k1);
      }
      if (strips > 0 && k1 - k0 == kBlock) {  // the pivot rows as the second phase left them
#pragma omp parallel for schedule(static) if(n >= kParallelMinN)
        for (int64_t st = 0; st < strips; ++st)
          for (int64_t k = 0; k < kBlock; ++k) {
            const size_t at = size_t((st * kBlock + k) * L);
            for (int64_t l = 0; l < L; ++l) {
              bd[at + size_t(l)] = row(k0 + k)[st * L + l];
              bp[at + size_t(l)] = prow(k0 + k)[st * L + l];
              bh[at + size_t(l)] = h[size_t(k0 + k) * nn + size_t(st * L + l)];
            }
          }
      }
#pragma omp parallel for schedule(dynamic, 1) collapse(2) if(n >= kParallelMinN)
      for (int64_t bi = 0; bi < nb; ++bi)
        for (int64_t bj = 0; bj < nb; ++bj)
          if (bi != r && bj != r) rest(lo(bi), hi(bi), lo(bj), hi(bj), k0, k1);
      if (opt.progress) opt.progress(opt.progress_ctx, r + 1, nb);
    }
  }

  // ---- finalize: unreachable -> INF, predecessors cleaned, negative diagonal collected -------
  std::vector<int64_t> finalize() const {
    const T inf = S::inf();
    if (p || !std::is_floating_point_v<T>) {
#pragma omp parallel for schedule(static) if(n >= kParallelMinN)
      for (int64_t i = 0; i < n; ++i) {
        T* r = row(i);
        if constexpr (!std::is_floating_point_v<T>) {
          const T limit = unreachable_threshold<T>();
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) r[j] = r[j] > limit ? inf : r[j];
        }
        if (p) {
          int32_t* pr = prow(i);
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) pr[j] = r[j] == inf ? kNoPredecessor : pr[j];
          pr[i] = kNoPredecessor;
        }
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
  bool narrow_weights = opt.unweighted;  // without the scan, only unit weights are known to fit
  bool hub_candidate = false;  // weights that fit all but the bound (n - 1) * max w
  if (opt.check_input) {
    const InputStats stats = e.scan(opt);
    check_input_stats(dist, stats);
    narrow_weights = narrow_weights_fit(stats, dist.n);
    hub_candidate = !narrow_weights && !opt.unweighted && narrow_weights_fit_with_hub(stats);
  }
  e.apply_rules(opt);
  const bool hub = !pred.data && hub_candidate && dist.n >= kHubMinN && narrow_size_fits(dist.n);
  if (hub) narrow_weights = e.hub_bound_fits();
  const bool narrow = !pred.data && narrow_weights && narrow_size_fits(dist.n);
  if (std::getenv("APSP_CPU_TRACE"))  // diagnostics, and how the tests see which solve ran
    std::fprintf(stderr, "apsp cpu: solve%s, %s, n = %lld\n",
                 pred.data ? " with predecessors" : narrow ? " on 16-bit lengths" : "",
                 dtype_name(dist.dtype), static_cast<long long>(dist.n));
  if (pred.data)
    e.solve_pred(opt);
  else if (narrow)
    e.solve_narrow(opt);
  else
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

void solve_cpu_batch(const Batch& dist, const PredBatch& pred, const Options& options) {
  check_batch(dist);
  const int64_t n = dist.first.n, count = dist.count;
  if (count == 0 || n == 0) return;
  if (pred.first && pred.ld < n)
    throw ValueError("a batch's predecessor rows overlap: ld " + std::to_string(pred.ld) +
                     " below n = " + std::to_string(n));
  Options o = options;
  o.progress = nullptr;  // no rounds to report: the batch polls for Ctrl-C between its graphs
  o.poll = nullptr;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(count));
  auto one = [&](int64_t b) {
    try {
      solve_cpu(dist.graph(b), pred.graph(b), o);
      if (pred.first) repair_predecessor_loops(dist.graph(b), pred.graph(b));  // as solve_host's
    } catch (...) {
      errors[size_t(b)] = std::current_exception();
    }
  };
  // Side by side, one graph a thread (each solve's own parallel regions on one thread), where the
  // graphs are small or enough to fill the threads (256 graphs of n = 256 on 16 threads: 2102 ms
  // one after another, 88 ms side by side; GPU_NOTES.md, fifty-eighth session); else one after
  // another, each with every thread. Polled for Ctrl-C between groups of about 2^25 updates a
  // thread (predecessors: solve_pred's updates cost about 6-10 plain ones).
  const int threads = omp_get_max_threads();
  const bool side_by_side = n < kParallelMinN || count >= 2 * int64_t(threads);
  const int64_t cost = n * n * n * (pred.first ? 8 : 1);
  const int64_t group =
      side_by_side ? std::clamp<int64_t>((int64_t(threads) << 25) / cost, threads, 1024) : 1;
  for (int64_t b0 = 0; b0 < count; b0 += group) {
    if (b0 > 0 && options.poll) options.poll(options.progress_ctx);
    const int64_t b1 = std::min(count, b0 + group);
    if (side_by_side) {
#pragma omp parallel num_threads(threads) if(b1 - b0 > 1)
      {
        omp_set_num_threads(1);  // this thread's nested regions (the solve's own) on one thread
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = b0; b < b1; ++b) one(b);
      }
    } else {
      one(b0);
    }
    for (int64_t b = b0; b < b1; ++b)
      if (errors[size_t(b)]) rethrow_for_graph(errors[size_t(b)], b);
  }
}

}  // namespace apsp
