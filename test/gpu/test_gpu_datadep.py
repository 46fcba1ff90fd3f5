"""Data-dependent output sizes on the GPU: every pattern of test/python/test_datadep.py (nonzero,
x[mask], masked_select, unique, repeat_interleave, .item() sizes) with CUDA inputs against eager CUDA:
count on the device, read the counts back, allocate, fill. One compilation for every size and mask.

Skips (cleanly) without a CUDA device:  pytest -q test/gpu/test_gpu_datadep.py
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch._dynamo  # noqa: E402

from mlir_sym import backend  # noqa: E402
from test_datadep import CASES, DYNAMO_SETTINGS, KINDS  # noqa: E402


def _cuda(args):
    return tuple(a.cuda() if isinstance(a, torch.Tensor) else a for a in args)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_data_dependent_pattern_on_gpu(case):
    with torch._dynamo.config.patch(**DYNAMO_SETTINGS):
        compiled = torch.compile(case.fn, backend="mlir_sym", dynamic=True)
        for n in case.sizes:
            for kind in KINDS:
                args = _cuda(case.inputs(n, kind))
                with torch.no_grad():
                    want = case.fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
                    got = compiled(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
                torch.testing.assert_close(got, want, msg=lambda m: f"{case.name}, size {n}, {kind}: {m}")
    assert backend.stats.compiles == 1
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0
