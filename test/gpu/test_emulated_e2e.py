"""The GPU mapping on every e2e case, executed on the CPU: no GPU needed (CI runs it).

With MLIR_SYM_EMULATE_GPU=1, CPU artifacts are lowered by the `gpu-emulated` pipeline: the compute
goes through sym-lower-to-nvvm's mapping (sym-gpu-map-parallel: linearized launches, the 128-bit path
and its scalar fallback, block reductions, row groups; matmuls mapped as loop nests instead of cuBLAS
calls), then sym-gpu-emulate-launches runs each launch as loops over blocks and threads. Every case
of test/python/cases.py is compiled once with dynamic=True and checked against eager on its sizes,
as in test/python/test_e2e.py. What this cannot check: the cross-thread combination of block
reductions (one thread per block here), PTX, the driver; test_gpu_e2e.py checks those on a GPU.

    pytest -q test/gpu/test_emulated_e2e.py [-k name]
"""
from __future__ import annotations

import pytest
import torch

from cases import CASES, Case
from mlir_sym import backend


@pytest.fixture(autouse=True)
def emulate_gpu(monkeypatch):
    monkeypatch.setenv("MLIR_SYM_EMULATE_GPU", "1")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES if not c.xfail])
def test_gpu_mapping_emulated(case: Case):
    fn = case.build()
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n in case.sizes:
        args = case.inputs(n)
        with torch.no_grad():
            expected = fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
            got = compiled(*args)
        torch.testing.assert_close(got, expected, atol=case.atol, rtol=case.rtol,
                                   msg=lambda m: f"{case.name}, size {n}: {m}")
    assert backend.stats.compiles == case.graphs
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0
