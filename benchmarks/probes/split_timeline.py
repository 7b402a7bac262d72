"""A timeline of one split solve (engine.cu: enqueue_split) from CUPTI through torch.profiler:
every kernel and copy on every GPU with its stream, start and end, written as a Chrome trace
(split_timeline_n<N>_g<K>.json.gz under the folder given) and summarised here: per GPU and
stream, the busy time of each kernel kind and copy, and the time the stream sat idle between
its first and last activity. A torch tensor on cuda:0 solved in place, int32, after a warm-up.
Usage: python benchmarks/probes/split_timeline.py OUT_DIR GPUS N [N ...]"""
import collections
import gzip
import json
import os
import sys

sys.path.insert(0, "benchmarks")
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import apsp  # noqa: E402
from bench_split import graph  # noqa: E402

out, k, sizes = sys.argv[1], int(sys.argv[2]), [int(a) for a in sys.argv[3:]]
device = [f"cuda:{i}" for i in range(k)] if k > 1 else "cuda:0"
for n in sizes:
    src = torch.from_numpy(graph(n, "int32")).to("cuda:0")
    work = src.clone()
    apsp.solve(work, device=device, overwrite=True)  # warm-up
    work.copy_(src)
    torch.cuda.synchronize(0)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        apsp.solve(work, device=device, overwrite=True)
        for i in range(k):
            torch.cuda.synchronize(i)
    path = os.path.join(out, f"split_timeline_n{n}_g{k}.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"]
                  if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    with gzip.open(path + ".gz", "wt") as f:
        json.dump(events, f)
    os.remove(path)
    lanes = collections.defaultdict(list)
    for e in events:
        lanes[(e["args"].get("device"), e["args"].get("stream"))].append(e)
    t0 = min(e["ts"] for e in events)
    t1 = max(e["ts"] + e["dur"] for e in events)
    print(f"n={n} over {k} GPUs: {len(events)} kernels and copies, {(t1 - t0) / 1e3:.1f} ms "
          "first to last", flush=True)
    for (dev, stream), es in sorted(lanes.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1] or 0)):
        es.sort(key=lambda e: e["ts"])
        busy = collections.Counter()
        count = collections.Counter()
        for e in es:
            name = e["name"].split("<")[0].split("(")[0][:40]
            busy[name] += e["dur"]
            count[name] += 1
        span = es[-1]["ts"] + es[-1]["dur"] - es[0]["ts"]
        total = sum(busy.values())
        print(f"  cuda:{dev} stream {stream}: {len(es)} items, span {span / 1e3:.1f} ms, busy "
              f"{total / 1e3:.1f} ms, from {(es[0]['ts'] - t0) / 1e3:.2f} to "
              f"{(es[-1]['ts'] + es[-1]['dur'] - t0) / 1e3:.2f} ms", flush=True)
        for name, us in busy.most_common(6):
            print(f"      {name:40s} {count[name]:5d} x, {us / 1e3:8.2f} ms", flush=True)
