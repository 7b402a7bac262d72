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
// values never exceed Tags::inf, and 2 * Tags::inf + a tag < 2^31 (2^63). int32 (and float32
// integer weights on it) with positive weights take it from engine.cu's kArgminMaxN only: below,
// the argmin plan is faster; int64 never does (the argmin plan is faster at every n measured).
//
// Integer weights with a zero or a negative one (no cycle below zero) run it on hop-scaled keys
// (engine.cu: Job::hop_scale; kernels.cuh: pack_kernel): an edge's key is w * n + 1, so a path's
// key is its length times n plus its hop count. A shortest path with the fewest hops has at most
// n - 1, so the smallest key is the pred32 plan's (length, hops) minimum, and every cycle's key is
// above zero (a zero-weight cycle's is its hop count): chains of tight keys cannot loop, which is
// all the tags need. Keys of paths lie within +-(n - 1) * (max|w| * n + 1); kept within a quarter
// of max_length, a pair without a path ("no edge" plus at most two such paths below zero) stays
// above half of Tags::inf, where unpack_kernel tells it apart, and a float's lengths are exact.
// With a negative cycle the keys drift down as the plain solve's values do; unpack_kernel flags
// the diagonal and resolve_kernel then leaves no predecessor to walk.
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

// Hop-scaled keys (above): the largest max|w| whose keys fit at this n (> 1); -1 where none does.
template <class T>
int64_t hop_scaled_max_weight(int64_t n) {
  if (n < 2) return -1;
  const int64_t edge_key = Tags<T>::max_length / 4 / (n - 1);  // the largest edge key
  return edge_key >= 1 ? (edge_key - 1) / n : -1;
}

}  // namespace apsp::cuda_detail
