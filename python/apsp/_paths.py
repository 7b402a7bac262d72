"""Path reconstruction from a predecessor matrix (SciPy's convention: -9999 = none)."""
from __future__ import annotations

import operator
from typing import Any, SupportsIndex

import numpy as np

from ._core import NO_PREDECESSOR


def path(pred: Any, i: SupportsIndex, j: SupportsIndex) -> list[int]:
    """Vertices of a shortest path i -> j, from ``pred`` of ``solve(..., return_predecessors=True)``.

    Returns ``[i]`` when ``i == j`` and ``[]`` when j is unreachable from i. ``pred`` may be a
    NumPy array or any array with ``__array__`` / ``.cpu()`` (a device tensor is copied one row).
    """
    if not hasattr(pred, "shape"):  # nested lists, as apsp.solve takes them
        pred = np.asarray(pred)
    n = _shape(pred)
    i, j = _vertex("i", i, n), _vertex("j", j, n)
    if i == j:
        return [i]
    row = _row(pred, i)
    if row[j] == NO_PREDECESSOR:
        return []
    out = [j]
    while j != i:
        j = int(row[j])
        if not 0 <= j < n or len(out) > n:  # -9999 midway, or not a vertex at all
            raise ValueError(f"predecessor matrix is inconsistent at row {i}: no path back to {i}")
        out.append(j)
    out.reverse()
    return out


def _vertex(name: str, v: Any, n: int) -> int:
    """`v` as a vertex index (anything with __index__ but a bool), or IndexError."""
    try:
        if isinstance(v, (bool, np.bool_)):
            raise TypeError
        k = operator.index(v)
    except TypeError:
        k = -1
    if not 0 <= k < n:
        raise IndexError(f"{name}={v!r} is not a vertex of this {n}-vertex graph")
    return k


def _shape(pred: Any) -> int:
    shape = tuple(pred.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"pred must be a square 2-D array, got shape {shape}")
    return int(shape[0])


def _row(pred: Any, i: int) -> np.ndarray:
    row = pred[i]
    if hasattr(row, "get") and not isinstance(row, np.ndarray):  # CuPy
        row = row.get()
    elif hasattr(row, "cpu"):  # torch
        row = row.cpu().numpy()
    return np.asarray(row)
