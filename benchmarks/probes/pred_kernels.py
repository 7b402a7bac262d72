"""Probe: where a predecessor solve's device time goes, kernel by kernel. Run under Nsight Compute
(`ncu --metrics gpu__time_duration.sum --csv --print-units base python pred_kernels.py ...`, which
serializes the kernels: the sums are work, not the overlapped wall time) on the same graph as
bench_pred.py: one solve with predecessors and, where `--plain TILES`, one without on that plan.
`--summarize CSV` sums such a log's apsp kernels by kernel (name up to its first template
argument) and solve (1: with predecessors, 2: the plain one).
Usage: ncu ... python benchmarks/probes/pred_kernels.py DTYPE N {integer,fractional} [--plain k64d]
       python benchmarks/probes/pred_kernels.py --summarize LOG.csv"""
import argparse
import collections
import csv
import io
import os
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("dtype", nargs="?")
ap.add_argument("n", nargs="?", type=int)
ap.add_argument("weights", nargs="?", choices=["integer", "fractional"])
ap.add_argument("--plain")
ap.add_argument("--summarize")
args = ap.parse_args()

if args.summarize:
    text = open(args.summarize).read()
    rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"'):])))
    # The marker kernel (torch's fill of a 1-element tensor) between the two solves splits them.
    solve, sums, counts = 0, collections.defaultdict(float), collections.Counter()
    for r in rows:
        if r["Metric Name"] != "gpu__time_duration.sum":
            continue
        name = r["Kernel Name"]
        if "fill" in name.lower() or "FillFunctor" in name:
            solve += 1
            continue
        short = re.sub(r"^(void )?(apsp::cuda_detail::)?", "", name)
        short = re.match(r"[^<(]*(<[^,>]*)?", short).group(0)
        key = (solve, short)
        sums[key] += float(r["Metric Value"].replace(",", "")) * 1e-6  # ns -> ms
        counts[key] += 1
    # Segments with apsp kernels, in order: 1 the solve with predecessors, 2 the plain one.
    solves = sorted({s for s, k in sums if k.startswith("apsp::")})
    label = {s: i + 1 for i, s in enumerate(solves)}
    for (s, k), ms in sorted(sums.items(), key=lambda kv: (kv[0][0], -kv[1])):
        if s in label and k.startswith("apsp::"):
            print(f"solve {label[s]}  {k:40s} {counts[(s, k)]:6d} launches {ms:10.3f} ms")
    for s in solves:
        total = sum(v for (t, k), v in sums.items() if t == s and k.startswith("apsp::"))
        print(f"solve {label[s]}  total {total:10.3f} ms")
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import torch  # noqa: E402
from bench_gpu import env_set, fractional, random_graph  # noqa: E402
from apsp import _core  # noqa: E402

g = random_graph(args.n, args.dtype)
if args.weights == "fractional":
    g = fractional(g)
n = args.n
marker = torch.zeros(1, device="cuda")


def solve(pred: bool) -> None:
    work = g.clone()
    p = torch.empty((n, n), dtype=torch.int32, device="cuda") if pred else None
    marker.fill_(1)
    _core.solve_device(work.data_ptr(), n, n, args.dtype, p.data_ptr() if pred else 0,
                       n if pred else 0, 0, torch.cuda.current_stream().cuda_stream, True, False,
                       False, False, None)
    torch.cuda.synchronize()


solve(True)
if args.plain:
    with env_set(APSP_CUDA_TILES=args.plain):
        solve(False)
