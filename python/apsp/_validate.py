"""apsp.validate: solve with apsp and with SciPy, and say where they differ."""
from __future__ import annotations

from typing import Any

import numpy as np

VALIDATE_MAX_N = 3000
"""Largest n validate() accepts: SciPy's Floyd-Warshall is O(n^3) on one core (~30 s at 3000)."""


def _to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "get") and not isinstance(x, np.ndarray):  # CuPy
        return x.get()
    if hasattr(x, "detach"):  # torch
        return x.detach().cpu().numpy()
    return np.asarray(x)


def validate(graph: Any, **solve_kwargs: Any) -> float:
    """Solve ``graph`` with :func:`apsp.solve` and with SciPy; return the largest difference.

    Raises ``AssertionError`` naming the first (i, j) that differs beyond the tolerance of the
    dtype (exact for integers; for floats ``2 * n * eps * scale`` where scale bounds the path
    lengths: a path has at most n - 1 edges, each addition rounding by at most eps).
    """
    import scipy.sparse
    import scipy.sparse.csgraph as csgraph

    from ._intake import classify
    from ._solve import solve
    from ._sparse import densify, no_edge_value

    for key in ("return_predecessors", "overwrite"):
        if solve_kwargs.get(key):
            raise ValueError(f"validate() does not take {key}=True")
    if classify(graph) == "sparse":
        host = densify(graph, np.dtype(graph.dtype) if np.dtype(graph.dtype).kind in "fi" else np.dtype(np.float64))
    else:
        host = _to_numpy(graph)
    n = host.shape[0] if host.ndim == 2 else -1
    if n > VALIDATE_MAX_N:
        raise ValueError(f"validate() refuses n={n} > apsp.VALIDATE_MAX_N={VALIDATE_MAX_N}: "
                         "SciPy's reference is O(n^3) on one core")
    ours = _to_numpy(solve(graph, **solve_kwargs))

    # The same graph in SciPy's terms: a masked array whose unmasked entries (zeros too) are edges.
    weights = host.astype(np.float64)
    if host.dtype.kind == "i":
        edge = host < no_edge_value(host.dtype)
    else:
        edge = np.isfinite(weights)
    np.fill_diagonal(edge, False)
    diag = np.diagonal(weights)
    if np.any(diag[np.isfinite(diag)] < 0):  # SciPy forces the diagonal to 0; we call it a cycle
        raise AssertionError("a negative self-loop is a negative cycle for apsp; SciPy ignores it")
    ref = csgraph.floyd_warshall(np.ma.masked_array(weights, mask=~edge),
                                 directed=solve_kwargs.get("directed", True),
                                 unweighted=solve_kwargs.get("unweighted", False))
    got = ours.astype(np.float64)
    if ours.dtype.kind == "i":
        got[ours == no_edge_value(ours.dtype)] = np.inf
        tol = 0.0
    else:
        finite = weights[edge]
        scale = max(1.0, float(np.abs(finite).max()) * max(n - 1, 1) if finite.size else 1.0)
        tol = 2.0 * n * float(np.finfo(ours.dtype).eps) * scale
    both_inf = np.isinf(got) & np.isinf(ref) & (np.sign(got) == np.sign(ref))
    diff = np.where(both_inf, 0.0, np.abs(got - ref))
    diff[np.isnan(diff)] = np.inf
    bad = np.argwhere(diff > tol)
    if bad.size:
        i, j = (int(v) for v in bad[0])
        raise AssertionError(f"apsp and SciPy differ at ({i}, {j}): apsp {ours[i, j]!r}, SciPy {ref[i, j]!r} "
                             f"(tolerance {tol:g}; {len(bad)} entries differ)")
    return float(diff.max()) if diff.size else 0.0
