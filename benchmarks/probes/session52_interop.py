# Session 52 interop audit probes (device-array intake of apsp.solve), for an H100 with torch + CuPy.
# Each probe asserts the CORRECT behaviour and prints one line "PROBE name: OK/DEFECT/INCONCLUSIVE/
# SKIP <details>"; the script always exits 0. What it probes:
#   neg_view_overwrite        torch tensor with the negative bit set (torch._neg_view), overwrite=True:
#                             to_dlpack exports the raw memory, so apsp must refuse or honour the bit
#   conj_imag_1x1_overwrite   the public route to a neg-bit float view (z.conj().imag), 1x1
#   negcycle_overwrite_bump   overwrite=True that ends in NegativeCycleError wrote the tensor: autograd
#                             must still be told (the version bump is skipped on the error path)
#   tensor_subclass           a torch.Tensor subclass defined outside torch*: result must be a tensor on
#                             the same device, and requires_grad must be treated as data
#   dlpack_release_check_false  a DLPack-only producer, check=False: the capsule is handed back before
#                             the enqueued copy has run, so the producer's memory can be reused under it
#   cai_dead_stream_export    a CAI v3 result remembers the producer's stream; exporting it after that
#                             stream is destroyed (subprocess: a crash is a defect)
#   cai_stream_minus_one      CAI stream=-1 (not a valid value) must be a clear error, not a crash
#   sparse_cuda_tensor        a sparse CUDA tensor must get apsp's own error saying what to do
import os
import subprocess
import sys
import textwrap

import numpy as np

import apsp


def fw_ref(w: np.ndarray) -> np.ndarray:
    """CPU reference distances (apsp's CPU engine on a float64 copy)."""
    return apsp.solve(np.array(w, dtype=np.float64), device="cpu")


def weights(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 10, size=(n, n)).astype(np.float64)
    w[rng.random((n, n)) >= 0.3] = np.inf
    np.fill_diagonal(w, 0.0)
    return w


def report(name: str, status: str, details: str = "") -> None:
    print(f"PROBE {name}: {status} {details}".rstrip(), flush=True)


def probe(fn):
    try:
        fn()
    except Exception as e:  # a probe that breaks is reported, the others still run
        report(fn.__name__[2:], "DEFECT", f"unexpected {type(e).__name__}: {str(e)[:300]}")
    return fn


def p_neg_view_overwrite():
    torch = TORCH
    w = weights(6)
    t = -torch.tensor(w, dtype=torch.float32, device="cuda")  # raw memory holds -w
    v = torch._neg_view(t)  # reads as w
    assert v.is_neg() and torch.equal(v.cpu(), torch.tensor(w, dtype=torch.float32))
    ok_copy = np.array_equal(apsp.solve(v).cpu().numpy(), fw_ref(w))  # the copy resolves the bit
    try:
        out = apsp.solve(v, overwrite=True)
    except ValueError as e:
        if not isinstance(e, apsp.NegativeCycleError):
            return report("neg_view_overwrite", "OK", f"refused: {e} (copy path correct: {ok_copy})")
        return report("neg_view_overwrite", "DEFECT", f"read the raw (negated) memory: {str(e)[:150]}")
    same = np.array_equal(out.cpu().numpy(), fw_ref(w))
    report("neg_view_overwrite", "OK" if same else "DEFECT",
           "" if same else f"wrong distances written (the neg bit ignored); copy path correct: {ok_copy}")


def p_conj_imag_1x1_overwrite():
    torch = TORCH
    z = torch.tensor([[0 + 5j]], dtype=torch.complex64, device="cuda")
    v = z.conj().imag  # a float32 view reading -5: a negative self-loop
    assert v.is_neg() and float(v) == -5.0
    try:
        apsp.solve(v.resolve_neg())  # reference: the values as torch shows them
        return report("conj_imag_1x1_overwrite", "INCONCLUSIVE", "reference raised no NegativeCycleError")
    except apsp.NegativeCycleError:
        pass
    try:
        out = apsp.solve(v, overwrite=True)
    except (apsp.NegativeCycleError, ValueError) as e:
        return report("conj_imag_1x1_overwrite", "OK", f"{type(e).__name__}")
    report("conj_imag_1x1_overwrite", "DEFECT",
           f"returned {out.tolist()} for a -5 self-loop (solved the raw +5); z is now {z.tolist()}")


def p_negcycle_overwrite_bump():
    torch = TORCH
    w = np.array([[0, 1, 5], [-3, 0, 1], [2, 4, 0]], dtype=np.float32)  # 0 -> 1 -> 0 weighs -2
    a = torch.tensor(w, device="cuda", requires_grad=True)
    t = a * 1.0
    y = (t * t).sum()  # saves t for backward
    v0 = t._version
    try:
        apsp.solve(t, overwrite=True)
        return report("negcycle_overwrite_bump", "INCONCLUSIVE", "no NegativeCycleError raised")
    except apsp.NegativeCycleError:
        pass
    changed = not torch.equal(t.detach(), a.detach())
    try:
        y.backward()
        stale = True
    except RuntimeError as e:
        stale = "inplace" not in str(e) and "in-place" not in str(e)
    if not changed:
        return report("negcycle_overwrite_bump", "OK", "the tensor was left as it was")
    report("negcycle_overwrite_bump", "DEFECT" if stale else "OK",
           f"tensor written, version {v0} -> {t._version}; backward "
           + ("ran on the overwritten values" if stale else "refused as it should"))


def p_tensor_subclass():
    torch = TORCH

    class Sub(torch.Tensor):
        pass

    w = weights(9, 1)
    g = torch.tensor(w, dtype=torch.float32, device="cuda").as_subclass(Sub)
    problems = []
    out = apsp.solve(g)
    if not isinstance(out, torch.Tensor):
        problems.append(f"result is {type(out).__name__}, not a tensor")
        out = torch.from_dlpack(out)
    if out.device != g.device or out.dtype != g.dtype:
        problems.append(f"result on {out.device} {out.dtype}")
    if not np.array_equal(out.cpu().numpy(), fw_ref(w)):
        problems.append("wrong distances")
    g2 = torch.tensor(w, dtype=torch.float32, device="cuda", requires_grad=True).as_subclass(Sub)
    try:
        apsp.solve(g2)
    except Exception as e:
        problems.append(f"requires_grad subclass: {type(e).__name__}: {str(e)[:120]}")
    report("tensor_subclass", "DEFECT" if problems else "OK", "; ".join(problems))


class DLPackOnly:
    """A device array known only through DLPack (not torch, not CuPy to apsp's dispatch)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def p_dlpack_release_check_false():
    torch = TORCH
    n = 256
    w = weights(n, 2).astype(np.float32)
    apsp.solve(DLPackOnly(torch.tensor(w, device="cuda")), check=False)  # warm-up (kernel loads)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.empty((n, n), device="cuda")
        t.copy_(torch.from_numpy(w))
        s.synchronize()
        ptr = t.data_ptr()
        g = DLPackOnly(t)
        del t
        with torch.cuda.stream(torch.cuda.default_stream()):
            torch.cuda._sleep(400_000_000)  # the legacy stream (apsp's, for DLPack producers) is busy
        out = apsp.solve(g, check=False)
        busy = not torch.cuda.default_stream().query()
        del g  # the producer is gone; the copy apsp enqueued has not run yet
        junk = torch.zeros((n, n), device="cuda")  # torch reuses the block on s at once
        reused = junk.data_ptr() == ptr
        s.synchronize()
    torch.cuda.synchronize()
    got = torch.from_dlpack(out).cpu().numpy()
    if np.array_equal(got, fw_ref(w)):
        status = "OK" if busy and reused else "INCONCLUSIVE"
        return report("dlpack_release_check_false", status, f"legacy busy={busy} block reused={reused}")
    report("dlpack_release_check_false", "DEFECT",
           f"result computed from memory reused after the capsule was released (busy={busy}, "
           f"reused={reused}, result all zero={not got.any()})")


def run_child(code: str, timeout: int = 180):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=os.environ.copy())
    lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
    return r.returncode, (lines[-1][7:] if lines else ""), (r.stderr or "")[-300:]


CHILD_HEAD = """
import gc, numpy as np, cupy, torch, apsp
class CAIOnly:
    def __init__(self, i): self.__cuda_array_interface__ = i
rng = np.random.default_rng(3)
w = rng.integers(1, 10, size=(40, 40)).astype(np.float32)
w[rng.random((40, 40)) >= 0.3] = np.inf
np.fill_diagonal(w, 0)
ref = apsp.solve(w.astype(np.float64), device="cpu")
"""


def p_cai_dead_stream_export():
    code = CHILD_HEAD + """
s = cupy.cuda.Stream(non_blocking=True)
with s:
    a = cupy.asarray(w)
    iface = a.__cuda_array_interface__
    out = apsp.solve(CAIOnly(iface))
s.synchronize()
del s; gc.collect()
others = [cupy.cuda.Stream(non_blocking=True) for _ in range(32)]
del others; gc.collect()
bad = []
try:
    if not np.array_equal(torch.from_dlpack(out).cpu().numpy(), ref): bad.append("dlpack values")
except Exception as e: bad.append("torch.from_dlpack: %s: %s" % (type(e).__name__, str(e)[:150]))
try:
    if not np.array_equal(cupy.asnumpy(cupy.asarray(out)), ref): bad.append("cai values")
except Exception as e: bad.append("cupy.asarray: %s: %s" % (type(e).__name__, str(e)[:150]))
print("RESULT " + ("; ".join(bad) or "fine"))
"""
    rc, res, err = run_child(code)
    if rc == 0 and res == "fine":
        return report("cai_dead_stream_export", "OK", "(the driver tolerated the stale handle this time)")
    report("cai_dead_stream_export", "DEFECT", f"rc={rc} {res} {err.strip()[-200:]}")


def p_cai_stream_minus_one():
    code = CHILD_HEAD + """
a = cupy.asarray(w)
cupy.cuda.Device().synchronize()
iface = dict(a.__cuda_array_interface__, stream=-1)
try:
    apsp.solve(CAIOnly(iface))
    first = "accepted"
except Exception as e:
    first = "%s: %s" % (type(e).__name__, str(e)[:150])
after = np.array_equal(cupy.asnumpy(apsp.solve(cupy.asarray(w))), ref)
print("RESULT %s | next call correct=%s" % (first, after))
"""
    rc, res, err = run_child(code)
    good = rc == 0 and (res.startswith("ValueError") or res.startswith("TypeError")) and res.endswith("True")
    report("cai_stream_minus_one", "OK" if good else "DEFECT", f"rc={rc} {res} {err.strip()[-200:] if rc else ''}")


def p_sparse_cuda_tensor():
    torch = TORCH
    sp = torch.eye(4, device="cuda").to_sparse()
    out = []
    for overwrite in (False, True):
        try:
            apsp.solve(sp, overwrite=overwrite)
            out.append(f"overwrite={overwrite}: accepted")
        except (TypeError, ValueError) as e:
            if "dense" not in str(e) and "sparse" not in str(e):
                out.append(f"overwrite={overwrite}: unclear {type(e).__name__}: {str(e)[:100]}")
        except Exception as e:
            out.append(f"overwrite={overwrite}: torch's {type(e).__name__}: {str(e)[:100]}")
    report("sparse_cuda_tensor", "DEFECT" if out else "OK", "; ".join(out))


PROBES = [p_neg_view_overwrite, p_conj_imag_1x1_overwrite, p_negcycle_overwrite_bump,
          p_tensor_subclass, p_dlpack_release_check_false, p_cai_dead_stream_export,
          p_cai_stream_minus_one, p_sparse_cuda_tensor]
NEEDS_CUPY = {"p_cai_dead_stream_export", "p_cai_stream_minus_one"}

if __name__ == "__main__":
    try:
        import torch
        TORCH = torch if torch.cuda.is_available() else None
    except ImportError:
        TORCH = None
    try:
        import cupy
        HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        HAVE_CUPY = False
    for p in PROBES:
        if TORCH is None or (p.__name__ in NEEDS_CUPY and not HAVE_CUPY):
            report(p.__name__[2:], "SKIP", "needs torch with CUDA" + (" and CuPy" if p.__name__ in NEEDS_CUPY else ""))
            continue
        probe(p)
    sys.exit(0)
