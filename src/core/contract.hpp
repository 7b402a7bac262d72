// The parts of the solve contract that both engines share: argument checks, the statistics a
// "prepare" pass gathers, and the errors raised from them (messages carry the offending values).
// Engines gather the statistics their own way (CPU loops, CUDA reductions) and call these.
#pragma once

#include <cstdint>
#include <vector>

#include "apsp/apsp.hpp"

namespace apsp {

// What the prepare pass (edge rules applied in place) learnt about the weights.
struct InputStats {
  int64_t first_nan = -1;      // flat index i*n+j of the first NaN (or -1)
  int64_t first_neg_inf = -1;  // flat index of the first -inf (or -1)
  double max_abs_float = 0;    // max |w| over finite off-diagonal edges (floats)
  uint64_t max_abs_int = 0;    // max |w| over off-diagonal edges below INF (integers)
  bool negative = false;       // a weight below zero (diagonal included)
  bool fractional = false;     // floats: a finite off-diagonal weight that is not a whole number
};

// The narrow solves (both engines: path lengths on 16 bits, two or more a word): every length
// stays at most kNarrowMaxLength, one below the 16-bit "no edge" (0x7FFF), so a sum of two never
// wraps and min(c, a + b) is exact. They take graphs whose weights are whole numbers >= 0, without
// NaN or -inf, and whose every path is short enough: (n - 1) * max w <= kNarrowMaxLength (unit
// weights up to n = 32767, weights up to 3 at n = 10000).
constexpr int64_t kNarrowMaxLength = 0x7FFE;
bool narrow_weights_fit(const InputStats& stats, int64_t n);

// Where only the bound (n - 1) * max w fails (the weights are whole, >= 0, each at most
// kNarrowMaxLength: narrow_weights_fit_with_hub), a hub bound can still show that every finite
// distance fits, and the results are then exact (a 16-bit length is the distance saturated at
// 0x7FFF, which commutes with min-plus on values >= 0). Through one vertex s, d(i, j) <= d(i, s)
// + d(s, j): x[j] >= d(s, j) and y[i] >= d(i, s), lengths of paths found by up to kHubPasses
// Bellman-Ford passes over the matrix (each one reads it once), each at most kHubFar. Every
// finite distance fits when max x + max y <= kNarrowMaxLength (so every vertex reaches s and s
// every vertex). Both engines take s = 0 and stop early when the bound holds, or when a pass
// changed nothing.
bool narrow_weights_fit_with_hub(const InputStats& stats);
constexpr int kHubPasses = 4;
constexpr uint32_t kHubFar = uint32_t(1) << 30;  // no path found (yet), or one too long to matter
// A weight as the hub passes read it (its stats allowed narrow_weights_fit_with_hub): kHubFar
// for "no edge" (an integer INF, +inf), else the weight. constexpr: the CUDA kernels call them
// too (--expt-relaxed-constexpr).
template <class T>
constexpr uint32_t hub_weight(T w) {
  return w < T(kNarrowMaxLength + 1) ? uint32_t(w) : kHubFar;
}
constexpr uint32_t hub_sum(uint32_t a, uint32_t b) { return a + b < kHubFar ? a + b : kHubFar; }

// n >= 0, ld >= n, non-null data when n > 0; throws ValueError naming the values.
void check_views(const Matrix& dist, const PredMatrix& pred);

// Throws ValueError for NaN / -inf and OverflowError when a path length ((n-1) * max|w|) could
// reach INF/2 (integers) or pass the largest finite value (floats), naming what to do instead.
void check_input_stats(const Matrix& dist, const InputStats& stats);

// Throws NegativeCycleError when `vertices` (those with a negative diagonal) is non-empty.
void check_negative_cycles(const std::vector<int64_t>& vertices, int64_t n);

// Integer results above this are unreachable and become INF (see semiring.hpp).
template <class T>
constexpr T unreachable_threshold();
template <>
constexpr int32_t unreachable_threshold<int32_t>() { return kInt32Inf / 2; }
template <>
constexpr int64_t unreachable_threshold<int64_t>() { return kInt64Inf / 2; }

}  // namespace apsp
