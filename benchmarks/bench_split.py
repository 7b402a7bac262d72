"""Benchmark of one host solve split over several GPUs (apsp.solve(g, device=[...]); engine.cu:
enqueue_split) against the same solve on one GPU, in one run, with the ceiling: the measured
min-plus peak of one GPU (benchmarks/ceiling.cu, on cuda:0) times the number of GPUs.

Each solve is timed two ways, medians of --reps calls after a warm-up:
  - end to end from NumPy (host -> GPUs -> host), wall time;
  - its "solve" stage alone (APSP_CUDA_TRACE's stage times: the solve's device work on the
    working matrix, the split's copies between the GPUs included, synchronised before the clock
    stops), without the upload and the download, which a split does not change.
The one-GPU solve runs twice: as apsp runs it (int32 inputs are solved while they arrive:
upload and rounds overlap), and uploaded first (APSP_CUDA_OVERLAP=0), as the split always is.
Where PyTorch is installed, the same graph as a tensor on cuda:0 is solved in place on one GPU
and split (device=[...], check=False), timed by CUDA events on the tensor's stream (the helpers'
work is ordered before the end event), median of --reps after a warm-up.
The graphs are general ones the split takes: int32 weights 1..15000 shifted by a potential
(negative edges, no negative cycle; |w| * (n - 1) stays within int32's bound to n = 24576) and
fractional float32
weights (the min3 step: its ceiling is float32-min3's), 70% of pairs without an edge (small
integer weights would take the narrow plan, which runs on one GPU).

Usage: python benchmarks/bench_split.py --bin BUILD_DIR --out DIR [--tag h200x2] [--reps 3]
  [--sizes 4096,6144,...] [--gpus N] (BUILD_DIR holds the compiled `ceiling`; N: split over
  cuda:0..cuda:N-1, every GPU by default). Writes split_<tag>.json and
  split_<tag>_summary.md into --out."""
from __future__ import annotations

import argparse
import os
import re
import sys
import time

import numpy as np

import apsp
from machine_facts import gpu_ceilings, machine, results_doc, save_results
from timing import engine_trace, env_set


def graph(n: int, dtype: str, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "int32":  # 1..15000 shifted by a potential: negative edges, no negative cycle
        p = rng.integers(0, 3000, size=n, dtype=np.int32)
        g = rng.integers(1, 15_001, size=(n, n), dtype=np.int32) + p[:, None] - p[None, :]
        g[rng.random((n, n), dtype=np.float32) < 0.7] = apsp.INT32_INF
    else:
        g = rng.integers(1, 100, size=(n, n)).astype(np.float32)
        g += rng.random((n, n), dtype=np.float32)
        g[rng.random((n, n), dtype=np.float32) < 0.7] = np.inf
    return g


def timed(g: np.ndarray, device, reps: int, **env: str) -> tuple[dict, np.ndarray]:
    """Medians of `reps` solves (after one warm-up): wall seconds end to end, and the solve
    stage's seconds from the trace; the plan and split lines of the last; and its result."""
    walls, stages, lines = [], [], []
    for rep in range(reps + 1):
        with env_set(**env):
            t0 = time.perf_counter()
            result = apsp.solve(g, device=device)
            wall = time.perf_counter() - t0
            _, trace = engine_trace(lambda: apsp.solve(g, device=device), "apsp cuda: ")
        stage = [float(m.group(1)) for ln in trace
                 if (m := re.match(r"apsp cuda: solve\s+([\d.]+) ms", ln))]
        if rep:
            walls.append(wall)
            if stage:
                stages.append(stage[0] * 1e-3)
        lines = [ln for ln in trace if ln.startswith(("apsp cuda: plan", "apsp cuda: rounds"))]
    return {"wall_s": float(np.median(walls)),
            "solve_stage_s": float(np.median(stages)) if stages else None, "trace": lines}, result


def timed_device(torch, g: np.ndarray, device, reps: int) -> float:
    """Median seconds of `reps` in-place solves of a cuda:0 tensor (after one warm-up), CUDA
    events on its stream around the call; each rep solves a fresh copy, made before the start."""
    src = torch.from_numpy(g).cuda(0)
    times = []
    with torch.cuda.device(0):
        for rep in range(reps + 1):
            work = src.clone()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            apsp.solve(work, device=device, overwrite=True, check=False)
            end.record()
            end.synchronize()
            if rep:
                times.append(start.elapsed_time(end) * 1e-3)
            del work
    return float(np.median(times))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="folder with the compiled ceiling")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="h200x2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="4096,6144,8192,10000,16384,24576")
    ap.add_argument("--dtypes", default="int32,float32")
    ap.add_argument("--gpus", type=int, default=0,
                    help="split over cuda:0..cuda:GPUS-1 (default: every GPU of the machine)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    have = len(apsp.info()["devices"])
    count = args.gpus or have
    if not 2 <= count <= have:
        print(f"needs 2 GPUs or more, and at most the {have} this machine has: --gpus {count}",
              file=sys.stderr)
        return 2
    gpus = [f"cuda:{i}" for i in range(count)]
    ceilings, peak = gpu_ceilings(args.bin)
    print("ceilings of one GPU:", {k: f"{v / 1e12:.2f} T/s" for k, v in peak.items()}, flush=True)
    try:
        import torch
    except ImportError:
        torch = None
    rows, results = [], []
    equal_everywhere = True
    for dtype in args.dtypes.split(","):
        for n in [int(s) for s in args.sizes.split(",")]:
            g = graph(n, dtype)
            row = {"dtype": dtype, "n": n}
            row["one_gpu"], want = timed(g, "cuda:0", args.reps)
            row["one_gpu_upload_first"], _ = timed(g, "cuda:0", args.reps, APSP_CUDA_OVERLAP="0")
            row["split"], got = timed(g, gpus, args.reps)
            # The split's result is the one-GPU result bit for bit (engine.cu: enqueue_split).
            row["equal_to_one_gpu"] = bool(np.array_equal(got, want))
            equal_everywhere = equal_everywhere and row["equal_to_one_gpu"]
            del got, want
            one, split = row["one_gpu_upload_first"], row["split"]
            upd = float(n) ** 3
            step = "float32-min3" if dtype == "float32" else dtype  # its weights are >= 0
            row["split_ran"] = any(ln.startswith("apsp cuda: rounds split") for ln in split["trace"])
            row["speedup_solve_stage"] = one["solve_stage_s"] / split["solve_stage_s"]
            row["speedup_end_to_end"] = row["one_gpu"]["wall_s"] / split["wall_s"]
            row["fraction_of_ceiling"] = upd / split["solve_stage_s"] / (count * peak[step])
            row["one_gpu_fraction_of_ceiling"] = upd / one["solve_stage_s"] / peak[step]
            if torch is not None and row["split_ran"]:
                row["tensor_one_gpu_s"] = timed_device(torch, g, None, args.reps)
                row["tensor_split_s"] = timed_device(torch, g, gpus, args.reps)
                row["tensor_speedup"] = row["tensor_one_gpu_s"] / row["tensor_split_s"]
                row["tensor_fraction_of_ceiling"] = upd / row["tensor_split_s"] / (count * peak[step])
            rows.append(row)
            print(f"{dtype} n={n:6d}: one GPU {one['solve_stage_s'] * 1e3:8.1f} ms solve "
                  f"({row['one_gpu_fraction_of_ceiling']:.1%}), {gpus} "
                  f"{split['solve_stage_s'] * 1e3:8.1f} ms ({row['fraction_of_ceiling']:.1%}"
                  f" of {count}x), x{row['speedup_solve_stage']:.2f}; end to end "
                  f"{row['one_gpu']['wall_s'] * 1e3:.1f} / {split['wall_s'] * 1e3:.1f} ms "
                  f"x{row['speedup_end_to_end']:.2f}; equal to one GPU's: "
                  f"{row['equal_to_one_gpu']}; {split['trace']}"
                  + (f"; tensor on cuda:0 {row['tensor_one_gpu_s'] * 1e3:.1f} / "
                     f"{row['tensor_split_s'] * 1e3:.1f} ms x{row['tensor_speedup']:.2f}"
                     if "tensor_split_s" in row else ""), flush=True)
            if not row["split_ran"]:  # below the split's threshold: both ran on one GPU
                continue
            def result(impl: str, seconds: float, note: str) -> dict:
                return {"impl": impl, "dtype": dtype, "n": n, "seconds": seconds,
                        "updates_per_s": upd / seconds,
                        "fraction_of_ceiling": upd / seconds / (count * peak[step]),
                        "note": f"{note}; the fraction is of {count}x one GPU's {step} ceiling",
                        "gpus": count}

            results.append(result(
                "apsp-gpu-split", split["solve_stage_s"],
                f"apsp.solve(numpy, device={gpus}), the solve alone (upload and download left "
                f"out), median of {args.reps}; {row['speedup_solve_stage']:.2f}x one GPU's solve "
                f"in this run ({one['solve_stage_s'] * 1e3:.1f} ms, "
                f"{row['one_gpu_fraction_of_ceiling']:.1%} of its ceiling); end to end from NumPy "
                f"{split['wall_s'] * 1e3:.1f} ms against {row['one_gpu']['wall_s'] * 1e3:.1f} ms "
                f"on one GPU; result equal to one GPU's: {row['equal_to_one_gpu']}"))
            if "tensor_split_s" in row:
                results.append(result(
                    "apsp-gpu-split-tensor", row["tensor_split_s"],
                    f"apsp.solve(torch tensor on cuda:0, device={gpus}, overwrite=True, "
                    f"check=False), CUDA events on the tensor's stream, median of {args.reps}; "
                    f"{row['tensor_speedup']:.2f}x the same call on one GPU in this run "
                    f"({row['tensor_one_gpu_s'] * 1e3:.1f} ms)"))
    facts = machine()
    facts["gpu"] = f"{count}x {facts['gpu']}"  # the GPUs of one solve
    doc = results_doc("bench_split.py", facts, ceilings_of_one_gpu=ceilings, results=results,
                      measured=rows)
    table = ["| dtype | n | split ran | equal | one GPU solve ms | % of 1x peak | split solve ms | "
             f"% of {count}x peak | speedup | one GPU e2e ms | split e2e ms | e2e speedup "
             "| tensor one GPU ms | tensor split ms | tensor speedup |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {r['dtype']} | {r['n']} | {'yes' if r['split_ran'] else 'no'}"
                     f" | {'yes' if r['equal_to_one_gpu'] else 'NO'}"
                     f" | {r['one_gpu_upload_first']['solve_stage_s'] * 1e3:.1f}"
                     f" | {r['one_gpu_fraction_of_ceiling']:.1%} | {r['split']['solve_stage_s'] * 1e3:.1f}"
                     f" | {r['fraction_of_ceiling']:.1%} | {r['speedup_solve_stage']:.2f}"
                     f" | {r['one_gpu']['wall_s'] * 1e3:.1f} | {r['split']['wall_s'] * 1e3:.1f}"
                     f" | {r['speedup_end_to_end']:.2f}"
                     + (f" | {r['tensor_one_gpu_s'] * 1e3:.1f} | {r['tensor_split_s'] * 1e3:.1f}"
                        f" | {r['tensor_speedup']:.2f} |" if "tensor_split_s" in r else " | | | |"))
    save_results(args.out, f"split_{args.tag}", doc,
                 f"One solve split over {count} GPUs against one GPU ({facts['gpu']})",
                 "Solve: the device work between upload and download (APSP_CUDA_TRACE's stage), "
                 f"median of {args.reps}; the one-GPU solve uploaded first, as the split's is. "
                 f"Ceiling: one GPU's measured min-plus peak, {count}x for the split. End to end: "
                 "wall time from NumPy to NumPy, the one-GPU solve as apsp runs it (int32 solved "
                 "while it arrives), median of the same calls. Where the split did not run (below "
                 "its threshold) both columns are one GPU's. Equal: the split's result is the "
                 "one-GPU result bit for bit. Tensor: the same graph as a torch tensor on cuda:0 "
                 "solved in place (check=False), CUDA events on its stream, one GPU against the "
                 "split.", table)
    if not equal_everywhere:
        print("a split's result differs from one GPU's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
