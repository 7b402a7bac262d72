// The whole solve of a graph with 64 < n <= 256 in one launch, on one thread-block cluster
// (sm_90): S x S blocks (S = ceil(n / 64), up to 16 blocks on 16 SMs) each keep a 64 x 64 region
// of the matrix in shared memory for the whole solve and run the blocked algorithm with 32-wide
// pivots. Blocks read the pivot tile and the panels from each other's shared memory (distributed
// shared memory) and meet at cluster barriers, so a round costs no launch and no trip through
// global memory: at these sizes the launch-per-phase plan is bound by launch latency and the
// pivot chain, not arithmetic (benchmarks/GPU_NOTES.md). Round r pivots on rows/columns
// [32 r, 32 r + 32), in the regions of block row/column pa = r / 2; C is the pivot columns of a
// block's rows, R the pivot rows of its columns, P* the closed pivot tile.
//
// 4-byte types, one cluster barrier per round (latency-bound: the barrier costs more than work):
//   barrier  pivot tile r is closed (P* is in the global matrix, at its place); round r - 1 is
//            done, and the blocks of pivot column / row pa have published their C / R of round r
//   copies   P* from global memory, C from block (a, pa), R from block (pa, b)
//   C'       C' = min(C, C (x) P*), every block for its own rows (the four blocks of a block row
//            compute the same C'). Then phase 3 is min(D, C' (x) R) on the old R: C' (x) P* = C'
//            (P* is closed), so C' (x) (P* (x) R) = C' (x) R, and the pivot rows and columns of
//            the region come out as this round's panels without a phase 2.
//   phase 3  every block updates its region, and publishes what the next round's copies read
//            into a second set of buffers (the first is still being read).
//   The block holding pivot tile r + 1 computes C' of that tile's rows and updates the tile
//   first; 64 of its threads close it while the others do the rest. When r + 1 lies in the same
//   region (r even) that block is round r's pivot block and reads only its own memory: it arrives
//   at the barrier and starts without waiting, and (integers) leaves the tile that nobody reads
//   in round r + 1 to that round. When it lies in the next region, the three tiles it starts from
//   were pushed into its inbox in round r - 1.
// 8-byte types, two barriers per round (their min-plus step is 4-5 times slower, and the
//   redundant C' would cost more than a barrier): phase 2 (the blocks of row pa update their part
//   of the pivot rows, P* (x) R, those of column pa their part of the pivot columns, C (x) P*),
//   barrier, phase 3 from copies of the panels (which stay as they are), barrier.
// Nothing is written that another block reads in the same phase, so results do not depend on
// timing. Padding past n is INF and changes nothing. A batch of graphs runs one cluster each, in
// one launch. Not for: predecessors (engine.cu picks another plan), GPUs without clusters
// (engine.cu checks that one fits before choosing this plan).
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
  template <class T>
  static constexpr bool one_barrier = sizeof(T) == 4;  // the round structure (above)
  // Region, copies of C, R and P*; with one barrier also C and R published for two rounds and the
  // inbox (P*, C and R tiles).
  template <class T>
  static constexpr size_t smem_bytes() {
    const int elems = W * W + 2 * W * P + P * P + (one_barrier<T> ? 4 * W * P + 3 * P * P : 0);
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

// N consecutive elements to (shared, possibly another block's) memory, as load_vec reads them.
template <class T, int N>
__device__ __forceinline__ void store_vec(T* p, const T (&v)[N]) {
  constexpr int bytes = N * int(sizeof(T));
  if constexpr (bytes % 16 == 0) {
#pragma unroll
    for (int q = 0; q < bytes / 16; ++q) {
      uint4 x;
      memcpy(&x, &v[q * (16 / int(sizeof(T)))], 16);
      reinterpret_cast<uint4*>(p)[q] = x;
    }
  } else if constexpr (bytes % 8 == 0) {
#pragma unroll
    for (int q = 0; q < bytes / 8; ++q) {
      uint2 x;
      memcpy(&x, &v[q * (8 / int(sizeof(T)))], 8);
      reinterpret_cast<uint2*>(p)[q] = x;
    }
  } else {
#pragma unroll
    for (int q = 0; q < N; ++q) p[q] = v[q];
  }
}

// c = min(c, A (x) B) over KD steps: A row-major (c's rows, k), B row-major (k, c's columns),
// both in shared memory; A read a 16-byte vector of k at a time. `Unrolled`: the k loop unrolled
// whole, so that loads run ahead (small products on the pivot chain).
template <class T, int TM, int TN, int KD, bool Unrolled = false>
__device__ __forceinline__ void minplus_acc(T (&c)[TM][TN], const T* A, int lda, const T* B,
                                            int ldb) {
  constexpr int KV = 16 / int(sizeof(T));
  auto steps = [&](int k0) {
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
  };
  if constexpr (Unrolled) {
#pragma unroll
    for (int k0 = 0; k0 < KD; k0 += KV) steps(k0);
  } else {
#pragma unroll 1
    for (int k0 = 0; k0 < KD; k0 += KV) steps(k0);
  }
}

// C' = min(C, C (x) P*) on TM x TN elements at (i0, j0) of C (W x P), per thread, read from `csrc`
// and written to `cdst` (the same buffer or not): the threads sharing a row of C are in one warp,
// so that warp is the only reader of what it overwrites.
template <class T, int TM, int TN>
__device__ __forceinline__ void cprime(const T* csrc, T* cdst, const T* psrc, int pld, int i0,
                                       int j0) {
  constexpr int P = ClusterShape::P;
  T c[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) load_vec(csrc + (i0 + i) * P + j0, c[i]);
  minplus_acc<T, TM, TN, P, true>(c, csrc + i0 * P, P, psrc + j0, pld);
  __syncwarp();
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) cdst[(i0 + i) * P + j0 + j] = c[i][j];
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

// A value of the global matrix read past L1: another block of the cluster wrote it before the
// last cluster barrier, and this SM may hold the input's old line.
template <class T>
__device__ __forceinline__ T load_past_l1(const T* p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- and 8-byte types");
  T v;
  if constexpr (sizeof(T) == 4) {
    const unsigned x = __ldcg(reinterpret_cast<const unsigned*>(p));
    memcpy(&v, &x, 4);
  } else {
    const unsigned long long x = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    memcpy(&v, &x, 8);
  }
  return v;
}

// Closure of the 32 x 32 tile at (o, o) of the region by threads 0..63 (4 x 4 each; named
// barrier 1), `kw` pivots; the closed tile also goes to its place in the global matrix (rows and
// columns k0.., within n) unless `d` is null, where every block of the cluster reads it after the
// next barrier: in 16-byte vectors where `vectors` (the matrix and its rows are 16-byte aligned).
template <class T>
__device__ __forceinline__ void close_pivot(T* reg, int o, int kw, T* d, int64_t ld, int64_t k0,
                                            bool vectors) {
  constexpr int W = ClusterShape::W, P = ClusterShape::P;
  const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
  T c[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) load_vec(reg + (o + 4 * ty + i) * W + o + 4 * tx, c[i]);
  // int32: two steps a barrier (n = 256 39.4 -> 38.9 us, benchmarks/GPU_NOTES.md, twenty-sixth
  // session); float32 read 0.2 us slower with it, and 8-byte types slower still.
  if constexpr (std::is_integral_v<T> && sizeof(T) == 4)
    close_tile_pair<T, P, 4, 1>(c, kw);
  else
    close_tile_fast<T, P, 4, 1>(c, kw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    store_vec(reg + (o + 4 * ty + i) * W + o + 4 * tx, c[i]);
    if (!d) continue;
    T* const out = d + (k0 + 4 * ty + i) * ld + k0 + 4 * tx;
    if (vectors && kw == P) {
      store_vec(out, c[i]);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (4 * ty + i < kw && 4 * tx + j < kw) out[j] = c[i][j];
    }
  }
}

template <class T>
__global__ void __launch_bounds__(ClusterShape::threads, 1)
    cluster_solve_kernel(T* __restrict__ d, int n, int64_t ld, int S, bool directed,
                         bool unweighted, DeviceStats* st, int64_t* negative,
                         int64_t stride = 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int W = ClusterShape::W, P = ClusterShape::P, NT = ClusterShape::threads;
  {  // a batch (engine.cu: solve_cuda_batch): cluster g solves the graph g * stride elements on
    const int64_t g = blockIdx.x / unsigned(S * S);
    d += g * stride;
    if (negative) {  // (st is read only where negative is given)
      st += g;
      negative += g * n;
    }
  }
  constexpr int per = W / P;  // pivot blocks per region side
  static_assert(per == 2, "the closing block splits its region into the next pivot tile and 3");
  const T inf = Semiring<T>::inf();
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int a = rank / S, b = rank % S;  // this block's region: rows 64 a.., columns 64 b..
  extern __shared__ __align__(16) unsigned char cluster_smem[];
  T* reg = reinterpret_cast<T*>(cluster_smem);  // W x W, the region
  T* cbuf = reg + W * W;                         // W x P: C, then C' = min(C, C (x) P*)
  T* rbuf = cbuf + W * P;                        // P x W: R
  T* pbuf = rbuf + P * W;                        // P x P: P*
  // With one barrier per round: [2] C (W x P) and R (P x W) published for the next round's copies,
  // and the inbox: P*, C and R tiles pushed here (P x P each).
  T* pub = pbuf + P * P;
  T* inbox = pub + 2 * (2 * W * P);
  auto pub_cols = [&](int r) { return pub + (r & 1) * 2 * W * P; };
  auto pub_rows = [&](int r) { return pub + (r & 1) * 2 * W * P + W * P; };
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  // The region moves between the global matrix and shared memory in groups of V consecutive
  // elements of a row (16 bytes for 4-byte types): NR passes of RP rows, a thread's group at row
  // li(pass), column lj. 8-byte types go element by element (V = 1): in groups, their round loop
  // compiled differently and int64 took 172 instead of 129 us at n = 256 (H100), though its
  // instructions were the same.
  constexpr int V = ClusterShape::one_barrier<T> ? 16 / int(sizeof(T)) : 1;
  constexpr int RP = NT / (W / V), NR = W / RP;
  const int lj = tid % (W / V) * V;
  auto li = [&](int pass) { return tid / (W / V) + pass * RP; };
  // 16-byte groups in the global matrix: where the matrix and its rows are 16-byte aligned.
  const bool vectors =
      V * int(sizeof(T)) == 16 && reinterpret_cast<uintptr_t>(d) % 16 == 0 && ld % V == 0;

  // The region, with the rules applied from the input (read only: other blocks read the
  // transposed elements of undirected graphs from it until the first cluster barrier). Every
  // load is issued before the first rule.
  {
    T w[NR][V], wt[NR][V];
#pragma unroll
    for (int p = 0; p < NR; ++p) {
      const int i = a * W + li(p), j = b * W + lj;
      if (vectors && i < n && j + V <= n) {
        load_vec(d + int64_t(i) * ld + j, w[p]);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) w[p][e] = i < n && j + e < n ? d[int64_t(i) * ld + j + e] : inf;
      }
#pragma unroll
      for (int e = 0; e < V; ++e)
        wt[p][e] = i < n && j + e < n && !directed ? d[int64_t(j + e) * ld + i] : inf;
    }
#pragma unroll
    for (int p = 0; p < NR; ++p) {
      const int i = a * W + li(p), j = b * W + lj;
      T v[V];
#pragma unroll
      for (int e = 0; e < V; ++e)
        v[e] = i < n && j + e < n ? rule_pair(w[p][e], wt[p][e], directed, unweighted, i == j + e)
                                  : inf;
      store_vec(reg + li(p) * W + lj, v);
      if constexpr (ClusterShape::one_barrier<T>) {  // published for round 0
        if (b == 0 && lj < P) store_vec(pub_cols(0) + li(p) * P + lj, v);
        if (a == 0 && li(p) < P) store_vec(pub_rows(0) + li(p) * W + lj, v);
      }
    }
  }
  __syncthreads();

  const int rounds = (n + P - 1) / P;
  auto kwidth = [&](int r) { return n - r * P < P ? n - r * P : P; };
  // One cluster barrier: what any block wrote to its shared memory before it is visible to every
  // thread of every block after it, so it also does the work of a __syncthreads. The .aligned
  // form: cg's cluster.sync() compiles to twice the barrier code. Arrive and wait are split only
  // where a block has work that needs nothing from the others (the early block below); split
  // everywhere, they were slower (53.4 against 50.0 us at n = 256 int32 on an H100, seventh
  // session).
  auto cluster_arrive = [] { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); };
  auto cluster_wait = [] { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); };
  auto cluster_sync = [&] {
    cluster_arrive();
    cluster_wait();
  };
  if (rank == 0 && tid < 64)  // phase 1 of round 0
    close_pivot(reg, 0, kwidth(0), ClusterShape::one_barrier<T> ? d : nullptr, ld, 0, vectors);
  if constexpr (ClusterShape::one_barrier<T>) {
    bool deferred = false;
    const T* deferred_rsrc = nullptr;
    for (int r = 0; r < rounds; ++r) {
      const int pa = r / per, po = r % per * P;  // pivot block row/column, offset in region
      const int nq = (r + 1) / per, np = (r + 1) % per * P;  // the next pivot's, likewise
      const bool more = r + 1 < rounds;
      const bool next_cols = more && b == nq, next_rows = more && a == nq;  // publishes round r + 1
      const bool closes_next = next_cols && next_rows;
      // Where the next pivot tile is in the same region (r even), its block is this round's pivot
      // block and all its chain reads is its own: it arrives at the barrier and goes on, and waits
      // only before it writes what other blocks may still be reading (the strips published for round
      // r + 1). Where it is in the next region (r odd), the three tiles its chain reads (P*, and C
      // and R where they meet the next pivot's rows and columns) were pushed into its inbox in
      // round r - 1, so it starts on them after the barrier and copies the rest meanwhile.
      const bool early = closes_next && nq == pa;
      // The early block leaves tile (0, 0) of its region (not published for round r + 1) to the
      // next round, where it has time to spare, so that the closure shares its schedulers with
      // nothing (below). Integers only: with float32's two instructions a step, the four warps
      // that are left took longer than the closure (float32 46.6 against 44.1 us at n = 256).
      const bool defer = early && std::is_integral_v<T>;
      const bool inboxed = closes_next && nq != pa;
      const bool push_next = r % per == 0 && r + 2 < rounds;  // round r + 1's closer is inboxed
      T* const push_to = push_next ? cluster.map_shared_rank(inbox, unsigned((pa + 1) * S + pa + 1))
                                   : nullptr;
      const bool own_c = b == pa, own_r = a == pa, own_p = own_c && own_r;
      const T* const csrc = own_c ? pub_cols(r) : cbuf;  // C: W x P
      const T* const rsrc = own_r ? pub_rows(r) : rbuf;  // R: P x W
      // Where C and R come from when they are not this block's own (copied into cbuf, rbuf).
      const T* const csrc_remote = cluster.map_shared_rank(pub_cols(r), unsigned(a * S + pa));
      const T* const rsrc_remote = cluster.map_shared_rank(pub_rows(r), unsigned(pa * S + b));
      const T* const psrc = own_p ? reg + po * W + po : inboxed ? inbox : pbuf;  // P*
      const int pld = own_p ? W : P;
      using two = std::integral_constant<int, 2>;
      using four = std::integral_constant<int, 4>;
      // Phase 3 on TM x TN elements at (i0, j0) of the region, per thread, with R read at `rb`
      // (leading dimension ldb): what lies in the next round's pivot columns or rows is also
      // published for it unless `publish` is false, and what the next round's closer needs is
      // pushed to its inbox.
      auto update = [&](auto tm, auto tn, int i0, int j0, const T* rb, int ldb, bool publish) {
        constexpr int TM = decltype(tm)::value, TN = decltype(tn)::value;
        T c[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) load_vec(reg + (i0 + i) * W + j0, c[i]);
        minplus_acc<T, TM, TN, P, TM * TN <= 4>(c, cbuf + i0 * P, P, rb, ldb);
        const bool pc = publish && next_cols && j0 >= np && j0 < np + P;
        const bool pr = publish && next_rows && i0 >= np && i0 < np + P;
        // C of round r + 1 at the rows of pivot r + 2: tile (0, 1) of block (pa + 1, pa); R at its
        // columns: tile (1, 0) of block (pa, pa + 1).
        const bool xc = push_next && a == pa + 1 && b == pa && i0 < P && j0 >= P;
        const bool xr = push_next && a == pa && b == pa + 1 && i0 >= P && j0 < P;
        T* const pcols = pub_cols(r + 1);
        T* const prows = pub_rows(r + 1);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          store_vec(reg + (i0 + i) * W + j0, c[i]);
          if (pc) store_vec(pcols + (i0 + i) * P + j0 - np, c[i]);
          if (pr) store_vec(prows + (i0 - np + i) * W + j0, c[i]);
          if (xc) store_vec(push_to + P * P + (i0 + i) * P + j0 - P, c[i]);
          if (xr) store_vec(push_to + 2 * P * P + (i0 - P + i) * P + j0, c[i]);
        }
      };
      if (early) {
        __syncthreads();  // this block's round r - 1 is done
        cluster_arrive();
        cprime<T, 2, 2>(csrc, cbuf, psrc, pld, np + 2 * ty, 2 * tx);
        __syncthreads();
      } else if (inboxed) {
        cluster_sync();  // pivot tile r is closed; round r - 1 is done and published everywhere
        // np = 0 here: C' of the next pivot's rows from the inbox while the copies of the rest of C
        // (rows P..) and of R are in flight.
        BlockCopy<T, P, P> cc;
        BlockCopy<T, P, W> rc;
        cc.load(csrc_remote + P * P, P);
        rc.load(rsrc_remote, W);
        cprime<T, 2, 2>(inbox + P * P, cbuf, psrc, pld, 2 * ty, 2 * tx);
        __syncthreads();
        update(two{}, two{}, 2 * ty, 2 * tx, inbox + 2 * P * P + 2 * tx, P, true);
        cc.store(cbuf + P * P, P);
        rc.store(rbuf, W);
        __syncthreads();
      } else {
        cluster_sync();  // pivot tile r is closed; round r - 1 is done and published everywhere
        // P* from the global matrix, C from block (a, pa), R from block (pa, b), where they are
        // not this block's own: each the state after round r - 1, published by its block. Where C
        // or R comes from the pivot block, P* stands in for the pivot tile in it (the same C' and
        // the same phase 3 come out of either), so that block serves half as much. Every load
        // before the first store.
        constexpr int PQ = P * P / NT;
        T pv[PQ];
        const int kw = kwidth(r);
        const int64_t k0 = int64_t(r) * P;
        if (!own_p)
#pragma unroll
          for (int q = 0; q < PQ; ++q) {
            const int i = (q * NT + tid) / P, j = (q * NT + tid) % P;
            pv[q] = i < kw && j < kw ? load_past_l1(d + (k0 + i) * ld + k0 + j) : inf;
          }
        const int pother = P - po;  // the pivot block's other half
        BlockCopy<T, W, P> cc;      // C from a band block
        BlockCopy<T, P, P> ch;      // the other half of C from the pivot block (rows pother..)
        BlockCopy<T, P, W> rc;      // R from a band block
        BlockCopy<T, P, P> rh;      // the other half of R from the pivot block (columns pother..)
        if (!own_c) {
          if (own_r) ch.load(csrc_remote + pother * P, P);
          else cc.load(csrc_remote, P);
        }
        if (!own_r) {
          if (own_c) rh.load(rsrc_remote + pother, W);
          else rc.load(rsrc_remote, W);
        }
        if (!own_p)
#pragma unroll
          for (int q = 0; q < PQ; ++q) {
            const int i = (q * NT + tid) / P, j = (q * NT + tid) % P;
            pbuf[q * NT + tid] = pv[q];
            if (own_r) cbuf[(po + i) * P + j] = pv[q];  // (a band block of the pivot rows)
            if (own_c) rbuf[i * W + po + j] = pv[q];    // (a band block of the pivot columns)
          }
        if (!own_c) {
          if (own_r) ch.store(cbuf + pother * P, P);
          else cc.store(cbuf, P);
        }
        if (!own_r) {
          if (own_c) rh.store(rbuf + pother, W);
          else rc.store(rbuf, W);
        }
        __syncthreads();
        // C' = min(C, C (x) P*) into cbuf, 2 x 4 per thread. With it, phase 3 is min(D, C' (x) R)
        // on the old pivot rows R: C' (x) P* = C' (P* is closed), so C' (x) (P* (x) R) = C' (x) R,
        // and the pivot rows and columns of the region come out as the panels of round r. (The
        // blocks closing the next pivot tile start with the rows of that tile, above.)
        if (deferred) {  // tile (0, 0) of round r - 1, from its C' (cbuf) and R (still published)
          update(two{}, two{}, 2 * ty, 2 * tx, deferred_rsrc + 2 * tx, W, false);
          __syncthreads();
        }
        cprime<T, 2, 4>(csrc, cbuf, psrc, pld, 2 * (tid / 8), 4 * (tid % 8));
        __syncthreads();
      }
      deferred = false;
      if (closes_next) {
        // This block closes the next pivot tile: it updates that tile first (2 x 2 per thread),
        // then threads 0..63 close it while the rest update the other three 32 x 32 tiles.
        if (!inboxed) {  // (the inboxed block has updated it above)
          update(two{}, two{}, np + 2 * ty, np + 2 * tx, rsrc + np + 2 * tx, W, !early);
          __syncthreads();
        }
        if (tid < 64) {
          close_pivot(reg, np, kwidth(r + 1), d, ld, int64_t(r + 1) * P, vectors);
          if (early) {
            cluster_wait();  // now nobody reads the strips published for round r - 1
            const int px = tid % 8, py = tid / 8;  // the 4 x 4 of the tile this thread closed
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              T v[4];
              load_vec(reg + (np + 4 * py + i) * W + np + 4 * px, v);
              store_vec(pub_cols(r + 1) + (np + 4 * py + i) * P + 4 * px, v);
              store_vec(pub_rows(r + 1) + (4 * py + i) * W + np + 4 * px, v);
              if (push_to) store_vec(push_to + (4 * py + i) * P + 4 * px, v);  // P* for round r + 1
            }
          }
        } else if (defer) {
          // Warps 4 and 5 share their schedulers with the closing warps 0 and 1 (warp w issues on
          // scheduler w % 4), so they idle; warps 2, 3, 6 and 7 compute the rows of C' not
          // computed yet (0..31), then tiles (0, 1) and (1, 0).
          const int w = tid / 32;
          if (w != 4 && w != 5) {
            const int g = w < 4 ? tid - 64 : tid - 128, s = g / 64, u = g % 64;
            cprime<T, 2, 4>(csrc, cbuf, psrc, pld, 2 * (g / 8), 4 * (g % 8));
            asm volatile("bar.sync 2, 128;\n" ::: "memory");
            cluster_wait();
            const int i0 = s * P + 4 * (u / 8), j0 = (1 - s) * P + 4 * (u % 8);
            update(four{}, four{}, i0, j0, rsrc + j0, W, true);
          } else {
            cluster_wait();
          }
        } else {
          const int t = tid - 64, s = t / 64, u = t % 64;
          const int other = (per - 1) * P - np;  // the rows of C' not computed yet
          if (t < 128) cprime<T, 2, 4>(csrc, cbuf, psrc, pld, other + 2 * (t / 8), 4 * (t % 8));
          asm volatile("bar.sync 2, %0;\n" ::"n"(NT - 64) : "memory");
          if (early) cluster_wait();
          const int tile = s + (s >= np / P * (per + 1));  // of the 2 x 2, skipping the next pivot
          const int i0 = tile / per * P + 4 * (u / 8), j0 = tile % per * P + 4 * (u % 8);
          update(four{}, four{}, i0, j0, rsrc + j0, W, true);
        }
        if (defer) {
          deferred = true;
          deferred_rsrc = rsrc;
        }
      } else {
        update(four{}, four{}, 4 * ty, 4 * tx, rsrc + 4 * tx, W, true);
      }
    }
  } else {
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
        pc.store(pbuf, P);
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
          minplus_acc<T, 2, 4, P>(c, pbuf + ri * P, P, reg + po * W + j0 + ci, W);
        else
          minplus_acc<T, 2, 4, P>(c, reg + (i0 + ri) * W + po, W, pbuf + ci, P);
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
        cc.store(cbuf, P);
        rc.store(rbuf, W);
      }
      const bool closes_next = r + 1 < rounds && a == (r + 1) / per && b == (r + 1) / per;
      __syncthreads();
      // Phase 3 on TM x TN elements at (i0, j0) of the region, per thread.
      auto update = [&](auto tm, auto tn, int i0, int j0) {
        constexpr int TM = decltype(tm)::value, TN = decltype(tn)::value;
        T c[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) load_vec(reg + (i0 + i) * W + j0, c[i]);
        minplus_acc<T, TM, TN, P>(c, cbuf + i0 * P, P, rbuf + j0, W);
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
          close_pivot(reg, np, kwidth(r + 1), (T*)nullptr, ld, 0, false);
        } else {
          const int t = tid - 64, s = t / 64, u = t % 64;
          const int tile = s + (s >= np / P * (per + 1));  // of the 2 x 2, skipping the next pivot
          update(four{}, four{}, tile / per * P + 4 * (u / 8), tile % per * P + 4 * (u % 8));
        }
      } else {
        update(four{}, four{}, 4 * ty, 4 * tx);
      }
    }
  }
  cluster_sync();  // no block reads this one's shared memory or the pivot tiles any more

  // The result, in the groups it was loaded in; the negative diagonal entries after it.
#pragma unroll
  for (int p = 0; p < NR; ++p) {
    const int i = a * W + li(p), j = b * W + lj;
    T v[V];
    load_vec(reg + li(p) * W + lj, v);
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = finalize_value(v[e], st, (int64_t*)nullptr, i, j + e);
    if (vectors && i < n && j + V <= n) {
      store_vec(d + int64_t(i) * ld + j, v);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (i < n && j + e < n) d[int64_t(i) * ld + j + e] = v[e];
    }
  }
  if (a == b && negative && tid < W && a * W + tid < n) {
    const int i = a * W + tid;
    (void)finalize_value(reg[tid * W + tid], st, negative, i, i);
  }
#else
  __trap();  // sm_90 and later only: engine.cu never launches it elsewhere
#endif
}

}  // namespace apsp::cuda_detail
