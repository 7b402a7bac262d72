// Predecessor chains that loop after a float solve, found and mended (see pred_repair.hpp).
#include "core/pred_repair.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace apsp {
namespace {

enum : uint8_t { kUnknown = 0, kWalking = 1, kReaches = 2, kLost = 3 };

// Below this many vertices the rows are checked on the calling thread (as the CPU engine's small
// solves: a parallel region costs more than the O(n^2) pass).
constexpr int64_t kParallelMinN = 256;

struct RowScratch {
  std::vector<uint8_t> state;  // per vertex of the row: kUnknown .. kLost
  std::vector<int32_t> walk;   // the chain being followed
  std::vector<int32_t> lost;   // vertices whose chain does not reach the row's source
  std::vector<int32_t> suspects;
};

// The state of vertex v in row i, following its chain (and marking every vertex on the way) where
// it is not known yet; lost vertices go to s.lost.
uint8_t resolve(int64_t v, const int32_t* pi, int64_t n, RowScratch& s) {
  if (s.state[v] != kUnknown) return s.state[v];
  s.walk.clear();
  uint8_t outcome;
  for (;;) {
    s.state[v] = kWalking;
    s.walk.push_back(static_cast<int32_t>(v));
    const int64_t u = pi[v];
    if (u < 0 || u >= n) { outcome = kLost; break; }  // a chain that stops short of i
    if (s.state[u] == kReaches) { outcome = kReaches; break; }
    if (s.state[u] != kUnknown) { outcome = kLost; break; }  // back on this walk, or a lost one
    v = u;
  }
  for (int32_t w : s.walk) s.state[w] = outcome;
  if (outcome == kLost) s.lost.insert(s.lost.end(), s.walk.begin(), s.walk.end());
  return outcome;
}

// Whether row i has chains that do not lead back to i; if so, s holds the states found so far
// (the chains of every suspect followed) and s.lost the lost vertices. Around a loop of
// predecessors the steps d[i][j] - d[i][pred j] add up to 0, so every loop holds a suspect: a
// vertex whose predecessor is not strictly closer. Graphs with positive weights have none, and
// their rows cost one pass.
template <class T>
bool find_lost(int64_t i, const T* di, const int32_t* pi, int64_t n, RowScratch& s) {
  s.suspects.clear();
  for (int64_t j = 0; j < n; ++j) {
    const int32_t p = pi[j];
    if (p >= 0 && p < n && j != i && !(di[p] < di[j]))
      s.suspects.push_back(static_cast<int32_t>(j));
  }
  if (s.suspects.empty()) return false;
  s.state.assign(static_cast<size_t>(n), kUnknown);
  s.state[i] = kReaches;
  s.lost.clear();
  for (int32_t j : s.suspects) resolve(j, pi, n, s);
  return !s.lost.empty();
}

// Gives each lost vertex of row i a predecessor that leads back to i: its own, once that one
// does; else the closest p that leads back with a direct shortest edge p -> j (pred[p][j] == p)
// and d[i][p] + d[p][j] within the rounding of d[i][j]. A vertex with no such p keeps its
// predecessor (apsp.path then reports the inconsistency): no path is made up. Each O(n) search
// is paid from `budget`. Returns whether every lost vertex was mended.
template <class T>
bool mend_row(int64_t i, const T* d, int64_t ldd, int32_t* pred, int64_t ldp, int64_t n,
              RowScratch& s, int64_t& budget) {
  const T* di = d + i * ldd;
  int32_t* pi = pred + i * ldp;
  T scale = 0;  // within_rounding's
  for (int64_t j = 0; j < n; ++j)
    if (std::isfinite(di[j])) scale = std::max(scale, std::fabs(di[j]));
  // resolve() may add vertices behind a loop to s.lost while this runs: they lead back once the
  // loop is mended (s.lost may move when it grows: read by index).
  auto own_holds = [&](int64_t j) {
    return pi[j] >= 0 && pi[j] < n && resolve(pi[j], pi, n, s) == kReaches;
  };
  auto mark = [&](size_t k, int64_t p) {
    const int64_t j = s.lost[k];
    pi[j] = static_cast<int32_t>(p);
    s.state[j] = kReaches;
    s.lost[k] = -1;
  };
  for (bool progress = true; progress;) {
    progress = false;
    // First what costs nothing: vertices whose own predecessor leads back now (the chain behind
    // a mended loop), to a fixpoint, so that no search is spent on them.
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t k = 0; k < s.lost.size(); ++k)
        if (s.lost[k] >= 0 && own_holds(s.lost[k])) {
          mark(k, pi[s.lost[k]]);
          moved = progress = true;
        }
    }
    for (size_t k = 0; k < s.lost.size() && budget > 0; ++k) {
      const int64_t j = s.lost[k];
      if (j < 0) continue;
      --budget;
      int64_t best = -1;
      T best_len = std::numeric_limits<T>::infinity();
      for (int64_t p = 0; p < n; ++p) {
        if (p == j || pred[p * ldp + j] != p) continue;
        const T dp = d[p * ldd + j];
        const T len = di[p] + dp;
        if (!std::isfinite(len) || !within_rounding(len, di[j], dp, scale, n) || !(len < best_len))
          continue;
        if (resolve(p, pi, n, s) != kReaches) continue;
        best = p;
        best_len = len;
      }
      if (best >= 0) {
        mark(k, best);
        progress = true;
      }
    }
  }
  return std::all_of(s.lost.begin(), s.lost.end(), [](int32_t j) { return j < 0; });
}

template <class T>
int64_t repair(const Matrix& dist, const PredMatrix& pred) {
  const int64_t n = dist.n;
  const T* d = static_cast<const T*>(dist.data);
  // Found in parallel (each row reads only itself), mended in row order on one thread, so that
  // the one budget is spent in a fixed order. (The entries a mend reads in other rows, pred[p][j]
  // == p, are never mended, so rows could be mended in parallel, as on the device.)
  std::vector<uint8_t> looping(static_cast<size_t>(n), 0);
#pragma omp parallel if (n >= kParallelMinN)
  {
    RowScratch s;
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < n; ++i) {
      const bool lost = find_lost(i, d + i * dist.ld, pred.data + i * pred.ld, n, s);
      looping[static_cast<size_t>(i)] = lost;
    }
  }
  RowScratch s;
  int64_t mended = 0, budget = kMendSearchesPerVertex * n;
  for (int64_t i = 0; i < n; ++i) {
    if (!looping[static_cast<size_t>(i)]) continue;
    find_lost(i, d + i * dist.ld, pred.data + i * pred.ld, n, s);
    mended += mend_row(i, d, dist.ld, pred.data, pred.ld, n, s, budget);
  }
  return mended;
}

}  // namespace

bool pred_repair_enabled() {
  const char* off = std::getenv("APSP_PRED_REPAIR");
  return off == nullptr || std::strcmp(off, "0") != 0;
}

int64_t repair_predecessor_loops(const Matrix& dist, const PredMatrix& pred) {
  if (pred.data == nullptr || dist.n == 0 || !pred_repair_enabled()) return 0;
  switch (dist.dtype) {
    case DType::float32: return repair<float>(dist, pred);
    case DType::float64: return repair<double>(dist, pred);
    default: return 0;  // integer sums are exact: their chains never loop
  }
}

}  // namespace apsp
