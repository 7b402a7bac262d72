"""scipy.sparse input: stored entries are edges (explicit zeros are zero-weight edges), duplicate
entries take the minimum, everything else is "no edge"."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _core


def no_edge_value(dtype: np.dtype) -> Any:
    """+inf for floats, INT32_INF / INT64_INF for the integer dtypes apsp computes in."""
    if dtype.kind == "f":
        return np.inf
    return _core.INT32_INF if dtype == np.int32 else _core.INT64_INF


def densify(sp: Any, dtype: np.dtype) -> np.ndarray:
    """Dense (n, n) array of `dtype` from a sparse matrix, with the rules above."""
    shape = sp.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"graph must be a square 2-D (n, n) matrix, got shape {tuple(shape)}")
    coo = sp.tocoo()
    out = np.full(shape, no_edge_value(dtype), dtype=dtype)
    if coo.nnz:
        np.minimum.at(out, (coo.row, coo.col), coo.data.astype(dtype, copy=False))
    return out


def solve_sparse(graph: Any, *, overwrite: bool, **kwargs: Any) -> Any:
    from ._solve import computed_dtype, solve_host

    if overwrite:
        raise ValueError("overwrite=True cannot write distances into a sparse matrix (they are "
                         "dense); pass overwrite=False")
    return solve_host(densify(graph, computed_dtype(graph.dtype)), overwrite=True, **kwargs)
