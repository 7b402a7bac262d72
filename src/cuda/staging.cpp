// Pinned staging for host inputs of the CUDA engine (see staging.hpp). Two pinned chunks per
// transfer, taken from a small process-wide pool (allocating pinned memory costs milliseconds, so
// it is kept between calls; the pool is behind a mutex and each call owns its chunks while it
// runs, so concurrent calls do not share a buffer). OpenMP threads fill / drain a chunk while the
// other one is on the copy engine. OutputPrefault faults in a new output's pages meanwhile.
#include "cuda/staging.hpp"

#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda/check.cuh"

namespace apsp::cuda_detail {
namespace {

constexpr size_t kChunkBytes = size_t(32) << 20;  // per pinned chunk
constexpr size_t kPoolKeep = 2;                    // staging sets kept for later calls

struct Staging {
  void* chunk[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};  // events belong to one device: pooled per device
  size_t bytes = 0;
  int device = -1;
  ~Staging() {
    for (int b = 0; b < 2; ++b) {
      if (chunk[b]) (void)cudaFreeHost(chunk[b]);
      if (done[b]) (void)cudaEventDestroy(done[b]);
    }
  }
};

std::mutex pool_mutex;
std::vector<std::unique_ptr<Staging>>& pool() {
  static auto* p = new std::vector<std::unique_ptr<Staging>>();  // never destroyed: no CUDA calls at exit
  return *p;
}

// Borrowed staging set, returned to the pool when the transfer ends (or throws).
struct Lease {
  std::unique_ptr<Staging> s;
  explicit Lease(size_t bytes) {
    int device = 0;
    APSP_CUDA_CHECK(cudaGetDevice(&device));  // the transfer's device (the caller's guard set it)
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      auto& p = pool();
      for (auto it = p.begin(); it != p.end(); ++it)
        if ((*it)->bytes >= bytes && (*it)->device == device) {
          s = std::move(*it);
          p.erase(it);
          break;
        }
    }
    if (!s) {
      s = std::make_unique<Staging>();
      s->bytes = bytes;
      s->device = device;
      for (int b = 0; b < 2; ++b) {
        const cudaError_t err = cudaHostAlloc(&s->chunk[b], bytes, cudaHostAllocPortable);
        if (err == cudaErrorMemoryAllocation) {
          (void)cudaGetLastError();
          throw MemoryError("not enough pinned host memory: the CUDA engine's staging needs " +
                            bytes_text(2 * bytes) + " of page-locked memory for its copies; "
                            "free host memory, or pass a device array or device='cpu'");
        }
        APSP_CUDA_CHECK(err);
        APSP_CUDA_CHECK(cudaEventCreateWithFlags(&s->done[b], cudaEventDisableTiming));
      }
    }
  }
  ~Lease() {
    std::lock_guard<std::mutex> lock(pool_mutex);
    auto& p = pool();
    if (p.size() < kPoolKeep) p.push_back(std::move(s));
  }
};

// Threads for the host copies: one core fewer than OpenMP would take, at least one. With every
// core copying, a thread preempted by the CUDA driver's or the OS's work holds up the whole chunk
// while the others wait at the end of the parallel loop. Lent H100 machine (16 cores), n = 10000
// int32, 400 MB each way: with 16 threads 15 of 56 uploads took 15-97 ms instead of ~9 and 4
// downloads 17-68 ms; with 15 threads 27 of 28 uploads took 8.0-10.3 ms (one 18.7) and no
// download over 12 ms (GPU_NOTES.md, thirteenth session).
int copy_threads() {
  return std::max(1, std::min(omp_get_max_threads(), omp_get_num_procs() - 1));
}

// Parallel copy of `rows` rows of `row_bytes` between strided buffers, in pieces of about
// kPieceBytes handed out one at a time, so that a slow thread holds up one piece, not a fixed
// share of the chunk.
constexpr size_t kPieceBytes = size_t(256) << 10;
void copy_rows(char* dst, size_t dst_pitch, const char* src, size_t src_pitch, int64_t rows,
               size_t row_bytes) {
  const size_t total = size_t(rows) * row_bytes;
  const int threads = copy_threads();
  if (dst_pitch == row_bytes && src_pitch == row_bytes) {  // one contiguous block
    const int64_t pieces = int64_t((total + kPieceBytes - 1) / kPieceBytes);
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (pieces > 1)
    for (int64_t q = 0; q < pieces; ++q) {
      const size_t a = size_t(q) * kPieceBytes, b = std::min(total, a + kPieceBytes);
      std::memcpy(dst + a, src + a, b - a);
    }
    return;
  }
  const int64_t per = std::max<int64_t>(1, int64_t(kPieceBytes / std::max<size_t>(row_bytes, 1)));
  const int64_t pieces = (rows + per - 1) / per;
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (pieces > 1)
  for (int64_t q = 0; q < pieces; ++q)
    for (int64_t i = q * per; i < std::min(rows, (q + 1) * per); ++i)
      std::memcpy(dst + size_t(i) * dst_pitch, src + size_t(i) * src_pitch, row_bytes);
}

// One transfer's plan: rows per pinned chunk (whole rows, a multiple of align_rows, at least
// align_rows, about kChunkBytes), the pitches, and the staging set it borrows.
struct Chunks {
  size_t row_bytes, host_pitch, dev_pitch;
  int64_t rows_per;
  Lease lease;
  Staging& st;
  static int64_t rows_for(int64_t total, size_t row_bytes, int64_t align_rows) {
    int64_t rows = int64_t(kChunkBytes / row_bytes) / align_rows * align_rows;
    if (const char* v = std::getenv("APSP_CUDA_STAGING_ROWS")) rows = std::atoll(v);
    rows = std::min(rows, total);
    return std::max(align_rows, (rows + align_rows - 1) / align_rows * align_rows);
  }
  // Rows of n elements, `total` of them.
  Chunks(int64_t n, int64_t total, int64_t host_ld, int64_t dev_ld, int elem_size,
         int64_t align_rows = 1)
      : row_bytes(size_t(n) * elem_size),
        host_pitch(size_t(host_ld) * elem_size),
        dev_pitch(size_t(dev_ld) * elem_size),
        rows_per(rows_for(total, row_bytes, align_rows)),
        lease(std::max(kChunkBytes, size_t(rows_per) * row_bytes)),  // pool sets alike
        st(*lease.s) {}
};

// Where a copy or a callback throws mid-transfer, the chunks' DMAs end before the staging set goes
// back to the pool (declared after the Chunks, so it runs before their Lease's destructor).
struct SyncOnThrow {
  cudaStream_t s;
  ~SyncOnThrow() {
    if (std::uncaught_exceptions() > 0) (void)cudaStreamSynchronize(s);
  }
};

}  // namespace

void upload_matrix_arriving(void* dev, int64_t dev_ld, const void* host, int64_t n,
                            int64_t host_ld, int elem_size, void* stream_ptr, int64_t align_rows,
                            const std::function<void(int64_t)>& arrived, int64_t rows_in_all) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t total = rows_in_all < 0 ? n : rows_in_all;
  Chunks ch(n, total, host_ld, dev_ld, elem_size, std::max<int64_t>(1, align_rows));
  SyncOnThrow sync_on_throw{stream};
  const size_t row_bytes = ch.row_bytes;
  Staging& st = ch.st;
  const char* src = static_cast<const char*>(host);
  char* dst = static_cast<char*>(dev);
  int c = 0;
  for (int64_t r0 = 0; r0 < total; r0 += ch.rows_per, ++c) {
    const int b = c & 1;
    const int64_t rows = std::min(ch.rows_per, total - r0);
    if (c >= 2) APSP_CUDA_CHECK(cudaEventSynchronize(st.done[b]));  // chunk b's last DMA is done
    copy_rows(static_cast<char*>(st.chunk[b]), row_bytes, src + size_t(r0) * ch.host_pitch,
              ch.host_pitch, rows, row_bytes);
    APSP_CUDA_CHECK(cudaMemcpy2DAsync(dst + size_t(r0) * ch.dev_pitch, ch.dev_pitch, st.chunk[b],
                                      row_bytes, row_bytes, size_t(rows), cudaMemcpyHostToDevice,
                                      stream));
    APSP_CUDA_CHECK(cudaEventRecord(st.done[b], stream));
    if (arrived) arrived(r0 + rows);
  }
  APSP_CUDA_CHECK(cudaStreamSynchronize(stream));  // staging goes back to the pool idle
}

void upload_matrix(void* dev, int64_t dev_ld, const void* host, int64_t n, int64_t host_ld,
                   int elem_size, void* stream, const std::function<void()>& between_chunks,
                   int64_t rows) {
  std::function<void(int64_t)> arrived;
  if (between_chunks) arrived = [&](int64_t) { between_chunks(); };
  upload_matrix_arriving(dev, dev_ld, host, n, host_ld, elem_size, stream, 1, arrived, rows);
}

void download_matrix(void* host, int64_t host_ld, const void* dev, int64_t n, int64_t dev_ld,
                     int elem_size, void* stream_ptr, int64_t rows_in_all) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t total = rows_in_all < 0 ? n : rows_in_all;
  Chunks ch(n, total, host_ld, dev_ld, elem_size);
  SyncOnThrow sync_on_throw{stream};
  const size_t row_bytes = ch.row_bytes;
  const int64_t rows_per = ch.rows_per;
  Staging& st = ch.st;
  char* dst = static_cast<char*>(host);
  const char* src = static_cast<const char*>(dev);
  const int64_t chunks = (total + rows_per - 1) / rows_per;
  auto enqueue = [&](int64_t c) {
    const int64_t r0 = c * rows_per, rows = std::min(rows_per, total - r0);
    APSP_CUDA_CHECK(cudaMemcpy2DAsync(st.chunk[c & 1], row_bytes, src + size_t(r0) * ch.dev_pitch,
                                      ch.dev_pitch, row_bytes, size_t(rows), cudaMemcpyDeviceToHost,
                                      stream));
    APSP_CUDA_CHECK(cudaEventRecord(st.done[c & 1], stream));
  };
  enqueue(0);
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t r0 = c * rows_per, rows = std::min(rows_per, total - r0);
    APSP_CUDA_CHECK(cudaEventSynchronize(st.done[c & 1]));
    if (c + 1 < chunks) enqueue(c + 1);  // DMA of the next chunk runs while this one drains
    copy_rows(dst + size_t(r0) * ch.host_pitch, ch.host_pitch,
              static_cast<const char*>(st.chunk[c & 1]), row_bytes, rows, row_bytes);
  }
}

OutputPrefault::OutputPrefault(std::vector<HostRows> outputs) {
  size_t total = 0;
  for (const HostRows& m : outputs) total += size_t(m.rows) * m.row_bytes;
  if (total < kMinBytes) return;
  worker_ = std::thread([this, outputs = std::move(outputs)] {
    const auto start = std::chrono::steady_clock::now();
    constexpr size_t kPage = 4096;
    for (const HostRows& m : outputs) {
#pragma omp parallel for schedule(static) num_threads(copy_threads())
      for (int64_t i = 0; i < m.rows; ++i) {
        volatile char* row = static_cast<char*>(m.data) + size_t(i) * m.pitch;
        for (size_t b = 0; b < m.row_bytes; b += kPage) row[b] = 0;
        row[m.row_bytes - 1] = 0;
      }
    }
    ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  });
}

double OutputPrefault::wait() {
  if (worker_.joinable()) worker_.join();
  return ms_;
}

OutputPrefault::~OutputPrefault() { wait(); }

}  // namespace apsp::cuda_detail
