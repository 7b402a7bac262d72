"""The course binary format.

Input: int32 n, int32 m, then m int32 triples (src, dst, w), little-endian.
Output: n x n int32 row-major distances, unreachable = 1073741823 (2^30 - 1 == apsp.INT32_INF).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Union

import numpy as np

from ._core import INT32_INF

PathLike = Union[str, "os.PathLike[str]"]
_HEADER = np.dtype("<i4")


def read_graph(path: PathLike) -> np.ndarray:
    """Read a course-format graph into a dense int32 (n, n) matrix (INT32_INF = no edge,
    diagonal 0, repeated edges keep the smallest weight)."""
    path = Path(path)
    size = path.stat().st_size
    if size < 8:
        raise ValueError(f"{path}: {size} bytes is too short for the 8-byte header (int32 n, int32 m)")
    with open(path, "rb") as f:
        n, m = (int(v) for v in np.fromfile(f, dtype=_HEADER, count=2))
        if n < 0 or m < 0:
            raise ValueError(f"{path}: header says n={n}, m={m}; both must be >= 0")
        expected = 8 + 12 * m
        if size != expected:
            raise ValueError(f"{path}: header says m={m} edges ({expected} bytes) but the file has {size} bytes"
                             + (" (truncated)" if size < expected else ""))
        need = n * n * 4
        try:
            dist = np.full((n, n), INT32_INF, dtype=np.int32)
        except (MemoryError, ValueError) as exc:
            raise MemoryError(f"{path}: n={n} needs a {need / 2**30:.1f} GiB int32 matrix, more than this "
                              "machine can allocate") from exc
        edges = np.fromfile(f, dtype=_HEADER, count=3 * m).reshape(m, 3)
    src, dst, w = edges[:, 0], edges[:, 1], edges[:, 2]
    bad = np.flatnonzero((src < 0) | (src >= n) | (dst < 0) | (dst >= n))
    if bad.size:
        e = int(bad[0])
        raise ValueError(f"{path}: edge {e} ({int(src[e])} -> {int(dst[e])}) names a vertex outside 0..{n - 1}")
    np.fill_diagonal(dist, 0)
    np.minimum.at(dist, (src, dst), w)
    return dist


def write_distances(path: PathLike, dist: np.ndarray) -> None:
    """Write an (n, n) distance matrix as int32 row-major; values >= INT32_INF (and +inf) become
    INT32_INF. Written to a temporary file first and renamed, so no partial file is left."""
    dist = np.asarray(dist)
    if dist.ndim != 2 or dist.shape[0] != dist.shape[1]:
        raise ValueError(f"dist must be a square 2-D array, got shape {dist.shape}")
    if dist.dtype.kind == "f":
        if np.isnan(dist).any():
            raise ValueError("dist contains NaN")
        out = np.where(dist >= INT32_INF, INT32_INF, dist)
        if out.size and (out.min() < np.iinfo(np.int32).min or (out != np.round(out)).any()):
            raise ValueError("dist has values that are not int32 integers")
        out = out.astype("<i4")
    else:
        out = np.minimum(dist, INT32_INF).astype("<i4")
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(np.ascontiguousarray(out).tobytes())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
