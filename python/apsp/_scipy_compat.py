"""apsp.floyd_warshall: a drop-in for scipy.sparse.csgraph.floyd_warshall with SciPy's input
semantics, computed by apsp's engines. It translates SciPy's conventions into apsp's (non-edges
become +inf, the diagonal 0) and then calls the same solve as apsp.solve; no algorithm here."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._sparse import densify


def _scipy_dense_graph(csgraph: Any, in_place: bool) -> np.ndarray:
    """float64 (n, n) with +inf for non-edges and 0 on the diagonal, as SciPy's floyd_warshall
    sees its input: sparse stored entries are edges (explicit zeros too, duplicates -> minimum);
    for dense and masked arrays, zeros are non-edges (SciPy applies that rule to both); masked
    entries, NaN and +-inf are non-edges everywhere. `in_place`: rewrite `csgraph` itself."""
    from ._intake import classify

    if classify(csgraph) == "sparse":
        data = densify(csgraph, np.dtype(np.float64))
        if np.isneginf(data).any():  # SciPy would spread the -inf; apsp computes finite weights
            i, j = (int(v) for v in np.argwhere(np.isneginf(data))[0])
            raise ValueError(f"csgraph[{i}, {j}] is a stored -inf edge: apsp computes with finite "
                             "weights (SciPy would report -inf for every path through it); store "
                             "a finite weight, or drop the entry if it is not an edge")
    elif isinstance(csgraph, np.ma.MaskedArray):
        data = np.ascontiguousarray(csgraph.astype(np.float64).filled(np.inf))  # a new plain ndarray
        data[data == 0] = np.inf
    elif in_place:
        data = csgraph
        data[data == 0] = np.inf
    else:
        data = np.array(csgraph, dtype=np.float64, order="C")  # always a copy: SciPy never writes its input here
        data[data == 0] = np.inf
    data[~np.isfinite(data)] = np.inf
    np.fill_diagonal(data, 0.0)
    return data


def floyd_warshall(
    csgraph: Any,
    directed: bool = True,
    return_predecessors: bool = False,
    unweighted: bool = False,
    overwrite: bool = False,
) -> Any:
    """Same inputs and results as :func:`scipy.sparse.csgraph.floyd_warshall`, only faster.

    Parameters and results are SciPy's: ``csgraph`` is a dense array (zeros, +-inf and NaN are
    non-edges), a masked array (masked entries and zeros are non-edges) or a scipy.sparse matrix
    (stored entries are edges, explicit zeros too; duplicates take the minimum). The diagonal is
    forced to 0 (so a negative self-loop is ignored, as in SciPy), the result is float64 with
    +inf where there is no path, and ``return_predecessors=True`` adds an int32 ``pred`` with
    -9999 where there is none. Where several shortest paths tie, ``pred`` may pick another one
    than SciPy does. Runs on the first usable GPU, else on the CPU engine.

    ``overwrite=True`` computes in ``csgraph`` itself when it is a writable, C-ordered float64
    ndarray (as in SciPy, where it only applies then); otherwise it is ignored.

    Raises :class:`apsp.NegativeCycleError`, which is also a
    ``scipy.sparse.csgraph.NegativeCycleError``, so existing ``except`` clauses keep working.
    """
    from ._solve import check_square, solve_host

    shape = tuple(getattr(csgraph, "shape", np.shape(csgraph)))
    check_square(shape, "csgraph")
    in_place = (overwrite and type(csgraph) is np.ndarray and csgraph.dtype == np.float64
                and csgraph.flags.c_contiguous and csgraph.flags.writeable
                and csgraph.flags.aligned)
    work = _scipy_dense_graph(csgraph, in_place)
    return solve_host(work, directed=directed, unweighted=unweighted,
                      return_predecessors=return_predecessors, overwrite=True, device=None,
                      progress=False)
