"""apsp.validate: solve with apsp and with SciPy, and say where they differ.

The graph is handed to SciPy as a CSR matrix of its edges, because that is the one SciPy input
whose zeros are edges (SciPy's floyd_warshall turns zeros of dense and masked arrays into
non-edges). Not a test suite: one graph, one comparison, for users who want to check a result.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

VALIDATE_MAX_N = 3000
"""Largest n validate() accepts: SciPy's Floyd-Warshall is O(n^3) on one core (~30 s at 3000)."""

_SOLVE_KWARGS = ("directed", "unweighted", "device", "progress")


def _host_graph(graph: Any) -> np.ndarray:
    """A host copy of `graph` in the dtype apsp computes it in (checked for shape and n first)."""
    from ._intake import classify, to_host
    from ._solve import check_square, computed_dtype
    from ._sparse import densify

    sparse = classify(graph) == "sparse"
    n = check_square(tuple(graph.shape) if sparse else np.shape(_shape_source(graph)))
    if n > VALIDATE_MAX_N:
        raise ValueError(f"validate() refuses n={n} > apsp.VALIDATE_MAX_N={VALIDATE_MAX_N}: "
                         "SciPy's reference is O(n^3) on one core; check a smaller subgraph")
    if sparse:
        return densify(graph, computed_dtype(graph.dtype))
    host = to_host(graph)
    return np.array(host, dtype=computed_dtype(host.dtype))


def _shape_source(graph: Any) -> Any:
    from ._intake import as_host_array

    return graph if hasattr(graph, "shape") else as_host_array(graph)


def validate(graph: Any, **solve_kwargs: Any) -> float:
    """Solve ``graph`` with :func:`apsp.solve` and with SciPy; return the largest difference.

    ``solve_kwargs`` are those of :func:`apsp.solve` (``directed``, ``unweighted``,
    ``device``, ``progress``); ``return_predecessors`` and ``overwrite`` are refused
    (``ValueError``), other keywords too (``TypeError``). n above
    :data:`apsp.VALIDATE_MAX_N` is refused (``ValueError``) before anything is computed.

    Raises ``AssertionError`` naming the first (i, j) that differs beyond the tolerance of the
    dtype, or saying that only one of the two found a negative cycle. Integer results are
    compared exactly while every path length fits float64's 53-bit mantissa; floats within
    ``2 * n * eps * scale``, where scale = (n - 1) * max|w| bounds every path length (a path has
    at most n - 1 edges, each addition rounding by at most eps). When both find a negative
    cycle, apsp's :class:`apsp.NegativeCycleError` is raised, since there is nothing to compare.
    """
    from ._errors import NegativeCycleError
    from ._intake import to_host
    from ._solve import solve

    for key in solve_kwargs:
        if key not in _SOLVE_KWARGS:
            error = ValueError if key in ("return_predecessors", "overwrite") else TypeError
            raise error(f"validate() does not take {key}=; it takes {', '.join(_SOLVE_KWARGS)}")
    host = _host_graph(graph)
    try:
        ours: Any = to_host(solve(graph, **solve_kwargs))
    except NegativeCycleError as exc:
        ours = exc
    return compare_with_scipy(host, ours, directed=solve_kwargs.get("directed", True),
                              unweighted=solve_kwargs.get("unweighted", False))


def _scipy_reference(host: np.ndarray, directed: bool, unweighted: bool) -> Optional[np.ndarray]:
    """SciPy's distances for apsp's reading of `host`, or None when it has a negative cycle."""
    import scipy.sparse
    import scipy.sparse.csgraph as csgraph

    from ._sparse import no_edge_value

    n = host.shape[0]
    weights = host.astype(np.float64)
    edge = host < no_edge_value(host.dtype)  # +inf / INF and above are not edges; NaN is refused earlier
    diag = np.diagonal(weights)
    if not unweighted and np.any(edge.diagonal() & (diag < 0)):
        return None  # a negative self-loop is a negative cycle for apsp; SciPy forces the diagonal to 0
    np.fill_diagonal(edge, False)
    rows, cols = np.nonzero(edge)
    graph = scipy.sparse.csr_matrix((weights[rows, cols], (rows, cols)), shape=(n, n))
    try:
        return csgraph.floyd_warshall(graph, directed=directed, unweighted=unweighted)
    except csgraph.NegativeCycleError:
        return None


def compare_with_scipy(host: np.ndarray, ours: Any, *, directed: bool = True,
                       unweighted: bool = False) -> float:
    """Compare apsp's result `ours` for the (computed-dtype) graph `host` with SciPy's.

    `ours` is the distance matrix, or the NegativeCycleError apsp raised. Returns the largest
    difference; raises AssertionError on a mismatch (see :func:`validate`)."""
    from ._errors import NegativeCycleError
    from ._sparse import no_edge_value

    n = host.shape[0]
    ref = _scipy_reference(host, directed, unweighted)
    if isinstance(ours, NegativeCycleError):
        if ref is None:
            raise ours
        raise AssertionError(f"apsp reports a negative cycle ({ours}) but SciPy finds none")
    if ref is None:
        raise AssertionError("SciPy finds a negative cycle (or a negative self-loop) but apsp "
                             "returned distances")
    ours = np.asarray(ours)
    if ours.shape != (n, n):
        raise AssertionError(f"apsp returned shape {ours.shape}, expected {(n, n)}")
    got = ours.astype(np.float64)
    off_diagonal = ~np.eye(n, dtype=bool)  # both solvers ignore a diagonal weight >= 0
    edges = host[(host < no_edge_value(host.dtype)) & off_diagonal].astype(np.float64)
    max_w = 1.0 if unweighted else (float(np.abs(edges).max()) if edges.size else 0.0)
    scale = max(1.0, max_w * max(n - 1, 1))
    if ours.dtype.kind == "i":
        got[ours == no_edge_value(ours.dtype)] = np.inf
        tol = 0.0 if scale < 2.0**53 else 2.0 * n * float(np.finfo(np.float64).eps) * scale
    else:
        tol = 2.0 * n * float(np.finfo(ours.dtype).eps) * scale
    both_inf = np.isinf(got) & np.isinf(ref) & (np.sign(got) == np.sign(ref))
    with np.errstate(invalid="ignore"):
        diff = np.where(both_inf, 0.0, np.abs(got - ref))
    diff[np.isnan(diff)] = np.inf
    bad = np.argwhere(diff > tol)
    if bad.size:
        i, j = (int(v) for v in bad[0])
        raise AssertionError(f"apsp and SciPy differ at ({i}, {j}): apsp {ours[i, j].item()!r}, "
                             f"SciPy {float(ref[i, j])!r} (tolerance {tol:g}; {len(bad)} entries differ)")
    return float(diff.max()) if diff.size else 0.0
