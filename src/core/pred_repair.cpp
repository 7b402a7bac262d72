// Predecessor chains that loop after a float solve, found and mended (see pred_repair.hpp).
#include "core/pred_repair.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace apsp {
namespace {

enum : uint8_t { kUnknown = 0, kWalking = 1, kReaches = 2, kLost = 3 };

// Rows below this many vertices are mended on the calling thread (as the CPU engine's small
// solves: a parallel region costs more than the O(n^2) walk).
constexpr int64_t kParallelMinN = 256;

struct RowScratch {
  std::vector<uint8_t> state;  // per vertex of the row: kUnknown .. kLost
  std::vector<int32_t> walk;   // the chain being followed
  std::vector<int32_t> lost;   // vertices whose chain does not reach the row's source
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
  s.walk.clear();  // the suspects, first
  for (int64_t j = 0; j < n; ++j) {
    const int32_t p = pi[j];
    if (p >= 0 && p < n && j != i && !(di[p] < di[j])) s.walk.push_back(static_cast<int32_t>(j));
  }
  if (s.walk.empty()) return false;
  std::vector<int32_t> suspects;
  suspects.swap(s.walk);
  s.state.assign(static_cast<size_t>(n), kUnknown);
  s.state[i] = kReaches;
  s.lost.clear();
  for (int32_t j : suspects) resolve(j, pi, n, s);
  return !s.lost.empty();
}

// Gives each lost vertex of row i a predecessor that reaches i: its own, once that one does; else
// the closest p that reaches i with a direct shortest edge p -> j and, while `within` holds, a
// length within the rounding of a path sum. Returns whether every lost vertex was mended.
template <class T>
bool mend_row(int64_t i, const T* d, int64_t ldd, int32_t* pred, int64_t ldp, int64_t n,
              RowScratch& s, bool within) {
  const T* di = d + i * ldd;
  int32_t* pi = pred + i * ldp;
  const T eps = std::numeric_limits<T>::epsilon();
  // resolve() may add vertices behind a loop to s.lost while this runs: they lead back once the
  // loop is mended, and are marked so here (s.lost may move when it grows: read by index).
  for (bool progress = true; progress;) {
    progress = false;
    bool done = true;
    for (size_t k = 0; k < s.lost.size(); ++k) {
      const int64_t j = s.lost[k];
      if (j < 0) continue;
      int64_t best = -1;
      if (pi[j] >= 0 && pi[j] < n && resolve(pi[j], pi, n, s) == kReaches) {
        best = pi[j];  // behind a loop that is mended now: its own predecessor holds
      } else {
        T best_len = std::numeric_limits<T>::infinity();
        for (int64_t p = 0; p < n; ++p) {
          if (p == j || pred[p * ldp + j] != p || resolve(p, pi, n, s) != kReaches) continue;
          const T dp = d[p * ldd + j];
          const T len = di[p] + dp;
          if (!std::isfinite(len)) continue;
          // A path of at most n edges summed in any order: within (n + 1) eps of its magnitude.
          const T tol = T(n + 1) * eps * (std::fabs(di[p]) + std::fabs(dp));
          if (within && !(len <= di[j] + tol)) continue;
          if (best < 0 || len < best_len) {
            best = p;
            best_len = len;
          }
        }
      }
      if (best >= 0) {
        pi[j] = static_cast<int32_t>(best);
        s.state[j] = kReaches;
        s.lost[k] = -1;
        progress = true;
      } else {
        done = false;
      }
    }
    if (done) return true;
  }
  return false;
}

template <class T>
int64_t repair(const Matrix& dist, const PredMatrix& pred) {
  const int64_t n = dist.n;
  const T* d = static_cast<const T*>(dist.data);
  // Found in parallel (each row reads only itself), mended in row order on one thread: a mend
  // reads other rows' predecessors, which an earlier mend may have changed, so the order is fixed.
  std::vector<uint8_t> looping(static_cast<size_t>(n), 0);
#pragma omp parallel if (n >= kParallelMinN)
  {
    RowScratch s;
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < n; ++i)
      looping[static_cast<size_t>(i)] = find_lost(i, d + i * dist.ld, pred.data + i * pred.ld, n, s);
  }
  RowScratch s;
  int64_t mended = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!looping[static_cast<size_t>(i)]) continue;
    find_lost(i, d + i * dist.ld, pred.data + i * pred.ld, n, s);
    if (!mend_row(i, d, dist.ld, pred.data, pred.ld, n, s, true))
      mend_row(i, d, dist.ld, pred.data, pred.ld, n, s, false);
    ++mended;
  }
  return mended;
}

}  // namespace

int64_t repair_predecessor_loops(const Matrix& dist, const PredMatrix& pred) {
  if (pred.data == nullptr || dist.n == 0) return 0;
  const char* off = std::getenv("APSP_PRED_REPAIR");  // "0": skipped, to measure what it costs
  if (off != nullptr && std::strcmp(off, "0") == 0) return 0;
  switch (dist.dtype) {
    case DType::float32: return repair<float>(dist, pred);
    case DType::float64: return repair<double>(dist, pred);
    default: return 0;  // integer sums are exact: their chains never loop
  }
}

}  // namespace apsp
