"""On the GPU: gathers of any rank and dim (test/python/test_errors.py's GATHERS) and scatters
(index_put, sym-scatter-to-parallel: negative indices, repeated indices of an add) against eager CUDA,
an out-of-range index of either stopping the kernel with CUDA's device-side assert (in a subprocess: the assert
ends the CUDA context), and the artifact cache loading a CUDA artifact (PTX and host program) without
compiling.

Skips (cleanly) without a CUDA device:  pytest -q test/gpu/test_gpu_gathers_and_cache.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from mlir_sym import backend  # noqa: E402
from test_errors import GATHERS, _index_1d, _index_3d_by_2d, _put, _put_add, _put_add_int, _put_rows, _rows_index  # noqa: E402

DEV = "cuda"


@pytest.mark.parametrize("fn,make_x,make_i,bad", [pytest.param(*g, id=g[0].__name__.lstrip("_")) for g in GATHERS])
def test_gathers_match_eager_on_cuda(fn, make_x, make_i, bad):
    negative_ok = fn in (_rows_index, _index_1d, _index_3d_by_2d)
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n, idx in ((5, [0, 4, 2, 2, 1, 3]), (9, [8, 1, 3, 0, 2, 7, 5, 6]), (33, [32, 0, 31, 7, 7, 1])):
        x = make_x(n).to(DEV)
        i = make_i([k - n if negative_ok and k % 2 else k for k in idx]).to(DEV)
        torch.testing.assert_close(compiled(x, i), fn(x, i))
    assert backend.stats.compiles == 1


OUT_OF_RANGE = textwrap.dedent("""
    import torch
    def f(x, i):
        return x[i] * 2
    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    x = torch.randn(5, 3, device="cuda")
    torch.testing.assert_close(cf(x, torch.tensor([0, 4, 1], device="cuda")), f(x, torch.tensor([0, 4, 1], device="cuda")))
    print("in range ok", flush=True)
    out = cf(x, torch.tensor([0, 7, 1], device="cuda"))
    torch.cuda.synchronize()
    print("no error", flush=True)
""")


def _stops_the_kernel(script: str, message: str) -> None:
    """`script` (in a subprocess: the assert ends the CUDA context) runs its in-range call, then its
    out-of-range call fails with a device-side assert."""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ))
    assert "in range ok" in r.stdout, r.stderr[-3000:]
    assert "no error" not in r.stdout
    assert r.returncode != 0
    assert "device-side assert" in r.stderr or message in r.stderr, r.stderr[-3000:]


def test_an_out_of_range_index_stops_the_kernel():
    _stops_the_kernel(OUT_OF_RANGE, "index must be")


@pytest.mark.parametrize("fn", [_put, _put_add, _put_rows, _put_add_int], ids=lambda f: f.__name__.lstrip("_"))
def test_scatters_match_eager_on_cuda(fn):
    rows = fn is _put_rows
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n, idx in ((7, [-1, 0, 2, -3]), (11, [3, -11, 10, 4, 5]), (300, [299, -300, 5, 7, -1, 8])):
        if fn in (_put_add, _put_add_int):
            idx = idx + [idx[0], idx[1]] * 50  # repeated indices: atomic adds
        x = (torch.randn(n, 3) if rows else torch.randn(n)).to(DEV)
        v = (torch.randn(len(idx), 3) if rows else torch.randn(len(idx))).to(DEV)
        i = torch.tensor(idx, device=DEV)
        torch.testing.assert_close(compiled(x, i, v), fn(x, i, v))
    assert backend.stats.compiles == 1


SCATTER_OUT_OF_RANGE = OUT_OF_RANGE.replace("return x[i] * 2", "return x.index_put((i,), torch.ones_like(i, dtype=x.dtype)[:, None].expand(-1, 3)) * 2")


def test_an_out_of_range_scatter_stops_the_kernel():
    _stops_the_kernel(SCATTER_OUT_OF_RANGE, "index out of bounds")


DIVISION_BY_ZERO = textwrap.dedent("""
    import torch
    def f(a, b):
        return torch.div(a, b, rounding_mode="floor") + a % b
    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    a, b = torch.tensor([7, -7, 5], device="cuda"), torch.tensor([2, 3, -2], device="cuda")
    torch.testing.assert_close(cf(a, b), f(a, b))
    print("in range ok", flush=True)
    out = cf(a, torch.tensor([2, 0, 1], device="cuda"))
    torch.cuda.synchronize()
    print("no error", flush=True)
""")


def test_integer_division_by_zero_stops_the_kernel():
    """sym-checked-int-division's check, a device assert on the GPU (eager's CUDA kernels return
    garbage there; its CPU kernels raise ZeroDivisionError, as our CPU path does)."""
    _stops_the_kernel(DIVISION_BY_ZERO, "ZeroDivisionError")


ONE_ELEMENT_OUT_OF_RANGE = OUT_OF_RANGE.replace("return x[i] * 2", "return torch.gather(x.flatten(), 0, i[:1]) * 2")


def test_an_out_of_range_one_element_gather_stops_the_kernel():
    """A gather of one element is unrolled onto the host; its index check runs in a one-thread launch."""
    _stops_the_kernel(ONE_ELEMENT_OUT_OF_RANGE.replace("[0, 7, 1]", "[70, 1, 1]"), "index must be")


def _fresh(f, n):
    torch._dynamo.reset()
    backend._CACHE.clear()
    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    x, y = torch.randn(n, 300, device=DEV), torch.randn(n, 300, device=DEV)
    torch.testing.assert_close(cf(x, y), f(x, y))
    return cf


def test_the_artifact_cache_loads_cuda_artifacts():
    def f(x, y):
        return torch.softmax(x * 2 + y, dim=-1).sum(0) + x.shape[0]

    _fresh(f, 5)
    assert backend.stats.artifact_cache_stores == 1 and backend.stats.compiles == 1
    backend.stats.reset()
    cf = _fresh(f, 70)
    assert backend.stats.artifact_cache_hits == 1 and backend.stats.compiles == 0
    for n in (3, 1000, 4097):
        x, y = torch.randn(n, 300, device=DEV), torch.randn(n, 300, device=DEV)
        torch.testing.assert_close(cf(x, y), f(x, y))
    assert backend.stats.compiles == 0
