// The whole solve of a graph with 64 < n <= 256 in one launch, on one thread-block cluster
// (sm_90): S x S blocks (S = ceil(n / 64), up to 16 blocks on 16 SMs) each keep a 64 x 64 region
// of the matrix in shared memory for the whole solve and run the blocked algorithm with 32-wide
// pivots. Blocks read the pivot tile and the panels from each other's shared memory (distributed
// shared memory) and meet at cluster barriers, so a round costs no launch and no trip through
// global memory: at these sizes the launch-per-phase plan is bound by launch latency and the
// pivot chain, not arithmetic (benchmarks/GPU_NOTES.md).
//
// Round r (pivot rows/columns [32 r, 32 r + 32), in the regions of block row/column pa = r / 2):
//   barrier  pivot tile r is closed; every block is done with round r - 1
//   phase 2  blocks of row pa update their part of the pivot rows (P* (x) R), blocks of column pa
//            their part of the pivot columns (C (x) P*), from a copy of P*
//   barrier  the panels are final
//   phase 3  every block copies its part of the pivot columns from block (a, pa) and of the pivot
//            rows from block (pa, b) and updates the rest of its region. The block holding pivot
//            tile r + 1 updates that tile first; 64 of its threads close it (phase 1 of round
//            r + 1) while the others update the rest.
// Nothing is written that another block reads in the same phase (phase 3 leaves the panels alone;
// the next pivot tile is no panel of this round), so results do not depend on timing. Padding
// past n is INF and changes nothing. Not for: predecessors (engine.cu picks another plan), GPUs
// without clusters (engine.cu checks that one fits before choosing this plan).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "cuda/kernels.cuh"

namespace apsp::cuda_detail {

struct ClusterShape {
  static constexpr int W = 64;            // region side per block
  static constexpr int P = 32;            // pivot width
  static constexpr int S_max = 4;         // regions per side: 16 blocks, the largest cluster
  static constexpr int max_n = W * S_max;
  static constexpr int threads = 256;     // 16 x 16
  static constexpr int elems = W * W + 2 * W * P + P * P;  // region, panel copies, pivot copy
  template <class T>
  static constexpr size_t smem_bytes() {
    return size_t(elems) * sizeof(T);
  }
};

// N consecutive elements from (shared) memory, as 16- or 8-byte vectors where they fill them.
template <class T, int N>
__device__ __forceinline__ void load_vec(const T* p, T (&v)[N]) {
  constexpr int bytes = N * int(sizeof(T));
  if constexpr (bytes % 16 == 0) {
#pragma unroll
    for (int q = 0; q < bytes / 16; ++q) {
      const uint4 x = reinterpret_cast<const uint4*>(p)[q];
      memcpy(&v[q * (16 / int(sizeof(T)))], &x, 16);
    }
  } else if constexpr (bytes % 8 == 0) {
#pragma unroll
    for (int q = 0; q < bytes / 8; ++q) {
      const uint2 x = reinterpret_cast<const uint2*>(p)[q];
      memcpy(&v[q * (8 / int(sizeof(T)))], &x, 8);
    }
  } else {
#pragma unroll
    for (int q = 0; q < N; ++q) v[q] = p[q];
  }
}

// c = min(c, A (x) B) over KD steps: A row-major (c's rows, k), B row-major (k, c's columns),
// both in shared memory; A read a 16-byte vector of k at a time.
template <class T, int TM, int TN, int KD>
__device__ __forceinline__ void minplus_acc(T (&c)[TM][TN], const T* A, int lda, const T* B,
                                            int ldb) {
  constexpr int KV = 16 / int(sizeof(T));
#pragma unroll 1
  for (int k0 = 0; k0 < KD; k0 += KV) {
    T a[TM][KV];
#pragma unroll
    for (int i = 0; i < TM; ++i) load_vec(A + i * lda + k0, a[i]);
#pragma unroll
    for (int kk = 0; kk < KV; ++kk) {
      T b[TN];
      load_vec(B + (k0 + kk) * ldb, b);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) c[i][j] = Semiring<T>::relax(c[i][j], a[i][kk], b[j]);
    }
  }
}

// A Rows x Cols block between shared memories (the source may be another block's, through a
// generic pointer), by all threads of the block in 16-byte vectors: every load is issued before
// the first store, so a copy costs one round trip.
template <class T, int Rows, int Cols>
struct BlockCopy {
  static constexpr int V = 16 / int(sizeof(T)), per_row = Cols / V;
  static constexpr int N = Rows * per_row / ClusterShape::threads;
  static_assert(Cols % V == 0 && (Rows * per_row) % ClusterShape::threads == 0, "whole vectors");
  uint4 v[N];
  __device__ __forceinline__ void load(const T* src, int sld) {
#pragma unroll
    for (int q = 0; q < N; ++q) {
      const int t = q * ClusterShape::threads + int(threadIdx.x);
      v[q] = *reinterpret_cast<const uint4*>(src + t / per_row * sld + t % per_row * V);
    }
  }
  __device__ __forceinline__ void store(T* dst, int dld) const {
#pragma unroll
    for (int q = 0; q < N; ++q) {
      const int t = q * ClusterShape::threads + int(threadIdx.x);
      *reinterpret_cast<uint4*>(dst + t / per_row * dld + t % per_row * V) = v[q];
    }
  }
};

// Closure of the 32 x 32 tile at (o, o) of the region by threads 0..63 (4 x 4 each; named
// barrier 1), `kw` pivots.
template <class T>
__device__ __forceinline__ void close_pivot(T* reg, int o, int kw) {
  constexpr int W = ClusterShape::W, P = ClusterShape::P;
  const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
  T c[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) load_vec(reg + (o + 4 * ty + i) * W + o + 4 * tx, c[i]);
  close_tile_fast<T, P, 4, 1>(c, kw);
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) reg[(o + 4 * ty + i) * W + o + 4 * tx + j] = c[i][j];
}

template <class T>
__global__ void __launch_bounds__(ClusterShape::threads, 1)
    cluster_solve_kernel(T* __restrict__ d, int n, int64_t ld, int S, bool directed,
                         bool unweighted, DeviceStats* st, int64_t* negative) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int W = ClusterShape::W, P = ClusterShape::P, NT = ClusterShape::threads;
  constexpr int per = W / P;  // pivot blocks per region side
  static_assert(per == 2, "phase 2 pairs each panel tile with the one beside it");
  const T inf = Semiring<T>::inf();
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int a = rank / S, b = rank % S;  // this block's region: rows 64 a.., columns 64 b..
  extern __shared__ __align__(16) unsigned char cluster_smem[];
  T* reg = reinterpret_cast<T*>(cluster_smem);  // W x W, the region
  T* colbuf = reg + W * W;                       // W x P: pivot columns of this block's rows
  T* rowbuf = colbuf + W * P;                    // P x W: pivot rows of this block's columns
  T* piv = rowbuf + P * W;                       // P x P: the closed pivot tile
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  constexpr int Q = W * W / NT;  // region elements per thread: q * NT + tid, q < Q
  auto row_of = [&](int q) { return a * W + (q * NT + tid) / W; };
  auto col_of = [&](int q) { return b * W + (q * NT + tid) % W; };

  // The region, with the rules applied from the input (read only: other blocks read the
  // transposed elements of undirected graphs from it until the first cluster barrier). Every
  // load is issued before the first rule.
  {
    T w[Q], wt[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int i = row_of(q), j = col_of(q);
      w[q] = i < n && j < n ? d[int64_t(i) * ld + j] : inf;
      wt[q] = i < n && j < n && !directed ? d[int64_t(j) * ld + i] : inf;
    }
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int i = row_of(q), j = col_of(q);
      const bool in = i < n && j < n;
      reg[q * NT + tid] = in ? rule_pair(w[q], wt[q], directed, unweighted, i == j) : inf;
    }
  }
  __syncthreads();

  const int rounds = (n + P - 1) / P;
  auto kwidth = [&](int r) { return n - r * P < P ? n - r * P : P; };
  // One cluster barrier: what any block wrote to its shared memory before it is visible to every
  // thread of every block after it, so it also does the work of a __syncthreads. The .aligned
  // form: cg's cluster.sync() compiles to twice the barrier code. (Split barriers, arrive early
  // and wait late, were slower: 53.4 against 50.0 us at n = 256 int32 on an H100, and
  // compute-sanitizer never returned from them.)
  auto cluster_sync = [] {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n"
        "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  };
  if (rank == 0 && tid < 64) close_pivot(reg, 0, kwidth(0));  // phase 1 of round 0
  for (int r = 0; r < rounds; ++r) {
    const int pa = r / per, po = (r % per) * P;  // pivot block row/column, offset in region
    const bool row_band = a == pa, col_band = b == pa;
    cluster_sync();  // pivot tile r is closed; every block is done with round r - 1
    if (row_band || col_band) {
      // phase 2: two 32 x 32 panel tiles per block, threads 0..127 the first, 128..255 the
      // second, 2 x 4 elements each: the block's part of the pivot rows (P* (x) R), of the pivot
      // columns (C (x) P*), or at the pivot block one of each beside the pivot tile.
      BlockCopy<T, P, P> pc;
      pc.load(cluster.map_shared_rank(reg, unsigned(pa * S + pa)) + po * W + po, W);
      pc.store(piv, P);
      __syncthreads();
      const int half = tid / 128, u = tid % 128, ri = 2 * (u / 8), ci = 4 * (u % 8);
      const int other = (per - 1 - po / P) * P;  // beside the pivot tile (per = 2)
      const bool rows = row_band && !(col_band && half == 1);  // a pivot-row tile
      const int i0 = rows ? po : col_band && row_band ? other : half * P;
      const int j0 = !rows ? po : col_band ? other : half * P;
      T c[2][4];
#pragma unroll
      for (int i = 0; i < 2; ++i) load_vec(reg + (i0 + ri + i) * W + j0 + ci, c[i]);
      if (rows)
        minplus_acc<T, 2, 4, P>(c, piv + ri * P, P, reg + po * W + j0 + ci, W);
      else
        minplus_acc<T, 2, 4, P>(c, reg + (i0 + ri) * W + po, W, piv + ci, P);
      __syncthreads();  // every read of the old panels is done
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) reg[(i0 + ri + i) * W + j0 + ci + j] = c[i][j];
    }
    cluster_sync();  // the panels of round r are final
    // phase 3: the panels stay as they are (other blocks may be copying them)
    {
      BlockCopy<T, W, P> cc;
      BlockCopy<T, P, W> rc;
      cc.load(cluster.map_shared_rank(reg, unsigned(a * S + pa)) + po, W);
      rc.load(cluster.map_shared_rank(reg, unsigned(pa * S + b)) + po * W, W);
      cc.store(colbuf, P);
      rc.store(rowbuf, W);
    }
    const bool closes_next = r + 1 < rounds && a == (r + 1) / per && b == (r + 1) / per;
    __syncthreads();
    // Phase 3 on TM x TN elements at (i0, j0) of the region, per thread.
    auto update = [&](auto tm, auto tn, int i0, int j0) {
      constexpr int TM = decltype(tm)::value, TN = decltype(tn)::value;
      T c[TM][TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) load_vec(reg + (i0 + i) * W + j0, c[i]);
      minplus_acc<T, TM, TN, P>(c, colbuf + i0 * P, P, rowbuf + j0, W);
      const bool panel =
          (row_band && i0 >= po && i0 < po + P) || (col_band && j0 >= po && j0 < po + P);
      if (!panel)
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) reg[(i0 + i) * W + j0 + j] = c[i][j];
    };
    using two = std::integral_constant<int, 2>;
    using four = std::integral_constant<int, 4>;
    const int np = (r + 1) % per * P;  // the next pivot tile's offset in its region
    if (closes_next) {
      // This block closes the next pivot tile: it updates that tile first (2 x 2 per thread),
      // then threads 0..63 close it while the rest update the other three 32 x 32 tiles.
      update(two{}, two{}, np + 2 * ty, np + 2 * tx);
      __syncthreads();
      if (tid < 64) {
        close_pivot(reg, np, kwidth(r + 1));
      } else {
        const int t = tid - 64, s = t / 64, u = t % 64;
        const int tile = s + (s >= np / P * (per + 1));  // of the 2 x 2, skipping the next pivot
        update(four{}, four{}, tile / per * P + 4 * (u / 8), tile % per * P + 4 * (u % 8));
      }
    } else {
      update(four{}, four{}, 4 * ty, 4 * tx);
    }
  }
  cluster_sync();  // no block reads this one's shared memory any more

#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int i = row_of(q), j = col_of(q);
    if (i < n && j < n)
      d[int64_t(i) * ld + j] = finalize_value(reg[q * NT + tid], st, negative, i, j);
  }
#else
  __trap();  // sm_90 and later only: engine.cu never launches it elsewhere
#endif
}

}  // namespace apsp::cuda_detail
