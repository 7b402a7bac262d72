"""How a split's time scales with its GPUs: a torch tensor on cuda:0 solved in place over the
first 1, 2, 3, ... GPUs (apsp.solve(t, device=[...], overwrite=True, check=False)), int32, a
few sizes. For each: the device time by CUDA events on the tensor's stream, and the host's time
in the call (with check=False the call returns once the work is enqueued: where the host time
reaches the device time, enqueueing is what sets the pace). Median of 3 after a warm-up.
The engine's own plan at each n is forced (APSP_CUDA_TILES, read from the one-GPU solve's trace),
so that every listed GPU takes part: unforced, a split leaves out the GPUs past what its n pays
for (engine.cu: kSplitMinRows), and this probe measures what each count would give.
Usage: python benchmarks/probes/split_scaling.py [n ...]"""
import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
import torch  # noqa: E402

import apsp  # noqa: E402
from bench_split import graph  # noqa: E402
from timing import engine_trace, env_set  # noqa: E402

sizes = [int(a) for a in sys.argv[1:]] or [8192, 16384]
count = torch.cuda.device_count()
for n in sizes:
    g = torch.from_numpy(graph(n, "int32"))
    src = g.to("cuda:0")
    _, plan = engine_trace(lambda: apsp.solve(src.clone(), device="cuda:0", check=False),
                           "apsp cuda: plan ")
    tiles = plan[0].split()[3].rstrip(",")  # "apsp cuda: plan k64q, int32, n = ..."
    print(f"n={n}: the engine's plan {tiles}", flush=True)
    for k in range(1, count + 1):
        device = "cuda:0" if k == 1 else [f"cuda:{i}" for i in range(k)]
        work = torch.empty_like(src)
        dev, host = [], []
        for rep in range(4):
            work.copy_(src)
            torch.cuda.synchronize(0)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            t0 = time.perf_counter()
            with env_set(APSP_CUDA_TILES=tiles):
                apsp.solve(work, device=device, overwrite=True, check=False)
            t1 = time.perf_counter()
            end.record()
            end.synchronize()
            if rep:
                dev.append(start.elapsed_time(end))
                host.append((t1 - t0) * 1e3)
        print(f"n={n} gpus={k}: device {statistics.median(dev):8.1f} ms, host in the call "
              f"{statistics.median(host):8.1f} ms", flush=True)
