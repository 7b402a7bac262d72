"""Probe: where the round loops lose at 1792 <= n <= 8192 (int32). Two parts:
1. every round-loop plan forced at each n (APSP_CUDA_TILES), device time as bench_gpu.py's
   time_with_env (median of reps, best of 2);
2. a kernel timeline of one solve per listed (n, plan) by the PyTorch profiler (CUPTI): per
   kernel name its count and busy time, per stream its busy time, and on the main stream (the one
   that runs the most phase-3 time) the idle gaps between kernels.
Usage: python benchmarks/probes/mid_range.py OUT_DIR [--timeline]   (--timeline: part 2 only)"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import torch  # noqa: E402
from bench_gpu import env_set, random_graph, time_with_env  # noqa: E402

import apsp  # noqa: E402
from apsp import _core  # noqa: E402

out = sys.argv[1]
plans = ["k64w", "k64d", "k64q", "k64o"]
sizes = [] if "--timeline" in sys.argv else [1792, 2048, 2560, 3072, 4096, 5120, 6144, 8192]
os.makedirs(out, exist_ok=True)
sweep = {}
for n in sizes:
    g = random_graph(n, "int32")
    reps = 30 if n <= 3072 else 10
    row = {}
    for p in plans:
        row[p] = min(time_with_env(g, reps, False, APSP_CUDA_TILES=p) for _ in range(2)) * 1e3
    row["engine"] = min(time_with_env(g, reps, False) for _ in range(2)) * 1e3
    ideal = n ** 3 / 16.27e12 * 1e3
    sweep[n] = row
    print(f"n={n:5d} ideal {ideal:8.3f} ms | " +
          " ".join(f"{k} {v:8.3f} ({ideal / v:5.1%})" for k, v in row.items()), flush=True)


def timeline(n, plan):
    g = random_graph(n, "int32")
    work = g.clone()
    s = torch.cuda.current_stream()
    env = {"APSP_CUDA_TILES": plan} if plan else {}

    def solve():  # in place, checks off (as bench_gpu.py's time_device)
        _core.solve_device(work.data_ptr(), n, n, "int32", 0, 0, 0, s.cuda_stream, True, False,
                           False, False, None)

    with env_set(**env):
        for _ in range(2):  # warm up
            work.copy_(g)
            solve()
        work.copy_(g)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            solve()
            torch.cuda.synchronize()
    path = os.path.join(out, f"trace_{n}_{plan or 'engine'}.json")
    prof.export_chrome_trace(path)
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"]
    ev.sort(key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    t1 = max(e["ts"] + e["dur"] for e in ev)
    by_name = collections.defaultdict(lambda: [0, 0.0])
    by_stream = collections.defaultdict(lambda: [0, 0.0])
    for e in ev:
        name = e["name"].split("<")[0].split("(")[0]
        by_name[name][0] += 1
        by_name[name][1] += e["dur"]
        by_stream[e["args"]["stream"]][0] += 1
        by_stream[e["args"]["stream"]][1] += e["dur"]
    main = max(by_stream, key=lambda k: by_stream[k][1])
    m = [e for e in ev if e["args"]["stream"] == main]
    gaps = [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(m, m[1:])]
    lines = [f"## n = {n}, plan {plan or 'engine'}: span {t1 - t0:.1f} us, {len(ev)} kernels"]
    for k, (c, d) in sorted(by_name.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"  {k:32s} {c:5d} launches {d:10.1f} us busy  {d / max(c, 1):8.2f} us each")
    for k, (c, d) in by_stream.items():
        lines.append(f"  stream {k}: {c} kernels, {d:.1f} us busy ({d / (t1 - t0):.1%} of span)")
    gaps_pos = sorted(g for g in gaps if g > 0)
    lines.append(f"  main stream {main}: gaps total {sum(gaps_pos):.1f} us over {len(gaps_pos)}; "
                 f"median {gaps_pos[len(gaps_pos) // 2] if gaps_pos else 0:.2f} us, max "
                 f"{max(gaps_pos) if gaps_pos else 0:.1f} us")
    # main-stream kernels of the middle rounds: name and duration, to see a round's shape
    mid = len(m) // 2
    lines.append("  main stream, middle kernels: " + ", ".join(
        f"{e['name'].split('<')[0][:14]} {e['dur']:.1f}" for e in m[mid:mid + 6]))
    aux = [e for e in ev if e["args"]["stream"] != main]
    amid = len(aux) // 2
    lines.append("  other streams, middle kernels: " + ", ".join(
        f"{e['name'].split('<')[0][:14]} {e['ts'] - t0:.0f}+{e['dur']:.1f}" for e in aux[amid:amid + 8]))
    lines.append("  main, same window: " + ", ".join(
        f"{e['name'].split('<')[0][:14]} {e['ts'] - t0:.0f}+{e['dur']:.1f}" for e in m
        if aux and aux[amid]["ts"] - 40 <= e["ts"] <= aux[min(amid + 8, len(aux) - 1)]["ts"] + 40))
    text = "\n".join(lines)
    print(text, flush=True)
    return text


texts = [timeline(n, p) for n, p in [(2048, None), (2048, "k64d"), (4096, None), (4096, "k64w"),
                                      (6144, None)]]
with open(os.path.join(out, "mid_range.txt"), "w") as f:
    f.write(json.dumps({str(k): v for k, v in sweep.items()}, indent=1) + "\n\n" + "\n\n".join(texts) + "\n")
print(apsp.__file__)
