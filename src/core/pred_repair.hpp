// Predecessor chains that loop after a float solve whose path sums round, found and mended: on the
// host for the CPU engine's results (pred_repair.cpp), on the device for the CUDA engine's
// (src/cuda/pred_repair.cu), by the rules below, which both share.
//
// The blocked rounds add a path's weights in different orders in different tiles, so one path's
// length can come out one unit in the last place apart in two tiles. Through a cycle of edges too
// light to change a rounded sum (zero weights), a distance can then improve by that one unit and
// take a predecessor whose own chain passes back through it: pred[i][a] = b and pred[i][b] = a,
// and apsp.path (or any walk of the chain) never reaches i. Integer graphs, and floats whose sums
// are exact, never do this.
#pragma once

#include <cstdint>
#include <limits>

#include "apsp/apsp.hpp"
#include "core/semiring.hpp"  // APSP_HD

namespace apsp {

// For each row i of a float result, finds the vertices whose predecessor chain does not lead back
// to i (one pass a row unless a vertex's predecessor is not strictly closer than it) and gives
// each its own predecessor once that one leads back, else the closest p that leads back with a
// direct shortest edge p -> j (pred[p][j] == p) and dist[i][p] + dist[p][j] within the rounding
// of dist[i][j] (within_rounding): every mended chain is a path of length dist within rounding.
// A vertex with no such p keeps its loop (seen with negative weights around a zero-weight cycle,
// where the right predecessor is often i itself, whose edge the loop overwrote), so apsp.path
// reports the inconsistency instead of a made-up path; so does one past the searches' budget
// (kMendSearchesPerVertex O(n) searches a vertex for the whole matrix; on the device also a cap a
// row, pred_repair.cu: kMendRowBudget). Returns the number of rows left without loops among
// those that had some; integer dtypes return 0 (their sums are exact).
int64_t repair_predecessor_loops(const Matrix& dist, const PredMatrix& pred);

// The same on device memory of `device`, enqueued on `stream` (a cudaStream_t; nullptr = the
// legacy default stream), without a host wait. The CUDA engine runs it after every float solve
// with predecessors whose sums round (unless it found a negative cycle); the tests call it on
// crafted loops. The rows are mended in parallel: where the searches run out, which rows got
// them can differ from the host's order.
void repair_predecessor_loops_cuda(const Matrix& dist, const PredMatrix& pred, int device,
                                   void* stream);

// The searches (O(n) each) that all rows' mends may spend together, so that a mend stays within a
// few passes over the matrix whatever the graph.
constexpr int64_t kMendSearchesPerVertex = 16;

// False where APSP_PRED_REPAIR=0 (both engines skip the mend: to measure what it costs, and to
// show that the tests' graphs loop without it).
bool pred_repair_enabled();

// Whether len = dist[i][p] + dist[p][j] is dist[i][j] = dij within rounding: a path's sum in any
// order is within (n + 1) eps of the sum of its terms' magnitudes; with negative weights its
// partial sums reach past its length, up to the row's largest finite |distance| `scale`.
template <class T>
APSP_HD bool within_rounding(T len, T dij, T dp, T scale, int64_t n) {
  const T tol = T(n + 1) * std::numeric_limits<T>::epsilon() * (scale + (dp < 0 ? -dp : dp));
  return len <= dij + tol;
}

}  // namespace apsp
