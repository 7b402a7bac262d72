// The CUDA entry points of a build without the CUDA engine: they report why it is absent.
// Compiled into every build; empty when the CUDA engine (src/cuda) is compiled in.
#include "apsp/apsp.hpp"
#include "core/pred_repair.hpp"

#if !APSP_WITH_CUDA
namespace apsp {

CudaBuildInfo cuda_build_info() { return {false, APSP_CUDA_WHY}; }

std::vector<CudaDevice> cuda_devices(std::string* why_none) {
  if (why_none) *why_none = std::string("this build has no CUDA engine: ") + APSP_CUDA_WHY;
  return {};
}

static void absent() {
  throw CudaError(std::string("this build of apsp has no CUDA engine: ") + APSP_CUDA_WHY);
}
void solve_cuda(Matrix, PredMatrix, const Options&, int, void*, const std::vector<int>&) {
  absent();
}
void solve_cuda_host(Matrix, Matrix, PredMatrix, const Options&, int, const std::vector<int>&) {
  absent();
}
void solve_cuda_sparse_host(const CooGraph&, Matrix, PredMatrix, const Options&, int,
                            const std::vector<int>&) {
  absent();
}
void repair_predecessor_loops_cuda(const Matrix&, const PredMatrix&, int, void*) { absent(); }
void solve_cuda_batch(const Batch&, const Options&, int, void*) { absent(); }
void solve_cuda_batch_host(const Batch&, const Batch&, const Options&, int) { absent(); }

}  // namespace apsp
#endif
