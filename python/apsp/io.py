"""The course binary format (the seeds' input and output files): read_graph / write_graph,
write_distances / read_distances.

Input: int32 n, int32 m, then m int32 triples (src, dst, w), little-endian.
Output: n x n int32 row-major distances, little-endian, unreachable = 1073741823
(2^30 - 1 == apsp.INT32_INF).

Every function takes a path (a regular file, a pipe or FIFO such as /dev/stdin, a device such as
/dev/stdout) or, like np.load and np.save, an open binary file object.
"""
from __future__ import annotations

import contextlib
import errno
import io
import math
import operator
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Optional, Union

import numpy as np

from ._core import INT32_INF, INT64_INF
from ._memory import check_host_memory

__all__ = ["read_distances", "read_graph", "write_distances", "write_graph"]

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, BinaryIO]  # a path, or an open binary file object
_INT32_LE = np.dtype("<i4")


def _is_path(target: Any) -> bool:
    return isinstance(target, (str, os.PathLike))


def _file_name(f: Any) -> str:
    """A file object's name for messages: its `name` where it has a text one (open files),
    else its type (io.BytesIO)."""
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else f"<{type(f).__name__}>"


def _check_file_object(f: Any, method: str, role: str, purpose: str) -> None:
    """TypeError unless `f` is a file object with `method` ("read" or "write") in binary mode."""
    if not callable(getattr(f, method, None)):
        raise TypeError(f"{role} must be a path (str or os.PathLike) or a binary file object with "
                        f".{method}(), got {type(f).__name__}")
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"{_file_name(f)} is open in text mode; open it in binary mode "
                        f"('{'rb' if method == 'read' else 'wb'}') to {purpose}")


@contextlib.contextmanager
def _reading(source: Source, purpose: str) -> Iterator[tuple[Any, str, Optional[int]]]:
    """(a binary stream, its name for messages, its size in bytes where it is a regular file
    opened here, else None: a pipe, or a file object read from its current position to its
    end). A path is opened and closed here; a file object is left open."""
    if _is_path(source):
        with open(source, "rb") as f:
            info = os.fstat(f.fileno())
            yield f, str(source), info.st_size if stat.S_ISREG(info.st_mode) else None
        return
    _check_file_object(source, "read", "the source", purpose)
    yield source, _file_name(source), None


def _read_bytes(f: Any, name: str, size: int) -> Any:
    """f.read(size) (bytes-like), refusing a text stream that is not an io.TextIOBase."""
    data = f.read(size)
    if data is None:
        raise OSError(errno.EAGAIN, f"{name}: read() returned None (a non-blocking stream with no "
                      "data yet); give a blocking binary file object")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name}: read() returned {type(data).__name__}, not bytes; open it in "
                        "binary mode ('rb')")
    return data


def read_graph(path: Source) -> np.ndarray:
    """Read a course-format graph file into a dense int32 (n, n) weight matrix.

    Missing edges are ``apsp.INT32_INF``, the diagonal is 0 (a negative self-loop stays, and is a
    negative cycle for :func:`apsp.solve`), and repeated edges keep the smallest weight. `path`
    may also be a pipe or a FIFO (``/dev/stdin``), read to its end, or an open binary file object,
    read from its current position to the end of the graph (8 + 12 m bytes, as np.load reads one
    array) and left open there.
    Raises ``ValueError`` for a malformed file (too short, truncated or with trailing bytes,
    negative n or m, a vertex out of range), ``MemoryError`` when the n x n matrix would not fit
    in this machine's available memory, ``OSError`` when the file cannot be read, and
    ``TypeError`` for a file object open in text mode.
    """
    _, edges, dist = _read_edges(path, dense=True)
    np.fill_diagonal(dist, 0)
    np.minimum.at(dist, (edges[:, 0], edges[:, 1]), edges[:, 2].astype(np.int32))
    return dist


def _read_edges(path: Source, dense: bool) -> tuple[int, np.ndarray, Optional[np.ndarray]]:
    """(n, the (m, 3) edge triples, and with `dense` a new int32 (n, n) matrix of INT32_INF,
    allocated once the header is read so that a huge n fails before the edges are)."""
    dist = None
    with _reading(path, "read a graph") as (f, name, size):
        header = bytes(_read_stream(f, name, 8))  # a raw file object may return fewer bytes
        if len(header) < 8:
            got = size if size is not None else len(header)
            raise ValueError(f"{name}: {got} bytes is too short for the 8-byte header "
                             "(int32 n, int32 m)")
        n, m = (int(v) for v in np.frombuffer(header, dtype=_INT32_LE))
        if n < 0 or m < 0:
            raise ValueError(f"{name}: header says n={n}, m={m}; both must be >= 0")
        expected = 8 + 12 * m
        if size is not None and size != expected:
            _wrong_size(name, m, size)
        if dense:
            dist = _int32_matrix(name, n, INT32_INF)
        if size is not None:
            edges = np.fromfile(f, dtype=_INT32_LE, count=3 * m)
        else:  # a stream: its length shows only at its end
            body = _read_stream(f, name, 12 * m)
            if len(body) < 12 * m:
                _wrong_size(name, m, 8 + len(body))
            if _is_path(path) and _read_bytes(f, name, 1):  # a file object may hold more records
                _wrong_size(name, m, expected + 1, at_least=True)
            edges = np.frombuffer(body, dtype=_INT32_LE)
    edges = edges.reshape(m, 3)
    src, dst = edges[:, 0], edges[:, 1]
    bad = np.flatnonzero((src < 0) | (src >= n) | (dst < 0) | (dst >= n))
    if bad.size:
        e = int(bad[0])
        raise ValueError(f"{name}: edge {e} ({int(src[e])} -> {int(dst[e])}) names a vertex outside "
                         f"0..{n - 1} (n={n})")
    return n, edges, dist


def _edges_as_sparse(path: PathLike) -> Any:
    """The graph of a regular course-format file as a scipy.sparse COO matrix of its edges
    (duplicates kept: apsp takes their minimum; weights >= INT32_INF are no edge), without the
    n x n matrix: the command line's negative-cycle search reads the file again this way."""
    import scipy.sparse

    n, edges, _ = _read_edges(path, dense=False)
    return scipy.sparse.coo_matrix((edges[:, 2].astype(np.int32), (edges[:, 0], edges[:, 1])),
                                   shape=(n, n))


def read_distances(path: Source) -> np.ndarray:
    """Read a course-format distance file (what :func:`write_distances` and ``python -m apsp
    solve`` write) into an int32 (n, n) array; n comes from the file's length (4 n^2 bytes).
    Unreachable pairs are ``apsp.INT32_INF``. `path` may be a pipe or a FIFO, or an open binary
    file object (read from its current position to its end, and left open). Raises
    ``ValueError`` when the length is not that of a square int32 matrix."""
    with _reading(path, "read distances") as (f, name, size):
        if size is not None:
            n = _square_side(name, size)
            out = _int32_matrix(name, n, None, _INT32_LE)
            got = f.readinto(memoryview(out).cast("B")) if n else 0
            if got != size:
                raise ValueError(f"{name}: read {got} of its {size} bytes; it changed while read")
            return out.astype(np.int32, copy=False)
        body = _read_stream(f, name, None)
    n = _square_side(name, len(body))
    return np.frombuffer(body, dtype=_INT32_LE).reshape(n, n).astype(np.int32, copy=False)


def _square_side(name: str, size: int) -> int:
    n = math.isqrt(size // 4)
    if size % 4 or n * n * 4 != size:
        raise ValueError(f"{name}: {size} bytes is not an n x n int32 matrix (4 n^2 bytes); is it "
                         "a course-format distance file? (a graph file is read by read_graph)")
    return n


def _wrong_size(name: str, m: int, size: int, at_least: bool = False) -> None:
    expected = 8 + 12 * m
    what = "truncated" if size < expected else "trailing bytes after the last edge"
    raise ValueError(f"{name}: header says m={m} edges ({expected} bytes) but the file has "
                     f"{'at least ' if at_least else ''}{size} bytes ({what}); is it a "
                     "course-format graph file (int32 n, "
                     "int32 m, then m int32 (src, dst, w) triples, little-endian)?")


def _int32_matrix(name: str, n: int, fill: Optional[int],
                  dtype: np.dtype = np.dtype(np.int32)) -> np.ndarray:
    """A new int32 (n, n) array of `fill` (None: left as allocated, for a read to fill), or
    MemoryError naming the bytes."""
    need = n * n * 4
    check_host_memory(need, f"{name}: n={n} as an int32 matrix",
                      "solve it on a machine with more memory")
    try:
        return np.empty((n, n), dtype=dtype) if fill is None else np.full((n, n), fill, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise MemoryError(f"{name}: n={n} needs a {need / 2**30:.1f} GiB int32 matrix, more "
                          "than this machine can allocate") from exc


def _read_stream(f: Any, name: str, want: Optional[int]) -> bytearray:
    """Up to `want` bytes of a pipe or file object (None: to its end), 64 MiB a read."""
    body = bytearray()
    while want is None or len(body) < want:
        chunk = _read_bytes(f, name, 1 << 26 if want is None else min(want - len(body), 1 << 26))
        if not chunk:
            break
        body += chunk
    return body


def write_graph(path: Source, n: int, edges: np.ndarray) -> None:
    """Write a course-format graph file: `edges` is an (m, 3) integer array of (src, dst, w).
    Written to a temporary file and renamed, like :func:`write_distances`; an open binary file
    object is written at its current position and left open."""
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
    _write_atomically(path, [header.tobytes(), edges.astype(_INT32_LE)])


def write_distances(path: Source, dist: np.ndarray) -> None:
    """Write an (n, n) distance matrix in the course output format (int32, row-major).

    Unreachable entries (``+inf`` for floats, the dtype's INF constant for integers) become
    ``apsp.INT32_INF``. Any other value must be an integer in int32's range below INT32_INF,
    else ``ValueError`` names it (nothing is clamped or wrapped). The file is written to a
    temporary file next to `path` and renamed, so no partial output is left on error; an open
    binary file object is written at its current position (after every value is checked) and
    left open. An int32 result of apsp is written from its own memory; other dtypes are converted
    a block of rows at a time, so no second n x n array is made.
    """
    dist = np.asarray(dist)
    if dist.ndim != 2 or dist.shape[0] != dist.shape[1]:
        raise ValueError(f"dist must be a square 2-D array, got shape {dist.shape}")
    if dist.dtype.kind == "f" and dist.dtype.itemsize < 4:
        dist = dist.astype(np.float32)  # exact; int32's bounds do not fit float16
    elif dist.dtype.kind not in "fiu":
        raise TypeError(f"dist has dtype {dist.dtype}; expected an integer or float array")
    rows = max(1, _BLOCK_ELEMENTS // max(dist.shape[1], 1))
    blocks = [(r, dist[r:r + rows]) for r in range(0, dist.shape[0], rows)]
    for r, block in blocks:  # every value checked before a byte is written
        _check_distances(block, r)
    if (dist.dtype == _INT32_LE and dist.flags.c_contiguous
            and (dist.size == 0 or dist.max() <= INT32_INF)):  # already the format's bytes
        _write_atomically(path, [dist])
        return
    _write_atomically(path, (_as_format(block) for _, block in blocks))


_BLOCK_ELEMENTS = 1 << 22  # 16 MiB of int32 a block


def _unreachable(block: np.ndarray) -> np.ndarray:
    if block.dtype.kind == "f":
        return block == np.inf
    return block >= (INT32_INF if block.dtype.itemsize <= 4 else INT64_INF)


def _check_distances(block: np.ndarray, first_row: int) -> None:
    """ValueError at the first entry of `block` (rows from `first_row`) the format cannot hold."""
    reach = ~_unreachable(block)
    with np.errstate(invalid="ignore"):
        bad = reach & ~((block >= np.iinfo(np.int32).min) & (block < INT32_INF))
        if block.dtype.kind == "f":
            fraction = reach & ~bad & (block != np.round(block))
        else:
            fraction = np.zeros_like(bad)
    for mask, why in ((bad, f"cannot be written: the format holds int32 distances below "
                            f"{INT32_INF} (which means unreachable)"),
                      (fraction, "is not an integer; the format holds int32 distances")):
        if mask.any():
            i, j = (int(v) for v in np.argwhere(mask)[0])
            raise ValueError(f"dist[{first_row + i}, {j}] = {block[i, j].item()!r} {why}")


def _as_format(block: np.ndarray) -> np.ndarray:
    """The format's int32 rows for a checked block (not np.where with INT32_INF on float32 data,
    which would round 2^30 - 1 up)."""
    unreachable = _unreachable(block)
    with np.errstate(invalid="ignore"):
        out = np.where(unreachable, 0, block).astype(_INT32_LE)
    out[unreachable] = INT32_INF
    return out


def _write_all(f: Any, chunk: Any) -> None:
    """Write bytes or an array's bytes, again where a raw file object wrote only part."""
    if not isinstance(chunk, bytes):
        chunk = np.ascontiguousarray(chunk).reshape(-1).view(np.uint8)  # no copy; 0 bytes too
    view = memoryview(chunk)
    while view.nbytes:
        wrote = f.write(view)
        if wrote is None:
            if isinstance(f, io.RawIOBase):  # a non-blocking raw stream that would block
                raise BlockingIOError(errno.EAGAIN, f"{_file_name(f)}: the stream would block and "
                                      f"took none of the last {view.nbytes} bytes; give a "
                                      "blocking binary file object")
            return  # a writer that does not count (it took everything)
        if wrote <= 0:
            raise OSError(errno.EIO, f"{_file_name(f)}: write() took 0 of {view.nbytes} bytes")
        if wrote >= view.nbytes:
            return
        view = view[wrote:]


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


def _write_target(path: PathLike) -> tuple[Path, Optional[Path]]:
    """(the real path of a regular file to replace, None), or (the stream to write into, its
    name) for a FIFO or a device such as /dev/stdout (a pipe's /proc link has no real path).
    Raises the OSError that writing there would meet (a folder, a missing, read-only or
    unwritable folder): the command line asks before it solves."""
    asked = Path(path)
    try:
        mode = os.stat(asked).st_mode  # follows links: /dev/stdout -> the pipe or the tty
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"cannot write {asked}: it is a folder; give a file "
                                "name inside it", str(asked))
    if mode is not None and not stat.S_ISREG(mode):  # a FIFO, a device or a socket
        return asked, asked
    real = Path(os.path.realpath(asked))
    if not real.parent.is_dir():  # mkstemp's error would name its temporary file, not `path`
        raise FileNotFoundError(errno.ENOENT, f"cannot write {asked}: its folder does not exist",
                                str(asked))
    if os.statvfs(real.parent).f_flag & os.ST_RDONLY:
        raise OSError(errno.EROFS, f"cannot write {asked}: its folder {real.parent} is on a "
                      "read-only file system; choose a folder you can write to", str(asked))
    if not os.access(real.parent, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, f"cannot write {asked}: its folder {real.parent} is "
                              "not writable; choose a folder you can write to", str(asked))
    return real, None


def _write_atomically(path: Source, chunks: Iterable[Any]) -> None:
    """Write `chunks` (bytes or arrays, in order) to `path` through a temporary file renamed over
    it, so that an error leaves no partial file. A symlink is followed (its target is replaced,
    the link stays); a FIFO or a device (``/dev/stdout``) is written directly, since renaming
    would replace it, and so is a file object (left open)."""
    if not _is_path(path):
        _check_file_object(path, "write", "the target", "write the format's bytes")
        for i, chunk in enumerate(chunks):
            try:
                _write_all(path, chunk)
            except TypeError as exc:  # a text stream that is not an io.TextIOBase
                if i:
                    raise
                raise TypeError(f"{_file_name(path)} does not take bytes ({exc}); open it in "
                                "binary mode ('wb')") from exc
        return
    asked = Path(path)
    real, stream = _write_target(asked)

    def write(f) -> None:
        for chunk in chunks:
            _write_all(f, chunk)

    if stream is not None:
        try:
            with open(stream, "wb") as f:
                write(f)
        except OSError as exc:
            raise _cannot_write(asked, exc) from exc
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    except OSError as exc:
        raise _cannot_write(asked, exc, f" (in {real.parent}); choose a folder you can write "
                            "to") from exc
    try:
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give it the usual permissions
            os.replace(tmp, real)
        except OSError as exc:
            raise _cannot_write(asked, exc) from exc
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
