// The whole blocked Floyd-Warshall of 256 < n <= Flow::max_n (4-byte types) in one launch: the
// pivot chain on one thread-block cluster, the rest as dataflow items on every other SM (a second
// launch, flow_extra_kernel, takes the SMs that no cluster fits on).
//
// Why: at these sizes a round's phase 3 fills the GPU for a few microseconds, and the round loop
// (engine.cu) is bound by the chain of each round instead (the next pivot tile's update, its
// closure, the panels next to it), paid through kernel boundaries or global-memory hand-offs of
// 2-3 us each (benchmarks/GPU_NOTES.md). Here the chain stays in one cluster of Flow::G = 16
// blocks (distributed shared memory, cluster barriers), its products split over 15 SMs, and it
// takes from the other SMs only tiles that are a round or more old.
//
// Tiles are 64 x 64; tile (i, j) = rows 64 i.., columns 64 j..; round r pivots on block r; T(i, j)
// below means the tile before round r. The chain cluster, round r = 0 .. nb - 2 (block 0 closes;
// blocks 1..15 each own a slice of 4 or 5 of the 64 rows, `lo` .. `hi`; of 256 threads per slice,
// 96 "row threads" and 160 "helpers"):
//   B1      P*_r (the closed pivot tile r) is in the matrix, at its place.
//   step 1  every slice reads P*_r, computes its rows of C1 = X (x) P*_r (X = T(r + 1, r)) and of
//           Z = min(Z, C1 (x) Y) (Z = T(r + 1, r + 1), Y = T(r, r + 1), whole in every slice),
//           and pushes its Z rows into block 0. C1 (x) Y = C1 (x) R1, R1 = P*_r (x) Y the row
//           panel, since P*_r is closed: the cluster plan's argument (cluster.cuh); with a
//           negative cycle in P*_r its negative diagonal reaches the output anyway. Meanwhile
//           the helpers bring Y2 = T(r, r + 2) up to round r - 1 (C1 of round r - 1 with R'(r - 1,
//           r + 2) from the other SMs) and push its rows to every slice.
//   B2      block 0 closes Z: P*_{r+1}. Meanwhile the row threads bring X2 = T(r + 2, r) up to
//           round r - 1 (C'(r + 2, r - 1) from the other SMs, with Y of round r - 1), compute
//           C2 = X2 (x) P*_r and the next round's X = T(r + 2, r + 1) + C2 (x) Y and Z = T(r + 2,
//           r + 2) + C2 (x) Y2; the helpers compute R2 = P*_r (x) Y2 for the other SMs and the
//           next round's Y = T(r + 1, r + 2) + C1 (x) Y2, which they push to every slice and store
//           (the other SMs compute R1 from it). The three T tiles come from the other SMs with
//           rounds up to r - 1.
// Everything else is a work item (one tile, one or two rounds) claimed from an atomic counter
// in a fixed order by workers (Workers<W>: the whole block, 4 x 4 elements per thread, or two or
// three groups of 128 threads, 8 x 4) everywhere else, on the chain's blocks once the chain is
// done, and on the SMs that the clusters leave free (flow_extra_kernel, engine.cu: flow_extra):
//   C(r): the panels of round r, each first applying round r - 1 itself where it does not
//         hold it yet (the band); the chain's: the pivot, C1, C2, R2 with their bands, and the
//         band of (r, r + 1), whose panel R1 is an item.
//   R(r): round r on every tile outside rows/columns r and r + 1, except T(r + 2, r + 2) (the
//         chain's).
// Claim order: C(0) C(1) R(0) C(2) R(1) ... C(nb - 1) R(nb - 2) R(nb - 1); each item waits only
// for earlier items or chain rounds that need nothing later, but two: C(r)'s panels (r - 1, r)
// and (r, r - 1) wait for reads of round r - 1 that the chain counts at B1(r + 1), which needs
// R(r - 1) items. A worker claims only once its item is done, so those two hold up two workers a
// round while others claim the rest; with the chain the first cluster to start, every wait ends
// once any other cluster runs (a worker holding a later claim behind them would not: GPU_NOTES,
// twenty-fourth session). Per tile a version (rounds applied, released after the store) and a
// count of the items that read it as a panel or pivot (a tile waits for all of them before it is
// overwritten; the chain counts its own reads).
// Loads bypass L1 (ld.global.cg). Every update is the same min of the same sums as the round
// loop's or, through the closed P*, of sums equal to them: integer results are bit for bit the
// round loop's (GPU tests).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/cluster.cuh"
#include "cuda/kernels.cuh"

namespace apsp::cuda_detail {

struct Flow {
  static constexpr int K = 64, E = 4, R = K / E, threads = R * R;  // 4 x 4 elements per thread
  static constexpr int G = 16, S = G - 1;  // the chain cluster: block 0 closes, 15 row slices
  static constexpr int W_max = (K + S - 1) / S;  // rows of the largest slice
  // Named barriers: 0 the chain's block (its Flow::threads), 1 and 2 a slice's row threads and
  // helpers, 1 .. 3 the workers (Workers::sync), closure_bar block 0's pivot closure.
  static constexpr int closure_bar = 5;
  // Cluster barriers the chain passes: two a round, and one after its last.
  static constexpr int chain_cluster_barriers(int nb) { return 2 * (nb - 1) + 1; }
  static constexpr int64_t max_n = 64 * K;       // nb <= 64 (counters: unsigned)
  // Items of a solve with nb tile rows (chain items included; the workers skip those).
  static constexpr int64_t items(int64_t nb) {
    return nb * (2 * nb - 1) + (nb - 1) * (nb - 2) * (nb - 2) + (nb - 1) * (nb - 1);
  }
  // Counters: the claim counter, the chain's election, then per tile its version and its count
  // of readers.
  static constexpr size_t counter_bytes(int64_t nb) {
    return size_t(2 + 2 * nb * nb) * sizeof(unsigned);
  }
  template <class T>
  static constexpr int LD = K + 16 / int(sizeof(T));  // shared rows padded by one 16-byte vector
  // Shared memory: the chain's (P*, four Y, Y2 and R'(r - 1, r + 2) whole; rows of X, X2,
  // C'(r + 2, r - 1), C1 of two rounds and C2) or the workers' (two operand tiles each); at
  // least 116 KB, so one block per SM: the chain's blocks never share their SMs.
  template <class T>
  static constexpr size_t smem_bytes() {
    const size_t chain = (size_t(7) * K + 6 * W_max) * LD<T> * sizeof(T);
    const size_t floor = 116 * 1024;
    return chain > floor ? chain : floor;
  }
};

struct FlowItem {
  int i, j;    // the tile
  int first;   // first round applied (round - 1: the band of the previous round, else round)
  int round;   // last round applied
};

// Item x of the claim order (see the top of the file).
__device__ __forceinline__ FlowItem flow_item(int64_t x, int nb) {
  const int64_t cn = 2 * nb - 1;
  auto critical = [&](int r, int64_t y) -> FlowItem {
    if (y == 0) return {r, r, r > 0 ? r - 1 : 0, r};
    const int64_t t = (y - 1) >> 1;  // panels nearest the next pivot first; row/column r - 1 last
    const int b = int((r + 1 + t) % nb);
    const int first = r > 0 && b != r - 1 ? r - 1 : r;
    return ((y - 1) & 1) ? FlowItem{b, r, first, r} : FlowItem{r, b, first, r};
  };
  auto rest = [&](int r, int64_t y) -> FlowItem {
    // The other tile rows o(0), o(1), ... in order of need (o(0) becomes a pivot row first),
    // taken in L-shaped shells: shell m is (o(m), o(m)), then (o(m), o(m + u)), (o(m + u), o(m)).
    const int e = r + 1 < nb ? 2 : 1, M = nb - e;
    auto o = [&](int64_t t) { return int((r + e + t) % nb); };
    int m = 0;
    while (int64_t(m + 1) * (2 * M - m - 1) <= y) ++m;
    const int64_t z = y - int64_t(m) * (2 * M - m), u = (z + 1) >> 1;
    if (z == 0) return {o(m), o(m), r, r};
    return (z & 1) ? FlowItem{o(m), o(m + u), r, r} : FlowItem{o(m + u), o(m), r, r};
  };
  if (x < cn) return critical(0, x);
  x -= cn;
  const int64_t S = cn + int64_t(nb - 2) * (nb - 2), s = x / S;
  if (s < nb - 1) {
    const int64_t y = x % S;
    return y < cn ? critical(int(s + 1), y) : rest(int(s), y - cn);
  }
  return rest(nb - 1, x - (nb - 1) * S);
}

// Whether the chain cluster does item `it`: every pivot; C1 = (r + 1, r), C2 = (r + 2, r) and
// R2 = (r, r + 2) with their bands; round r on tile (r + 2, r + 2).
__device__ __forceinline__ bool chain_item(const FlowItem& it) {
  const int r = it.round;
  if (it.i == it.j) return it.i == r || it.i == r + 2;
  return (it.i == r && it.j == r + 2) || (it.j == r && (it.i == r + 1 || it.i == r + 2));
}

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void wait_at_least(const unsigned* p, unsigned v) {
  while (load_acquire(p) < v) {
  }
}
// Up to three waits at once: every load in flight before any is checked.
__device__ __forceinline__ void wait_all(const unsigned* p0, unsigned v0, const unsigned* p1,
                                         unsigned v1, const unsigned* p2, unsigned v2) {
  for (;;) {
    const unsigned a = load_acquire(p0), b = p1 ? load_acquire(p1) : v1,
                   c = p2 ? load_acquire(p2) : v2;
    if (a >= v0 && b >= v1 && c >= v2) return;
  }
}
// After a barrier of the block or cluster (cumulative over its writes, as CUTLASS's barriers do).
__device__ __forceinline__ void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
// The relaxed ones: after a __threadfence (a release pattern), or for reader counts, which follow
// reads that have completed (copies waited for).
__device__ __forceinline__ void store_relaxed(unsigned* p, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void add_relaxed(unsigned* p, unsigned v) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// V consecutive elements (i, j .. j + V) of d past L1, INF past n; 16 bytes at once where the
// matrix is `aligned` and the group lies inside.
template <class T, int V>
__device__ __forceinline__ void load_group_cg(const T* d, int64_t n, int64_t ld, bool aligned,
                                              int64_t i, int64_t j, T (&v)[V]) {
  static_assert(V * sizeof(T) == 16, "one 16-byte group");
  if (aligned && i < n && j + V <= n) {
    const uint4 x = __ldcg(reinterpret_cast<const uint4*>(d + i * ld + j));
    memcpy(v, &x, 16);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = i < n && j + e < n ? __ldcg(d + i * ld + j + e) : Semiring<T>::inf();
  }
}
template <class T, int V>
__device__ __forceinline__ void store_group(T* d, int64_t n, int64_t ld, bool aligned, int64_t i,
                                            int64_t j, const T (&v)[V]) {
  if (i >= n) return;
  if (aligned && j + V <= n) {
    uint4 x;
    memcpy(&x, v, 16);
    *reinterpret_cast<uint4*>(d + i * ld + j) = x;
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (j + e < n) d[i * ld + j + e] = v[e];
  }
}

// W workers per block (named barrier 1 + h each). W = 2: two halves of 128 threads, 8 x 4
// elements per thread, two items in flight per SM, so that one half's loads, waits and stores
// overlap the other's arithmetic: more items a microsecond, for n >= 1024. W = 3: a block of 384
// threads, three such workers (at most 168 registers a thread): more items still but each one
// longer, for the largest n, where the rounds' items outnumber the workers. W = 1: the whole
// block, 4 x 4 per thread, one item at a time at the SM's full rate: the shortest items, for the
// smaller n where the chain waits on items (engine.cu: flow_workers). The chain runs on a block's
// first Flow::threads threads (its barriers count those); a block of three workers' other 128
// wait through the chain's cluster barriers (flow_kernel) and then work.
template <int W>
struct Workers {
  static_assert(W >= 1 && W <= 3, "one, two or three workers per block");
  static constexpr int threads = W == 1 ? Flow::threads : Flow::threads / 2, TM = W == 1 ? 4 : 8,
                       TN = 4;
  static constexpr int block = threads * W;  // the block's threads
  int h, tid;
  __device__ Workers() : h(int(threadIdx.x) / threads), tid(int(threadIdx.x) % threads) {}
  __device__ void sync() const {
    asm volatile("bar.sync %0, %1;\n" ::"r"(1 + h), "n"(threads) : "memory");
  }
};

// c = min(c, a (x) B) for one row a (64 elements of k, shared memory) and four columns of B
// (shared, ldb apart): even and odd k in two sets of accumulators, twice the independent work
// per step of the chain's short products.
template <class T>
__device__ __forceinline__ void row_product(T (&c)[4], const T* a, const T* B, int ldb) {
  constexpr int K = Flow::K, KV = 16 / int(sizeof(T));
  T e[4], o[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) e[j] = c[j], o[j] = Semiring<T>::inf();
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += KV) {
    T av[KV];
    load_vec(a + k0, av);
#pragma unroll
    for (int kk = 0; kk < KV; ++kk) {
      T b[4];
      load_vec(B + (k0 + kk) * ldb, b);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (kk & 1)
          o[j] = Semiring<T>::relax(o[j], av[kk], b[j]);
        else
          e[j] = Semiring<T>::relax(e[j], av[kk], b[j]);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) c[j] = o[j] < e[j] ? o[j] : e[j];
}

// Rows [lo, hi) of tile (ti, tj) into s (rows 0 .., Flow::LD<T> apart) by `count` threads (tid
// among them; load_rows: the whole block): 16-byte cp.async where the group lies inside an
// aligned matrix (the caller waits for them), else element by element with INF past n.
template <class T>
__device__ __forceinline__ void load_rows_group(T* s, const T* d, int64_t n, int64_t ld,
                                                bool aligned, int ti, int tj, int lo, int hi,
                                                int tid, int count) {
  constexpr int K = Flow::K, LD = Flow::LD<T>, V = 16 / int(sizeof(T));
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(s));
  for (int e = tid; e < (hi - lo) * (K / V); e += count) {
    const int row = e / (K / V), col = (e % (K / V)) * V;
    const int64_t gi = int64_t(ti) * K + lo + row, gj = int64_t(tj) * K + col;
    if (aligned && gi < n && gj + V <= n) {
      cp_async_16(base + unsigned(row * LD + col) * unsigned(sizeof(T)), d + gi * ld + gj);
    } else {
      T v[V];
      load_group_cg<T, V>(d, n, ld, aligned, gi, gj, v);
      store_vec(s + row * LD + col, v);
    }
  }
  cp_async_commit();
}

template <class T>
__device__ __forceinline__ void load_rows(T* s, const T* d, int64_t n, int64_t ld, bool aligned,
                                          int ti, int tj, int lo, int hi) {
  load_rows_group(s, d, n, ld, aligned, ti, tj, lo, hi, int(threadIdx.x), Flow::threads);
}

// Tile (i0, j0) of d into shared memory (Flow::LD<T> per row) by a worker (N threads, tid
// among them): 16-byte cp.async, unrolled, where the whole tile lies inside an `aligned`
// matrix; at its edge 16-byte cp.async for the groups inside and element by element with INF
// past n for the others (those sums change nothing). The caller waits.
template <class T, int N>
__device__ __forceinline__ void flow_load(T* s, const T* d, int64_t n, int64_t ld, int64_t i0,
                                          int64_t j0, bool aligned, int tid) {
  constexpr int K = Flow::K, LD = Flow::LD<T>, V = 16 / int(sizeof(T));
  if (aligned && i0 + K <= n && j0 + K <= n) {
    const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(s));
#pragma unroll
    for (int q = 0; q < K * K / V / N; ++q) {
      const int v = tid + q * N, row = v / (K / V), col = (v % (K / V)) * V;
      cp_async_16(base + unsigned(row * LD + col) * unsigned(sizeof(T)),
                  d + (i0 + row) * ld + j0 + col);
    }
    cp_async_commit();
  } else {
    load_rows_group(s, d, n, ld, aligned, int(i0 / K), int(j0 / K), 0, K, tid, N);
  }
}

// One update of tile (i, j) by round q has read its panels (i, q) and (q, j), or the pivot (q, q)
// if the tile is a panel of round q: count them (once they are copied, or computed in place).
__device__ __forceinline__ void count_reads(unsigned* readers, int nb, int i, int j, int q) {
  if (i == q || j == q) {
    add_relaxed(readers + (q * nb + q), 1u);
  } else {
    add_relaxed(readers + (i * nb + q), 1u);
    add_relaxed(readers + (q * nb + j), 1u);
  }
}

// Readers a tile must have had before it is overwritten starting at round `first`: every item
// of an earlier round in which it was a panel (nb - 1 readers: its row or column) or the pivot
// (2 (nb - 1): both panels).
__device__ __forceinline__ unsigned flow_readers_before(int i, int j, int first, int nb) {
  const unsigned per = unsigned(nb - 1);
  if (i == j) return i < first ? 2 * per : 0u;
  return per * (unsigned(i < first) + unsigned(j < first));
}

// One worker item: the tile from global memory into registers, its rounds, then the store.
template <class T, int W>
__device__ __forceinline__ void flow_run(T* __restrict__ d, int64_t n, int64_t ld, bool aligned,
                                         int nb, unsigned* version, unsigned* readers,
                                         const FlowItem& it, T* As, T* Bs, const Workers<W>& hf,
                                         DeviceStats* st, int64_t* negative) {
  constexpr int K = Flow::K, LD = Flow::LD<T>, TM = Workers<W>::TM, TN = Workers<W>::TN;
  constexpr int N = Workers<W>::threads;
  const int tx = hf.tid % (K / TN), ty = hf.tid / (K / TN);
  auto tile = [&](int i, int j) { return i * nb + j; };
  const int64_t i0 = int64_t(it.i) * K, j0 = int64_t(it.j) * K;

  // The own tile's version and the operands of the first round, in one batch of loads.
  auto wait_operands = [&](int q, const unsigned* own, unsigned own_v) {
    if (it.i == q || it.j == q)
      wait_all(version + tile(q, q), unsigned(q + 1), own, own_v, nullptr, 0u);
    else
      wait_all(version + tile(it.i, q), unsigned(q + 1), version + tile(q, it.j), unsigned(q + 1),
               own, own_v);
  };
  if (hf.tid == 0) wait_operands(it.first, version + tile(it.i, it.j), unsigned(it.first));
  hf.sync();
  T c[TM][TN];
#pragma unroll
  for (int a = 0; a < TM; ++a) load_group_cg<T, TN>(d, n, ld, aligned, i0 + TM * ty + a, j0 + TN * tx, c[a]);

  for (int q = it.first; q <= it.round; ++q) {
    const bool row = it.i == q, col = it.j == q;
    if (q > it.first) {
      if (hf.tid == 0) wait_operands(q, nullptr, 0u);
      hf.sync();
    }
    if (row || col) {  // the panel: P* with the tile as it is
      flow_load<T, N>(row ? As : Bs, d, n, ld, int64_t(q) * K, int64_t(q) * K, aligned, hf.tid);
      T* own = row ? Bs : As;
#pragma unroll
      for (int a = 0; a < TM; ++a) store_vec(own + (TM * ty + a) * LD + TN * tx, c[a]);
    } else {
      flow_load<T, N>(As, d, n, ld, i0, int64_t(q) * K, aligned, hf.tid);
      flow_load<T, N>(Bs, d, n, ld, int64_t(q) * K, j0, aligned, hf.tid);
    }
    cp_async_wait<0>();
    hf.sync();
    // Copied (complete, in shared memory): the panels or the pivot may be overwritten.
    if (hf.tid == 0) count_reads(readers, nb, it.i, it.j, q);
    minplus_acc<T, TM, TN, K>(c, As + TM * ty * LD, LD, Bs + TN * tx, LD);
    hf.sync();  // As and Bs are refilled next
  }

  const unsigned need = flow_readers_before(it.i, it.j, it.first, nb);
  if (need > 0) {
    if (hf.tid == 0) wait_at_least(readers + tile(it.i, it.j), need);
    hf.sync();
  }
  const bool last = it.round == nb - 1;  // the tile's final values: finalize them on the way out
#pragma unroll
  for (int a = 0; a < TM; ++a) {
    const int64_t gi = i0 + TM * ty + a, gj = j0 + TN * tx;
    if (last)
#pragma unroll
      for (int b = 0; b < TN; ++b)
        if (gi < n && gj + b < n) c[a][b] = finalize_value(c[a][b], st, negative, gi, gj + b);
    store_group<T, TN>(d, n, ld, aligned, gi, gj, c[a]);
  }
  hf.sync();
  // The worker's last thread releases, so that its fence overlaps thread 0's next claim.
  if (hf.tid == N - 1) store_release(version + tile(it.i, it.j), unsigned(it.round + 1));
}

// The chain (top of the file), run by the first cluster. `smem`: Flow::smem_bytes<T>().
template <class T>
__device__ __forceinline__ void chain_run(T* __restrict__ d, int64_t n, int64_t ld, bool aligned,
                                          int nb, unsigned* version, unsigned* readers, T* smem,
                                          DeviceStats* st, int64_t* negative) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int K = Flow::K, E = Flow::E, R = Flow::R, LD = Flow::LD<T>, S = Flow::S;
  constexpr int V = 16 / int(sizeof(T));
  static_assert(V == E, "a slice thread owns one 16-byte group of a row");
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int tid = threadIdx.x;
  constexpr int W = Flow::W_max;
  // The chain's threads only (a block of three workers has 128 more, which wait: flow_kernel).
  auto chain_sync = [] { asm volatile("bar.sync 0, %0;\n" ::"n"(Flow::threads) : "memory"); };
  T* Ps = smem;                // slices: P*_r (from L2)
  T* Zb = Ps + K * LD;         // block 0: Z, filled by the slices
  T* Yb = Ps + K * LD;         // slices: Y_r, a ring of four
  T* Y2s = Yb + 4 * K * LD;    // Y2_r = T(r, r + 2) before round r
  T* Bs = Y2s + K * LD;        // R'(r - 1, r + 2)
  T* Xs = Bs + K * LD;         // rows of X = T(r + 1, r) before round r
  T* X2s = Xs + W * LD;        // rows of X2 = T(r + 2, r) before round r
  T* As = X2s + W * LD;        // rows of C'(r + 2, r - 1)
  T* Cs = As + W * LD;         // rows of C1 = C'(r + 1, r), two rounds
  T* C2s = Cs + 2 * W * LD;    // rows of C2 = C'(r + 2, r)
  auto tile = [&](int i, int j) { return i * nb + j; };
  auto kw_of = [&](int r) { return int(n - int64_t(r) * K < K ? n - int64_t(r) * K : K); };

  auto count = [&](int ti, int tj, int q) { count_reads(readers, nb, ti, tj, q); };
  // After the barrier that follows round r and a GPU-scope fence: its panels are stored
  // everywhere (versions), and what it read is counted. Block 0, one thread, between B1 and B2,
  // where it waits anyway (in a slice, the fence would hold up that slice's step 1).
  auto finish_round = [&](int r) {
    store_relaxed(version + tile(r + 1, r), unsigned(r + 1));
    if (r + 2 < nb) {
      store_relaxed(version + tile(r + 1, r + 2), unsigned(r + 1));  // Y_{r+1}: the workers' R1
      store_relaxed(version + tile(r + 2, r), unsigned(r + 1));
      store_relaxed(version + tile(r, r + 2), unsigned(r + 1));
    }
    if (r >= 1 && r + 2 < nb) {
      count(r, r + 2, r - 1);
      count(r + 2, r, r - 1);
    }
    count(r + 1, r, r);
    count(r + 1, r + 1, r);
    if (r + 2 < nb) {
      count(r + 2, r, r);
      count(r, r + 2, r);
      count(r + 2, r + 1, r);
      count(r + 1, r + 2, r);
      count(r + 2, r + 2, r);
    }
  };

  if (rank == 0) {
    const int tx = tid % R, ty = tid / R;
    T c[E][E];
    // The closed pivot tile to the matrix (the slices read it there after the next barrier).
    auto publish = [&](int r) {
#pragma unroll
      for (int a = 0; a < E; ++a) {
        const int64_t gi = int64_t(r) * K + E * ty + a, gj = int64_t(r) * K + E * tx;
        if (r == nb - 1)
#pragma unroll
          for (int b = 0; b < E; ++b)
            if (gi < n && gj + b < n) c[a][b] = finalize_value(c[a][b], st, negative, gi, gj + b);
        store_group<T, E>(d, n, ld, aligned, gi, gj, c[a]);
      }
    };
#pragma unroll
    for (int a = 0; a < E; ++a) load_group_cg<T, E>(d, n, ld, aligned, E * ty + a, E * tx, c[a]);
    close_tile_fast<T, K, E, Flow::closure_bar>(c, kw_of(0));
    publish(0);
    for (int r = 0; r + 1 < nb; ++r) {
      cluster.sync();  // B1: P*_r is in the matrix; round r - 1's rows are stored
      if (tid == 0) {
        __threadfence();
        store_relaxed(version + tile(r, r), unsigned(r + 1));
        if (r > 0) finish_round(r - 1);
      }
      cluster.sync();  // B2: Z (tile r + 1 with round r) is in Zb
#pragma unroll
      for (int a = 0; a < E; ++a) load_vec(Zb + (E * ty + a) * LD + E * tx, c[a]);
      close_tile_fast<T, K, E, Flow::closure_bar>(c, kw_of(r + 1));
      publish(r + 1);
    }
    cluster.sync();  // the last pivot tile and the slices' last rows are stored
    if (tid == 0) {
      __threadfence();
      store_relaxed(version + tile(nb - 1, nb - 1), unsigned(nb));
      if (nb >= 2) finish_round(nb - 2);
    }
    return;
  }

  // A slice: rows [lo, hi) of the chain's tiles. Warps 0-2 ("row threads": thread (i, col) owns
  // row lo + i, columns col .. col + 3) and warps 3-7 ("helpers": the same by ht) share the
  // products (top of the file).
  const int s = rank - 1, lo = s * K / S, hi = (s + 1) * K / S, w = hi - lo;
  constexpr int RT = 96, HT = Flow::threads - RT;  // row threads (16 per row), helpers
  const bool row_thread = tid < RT;
  const bool active = tid < w * (K / V);
  const int i = tid / (K / V), col = (tid % (K / V)) * V;
  const int ht = tid - RT, hi_ = ht / (K / V), hcol = (ht % (K / V)) * V;  // a helper's row, columns
  const bool hactive = ht >= 0 && hi_ < w;
  auto row_sync = [] { asm volatile("bar.sync 1, %0;\n" ::"n"(RT) : "memory"); };
  auto help_sync = [] { asm volatile("bar.sync 2, %0;\n" ::"n"(HT) : "memory"); };
  T* Z0 = cluster.map_shared_rank(Zb, 0);
  auto gload = [&](int ti, int tj, int row, T (&v)[1][V]) {  // row `row` of the slice, this thread's group
    load_group_cg<T, V>(d, n, ld, aligned, int64_t(ti) * K + lo + row, int64_t(tj) * K + col, v[0]);
  };
  auto gstore = [&](int ti, int tj, const T (&v)[1][V]) {
    store_group<T, V>(d, n, ld, aligned, int64_t(ti) * K + lo + i, int64_t(tj) * K + col, v[0]);
  };
  auto push_all = [&](T* buf, int row, int c, const T (&v)[V]) {  // into every slice's `buf`
    for (int q = 1; q <= S; ++q) store_vec(cluster.map_shared_rank(buf, q) + (lo + row) * LD + c, v);
  };
  T z[1][V];  // this thread's part of Z (tile (r + 1, r + 1)) between rounds
  // Round 0's X, Y and Z: the input.
  load_rows(Xs, d, n, ld, aligned, 1, 0, lo, hi);
  load_rows(Yb, d, n, ld, aligned, 0, 1, 0, K);
  if (active) gload(1, 1, i, z);
  cp_async_wait<0>();
  for (int r = 0; r + 1 < nb; ++r) {
    T* Y = Yb + (r % 4) * K * LD;             // Y_r = T(r, r + 1) before round r, whole
    T* Yp = Yb + ((r + 3) % 4) * K * LD;      // Y_{r-1}
    T* Yn = Yb + ((r + 1) % 4) * K * LD;      // Y_{r+1}, filled by every slice in step 2
    T* Cc = Cs + (r & 1) * Flow::W_max * LD;  // C1 rows of round r
    T* Cp = Cs + ((r + 1) & 1) * Flow::W_max * LD;  // of round r - 1
    const bool two = r + 2 < nb;              // tiles r + 2 exist
    cluster.sync();  // B1(r): P*_r is stored; round r - 1's rows are everywhere
    {  // P*_r from L2, every load in flight before the stores
      constexpr int Q = K * (K / V) / Flow::threads;
      T v[Q][V];
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const int e = tid + q * Flow::threads;
        load_group_cg<T, V>(d, n, ld, aligned, int64_t(r) * K + e / (K / V),
                            int64_t(r) * K + (e % (K / V)) * V, v[q]);
      }
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const int e = tid + q * Flow::threads;
        store_vec(Ps + (e / (K / V)) * LD + (e % (K / V)) * V, v[q]);
      }
    }
    chain_sync();
    if (row_thread) {  // step 1: C1 = X (x) P*_r, then Z = min(Z, C1 (x) Y)
      if (active) {
        T c[1][V];
        load_vec(Xs + i * LD + col, c[0]);
        row_product(c[0], Xs + i * LD, Ps + col, LD);
        store_vec(Cc + i * LD + col, c[0]);
        gstore(r + 1, r, c);
      }
      row_sync();
      if (active) {
        row_product(z[0], Cc + i * LD, Y + col, LD);
        store_vec(Z0 + (lo + i) * LD + col, z[0]);
      }
    } else if (two) {  // helpers: Y2_r = T(r, r + 2) before round r, whole in every slice
      if (r >= 1) {
        if (ht == 0) {
          wait_at_least(version + tile(r, r + 2), unsigned(r - 1));
          wait_at_least(version + tile(r - 1, r + 2), unsigned(r));  // R'(r - 1, r + 2)
        }
        help_sync();
        load_rows_group(Bs, d, n, ld, aligned, r - 1, r + 2, 0, K, ht, HT);
        cp_async_wait<0>();
        help_sync();
      }
      for (int e = ht; e < w * (K / V); e += HT) {
        const int ri = e / (K / V), c4 = (e % (K / V)) * V;
        T v[V];
        load_group_cg<T, V>(d, n, ld, aligned, int64_t(r) * K + lo + ri, int64_t(r + 2) * K + c4, v);
        if (r >= 1) row_product(v, Cp + ri * LD, Bs + c4, LD);  // round r - 1: C1_{r-1} (x) R'
        push_all(Y2s, ri, c4, v);
      }
    }
    cluster.sync();  // B2(r): Z is in block 0; Y2_r is everywhere
    if (row_thread && two) {  // step 2, row threads: X2, C2, then the next X and Z
      if (tid == 0 && r >= 1) {
        wait_at_least(version + tile(r + 2, r), unsigned(r - 1));
        wait_at_least(version + tile(r + 2, r - 1), unsigned(r));  // C'(r + 2, r - 1)
      }
      row_sync();
      if (r >= 1) load_rows_group(As, d, n, ld, aligned, r + 2, r - 1, lo, hi, tid, RT);
      T x2[1][V];
      if (active) gload(r + 2, r, i, x2);
      cp_async_wait<0>();
      row_sync();
      if (active) {  // X2 = T(r + 2, r) before round r (its round r - 1 here), then C2 = X2 (x) P*
        if (r >= 1) row_product(x2[0], As + i * LD, Yp + col, LD);
        store_vec(X2s + i * LD + col, x2[0]);
      }
      row_sync();
      if (active) {
        row_product(x2[0], X2s + i * LD, Ps + col, LD);
        store_vec(C2s + i * LD + col, x2[0]);
        gstore(r + 2, r, x2);
      }
      if (tid == 0) {
        wait_at_least(version + tile(r + 2, r + 1), unsigned(r));
        wait_at_least(version + tile(r + 2, r + 2), unsigned(r));
      }
      row_sync();  // C2s whole; the two tiles hold round r - 1
      if (active) {  // the next round's X and Z: their round r
        T x[1][V];
        gload(r + 2, r + 1, i, x);
        gload(r + 2, r + 2, i, z);
        row_product(x[0], C2s + i * LD, Y + col, LD);    // C2 (x) R1 = C2 (x) Y
        row_product(z[0], C2s + i * LD, Y2s + col, LD);  // C2 (x) R2 = C2 (x) Y2
        store_vec(Xs + i * LD + col, x[0]);
      }
    } else if (two) {  // step 2, helpers: R2 for the other SMs, the next Y
      if (hactive) {
        T c[1][V];  // R2 = Y2 + P* (x) Y2
        load_vec(Y2s + (lo + hi_) * LD + hcol, c[0]);
        row_product(c[0], Ps + (lo + hi_) * LD, Y2s + hcol, LD);
        store_group<T, V>(d, n, ld, aligned, int64_t(r) * K + lo + hi_, int64_t(r + 2) * K + hcol, c[0]);
      }
      if (ht == 0) wait_at_least(version + tile(r + 1, r + 2), unsigned(r));
      help_sync();
      if (hactive) {  // Y_{r+1}: round r on T(r + 1, r + 2); C1 (x) R2 = C1 (x) Y2
        T y[V];
        load_group_cg<T, V>(d, n, ld, aligned, int64_t(r + 1) * K + lo + hi_, int64_t(r + 2) * K + hcol, y);
        row_product(y, Cc + hi_ * LD, Y2s + hcol, LD);
        push_all(Yn, hi_, hcol, y);
        store_group<T, V>(d, n, ld, aligned, int64_t(r + 1) * K + lo + hi_, int64_t(r + 2) * K + hcol, y);
      }
    }
  }
  // Block 0 and every slice pass Flow::chain_cluster_barriers(nb) in all, as flow_kernel's
  // waiting threads do.
  cluster.sync();  // block 0's last closure is stored; every slice's last rows are stored
#endif
}

// The counters (Flow::counter_bytes): [0] the claim counter, [1] the chain's election, then per
// tile its version, then per tile its count of readers.
__device__ __forceinline__ unsigned* flow_versions(unsigned* counters) { return counters + 2; }
__device__ __forceinline__ unsigned* flow_readers(unsigned* counters, int nb) {
  return counters + 2 + nb * nb;
}

// The workers' loop (flow_kernel, flow_extra_kernel): claim the next item, skip the chain's,
// run it; until none is left. `counters`: Flow::counter_bytes(nb).
template <class T, int W>
__device__ __forceinline__ void flow_work(T* __restrict__ d, int64_t n, int64_t ld, bool aligned,
                                          unsigned* counters, T* smem, DeviceStats* st,
                                          int64_t* negative) {
  constexpr int K = Flow::K, LD = Flow::LD<T>;
  __shared__ FlowItem item[W];  // a worker's next item; i < 0: none left
  const int nb = int((n + K - 1) / K);
  const int64_t total = Flow::items(nb);
  unsigned* version = flow_versions(counters);
  unsigned* readers = flow_readers(counters, nb);
  static_assert(size_t(2 * W * K * LD) * sizeof(T) <= Flow::smem_bytes<T>(), "two tiles a worker");
  const Workers<W> hf;
  T* As = smem + 2 * hf.h * K * LD;
  T* Bs = As + K * LD;
  for (;;) {
    if (hf.tid == 0) {
      FlowItem it{-1, -1, 0, 0};
      int64_t x;
      do {
        x = atomicAdd(counters, 1u);
        if (x < total) it = flow_item(x, nb);
      } while (x < total && chain_item(it));
      // The row panel next to the next pivot: the chain brought it up to round r - 1 (its Y).
      if (x < total && it.i == it.round && it.j == it.round + 1) it.first = it.round;
      if (x >= total) it.i = -1;
      item[hf.h] = it;
    }
    hf.sync();
    const FlowItem it = item[hf.h];
    if (it.i < 0) return;
    flow_run<T, W>(d, n, ld, aligned, nb, version, readers, it, As, Bs, hf, st, negative);
    // flow_run ends with a barrier after every thread has read `item`.
  }
}

// The rounds of a solve after the rules (engine.cu), finalize included; launched in clusters of
// Flow::G blocks, as many as the GPU holds at once. `counters`: Flow::counter_bytes(nb), zero.
// `aligned`: d on 16 bytes and ld a multiple of 16 bytes. W: workers per block (Workers).
template <class T, int W>
__global__ void __launch_bounds__(Workers<W>::block)
    flow_kernel(T* __restrict__ d, int64_t n, int64_t ld, bool aligned, unsigned* counters,
                DeviceStats* st, int64_t* negative) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  // The chain is the first cluster to start (the first block of each cluster asks; a cluster's
  // blocks run together), so it never waits for SMs that blocks waiting on it hold.
  __shared__ unsigned chain_flag;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) chain_flag = atomicAdd(counters + 1, 1u) == 0;
  cluster.sync();
  const bool chain = *cluster.map_shared_rank(&chain_flag, 0);
  cluster.sync();  // every block has read block 0's flag
  // The rules (launched with PDL: engine.cu, enqueue_flow); then flow_extra_kernel may start.
  wait_for_previous_grid();
  if (chain) {
    const int nb = int((n + Flow::K - 1) / Flow::K);
    if (threadIdx.x < Flow::threads) {
      chain_run(d, n, ld, aligned, nb, flow_versions(counters), flow_readers(counters, nb), smem,
                st, negative);
    } else {  // a third worker's threads: through the chain's cluster barriers, then to work
      for (int q = 0; q < Flow::chain_cluster_barriers(nb); ++q) cluster.sync();
    }
  }
  flow_work<T, W>(d, n, ld, aligned, counters, smem, st, negative);
#else
  __trap();  // sm_90 and later only: engine.cu never launches it elsewhere
#endif
}

// More workers, on the SMs that the flow kernel's clusters leave free (20 of an H100's 132:
// seven clusters of 16 fit), launched right after it with programmatic dependent launch: it
// starts once every block of the flow kernel has passed its wait for the rules, and claims from
// the same counter. Its blocks wait for the flow kernel before they exit, so that what follows
// on the stream sees the whole solve. Shared memory: Flow::smem_bytes<T>(), as the flow
// kernel's (one block per SM, as measured).
template <class T, int W>
__global__ void __launch_bounds__(Workers<W>::block)
    flow_extra_kernel(T* __restrict__ d, int64_t n, int64_t ld, bool aligned, unsigned* counters,
                      DeviceStats* st, int64_t* negative) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) unsigned char smem_raw[];
  flow_work<T, W>(d, n, ld, aligned, counters, reinterpret_cast<T*>(smem_raw), st, negative);
  wait_for_previous_grid();  // the flow kernel: complete, and its stores visible
#else
  __trap();
#endif
}

}  // namespace apsp::cuda_detail
