// Host <-> device copies of an n x n row-major matrix through pinned staging buffers: host rows are
// copied into pinned chunks by several threads while the previous chunk's DMA runs. Not for:
// device-side work (engine.cu).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace apsp::cuda_detail {

// Copies rows [0, n) of `host` (leading dimension host_ld elements) into the device matrix `dev`
// (leading dimension dev_ld >= n), enqueued on `stream` (a cudaStream_t); returns when done.
// `between_chunks`, when given, is called after each pinned chunk is enqueued; it may throw to
// stop the upload (Ctrl-C: engine.cu), which ends once the chunks' copies in flight are done.
// `rows`, when given, copies that many rows of n elements instead (a batch of graphs: engine.cu).
void upload_matrix(void* dev, int64_t dev_ld, const void* host, int64_t n, int64_t host_ld,
                   int elem_size, void* stream, const std::function<void()>& between_chunks = {},
                   int64_t rows = -1);
// The same, calling `arrived(rows)` on this thread each time the copies of rows [0, rows) are
// enqueued on `stream` (rows: a multiple of `align_rows`, or n), so that the caller can enqueue
// work on those rows behind them on another stream (engine.cu: upload_and_enqueue_arriving).
// Each pinned chunk holds a multiple of align_rows rows; APSP_CUDA_STAGING_ROWS sets that number
// (tests: many chunks at small n).
void upload_matrix_arriving(void* dev, int64_t dev_ld, const void* host, int64_t n,
                            int64_t host_ld, int elem_size, void* stream, int64_t align_rows,
                            const std::function<void(int64_t)>& arrived, int64_t rows = -1);
// The reverse: device matrix (leading dimension dev_ld) -> host rows (leading dimension
// host_ld); returns when done. `rows` as for upload_matrix.
void download_matrix(void* host, int64_t host_ld, const void* dev, int64_t n, int64_t dev_ld,
                     int elem_size, void* stream, int64_t rows = -1);

// Rows of a host matrix: `rows` rows of `row_bytes`, `pitch` bytes apart.
struct HostRows {
  void* data;
  int64_t rows;
  size_t row_bytes, pitch;
};

// Faults in the pages of host output matrices on a helper thread while the GPU solves, so that
// the download's copy-out does not pay the first-touch page faults of a new array (NumPy's
// np.empty: the copy-out took 16 ms instead of 8 at n = 10000 int32). It writes the pages (one
// zero byte per page): only for outputs whose whole contents the call replaces. Matrices under
// kMinBytes are left alone. Joins on destruction.
class OutputPrefault {
 public:
  explicit OutputPrefault(std::vector<HostRows> outputs);
  ~OutputPrefault();
  OutputPrefault(const OutputPrefault&) = delete;
  OutputPrefault& operator=(const OutputPrefault&) = delete;
  static constexpr size_t kMinBytes = size_t(16) << 20;
  // Waits for the helper thread; returns how long it faulted pages (ms; 0 when it did not run).
  double wait();

 private:
  std::thread worker_;
  double ms_ = 0;
};

}  // namespace apsp::cuda_detail
