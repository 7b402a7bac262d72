"""CPU benchmark: the apsp CPU engine side by side with its ceiling and SciPy's floyd_warshall, in
one run.

First the ceiling: benchmarks/ceiling_cpu.cpp, compiled here with the machine's C++ compiler ($CXX,
else c++) and the engine's native flags, measures the min-plus peak of all cores per dtype, before
the rows and again after them (a lent 2-core VM read int32 56.4 G/s once and 70-75 G/s in the
minutes around it; the peak is the better of the two); every row's fraction_of_ceiling is of its
dtype's figure (SciPy's of float64's). Then for each n: one
random directed graph (weights 1..99, each ordered pair an edge with probability --density, no edge
elsewhere), SciPy timed once on it (SciPy always computes in float64, whatever the input dtype, so
its one time is the baseline for every dtype), then apsp.solve(g, device="cpu") per dtype: one
warm-up call whose result must equal SciPy's (exactly: the weights are small integers, so every
path length is exact in every dtype), then the median of --reps timed calls. Times are end to end
from Python (input copy, checks, solve, finalize), with the narrow solve switched off
(APSP_CPU_NARROW=0), and then the same graph as a user's call takes it (the hub rows: the hub bound
takes weights 1..99 to 16-bit lengths). Then the narrow rows: the same edges with
weights small enough for 16-bit path lengths, each dtype against its own solve on that graph
(APSP_CPU_NARROW=0), checked against one more SciPy call. Then the predecessor rows: the main
graph with return_predecessors=True per dtype (distances equal to SciPy's, paths adding up),
against the same solve without and SciPy's floyd_warshall(return_predecessors=True). Writes JSON
(schema in benchmarks/report.py) and prints a table.
Not for: the GPU engine (bench_gpu.py).

Usage: python benchmarks/bench_cpu.py [--sizes 1024 2048] [--dtypes ...] [--reps 7] [--out FILE]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from scipy.sparse.csgraph import floyd_warshall

import apsp
from apsp import _core
from machine_facts import cpu_model, source_digest
from timing import env_set, wall_times

INT_INF = {"int32": apsp.INT32_INF, "int64": apsp.INT64_INF}
# The project's targets at n = 1024 and 2048 on a 2-core machine (speedup over SciPy).
TARGET = {"float32": 25.0, "float64": 12.0}
SCIPY_REPS = 3  # SciPy is serial and seconds long at these n: three calls give its median
HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_flags() -> list[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    return [x for x in flags if x.startswith(("avx", "fma", "sse4"))]
    except OSError:
        pass
    return []


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def measure_ceilings() -> list[dict]:
    """Builds and runs ceiling_cpu.cpp; its {"name", "dtype", "updates_per_s"} entries."""
    src = os.path.join(HERE, "ceiling_cpu.cpp")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "ceiling_cpu")
        cmd = [os.environ.get("CXX", "c++"), "-O3", "-march=native", "-fopenmp", "-std=c++17",
               "-I", os.path.join(HERE, "..", "src"), src, "-o", exe]
        try:
            subprocess.run(cmd, check=True, capture_output=True, text=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            detail = getattr(exc, "stderr", None) or exc
            raise SystemExit(f"could not build the CPU ceiling ({' '.join(cmd)}): {detail}\n"
                             "bench_cpu.py needs a C++ compiler with OpenMP; set CXX to pick one")
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["ceilings"]


def random_graph(n: int, density: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(rng.random((n, n)) < density, rng.integers(1, 100, (n, n)), np.inf)


def as_dtype(w: np.ndarray, dtype: str) -> np.ndarray:
    if dtype.startswith("float"):
        return w.astype(dtype)
    return np.where(np.isinf(w), INT_INF[dtype], w).astype(dtype)


def as_float(dist: np.ndarray, dtype: str) -> np.ndarray:
    """Distances as float64, the integer INF as inf (SciPy's form)."""
    got = dist.astype(np.float64)
    if not dtype.startswith("float"):
        got[got == INT_INF[dtype]] = np.inf
    return got


def paths_add_up(w: np.ndarray, dist: np.ndarray, pred: np.ndarray, pairs: int = 2000) -> bool:
    """Row 0 and `pairs` random pairs: the path apsp.path rebuilds from pred runs along edges of w
    (float64, inf: no edge) whose weights add up exactly to dist (float64: integer weights), or
    is empty where dist is inf. The tests check every pair; this gates the timing."""
    n = len(w)
    rng = np.random.default_rng(0)
    for i, j in [(0, j) for j in range(n)] + list(zip(rng.integers(0, n, pairs).tolist(),
                                                      rng.integers(0, n, pairs).tolist())):
        p = apsp.path(pred, i, j)
        if not np.isfinite(dist[i, j]):
            if p:
                return False
        elif p[0] != i or p[-1] != j or sum(w[u, v] for u, v in zip(p, p[1:])) != dist[i, j]:
            return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64", "int32", "int64"],
                    choices=["float32", "float64", "int32", "int64"])
    ap.add_argument("--reps", type=int, default=7, help="timed apsp calls per point (median)")
    ap.add_argument("--density", type=float, default=0.1)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu.json"))
    args = ap.parse_args()

    # Every row measures the solve of its dtype unless it says otherwise: the hub bound would take
    # these graphs (weights 1..99) to the narrow solve, so it is switched off here and back on
    # (APSP_CPU_NARROW=1) for the narrow and hub rows.
    os.environ["APSP_CPU_NARROW"] = "0"
    info = _core.info()
    load_before = load_average()
    machine = {"cpu": cpu_model(), "cores": os.cpu_count(), "gpu": None, "driver": None,
               "cuda": None, "openmp_threads": info["cpu_threads"], "cpu_flags": cpu_flags(),
               "python": platform.python_version(), "numpy": np.__version__,
               "scipy": __import__("scipy").__version__, "load_average_before": load_before}
    print(f"# {machine['cpu']}, {machine['cores']} cores, {info['cpu_threads']} OpenMP threads, "
          f"load average {load_before}", flush=True)
    ceilings = measure_ceilings()
    peak = {c["dtype"]: c["updates_per_s"] for c in ceilings}
    print("ceilings:", {k: f"{v / 1e9:.1f} G/s" for k, v in peak.items()}, flush=True)
    results: list[dict] = []

    steps: list[str] = []  # each result's ceiling step, for the fractions after the second read

    def row(impl, dtype, n, seconds, note, step=None, **extra):
        """One result; its fraction of the ceiling of `step` (default: the dtype's own step), as
        far as the first ceiling read goes (redone at the end)."""
        ups = float(n) ** 3 / seconds
        steps.append(step or dtype)
        results.append({"impl": impl, "dtype": dtype, "n": n, "seconds": seconds,
                        "updates_per_s": ups, "fraction_of_ceiling": ups / peak[step or dtype],
                        "note": note, **extra})

    def same_as_scipy(got, ref, dtype, n, what) -> bool:
        got = as_float(got, dtype)
        if np.array_equal(got, ref):
            return True
        bad = np.argwhere(got != ref)[0]
        print(f"apsp {dtype} n={n} ({what}) disagrees with SciPy at {tuple(bad)}: "
              f"{got[tuple(bad)]} vs {ref[tuple(bad)]}", file=sys.stderr)
        return False

    print(f"{'impl':9s} {'dtype':8s} {'n':>6s} {'seconds':>10s} {'G upd/s':>9s} {'ceiling':>8s}"
          f" {'vs SciPy':>9s} {'target':>7s}", flush=True)
    floyd_warshall(random_graph(64, args.density, seed=64))  # SciPy's first call, untimed
    for n in args.sizes:
        w = random_graph(n, args.density, seed=n)
        scipy_times, ref = wall_times(lambda: floyd_warshall(w), SCIPY_REPS)
        t_scipy = statistics.median(scipy_times)
        row("scipy", "float64", n, t_scipy,
            f"scipy.sparse.csgraph.floyd_warshall, median of {SCIPY_REPS} after a warm-up call "
            "(it computes in float64 for every input dtype; this time is the baseline of every "
            f"apsp dtype at this n; min {min(scipy_times):.4f} s, max {max(scipy_times):.4f} s)")
        print(f"{'scipy':9s} {'float64':8s} {n:6d} {t_scipy:10.4f} {n ** 3 / t_scipy / 1e9:9.2f} "
              f"{results[-1]['fraction_of_ceiling']:8.1%}", flush=True)
        for dtype in args.dtypes:
            g = as_dtype(w, dtype)
            got = apsp.solve(g, device="cpu")  # warm-up, and the check that gates the timing
            if not same_as_scipy(got, ref, dtype, n, "weights 1..99"):
                return 1
            times, _ = wall_times(lambda: apsp.solve(g, device="cpu"), args.reps)
            t = statistics.median(times)
            speedup = t_scipy / t
            target = TARGET.get(dtype)
            row("apsp-cpu", dtype, n, t,
                f"{speedup:.1f}x SciPy float64 ({t_scipy:.3f} s); median of {args.reps} "
                f"(min {min(times):.4f} s, max {max(times):.4f} s), result equal to SciPy's",
                speedup_vs_scipy=speedup, target_speedup=target)
            print(f"{'apsp-cpu':9s} {dtype:8s} {n:6d} {t:10.4f} {n ** 3 / t / 1e9:9.2f} "
                  f"{results[-1]['fraction_of_ceiling']:8.1%} {speedup:8.1f}x "
                  f"{f'{target:.0f}x' if target else '-':>7s}", flush=True)
            # The same graph as a user's solve takes it: (n - 1) * 99 > 32766, but the hub bound
            # (contract.hpp) shows that every distance fits 16 bits, so the narrow solve runs.
            with env_set(APSP_CPU_NARROW="1"):
                if not same_as_scipy(apsp.solve(g, device="cpu"), ref, dtype, n, "hub bound"):
                    return 1
                hub_times, _ = wall_times(lambda: apsp.solve(g, device="cpu"), args.reps)
            t_hub = statistics.median(hub_times)
            row("apsp-cpu-hub", dtype, n, t_hub,
                f"weights 1..99 (the row above's graph): the hub bound takes it to the narrow "
                f"solve; {t / t_hub:.2f}x faster than the {dtype} solve above; "
                f"{t_scipy / t_hub:.0f}x SciPy float64; median of {args.reps}, result equal to "
                f"SciPy's", step="narrow16", speedup_vs_scipy=t_scipy / t_hub)
            print(f"{'hub':9s} {dtype:8s} {n:6d} {t_hub:10.4f} {n ** 3 / t_hub / 1e9:9.2f} "
                  f"{results[-1]['fraction_of_ceiling']:8.1%} {t / t_hub:8.2f}x (own dtype)",
                  flush=True)

        # The narrow solve (fw_cpu.cpp: solve_narrow): the same edges with weights 1..top, every
        # path length within 15 bits ((n - 1) * top <= 32766), so the input scan picks 16-bit
        # lengths; against the dtype's own solve on the same graph (APSP_CPU_NARROW=0). The
        # fraction is of the 16-bit step's ceiling (narrow16).
        top = min(99, 32766 // (n - 1))
        wn = w.copy()
        edge = np.isfinite(w)
        wn[edge] = (w[edge] - 1) % top + 1
        ref_n = floyd_warshall(wn)  # the check of the narrow rows (one more SciPy call)
        for dtype in args.dtypes:
            g = as_dtype(wn, dtype)
            with env_set(APSP_CPU_NARROW="1"):
                if not same_as_scipy(apsp.solve(g, device="cpu"), ref_n, dtype, n,
                                     f"weights 1..{top}"):
                    return 1
                times, _ = wall_times(lambda: apsp.solve(g, device="cpu"), args.reps)
            wide_times, _ = wall_times(lambda: apsp.solve(g, device="cpu"), args.reps)
            t, t_wide = statistics.median(times), statistics.median(wide_times)
            row("apsp-cpu-narrow", dtype, n, t,
                f"weights 1..{top}: the narrow solve (16-bit lengths), chosen by the input scan; "
                f"{t_wide / t:.2f}x faster than the {dtype} solve on the same graph "
                f"(APSP_CPU_NARROW=0: {t_wide:.4f} s, {float(n) ** 3 / t_wide / peak[dtype]:.1%} "
                f"of the {dtype} ceiling); {t_scipy / t:.0f}x SciPy float64; median of "
                f"{args.reps}, result equal to SciPy's", step="narrow16",
                speedup_vs_scipy=t_scipy / t)
            print(f"{'narrow':9s} {dtype:8s} {n:6d} {t:10.4f} {n ** 3 / t / 1e9:9.2f} "
                  f"{results[-1]['fraction_of_ceiling']:8.1%} {t_wide / t:8.2f}x (own dtype)",
                  flush=True)

        # With predecessors (fw_cpu.cpp: solve_pred), on the main graph (weights 1..99, the
        # dtype's own solve): against the plain solve's row above and SciPy's predecessor call.
        scipy_pred_times, (ref_p, _) = wall_times(
            lambda: floyd_warshall(w, return_predecessors=True), SCIPY_REPS)
        t_scipy_pred = statistics.median(scipy_pred_times)
        row("scipy-pred", "float64", n, t_scipy_pred,
            f"scipy.sparse.csgraph.floyd_warshall(return_predecessors=True), median of "
            f"{SCIPY_REPS} (min {min(scipy_pred_times):.4f} s, max {max(scipy_pred_times):.4f} s); "
            "the baseline of every apsp-cpu-pred dtype at this n")
        for dtype in args.dtypes:
            g = as_dtype(w, dtype)
            dist, pred = apsp.solve(g, device="cpu", return_predecessors=True)
            if not same_as_scipy(dist, ref_p, dtype, n, "with predecessors"):
                return 1
            if not paths_add_up(w, as_float(dist, dtype), pred):
                print(f"apsp {dtype} n={n}: a predecessor path does not add up to its distance",
                      file=sys.stderr)
                return 1
            times, _ = wall_times(lambda: apsp.solve(g, device="cpu", return_predecessors=True),
                                  args.reps)
            t = statistics.median(times)
            t_plain = next(r["seconds"] for r in results
                           if (r["impl"], r["dtype"], r["n"]) == ("apsp-cpu", dtype, n))
            row("apsp-cpu-pred", dtype, n, t,
                f"with predecessors: {t / t_plain:.1f}x the same solve without ({t_plain:.4f} s); "
                f"{t_scipy_pred / t:.1f}x SciPy float64 with predecessors ({t_scipy_pred:.3f} s, "
                f"median of {SCIPY_REPS}); median of {args.reps} (min {min(times):.4f} s, max "
                f"{max(times):.4f} s), distances equal to SciPy's, paths add up (row 0 "
                "and 2000 random pairs)",
                speedup_vs_scipy=t_scipy_pred / t)
            print(f"{'pred':9s} {dtype:8s} {n:6d} {t:10.4f} {n ** 3 / t / 1e9:9.2f} "
                  f"{results[-1]['fraction_of_ceiling']:8.1%} {t_scipy_pred / t:8.1f}x (SciPy "
                  f"with predecessors)", flush=True)

    after = measure_ceilings()
    for c in ceilings:
        c["updates_per_s_before"] = c["updates_per_s"]
        c["updates_per_s_after"] = next(a["updates_per_s"] for a in after if a["name"] == c["name"])
        c["updates_per_s"] = max(c["updates_per_s_before"], c["updates_per_s_after"])
    peak = {c["dtype"]: c["updates_per_s"] for c in ceilings}
    for r, step in zip(results, steps):
        r["fraction_of_ceiling"] = r["updates_per_s"] / peak[step]
    print("ceilings after the rows:", {a["dtype"]: f"{a['updates_per_s'] / 1e9:.1f} G/s"
                                       for a in after}, "; the fractions use the better of the two",
          flush=True)
    machine["load_average_after"] = load_average()
    out = {"benchmark": "bench_cpu.py",
           "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine, "source": source_digest(),
           "ceilings": ceilings,
           "graph": f"random directed, weights 1..99, edge density {args.density}, no edge "
                    "elsewhere (the narrow rows: the same edges, weights 1..top)",
           "results": results}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"# load average after: {machine['load_average_after']}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
