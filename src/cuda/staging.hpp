// Host <-> device copies of an n x n row-major matrix through pinned staging buffers: host rows are
// copied into pinned chunks by several threads while the previous chunk's DMA runs. Not for:
// device-side work (engine.cu).
#pragma once

#include <cstdint>

namespace apsp::cuda_detail {

// Copies rows [0, n) of `host` (leading dimension host_ld elements) into the device matrix `dev`
// (leading dimension dev_ld >= n), enqueued on `stream` (a cudaStream_t); returns when done.
void upload_matrix(void* dev, int64_t dev_ld, const void* host, int64_t n, int64_t host_ld,
                   int elem_size, void* stream);
// The reverse: device matrix (leading dimension dev_ld) -> host rows (leading dimension
// host_ld); returns when done.
void download_matrix(void* host, int64_t host_ld, const void* dev, int64_t n, int64_t dev_ld,
                     int elem_size, void* stream);

}  // namespace apsp::cuda_detail
