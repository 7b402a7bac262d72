"""apsp.io (the course binary format) and the command line (python -m apsp info | demo | solve),
the latter run as real subprocesses: round trips, malformed files swept, exit codes, and no
partial output file left behind."""
from __future__ import annotations

import io
import os
import stat
import struct
import subprocess
import sys
import threading

import numpy as np
import pytest

import apsp
from graphs import assert_matches_scipy

INF = apsp.INT32_INF


def _raw(path, n, m, triples=(), extra=b""):
    body = struct.pack("<ii", n, m) + b"".join(struct.pack("<iii", *t) for t in triples) + extra
    path.write_bytes(body)
    return path


def _bytes(path, data):
    path.write_bytes(data)
    return path


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "apsp", *args], capture_output=True, text=True,
                          timeout=timeout)


def _read_out(path, n):
    return np.frombuffer(path.read_bytes(), dtype="<i4").reshape(n, n)


def test_read_graph_rules(tmp_path):
    f = _raw(tmp_path / "g.bin", 4, 6, [(0, 1, 5), (0, 1, 3), (1, 2, -1), (2, 2, 7), (3, 0, INF),
                                       (2, 3, 0)])
    g = apsp.io.read_graph(f)
    assert g.dtype == np.int32 and g.flags.c_contiguous
    np.testing.assert_array_equal(g, [[0, 3, INF, INF], [INF, 0, -1, INF], [INF, INF, 0, 0],
                                      [INF, INF, INF, 0]])  # min of repeats, INF = no edge, diag 0


def test_read_graph_empty_and_single(tmp_path):
    assert apsp.io.read_graph(_raw(tmp_path / "a", 0, 0)).shape == (0, 0)
    np.testing.assert_array_equal(apsp.io.read_graph(_raw(tmp_path / "b", 1, 0)), [[0]])


def test_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    n, m = 150, 2000
    edges = np.stack([rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 1000, m)], axis=1)
    f = tmp_path / "in.bin"
    apsp.io.write_graph(f, n, edges)
    assert f.stat().st_size == 8 + 12 * m
    g = apsp.io.read_graph(f)
    dense = np.full((n, n), INF, dtype=np.int32)
    for s, d, w in edges:
        dense[s, d] = min(dense[s, d], w)
    np.fill_diagonal(dense, 0)
    np.testing.assert_array_equal(g, dense)
    dist = apsp.solve(g, device="cpu")
    assert_matches_scipy(dist, g)
    out = tmp_path / "out.bin"
    apsp.io.write_distances(out, dist)
    np.testing.assert_array_equal(_read_out(out, n), dist)
    for other in (dist.astype(np.int64), np.where(dist == INF, apsp.INT64_INF, dist).astype(np.int64),
                  np.where(dist == INF, np.inf, dist).astype(np.float64)):
        apsp.io.write_distances(out, other)
        np.testing.assert_array_equal(_read_out(out, n), dist)
    mode = out.stat().st_mode & 0o777
    assert mode & 0o644 == 0o644 & ~_umask()  # usual permissions, not mkstemp's 0600


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


MALFORMED = [
    ("empty", lambda p: _bytes(p, b""), ValueError, "0 bytes is too short"),
    ("short_header", lambda p: _bytes(p, b"\x01\x00\x00"), ValueError, "3 bytes"),
    ("truncated", lambda p: _raw(p, 3, 2, [(0, 1, 1)]), ValueError, "truncated"),
    ("trailing", lambda p: _raw(p, 3, 1, [(0, 1, 1)], extra=b"\x00\x00"), ValueError, "trailing"),
    ("negative_n", lambda p: _raw(p, -3, 0), ValueError, "n=-3"),
    ("negative_m", lambda p: _raw(p, 3, -1), ValueError, "m=-1"),
    ("src_out_of_range", lambda p: _raw(p, 3, 2, [(0, 1, 1), (3, 0, 1)]), ValueError, "edge 1 (3 -> 0)"),
    ("dst_negative", lambda p: _raw(p, 3, 1, [(0, -1, 1)]), ValueError, "edge 0 (0 -> -1)"),
    ("edge_with_n0", lambda p: _raw(p, 0, 1, [(0, 0, 1)]), ValueError, "outside"),
    ("too_big", lambda p: _raw(p, 2**31 - 1, 0), MemoryError, "n=2147483647"),
]


@pytest.mark.parametrize(("make", "exc", "fragment"), [pytest.param(*c[1:], id=c[0]) for c in MALFORMED])
def test_malformed_files(tmp_path, make, exc, fragment):
    f = make(tmp_path / "bad.bin")
    with pytest.raises(exc) as info:
        apsp.io.read_graph(f)
    assert fragment in str(info.value) and str(f) in str(info.value)


def test_too_big_names_the_bytes(tmp_path):
    f = _raw(tmp_path / "big.bin", 200_000, 0)  # 160 GB of int32: more than any test machine has
    with pytest.raises(MemoryError, match="160000000000 bytes"):
        apsp.io.read_graph(f)


@pytest.mark.parametrize(("dist", "fragment"), [
    (np.zeros((1, 1), dtype=np.int64), None),
    (np.array([[0, INF], [1, 0]], dtype=np.int64), "dist[0, 1] = "),  # INT32_INF is not INT64's
    (np.array([[0, -(2**31) - 1], [1, 0]], dtype=np.int64), "dist[0, 1]"),
    (np.array([[0, 1.5], [1, 0]]), "dist[0, 1] = 1.5 is not an integer"),
    (np.array([[0, np.nan], [1, 0]]), "dist[0, 1]"),
    (np.array([[0, 3e9], [1, 0]]), "dist[0, 1]"),
    (np.zeros((2, 3), dtype=np.int32), "(2, 3)"),
], ids=["ok_1x1", "int64_value_inf32", "below_int32", "fraction", "nan", "too_large", "shape"])
def test_write_distances_refuses_what_the_format_cannot_hold(tmp_path, dist, fragment):
    out = tmp_path / "out.bin"
    out.write_bytes(b"previous")
    if fragment is None:
        apsp.io.write_distances(out, dist)
        assert _read_out(out, 1).tolist() == [[0]]
        return
    with pytest.raises(ValueError) as info:
        apsp.io.write_distances(out, dist)
    assert fragment in str(info.value)
    assert out.read_bytes() == b"previous"  # the old file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]  # no temporary left


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
def test_write_distances_unreachable_is_exactly_int32_inf(tmp_path, dtype):
    # float32 cannot hold 2^30 - 1 (it rounds to 2^30): the marker must not pass through the float
    unreachable = np.inf if np.dtype(dtype).kind == "f" else apsp.INT32_INF if dtype == np.int32 else apsp.INT64_INF
    dist = np.array([[0, 7, unreachable], [unreachable, 0, 2], [1, 8, 0]], dtype=dtype)
    out = tmp_path / "out.bin"
    apsp.io.write_distances(out, dist)
    assert _read_out(out, 3).tolist() == [[0, 7, INF], [INF, 0, 2], [1, 8, 0]]


@pytest.mark.parametrize(("edges", "fragment"), [
    (np.array([[0, 1, np.nan]]), "edges[0, 2] = nan is not an integer"),
    (np.array([[0, 1, 2.0], [0.5, 1, 3.0]]), "edges[1, 0] = 0.5 is not an integer"),
    (np.array([[0, 1, np.inf]]), "edges[0, 2] = inf"),
])
def test_write_graph_refuses_edges_that_are_not_integers(tmp_path, edges, fragment):
    out = tmp_path / "g.bin"
    with pytest.raises(ValueError) as info:
        apsp.io.write_graph(out, 2, edges)
    assert fragment in str(info.value)
    assert not out.exists()
    apsp.io.write_graph(out, 2, np.array([[0, 1, 3.0]]))  # integral floats are fine
    assert apsp.io.read_graph(out)[0, 1] == 3


def test_write_into_a_missing_directory_is_an_oserror(tmp_path):
    dist = np.zeros((3, 3), dtype=np.int32)
    missing_dir = tmp_path / "nope" / "out.bin"
    with pytest.raises(OSError) as info:
        apsp.io.write_distances(missing_dir, dist)
    assert str(missing_dir) in str(info.value)  # the path asked for, not a temporary file's
    assert not (tmp_path / "nope").exists()


def test_write_follows_symlinks_and_writes_fifos_in_place(tmp_path):
    dist = np.array([[0, 7], [INF, 0]], dtype=np.int32)
    target, link = tmp_path / "target.bin", tmp_path / "link.bin"
    target.write_bytes(b"old")
    link.symlink_to(target.name)
    apsp.io.write_distances(link, dist)
    assert link.is_symlink() and _read_out(target, 2).tolist() == [[0, 7], [INF, 0]]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    apsp.io.write_distances(fifo, dist)  # a rename would have replaced the FIFO by a file
    reader.join(timeout=30)
    assert got == [dist.astype("<i4").tobytes()] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bin", "pipe", "target.bin"]


def test_write_into_a_folder_names_the_folder(tmp_path):
    with pytest.raises(IsADirectoryError) as info:
        apsp.io.write_distances(tmp_path, np.zeros((2, 2), dtype=np.int32))
    assert f"cannot write {tmp_path}: it is a folder" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_write_graph_refuses_a_fractional_n(tmp_path):
    with pytest.raises(TypeError, match="n=3.5"):
        apsp.io.write_graph(tmp_path / "g.bin", 3.5, np.zeros((0, 3), dtype=np.int32))


def test_read_graph_of_another_format_says_what_it_expects(tmp_path):
    f = _bytes(tmp_path / "g.txt", b"3 2\n0 1 5\n1 2 7\n")
    with pytest.raises(ValueError, match="course-format graph file"):
        apsp.io.read_graph(f)


# ---- command line ---------------------------------------------------------------------------
def test_cli_info():
    proc = _cli("info")
    assert proc.returncode == 0, proc.stderr
    assert f"apsp {apsp.__version__}" in proc.stdout and "CPU engine:" in proc.stdout
    assert "CUDA engine:" in proc.stdout


def test_cli_demo_small():
    proc = _cli("demo", "--n", "150", "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "n=150" in out and "CPU engine" in out and "updates/s" in out and " ms" in out
    assert "agree with scipy" in out


def test_cli_demo_rejects_bad_arguments():
    for args in (("--n", "0"), ("--n", "abc"), ("--density", "1.5"), ("--density", "x"),
                 ("--seed", "-1"), ("--device", "tpu")):
        proc = _cli("demo", *args)
        assert proc.returncode in (1, 2) and proc.stderr, args
        assert args[1] in proc.stderr and args[0] in proc.stderr + " --device", proc.stderr
        assert "_int" not in proc.stderr and "Traceback" not in proc.stderr


def test_cli_solve_takes_int64_where_int32_sums_could_overflow(tmp_path):
    # (n - 1) * max w = 2 * 3e8 passes int32's bound, but every distance fits the output format.
    src, out = tmp_path / "g.bin", tmp_path / "d.bin"
    apsp.io.write_graph(src, 3, np.array([[0, 1, 300_000_000], [1, 2, 300_000_000]]))
    proc = _cli("solve", str(src), str(out), "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert _read_out(out, 3).tolist() == [[0, 300_000_000, 600_000_000], [INF, 0, 300_000_000],
                                          [INF, INF, 0]]
    apsp.io.write_graph(src, 3, np.array([[0, 1, 2**30 - 2], [1, 2, 2**30 - 2]]))
    proc = _cli("solve", str(src), str(out), "--device", "cpu")  # 2^31 - 4 does not fit
    assert proc.returncode == 1 and "dist[0, 2]" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_solve_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    n, m = 200, 3000
    edges = np.stack([rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 100, m)], axis=1)
    src, out = tmp_path / "g.bin", tmp_path / "d.bin"
    apsp.io.write_graph(src, n, edges)
    proc = _cli("solve", str(src), str(out), "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert f"n={n}" in proc.stderr
    g = apsp.io.read_graph(src)
    expected = apsp.solve(g, device="cpu")
    np.testing.assert_array_equal(_read_out(out, n), expected)
    assert_matches_scipy(expected, g)


@pytest.mark.parametrize("case", ["truncated", "vertex", "negative_cycle", "missing", "too_big"])
def test_cli_solve_failures_exit_1_without_output(tmp_path, case):
    src, out = tmp_path / "g.bin", tmp_path / "d.bin"
    if case == "truncated":
        _raw(src, 4, 3, [(0, 1, 1)])
        expected = "truncated"
    elif case == "vertex":
        _raw(src, 4, 1, [(0, 9, 1)])
        expected = "0 -> 9"
    elif case == "negative_cycle":
        _raw(src, 3, 3, [(0, 1, 1), (1, 2, 1), (2, 0, -5)])
        expected = "(total weight -3)"  # the cycle, found again in the file the solve consumed
    elif case == "missing":
        expected = "No such file"
    else:
        _raw(src, 2**31 - 1, 0)
        expected = "n=2147483647"
    proc = _cli("solve", str(src), str(out), "--device", "cpu")
    assert proc.returncode == 1
    assert proc.stderr.startswith("apsp: error:") and expected in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name != "g.bin"] == []  # no temporaries


def test_read_distances_round_trip_and_wrong_sizes(tmp_path):
    dist = np.array([[0, 7, INF], [3, 0, -2], [INF, INF, 0]], dtype=np.int32)
    out = tmp_path / "d.bin"
    apsp.io.write_distances(out, dist)
    back = apsp.io.read_distances(out)
    assert back.dtype == np.int32 and back.tolist() == dist.tolist()
    apsp.io.write_distances(out, np.zeros((0, 0), dtype=np.int32))
    assert apsp.io.read_distances(out).shape == (0, 0)
    for size in (7, 12, 16 + 4):
        with pytest.raises(ValueError, match=f"{size} bytes is not an n x n int32 matrix"):
            apsp.io.read_distances(_bytes(tmp_path / "x.bin", b"\0" * size))
    with pytest.raises(ValueError, match="read_graph"):  # a graph file handed to the wrong reader
        apsp.io.read_distances(_raw(tmp_path / "g.bin", 3, 1, [(0, 1, 5)]))


def test_write_distances_converts_and_checks_block_by_block(tmp_path, monkeypatch):
    monkeypatch.setattr(apsp.io, "_BLOCK_ELEMENTS", 8)  # 2 rows a block at n = 5
    dist = np.arange(25, dtype=np.float32).reshape(5, 5)
    dist[1, 1] = np.inf
    out = tmp_path / "d.bin"
    apsp.io.write_distances(out, dist)
    expected = np.arange(25, dtype=np.int64).reshape(5, 5)
    expected[1, 1] = INF  # exactly: float32 cannot hold 2^30 - 1
    assert _read_out(out, 5).tolist() == expected.tolist()
    dist[4, 3] = 0.5  # in the last block: the index names the row in the whole matrix
    with pytest.raises(ValueError, match=r"dist\[4, 3\] = 0.5 is not an integer"):
        apsp.io.write_distances(out, dist)
    wide = np.full((5, 5), apsp.INT64_INF, dtype=np.int64)
    wide[3, 2] = 2**31
    with pytest.raises(ValueError, match=r"dist\[3, 2\] = 2147483648 cannot be written"):
        apsp.io.write_distances(out, wide)
    assert _read_out(out, 5).tolist() == expected.tolist()  # the earlier file is untouched


def test_file_objects_round_trip_like_np_save_and_np_load(tmp_path):
    edges = np.array([[0, 1, 5], [1, 2, -1], [0, 1, 3], [2, 0, 4]])
    buf = io.BytesIO(b"lead")  # written at the current position, read from it
    buf.seek(4)
    apsp.io.write_graph(buf, 3, edges)
    apsp.io.write_graph(tmp_path / "g.bin", 3, edges)
    assert not buf.closed and buf.getvalue()[4:] == (tmp_path / "g.bin").read_bytes()
    buf.seek(4)
    g = apsp.io.read_graph(buf)
    assert not buf.closed and buf.tell() == len(buf.getvalue())
    np.testing.assert_array_equal(g, apsp.io.read_graph(tmp_path / "g.bin"))
    with open(tmp_path / "g.bin", "rb") as f:  # an open file, and an unbuffered one
        np.testing.assert_array_equal(apsp.io.read_graph(f), g)
    with open(tmp_path / "g.bin", "rb", buffering=0) as f:
        np.testing.assert_array_equal(apsp.io.read_graph(f), g)
    dist = apsp.solve(g, device="cpu")
    out = io.BytesIO()
    apsp.io.write_distances(out, dist)
    apsp.io.write_distances(tmp_path / "d.bin", dist)
    assert out.getvalue() == (tmp_path / "d.bin").read_bytes()
    out.seek(0)
    back = apsp.io.read_distances(out)
    assert back.dtype == np.int32 and back.flags.writeable and back.tolist() == dist.tolist()
    with open(tmp_path / "d2.bin", "wb") as f:  # float input converted the same way
        apsp.io.write_distances(f, np.where(dist == INF, np.inf, dist).astype(np.float64))
    assert (tmp_path / "d2.bin").read_bytes() == out.getvalue()
    two = io.BytesIO()  # records one after the other: each read takes one graph, as np.load
    apsp.io.write_graph(two, 3, edges[:2])
    apsp.io.write_graph(two, 2, np.array([[1, 0, 7]]))
    two.seek(0)
    first, second = apsp.io.read_graph(two), apsp.io.read_graph(two)
    assert first.shape == (3, 3) and second.tolist() == [[0, INF], [7, 0]]
    assert two.tell() == len(two.getvalue())
    empty = io.BytesIO()
    apsp.io.write_distances(empty, np.zeros((0, 0), dtype=np.int32))
    assert empty.getvalue() == b"" and apsp.io.read_distances(io.BytesIO()).shape == (0, 0)


class _Trickle(io.RawIOBase):
    """A raw binary writer that takes at most 5 bytes a call, as raw files may."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        part = bytes(memoryview(b)[:5])
        self.data += part
        return len(part)


def test_a_raw_writer_that_takes_part_is_written_to_the_end():
    dist = np.arange(49, dtype=np.int32).reshape(7, 7)
    sink = _Trickle()
    apsp.io.write_distances(sink, dist)
    assert bytes(sink.data) == dist.astype("<i4").tobytes()


def test_file_objects_malformed_or_in_text_mode_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"<BytesIO>: header says m=2 .*truncated"):
        apsp.io.read_graph(io.BytesIO(struct.pack("<iiiii", 3, 2, 0, 1, 1)))
    with pytest.raises(ValueError, match="<BytesIO>: 7 bytes is not an n x n int32 matrix"):
        apsp.io.read_distances(io.BytesIO(b"\0" * 7))
    apsp.io.write_graph(tmp_path / "g.bin", 2, np.array([[0, 1, 1]]))
    with open(tmp_path / "g.bin") as f, pytest.raises(TypeError, match=r"text mode.*'rb'") as info:
        apsp.io.read_graph(f)
    assert str(tmp_path / "g.bin") in str(info.value)
    with pytest.raises(TypeError, match=r"<StringIO> is open in text mode.*'rb'"):
        apsp.io.read_distances(io.StringIO("abcd"))
    with pytest.raises(TypeError, match=r"<StringIO> is open in text mode.*'wb'"):
        apsp.io.write_distances(io.StringIO(), np.zeros((2, 2), dtype=np.int32))
    with pytest.raises(TypeError, match=r"path \(str or os.PathLike\) or a binary file object "
                                        r"with .read\(\), got int"):
        apsp.io.read_graph(3)
    bad = io.BytesIO()  # nothing is written when a value cannot be
    with pytest.raises(ValueError, match=r"dist\[1, 0\] = 0.5 is not an integer"):
        apsp.io.write_distances(bad, np.array([[0.0, 1.0], [0.5, 0.0]]))
    assert bad.getvalue() == b""


def _solve_piped(tmp_path, n=60, seed=3):
    rng = np.random.default_rng(seed)
    m = 4 * n
    edges = np.stack([rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 50, m)], axis=1)
    src = tmp_path / "g.bin"
    apsp.io.write_graph(src, n, edges)
    return src, apsp.solve(apsp.io.read_graph(src), device="cpu")


def test_cli_solve_streams_through_pipes(tmp_path):
    # /dev/stdin and /dev/stdout as pipes: their /proc links name no real file, and a pipe's
    # size is 0 until it is read to its end
    src, expected = _solve_piped(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "apsp", "solve", "/dev/stdin", "/dev/stdout",
                           "--device", "cpu"], input=src.read_bytes(), capture_output=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    n = expected.shape[0]
    assert np.frombuffer(proc.stdout, dtype="<i4").reshape(n, n).tolist() == expected.tolist()
    proc = subprocess.run([sys.executable, "-m", "apsp", "solve", "/dev/stdin", "/dev/stdout"],
                          input=src.read_bytes() + b"\0", capture_output=True, timeout=300)
    assert proc.returncode == 1 and b"trailing bytes" in proc.stderr and proc.stdout == b""


def test_read_from_a_fifo(tmp_path):
    src, expected = _solve_piped(tmp_path, n=5)
    fifo = tmp_path / "in.pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(src.read_bytes()))
    writer.start()
    g = apsp.io.read_graph(fifo)
    writer.join(timeout=30)
    assert g.tolist() == apsp.io.read_graph(src).tolist()


def test_cli_checks_the_output_place_before_solving(tmp_path):
    src = _raw(tmp_path / "g.bin", 3, 3, [(0, 1, 1), (1, 2, 1), (2, 0, -5)])  # a negative cycle
    for out, expected in ((tmp_path / "nope" / "d.bin", "its folder does not exist"),
                          (tmp_path, "it is a folder")):
        proc = _cli("solve", str(src), str(out), "--device", "cpu")
        assert proc.returncode == 1 and expected in proc.stderr, proc.stderr
        assert "negative cycle" not in proc.stderr  # refused before the solve
        assert proc.stderr.count(str(out)) == 1  # the path once, not again as errno's filename


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_cli_refuses_an_unwritable_folder_before_solving(tmp_path):
    src = _raw(tmp_path / "g.bin", 2, 1, [(0, 1, 1)])
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        proc = _cli("solve", str(src), str(locked / "d.bin"), "--device", "cpu")
    finally:
        locked.chmod(0o700)
    assert proc.returncode == 1 and "is not writable" in proc.stderr, proc.stderr


def test_cli_ctrl_c_exits_130_without_output(tmp_path):
    # SIGINT once the progress bar has drawn, so the solve is running: the int32 kernels
    # (APSP_CPU_NARROW=0: not the 16-bit solve, several times faster), 46 of its 47 rounds left
    n = 3000
    rng = np.random.default_rng(0)
    m = 20 * n
    edges = np.stack([rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 50, m)], axis=1)
    src, out = tmp_path / "g.bin", tmp_path / "d.bin"
    apsp.io.write_graph(src, n, edges)
    env = dict(os.environ, PYTHONUNBUFFERED="1", APSP_CPU_NARROW="0", APSP_CUDA_NARROW="0")
    proc = subprocess.Popen([sys.executable, "-m", "apsp", "solve", str(src), str(out), "--device",
                             "cpu", "--progress"], stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stderr.read(1)  # the bar's first output: the rounds have started
        proc.send_signal(2)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert b"apsp: interrupted" in err and b"Traceback" not in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["g.bin"]


def test_cli_negative_cycle_from_a_pipe_keeps_its_error(tmp_path):
    # the solve consumed the matrix; a pipe cannot be read again to name the cycle, so the
    # error is the negative cycle's, without the cycle (a file's is named: the test above)
    src = _raw(tmp_path / "g.bin", 3, 3, [(0, 1, 1), (1, 2, 1), (2, 0, -5)])
    proc = subprocess.run([sys.executable, "-m", "apsp", "solve", "/dev/stdin", str(tmp_path / "d.bin"),
                           "--device", "cpu"], input=src.read_bytes(), capture_output=True,
                          timeout=300)
    assert proc.returncode == 1 and b"negative cycle: vertices found" in proc.stderr, proc.stderr


class _WouldBlock(io.RawIOBase):
    """A non-blocking raw writer that takes 5 bytes, then would block (None), or a broken one
    that takes nothing (0)."""

    def __init__(self, then):
        self.then, self.calls = then, 0

    def writable(self):
        return True

    def write(self, b):
        self.calls += 1
        return 5 if self.calls == 1 else self.then


@pytest.mark.parametrize("then,exc", [(None, BlockingIOError), (0, OSError)], ids=["none", "zero"])
def test_a_writer_that_stops_taking_bytes_is_an_error(then, exc):
    sink = _WouldBlock(then)
    with pytest.raises(exc, match="would block|took 0 of"):
        apsp.io.write_distances(sink, np.zeros((4, 4), dtype=np.int32))
    assert sink.calls == 2
