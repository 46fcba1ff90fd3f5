"""bfloat16 / float16 graphs against eager: reductions accumulate in float32 as PyTorch's kernels do
(numerics.widen_half_reductions), and var_mean (layer/group norm) is computed in float32
(fx_rewrites.var_mean_in_float). A sum of 4096 ones is 4096 in eager; accumulated in bfloat16 it
would stop at 256.

    pytest -q test/python/test_half.py
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from mlir_sym import backend


def _rowsum(x):
    return x.sum(-1)


def _mean(x):
    return x.mean(dim=0)


def _softmax(x):
    return torch.softmax(x, dim=-1)


def _layernorm(x):
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def _cumsum(x):
    return x.cumsum(-1)


def _groupnorm(x):
    return F.group_norm(x.unsqueeze(-1), 2, eps=1e-5)


FNS = [_rowsum, _mean, _softmax, _layernorm, _cumsum, _groupnorm]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__.strip("_"))
def test_half_precision_matches_eager(fn, dtype):
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for m, n in [(3, 4096), (5, 300), (2, 8)]:
        x = torch.randn(m, n, generator=torch.Generator().manual_seed(n)).to(dtype)
        torch.testing.assert_close(compiled(x), fn(x), msg=lambda s: f"{fn.__name__} [{m}, {n}] {dtype}: {s}")
    assert backend.stats.compiles == 1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_long_half_sum_accumulates_in_float(dtype):
    compiled = torch.compile(_rowsum, backend="mlir_sym", dynamic=True)
    x = torch.ones(2, 4096, dtype=dtype)
    assert compiled(x).tolist() == [4096.0, 4096.0] == _rowsum(x).tolist()
