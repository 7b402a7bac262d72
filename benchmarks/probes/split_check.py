"""Probe check (with split_tail.patch built): phase 3's rest launch with its first R window rows
taken in S parts of k (APSP_PROBE_SPLIT=RxS, parts stored by an atomic minimum) gives the same
results bit for bit as without, on the 64-wide rounds (k64w) and super-rounds of two blocks
(k64d), full and ragged n, integer weights with a negative edge and fractional positive weights,
every dtype given (default all four), the default stream and a high-priority one, twice (graph
replay). Usage: python benchmarks/probes/split_check.py [DTYPE ...]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import torch  # noqa: E402
from bench_gpu import env_set, fractional, random_graph  # noqa: E402

import apsp  # noqa: E402

bad = 0
sizes = {"int32": [300, 1000, 2048, 2100, 3000, 3137], "int64": [300, 1000, 2100]}
sizes["float32"], sizes["float64"] = sizes["int32"], sizes["int64"]
for dtype in sys.argv[1:] or ["int32", "float32", "int64", "float64"]:
    for n in sizes[dtype]:
        graphs = [random_graph(n, dtype, seed=n)]
        graphs[0][5, 7] = -3  # a negative edge, no negative cycle (weights >= 1 elsewhere)
        if dtype.startswith("float"):
            graphs.append(fractional(random_graph(n, dtype, seed=n + 1)))
        for gi, g in enumerate(graphs):
            for plan, splits in [("k64w", ["3x2", "1000x2"]), ("k64d", ["3x2", "3x4", "1000x4"])]:
                with env_set(APSP_CUDA_TILES=plan):
                    ref = apsp.solve(g)
                for split in splits:
                    for stream in [torch.cuda.current_stream(), torch.cuda.Stream(priority=-1)]:
                        for rep in range(2):
                            with env_set(APSP_CUDA_TILES=plan, APSP_PROBE_SPLIT=split), \
                                    torch.cuda.stream(stream):
                                out = apsp.solve(g)
                            stream.synchronize()
                            ok = torch.equal(out, ref)
                            bad += not ok
                            if not ok:
                                print(f"{dtype} n={n} graph {gi} {plan} split {split} rep {rep} "
                                      f"prio {stream.priority}: DIFFERENT", flush=True)
        print(f"{dtype} n={n}: done", flush=True)
print("split_check:", "all equal" if bad == 0 else f"{bad} DIFFERENT")
