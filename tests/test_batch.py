"""apsp.solve_batch: many graphs of one size in one call (a (count, n, n) array).

Every graph of a batch must come out as apsp.solve gives it alone, on each engine: the batch runs
the same per-graph contract (rules, checks, negative cycles), so the comparison is exact. CPU tier:
the CPU engine and the host API; GPU tier (`-m gpu`): the CUDA engine's one-launch batches (n <= 64
one block a graph, up to 256 one cluster a graph), its one-after-another path, torch and CuPy
device batches on the caller's stream.
"""
from __future__ import annotations

import numpy as np
import pytest

import apsp
from graphs import (DTYPES, assert_chains_lead_back, assert_interrupt_stops_early,
                    assert_matches_scipy, assert_paths_consistent, negative_cycle_graph, no_edge,
                    potential_negative_graph, random_graph, to_dtype, traced)

SIZES = (1, 2, 5, 31, 63, 64, 65, 100, 129, 256, 300)


def batch_of(rng: np.random.Generator, count: int, n: int, dtype) -> np.ndarray:
    """`count` graphs with negative edges and no negative cycle, stacked."""
    return np.stack([potential_negative_graph(rng, n, dtype, density=0.3) for _ in range(count)])


def solved_one_by_one(g: np.ndarray, device: str, **kw) -> np.ndarray:
    return np.stack([apsp.solve(x, device=device, **kw) for x in g]) if len(g) else g.copy()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", SIZES)
def test_batch_is_each_graph_solved_alone(device, rng, dtype, n):
    g = batch_of(rng, 9, n, dtype)
    before = g.copy()
    got = apsp.solve_batch(g, device=device)
    assert got.dtype == np.dtype(dtype) and got.shape == g.shape
    np.testing.assert_array_equal(got, solved_one_by_one(g, device))
    np.testing.assert_array_equal(g, before)  # the input is untouched
    assert_matches_scipy(got[3], g[3])


@pytest.mark.parametrize("directed, unweighted", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("n", [7, 64, 70])
def test_batch_rules(device, rng, directed, unweighted, n):
    g = np.stack([to_dtype(np.abs(potential_negative_graph(rng, n)), np.float32) for _ in range(5)])
    got = apsp.solve_batch(g, device=device, directed=directed, unweighted=unweighted)
    np.testing.assert_array_equal(
        got, solved_one_by_one(g, device, directed=directed, unweighted=unweighted))


def test_padded_graphs_keep_their_distances(device, rng):
    """Graphs of different sizes padded with no-edge entries to one n: each graph's block is its
    own solve, the padding unreachable (0 on the diagonal)."""
    sizes = [3, 17, 40, 29]
    n = max(sizes)
    graphs = [potential_negative_graph(rng, k, np.float32) for k in sizes]
    padded = np.full((len(sizes), n, n), np.inf, np.float32)
    for b, (k, x) in enumerate(zip(sizes, graphs)):
        padded[b, :k, :k] = x
    got = apsp.solve_batch(padded, device=device)
    for b, (k, x) in enumerate(zip(sizes, graphs)):
        np.testing.assert_array_equal(got[b, :k, :k], apsp.solve(x, device=device))
        pad = got[b].copy()
        pad[:k, :k] = np.inf
        np.fill_diagonal(pad, np.inf)
        assert np.isinf(pad).all()
        assert (np.diagonal(got[b]) == 0).all()


def test_unreachable_integers_are_exactly_inf(device, rng):
    for dtype in (np.int32, np.int64):
        g = batch_of(rng, 4, 30, dtype)
        g[2] = no_edge(dtype) + 5  # above INF: no edge anywhere
        got = apsp.solve_batch(g, device=device)
        off = ~np.eye(30, dtype=bool)
        assert (got[2][off] == no_edge(dtype)).all() and (np.diagonal(got[2]) == 0).all()


@pytest.mark.parametrize("bad, error, words", [
    (np.nan, ValueError, "graph 2 of the batch: graph[1, 4] is NaN"),
    (-np.inf, ValueError, "graph 2 of the batch: graph[1, 4] is -inf"),
])
def test_bad_weights_name_the_graph(device, rng, bad, error, words):
    g = batch_of(rng, 5, 20, np.float64)
    g[2, 1, 4] = bad
    g[4, 0, 1] = np.nan  # a later graph's error is not the one reported
    before = g.copy()
    with pytest.raises(error) as exc:
        apsp.solve_batch(g, device=device)
    assert words in str(exc.value)
    np.testing.assert_array_equal(g, before)


def test_overflow_names_the_graph(device):
    g = np.ones((3, 10, 10), np.int32)
    g[1] = 2**28  # 9 * 2^28 >= INT32_INF // 2
    with pytest.raises(OverflowError, match=r"^graph 1 of the batch: int32 path lengths"):
        apsp.solve_batch(g, device=device)


@pytest.mark.parametrize("n", [6, 80])
def test_negative_cycle_names_the_graph_and_a_cycle(device, rng, n):
    g = batch_of(rng, 5, n, np.float64)
    g[1] = negative_cycle_graph(rng, n)
    g[3] = negative_cycle_graph(rng, n)
    with pytest.raises(apsp.NegativeCycleError) as exc:
        apsp.solve_batch(g, device=device)
    e = exc.value
    assert e.graph == 1 and str(e).startswith("graph 1 of the batch: the graph has a negative cycle: ")
    assert isinstance(e, ValueError) and e.cycle
    cycle = e.cycle
    total = sum(g[1][cycle[i], cycle[(i + 1) % len(cycle)]] for i in range(len(cycle)))
    assert total < 0 and set(cycle) <= set(e.vertices)
    with pytest.raises(apsp.NegativeCycleError) as again:  # in place: no cycle named, same graph
        apsp.solve_batch(g.copy(), device=device, overwrite=True)
    assert again.value.graph == 1 and again.value.cycle == []


@pytest.mark.parametrize("n", [6, 260])
def test_the_lowest_failing_graph_is_reported(device, rng, n):
    """A negative cycle (found after solving) and a NaN (found before) in one batch: the error is
    the lower graph's, whichever kind it is, on every engine and path."""
    g = batch_of(rng, 6, n, np.float64)
    g[2] = negative_cycle_graph(rng, n)
    g[4, 1, 2] = np.nan
    with pytest.raises(apsp.NegativeCycleError) as exc:
        apsp.solve_batch(g, device=device)
    assert exc.value.graph == 2
    g[1, 0, 1] = np.nan
    with pytest.raises(ValueError, match=r"^graph 1 of the batch: graph\[0, 1\] is NaN"):
        apsp.solve_batch(g, device=device)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 5, 65, 300])
def test_predecessors_are_each_graphs_own(device, rng, dtype, n):
    """return_predecessors=True: (dist, pred) of each graph is exactly its own solve's (the CPU
    engine's batch runs apsp.solve's plan on each graph; on a GPU they go through apsp.solve),
    the paths add up, and the input is untouched. n = 300: past the size where one CPU solve
    uses threads, so four graphs go one after another there unless the machine has one or two
    threads."""
    g = batch_of(rng, 4, n, dtype)
    before = g.copy()
    dist, pred = apsp.solve_batch(g, device=device, return_predecessors=True)
    assert dist.dtype == np.dtype(dtype) and pred.dtype == np.int32
    assert dist.shape == pred.shape == g.shape
    for b in range(len(g)):
        want_dist, want_pred = apsp.solve(g[b], device=device, return_predecessors=True)
        np.testing.assert_array_equal(dist[b], want_dist)
        np.testing.assert_array_equal(pred[b], want_pred)
        assert_paths_consistent(g[b], dist[b], pred[b])
    np.testing.assert_array_equal(g, before)


def test_cpu_predecessors_side_by_side(rng):
    """The CPU engine's batch with predecessors, graphs side by side on its threads: fractional
    float32 weights (whose sums round: the predecessor-loop mend runs on each graph, as after
    apsp.solve), zero-weight edges and ties, each graph exactly its own solve."""
    g = np.stack([random_graph(rng, 24, np.float32, density=0.4, zero_frac=0.2) / 7
                  for _ in range(96)])
    dist, pred = apsp.solve_batch(g, device="cpu", return_predecessors=True)
    for b in range(len(g)):
        want_dist, want_pred = apsp.solve(g[b], device="cpu", return_predecessors=True)
        np.testing.assert_array_equal(dist[b], want_dist)
        np.testing.assert_array_equal(pred[b], want_pred)
    for b in range(len(g)):
        assert_chains_lead_back(g[b], dist[b], pred[b])


def test_predecessors_in_place_and_their_errors(device, rng):
    g = batch_of(rng, 4, 20, np.float32)
    want = solved_one_by_one(g, device)
    work = g.copy()
    dist, pred = apsp.solve_batch(work, device=device, return_predecessors=True, overwrite=True)
    assert dist is work
    np.testing.assert_array_equal(work, want)
    assert_paths_consistent(g[2], work[2], pred[2])
    bad = g.copy()
    bad[2, 1, 4] = np.nan
    with pytest.raises(ValueError, match=r"^graph 2 of the batch: graph\[1, 4\] is NaN"):
        apsp.solve_batch(bad, device=device, return_predecessors=True)
    cyc = batch_of(rng, 4, 6, np.float64)
    cyc[1] = cyc[3] = negative_cycle_graph(rng, 6)
    with pytest.raises(apsp.NegativeCycleError) as exc:
        apsp.solve_batch(cyc, device=device, return_predecessors=True)
    e = exc.value
    assert e.graph == 1 and e.cycle
    assert str(e).startswith("graph 1 of the batch: the graph has a negative cycle: ")
    assert str(e).count("negative cycle") == 1, str(e)  # the cycle named once
    for shape in [(0, 5, 5), (3, 0, 0)]:
        d, p = apsp.solve_batch(np.zeros(shape, np.int32), device=device,
                                return_predecessors=True)
        assert d.shape == p.shape == shape and d.dtype == p.dtype == np.int32


def test_strides_of_length_one_dimensions_do_not_matter(device, rng):
    one = np.flip(batch_of(rng, 1, 7, np.float32), 0)  # shape (1, 7, 7), a negative graph stride
    np.testing.assert_array_equal(apsp.solve_batch(one, device=device), solved_one_by_one(one, device))
    dots = np.arange(3, dtype=np.float64).reshape(3, 1, 1)[:, ::-1]  # n = 1, a negative row stride
    np.testing.assert_array_equal(apsp.solve_batch(dots, device=device), np.zeros((3, 1, 1)))


def test_a_list_of_graphs_gets_its_cycle_named(device, rng):
    g = [potential_negative_graph(rng, 8) for _ in range(3)] + [negative_cycle_graph(rng, 8)]
    with pytest.raises(apsp.NegativeCycleError) as exc:
        apsp.solve_batch(g, device=device)
    assert exc.value.graph == 3 and exc.value.cycle


def test_negative_cycle_error_survives_pickling():
    import pickle

    e = apsp.NegativeCycleError("graph 4 of the batch: x", [1, 2], [2, 1], graph=4)
    back = pickle.loads(pickle.dumps(e))
    assert (back.graph, back.vertices, back.cycle, str(back)) == (4, [1, 2], [2, 1], str(e))
    assert apsp.NegativeCycleError("one graph").graph is None


def test_overwrite_solves_in_place(device, rng):
    g = batch_of(rng, 6, 33, np.int32)
    want = solved_one_by_one(g, device)
    out = apsp.solve_batch(g, device=device, overwrite=True)
    assert out is g
    np.testing.assert_array_equal(g, want)


def test_overwrite_of_graphs_spaced_apart(device, rng):
    """A view whose rows are contiguous but whose graphs lie apart (every other graph of a bigger
    array, rows wider than n): solved where they are, nothing else written."""
    g = batch_of(rng, 8, 20, np.float32)
    big = np.full((8, 20, 23), 7.0, np.float32)
    big[:, :, 2:22] = g
    view = big[::2, :, 2:22]
    apsp.solve_batch(view, device=device, overwrite=True)
    np.testing.assert_array_equal(view, solved_one_by_one(g[::2], device))
    np.testing.assert_array_equal(big[1::2, :, 2:22], g[1::2])
    assert (big[:, :, :2] == 7).all() and (big[:, :, 22:] == 7).all()


@pytest.mark.parametrize("pred", [False, True], ids=["", "predecessors"])
def test_overwrite_refusals(rng, pred):
    g = batch_of(rng, 3, 8, np.float64)
    with pytest.raises(ValueError, match="rows are not contiguous"):
        apsp.solve_batch(np.swapaxes(g, 1, 2), overwrite=True, return_predecessors=pred)
    ro = g.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        apsp.solve_batch(ro, overwrite=True, return_predecessors=pred)
    with pytest.raises(ValueError, match="not computed natively"):
        apsp.solve_batch(np.ones((2, 3, 3), np.int16), overwrite=True, return_predecessors=pred)
    with pytest.raises(ValueError, match="cannot write into a list"):
        apsp.solve_batch([x for x in g], overwrite=True, return_predecessors=pred)
    rows = np.zeros((10, 8))  # graph b from row b: the graphs overlap
    overlapping = np.lib.stride_tricks.as_strided(rows, (3, 8, 8), (64, 64, 8))
    with pytest.raises(ValueError, match="its graphs do not lie one after another"):
        apsp.solve_batch(overlapping, overwrite=True, return_predecessors=pred)


def test_shapes_and_empty_batches(device):
    with pytest.raises(ValueError, match=r"got shape \(4, 4\) \(one graph: use apsp.solve\)"):
        apsp.solve_batch(np.zeros((4, 4)), device=device)
    with pytest.raises(ValueError, match=r"got shape \(2, 3, 4\)"):
        apsp.solve_batch(np.zeros((2, 3, 4)), device=device)
    with pytest.raises(ValueError, match="apsp.solve_batch"):
        apsp.solve(np.zeros((2, 3, 3)), device=device)
    for shape in [(0, 5, 5), (3, 0, 0)]:
        out = apsp.solve_batch(np.zeros(shape, np.int32), device=device)
        assert out.shape == shape and out.dtype == np.int32


def test_lists_and_widened_dtypes(device):
    adj = np.zeros((3, 4, 4), bool)
    adj[:, 0, 1] = adj[:, 1, 2] = True
    got = apsp.solve_batch(adj, device=device)  # bool weights: 0/1, widened to int32
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, solved_one_by_one(adj, device))
    as_list = apsp.solve_batch([x.astype(np.float16) for x in adj], device=device)
    assert as_list.dtype == np.float32
    with pytest.raises(ValueError, match="pad each to the largest n"):
        apsp.solve_batch([np.zeros((3, 3)), np.zeros((4, 4))], device=device)
    with pytest.raises(TypeError, match="accepted"):
        apsp.solve_batch(np.zeros((2, 3, 3), np.complex64), device=device)


def test_one_device_only():
    with pytest.raises(ValueError, match="a batch runs on one device"):
        apsp.solve_batch(np.zeros((2, 3, 3)), device=["cpu"])


def test_cpu_batch_leaves_the_threads_as_they_were(rng):
    """The CPU engine runs small graphs one a thread (each solve's own regions on one thread);
    the calling thread's OpenMP thread count is the same afterwards."""
    threads = apsp.info()["cpu_threads"]
    apsp.solve_batch(batch_of(rng, 64, 20, np.float32), device="cpu")
    assert apsp.info()["cpu_threads"] == threads


def test_cpu_traces_each_graph(capfd, rng):
    """The CPU engine solves each graph as apsp.solve does (its trace line, once per graph)."""
    g = batch_of(rng, 5, 12, np.int64)
    _, lines = traced(capfd, lambda: apsp.solve_batch(g, device="cpu"), "APSP_CPU_TRACE",
                      "apsp cpu: solve")
    assert len(lines) == 5 and all(line.endswith("int64, n = 12") for line in lines), lines


def test_torch_cpu_tensors_stay_torch(rng):
    torch = pytest.importorskip("torch")
    g = torch.from_numpy(batch_of(rng, 4, 9, np.float32))
    out = apsp.solve_batch(g, device="cpu")
    assert isinstance(out, torch.Tensor) and out.shape == g.shape
    np.testing.assert_array_equal(out.numpy(), solved_one_by_one(g.numpy(), "cpu"))
    assert apsp.solve_batch(g, device="cpu", overwrite=True) is g


# ---- GPU tier ----------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("n, path", [(40, "one launch, plan small"), (64, "one launch, plan small"),
                                     (65, "one launch, plan cluster"),
                                     (256, "one launch, plan cluster"),
                                     (257, "one after another")])
def test_cuda_batch_paths(capfd, rng, n, path):
    """Each path gives each graph's own solve bit for bit (fractional float32 weights: the sums
    round, so only the same kernels give the same bits; none negative, so that rounding makes no
    negative cycle of a zero-weight one)."""
    g = np.abs(batch_of(rng, 6, n, np.float32)) / np.float32(7) + np.float32(0.1)
    got, lines = traced(capfd, lambda: apsp.solve_batch(g, device="cuda"), "APSP_CUDA_TRACE",
                        "apsp cuda: batch")
    assert lines == [f"apsp cuda: batch of 6 graphs, {path}, float32, n = {n}"], lines
    np.testing.assert_array_equal(got, solved_one_by_one(g, "cuda"))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 5, 17, 32, 33])
def test_batches_that_fill_the_gpu(capfd, rng, dtype, n):
    """A batch of n <= 32 with two graphs an SM or more runs on 32 x 32 tiles (small.cuh, said by
    its trace), one graph alone on 64 x 64: each graph's result is the same bit for bit
    (fractional float weights, so that only the same sums in the same order give the same bits);
    n = 33 is 64 x 64 for both."""
    count = 1200  # past twice the SMs of any GPU this runs on
    g = batch_of(rng, count, n, dtype)
    if np.dtype(dtype).kind == "f":  # none negative: rounding makes no negative cycle of a zero one
        g = np.abs(g) / dtype(7) + dtype(0.1)
    got, lines = traced(capfd, lambda: apsp.solve_batch(g, device="cuda"), "APSP_CUDA_TRACE",
                        "apsp cuda: small plan")
    assert lines == ([f"apsp cuda: small plan on 32 x 32 tiles, {count} graphs of n = {n}"]
                     if n <= 32 else []), lines
    np.testing.assert_array_equal(got, solved_one_by_one(g, "cuda"))
    want = apsp.solve_batch(g[:40], device="cpu")  # the CPU engine's sums may round otherwise
    np.testing.assert_allclose(got[:40], want, rtol=1e-5 if np.dtype(dtype).kind == "f" else 0)


@pytest.mark.gpu
def test_cuda_batch_past_one_launch(rng):
    """More graphs than one launch takes (65535): the launches go on where the last one ended."""
    g = batch_of(rng, 70_000, 4, np.int32)
    g[69_999] = negative_cycle_graph(rng, 4, np.int32)
    with pytest.raises(apsp.NegativeCycleError) as exc:
        apsp.solve_batch(g, device="cuda")
    assert exc.value.graph == 69_999
    g[69_999] = g[0]
    g[66_000, 1, 2] = -3  # may or may not make a cycle: the CPU engine says
    try:
        want = apsp.solve_batch(g, device="cpu")
    except apsp.NegativeCycleError:
        g[66_000, 1, 2] = 3
        want = apsp.solve_batch(g, device="cpu")
    np.testing.assert_array_equal(apsp.solve_batch(g, device="cuda"), want)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_keyboard_interrupt_stops_a_long_batch(device, capfd, monkeypatch):
    """A Ctrl-C that arrives while a batch computes (the GIL released) stops it long before the
    batch would end, and the next call works. The batch (n = 256, int32, solved in place: no
    copy before the engine starts) grows until it takes `least` seconds, the best of two calls
    (other test workers share the machine); the interrupt is sent a tenth of that in. CPU: a
    NumPy batch of at least 20 of the engine's groups (polled between them: 2 graphs a thread at
    this n, fw_cpu.cpp). GPU: a torch batch (up to 8.6 GB) with the checks on, so the host waits
    for it anyway: one cluster a graph, in launches polled between them (engine.cu,
    kBatchPollUpdates; said by its trace)."""
    import time

    cuda = device == "cuda"
    torch = pytest.importorskip("torch") if cuda else None
    monkeypatch.setenv("APSP_CPU_NARROW", "0")  # the int32 solve: these weights would run on the
    # 16-bit one, too fast to time without growing the batch past memory

    def batch(count):
        if cuda:
            return torch.randint(1, 100, (count, n, n), dtype=torch.int32, device="cuda")
        return np.random.default_rng(count).integers(1, 100, size=(count, n, n), dtype=np.int32)

    def timed(graphs):
        t0 = time.perf_counter()
        apsp.solve_batch(graphs, device=device, overwrite=True)
        return time.perf_counter() - t0

    n = 256
    threads = apsp.info()["cpu_threads"]
    count, last, least = (4096, 32768, 0.15) if cuda else (40 * threads, 640 * threads, 0.3)
    while True:
        g = batch(count)
        full, lines = traced(capfd, lambda: timed(g), "APSP_CUDA_TRACE", "apsp cuda: the batch in")
        if full >= least:
            full = min(full, timed(g))
        if full >= least or count >= last:
            break
        g = None  # freed before the next one is made
        count *= 2
    assert full >= least, f"{count} graphs solved in {full:.3f} s: too fast to tell"
    if cuda:
        assert len(lines) == 1 and lines[0].endswith("Ctrl-C polled between them"), lines
    assert_interrupt_stops_early(lambda: timed(g), full, "batch")
    g = None
    small = batch_of(np.random.default_rng(3), 3, 65, np.float32)
    np.testing.assert_array_equal(apsp.solve_batch(small, device=device),
                                  solved_one_by_one(small, device))


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="the device-batch tests use PyTorch tensors")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [30, 90])
def test_torch_batch_on_the_gpu(torch, rng, dtype, n):
    g = batch_of(rng, 7, n, dtype)
    t = torch.from_numpy(g).cuda()
    out = apsp.solve_batch(t)
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == t.dtype
    np.testing.assert_array_equal(out.cpu().numpy(), apsp.solve_batch(g, device="cpu"))
    np.testing.assert_array_equal(t.cpu().numpy(), g)  # untouched


@pytest.mark.gpu
def test_torch_batch_follows_the_callers_stream(torch, rng):
    """On a side stream whose pending write fills the input, check=False: the call returns
    before the GPU is done, and the result is that of the written input."""
    g = batch_of(rng, 300, 48, np.float32)
    src = torch.from_numpy(g).cuda()
    t = torch.zeros_like(src)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # keeps the stream busy for tens of ms
        t.copy_(src)
        out = apsp.solve_batch(t, check=False)
        assert not s.query()  # still working: nothing waited
    s.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), apsp.solve_batch(g, device="cpu"))


@pytest.mark.gpu
def test_torch_batch_in_place_on_a_view(torch, rng):
    g = batch_of(rng, 6, 50, np.int64)
    buf = torch.full((6, 50, 53), 7, dtype=torch.int64, device="cuda")
    view = buf[:, :, 1:51]
    view.copy_(torch.from_numpy(g))
    assert apsp.solve_batch(view, overwrite=True) is view
    np.testing.assert_array_equal(view.cpu().numpy(), apsp.solve_batch(g, device="cpu"))
    assert (buf[:, :, :1] == 7).all() and (buf[:, :, 51:] == 7).all()
    with pytest.raises(ValueError, match="rows are not contiguous"):
        apsp.solve_batch(view.transpose(1, 2), overwrite=True)


@pytest.mark.gpu
def test_torch_batch_errors(torch, rng):
    g = batch_of(rng, 4, 20, np.float64)
    g[3] = negative_cycle_graph(rng, 20)
    t = torch.from_numpy(g).cuda()
    with pytest.raises(apsp.NegativeCycleError) as exc:
        apsp.solve_batch(t)
    assert exc.value.graph == 3 and exc.value.cycle
    t[0, 2, 3] = float("nan")
    with pytest.raises(ValueError, match=r"^graph 0 of the batch: graph\[2, 3\] is NaN"):
        apsp.solve_batch(t)
    with pytest.raises(ValueError, match="a batch runs on one GPU"):
        apsp.solve_batch(t, device=[0])
    with pytest.raises(TypeError, match="graphs"):
        apsp.solve_batch(t.to(torch.float16))
    # the GPU stays usable
    np.testing.assert_array_equal(apsp.solve_batch(t[1:3]).cpu().numpy(),
                                  apsp.solve_batch(g[1:3], device="cpu"))


@pytest.mark.gpu
def test_cupy_batch(rng):
    cupy = pytest.importorskip("cupy")
    g = batch_of(rng, 5, 40, np.int32)
    c = cupy.asarray(g)
    out = apsp.solve_batch(c)
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_array_equal(out.get(), apsp.solve_batch(g, device="cpu"))
    assert apsp.solve_batch(c, overwrite=True) is c
    np.testing.assert_array_equal(c.get(), out.get())


@pytest.mark.gpu
def test_device_batch_predecessors(torch, rng):
    """torch and CuPy batches with predecessors: each graph's own apsp.solve on its GPU (the
    caller's stream), results of the input's kind there; in place on a torch view too."""
    cupy = pytest.importorskip("cupy")
    g = batch_of(rng, 5, 40, np.int32)
    want = [apsp.solve(x, device="cpu", return_predecessors=True) for x in g]
    t = torch.from_numpy(g).cuda()
    for graphs, host in [(t, lambda a: a.cpu().numpy()), (cupy.asarray(g), lambda a: a.get())]:
        dist, pred = apsp.solve_batch(graphs, return_predecessors=True)
        assert type(dist) is type(graphs) and type(pred) is type(graphs)
        assert str(pred.dtype).endswith("int32") and tuple(pred.shape) == g.shape
        for b, (d, p) in enumerate(want):
            np.testing.assert_array_equal(host(dist)[b], d)
            assert_paths_consistent(g[b], host(dist)[b], host(pred)[b])
        np.testing.assert_array_equal(host(graphs), g)  # untouched
    buf = torch.full((5, 40, 43), 7, dtype=torch.int32, device="cuda")
    view = buf[:, :, 1:41]
    view.copy_(t)
    dist, pred = apsp.solve_batch(view, return_predecessors=True, overwrite=True)
    assert dist is view and pred.is_cuda
    np.testing.assert_array_equal(view.cpu().numpy(), np.stack([d for d, _ in want]))
    assert (buf[:, :, :1] == 7).all() and (buf[:, :, 41:] == 7).all()
    t[3, 0, 1], t[3, 1, 0] = -5, 2  # a negative cycle 0 -> 1 -> 0 in graph 3
    with pytest.raises(apsp.NegativeCycleError) as exc:
        apsp.solve_batch(t, return_predecessors=True)
    assert exc.value.graph == 3 and exc.value.cycle
    assert str(exc.value).startswith("graph 3 of the batch: the graph has a negative cycle: ")
