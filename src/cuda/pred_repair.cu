// Predecessor chains that loop after a float solve, found and mended on the device: the CUDA
// engine's counterpart of core/pred_repair.cpp, by the same rules (core/pred_repair.hpp), so that
// device arrays never leave the GPU and host inputs are mended before they come back.
//
// One block a row (rows in turn over a grid of a few blocks per SM). A row without a suspect (a
// vertex whose predecessor is not strictly closer; every loop holds one) costs one pass. Else
// pointer jumping (each vertex's ancestor 2^r steps up its chain, r = 0, 1, ..., between two
// buffers so that no step reads what another thread of it writes) finds in ceil(log2 n) + 1
// steps which chains reach i, and where each lost chain ends: on a loop, whose vertices are then
// flagged, or short of i. The searches (one a warp, 16 at a time in index order) go first to the
// lost vertices that can end a chain's trouble: flagged ones (on a loop, or a hint: a lost p that
// a search would have taken, as the host mend's walks find them) and those whose predecessor has
// none; any lost vertex only once those mend nothing. Each is mended with what led back before
// its batch, so a mend never closes a new loop. The entries a search reads in other rows
// (pred[p][j] == p) are never mended (their chain is p itself), so the rows' blocks need no order.
// Searches come from the matrix's pool (kMendSearchesPerVertex a vertex, claimed once a batch is
// chosen); a row may also spend at most kMendRowBudget on searches and recomputes of its chains
// together, so that no row keeps one SM for long.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "apsp/apsp.hpp"
#include "core/pred_repair.hpp"
#include "cuda/check.cuh"

namespace apsp {
namespace cuda_detail {
namespace {

constexpr int kMendThreads = 512;
constexpr int kMendWarps = kMendThreads / 32;
// Chains and vertex sets (mend_scratch_ints) in shared memory up to this many vertices (100.5 KB,
// two blocks an SM on sm_90) where the device allows that much a block, past it in global scratch.
constexpr int64_t kMendSharedVertices = 12288;
// A row's searches and recomputes together (a recompute costs about log2(n) / 16 searches).
constexpr int kMendRowBudget = 256;

// Block-wide maximum of x (one value a thread); every thread gets it. `scratch`: kMendWarps values.
template <class T>
__device__ T block_max(T x, T* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int o = 16; o > 0; o /= 2) x = max(x, __shfl_xor_sync(0xffffffffu, x, o));
  __syncthreads();
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  T m = scratch[0];
  for (int w = 1; w < kMendWarps; ++w) m = max(m, scratch[w]);
  return m;
}

template <class T>
struct RowShared {
  int counts[kMendWarps];
  T maxima[kMendWarps];
  int candidates[kMendWarps];
  int best[kMendWarps];
  int selected;
  int granted;     // searches claimed from the matrix's pool for the chosen batch
  unsigned hints;  // flags set by searches so far (only grows: a pass compares it with its start)
};

// Per block: two buffers of n ints for the jumps, then three sets of n bits (the kernel's flags,
// failed and dead).
__host__ __device__ inline int64_t mend_scratch_ints(int64_t n) {
  return 2 * n + 3 * ((n + 31) / 32);
}

// `scratch`: gridDim.x * mend_scratch_ints(n) ints where n > kMendSharedVertices, else nullptr
// (the same in dynamic shared memory). `searches_used`: the searches the blocks have claimed from
// the matrix's pool of `searches` (zero before the launch).
template <class T>
__global__ void __launch_bounds__(kMendThreads, 2)
    mend_pred_loops_kernel(const T* __restrict__ d, int64_t ldd, int32_t* pred, int64_t ldp,
                           int64_t n, int32_t* scratch, int* searches_used, int searches) {
  extern __shared__ int32_t scratch_shared[];
  __shared__ RowShared<T> sh;
  int32_t* const chains =
      scratch ? scratch + int64_t(blockIdx.x) * mend_scratch_ints(n) : scratch_shared;
  const int32_t* anc = chains;  // after the jumps: each vertex's end of chain (i where it reaches i)
  // Sets of the row's vertices, one bit a vertex: `flags`, on a loop or a hint; `failed`,
  // searched in vain since the last mend (a search again would fail again); `dead`, with no p
  // that passes the rounding test at all (never to be mended).
  const int64_t words = (n + 31) / 32;
  unsigned* const flags = reinterpret_cast<unsigned*>(chains + 2 * n);
  unsigned* const failed = flags + words;
  unsigned* const dead = failed + words;
  auto add = [](unsigned* set, int64_t v) {  // whether v was not in the set
    const unsigned bit = 1u << (v % 32);
    return (atomicOr(&set[v / 32], bit) & bit) == 0;
  };
  auto in = [](const unsigned* set, int64_t v) { return ((set[v / 32] >> (v % 32)) & 1u) != 0; };
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int jumps = 1;
  while ((int64_t(1) << (jumps - 1)) < n) ++jumps;  // 2^(jumps - 1) >= n steps

  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const T* di = d + i * ldd;
    int32_t* pi = pred + i * ldp;
    auto valid = [&](int64_t p) { return p >= 0 && p < n; };
    auto suspect = [&](int64_t j) {
      const int32_t p = pi[j];
      return j != i && valid(p) && !(di[p] < di[j]);
    };
    // The pool only shrinks: once it is spent, no row is mended any more.
    if (__syncthreads_or(threadIdx.x == 0 && *(volatile int*)searches_used >= searches)) break;
    int any = 0;
    for (int64_t j = threadIdx.x; j < n; j += kMendThreads) any |= suspect(j);
    if (!__syncthreads_or(any)) continue;

    T local = 0;
    for (int64_t j = threadIdx.x; j < n; j += kMendThreads)
      if (isfinite(di[j])) local = max(local, di[j] < 0 ? -di[j] : di[j]);
    const T scale = block_max(local, sh.maxima);
    for (int64_t w = threadIdx.x; w < words; w += kMendThreads) flags[w] = dead[w] = 0;
    if (threadIdx.x == 0) sh.hints = 0;

    int64_t cursor = 0;         // candidates are taken from here on, in index order
    bool stale = true;          // anc[] predates a mend
    bool mended_since = false;  // a mend since the pass over the candidates began
    bool broad = false;         // every lost vertex a candidate, not only flagged ones and ends
    unsigned hints_before = 0;  // sh.hints when the pass began
    int row_budget = kMendRowBudget;
    for (;;) {
      if (row_budget <= 0) break;  // uniform: every thread counts alike
      if (stale) {
        --row_budget;
        int32_t *from = chains, *to = chains + n;
        for (int64_t j = threadIdx.x; j < n; j += kMendThreads)
          from[j] = j == i ? int32_t(i) : valid(pi[j]) ? pi[j] : -1;
        for (int64_t w = threadIdx.x; w < words; w += kMendThreads) failed[w] = 0;
        __syncthreads();
        // After step r, from[j] is j's ancestor 2^(r + 1) steps up, or where its chain ends (i,
        // or -1 where it stops short). Chains that reach i or end take fewer than n steps.
        for (int r = 0; r < jumps; ++r) {
          for (int64_t j = threadIdx.x; j < n; j += kMendThreads) {
            const int32_t a = from[j];
            to[j] = a >= 0 && a != i ? from[a] : a;
          }
          __syncthreads();
          int32_t* const done = to;
          to = from;
          from = done;
        }
        anc = from;
        // A chain that neither reaches i nor stops has its end on a loop (2^jumps >= n steps):
        // flag the loop's vertices. A walk stops at a flagged vertex, so all of them together take
        // one step a vertex. Mends never close a loop, so flags of earlier loops stay right.
        for (int64_t j = threadIdx.x; j < n; j += kMendThreads) {
          int64_t v = anc[j];
          if (j == i || v < 0 || v == i) continue;
          while (valid(v) && v != i && add(flags, v)) v = pi[v];
        }
        stale = false;
      }
      if (threadIdx.x == 0) sh.selected = 0;
      __syncthreads();
      const int want = min(kMendWarps, row_budget);
      // The next candidates from `cursor`: lost vertices (their chain misses i), neither dead nor
      // failed, that are flagged or whose predecessor has none (or, once those mend nothing, any).
      for (int64_t base = cursor; base < n; base += kMendThreads) {
        const int64_t j = base + threadIdx.x;
        bool take = false;
        if (j < n && j != i && valid(pi[j]) && anc[j] != i && !in(dead, j) && !in(failed, j)) {
          const int32_t p = pi[j];
          take = broad || in(flags, j) || (p != i && !valid(pi[p]));
        }
        // Each warp's count straight to shared memory (every lane holds it); their last readers
        // passed the two barriers below in the previous 512 columns, or the pass's first one.
        const unsigned ballot = __ballot_sync(0xffffffffu, take);
        if (lane == 0) sh.counts[warp] = __popc(ballot);
        __syncthreads();
        int taken = 0, slot = sh.selected + __popc(ballot & ((1u << lane) - 1));
        for (int w = 0; w < kMendWarps; ++w) {
          const int c = sh.counts[w];
          taken += c;
          if (w < warp) slot += c;
        }
        if (take && slot < want) sh.candidates[slot] = int(j);
        const int total = sh.selected + taken;
        __syncthreads();  // every thread has read sh.selected
        if (threadIdx.x == 0) sh.selected = min(total, want);
        __syncthreads();
        if (total >= want) break;
      }
      int count = sh.selected;
      const bool hinted = sh.hints != hints_before;
      __syncthreads();  // every thread has read sh before thread 0 writes it again
      if (count > 0) {  // claim the batch's searches, as many as the pool has left
        if (threadIdx.x == 0) {
          int used = *(volatile int*)searches_used, take = 0;
          for (;;) {
            take = max(0, min(count, searches - used));
            if (take == 0) break;
            const int seen = atomicCAS(searches_used, used, used + take);
            if (seen == used) break;
            used = seen;
          }
          sh.granted = take;
        }
        __syncthreads();
        count = sh.granted;
        if (count == 0) break;  // the pool is spent
        row_budget -= count;
      }
      if (count == 0) {  // the pass is over: again while it mends or flags, then once broad
        if (!mended_since && !hinted && broad) break;
        broad = broad || !(mended_since || hinted);
        cursor = 0;
        mended_since = false;
        hints_before = sh.hints;
        continue;
      }
      cursor = sh.candidates[count - 1] + 1;
      // One warp a candidate j: the closest p that leads back, with pred[p][j] == p and
      // d[i][p] + d[p][j] within rounding of d[i][j]; the lowest such p on a tie.
      if (warp < count) {
        const int64_t j = sh.candidates[warp];
        const T dij = di[j];
        T best_len = Semiring<T>::inf();
        int32_t best = -1;
        bool passes = false;  // some p passes the rounding test
        for (int64_t p = lane; p < n; p += 32) {
          if (p == j || pred[p * ldp + j] != p) continue;
          const T dp = d[p * ldd + j];
          const T len = di[p] + dp;
          if (!isfinite(len) || !within_rounding(len, dij, dp, scale, n)) continue;
          passes = true;
          if (anc[p] != i) {  // lost too: a hint, searched in the next pass if this one stalls
            if (add(flags, p)) atomicAdd(&sh.hints, 1u);
            continue;
          }
          if (!(len < best_len)) continue;
          best = int32_t(p);
          best_len = len;
        }
        for (int o = 16; o > 0; o /= 2) {
          const T other_len = __shfl_xor_sync(0xffffffffu, best_len, o);
          const int32_t other = __shfl_xor_sync(0xffffffffu, best, o);
          if (other >= 0 && (best < 0 || other_len < best_len ||
                             (other_len == best_len && other < best))) {
            best = other;
            best_len = other_len;
          }
        }
        passes = __any_sync(0xffffffffu, passes);
        if (lane == 0) {
          sh.best[warp] = best;
          if (best < 0) add(passes ? failed : dead, j);
        }
      }
      __syncthreads();
      int mended = 0;
      if (threadIdx.x < count && sh.best[threadIdx.x] >= 0) {
        pi[sh.candidates[threadIdx.x]] = sh.best[threadIdx.x];
        mended = 1;
      }
      if (__syncthreads_or(mended)) {
        stale = true;
        mended_since = true;
      }
    }
    __syncthreads();  // sh and the scratch are the next row's
  }
}

}  // namespace
}  // namespace cuda_detail

void repair_predecessor_loops_cuda(const Matrix& dist, const PredMatrix& pred, int device,
                                   void* stream) {
  using namespace cuda_detail;
  if (pred.data == nullptr || dist.n == 0 || !pred_repair_enabled()) return;
  if (dist.dtype != DType::float32 && dist.dtype != DType::float64) return;  // exact sums
  DeviceGuard guard(device);
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t n = dist.n;
  int sms = 0, optin = 0;
  APSP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  APSP_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // The dynamic shared memory a block may take on this device: the same value at every call, so
  // that threads setting it at once never lower it under each other's launch. 1 KB is left for
  // the kernel's static RowShared.
  const int cap = int(std::min<int64_t>(optin - 1024, mend_scratch_ints(kMendSharedVertices) * 4));
  const size_t bytes_per_block = size_t(mend_scratch_ints(n)) * 4;
  const bool shared = bytes_per_block <= size_t(cap);
  const unsigned blocks = unsigned(std::min<int64_t>(n, int64_t(sms) * 2));  // 2 blocks an SM
  const size_t smem = shared ? bytes_per_block : 0;
  const int searches = int(std::min<int64_t>(kMendSearchesPerVertex * n, INT32_MAX / 2));
  auto launch = [&](auto zero) {
    using T = decltype(zero);
    APSP_CUDA_CHECK(cudaFuncSetAttribute(mend_pred_loops_kernel<T>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, cap));
    // The pool's counter (16 bytes, to keep the chains aligned), then the global scratch.
    const size_t bytes = 16 + (shared ? 0 : size_t(blocks) * bytes_per_block);
    void* buffer = nullptr;
    check_allocation(malloc_async(&buffer, bytes, s), bytes, "the predecessor mend's scratch");
    int* const used = static_cast<int*>(buffer);
    int32_t* const chains = shared ? nullptr : reinterpret_cast<int32_t*>(used + 4);
    cudaError_t err = cudaMemsetAsync(used, 0, sizeof(int), s);
    const char* what = "cudaMemsetAsync of the mend's search count";
    if (err == cudaSuccess) {
      mend_pred_loops_kernel<T><<<blocks, kMendThreads, smem, s>>>(
          static_cast<const T*>(dist.data), dist.ld, pred.data, pred.ld, n, chains, used,
          searches);
      err = cudaGetLastError();
      what = "launch of mend_pred_loops_kernel";
    }
    const cudaError_t freed = cudaFreeAsync(buffer, s);  // in stream order, after the kernel
    if (err == cudaSuccess && freed != cudaSuccess) {
      err = freed;
      what = "cudaFreeAsync of the mend's scratch";
    }
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // a non-sticky error: the process stays usable
      throw_cuda(err, what, __FILE__, __LINE__);
    }
  };
  if (dist.dtype == DType::float32)
    launch(float{});
  else
    launch(double{});
}

}  // namespace apsp
