"""GPU benchmark of the apsp CUDA engine, side by side with its ceilings and baselines, all in one
run: the measured min-plus peak per dtype (benchmarks/ceiling.cu), apsp at several n and dtypes
(device time by CUDA events on a PyTorch buffer), the course reports' design
(benchmarks/baseline_course.cu), the PyTorch loop, SciPy at small n, the host path end to end from
NumPy, and the cost of progress reporting. Writes gpu_<tag>.json (schema: benchmarks/README or the
helper notes) and a summary table gpu_<tag>_summary.md into --out.

Usage: python benchmarks/bench_gpu.py --bin BUILD_DIR --out DIR [--tag h100] [--quick]
(BUILD_DIR holds the compiled `ceiling` and `baseline_course`; gpu_check.sh builds them.)"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

import apsp
from apsp import _core
from machine_facts import machine, source_digest
from timing import env_set, wall_times

INT_INF = {"int32": apsp.INT32_INF, "int64": apsp.INT64_INF}


def random_graph(n: int, dtype: str, seed: int = 1) -> torch.Tensor:
    """Dense-ish random directed graph on the GPU: weights 1..99, 70% of pairs without an edge."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randint(1, 100, (n, n), generator=g, device="cuda", dtype=torch.int32)
    none = torch.rand((n, n), generator=g, device="cuda") < 0.7
    t = w.to(getattr(torch, dtype))
    t[none] = float("inf") if dtype.startswith("float") else INT_INF[dtype]
    return t


def fractional(orig: torch.Tensor, seed: int = 2) -> torch.Tensor:
    """random_graph's weights plus a fraction in [0, 1) each: positive, not integers."""
    g = torch.Generator(device=orig.device).manual_seed(seed)
    return orig + torch.rand(orig.shape, generator=g, device=orig.device, dtype=orig.dtype)


# Where the round loop's super-rounds of two pivot blocks start, by the dtype of the kernels that
# run (engine.cu: kDoubleMinN4, kDoubleMinInt64, kDoubleMinFloat64).
DOUBLE_MIN_N = {"int32": 2240, "float32": 2240, "int64": 1536, "float64": 1920}


def runs_twin(dtype: str, n: int) -> bool:
    """Whether a checked solve of random_graph(n, dtype) runs the integer twin's kernels: float32
    (its weights are integers) on the 64-wide rounds past the one-launch plans (super-rounds take
    the min3 step on sm_90: engine.cu, solve_on_stream). float64 keeps its own kernels, faster than
    int64's (engine.cu: IntegerTwin)."""
    return dtype == "float32" and 256 < n < DOUBLE_MIN_N["float32"]


def with_leading_dimension(g: torch.Tensor, ld: int) -> torch.Tensor:
    """g itself where ld is its row length, else a copy of g in an n x n view of an n x ld buffer."""
    n = g.shape[0]
    if ld == n:
        return g
    return torch.empty((n, ld), dtype=g.dtype, device=g.device)[:, :n].copy_(g)


def time_device(orig: torch.Tensor, reps: int, checks: bool, progress=None, pred: bool = False) -> float:
    """Median device time (s) of one in-place solve on a copy of `orig` in its layout (a row-major
    view keeps its leading dimension), by CUDA events (with `pred`, predecessors into an int32
    buffer too). Without checks a 0.5 ms spin kernel goes first, so that the solve is queued before the GPU reaches the start event: the time is the
    GPU's, not the host's enqueue (bench_overhead.py measures that). With checks the solve's own
    host syncs are inside the timed region."""
    n = orig.shape[0]
    work = torch.empty_strided(orig.shape, orig.stride(), dtype=orig.dtype, device=orig.device)
    p = torch.empty((n, n), dtype=torch.int32, device=orig.device) if pred else None
    s = torch.cuda.current_stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for rep in range(reps + 1):  # the first call warms up (and captures the CUDA graph at small n)
        work.copy_(orig)
        if not checks:
            torch.cuda._sleep(1_000_000)
        start.record(s)
        _core.solve_device(work.data_ptr(), n, work.stride(0),
                           str(orig.dtype).removeprefix("torch."), p.data_ptr() if pred else 0, n if pred else 0, 0,
                           s.cuda_stream, True, False, checks, checks, progress)
        end.record(s)
        end.synchronize()
        if rep:
            times.append(start.elapsed_time(end) * 1e-3)
    return float(np.median(times))


def time_with_env(orig: torch.Tensor, reps: int, checks: bool, **env: str) -> float:
    """time_device with environment variables set for its solves (env_set)."""
    with env_set(**env):
        return time_device(orig, reps, checks)


def torch_loop(orig: torch.Tensor) -> float:
    D = orig.clone()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for k in range(D.shape[0]):
        torch.minimum(D, D[:, k, None] + D[None, k, :], out=D)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="folder with the compiled ceiling and baseline_course")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="h100")
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    ceil = json.loads(subprocess.run([os.path.join(args.bin, "ceiling")], capture_output=True,
                                     text=True, check=True).stdout)
    peak = {c["dtype"]: c["updates_per_s"] for c in ceil["ceilings"]}
    print("ceilings:", {k: f"{v / 1e12:.2f} T/s" for k, v in peak.items()}, flush=True)
    results: list[dict] = []

    def add(impl, dtype, n, seconds, note=None, ceiling=True, step=None):
        """One result; its fraction of the ceiling of `step` (default: the dtype's own step)."""
        ups = float(n) ** 3 / seconds
        key = step or dtype
        frac = ups / peak[key] if ceiling and key in peak else None
        results.append({"impl": impl, "dtype": dtype, "n": n, "seconds": seconds,
                        "updates_per_s": ups, "fraction_of_ceiling": frac, "note": note})
        fr = f"{frac:6.1%}" if frac is not None else "   -  "
        print(f"{impl:16s} {dtype:8s} n={n:6d} {seconds * 1e3:10.3f} ms {ups / 1e12:7.3f} T/s {fr} "
              f"{note or ''}", flush=True)

    # Every row measures the kernels of its dtype unless it says otherwise: a checked solve of
    # random_graph's weights would run the narrow plan (the hub bound), so it is switched off here
    # and back on (APSP_CUDA_NARROW=1) for the rows of the narrow plan.
    os.environ["APSP_CUDA_NARROW"] = "0"

    # ---- apsp device time: async (no checks) and with the checks' two syncs -------------------
    plan = [("int32", 10000, 5), ("int32", 16384, 3), ("int32", 32768, 1), ("float32", 10000, 3),
            ("float32", 16384, 2), ("float64", 10000, 2), ("int64", 10000, 2),
            ("int32", 256, 50), ("int32", 1024, 30), ("int32", 4096, 5), ("float32", 1024, 20)]
    if args.quick:
        plan = [p for p in plan if p[1] <= 10000]
    checked = {}  # (dtype, n): device time of the checked solve (the twin section reuses it)
    for dtype, n, reps in plan:
        orig = random_graph(n, dtype)
        # float32 past the CUDA-graph sizes: the kernels choose the min3 step on the device (every
        # weight here is >= 0), so the fraction is of that step's ceiling (engine.cu: min3).
        min3 = dtype == "float32" and n > 4096
        add("apsp-gpu", dtype, n, time_device(orig, reps, checks=False),
            "device time, checks off (fully asynchronous)"
            + ("; the min3 step, chosen on the device" if min3 else ""),
            step="float32-min3" if min3 else None)
        if n in (256, 1024, 10000):
            twin = runs_twin(dtype, n)
            checked[dtype, n] = time_device(orig, reps, checks=True)
            add("apsp-gpu-twin" if twin else "apsp-gpu", dtype, n, checked[dtype, n],
                "device time, input and negative-cycle checks on (2 host syncs)"
                + ("; integer weights, so the integer twin's kernels ran" if twin else "")
                + ("; the min3 step, chosen by the input scan" if min3 else ""),
                ceiling=not twin, step="float32-min3" if min3 else None)
        del orig
        torch.cuda.empty_cache()

    # ---- floats with integer weights: the integer twin's kernels against the float ones -----------
    # A checked solve scans the input; where every weight is a positive integer and every path
    # length is exact, a float32 matrix may run the round loop of its int32 twin (engine.cu) on
    # 64-wide rounds; on super-rounds it keeps its own kernels with the min3 step. Each case
    # against the other choice on the same graph: a forced plan keeps the matrix's dtype;
    # APSP_CUDA_MIN3=0 leaves float32 on super-rounds nothing but the twin. The chosen solve's time
    # is the checks-on one above (same graph, same repetitions).
    for dtype, n, reps, other in (("float32", 1024, 20, {"APSP_CUDA_TILES": "k64w"}),
                                  ("float32", 10000, 3, {"APSP_CUDA_MIN3": "0"})):
        orig = random_graph(n, dtype)
        chosen = checked[dtype, n]
        alt = time_with_env(orig, reps, True, **other)
        switch = ", ".join(f"{k}={v}" for k, v in other.items())
        twin = runs_twin(dtype, n)
        kernels = "the integer twin's kernels" if twin else f"the {dtype} kernels with the min3 step"
        others = f"the {dtype} kernels" if twin else "the integer twin's kernels"
        add("apsp-gpu-twin" if twin else "apsp-gpu-min3", dtype, n, chosen,
            f"integer weights, checks on: {kernels}; {alt / chosen:.2f}x faster than {others} on "
            f"the same graph ({alt * 1e3:.3f} ms, {switch})",
            ceiling=not twin, step=None if twin else "float32-min3")
        del orig
        torch.cuda.empty_cache()

    # ---- float32 with positive fractional weights: the min3 step --------------------------------
    # Where every float32 weight is >= 0 (fractional here, so not the twin), the round loops run
    # two FADD and one VIMNMX3 per two pivots (engine.cu: min3): chosen on the host by a checked
    # solve's scan, on the device without the checks; APSP_CUDA_MIN3=0 keeps FADD + FMNMX.
    for n, reps in ((10000, 3),) + (() if args.quick else ((16384, 2),)):
        orig = fractional(random_graph(n, "float32"))
        scanned = time_device(orig, reps, checks=True)
        unchecked = time_device(orig, reps, checks=False)
        fmnmx = time_with_env(orig, reps, False, APSP_CUDA_MIN3="0")
        for seconds, how in ((scanned, "checks on (2 host syncs): chosen by the input scan"),
                             (unchecked, "checks off: chosen on the device")):
            ups = float(n) ** 3 / seconds
            add("apsp-gpu-min3", "float32", n, seconds,
                f"positive fractional weights, {how}; the fraction is of the min3 step's ceiling, "
                f"{ups / peak['float32']:.1%} of FADD + FMNMX's; {fmnmx / seconds:.2f}x faster than "
                f"FADD + FMNMX on the same graph (APSP_CUDA_MIN3=0, checks off: "
                f"{fmnmx * 1e3:.1f} ms)", step="float32-min3")
        del orig
        torch.cuda.empty_cache()

    # ---- integer weights whose paths fit 15 bits: the narrow plan --------------------------------
    # A checked solve's scan finds every weight >= 0 and (n - 1) * max w <= 32766, so the round
    # loop runs on two 16-bit lengths a word (engine.cu: narrow_fits; narrow.cuh): the fraction is
    # of that step's ceiling (narrow16x2). Against the plan of the matrix's own dtype on the same
    # graph (APSP_CUDA_NARROW=0; float32's non-negative weights run the min3 step there, and the
    # fraction is of its ceiling). random_graph's weights, 1..99, do not fit at these n: here 1..3
    # (1..2 at 16384), as many edges as there. Float matrices of whole weights narrow the same way.
    narrow_cases = [("int32", 10000, 3, 3), ("int64", 10000, 3, 2), ("float64", 10000, 3, 2),
                    ("float32", 10000, 3, 3)]
    if not args.quick:
        narrow_cases += [("int32", 16384, 2, 2), ("int32", 4096, 7, 5), ("float64", 2048, 15, 5)]
    for dtype, n, top, reps in narrow_cases:
        orig = random_graph(n, dtype)
        edge = orig < (INT_INF[dtype] if dtype in INT_INF else float("inf"))
        orig[edge] = (orig[edge] - 1) % top + 1
        narrow = time_with_env(orig, reps, True, APSP_CUDA_NARROW="1")
        wide = time_device(orig, reps, checks=True)
        wide_step = "float32-min3" if dtype == "float32" else dtype
        add("apsp-gpu-narrow", dtype, n, narrow,
            f"weights 1..{top}, checks on: the narrow plan (two 16-bit lengths a word), chosen by "
            f"the input scan; {wide / narrow:.2f}x faster than the {dtype} kernels on the same "
            f"graph (APSP_CUDA_NARROW=0: {wide * 1e3:.1f} ms, "
            f"{float(n) ** 3 / wide / peak[wide_step]:.1%} of the {wide_step} ceiling)",
            step="narrow16x2")
        del orig, edge
        torch.cuda.empty_cache()

    # ---- random_graph's own weights (1..99) on the narrow plan: the hub bound ---------------------
    # (n - 1) * 99 > 32766, but the distances through vertex 0 show that every distance fits 16 bits
    # (contract.hpp: the hub bound; engine.cu: hub_bound_fits), so a user's checked solve of the
    # main rows' graph runs the narrow plan. Against the same solve with it switched off (the main
    # rows' checked times where they have them). Then what the hub bound costs where it refuses,
    # at the smallest n it is looked for and at 10000: a ring of weights 99, whose distances pass
    # 32766 and whose every pass lowers some bound, so that all kHubPasses passes run.
    for dtype, n, reps in (("int32", 10000, 3), ("float32", 10000, 3), ("float64", 10000, 2),
                           ("int64", 10000, 2)):
        orig = random_graph(n, dtype)
        hub = time_with_env(orig, reps, True, APSP_CUDA_NARROW="1")
        wide = checked.get((dtype, n)) or time_device(orig, reps, checks=True)
        wide_step = "float32-min3" if dtype == "float32" else dtype
        add("apsp-gpu-hub", dtype, n, hub,
            f"random_graph's weights 1..99 (the main rows' graph), checks on: the hub bound "
            f"takes it to the narrow plan; {wide / hub:.2f}x faster than the {dtype} kernels on "
            f"the same graph (APSP_CUDA_NARROW=0: {wide * 1e3:.1f} ms, "
            f"{float(n) ** 3 / wide / peak[wide_step]:.1%} of the {wide_step} ceiling)",
            step="narrow16x2")
        del orig
        torch.cuda.empty_cache()
    for dtype, n, reps in (("int32", 4096, 10), ("float64", 1024, 20), ("int32", 10000, 3)):
        ring = torch.full((n, n), INT_INF.get(dtype, float("inf")), device="cuda",
                          dtype=getattr(torch, dtype))
        i = torch.arange(n, device="cuda")
        ring[i, (i + 1) % n] = 99
        ring[i, i] = 0
        refused = time_with_env(ring, reps, True, APSP_CUDA_NARROW="1")
        off = time_device(ring, reps, checks=True)
        add("apsp-gpu-hub-refused", dtype, n, refused,
            f"a ring of weights 99, checks on: the hub bound's passes, refused, then the {dtype} "
            f"kernels; {refused / off - 1:+.1%} against the same solve without them "
            f"(APSP_CUDA_NARROW=0: {off * 1e3:.3f} ms)")
        del ring, i
        torch.cuda.empty_cache()

    # ---- n <= 64: the one-launch plan against the round loop forced ----------------------------
    orig = random_graph(64, "int32")
    add("apsp-gpu", "int32", 64, time_device(orig, 50, checks=False), "device time, checks off (fully asynchronous)")
    add("apsp-gpu-plan", "int32", 64, time_with_env(orig, 50, False, APSP_CUDA_TILES="k64w"),
        "round loop forced (APSP_CUDA_TILES=k64w: rules, pivot, finalize launches), checks off")

    # ---- 64 < n <= 256: the one-cluster plan against the round loop forced ------------------------
    for dtype, n in (("int32", 128), ("float32", 256), ("float64", 256), ("int64", 256)):
        add("apsp-gpu", dtype, n, time_device(random_graph(n, dtype), 50, checks=False),
            "device time, checks off (fully asynchronous)")
    for dtype, n in (("int32", 128), ("int32", 256), ("float32", 256), ("float64", 256), ("int64", 256)):
        add("apsp-gpu-plan", dtype, n,
            time_with_env(random_graph(n, dtype), 50, False, APSP_CUDA_TILES="k64w"),
            "round loop forced (APSP_CUDA_TILES=k64w, CUDA graph of 64-wide rounds), checks off")

    # ---- 256 < n <= 1728, 4-byte types: the flow plan against the round loop forced ---------------
    for dtype, n in (("int32", 512), ("int32", 1024), ("float32", 1024)):
        add("apsp-gpu-plan", dtype, n,
            time_with_env(random_graph(n, dtype), 30, False, APSP_CUDA_TILES="k64w"),
            "round loop forced (APSP_CUDA_TILES=k64w, CUDA graph of 64-wide rounds), checks off")

    # The flow plan's workers per block (engine.cu: flow_workers): the whole block up to n = 832,
    # two groups of 128 threads up to 1280, three above; the engine's choice against the next
    # one forced, on the same graph.
    words = {1: "one", 2: "two", 3: "three"}
    for dtype, n in (("int32", 512), ("int32", 768), ("int32", 1024), ("float32", 1024),
                     ("int32", 1408), ("float32", 1408)):
        orig = random_graph(n, dtype)
        chosen, other = (1, 2) if n <= 832 else (2, 1) if n <= 1280 else (3, 2)
        auto = time_device(orig, 30, checks=False)
        forced = time_with_env(orig, 30, False, APSP_CUDA_FLOW_WORKERS=str(other))
        no_pdl = time_with_env(orig, 30, False, APSP_CUDA_PDL="0")  # launched after the rules
        add("apsp-gpu-flow", dtype, n, auto,
            f"checks off, the flow plan with {words[chosen]} worker{'s' * (chosen > 1)} per "
            f"block (the engine's choice): {forced / auto:.2f}x faster than {words[other]} on the "
            f"same graph (APSP_CUDA_FLOW_WORKERS={other}: {forced * 1e6:.1f} us); its launch "
            f"overlapping the rules kernel (programmatic dependent launch): {no_pdl / auto:.3f}x "
            f"faster than after it (APSP_CUDA_PDL=0: {no_pdl * 1e6:.1f} us)")

    # Past n = 1024 the flow plan puts more workers on the SMs that its clusters leave free
    # (engine.cu: flow_extra); against it switched off and the round loop forced, on the same graph.
    for dtype, n in (("int32", 1152), ("int32", 1280), ("int32", 1536), ("int32", 1664),
                     ("float32", 1280), ("float32", 1536)):
        orig = random_graph(n, dtype)
        auto = time_device(orig, 30, checks=False)
        without = time_with_env(orig, 30, False, APSP_CUDA_FLOW_EXTRA="0")
        loop = time_with_env(orig, 30, False, APSP_CUDA_TILES="k64w")
        add("apsp-gpu-flow", dtype, n, auto,
            f"checks off, the flow plan with workers on the SMs its clusters leave free (the "
            f"engine's choice): {without / auto:.2f}x faster than without them (APSP_CUDA_FLOW_EXTRA=0: "
            f"{without * 1e6:.1f} us), {loop / auto:.2f}x faster than the round loop forced "
            f"(APSP_CUDA_TILES=k64w: {loop * 1e6:.1f} us)")

    # ---- interior tiles: TMA copies against cp.async ----------------------------------------------
    # On sm_90 the min-plus kernel's interior tiles take their A and B chunks by TMA (kernels.cuh:
    # Mode::Bulk); APSP_CUDA_TMA=0 keeps the threads' 16-byte cp.async copies, on the same graph.
    # int32 n = 10000 in both layouts: its rows 64 bytes into a 128-byte line every other row
    # (ld = n, a contiguous tensor) and on lines (ld = 10016, a host solve's working matrix:
    # engine.cu, working_ld).
    for dtype, n, ld, reps in (("int32", 10000, 10000, 3), ("int32", 10000, 10016, 3),
                               ("int32", 4096, 4096, 5), ("float64", 10000, 10000, 2)):
        orig = with_leading_dimension(random_graph(n, dtype), ld)
        on = time_with_env(orig, reps, False)
        off = time_with_env(orig, reps, False, APSP_CUDA_TMA="0")
        add("apsp-gpu-tma", dtype, n, on,
            f"checks off, ld = {ld}: interior tiles by TMA copies, {off / on:.3f}x faster than by "
            f"cp.async on the same graph (APSP_CUDA_TMA=0: {off * 1e3:.2f} ms)")
        del orig
        torch.cuda.empty_cache()

    # ---- 64-wide rounds: programmatic dependent launch on the critical chain ----------------------
    # 4-byte types launch the next round's pivot work with programmatic dependent launch (engine.cu:
    # tuned_chain); APSP_CUDA_PDL=0 launches without it, on the same graph. The round loop forced
    # (APSP_CUDA_TILES=k64w): n = 512 and 1024 would take the flow plan.
    for dtype, n, reps in (("int32", 512, 50), ("int32", 1024, 30), ("int32", 2048, 10),
                           ("float32", 1024, 20)):
        orig = random_graph(n, dtype)
        on = time_with_env(orig, reps, False, APSP_CUDA_TILES="k64w")
        off = time_with_env(orig, reps, False, APSP_CUDA_TILES="k64w", APSP_CUDA_PDL="0")
        add("apsp-gpu-pdl", dtype, n, on,
            f"checks off, round loop forced (APSP_CUDA_TILES=k64w), programmatic dependent "
            f"launch: {off / on:.2f}x faster than without it on the same graph (APSP_CUDA_PDL=0: "
            f"{off * 1e6:.1f} us)")

    # ---- 1728 < n < 4864: the depth of the round loop by n -------------------------------------
    # 64-wide rounds up to the crossover, then super-rounds of 2 pivot blocks (k-depth 128) whose
    # chain is launched early (programmatic dependent launch) below n = 3392 for 4-byte types and
    # 2816 for 8-byte ones (DOUBLE_MIN_N; engine.cu: choose_tiles, enqueue_rounds); the engine's
    # choice against the other one forced, on the same graph (checks off: float64 runs its own
    # kernels). n <= 4096 replays the rounds as a CUDA graph whose look-ahead nodes keep their
    # stream's high priority.
    for dtype, n, reps in (("int32", 2048, 20), ("int32", 2560, 20), ("int32", 3072, 10),
                           ("float32", 3072, 10), ("int32", 4608, 5), ("int64", 1792, 10),
                           ("int64", 2560, 10), ("float64", 2560, 10)):
        orig = random_graph(n, dtype)
        deep = n >= DOUBLE_MIN_N[dtype]
        chosen, other = ("k64d", "k64w") if deep else ("k64w", "k64d")
        auto = time_device(orig, reps, checks=False)
        forced = time_with_env(orig, reps, False, APSP_CUDA_TILES=other)
        add("apsp-gpu-rounds", dtype, n, auto,
            f"checks off, {chosen} (the engine's choice): {forced / auto:.2f}x faster than {other} "
            f"forced on the same graph ({forced * 1e3:.3f} ms)")
        del orig
        torch.cuda.empty_cache()

    # ---- progress cost ---------------------------------------------------------------------------
    orig = random_graph(10000, "int32")
    calls = []
    reps = 3
    add("apsp-gpu", "int32", 10000, time_device(orig, reps, False, lambda d, t: calls.append(d)),
        f"progress callback on ({len(calls) // (reps + 1)} calls a solve)")

    # ---- course design, side by side ---------------------------------------------------------------
    out = subprocess.run([os.path.join(args.bin, "baseline_course"), "10000", "3"],
                         capture_output=True, text=True, check=True).stdout
    b = json.loads(out.strip().splitlines()[-1])
    add("course-baseline", "int32", b["n"], b["seconds"], "64x64 tiles, 32x32 threads, 3 kernels/round")

    # ---- host path end to end from NumPy ------------------------------------------------------------
    # Host copies on the lent machines vary from call to call (GPU_NOTES.md): the median of 7 calls
    # after a warm-up, with the spread. The in-place solve works on one array refilled before each
    # call (a fresh 400 MB array per call timed how the virtual machine serves new memory as much as
    # the copies); the public call writes a new array each time, as users' calls do.
    host = orig.cpu().numpy()

    def median_of(times: list[float]) -> tuple[float, str]:
        t = np.array(times[1:])  # the first call warms up
        return float(np.median(t)), f"median of {len(t)} calls (min {t.min() * 1e3:.1f} ms, max {t.max() * 1e3:.1f} ms)"

    # In place, the rounds of the rows already on the GPU running while later rows are copied
    # (engine.cu: upload_and_enqueue_arriving), the same with a progress callback, and the same
    # with the whole upload first (APSP_CUDA_OVERLAP=0), call by call in turn.
    times = {"1": [], "progress": [], "0": []}
    reports = []
    work = np.empty_like(host)
    for rep in range(8):
        for how in times:
            os.environ["APSP_CUDA_OVERLAP"] = "0" if how == "0" else "1"
            progress = None
            if how == "progress":
                reports.clear()  # one solve's reports
                progress = lambda done, total: reports.append(done)  # noqa: E731
            np.copyto(work, host)
            t0 = time.perf_counter()
            _core.solve_host(work, None, "cuda", 0, True, False, True, True, progress)
            times[how].append(time.perf_counter() - t0)
    del os.environ["APSP_CUDA_OVERLAP"]
    secs, spread = median_of(times["1"])
    add("apsp-gpu-host", "int32", 10000, secs,
        "end to end from NumPy in place (pinned staging host->GPU->host, the rounds of the rows "
        "already in running while later rows are copied), checks on; " + spread, ceiling=False)
    plain = secs
    secs, spread = median_of(times["progress"])
    add("apsp-gpu-host-progress", "int32", 10000, secs,
        f"the same with a progress callback ({len(reports)} calls a solve), calls taken in turn "
        f"with the row above: {secs / plain - 1:+.1%} on its median; " + spread, ceiling=False)
    secs, spread = median_of(times["0"])
    add("apsp-gpu-host-upload-first", "int32", 10000, secs,
        "the same with the whole upload before the rounds (APSP_CUDA_OVERLAP=0), calls taken in "
        "turn with the in-place rows above; " + spread, ceiling=False)
    del work
    secs, spread = median_of(wall_times(lambda: apsp.solve(host, device="cuda"), 8)[0])
    add("apsp-solve-numpy", "int32", 10000, secs,
        "apsp.solve(numpy, device='cuda'): the public call, input left intact, new output array; "
        + spread, ceiling=False)
    # The same public call on the narrow plan: the benchmark's graph (weights 1..99) sampled,
    # uploaded whole, and taken by the hub bound (engine.cu: sample_fits_narrow), in turn with the
    # int32 kernels' arriving path (APSP_CUDA_NARROW=0, as every row above).
    ways = {"1": [], "0": []}
    for rep in range(8):
        for how in ways:
            with env_set(APSP_CUDA_NARROW=how):
                t0 = time.perf_counter()
                apsp.solve(host, device="cuda")
                ways[how].append(time.perf_counter() - t0)
    secs, spread = median_of(ways["1"])
    wide, wide_spread = median_of(ways["0"])
    add("apsp-solve-numpy-hub", "int32", 10000, secs,
        "apsp.solve(numpy, device='cuda') on random_graph's weights 1..99 with the narrow plan on: "
        f"a sample of 64 rows fits, uploaded whole, the hub bound takes it; {wide / secs:.2f}x "
        f"faster than the int32 kernels solving it while it arrives in turn (APSP_CUDA_NARROW=0: "
        f"{wide * 1e3:.1f} ms, {wide_spread}); {spread}", ceiling=False)
    del orig, host

    # ---- PyTorch loop and SciPy, same n as an apsp measurement ------------------------------------
    for n in (2048, 4096):
        orig = random_graph(n, "int32")
        torch_loop(orig)  # warm-up
        add("torch-loop", "int32", n, torch_loop(orig), "torch.minimum(D, D[:,k,None]+D[None,k,:], out=D)")
        add("apsp-gpu", "int32", n, time_device(orig, 5, checks=False), "device time, checks off")
    from scipy.sparse.csgraph import floyd_warshall

    floyd_warshall(random_graph(64, "float64").cpu().numpy())  # SciPy's first call, untimed
    for n in (256, 512):
        g = random_graph(n, "float64").cpu().numpy()
        add("scipy", "float64", n, float(np.median(wall_times(lambda: floyd_warshall(g), 5)[0])),
            "scipy.sparse.csgraph.floyd_warshall, 1 core, median of 5", ceiling=False)
        apsp.solve(g, device="cuda")  # warm-up: the plan's first use
        add("apsp-solve-numpy", "float64", n,
            float(np.median(wall_times(lambda: apsp.solve(g, device="cuda"), 20)[0])),
            "apsp.solve(numpy, device='cuda') end to end (host wall time: copies, checks and "
            "the new output array included), median of 20", ceiling=False)
        add("apsp-gpu", "float64", n, time_device(torch.from_numpy(g).cuda(), 20, checks=True),
            "device time, checks on")

    doc = {"benchmark": "bench_gpu.py", "command": " ".join([sys.executable] + sys.argv),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(), "source": source_digest(),
           "ceilings": ceil["ceilings"], "results": results}
    path = os.path.join(args.out, f"gpu_{args.tag}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    write_summary(doc, os.path.join(args.out, f"gpu_{args.tag}_summary.md"))
    print("wrote", path)
    return 0


def pick(res, impl, dtype, n, note_prefix="device time, checks off"):
    for r in res:
        if r["impl"] == impl and r["dtype"] == dtype and r["n"] == n and (r["note"] or "").startswith(note_prefix):
            return r
    return None


def write_summary(doc: dict, path: str) -> None:
    res = doc["results"]
    lines = [f"# apsp GPU benchmark: {doc['machine']['gpu']} ({doc['date']})", "",
             f"Command: `{doc['command']}`", "", "## Ceilings (measured in this run)", "",
             "| name | dtype | T updates/s | SM clock | per SM per cycle | best shape |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {c['name']} | {c['dtype']} | {c['updates_per_s'] / 1e12:.2f} | "
              f"{c.get('sm_clock_mhz', 0):.0f} MHz | {c.get('per_sm_clock', 0):.2f} | "
              f"{c.get('tile', '-')} |" for c in doc["ceilings"]]
    peaks = {c["dtype"]: c["updates_per_s"] for c in doc["ceilings"]}
    lines += ["", "## Results", "", "| impl | dtype | n | ms | T updates/s | of ceiling | note |",
              "|---|---|---|---|---|---|---|"]
    for r in res:
        fr = f"{r['fraction_of_ceiling']:.1%}" if r["fraction_of_ceiling"] is not None else "-"
        lines.append(f"| {r['impl']} | {r['dtype']} | {r['n']} | {r['seconds'] * 1e3:.3f} | "
                     f"{r['updates_per_s'] / 1e12:.3f} | {fr} | {r['note'] or ''} |")
    # Targets of issue 3
    t = []

    def target(name, ok, value):
        t.append(f"| {name} | {'met' if ok else 'NOT met'} | {value} |")

    def frac(dtype, n):
        r = pick(res, "apsp-gpu", dtype, n)
        return (r["fraction_of_ceiling"], r["seconds"]) if r else (None, None)

    f, s = frac("int32", 10000)
    if f is not None:
        target("int32 n=10000 <= 70 ms and >= 88% of peak", s <= 0.070 and f >= 0.88, f"{s * 1e3:.1f} ms, {f:.1%}")
    r = pick(res, "apsp-gpu-tma", "int32", 10000, "checks off, ld = 10016")
    if r:
        f, s = r["fraction_of_ceiling"], r["seconds"]
        target("int32 n=10000 <= 70 ms and >= 88% of peak, on rows of 128-byte lines (a host "
               "solve's layout)", s <= 0.070 and f >= 0.88, f"{s * 1e3:.1f} ms, {f:.1%}")
    for n in (16384, 32768):
        f, s = frac("int32", n)
        if f is not None:
            target(f"int32 n={n} >= 90% of peak", f >= 0.90, f"{f:.1%}")
    # float32's peak is FADD + FMNMX's (the issue's); where the min3 step ran, its fraction of
    # that step's own ceiling too.
    for dtype, goal in (("float32", 0.85), ("float64", 0.75), ("int64", 0.75)):
        for n in (10000, 16384):
            r = pick(res, "apsp-gpu", dtype, n)
            if r is None or r["fraction_of_ceiling"] is None:
                continue
            f = r["updates_per_s"] / peaks[dtype]
            own = "" if f == r["fraction_of_ceiling"] else \
                f" ({r['fraction_of_ceiling']:.1%} of the min3 step's own ceiling)"
            target(f"{dtype} n={n} >= {goal:.0%} of peak", f >= goal, f"{f:.1%}{own}")
    for n, goal in ((1024, 150e-6), (256, 40e-6)):
        f, s = frac("int32", n)
        if s is not None:
            target(f"int32 n={n} <= {goal * 1e6:.0f} us", s <= goal, f"{s * 1e6:.1f} us")
    base = pick(res, "course-baseline", "int32", 10000, "")
    ours = pick(res, "apsp-gpu", "int32", 10000)
    if base and ours:
        target(">= 1.7x the course design (int32 n=10000)", base["seconds"] / ours["seconds"] >= 1.7,
               f"{base['seconds'] / ours['seconds']:.2f}x")
    for n in (2048, 4096):
        tl, ours = pick(res, "torch-loop", "int32", n, ""), pick(res, "apsp-gpu", "int32", n)
        if tl and ours:
            target(f">= 30x the PyTorch loop (int32 n={n})", tl["seconds"] / ours["seconds"] >= 30,
                   f"{tl['seconds'] / ours['seconds']:.0f}x")
    for n in (256, 512):  # both as the user waits: host wall time, NumPy in and out
        sp, ours = pick(res, "scipy", "float64", n, ""), pick(res, "apsp-solve-numpy", "float64", n, "")
        if sp and ours:
            target(f"faster than SciPy (float64 n={n}, end to end from NumPy)", sp["seconds"] > ours["seconds"],
                   f"{sp['seconds'] / ours['seconds']:.0f}x")
    dev = pick(res, "apsp-gpu", "int32", 10000, "device time, input and negative")
    for impl, how in (("apsp-gpu-host", "in place"), ("apsp-solve-numpy", "apsp.solve, new output")):
        e2e = pick(res, impl, "int32", 10000, "")
        if e2e and dev:
            target(f"end to end from NumPy n=10000 <= 1.4x device time ({how})",
                   e2e["seconds"] <= 1.4 * dev["seconds"],
                   f"{e2e['seconds'] / dev['seconds']:.2f}x ({e2e['seconds'] * 1e3:.1f} ms vs "
                   f"{dev['seconds'] * 1e3:.1f} ms)")
    prog = pick(res, "apsp-gpu", "int32", 10000, "progress")
    if prog and ours:
        cost = prog["seconds"] / pick(res, "apsp-gpu", "int32", 10000)["seconds"] - 1
        target("progress=True costs < 2% (int32 n=10000)", cost < 0.02, f"{cost:+.1%}")
    lines += ["", "## Targets (issue 3)", "", "| target | status | measured |", "|---|---|---|"] + t
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
