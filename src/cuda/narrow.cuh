// The narrow plan's kernels: graphs of non-negative integer weights (int32, int64, or floats whose
// weights are all whole numbers) whose every path length fits in 15 bits ((n - 1) * max w <
// 2^15 - 1: hop counts up to n = 32767, weights up to 32 at n = 1000) solved on two 16-bit
// lengths per 32-bit word, one VIADDMNMX.U16x2 for two min-plus updates (NarrowPair,
// semiring.hpp): twice the int32 step's rate, six to ten times the 8-byte types' (H100 ceilings:
// benchmarks/ceiling.cu).
// The matrix is narrowed in place: each row's 16-bit lengths at the start of its own bytes (the
// row pitch is unchanged, so no memory is added), with INF as NarrowPair::inf and, where n is
// odd, one more length of INF after the last column so that each row is whole words. The round
// loop (engine.cu: enqueue_rounds) runs on 128 x 128 tiles: the pivot closure is kernels.cuh's
// pivot kernel on 16-bit lengths closed as 32-bit integers (engine.cu: PlanNarrow), and phases
// 2 and 3 are one min-plus product kernel below, over the same tile sets as kernels.cuh's. Then
// the rows are widened back before finalize (engine.cu: run_plan).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/contract.hpp"
#include "core/semiring.hpp"
#include "cuda/kernels.cuh"

namespace apsp::cuda_detail {

// ---- in place: a row of V to 16-bit lengths and back ----------------------------------------------
// One block a row; every thread reads its words' values before any thread writes (the 16-bit row
// overlaps the first half of the wide one). NarrowRows::max_n bounds the words a thread holds.
struct NarrowRows {
  static constexpr int threads = 1024, words_per_thread = 16;
  static constexpr int64_t max_n = int64_t(2) * threads * words_per_thread;  // 32768
};
template <class V>
__global__ void __launch_bounds__(NarrowRows::threads)
    narrow_rows_kernel(void* __restrict__ d, int64_t n, int64_t ld) {
  constexpr int Q = NarrowRows::words_per_thread, T = NarrowRows::threads;
  char* row = static_cast<char*>(d) + int64_t(blockIdx.x) * ld * int64_t(sizeof(V));
  const V* wide = reinterpret_cast<const V*>(row);
  const int64_t words = (n + 1) / 2;
  // "No edge" (the rules left exactly INF: an integer sentinel, or +inf) -> inf; so does a NaN,
  // which only an unweighted float graph with the checks off can bring.
  auto narrow = [&](int64_t j) -> uint32_t {
    if (j >= n) return NarrowPair::inf;
    const V w = wide[j];
    return w < V(NarrowPair::inf) ? uint32_t(w) : NarrowPair::inf;
  };
  uint32_t x[Q];
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int64_t m = threadIdx.x + int64_t(q) * T;
    x[q] = m < words ? narrow(2 * m) | (narrow(2 * m + 1) << 16) : 0;
  }
  __syncthreads();
  uint32_t* out = reinterpret_cast<uint32_t*>(row);
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int64_t m = threadIdx.x + int64_t(q) * T;
    if (m < words) out[m] = x[q];
  }
}
template <class V>
__global__ void __launch_bounds__(NarrowRows::threads)
    widen_rows_kernel(void* __restrict__ d, int64_t n, int64_t ld) {
  constexpr int Q = NarrowRows::words_per_thread, T = NarrowRows::threads;
  char* row = static_cast<char*>(d) + int64_t(blockIdx.x) * ld * int64_t(sizeof(V));
  const uint32_t* in = reinterpret_cast<const uint32_t*>(row);
  const int64_t words = (n + 1) / 2;
  uint32_t x[Q];
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int64_t m = threadIdx.x + int64_t(q) * T;
    x[q] = m < words ? in[m] : 0;
  }
  __syncthreads();
  V* wide = reinterpret_cast<V*>(row);
  auto widen = [](uint32_t h) { return h >= NarrowPair::inf ? Semiring<V>::inf() : V(h); };
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int64_t m = threadIdx.x + int64_t(q) * T;
    if (m >= words) continue;
    wide[2 * m] = widen(x[q] & 0xFFFF);
    if (2 * m + 1 < n) wide[2 * m + 1] = widen(x[q] >> 16);
  }
}

// ---- phases 2 and 3: C = min(C, A (x) B) on 128 x 128 tiles -----------------------------------
// The tile sets, their aliasing rules and the k ranges are kernels.cuh's (minplus_kernel). C and
// B are words of two lengths; thread (ty, tx) owns rows ty + RY a (a < TM) and words
// 4 tx .. 4 tx + 3 (8 columns). Each k chunk of BK lands by cp.async, A as it is in memory (two
// pivots a word), B as rows of words; then the block spreads A into `dup`, each length in both
// halves of a word, m-major (padded by one 16-byte vector: two rows a warp read conflict-free),
// so that the product reads A as kernels.cuh's does, 16 bytes (4 pivots) a row, and takes one
// instruction for two updates. Pivots past kw get inf in `dup`, so they change nothing.
struct NarrowGemm {
  static constexpr int tile = 128, KW = tile / 2;     // columns, words a tile row
  static constexpr int TM = 8, TW = 4;                // rows and words a thread
  static constexpr int RY = tile / TM, RX = KW / TW;  // 16 x 16
  static constexpr int threads = RY * RX;             // 256
  static constexpr int BK = 32, k_chunk = BK, STAGES = 3, MINB = 2;
  static constexpr int A_WORDS = tile * (BK / 2), B_WORDS = BK * KW;  // raw, a stage
  static constexpr int STAGE_WORDS = A_WORDS + B_WORDS;
  static constexpr int DUP_LD = BK + 4;
  static constexpr size_t dup_offset = size_t(STAGES) * STAGE_WORDS * 4;
  static constexpr size_t smem_bytes = dup_offset + size_t(tile) * DUP_LD * 4;
  static_assert(A_WORDS / 4 == 2 * threads && B_WORDS / 4 == 2 * threads, "two vectors a thread");
};

// How a tile is loaded and stored (kernels.cuh's modes): Interior (rows on 16 bytes, the tile
// inside the matrix, kw a multiple of BK: 16-byte copies, no bounds), Edge (rows on 16 bytes:
// 16-byte copies zero-filled outside the matrix) and Any (rows on 4 bytes, as every int32 or
// int64 row starts: one word a copy, zero-filled outside).
enum class NarrowMode { Interior, Edge, Any };
template <NarrowMode M>
__device__ __forceinline__ void narrow_tile(uint16_t* __restrict__ d, int64_t n, int64_t ld,
                                            int64_t k0, int kw, TileCoords tc,
                                            uint32_t* __restrict__ smem) {
  using G = NarrowGemm;
  constexpr bool Inside = M == NarrowMode::Interior;
  constexpr int TM = G::TM, TW = G::TW, RY = G::RY, BK = G::BK, S = G::STAGES;
  const int tid = threadIdx.x, tx = tid % G::RX, ty = tid / G::RX;
  const int64_t words = (n + 1) / 2;  // a row's words, the last one padded where n is odd
  uint32_t* dup = smem + G::dup_offset / 4;

  // Copies: thread t takes A vector t % 4 of rows t / 4 and t / 4 + 64, and B vector t % 16 of
  // k rows t / 16 and t / 16 + 16. Edge: zero-filled outside the matrix (rows past n are never
  // stored; B columns past the padded row only feed words that are never stored; A pivots past
  // kw are set to inf in dup).
  auto load_chunk = [&](int chunk, int stage) {
    uint32_t* As = smem + stage * G::STAGE_WORDS;
    uint32_t* Bs = As + G::A_WORDS;
    const int kc = chunk * BK;
    if constexpr (M == NarrowMode::Any) {
      auto copy_word = [&](uint32_t* dst, const uint16_t* src, int bytes) {
        const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s),
                     "l"(bytes ? src : d), "r"(bytes));
      };
#pragma unroll 1
      for (int q = 0; q < G::A_WORDS / G::threads; ++q) {
        const int e = tid + q * G::threads, m = e / (BK / 2), w = e % (BK / 2);
        const int64_t i = tc.i0 + m, k = k0 + kc + 2 * w;
        copy_word(As + e, d + i * ld + k, i < n && k < n ? (k + 1 < n ? 4 : 2) : 0);
      }
#pragma unroll 1
      for (int q = 0; q < G::B_WORDS / G::threads; ++q) {
        const int e = tid + q * G::threads, kk = e / G::KW, w = e % G::KW;
        const int64_t k = k0 + kc + kk, j = tc.j0 + 2 * w;
        copy_word(Bs + e, d + k * ld + j, k < n && j < 2 * words ? 4 : 0);
      }
      return;
    }
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int m = tid / 4 + 64 * q, v = tid % 4;  // 8 lengths a vector
      const int64_t i = tc.i0 + m, k = k0 + kc + 8 * v;
      const uint16_t* src = d + i * ld + k;
      if constexpr (Inside) {
        cp_async_16(static_cast<unsigned>(__cvta_generic_to_shared(As + m * (BK / 2) + 4 * v)),
                    src);
      } else {
        const int bytes = i < n ? clamp_bytes(n - k, 2) : 0;
        cp_async_zfill(As + m * (BK / 2) + 4 * v, bytes ? src : d, bytes);
      }
    }
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int kk = tid / 16 + 16 * q, v = tid % 16;
      const int64_t k = k0 + kc + kk, j = tc.j0 + 8 * v;
      const uint16_t* src = d + k * ld + j;
      if constexpr (Inside) {
        cp_async_16(static_cast<unsigned>(__cvta_generic_to_shared(Bs + kk * G::KW + 4 * v)), src);
      } else {
        const int bytes = k < n ? clamp_bytes(2 * words - j, 2) : 0;
        cp_async_zfill(Bs + kk * G::KW + 4 * v, bytes ? src : d, bytes);
      }
    }
  };

  const int chunks = (kw + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < chunks) load_chunk(s, s);
    cp_async_commit();
  }

  uint32_t c[TM][TW];
  const int64_t w0 = tc.j0 / 2 + TW * tx;  // the thread's first word
#pragma unroll
  for (int a = 0; a < TM; ++a) {
    const int64_t i = tc.i0 + ty + RY * a;
    const uint32_t* row = reinterpret_cast<const uint32_t*>(d + i * ld) + w0;
    if (Inside || (M == NarrowMode::Edge && i < n && w0 + TW <= words)) {
      *reinterpret_cast<uint4*>(c[a]) = *reinterpret_cast<const uint4*>(row);
    } else {
#pragma unroll
      for (int b = 0; b < TW; ++b) c[a][b] = i < n && w0 + b < words ? row[b] : NarrowPair::inf_pair;
    }
  }

  for (int chunk = 0; chunk < chunks; ++chunk) {
    cp_async_wait<S - 2>();
    __syncthreads();  // the chunk has landed; every thread is done with dup and the stage refilled
    {
      // A's 2 x 128 x 16 words to dup: thread t spreads 8 words of row t / 2 (16 pivots).
      const uint32_t* As = smem + (chunk % S) * G::STAGE_WORDS;
      const int m = tid / 2, h = tid % 2, klim = kw - chunk * BK - 16 * h;  // pivots left
      const uint4* src = reinterpret_cast<const uint4*>(As + m * (BK / 2) + 8 * h);
      uint4* dst = reinterpret_cast<uint4*>(dup + m * G::DUP_LD + 16 * h);
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const uint4 u = src[q];
        const uint32_t x[4] = {u.x, u.y, u.z, u.w};
        uint32_t y[8];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int kk = 8 * q + 2 * e;
          y[2 * e] = Inside || kk < klim ? __byte_perm(x[e], 0, 0x1010) : NarrowPair::inf_pair;
          y[2 * e + 1] = Inside || kk + 1 < klim ? __byte_perm(x[e], 0, 0x3232)
                                                 : NarrowPair::inf_pair;
        }
        dst[2 * q] = make_uint4(y[0], y[1], y[2], y[3]);
        dst[2 * q + 1] = make_uint4(y[4], y[5], y[6], y[7]);
      }
    }
    {
      const int next = chunk + S - 1;
      if (next < chunks) load_chunk(next, next % S);
      cp_async_commit();
    }
    __syncthreads();  // dup is complete
    const uint32_t* Bs = smem + (chunk % S) * G::STAGE_WORDS + G::A_WORDS;
#pragma unroll
    for (int k4 = 0; k4 < BK; k4 += 4) {
      uint32_t av[TM][4];
#pragma unroll
      for (int a = 0; a < TM; ++a)
        *reinterpret_cast<uint4*>(av[a]) =
            *reinterpret_cast<const uint4*>(dup + (ty + RY * a) * G::DUP_LD + k4);
#pragma unroll
      for (int kv = 0; kv < 4; ++kv) {
        uint32_t bv[TW];
        *reinterpret_cast<uint4*>(bv) =
            *reinterpret_cast<const uint4*>(Bs + (k4 + kv) * G::KW + TW * tx);
#pragma unroll
        for (int a = 0; a < TM; ++a)
#pragma unroll
          for (int b = 0; b < TW; ++b) c[a][b] = NarrowPair::relax(c[a][b], av[a][kv], bv[b]);
      }
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int a = 0; a < TM; ++a) {
    const int64_t i = tc.i0 + ty + RY * a;
    if (!Inside && i >= n) continue;
    uint32_t* row = reinterpret_cast<uint32_t*>(d + i * ld) + w0;
    if (Inside || (M == NarrowMode::Edge && w0 + TW <= words)) {
      *reinterpret_cast<uint4*>(row) = *reinterpret_cast<const uint4*>(c[a]);
    } else {
#pragma unroll
      for (int b = 0; b < TW; ++b)
        if (w0 + b < words) row[b] = c[a][b];
    }
  }
}

// The signature of kernels.cuh's minplus_kernel (engine.cu launches either): d and ld in 16-bit
// lengths; `aligned`: the rows start on 16 bytes (else on 4); p, below_zero and maps are unused.
__global__ void __launch_bounds__(NarrowGemm::threads, NarrowGemm::MINB)
    narrow_minplus_kernel(uint16_t* __restrict__ d, int64_t n, int64_t ld, int32_t*, int64_t,
                          TileSet ts, int64_t k0, int kw, bool aligned, const unsigned*,
                          const __grid_constant__ GemmMaps) {
  extern __shared__ __align__(16) unsigned char narrow_smem[];
  wait_for_previous_grid();
  uint32_t* smem = reinterpret_cast<uint32_t*>(narrow_smem);
  const TileCoords tc = tile_coords(ts, NarrowGemm::tile);
  if (!aligned)
    narrow_tile<NarrowMode::Any>(d, n, ld, k0, kw, tc, smem);
  else if (kw % NarrowGemm::BK == 0 && tc.i0 + NarrowGemm::tile <= n &&
           tc.j0 + NarrowGemm::tile <= n)
    narrow_tile<NarrowMode::Interior>(d, n, ld, k0, kw, tc, smem);
  else
    narrow_tile<NarrowMode::Edge>(d, n, ld, k0, kw, tc, smem);
}

// ---- the hub bound: whether every path fits where (n - 1) * max w does not (contract.hpp) ----
// On the input as it is (before the rules), with the hub s = 0. x[j] >= d(s, j) and y[i] >=
// d(i, s): path lengths, relaxed in place (atomicMin), so any value a pass reads is one. An
// undirected graph passes x == y: each entry relaxes both ways (an entry is at least the
// undirected weight of its edge). state: [0] the verdict (HubState), [1] whether the pass since
// the last check lowered a value, [2] the passes run.
enum HubState : unsigned { kHubOpen = 0, kHubFits = 1, kHubRefused = 2 };
struct HubRelax {
  static constexpr int threads = 256, max_rows = 64, warps = threads / 32;
  // Rows a block relaxes: up to max_rows, fewer where that would leave too few blocks to keep
  // the GPU busy (n = 1024: 4 x 16 blocks of 64 rows; 4 rows a block give 4 x 256).
  static int rows(int64_t n) {
    const int64_t strips = (n + threads - 1) / threads, want_blocks = 1024;
    const int64_t r = n * strips / want_blocks;
    return int(r < 1 ? 1 : r > max_rows ? max_rows : r);
  }
};
template <class V>
__global__ void hub_init_kernel(const V* __restrict__ d, int64_t n, int64_t ld, bool directed,
                                uint32_t* x, uint32_t* y, unsigned* state) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j == 0) state[0] = kHubOpen, state[1] = 1, state[2] = 0;
  if (j >= n) return;
  const uint32_t out = j == 0 ? 0 : hub_weight(d[j]), in = j == 0 ? 0 : hub_weight(d[j * ld]);
  if (directed)
    x[j] = out, y[j] = in;
  else
    x[j] = min(out, in);
}
template <class V>
__global__ void __launch_bounds__(HubRelax::threads)
    hub_relax_kernel(const V* __restrict__ d, int64_t n, int64_t ld, int R, uint32_t* x,
                     uint32_t* y, unsigned* state) {
  constexpr int W = HubRelax::warps;
  if (*static_cast<volatile unsigned*>(state) != kHubOpen) return;  // decided: nothing to do
  __shared__ uint32_t xs[HubRelax::max_rows];
  __shared__ uint32_t part[HubRelax::max_rows][W];
  const int64_t j = int64_t(blockIdx.x) * HubRelax::threads + threadIdx.x;
  const int64_t i0 = int64_t(blockIdx.y) * R;
  if (threadIdx.x < R) xs[threadIdx.x] = i0 + threadIdx.x < n ? x[i0 + threadIdx.x] : kHubFar;
  __syncthreads();
  const uint32_t yj = j < n ? y[j] : kHubFar;
  const int rows = n - i0 < R ? int(n - i0) : R;
  uint32_t col = kHubFar;
  for (int r = 0; r < rows; ++r) {
    const uint32_t w = j < n ? hub_weight(d[(i0 + r) * ld + j]) : kHubFar;
    col = min(col, hub_sum(xs[r], w));  // s -> i0 + r -> j
    uint32_t row = hub_sum(w, yj);       // i0 + r -> j -> s
    for (int o = 16; o > 0; o >>= 1) row = min(row, __shfl_xor_sync(0xffffffffu, row, o));
    if (threadIdx.x % 32 == 0) part[r][threadIdx.x / 32] = row;
  }
  __syncthreads();
  bool lowered = false;
  if (threadIdx.x < rows) {
    uint32_t row = part[threadIdx.x][0];
    for (int w = 1; w < W; ++w) row = min(row, part[threadIdx.x][w]);
    uint32_t* target = &y[i0 + threadIdx.x];
    lowered = row < *target && atomicMin(target, row) > row;
  }
  if (j < n && col < x[j]) lowered = atomicMin(&x[j], col) > col || lowered;
  if (lowered) state[1] = 1;
}
// One block: the verdict after a pass (or the first rows), `last` after the final pass.
__global__ void __launch_bounds__(1024)
    hub_check_kernel(const uint32_t* x, const uint32_t* y, int64_t n, bool last, unsigned* state) {
  if (state[0] != kHubOpen) return;
  __shared__ uint32_t most[2][32];
  uint32_t mx = 0, my = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) mx = max(mx, x[j]), my = max(my, y[j]);
  for (int o = 16; o > 0; o >>= 1) {
    mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    my = max(my, __shfl_xor_sync(0xffffffffu, my, o));
  }
  if (threadIdx.x % 32 == 0) most[0][threadIdx.x / 32] = mx, most[1][threadIdx.x / 32] = my;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < int(blockDim.x / 32); ++w)  // warp 0's maxima are thread 0's own already
    mx = max(mx, most[0][w]), my = max(my, most[1][w]);
  if (mx + my <= uint32_t(kNarrowMaxLength))
    state[0] = kHubFits;
  else if (last || state[1] == 0)  // no pass left, or the last one lowered nothing
    state[0] = kHubRefused;
  state[1] = 0;
  state[2] += 1;
}

}  // namespace apsp::cuda_detail
