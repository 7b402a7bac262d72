"""Host model of the flow plan's owners (flow_owners.patch; GPU_NOTES.md, twenty-fifth session).

Ports flow.cuh's claim order (flow_item, chain_item) and the patch's chain_rounds and owner_key
to Python, then checks two things for nb = 2 .. 27 tile rows:
- cover: every (tile, round) is done exactly once, by the chain (chain_rounds) or by its owner;
- no deadlock: the chain's waits and barriers (chain_run, finish_round) and owners that run
  their tiles' rounds in owner_key order, one round at a time, with the versions and reader
  counts of the kernel, run to the end for 1 .. 232 workers in two random interleavings.
Usage: python benchmarks/probes/flow_owners_model.py (prints "cover ok" and "deadlocks: 0")."""
import sys, itertools
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

def readers_before(i, j, first, nb):
    per = nb-1
    if i == j: return 2*per if i < first else 0
    return per*((i < first) + (j < first))

def simulate(nb, nw, order_seed=0):
    import random
    rnd = random.Random(order_seed)
    version = {}; readers = {}
    V = lambda i,j: version.get((i,j), 0)
    def count(i, j, q):
        if i == q or j == q: readers[(q,q)] = readers.get((q,q),0)+1
        else:
            readers[(i,q)] = readers.get((i,q),0)+1; readers[(q,j)] = readers.get((q,j),0)+1
    # chain as a list of (wait predicate, action)
    steps = []
    def finish_round(r):
        def f():
            version[(r+1,r)] = r+1
            if r+2 < nb:
                version[(r+1,r+2)] = r+1; version[(r+2,r)] = r+1; version[(r,r+2)] = r+1
            if r >= 1 and r+2 < nb: count(r, r+2, r-1); count(r+2, r, r-1)
            count(r+1, r, r); count(r+1, r+1, r)
            if r+2 < nb:
                for t in [(r+2,r),(r,r+2),(r+2,r+1),(r+1,r+2),(r+2,r+2)]: count(*t, r)
        return f
    for r in range(nb-1):
        def b1(r=r):
            version[(r,r)] = r+1
            if r > 0: finish_round(r-1)()
        steps.append((lambda: True, b1))
        two = r+2 < nb
        if two and r >= 1:
            steps.append((lambda r=r: V(r,r+2) >= r-1 and V(r-1,r+2) >= r, lambda: None))
        if two:
            if r >= 1: steps.append((lambda r=r: V(r+2,r) >= r-1 and V(r+2,r-1) >= r, lambda: None))
            steps.append((lambda r=r: V(r+2,r+1) >= r and V(r+2,r+2) >= r and V(r+1,r+2) >= r, lambda: None))
    def last():
        version[(nb-1,nb-1)] = nb
        if nb >= 2: finish_round(nb-2)()
    steps.append((lambda: True, last))
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
    ci = 0
    done_rounds = 0
    while True:
        progress = False
        if ci < len(steps) and steps[ci][0]():
            steps[ci][1](); ci += 1; progress = True
        for o in rnd.sample(owners, len(owners)):
            if o['cur'] is None:
                best = None
                for t in o['tiles']:
                    s = o['st'][t]
                    if s['q'] >= nb: continue
                    k = owner_key(t//nb, t%nb, s['q'])
                    if best is None or k < best[0]: best = (k, t)
                if best is None: continue
                o['cur'] = best[1]
            t = o['cur']; s = o['st'][t]; i, j = divmod(t, nb); q = s['q']
            a, b = chain_rounds(i, j)
            if s['phase'] == 0:
                ok = (V(q,q) >= q+1) if (i == q or j == q) else (V(i,q) >= q+1 and V(q,j) >= q+1)
                if not s['held']: ok = ok and V(i,j) >= q
                if not ok: continue
                count(i, j, q); s['phase'] = 1; progress = True
            if s['phase'] == 1:
                store = i == q or j == q or q+1 == a or q == nb-1
                if store:
                    if readers.get((i,j),0) < readers_before(i, j, q, nb): continue
                    assert V(i,j) <= q, (i,j,q,V(i,j))
                    version[(i,j)] = q+1
                after = b+1 if q+1 == a else q+1
                s['held'] = after < nb and q+1 != a
                s['q'] = after; s['phase'] = 0; o['cur'] = None; done_rounds += 1; progress = True
        if not progress: break
    finished = ci == len(steps) and all(s['q'] >= nb for o in owners for s in o['st'].values())
    return finished, ci, len(steps), done_rounds

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
