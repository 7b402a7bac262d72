"""Host model of the flow plan's claim order and of two probes (GPU_NOTES.md, twenty-fifth session).

Ports flow.cuh's claim order (flow_item, chain_item), the chain's waits, versions and reader
counts (chain_run, finish_round), and the workers' (flow_run) to Python, for nb = 2 .. 27 tile
rows, and checks:
- the owners (flow_owners.patch: chain_rounds, owner_key): every (tile, round) is done exactly
  once, by the chain or by its owner, and owners that run their tiles' rounds in owner_key order
  run to the end, for 1 .. 232 workers in two random interleavings;
- the landed claim order, and the same with the band ring's first version (the panel item
  (r - 1, r + 2) held until the chain's helpers have read its band): the fewest workers, each
  holding one claimed item at a time, with which three random interleavings run to the end.
Usage: python benchmarks/probes/flow_model.py (about a minute)."""
import random


def flow_item(x, nb):
    cn = 2*nb-1
    def critical(r, y):
        if y == 0: return (r, r, r-1 if r > 0 else 0, r)
        t = (y-1) >> 1
        b = (r+1+t) % nb
        first = r-1 if (r > 0 and b != r-1) else r
        return (b, r, first, r) if ((y-1) & 1) else (r, b, first, r)
    def rest(r, y):
        e = 2 if r+1 < nb else 1; M = nb-e
        o = lambda t: (r+e+t) % nb
        m = 0
        while (m+1)*(2*M-m-1) <= y: m += 1
        z = y - m*(2*M-m); u = (z+1) >> 1
        if z == 0: return (o(m), o(m), r, r)
        return (o(m), o(m+u), r, r) if (z & 1) else (o(m+u), o(m), r, r)
    if x < cn: return critical(0, x)
    x -= cn
    S = cn + (nb-2)*(nb-2); s = x // S
    if s < nb-1:
        y = x % S
        return critical(s+1, y) if y < cn else rest(s, y-cn)
    return rest(nb-1, x-(nb-1)*S)
def items(nb): return nb*(2*nb-1) + (nb-1)*(nb-2)*(nb-2) + (nb-1)*(nb-1)
def chain_item(it):
    i,j,f,r = it
    if i == j: return i == r or i == r+2
    return (i == r and j == r+2) or (j == r and (i == r+1 or i == r+2))
def chain_rounds(i, j):
    if i == j: return (i-2 if i > 2 else 0, i)
    if i == j+1 or i == j+2: return (j-1 if j > 1 else 0, j)
    if j == i+2: return (i-1 if i > 1 else 0, i)
    if j == i+1 and i >= 1: return (i-1, i-1)
    return (1, 0)
def owner_key(i, j, q):
    if i == q or j == q: return 4*q+3 if ((i == q and j == q-1) or (j == q and i == q-1)) else 4*q
    return 4*q+4 if (i == q+1 or j == q+1) else 4*q+6

def check_cover(nb):
    chain = {}; work = {}
    for x in range(items(nb)):
        it = flow_item(x, nb); i,j,f,r = it
        if chain_item(it):
            for q in range(f, r+1): chain.setdefault((i,j), set()).add(q)
        else:
            if i == r and j == r+1: f = r
            for q in range(f, r+1): work.setdefault((i,j), set()).add(q)
    # chain's Y band: round r-1 on (r, r+1), done by the chain's helpers (not an item of its own)
    for i in range(nb):
        for j in range(nb):
            a, b = chain_rounds(i, j)
            cr = set(range(a, b+1))
            got = chain.get((i,j), set())
            if j == i+1 and i >= 1: got = got | {i-1}
            assert cr == got, (nb, i, j, cr, got)
            allr = got | work.get((i,j), set())
            assert allr == set(range(nb)) and not (got & work.get((i,j), set())), (nb, i, j, sorted(got), sorted(work.get((i,j), set())))

def operands_ready(V, i, j, q):
    """flow_run's wait for round q on tile (i, j): the pivot for a panel, else both panels."""
    return V(q, q) >= q+1 if (i == q or j == q) else (V(i, q) >= q+1 and V(q, j) >= q+1)


def drive(steps, agents, advance, rnd):
    """Runs the chain's steps and the agents (advance(agent) -> progressed) in random
    interleavings until nothing moves; returns how many chain steps ran."""
    ci = 0
    while True:
        progress = False
        if ci < len(steps) and steps[ci][0]():
            steps[ci][1](); ci += 1; progress = True
        for a in rnd.sample(agents, len(agents)):
            progress |= advance(a)
        if not progress:
            return ci


def readers_before(i, j, first, nb):
    per = nb-1
    if i == j: return 2*per if i < first else 0
    return per*((i < first) + (j < first))

def chain_model(nb, version, readers, band=False):
    """The chain as (condition, action) steps in order (chain_run: B1, its helpers' and row
    threads' waits, finish_round), over the shared versions and reader counts; with `band`, the
    helpers of round r >= 1 take tile (r - 1, r + 2) before round r - 1 and count that read."""
    V = lambda i, j: version.get((i, j), 0)

    def count(i, j, q):
        if i == q or j == q:
            readers[(q, q)] = readers.get((q, q), 0) + 1
        else:
            readers[(i, q)] = readers.get((i, q), 0) + 1
            readers[(q, j)] = readers.get((q, j), 0) + 1

    def finish_round(r):
        version[(r+1, r)] = r+1
        if r+2 < nb:
            version[(r+1, r+2)] = r+1; version[(r+2, r)] = r+1; version[(r, r+2)] = r+1
        if r >= 1 and r+2 < nb:
            count(r, r+2, r-1); count(r+2, r, r-1)
        count(r+1, r, r); count(r+1, r+1, r)
        if r+2 < nb:
            for t in [(r+2, r), (r, r+2), (r+2, r+1), (r+1, r+2), (r+2, r+2)]:
                count(*t, r)

    steps = []
    for r in range(nb-1):
        def b1(r=r):
            version[(r, r)] = r+1
            if r > 0:
                finish_round(r-1)
        steps.append((lambda: True, b1))
        two = r+2 < nb
        if two and r >= 1:
            def helpers_read(r=r):
                if band:
                    readers[(r-1, r+2)] = readers.get((r-1, r+2), 0) + 1
            steps.append((lambda r=r: V(r, r+2) >= r-1 and V(r-1, r+2) >= (r-1 if band else r),
                          helpers_read))
        if two:
            if r >= 1:
                steps.append((lambda r=r: V(r+2, r) >= r-1 and V(r+2, r-1) >= r, lambda: None))
            steps.append((lambda r=r: V(r+2, r+1) >= r and V(r+2, r+2) >= r and V(r+1, r+2) >= r,
                          lambda: None))

    def last():
        version[(nb-1, nb-1)] = nb
        if nb >= 2:
            finish_round(nb-2)
    steps.append((lambda: True, last))
    return steps, count, V


def simulate(nb, nw, order_seed=0):
    rnd = random.Random(order_seed)
    version = {}; readers = {}
    steps, count, V = chain_model(nb, version, readers)
    # owners
    tiles = nb*nb
    owners = []
    for w in range(nw):
        mine = list(range(w, tiles, nw))
        st = {}
        for t in mine:
            i, j = divmod(t, nb); a, b = chain_rounds(i, j)
            st[t] = dict(q=(b+1 if a == 0 else 0), held=False, phase=0)
        owners.append(dict(tiles=mine, st=st, cur=None))
    done_rounds = [0]

    def advance(o):
        if o['cur'] is None:
            best = None
            for t in o['tiles']:
                s = o['st'][t]
                if s['q'] >= nb: continue
                k = owner_key(t//nb, t%nb, s['q'])
                if best is None or k < best[0]: best = (k, t)
            if best is None: return False
            o['cur'] = best[1]
        t = o['cur']; s = o['st'][t]; i, j = divmod(t, nb); q = s['q']
        a, b = chain_rounds(i, j)
        progress = False
        if s['phase'] == 0:
            if not operands_ready(V, i, j, q) or not (s['held'] or V(i, j) >= q): return False
            count(i, j, q); s['phase'] = 1; progress = True
        store = i == q or j == q or q+1 == a or q == nb-1
        if store:
            if readers.get((i,j),0) < readers_before(i, j, q, nb): return progress
            assert V(i,j) <= q, (i,j,q,V(i,j))
            version[(i,j)] = q+1
        after = b+1 if q+1 == a else q+1
        s['held'] = after < nb and q+1 != a
        s['q'] = after; s['phase'] = 0; o['cur'] = None; done_rounds[0] += 1
        return True

    ci = drive(steps, owners, advance, rnd)
    finished = ci == len(steps) and all(s['q'] >= nb for o in owners for s in o['st'].values())
    return finished, ci, len(steps), done_rounds[0]

def simulate_claims(nb, nw, band, seed):
    rnd = random.Random(seed)
    version = {}; readers = {}
    steps, count, V = chain_model(nb, version, readers, band)
    total = items(nb); nxt = [0]
    def claim():
        while nxt[0] < total:
            it = list(flow_item(nxt[0], nb)); nxt[0] += 1
            if chain_item(tuple(it)): continue
            if it[0] == it[3] and it[1] == it[3]+1: it[2] = it[3]
            return dict(i=it[0], j=it[1], first=it[2], round=it[3], q=it[2], phase=0)
        return None
    workers = [dict(item=None, done=False) for _ in range(nw)]

    def advance(w):
        if w['done']: return False
        progress = False
        if w['item'] is None:
            w['item'] = claim()
            if w['item'] is None: w['done'] = True; return False
            progress = True
        it = w['item']; i, j, q = it['i'], it['j'], it['q']
        if it['phase'] == 0:
            if not operands_ready(V, i, j, q): return progress
            if q == it['first'] and V(i, j) < it['first']: return progress
            count(i, j, q); progress = True
            if band and q < it['round'] and i == it['round'] and j == it['round']+3:
                version[(i,j)] = q+1
            if q < it['round']: it['q'] += 1; return True
            it['phase'] = 1
        need = readers_before(i, j, it['first'], nb) + (1 if band and j == i+3 and it['round'] >= i else 0)
        if readers.get((i,j),0) < need: return progress
        version[(i,j)] = it['round']+1
        w['item'] = None
        return True

    ci = drive(steps, workers, advance, rnd)
    ok = ci == len(steps) and all(w['done'] for w in workers) and nxt[0] >= total
    return ok


if __name__ == "__main__":
    for nb in range(2, 28):
        check_cover(nb)
    print("cover ok")
    bad = 0
    for nb in range(2, 28):
        for nw in sorted(set([1, 2, 3, 5, 7, nb, nb*nb//4 or 1, nb*nb//2 or 1, nb*nb, 96, 116, 192, 232])):
            for seed in range(2):
                f, ci, ns, dr = simulate(nb, nw, seed)
                if not f: bad += 1; print("DEADLOCK nb", nb, "nw", nw, "chain", ci, "/", ns, "rounds", dr)
    print("deadlocks:", bad)
    for band in (False, True):
        fewest = {}
        for nb in range(5, 28):
            for nw in range(1, 12):
                if all(simulate_claims(nb, nw, band, s) for s in range(3)):
                    fewest[nb] = nw; break
            else:
                fewest[nb] = '>11'
        print('band ring, first version' if band else 'landed claim order', '- fewest workers without a deadlock, per nb:', fewest)
