// Predecessors at the speed of the plain integer solve ("tagged" plan, engine.cu; its pack, unpack
// and row-tag kernels are in kernels.cuh). Values are stored
// shifted left by Tags::bits; while phase 3 of a super-round runs, the low bits of its B rows
// (pivot rows k0 + kk) hold the tag kk + 1. One VIADDMNMX then computes min(C, A + B) and the
// winning pivot together: the low bits of the result are 0 where C stayed (ties keep C) and the
// tag of the smallest improving k otherwise, which the GEMM epilogue turns into pred[i][j] =
// pred[k][j] (kernels.cuh, minplus_tile<..., Tagged>). Phases 1 and 2 run the general 32-wide
// predecessor kernels on untagged values.
//
// Used only where it is exact and its predecessor chains cannot loop (engine.cu, tagged_fits):
// int32 or int64 (or float32 / float64 whose weights are all integers: the plan of their integer
// twin runs on the same buffer, converted by the pack and unpack), every off-diagonal weight
// >= 1 (positive weights: a chain of tight edges strictly shortens, whatever order the blocked
// algorithm relaxed them in), and (n - 1) * max w at most Tags::max_length (for floats also
// exact in the float type), so every path length survives the shift and no sum overflows: stored
// values never exceed Tags::inf, and 2 * Tags::inf + a tag < 2^31 (2^63).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/contract.hpp"

namespace apsp::cuda_detail {

template <class T>
struct Tags {
  static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>, "integer dtypes only");
  static constexpr T no_edge = std::is_same_v<T, int32_t> ? T(kInt32Inf) : T(kInt64Inf);
  static constexpr int bits = 8;  // tags 1..128: k-depth 128
  static constexpr T mask = (T(1) << bits) - 1;
  static constexpr T inf = (no_edge + 1) - (T(1) << bits);  // "no edge", shifted, tag-free
  static constexpr int64_t max_length = int64_t(inf >> bits) - 1;  // longest exact path
};

}  // namespace apsp::cuda_detail
