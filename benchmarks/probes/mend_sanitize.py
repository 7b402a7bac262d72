# Fifty-third session: a small driver for compute-sanitizer (memcheck, racecheck) over the device
# predecessor mend (src/cuda/pred_repair.cu): float solves with predecessors whose rows have
# suspects (zero-weight cycles where sums round; negative edges), on host and torch arrays, and the
# mend alone on crafted loops (one, and thirty in one row); every chain must lead back, as on the
# CPU engine; and (fifty-fourth session) a pool of searches that runs out.
import sys

import numpy as np
import torch

import apsp
from apsp import _core

sys.path.insert(0, "tests")
from graphs import (assert_chains_lead_back, crafted_pred_loop, crafted_pred_loops,  # noqa: E402
                    looping_rows, rounding_zero_cycles, zero_cycle_loop_case)

solves = 0
for dtype in (np.float32, np.float64):
    graphs = [zero_cycle_loop_case()] + [rounding_zero_cycles(n, s) for s, n in enumerate((65, 130, 300))]
    rng = np.random.default_rng(1)
    pot = rng.random(200) * 10
    neg = np.where(rng.random((200, 200)) < 0.05, rng.random((200, 200)) * 20 + pot[:, None] - pot[None, :], np.inf)
    for k, g in enumerate(graphs + [neg]):
        g = g.astype(dtype)
        for directed in (True, False) if k < len(graphs) else (True,):  # potentials: directed
            d, p = apsp.solve(g, return_predecessors=True, directed=directed, device="cuda")
            assert_chains_lead_back(g, d, p, directed=directed)
            d, p = apsp.solve(torch.from_numpy(g).cuda(), return_predecessors=True, directed=directed)
            assert_chains_lead_back(g, d.cpu().numpy(), p.cpu().numpy(), directed=directed)
            solves += 2
    for mendable in (True, False):
        g, dist, pred = crafted_pred_loop(dtype, mendable=mendable, n=70)
        dd, pp = torch.from_numpy(dist).cuda(), torch.from_numpy(pred).cuda()
        _core.repair_predecessor_loops_device(torch.utils.dlpack.to_dlpack(dd),
                                              torch.utils.dlpack.to_dlpack(pp), 0)
        torch.cuda.synchronize()
        got = pp.cpu().numpy()
        assert list(got[0, :4]) == ([-9999, 2, 3, 0] if mendable else list(pred[0, :4])), got[0, :4]
        solves += 1
    g, dist, pred = crafted_pred_loops(dtype, loops=30, first=520)  # batches past column 512
    dd, pp = torch.from_numpy(dist).cuda(), torch.from_numpy(pred).cuda()
    _core.repair_predecessor_loops_device(torch.utils.dlpack.to_dlpack(dd),
                                          torch.utils.dlpack.to_dlpack(pp), 0)
    torch.cuda.synchronize()
    assert looping_rows(dist, pp.cpu().numpy()) == set()
    solves += 1
    # 128 rows claiming a pool that pays for 40 of them (fifty-fourth session): partial grants.
    g, dist, pred = crafted_pred_loops(dtype, loops=64, first=128, sources=128)
    dd, pp = torch.from_numpy(dist).cuda(), torch.from_numpy(pred).cuda()
    _core.repair_predecessor_loops_device(torch.utils.dlpack.to_dlpack(dd),
                                          torch.utils.dlpack.to_dlpack(pp), 0)
    torch.cuda.synchronize()
    got = pp.cpu().numpy()
    assert np.count_nonzero(got != pred) == _core.MEND_SEARCHES_PER_VERTEX * len(g)
    assert_chains_lead_back(g, dist, got, skip_sources=frozenset(looping_rows(dist, got)))
    solves += 1
print(f"mend sanitizer driver: {solves} solves and mends, every chain leads back")
