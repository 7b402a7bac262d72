"""One negative cycle, in order, for NegativeCycleError's message.

The engines report the vertices whose computed closed walk came out negative; such a walk need
not be a simple cycle through the vertex. Every vertex of a negative cycle is among them (the
pivot of largest index on the cycle joins its two halves in its round), so a search
on the subgraph they span (Bellman-Ford with parent pointers, from a virtual source) finds one.
Runs only on that error path, on the caller's untouched input.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

# Bellman-Ford's passes each cost |S|^2; a cycle among the parent pointers usually shows up
# after about as many passes as the cycle has edges. Past this much work (about 2 s of NumPy on
# one core: 22 passes at |S| = 3000), or past this many vertices (the search holds the weights
# and a pass's candidates and sums, |S| x |S| each: about 0.5 GB at 4096), no cycle is named;
# the error keeps its vertex list.
_MAX_WORK = 2e8
MAX_VERTICES = 4096


def parent_cycle(parent: np.ndarray) -> Optional[list[int]]:
    """A cycle of the graph v -> parent[v] (-1: none), in the order u -> v along edges, or None."""
    state = np.zeros(len(parent), dtype=np.int8)  # 0 new, 1 on the current walk, 2 done
    for start in range(len(parent)):
        walk, v = [], start
        while v >= 0 and state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = int(parent[v])
        if v >= 0 and state[v] == 1:  # the walk came back onto itself
            cycle = walk[walk.index(v):]
            return cycle[::-1]  # parents first: an edge goes parent -> child
        for u in walk:
            state[u] = 2
    return None


def find_negative_cycle(w: np.ndarray, edge: np.ndarray) -> Optional[list[int]]:
    """Indices of one negative cycle of the dense weight matrix `w` (float64, or int64 for
    integer graphs so that the search is exact), whose edges are where `edge` is True, in path
    order, or None when none is found within the work bound."""
    return _search(w, edge, _MAX_WORK)[0]


def _search(w: np.ndarray, edge: np.ndarray,
            budget: float) -> tuple[Optional[list[int]], bool, float]:
    """(one negative cycle or None, whether the search settled, the work it spent): a None that
    settled means the graph has no negative cycle; one that did not ran out of `budget`.

    Synchronous Bellman-Ford from a virtual source with an edge of weight 0 to every vertex.
    Updates are strict decreases, so a cycle among the parent pointers is negative: around it
    every d[v] >= d[parent] + w(parent, v), and at least one parent has decreased since its
    child took it, since the passes at which the cycle's vertices last changed cannot increase
    all the way around. int64 stays exact: a pass lowers d by at most max|w|, the passes are
    at most m + 1 and the engines' overflow bound holds (n - 1) * max|w| below INT64_INF / 2."""
    m = len(w)
    diag = np.flatnonzero(edge.diagonal() & (np.diagonal(w) < 0))
    if diag.size:
        return [int(diag[0])], True, float(m)
    w = np.where(edge, w, 0)
    far = np.inf if w.dtype.kind == "f" else np.iinfo(w.dtype).max
    d = np.zeros(m, dtype=w.dtype)
    parent = np.full(m, -1, dtype=np.int64)
    cols = np.arange(m)
    spent = 0.0
    for _ in range(m + 1):
        if spent + m * m > budget:
            return None, False, spent
        spent += m * m
        cand = np.where(edge, d[:, None] + w, far)
        u = np.argmin(cand, axis=0)
        best = cand[u, cols]
        better = best < d
        if not better.any():
            return None, True, spent
        d = np.where(better, best, d)
        parent = np.where(better, u, parent)
        cycle = parent_cycle(parent)
        if cycle is not None:
            return cycle, True, spent
    return None, False, spent  # still lowering after m + 1 passes (the theory says a cycle shows)


def closed_walk_vertices(graph: Any, directed: bool) -> Optional[tuple[list[int], Any]]:
    """(every vertex on a negative closed walk of `graph`, and one negative cycle as cycle_in
    gives it or None), exactly, or None past MAX_VERTICES or the work bound. A vertex is on a
    negative closed walk exactly when its strongly connected component holds a negative cycle,
    so each component is searched on its own. For integer graphs, whose engines' walk lengths
    can wrap around the dtype under a negative cycle and leave their vertex list unreliable."""
    import scipy.sparse
    from scipy.sparse.csgraph import connected_components

    if not _integer(graph):
        return None
    try:
        shape = getattr(graph, "shape", None)
        n = int(shape[0]) if shape is not None else len(_as_host(graph))
        if not 0 < n <= MAX_VERTICES:
            return None
        w, edge = _weights(_host_rows(graph, np.arange(n, dtype=np.int64)))
    except Exception:  # an input this helper cannot read: the error keeps the engine's list
        return None
    if not directed:
        w, edge = _undirected(w, edge)
    count, labels = connected_components(scipy.sparse.csr_matrix(edge), directed=True,
                                         connection="strong")
    budget, vertices, first = _MAX_WORK, [], None
    for c in range(count):
        members = np.flatnonzero(labels == c)
        v = members[0]
        if len(members) == 1 and not (edge[v, v] and w[v, v] < 0):  # no cycle through it
            continue
        sub_w, sub_edge = w[np.ix_(members, members)], edge[np.ix_(members, members)]
        cycle, settled, spent = _search(sub_w, sub_edge, budget)
        budget -= spent
        if not settled:
            return None
        if cycle is not None:
            vertices.extend(members.tolist())
            if first is None:
                first = _in_order(sub_w, cycle, members)
    return sorted(vertices), first


def _in_order(w: np.ndarray, cycle: list[int], idx: np.ndarray) -> tuple[list[int], float]:
    """(`cycle` in `idx`'s numbering, its weight in `w`, summed exactly as Python numbers)."""
    nxt = cycle[1:] + cycle[:1]
    weight = sum(w[a, b].item() for a, b in zip(cycle, nxt))
    return [int(idx[v]) for v in cycle], float(weight)


def _as_host(graph: Any) -> np.ndarray:
    from ._intake import as_host_array

    return as_host_array(graph)


def _integer(graph: Any) -> bool:
    """Whether `graph` (any kind apsp.solve takes) holds integers (its dtype read where it has
    one: a device array is not copied for this)."""
    try:
        dtype = getattr(graph, "dtype", None)
        dtype = _as_host(graph).dtype if dtype is None else dtype
        return np.dtype(str(dtype).removeprefix("torch.")).kind in "iu"
    except Exception:  # not an array this helper can read
        return False


def _weights(sub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(weights as float64, or int64 for integers, so that sums are exact; where edges are)."""
    from ._solve import computed_dtype
    from ._sparse import no_edge_value

    sub = sub.astype(computed_dtype(sub.dtype), copy=False)  # the engines' no-edge rule applies
    edge = sub < no_edge_value(sub.dtype)
    return sub.astype(np.float64 if sub.dtype.kind == "f" else np.int64), edge


def _undirected(w: np.ndarray, edge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min(G[i, j], G[j, i]) over the ones that are edges, as the engines read directed=False."""
    one_way = np.where(edge, w, w.T)
    return np.where(edge & edge.T, np.minimum(w, w.T), one_way), edge | edge.T


def cycle_in(w: np.ndarray, edge: np.ndarray, idx: np.ndarray,
             directed: bool) -> Optional[tuple[list[int], float]]:
    """(cycle in `idx`'s numbering, its weight) of the subgraph (w, edge) that `idx` spans."""
    if not directed:
        w, edge = _undirected(w, edge)
    found = find_negative_cycle(w, edge)
    return None if found is None else _in_order(w, found, idx)


def sparse_subgraph(sp: Any, idx: np.ndarray) -> Any:
    """The entries of `sp` between vertices `idx`, renumbered 0..len(idx)-1, as a COO matrix
    whose duplicates are kept (tocsr() would sum them; the engines take their minimum)."""
    import scipy.sparse

    coo = sp.tocoo()
    number = np.full(sp.shape[0], -1, dtype=np.int64)
    number[idx] = np.arange(len(idx))
    keep = (number[coo.row] >= 0) & (number[coo.col] >= 0)
    return scipy.sparse.coo_matrix((coo.data[keep], (number[coo.row[keep]], number[coo.col[keep]])),
                                   shape=(len(idx), len(idx)))


def _host_rows(graph: Any, idx: np.ndarray) -> np.ndarray:
    """graph[idx][:, idx] of any accepted kind, as host data in its own dtype (device arrays are
    indexed on the device, so only |idx|^2 entries come back)."""
    from ._intake import as_host_array, classify, to_host
    from ._solve import computed_dtype
    from ._sparse import densify

    kind = classify(graph)
    if kind == "sparse":
        sub = sparse_subgraph(graph, idx)
        return densify(sub, computed_dtype(sub.dtype))
    if kind == "device":
        if hasattr(graph, "get"):  # CuPy: indexed on the array's own device, not the current one
            import cupy

            with cupy.cuda.Device(graph.device.id):
                on_device = cupy.asarray(idx)
                return to_host(graph[on_device][:, on_device])
        elif hasattr(graph, "detach"):  # torch
            import torch

            idx = torch.as_tensor(idx, device=graph.device)
        else:
            raise TypeError("no host copy of this device array")
        return to_host(graph[idx][:, idx])
    return np.asarray(as_host_array(graph))[np.ix_(idx, idx)]


def negative_cycle(graph: Any, vertices: list[int],
                   directed: bool) -> Optional[tuple[list[int], float]]:
    """(cycle, its weight) among `vertices` of the caller's input `graph`, or None."""
    if not vertices or len(vertices) > MAX_VERTICES:
        return None
    idx = np.asarray(vertices, dtype=np.int64)
    try:
        sub = _host_rows(graph, idx)
    except Exception:  # an input this helper cannot index: the error keeps its vertex list
        return None
    w, edge = _weights(sub)
    return cycle_in(w, edge, idx, directed)


def name_cycle(exc: Any, graph: Any, directed: bool) -> None:
    """Complete a NegativeCycleError from the untouched input `graph`: integer graphs get the exact
    vertex list (closed_walk_vertices: the engines' integer walks can wrap around the dtype, and
    their list with them); then one negative cycle, in order, goes first in the message."""
    exact = closed_walk_vertices(graph, directed)
    if exact is not None and exact[0]:
        exc.set_vertices(exact[0])
        found = exact[1]
    else:
        found = negative_cycle(graph, exc.vertices, directed)
    if found is not None:
        exc.add_cycle(*found)
