"""Probe check (with sr_chain.patch built): the round loop's results under APSP_PROBE_SR modes (k64d
with PDL on the critical stream; 4-byte types also with fused phases 1 and 2) equal the 64-wide
rounds' bit for bit (integer weights, one negative edge), on full and ragged n, for each DTYPE
given (default int32 float32), on the default stream and a high-priority one, twice (graph
replay). Usage: python benchmarks/probes/sr_check.py [DTYPE ...]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import torch  # noqa: E402
from bench_gpu import env_set, random_graph  # noqa: E402

import apsp  # noqa: E402

bad = 0
sizes = {"int32": [130, 1000, 2048, 2100, 3000, 3137, 4160, 4700], "int64": [1000, 2100, 3137]}
sizes["float32"], sizes["float64"] = sizes["int32"], sizes["int64"]
for dtype in sys.argv[1:] or ["int32", "float32"]:
    for n in sizes[dtype]:
        g = random_graph(n, dtype, seed=n)
        g[5, 7] = -3  # a negative edge, no negative cycle (weights >= 1 elsewhere)
        with env_set(APSP_CUDA_TILES="k64w"):
            ref = apsp.solve(g)
        for mode in ["0", "1", "2"] if dtype.endswith("32") else ["0", "1"]:
            for stream in [torch.cuda.current_stream(), torch.cuda.Stream(priority=-1)]:
                for rep in range(2):
                    with env_set(APSP_CUDA_TILES="k64d", APSP_PROBE_SR=mode), torch.cuda.stream(stream):
                        out = apsp.solve(g)
                    stream.synchronize()
                    ok = torch.equal(out, ref)
                    bad += not ok
                    if not ok or rep == 1 and stream is not torch.cuda.current_stream():
                        print(f"{dtype} n={n} mode {mode} rep {rep} prio {stream.priority}: "
                              f"{'equal' if ok else 'DIFFERENT'}", flush=True)
print("sr_check:", "all equal" if bad == 0 else f"{bad} DIFFERENT")
