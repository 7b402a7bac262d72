"""GPU benchmark of the cost of predecessors (issue 5: solving with return_predecessors at
n = 10000 should cost <= 1.6x solving without): device time of the same graph solved without and
with predecessors, in one run, by CUDA events (the timing code of bench_gpu.py). The graph (weights
1..99) puts every dtype on the argmin plan (engine.cu: int32 below kArgminMaxN, float32 on its
int32 twin by the same rule; int64 and float64 on their own kernels); APSP_CUDA_ARGMIN=0 times the
tagged plan beside it (impl apsp-gpu-tagged: int32 and int64 on their own kernels, as int32 from
kArgminMaxN; the floats on their integer twins). The same int32 solve on the general plan
(APSP_CUDA_TILES=pred32, impl apsp-gpu-pred32) and float32 with fractional weights (1..100: the
argmin plan, impl apsp-gpu-pred-fractional, and the general plan forced,
apsp-gpu-pred32-fractional), float64 alike, are timed too; and the engine's choice with cp.async
copies instead of TMA for the interior tiles (APSP_CUDA_TMA=0, impl apsp-gpu-pred-cpasync; its
ratio is to the solve without predecessors with TMA). Signed weights (the same graph's weights
minus one, so some are zero, plus p[i] - p[j]: negative edges, no negative cycle) need the
(length, hops) order: int64 and float64 take the tagged plan on hop-scaled keys (tagged.cuh; impl
apsp-gpu-pred-signed), timed beside the general plan forced (apsp-gpu-pred32-signed). int32
weights of 10..999 (path lengths past the int32 tags' bound, which would keep them on the argmin
plan from kArgminMaxN too) take the argmin plan (impl apsp-gpu-pred-long), timed beside the
general plan forced (apsp-gpu-pred32-long).

Usage: python benchmarks/bench_pred.py --out DIR [--tag h100] [--n 10000]
Writes pred_<tag>.json (the schema report.py reads) into --out."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys

import torch

from bench_gpu import INT_INF, env_set, fractional, random_graph, time_device
from machine_facts import machine, source_digest


def signed(orig: torch.Tensor, dtype: str, seed: int = 3) -> torch.Tensor:
    """random_graph's weights minus one (1% of the edges weigh 0, so zero-weight cycles) plus
    p[i] - p[j] with p in 0..29 (negative edges; every cycle keeps its weight, so none is
    negative)."""
    g = torch.Generator(device=orig.device).manual_seed(seed)
    p = torch.randint(0, 30, (orig.shape[0],), generator=g, device=orig.device).to(orig.dtype)
    edge = orig < INT_INF.get(dtype, float("inf"))
    return torch.where(edge, orig - 1 + p[:, None] - p[None, :], orig)


def long_paths(orig: torch.Tensor, seed: int = 4) -> torch.Tensor:
    """random_graph's int32 weights times 10 plus 0..9 (10..999): at n = 10000 its path lengths
    pass the int32 tags' bound (tagged.cuh: (n - 1) * max w <= 2^22 - 2, max w 419)."""
    g = torch.Generator(device=orig.device).manual_seed(seed)
    extra = torch.randint(0, 10, orig.shape, generator=g, device=orig.device, dtype=orig.dtype)
    return torch.where(orig < INT_INF["int32"], orig * 10 + extra, orig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="h100")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = []
    # Per case the plans timed: the engine's choice, and others by an environment switch.
    chosen, general = ("pred", {}), ("pred32", {"APSP_CUDA_TILES": "pred32"})
    tagged = ("tagged", {"APSP_CUDA_ARGMIN": "0"})
    cpasync = ("pred-cpasync", {"APSP_CUDA_TMA": "0"})
    cases = (("int32", "integer", (chosen, cpasync, tagged, general)),
             ("float32", "integer", (chosen, tagged)),
             ("float32", "fractional", (chosen, cpasync, general)),
             ("int64", "integer", (chosen, cpasync, tagged)),
             ("float64", "integer", (chosen, tagged)),
             ("float64", "fractional", (chosen, cpasync, general)),
             ("int64", "signed", (chosen, general)), ("float64", "signed", (chosen, general)),
             ("int32", "long", (chosen, general)))
    for dtype, weights, plans in cases:
        orig = random_graph(args.n, dtype)
        if weights == "fractional":  # the same graph, weights in [1, 100) with fractions
            orig = fractional(orig)
        elif weights == "signed":
            orig = signed(orig, dtype)
        elif weights == "long":
            orig = long_paths(orig)
        base = time_device(orig, args.reps, checks=False)
        for name, env in plans:
            with env_set(**env):
                with_pred = time_device(orig, args.reps, checks=False, pred=True)
            ratio = with_pred / base
            impl = "apsp-gpu-" + name + ("" if weights == "integer" else "-" + weights)
            how = {"pred": {"signed": " on hop-scaled keys (the tagged plan)",
                            "long": " on the argmin plan (paths too long for the tags)"}.get(
                                weights, ""),
                   "pred32": " on the general plan (pred32)",
                   "pred-cpasync": " with cp.async copies, not TMA (APSP_CUDA_TMA=0)",
                   "tagged": " on the tagged plan (APSP_CUDA_ARGMIN=0)"}[name]
            note = (f"device time with predecessors{how}, {weights} weights, checks off: "
                    f"{ratio:.2f}x the same solve without ({base * 1e3:.1f} ms in this run; "
                    f"target <= 1.6x)")
            results.append({"impl": impl, "dtype": dtype, "n": args.n, "seconds": with_pred,
                            "updates_per_s": float(args.n) ** 3 / with_pred,
                            "fraction_of_ceiling": None, "note": note, "ratio_to_without": ratio})
            print(f"{dtype:8s} {impl:27s} n={args.n}: without {base * 1e3:9.1f} ms, with predecessors "
                  f"{with_pred * 1e3:9.1f} ms ({ratio:.2f}x)", flush=True)
        del orig
        torch.cuda.empty_cache()
    doc = {"benchmark": "bench_pred.py", "command": " ".join([sys.executable] + sys.argv),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(), "source": source_digest(), "ceilings": [], "results": results}
    path = os.path.join(args.out, f"pred_{args.tag}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
