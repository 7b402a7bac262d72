"""Where the time of a host solve split over GPUs goes, end to end: APSP_CUDA_TRACE's stage times
(allocate, upload, solve, prefault, download) of apsp.solve(numpy) on one GPU and split over every
GPU, int32 and float32, a few sizes; the last of 3 calls after a warm-up.
Usage: python benchmarks/probes/split_stages.py [n ...]"""
import re
import sys

sys.path.insert(0, "benchmarks")
import apsp  # noqa: E402
from bench_split import graph  # noqa: E402
from timing import engine_trace, env_set  # noqa: E402

sizes = [int(a) for a in sys.argv[1:]] or [10000, 24576]
gpus = [f"cuda:{i}" for i in range(len(apsp.info()["devices"]))]
for dtype in ("int32", "float32"):
    for n in sizes:
        g = graph(n, dtype)
        for device, env in (("cuda:0", {}), ("cuda:0", {"APSP_CUDA_OVERLAP": "0"}), (gpus, {})):
            with env_set(**env):
                for _ in range(3):
                    _, trace = engine_trace(lambda: apsp.solve(g, device=device), "apsp cuda: ")
            stages = [m.groups() for ln in trace
                      if (m := re.match(r"apsp cuda: (\w+)\s+([\d.]+) ms", ln))]
            print(f"{dtype} n={n} {device} {env}: " +
                  ", ".join(f"{k} {float(v):.1f}" for k, v in stages), flush=True)
