"""Command line: python -m apsp demo | info | solve IN OUT."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Optional, Sequence

import numpy as np


DEVICE_HELP = ("cpu, cuda, cuda:N, or GPUs split by commas such as cuda:0,cuda:1 (one solve split "
               "over them); default: a GPU if usable")


def _device_arg(text: str) -> "str | list[str]":
    """--device: one device, or a list of GPUs written with commas."""
    return [part.strip() for part in text.split(",") if part.strip()] if "," in text else text


def _demo(args: argparse.Namespace) -> int:
    import scipy.sparse.csgraph as csgraph

    import apsp
    from apsp._devices import default_host_target, parse_device
    from apsp._progress import make_progress

    rng = np.random.default_rng(args.seed)
    n = args.n
    g = rng.uniform(1.0, 100.0, size=(n, n)).astype(np.float64)
    g[rng.random((n, n)) > args.density] = np.inf  # sparse-ish random directed graph
    target = parse_device(args.device) or default_host_target()
    label = ("CPU engine" if target.engine == "cpu" else f"GPU cuda:{target.index}" if not
             target.helpers else "GPUs " + ", ".join(f"cuda:{i}" for i in (target.index, *target.helpers)))
    print(f"apsp demo: random directed graph, n={n}, density {args.density}, float64, on the {label}")
    apsp.solve(g[:64, :64], device=args.device)  # warm-up: module load, CUDA context
    if args.progress:
        make_progress(True, "")  # loads tqdm (tens of ms) outside the timing; draws no bar yet
    t0 = time.perf_counter()
    dist = apsp.solve(g, device=args.device, progress=args.progress)
    t_apsp = time.perf_counter() - t0
    masked = np.ma.masked_invalid(g)
    t0 = time.perf_counter()
    ref = csgraph.floyd_warshall(masked, directed=True)
    t_scipy = time.perf_counter() - t0
    np.testing.assert_allclose(dist, ref, rtol=1e-12, atol=0)
    updates = float(n) ** 3
    print(f"  apsp : {t_apsp * 1e3:9.1f} ms  {updates / t_apsp / 1e9:8.2f} G updates/s")
    print(f"  SciPy: {t_scipy * 1e3:9.1f} ms  {updates / t_scipy / 1e9:8.2f} G updates/s")
    print(f"  results agree with scipy.sparse.csgraph.floyd_warshall; apsp is {t_scipy / t_apsp:.1f}x faster")
    reachable = np.isfinite(dist).mean()
    print(f"  {reachable:.1%} of pairs reachable; mean distance {dist[np.isfinite(dist)].mean():.2f}")
    return 0


def _info(_: argparse.Namespace) -> int:
    import apsp
    from apsp._info import format_info

    print(format_info(apsp.info()))
    return 0


def _solve(args: argparse.Namespace) -> int:
    """Solve in place in the matrix just read, so that the command needs one n x n int32 array
    (two and a quarter more where int32 sums could overflow and it solves in int64), and write it
    from there; the output's place is checked before the solve."""
    import apsp
    from apsp._memory import check_host_memory
    from apsp.io import _write_target

    _write_target(args.output)
    dist = apsp.io.read_graph(args.input)
    n = dist.shape[0]
    t0 = time.perf_counter()
    try:
        try:
            apsp.solve(dist, overwrite=True, device=args.device, progress=args.progress)
        except OverflowError:  # int32 path lengths could overflow: the output format's bound decides
            check_host_memory(dist.size * 9, f"int32 path lengths could overflow, and solving "
                              f"n={n} in int64", "solve it on a machine with more memory")
            wide = dist.astype(np.int64)
            del dist
            wide[wide >= apsp.INT32_INF] = apsp.INT64_INF
            dist = wide
            apsp.solve(dist, overwrite=True, device=args.device, progress=args.progress)
    except apsp.NegativeCycleError as exc:  # the input was consumed: name a cycle from the file
        _name_cycle(exc, args.input)
        raise
    elapsed = time.perf_counter() - t0
    apsp.io.write_distances(args.output, dist)
    print(f"solved n={n} in {elapsed * 1e3:.1f} ms -> {args.output}", file=sys.stderr)
    return 0


def _name_cycle(exc: BaseException, path: str) -> None:
    """Add one negative cycle to `exc`, read again from `path`'s edges (no n x n matrix), where
    `path` is a regular file (a pipe was read once and is gone; a FIFO would wait for a writer)
    and the search would run; whatever goes wrong, `exc` stays the error."""
    import os
    import stat

    from apsp._cycles import MAX_VERTICES, name_cycle
    from apsp.io import _edges_as_sparse

    vertices = getattr(exc, "vertices", [])
    try:
        if not (0 < len(vertices) <= MAX_VERTICES and stat.S_ISREG(os.stat(path).st_mode)):
            return
        name_cycle(exc, _edges_as_sparse(path), True)
    except (OSError, ValueError, MemoryError):
        return


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value
    return parse


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apsp", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="solve a random graph, check it against SciPy, print timings")
    demo.add_argument("--n", type=_int_at_least(1), default=1000, help="vertices (default 1000)")
    demo.add_argument("--density", type=_probability, default=0.1, help="edge probability (default 0.1)")
    demo.add_argument("--seed", type=_int_at_least(0), default=0, help="random seed (default 0)")
    demo.add_argument("--device", default=None, type=_device_arg, help=DEVICE_HELP)
    demo.add_argument("--progress", action="store_true", help="show a progress bar")
    demo.set_defaults(func=_demo)
    inf = sub.add_parser("info", help="print build and device facts")
    inf.set_defaults(func=_info)
    solve = sub.add_parser("solve", help="solve a course-format graph file, write the distance file")
    solve.add_argument("input", help="graph file: int32 n, int32 m, then m int32 (src, dst, w) "
                       "triples, little-endian")
    solve.add_argument("output", help="distance file to write: n x n int32, row-major, "
                       "unreachable = 1073741823 (2^30 - 1)")
    solve.add_argument("--device", default=None, type=_device_arg, help=DEVICE_HELP)
    solve.add_argument("--progress", action="store_true", help="show a progress bar")
    solve.set_defaults(func=_solve)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("apsp: interrupted", file=sys.stderr)
        return 130  # the shell's code for SIGINT
    except (ValueError, TypeError, OverflowError, MemoryError, RuntimeError, OSError) as exc:
        print(f"apsp: error: {_message(exc)}", file=sys.stderr)
        return 1


def _message(exc: BaseException) -> str:
    """The error's text, without OSError's "[Errno N] ...: 'path'" decoration where the text
    already names the path (apsp.io's messages do)."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None \
            and str(exc.filename) in exc.strerror:
        return exc.strerror
    return str(exc)


if __name__ == "__main__":
    sys.exit(main())
