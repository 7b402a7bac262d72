"""scipy.sparse input: stored entries are edges (explicit zeros are zero-weight edges), duplicate
entries take the minimum, everything else is "no edge"."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._memory import check_host_memory, new_arrays


def no_edge_value(dtype: np.dtype) -> Any:
    """+inf for floats, INT32_INF / INT64_INF for the integer dtypes apsp computes in."""
    if dtype.kind == "f":
        return np.inf
    return _core.INT32_INF if dtype == np.int32 else _core.INT64_INF


def densify(sp: Any, dtype: np.dtype, skip_nan: bool = False) -> np.ndarray:
    """Dense (n, n) array of `dtype` from a sparse matrix, with the rules above. A stored NaN
    stays NaN (apsp.solve refuses it by its index), or with `skip_nan` it is not an edge (the
    minimum of a pair's other entries, SciPy's reading)."""
    shape = sp.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"graph must be a square 2-D (n, n) matrix, got shape {tuple(shape)}")
    coo = sp.tocoo()
    out = np.full(shape, no_edge_value(dtype), dtype=dtype)
    if coo.nnz:
        keep = np.fmin if skip_nan else np.minimum
        keep.at(out, (coo.row, coo.col), coo.data.astype(dtype, copy=False))
    return out


def solve_sparse(graph: Any, *, overwrite: bool, directed: bool, unweighted: bool,
                 return_predecessors: bool, device: Any, progress: bool) -> Any:
    """Densify on the target engine: on the host for the CPU engine; for a GPU only the edges are
    uploaded (COO) and scattered into the device matrix, and the distances come back dense."""
    from ._progress import make_progress
    from ._solve import check_square, computed_dtype, host_target, solve_host

    if overwrite:
        raise ValueError("overwrite=True cannot write distances into a sparse matrix (they are "
                         "dense); pass overwrite=False")
    dtype = computed_dtype(graph.dtype)
    n = check_square(tuple(graph.shape))
    need, what = new_arrays(n, dtype.name, return_predecessors)
    check_host_memory(need, what, "the distances of every pair are dense; solve a smaller graph")
    target = host_target(device)
    if target.engine == "cpu" or n == 0:
        return solve_host(densify(graph, dtype), overwrite=True, directed=directed,
                          unweighted=unweighted, return_predecessors=return_predecessors,
                          device=target.engine, progress=progress)
    coo = graph.tocoo()
    rows = np.ascontiguousarray(coo.row, dtype=np.int64)
    cols = np.ascontiguousarray(coo.col, dtype=np.int64)
    values = np.ascontiguousarray(coo.data, dtype=dtype)
    dist = np.empty((n, n), dtype=dtype)
    pred = np.empty((n, n), dtype=np.int32) if return_predecessors else None
    bar = make_progress(progress, f"apsp n={n} {target.label}")
    try:
        _core.solve_sparse_host(n, rows, cols, values, dist, pred, target.index, bool(directed),
                                bool(unweighted), True, True, bar, list(target.helpers))
    finally:
        if bar is not None:
            bar.close()
    return (dist, pred) if return_predecessors else dist
