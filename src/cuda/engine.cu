// PLACEHOLDER until the GPU engine lands (issue 3): the CUDA solve entry points.
#include "apsp/apsp.hpp"

namespace apsp {
void solve_cuda(Matrix, PredMatrix, const Options&, int, void*) {
  throw CudaError("the CUDA engine is not implemented yet");
}
void solve_cuda_host(Matrix, PredMatrix, const Options&, int) {
  throw CudaError("the CUDA engine is not implemented yet");
}
}  // namespace apsp
