"""Benchmark of apsp.solve_batch (many graphs of one size in one call) against what users would
otherwise run for a batch of small graphs, in one run, with the GPU's measured min-plus ceiling
(benchmarks/ceiling.cu):
  - apsp.solve_batch on a torch tensor on the GPU (CUDA events on its stream; check=True, the
    default, and check=False), and from NumPy end to end (wall time, host -> GPU -> host);
  - apsp.solve called once per graph on the same tensor (wall time, synchronised);
  - the PyTorch loop over k on the whole batch, `torch.minimum(D, D[:, :, k, None] +
    D[:, None, k, :], out=D)` (n launches; CUDA events);
  - apsp's CPU engine on the batch (apsp.solve_batch(..., device="cpu"));
  - SciPy's floyd_warshall once per graph on one CPU core (float64), timed on the first --scipy
    graphs and scaled to the batch (the note says so);
  - apsp.solve_batch(..., return_predecessors=True): on the GPU (the torch tensor: graph by graph
    through apsp.solve, wall time, synchronised) and on the CPU engine (NumPy, its own batch).
Graphs: weights 1..99, 70% of pairs without an edge (molecule-sized graphs, integer weights so
that every result is compared for equality), float32 and int32. Every apsp result and the
PyTorch loop's are checked equal to apsp.solve's per graph.

Usage: python benchmarks/bench_batch.py --bin BUILD_DIR --out DIR [--tag h200] [--reps 5]
  (BUILD_DIR holds the compiled `ceiling`). Writes batch_<tag>.json and batch_<tag>_summary.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import scipy.sparse.csgraph as csgraph

import apsp
from machine_facts import gpu_ceilings, machine, results_doc, save_results

CASES = ((1024, 32), (8192, 32), (4096, 64), (1024, 128), (256, 256))  # (graphs, n)


def batch(count: int, n: int, dtype: str, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = rng.integers(1, 100, size=(count, n, n)).astype(np.float64)
    g[rng.random((count, n, n)) < 0.7] = np.inf
    if dtype == "int32":
        return np.where(np.isinf(g), apsp.INT32_INF, g).astype(np.int32)
    return g.astype(dtype)


def events(torch, call, reps: int, before=lambda: None) -> float:
    """Median seconds of call() by CUDA events on the current stream, after a warm-up; before()
    runs ahead of each start event, untimed (a copy to restore, a spin kernel)."""
    times = []
    for rep in range(reps + 1):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        before()
        start.record()
        call()
        end.record()
        end.synchronize()
        if rep:
            times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def wall(call, reps: int, sync=lambda: None) -> float:
    """Median wall seconds of call() (synchronised), after a warm-up."""
    times = []
    for rep in range(reps + 1):
        sync()
        t0 = time.perf_counter()
        call()
        sync()
        if rep:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="folder with the compiled ceiling")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="h200")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scipy", type=int, default=128, help="graphs SciPy is timed on")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import torch

    ceilings, peak = gpu_ceilings(args.bin)
    ceiling_of = {"int32": "int32", "float32": "float32"}
    results, rows = [], []

    def add(impl, dtype, n, count, seconds, note):
        upd = count * n ** 3
        step = ceiling_of[dtype]
        frac = upd / seconds / peak[step] if impl.startswith(("apsp-gpu", "torch")) else None
        results.append({"impl": impl, "dtype": dtype, "n": n, "seconds": seconds,
                        "updates_per_s": upd / seconds, "fraction_of_ceiling": frac,
                        "note": f"a batch of {count} graphs of n = {n}; {note}"})
        return seconds

    all_equal = True
    for dtype in ("float32", "int32"):
        for count, n in CASES:
            g = batch(count, n, dtype)
            t = torch.from_numpy(g).cuda()
            want = np.stack([apsp.solve(x, device="cpu") for x in g])
            r = {"dtype": dtype, "count": count, "n": n}
            out = apsp.solve_batch(t)
            equal = np.array_equal(out.cpu().numpy(), want)
            r["batch"] = events(torch, lambda: apsp.solve_batch(t), args.reps)
            r["batch_unchecked"] = events(torch, lambda: apsp.solve_batch(t, check=False), args.reps)
            host = apsp.solve_batch(g)
            equal = equal and np.array_equal(host, want)
            r["batch_numpy"] = wall(lambda: apsp.solve_batch(g), args.reps)
            loop_reps = max(1, min(args.reps, int(2e4 // count)))
            r["per_graph"] = wall(lambda: [apsp.solve(t[b]) for b in range(count)], loop_reps,
                                  torch.cuda.synchronize)

            def torch_loop():  # Floyd-Warshall's start: the weights, 0 on the diagonal
                d = t.clone()
                d.diagonal(dim1=1, dim2=2).zero_()
                for k in range(n):
                    torch.minimum(d, d[:, :, k, None] + d[:, None, k, :], out=d)
                return d

            equal = equal and np.array_equal(torch_loop().cpu().numpy(), want)
            r["torch_loop"] = events(torch, torch_loop, args.reps)
            cpu = apsp.solve_batch(g, device="cpu")
            equal = equal and np.array_equal(cpu, want)
            r["cpu_batch"] = wall(lambda: apsp.solve_batch(g, device="cpu"), max(1, args.reps // 2))
            # with predecessors: the distances must still be each graph's own
            gpu_pred = apsp.solve_batch(t, return_predecessors=True)
            cpu_pred = apsp.solve_batch(g, device="cpu", return_predecessors=True)
            equal = (equal and np.array_equal(gpu_pred[0].cpu().numpy(), want)
                     and np.array_equal(cpu_pred[0], want))
            r["gpu_pred"] = wall(lambda: apsp.solve_batch(t, return_predecessors=True),
                                 loop_reps, torch.cuda.synchronize)
            r["cpu_pred"] = wall(lambda: apsp.solve_batch(g, device="cpu", return_predecessors=True),
                                 max(1, args.reps // 2))
            part = [np.where(np.isinf(x.astype(np.float64)) | (x >= apsp.INT32_INF), 0, x)
                    .astype(np.float64) for x in g[:args.scipy]]
            t0 = time.perf_counter()
            for x in part:
                csgraph.floyd_warshall(x)
            r["scipy"] = (time.perf_counter() - t0) * count / len(part)
            r["equal"] = bool(equal)
            all_equal = all_equal and equal
            rows.append(r)
            b = r["batch"]
            add("apsp-gpu-batch", dtype, n, count, b,
                f"apsp.solve_batch(torch tensor on the GPU), checks on (two host syncs), CUDA "
                f"events, median of {args.reps}; check=False {r['batch_unchecked'] * 1e3:.3f} ms; "
                f"from NumPy end to end {r['batch_numpy'] * 1e3:.2f} ms; "
                f"{r['per_graph'] / b:.0f}x apsp.solve once per graph "
                f"({r['per_graph'] * 1e3:.1f} ms), {r['torch_loop'] / b:.1f}x the PyTorch loop "
                f"over k on the batch ({r['torch_loop'] * 1e3:.2f} ms), {r['scipy'] / b:.0f}x "
                f"SciPy per graph; results equal: {equal}")
            add("apsp-cpu-batch", dtype, n, count, r["cpu_batch"],
                f"apsp.solve_batch(numpy, device='cpu'), {apsp.info()['cpu_threads']} threads; "
                f"{r['scipy'] / r['cpu_batch']:.0f}x SciPy per graph; with predecessors "
                f"{r['cpu_pred'] * 1e3:.1f} ms, against {r['gpu_pred'] * 1e3:.1f} ms on the GPU "
                "graph by graph (the torch tensor, wall time)")
            add("torch-loop-batch", dtype, n, count, r["torch_loop"],
                "the PyTorch loop over k on the whole batch, CUDA events")
            add("scipy-per-graph", dtype, n, count, r["scipy"],
                f"scipy.sparse.csgraph.floyd_warshall per graph (float64, one core), timed on "
                f"{len(part)} graphs and scaled to {count}")
            print(f"{dtype} {count} x n={n}: batch {b * 1e3:.3f} ms (unchecked "
                  f"{r['batch_unchecked'] * 1e3:.3f}, NumPy e2e {r['batch_numpy'] * 1e3:.2f}), "
                  f"per graph {r['per_graph'] * 1e3:.1f}, torch loop {r['torch_loop'] * 1e3:.2f}, "
                  f"cpu batch {r['cpu_batch'] * 1e3:.1f}, scipy {r['scipy'] * 1e3:.0f} ms, "
                  f"with predecessors gpu {r['gpu_pred'] * 1e3:.1f} cpu {r['cpu_pred'] * 1e3:.1f}; "
                  f"{count * n ** 3 / b / peak[ceiling_of[dtype]]:.1%} of the ceiling; "
                  f"equal {equal}", flush=True)
    doc = results_doc("bench_batch.py", machine(), ceilings=ceilings, results=results,
                      measured=rows)
    table = ["| dtype | graphs | n | solve_batch ms | % of peak | check=False ms | from NumPy ms "
             "| apsp.solve per graph ms | PyTorch loop ms | CPU engine batch ms | SciPy per graph "
             "ms | with predecessors: GPU ms | CPU ms | equal |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {r['dtype']} | {r['count']} | {r['n']} | {r['batch'] * 1e3:.3f}"
                     f" | {r['count'] * r['n'] ** 3 / r['batch'] / peak[ceiling_of[r['dtype']]]:.1%}"
                     f" | {r['batch_unchecked'] * 1e3:.3f} | {r['batch_numpy'] * 1e3:.2f}"
                     f" | {r['per_graph'] * 1e3:.1f} | {r['torch_loop'] * 1e3:.2f}"
                     f" | {r['cpu_batch'] * 1e3:.1f} | {r['scipy'] * 1e3:.0f}"
                     f" | {r['gpu_pred'] * 1e3:.1f} | {r['cpu_pred'] * 1e3:.1f}"
                     f" | {'yes' if r['equal'] else 'NO'} |")
    save_results(args.out, f"batch_{args.tag}", doc,
                 f"apsp.solve_batch: many small graphs in one call ({doc['machine']['gpu']})",
                 "Milliseconds for the whole batch; GPU rows by CUDA events on the tensor's "
                 f"stream (median of {args.reps}), the others wall time. % of peak: the batch's "
                 "updates (count x n^3) a second against the GPU's measured min-plus ceiling. "
                 f"SciPy: one core, float64, timed on {args.scipy} graphs and scaled. With "
                 "predecessors: the GPU graph by graph through apsp.solve, the CPU engine's "
                 "batch; equal: every distance matrix equals apsp.solve's.", table)
    if not all_equal:
        print("a result differs from apsp.solve per graph", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
