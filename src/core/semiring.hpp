// The min-plus step with each dtype's "no edge" rule: the one piece of arithmetic every kernel
// (CPU and CUDA) uses. Tile loops call relax(); they never re-implement it.
#pragma once

#include <cstdint>
#include <limits>

#include "apsp/apsp.hpp"

#if defined(__CUDACC__)
#define APSP_HD __host__ __device__ __forceinline__
#else
#define APSP_HD inline
#endif

namespace apsp {

template <class T>
struct Semiring;

// Floats: +inf is "no edge"; inf + x stays inf, so no saturation is needed.
template <>
struct Semiring<float> {
  static constexpr DType dtype = DType::float32;
  static APSP_HD float inf() { return std::numeric_limits<float>::infinity(); }
  static APSP_HD float relax(float c, float a, float b) {
#if defined(__CUDA_ARCH__)
    return fminf(c, a + b);  // FADD + FMNMX; a ternary compiles to FSETP + FSEL (slower)
#else
    const float s = a + b;
    return s < c ? s : c;  // vminps
#endif
  }
  // Two steps at once where every value is +0 .. +inf (the CUDA engine's input scan found every
  // weight positive): such floats order as their bits do, so one VIMNMX3 (sm_90) takes the
  // minimum of c and both sums. Three instructions for two steps (two FADD, one VIMNMX3) instead
  // of four (engine.cu: min3).
  static APSP_HD float relax2_nonnegative(float c, float a0, float b0, float a1, float b1) {
#if defined(__CUDA_ARCH__)
    return __int_as_float(
        __vimin3_s32(__float_as_int(c), __float_as_int(a0 + b0), __float_as_int(a1 + b1)));
#else
    return relax(relax(c, a0, b0), a1, b1);
#endif
  }
};

template <>
struct Semiring<double> {
  static constexpr DType dtype = DType::float64;
  static APSP_HD double inf() { return std::numeric_limits<double>::infinity(); }
  // One form on both sides: DADD, DSETP and two selects on the GPU. fmin would add register moves
  // and its NaN quieting, about seven instructions a step (GPU_NOTES.md, thirty-seventh session);
  // it differs only where c is NaN or the zeros' signs differ, and c is never NaN.
  static APSP_HD double relax(double c, double a, double b) {
    const double s = a + b;
    return s < c ? s : c;
  }
};

// Integers: INF = 2^30-1 (2^62-1) and every stored value stays <= INF, so a + b <= 2 INF never
// overflows; values above INF/2 after the solve are unreachable and snap back to INF (the
// overflow guard keeps every real path length below INF/2).
template <>
struct Semiring<int32_t> {
  static constexpr DType dtype = DType::int32;
  static APSP_HD int32_t inf() { return kInt32Inf; }
  static APSP_HD int32_t relax(int32_t c, int32_t a, int32_t b) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
    return __viaddmin_s32(a, b, c);  // one VIADDMNMX on sm_90
#else
    const int32_t s = a + b;
    return s < c ? s : c;
#endif
  }
};

template <>
struct Semiring<int64_t> {
  static constexpr DType dtype = DType::int64;
  static APSP_HD int64_t inf() { return kInt64Inf; }
  static APSP_HD int64_t relax(int64_t c, int64_t a, int64_t b) {
    const int64_t s = a + b;
    return s < c ? s : c;
  }
};

// Two path lengths of 16 bits in one 32-bit word (the CUDA engine's narrow plan: non-negative
// integer weights whose every path is shorter than `inf`): c = min(c, a + b) on each half, one
// VIADDMNMX.U16x2 on sm_90 for two updates. Every value stays <= inf = 2^15 - 1, so a + b never
// wraps; `a` holds one length in both halves (the pivot column's value, for both columns of b).
struct NarrowPair {
  static constexpr uint32_t inf = 0x7FFF;
  static constexpr uint32_t inf_pair = inf | (inf << 16);
  static APSP_HD uint32_t relax(uint32_t c, uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __viaddmin_u16x2(a, b, c);
#else
    auto half = [](uint32_t c16, uint32_t s16) { return s16 < c16 ? s16 : c16; };
    return half(c & 0xFFFF, ((a & 0xFFFF) + (b & 0xFFFF)) & 0xFFFF) |
           (half(c >> 16, ((a >> 16) + (b >> 16)) & 0xFFFF) << 16);
#endif
  }
};

// One 16-bit path length (the CPU engine's narrow solve; NarrowPair's halves): the same rule, one
// length a lane (AVX-512: 32 lanes a vector, twice int32's).
template <>
struct Semiring<uint16_t> {
  static APSP_HD constexpr uint16_t inf() { return uint16_t(NarrowPair::inf); }
  static APSP_HD uint16_t relax(uint16_t c, uint16_t a, uint16_t b) {
    const uint16_t s = uint16_t(a + b);
    return s < c ? s : c;
  }
};

// With predecessors: lexicographic (length, hops). Plain "strict improvement" lets a blocked
// order pick among equal-length paths inconsistently, and with zero-weight cycles the
// predecessor chains then loop; comparing hop counts on ties makes every cycle strictly
// positive, so each row's predecessor graph is a tree. Hops are unsigned: they only wrap inside
// a negative-cycle run, whose result is discarded.
template <class T>
APSP_HD void relax_pred(T& c, int32_t& pc, uint32_t& hc, T a, T b, int32_t pb, uint32_t ha,
                        uint32_t hb) {
  const T s = a + b;
  const uint32_t h = ha + hb;
  if (s < c || (s == c && h < hc)) {
    c = s;
    pc = pb;
    hc = h;
  }
}

}  // namespace apsp
