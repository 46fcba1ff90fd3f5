"""Masked patterns on the GPU: every pattern of test/python/test_masks.py (sym-mask-to-where: `x[m] = v`,
masked reductions and counts, masked_scatter, top-k filtering, ...) with CUDA inputs against eager
CUDA, with random, all-true and all-false masks; an empty `x[mask].amax()` raises as eager does (the
host reads the count back). One compilation for every size and mask, no graph break.

Skips (cleanly) without a CUDA device:  pytest -q test/gpu/test_gpu_masks.py
"""
from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch._dynamo  # noqa: E402

from mlir_sym import backend  # noqa: E402
from test_masks import CASES, DYNAMO_SETTINGS, run_case  # noqa: E402


def _on_cuda(case):
    def inputs(n, kind, make=case.inputs):
        return tuple(a.cuda() if isinstance(a, torch.Tensor) else a for a in make(n, kind))

    return dataclasses.replace(case, inputs=inputs)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_masked_pattern_on_gpu(case, dynamo_graphs):
    with torch._dynamo.config.patch(**DYNAMO_SETTINGS):
        run_case(_on_cuda(case), torch.compile(case.fn, backend="mlir_sym", dynamic=True))
    assert not torch._dynamo.utils.counters["graph_break"]
    assert dynamo_graphs() == 1, "Dynamo recompiled (or split the frame) for a size or a mask"
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0
