// Shared contract checks and error messages for both engines (see contract.hpp).
#include "core/contract.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>

namespace apsp {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
  }
  return "unknown";
}

int dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float32: case DType::int32: return 4;
    case DType::float64: case DType::int64: return 8;
  }
  return 0;
}

void check_views(const Matrix& dist, const PredMatrix& pred) {
  std::ostringstream msg;
  if (dist.n < 0) {
    msg << "n must be >= 0, got " << dist.n;
  } else if (dist.ld < dist.n) {
    msg << "leading dimension must be >= n, got ld=" << dist.ld << " for n=" << dist.n;
  } else if (dist.n > 0 && dist.data == nullptr) {
    msg << "null data pointer for an n=" << dist.n << " matrix";
  } else if (pred.data != nullptr && pred.ld < dist.n) {
    msg << "predecessor leading dimension must be >= n, got ld=" << pred.ld << " for n=" << dist.n;
  } else if (dist.n > INT32_MAX - 1 && pred.data != nullptr) {
    msg << "n=" << dist.n << " is too large for int32 predecessors";
  } else {
    return;
  }
  throw ValueError(msg.str());
}

static std::string index_text(int64_t flat, int64_t n) {
  std::ostringstream s;
  s << "graph[" << flat / n << ", " << flat % n << "]";
  return s.str();
}

bool narrow_weights_fit_with_hub(const InputStats& stats) {
  if (stats.negative || stats.fractional || stats.first_nan >= 0 || stats.first_neg_inf >= 0)
    return false;
  return std::max(double(stats.max_abs_int), stats.max_abs_float) <= double(kNarrowMaxLength);
}

bool narrow_weights_fit(const InputStats& stats, int64_t n) {
  const double most = std::max(double(stats.max_abs_int), stats.max_abs_float);
  return narrow_weights_fit_with_hub(stats) &&
         (n < 2 || most * double(n - 1) <= double(kNarrowMaxLength));
}

void check_input_stats(const Matrix& dist, const InputStats& stats) {
  const int64_t n = dist.n;
  if (stats.first_nan >= 0) {
    throw ValueError(index_text(stats.first_nan, n) +
                     " is NaN; use +inf (or no entry) for a missing edge");
  }
  if (stats.first_neg_inf >= 0) {
    throw ValueError(index_text(stats.first_neg_inf, n) +
                     " is -inf; weights must be finite, or +inf for a missing edge");
  }
  if (dist.dtype == DType::int32 || dist.dtype == DType::int64) {
    const bool is32 = dist.dtype == DType::int32;
    const uint64_t limit = is32 ? uint64_t(kInt32Inf / 2) : uint64_t(kInt64Inf / 2);
    const uint64_t hops = n > 1 ? uint64_t(n - 1) : 0;
    // (n-1) * max|w| < limit, written without overflowing uint64.
    if (hops != 0 && stats.max_abs_int != 0 && stats.max_abs_int >= (limit + hops - 1) / hops) {
      std::ostringstream msg;
      msg << dtype_name(dist.dtype) << " path lengths could reach (n-1) * max|w| = " << hops
          << " * " << stats.max_abs_int << ", beyond the safe bound " << limit << " ("
          << (is32 ? "apsp.INT32_INF" : "apsp.INT64_INF") << " // 2); "
          << (is32 ? "pass an int64 (or float64) array instead" : "pass a float64 array instead");
      throw OverflowError(msg.str());
    }
  } else if (n > 1) {
    // Float sums past the largest finite value round to +-inf: a reachable pair would read as
    // unreachable, and a negative -inf as a negative cycle. A path length is a sum of at most
    // n - 1 weights in some order, each addition rounding up by a factor of at most (1 + u), u
    // the unit roundoff: so every sum stays finite while (n-1) * max|w| * (1 + u)^(n-2) does.
    // (1 + u)^k <= 1 + 2ku while ku <= 1; 1 + 4nu also covers this bound's own roundings.
    const bool is32 = dist.dtype == DType::float32;
    const double largest = is32 ? double(std::numeric_limits<float>::max())
                                : std::numeric_limits<double>::max();
    const double u = is32 ? 0.5 * double(std::numeric_limits<float>::epsilon())
                          : 0.5 * std::numeric_limits<double>::epsilon();
    const double rounding = 1.0 + 4.0 * double(n) * u;  // 1 + 0.024 at float32 n = 1e5
    if (stats.max_abs_float > largest / double(n - 1) / rounding) {
      std::ostringstream msg;
      msg << dtype_name(dist.dtype) << " path lengths could reach (n-1) * max|w| = " << n - 1
          << " * " << stats.max_abs_float << ", within rounding of or beyond "
          << dtype_name(dist.dtype) << "'s largest finite value " << largest
          << ", where sums could overflow to inf; "
          << "use +inf, not a large finite value, for a missing edge"
          << (is32 ? ", or pass a float64 array" : ", or scale the weights down");
      throw OverflowError(msg.str());
    }
  }
}

void check_batch(const Batch& batch) {
  std::ostringstream msg;
  const Matrix& m = batch.first;
  if (batch.count < 0) {
    msg << "a batch needs count >= 0, got " << batch.count;
  } else if (m.n < 0 || m.ld < m.n) {
    msg << "a batch's graphs need n >= 0 and ld >= n, got n=" << m.n << ", ld=" << m.ld;
  } else if (batch.count > 1 && batch.stride < m.n * m.ld) {
    msg << "a batch's graphs overlap: stride " << batch.stride << " elements between graphs of "
        << m.n << " rows of " << m.ld;
  } else if (batch.count > 0 && m.n > 0 && m.data == nullptr) {
    msg << "null data pointer for a batch of " << batch.count << " graphs";
  } else {
    return;
  }
  throw ValueError(msg.str());
}

void rethrow_for_graph(std::exception_ptr error, int64_t b) {
  const std::string lead = "graph " + std::to_string(b) + " of the batch: ";
  try {
    std::rethrow_exception(error);
  } catch (const NegativeCycleError& e) {
    throw NegativeCycleError(lead + e.what(), e.vertices, b);
  } catch (const ValueError& e) {
    throw ValueError(lead + e.what());
  } catch (const OverflowError& e) {
    throw OverflowError(lead + e.what());
  } catch (const MemoryError& e) {
    throw MemoryError(lead + e.what());
  } catch (const CudaError& e) {
    throw CudaError(lead + e.what());
  } catch (const Error& e) {
    throw Error(lead + e.what());
  }
  std::rethrow_exception(error);  // not reached: other types propagate from the try as they are
}

void check_negative_cycles(const std::vector<int64_t>& vertices, int64_t /*n*/) {
  if (vertices.empty()) return;
  std::ostringstream msg;
  // The engines name the vertices whose computed closed walk came out negative: every vertex of
  // a negative simple cycle, and perhaps more, but not always every vertex that has a negative
  // closed walk. So the message says "found", not how many there are.
  msg << "the graph has a negative cycle: vertices found on negative closed walks: ";
  const size_t shown = vertices.size() < 10 ? vertices.size() : 10;
  for (size_t i = 0; i < shown; ++i) msg << (i ? ", " : "") << vertices[i];
  if (shown < vertices.size()) msg << ", ... (" << vertices.size() << " found)";
  throw NegativeCycleError(msg.str(), vertices);
}

}  // namespace apsp
