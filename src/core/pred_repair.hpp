// Predecessor chains that loop after a float solve whose path sums round, found and mended on the
// host (both engines' host results).
//
// The blocked rounds add a path's weights in different orders in different tiles, so one path's
// length can come out one unit in the last place apart in two tiles. Through a cycle of edges too
// light to change a rounded sum (zero weights), a distance can then improve by that one unit and
// take a predecessor whose own chain passes back through it: pred[i][a] = b and pred[i][b] = a,
// and apsp.path (or any walk of the chain) never reaches i. Integer graphs, and floats whose sums
// are exact, never do this.
#pragma once

#include <cstdint>

#include "apsp/apsp.hpp"

namespace apsp {

// For each row i of a float result, finds the vertices whose predecessor chain does not lead back
// to i (one pass a row unless a vertex's predecessor is not strictly closer than it) and gives
// each, in turn, its own predecessor once that one leads back, else the closest p that leads
// back with a direct shortest edge p -> j (pred[p][j] == p) and dist[i][p] + dist[p][j] within
// the rounding of dist[i][j]: every mended chain is a path of length dist within rounding. A
// vertex with no such p keeps its loop (seen with negative weights around a zero-weight cycle,
// where the right predecessor is often i itself, whose edge the loop overwrote), so apsp.path
// reports the inconsistency instead of a made-up path; so does one past the searches' budget
// (16 O(n) searches a vertex for the whole matrix). Returns the number of rows left without
// loops among those that had some; integer dtypes return 0 (their sums are exact).
int64_t repair_predecessor_loops(const Matrix& dist, const PredMatrix& pred);

}  // namespace apsp
