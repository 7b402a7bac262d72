"""Probe: predecessors of positive integer weights on the engine's choice, on the argmin plan
(APSP_CUDA_TAGS=0) and on the tagged plan (APSP_CUDA_ARGMIN=0) on the same graphs, by dtype and n:
int32 and int64 on their own kernels, float32 on its int32 twin. Device time by CUDA events,
checks off, median of --reps after a warm-up, the plans alternated --rounds times.
Usage: python benchmarks/probes/tags_vs_argmin.py [--cases int32:1024,4096 int64:2048] [--reps 3]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench_gpu import env_set, random_graph, time_device  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--cases", nargs="+", default=[
    "int32:1024,4096,10000,12288,14336,16384", "int64:1024,2048,4096,10000", "float32:2048,10000"])
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--rounds", type=int, default=2)
args = ap.parse_args()
for case in args.cases:
    dtype, sizes = case.split(":")
    for n in map(int, sizes.split(",")):
        g = random_graph(n, dtype)  # weights 1..99
        base = time_device(g, args.reps, checks=False)
        for r in range(args.rounds):
            cells = []
            for name, env in (("chosen", {}), ("argmin", {"APSP_CUDA_TAGS": "0"}),
                              ("tagged", {"APSP_CUDA_ARGMIN": "0"})):
                with env_set(**env):
                    t = time_device(g, args.reps, checks=False, pred=True)
                cells.append(f"{name} {t * 1e3:8.2f} ms ({t / base:.3f}x)")
            print(f"{dtype:7s} n={n:6d} plain {base * 1e3:8.2f} ms | " + " | ".join(cells), flush=True)
