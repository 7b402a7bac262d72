"""apsp.floyd_warshall: a drop-in for scipy.sparse.csgraph.floyd_warshall with SciPy's input
semantics (dense zeros, inf and NaN are non-edges; masked entries are non-edges; sparse stored
entries are edges; the diagonal is forced to 0; float64 results), computed by apsp's engines."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._sparse import densify


def _scipy_dense_graph(csgraph: Any) -> np.ndarray:
    """float64 (n, n) with +inf for non-edges, following SciPy's csgraph conventions."""
    from ._intake import classify

    if classify(csgraph) == "sparse":
        return densify(csgraph, np.dtype(np.float64))
    if isinstance(csgraph, np.ma.MaskedArray):
        data = np.array(csgraph.filled(np.inf), dtype=np.float64)
        data[np.isnan(data)] = np.inf
        return data
    data = np.array(csgraph, dtype=np.float64)  # always a copy: SciPy never writes its input here
    data[(data == 0) | np.isnan(data)] = np.inf
    return data


def floyd_warshall(
    csgraph: Any,
    directed: bool = True,
    return_predecessors: bool = False,
    unweighted: bool = False,
    overwrite: bool = False,
) -> Any:
    """Same inputs and results as :func:`scipy.sparse.csgraph.floyd_warshall`, only faster.

    ``overwrite=True`` writes into ``csgraph`` when it is a dense C-ordered float64 array (as in
    SciPy, where it only applies then). Raises :class:`apsp.NegativeCycleError`, which is also a
    ``scipy.sparse.csgraph.NegativeCycleError``.
    """
    from ._solve import check_square, solve_host

    shape = tuple(getattr(csgraph, "shape", np.shape(csgraph)))
    n = check_square(shape, "csgraph")
    work = _scipy_dense_graph(csgraph)
    np.fill_diagonal(work, 0.0)
    result = solve_host(work, directed=directed, unweighted=unweighted,
                        return_predecessors=return_predecessors, overwrite=True, device=None,
                        progress=False)
    dist = result[0] if return_predecessors else result
    if (overwrite and isinstance(csgraph, np.ndarray) and not isinstance(csgraph, np.ma.MaskedArray)
            and csgraph.dtype == np.float64 and csgraph.flags.c_contiguous and csgraph.flags.writeable
            and n > 0):
        csgraph[...] = dist
        dist = csgraph
    return (dist, result[1]) if return_predecessors else dist
