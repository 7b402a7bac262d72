"""GPU benchmark of the cost of predecessors (issue 5: solving with return_predecessors at
n = 10000 should cost <= 1.6x solving without): device time of the same graph solved without and
with predecessors, in one run, by CUDA events (the timing code of bench_gpu.py). The graph (weights
1..99) puts every dtype on the tagged plan (engine.cu; floats with integer weights run it on their
integer twin); the same int32 solve on the general plan (APSP_CUDA_TILES=pred32, impl
apsp-gpu-pred32) and float32 with fractional weights (1..100: the argmin plan, impl
apsp-gpu-pred-fractional, and the general plan forced, apsp-gpu-pred32-fractional), float64 alike,
are timed too.

Usage: python benchmarks/bench_pred.py --out DIR [--tag h100] [--n 10000]
Writes pred_<tag>.json (the schema report.py reads) into --out."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys

import torch

from bench_gpu import fractional, random_graph, time_device
from machine_facts import machine


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="h100")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = []
    cases = (("int32", "integer", (None, "pred32")), ("float32", "integer", (None,)),
             ("float32", "fractional", (None, "pred32")), ("int64", "integer", (None,)),
             ("float64", "integer", (None,)), ("float64", "fractional", (None, "pred32")))
    for dtype, weights, plans in cases:
        orig = random_graph(args.n, dtype)
        if weights == "fractional":  # the same graph, weights in [1, 100) with fractions
            orig = fractional(orig)
        base = time_device(orig, args.reps, checks=False)
        for plan in plans:
            if plan:
                os.environ["APSP_CUDA_TILES"] = plan
            try:
                with_pred = time_device(orig, args.reps, checks=False, pred=True)
            finally:
                os.environ.pop("APSP_CUDA_TILES", None)
            ratio = with_pred / base
            impl = "apsp-gpu-" + (plan or "pred") + ("-fractional" if weights == "fractional" else "")
            note = (f"device time with predecessors{' on the general plan (' + plan + ')' if plan else ''}"
                    f", {weights} weights, checks off: {ratio:.2f}x the same solve without "
                    f"({base * 1e3:.1f} ms in this run; target <= 1.6x)")
            results.append({"impl": impl, "dtype": dtype, "n": args.n, "seconds": with_pred,
                            "updates_per_s": float(args.n) ** 3 / with_pred,
                            "fraction_of_ceiling": None, "note": note, "ratio_to_without": ratio})
            print(f"{dtype:8s} {impl:26s} n={args.n}: without {base * 1e3:9.1f} ms, with predecessors "
                  f"{with_pred * 1e3:9.1f} ms ({ratio:.2f}x)", flush=True)
        del orig
        torch.cuda.empty_cache()
    doc = {"benchmark": "bench_pred.py", "command": " ".join([sys.executable] + sys.argv),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(), "ceilings": [], "results": results}
    path = os.path.join(args.out, f"pred_{args.tag}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
