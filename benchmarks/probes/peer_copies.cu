// Probe: how fast a split's pivot rows go from one GPU to the others (engine.cu: enqueue_split
// sends kw rows x n columns of the owner's matrix to every other GPU each super-round, with
// cudaMemcpy3DPeerAsync on the owner's aux stream, one destination after another).
// Measures, for rows x n int32 at a pitch of n + 32 elements, from cuda:0:
//   - one 2-D peer copy to cuda:1 (copy engine), and the contiguous 1-D copy of the same bytes;
//   - to every other GPU one after another on one stream (what the engine does now);
//   - to every other GPU at once, one stream each (pushed from cuda:0, or pulled by each);
//   - a kernel on cuda:0 that stores into every other GPU's memory over NVLink (SM copies).
// Build: nvcc -O3 -arch=sm_90 -o build/gpu-bench/peer_copies benchmarks/probes/peer_copies.cu
// Run:   peer_copies [n=16384] [rows=512]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

static void copy2d(int* dst, int dd, const int* src, int sd, long ld, long rows, long n,
                   cudaStream_t s) {
  cudaMemcpy3DPeerParms c{};
  c.srcPtr = make_cudaPitchedPtr(const_cast<int*>(src), ld * 4, n * 4, rows);
  c.srcDevice = sd;
  c.dstPtr = make_cudaPitchedPtr(dst, ld * 4, n * 4, rows);
  c.dstDevice = dd;
  c.extent = make_cudaExtent(n * 4, rows, 1);
  CHECK(cudaMemcpy3DPeerAsync(&c, s));
}

// Rows x n from src to up to 3 destinations at pitch ld, 16-byte stores.
__global__ void store_to_peers(int4* d1, int4* d2, int4* d3, const int4* src, long ld4, long rows,
                               long n4) {
  const long total = rows * n4;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < total;
       i += long(gridDim.x) * blockDim.x) {
    const long r = i / n4, c = i - r * n4, at = r * ld4 + c;
    const int4 v = src[at];
    if (d1) d1[at] = v;
    if (d2) d2[at] = v;
    if (d3) d3[at] = v;
  }
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 16384, rows = argc > 2 ? std::atol(argv[2]) : 512;
  const long ld = n + 32;
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::printf("needs 2 GPUs\n");
    return 2;
  }
  std::vector<int*> buf(count);
  std::vector<cudaStream_t> st(count);
  for (int d = 0; d < count; ++d) {
    CHECK(cudaSetDevice(d));
    for (int e = 0; e < count; ++e)
      if (e != d) {
        cudaError_t err = cudaDeviceEnablePeerAccess(e, 0);
        if (err != cudaSuccess && err != cudaErrorPeerAccessAlreadyEnabled) CHECK(err);
        (void)cudaGetLastError();
      }
    CHECK(cudaMalloc(&buf[d], rows * ld * 4));
    CHECK(cudaMemset(buf[d], d, rows * ld * 4));
    CHECK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
  }
  std::vector<cudaStream_t> extra(count);  // cuda:0's streams, one per destination
  CHECK(cudaSetDevice(0));
  for (int d = 0; d < count; ++d) CHECK(cudaStreamCreateWithFlags(&extra[d], cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const double mb = double(rows) * n * 4 / 1e6;
  std::printf("%d GPUs, rows %ld x n %ld int32 (%.1f MB a destination), pitch %ld\n", count, rows,
              n, mb, ld);
  auto timed = [&](const char* what, int dests, auto&& body) {
    for (int rep = 0; rep < 2; ++rep) body();  // warm
    for (int d = 0; d < count; ++d) {
      CHECK(cudaSetDevice(d));
      CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaSetDevice(0));
    const int reps = 10;
    CHECK(cudaEventRecord(a, st[0]));
    for (int rep = 0; rep < reps; ++rep) {
      body();
    }
    // join every stream that body used into st[0]
    for (int d = 0; d < count; ++d) {
      cudaEvent_t j;
      CHECK(cudaSetDevice(d));
      CHECK(cudaEventCreateWithFlags(&j, cudaEventDisableTiming));
      CHECK(cudaEventRecord(j, st[d]));
      CHECK(cudaSetDevice(0));
      CHECK(cudaStreamWaitEvent(st[0], j, 0));
      CHECK(cudaEventDestroy(j));
      cudaEvent_t k;
      CHECK(cudaEventCreateWithFlags(&k, cudaEventDisableTiming));
      CHECK(cudaEventRecord(k, extra[d]));
      CHECK(cudaStreamWaitEvent(st[0], k, 0));
      CHECK(cudaEventDestroy(k));
    }
    CHECK(cudaEventRecord(b, st[0]));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    const double per = ms / reps;
    std::printf("%-58s %8.3f ms  %7.1f GB/s a destination, %7.1f GB/s out of cuda:0\n", what, per,
                mb / per, mb * dests / per);
  };
  // The streams that bodies use must start after `a` (recorded on st[0]); forks below.
  auto fork = [&](cudaStream_t s) {  // s (on the current device) after st[0]'s work so far
    int cur = 0;
    CHECK(cudaGetDevice(&cur));
    CHECK(cudaSetDevice(0));
    cudaEvent_t f;
    CHECK(cudaEventCreateWithFlags(&f, cudaEventDisableTiming));
    CHECK(cudaEventRecord(f, st[0]));
    CHECK(cudaSetDevice(cur));
    CHECK(cudaStreamWaitEvent(s, f, 0));
    CHECK(cudaEventDestroy(f));
  };
  timed("1-D peer copy to cuda:1 (contiguous, rows x ld)", 1, [&] {
    CHECK(cudaMemcpyPeerAsync(buf[1], 1, buf[0], 0, rows * ld * 4, st[0]));
  });
  timed("2-D peer copy to cuda:1 (engine's copy_rows_peer)", 1,
        [&] { copy2d(buf[1], 1, buf[0], 0, ld, rows, n, st[0]); });
  timed("2-D peer copies to every other GPU, one stream (engine)", count - 1, [&] {
    for (int d = 1; d < count; ++d) copy2d(buf[d], d, buf[0], 0, ld, rows, n, st[0]);
  });
  timed("2-D peer copies to every other GPU, a stream each (push)", count - 1, [&] {
    for (int d = 1; d < count; ++d) {
      fork(extra[d]);
      copy2d(buf[d], d, buf[0], 0, ld, rows, n, extra[d]);
    }
  });
  timed("2-D peer copies, each GPU pulls on its own stream", count - 1, [&] {
    for (int d = 1; d < count; ++d) {
      CHECK(cudaSetDevice(d));
      fork(st[d]);
      copy2d(buf[d], d, buf[0], 0, ld, rows, n, st[d]);
    }
    CHECK(cudaSetDevice(0));
  });
  for (int blocks : {132, 264, 528}) {
    char what[96];
    std::snprintf(what, sizeof what, "kernel stores to every other GPU (%d blocks x 512)", blocks);
    timed(what, count - 1, [&] {
      store_to_peers<<<blocks, 512, 0, st[0]>>>(
          reinterpret_cast<int4*>(buf[1]), count > 2 ? reinterpret_cast<int4*>(buf[2]) : nullptr,
          count > 3 ? reinterpret_cast<int4*>(buf[3]) : nullptr,
          reinterpret_cast<const int4*>(buf[0]), ld / 4, rows, n / 4);
      CHECK(cudaGetLastError());
    });
    std::snprintf(what, sizeof what, "kernel stores to cuda:1 only (%d blocks x 512)", blocks);
    timed(what, 1, [&] {
      store_to_peers<<<blocks, 512, 0, st[0]>>>(reinterpret_cast<int4*>(buf[1]), nullptr, nullptr,
                                                reinterpret_cast<const int4*>(buf[0]), ld / 4,
                                                rows, n / 4);
      CHECK(cudaGetLastError());
    });
  }
  return 0;
}
