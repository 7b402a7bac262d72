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
// to i (O(n) a row), and gives each one, in turn, the predecessor p among vertices whose chains do:
// a direct shortest edge p -> j (pred[p][j] == p) with dist[i][p] + dist[p][j] within the rounding
// of a path sum of dist[i][j] (the closest such p). Vertices then lead to i on a path whose length
// is dist[i][j] within rounding. Returns the number of rows mended; integer dtypes return 0.
int64_t repair_predecessor_loops(const Matrix& dist, const PredMatrix& pred);

}  // namespace apsp
