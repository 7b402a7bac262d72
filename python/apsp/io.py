"""The course binary format (the seeds' input and output files).

Input: int32 n, int32 m, then m int32 triples (src, dst, w), little-endian.
Output: n x n int32 row-major distances, little-endian, unreachable = 1073741823
(2^30 - 1 == apsp.INT32_INF).
"""
from __future__ import annotations

import errno
import operator
import os
import tempfile
from pathlib import Path
from typing import Optional, Union

import numpy as np

from ._core import INT32_INF, INT64_INF

__all__ = ["read_graph", "write_graph", "write_distances"]

PathLike = Union[str, "os.PathLike[str]"]
_INT32_LE = np.dtype("<i4")


def _available_memory() -> Optional[int]:
    """Bytes of memory this process could still get (MemAvailable on Linux), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def read_graph(path: PathLike) -> np.ndarray:
    """Read a course-format graph file into a dense int32 (n, n) weight matrix.

    Missing edges are ``apsp.INT32_INF``, the diagonal is 0 (a negative self-loop stays, and is a
    negative cycle for :func:`apsp.solve`), and repeated edges keep the smallest weight.
    Raises ``ValueError`` for a malformed file (too short, truncated or with trailing bytes,
    negative n or m, a vertex out of range), ``MemoryError`` when the n x n matrix would not fit
    in this machine's available memory, and ``OSError`` when the file cannot be read.
    """
    path = Path(path)
    size = path.stat().st_size
    if size < 8:
        raise ValueError(f"{path}: {size} bytes is too short for the 8-byte header (int32 n, int32 m)")
    with open(path, "rb") as f:
        n, m = (int(v) for v in np.fromfile(f, dtype=_INT32_LE, count=2))
        if n < 0 or m < 0:
            raise ValueError(f"{path}: header says n={n}, m={m}; both must be >= 0")
        expected = 8 + 12 * m
        if size != expected:
            what = "truncated" if size < expected else "trailing bytes after the last edge"
            raise ValueError(f"{path}: header says m={m} edges ({expected} bytes) but the file has "
                             f"{size} bytes ({what}); is it a course-format graph file (int32 n, "
                             "int32 m, then m int32 (src, dst, w) triples, little-endian)?")
        need = n * n * 4
        available = _available_memory()
        if available is not None and need > available:
            raise MemoryError(f"{path}: n={n} needs a {need / 2**30:.1f} GiB int32 matrix "
                              f"({need} bytes) but this machine has {available / 2**30:.1f} GiB "
                              "available; solve it on a machine with more memory")
        try:
            dist = np.full((n, n), INT32_INF, dtype=np.int32)
        except (MemoryError, ValueError) as exc:
            raise MemoryError(f"{path}: n={n} needs a {need / 2**30:.1f} GiB int32 matrix, more "
                              "than this machine can allocate") from exc
        edges = np.fromfile(f, dtype=_INT32_LE, count=3 * m).reshape(m, 3)
    src, dst, w = edges[:, 0], edges[:, 1], edges[:, 2]
    bad = np.flatnonzero((src < 0) | (src >= n) | (dst < 0) | (dst >= n))
    if bad.size:
        e = int(bad[0])
        raise ValueError(f"{path}: edge {e} ({int(src[e])} -> {int(dst[e])}) names a vertex outside "
                         f"0..{n - 1} (n={n})")
    np.fill_diagonal(dist, 0)
    np.minimum.at(dist, (src, dst), w.astype(np.int32))
    return dist


def write_graph(path: PathLike, n: int, edges: np.ndarray) -> None:
    """Write a course-format graph file: `edges` is an (m, 3) integer array of (src, dst, w).
    Written to a temporary file and renamed, like :func:`write_distances`."""
    edges = np.asarray(edges)
    if edges.ndim != 2 or edges.shape[1] != 3:
        raise ValueError(f"edges must have shape (m, 3), got {edges.shape}")
    if edges.dtype.kind not in "biuf":
        raise TypeError(f"edges have dtype {edges.dtype}; expected integers")
    if edges.dtype.kind == "f":  # integral floats are written; nothing is truncated or wrapped
        bad = ~np.isfinite(edges) | (edges != np.round(edges))
        if bad.any():
            k, c = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError(f"edges[{k}, {c}] = {edges[k, c].item()!r} is not an integer; the "
                             "format holds int32 sources, destinations and weights")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n={n!r} must be a whole number of vertices") from None
    i32 = np.iinfo(np.int32)
    if not 0 <= n <= i32.max:
        raise ValueError(f"n={n} does not fit the format's int32 header")
    if edges.size and (edges.min() < i32.min or edges.max() > i32.max):
        raise ValueError("edges hold values outside int32")
    if edges.size and (edges[:, :2].min() < 0 or edges[:, :2].max() >= n):
        raise ValueError(f"edges name vertices outside 0..{n - 1}")
    header = np.array([n, len(edges)], dtype=_INT32_LE)
    _write_atomically(path, header.tobytes(), edges.astype(_INT32_LE))


def write_distances(path: PathLike, dist: np.ndarray) -> None:
    """Write an (n, n) distance matrix in the course output format (int32, row-major).

    Unreachable entries (``+inf`` for floats, the dtype's INF constant for integers) become
    ``apsp.INT32_INF``. Any other value must be an integer in int32's range below INT32_INF,
    else ``ValueError`` names it (nothing is clamped or wrapped). The file is written to a
    temporary file next to `path` and renamed, so no partial output is left on error.
    """
    dist = np.asarray(dist)
    if dist.ndim != 2 or dist.shape[0] != dist.shape[1]:
        raise ValueError(f"dist must be a square 2-D array, got shape {dist.shape}")
    if dist.dtype.kind == "f":
        if dist.dtype.itemsize < 4:
            dist = dist.astype(np.float32)  # exact; int32's bounds do not fit float16
        unreachable = dist == np.inf
    elif dist.dtype.kind in "iu":
        unreachable = dist >= (INT32_INF if dist.dtype.itemsize <= 4 else INT64_INF)
    else:
        raise TypeError(f"dist has dtype {dist.dtype}; expected an integer or float array")
    values = dist[~unreachable]
    if values.size:
        lo, hi = values.min(), values.max()
        if np.isnan(lo) or np.isnan(hi) or lo < np.iinfo(np.int32).min or hi >= INT32_INF:
            i, j = (int(v) for v in np.argwhere(~unreachable & ~((dist >= np.iinfo(np.int32).min)
                                                                  & (dist < INT32_INF)))[0])
            raise ValueError(f"dist[{i}, {j}] = {dist[i, j].item()!r} cannot be written: the format holds "
                             f"int32 distances below {INT32_INF} (which means unreachable)")
        if dist.dtype.kind == "f" and np.any(values != np.round(values)):
            i, j = (int(v) for v in np.argwhere(~unreachable & (dist != np.round(dist)))[0])
            raise ValueError(f"dist[{i}, {j}] = {dist[i, j].item()!r} is not an integer; the format holds "
                             "int32 distances")
    out = np.full(dist.shape, INT32_INF, dtype=_INT32_LE)  # not np.where: float32 rounds 2^30 - 1 up
    out[~unreachable] = values  # integers within int32, checked above
    _write_atomically(path, b"", out)


def _umask() -> int:
    try:  # Linux >= 4.7 reports it without changing it (os.umask would, for every thread)
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _cannot_write(asked: Path, exc: OSError, hint: str = "") -> OSError:
    """`exc` again, naming the path the caller asked for instead of a temporary file."""
    return type(exc)(exc.errno, f"cannot write {asked}: {exc.strerror or exc}{hint}", str(asked))


def _write_atomically(path: PathLike, header: bytes, body: np.ndarray) -> None:
    """Write `header` then `body` to `path` through a temporary file renamed over it, so that an
    error leaves no partial file. A symlink is followed (its target is replaced, the link stays);
    a FIFO or a device (``/dev/stdout``) is written directly, since renaming would replace it."""
    asked = Path(path)
    path = Path(os.path.realpath(asked))

    def write(f) -> None:
        f.write(header)
        f.write(np.ascontiguousarray(body).data)

    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, f"cannot write {asked}: it is a folder; give a file "
                                "name inside it", str(asked))
    if path.exists() and not path.is_file():  # a FIFO, a device or a socket: no rename over it
        try:
            with open(path, "wb") as f:
                write(f)
        except OSError as exc:
            raise _cannot_write(asked, exc) from exc
        return
    if not path.parent.is_dir():  # mkstemp's error would name its temporary file, not `path`
        raise FileNotFoundError(errno.ENOENT, f"cannot write {asked}: its folder does not exist",
                                str(asked))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _cannot_write(asked, exc, f" (in {path.parent}); choose a folder you can write "
                            "to") from exc
    try:
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give it the usual permissions
            os.replace(tmp, path)
        except OSError as exc:
            raise _cannot_write(asked, exc) from exc
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
