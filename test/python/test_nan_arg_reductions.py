"""Arg-reductions with NaNs, ties and infinities, against eager: the first NaN's position wins
(the CPU path: sym-nan-arg-reductions; the GPU path: sym-gpu-map-parallel's arg-reductions), ties
keep the first position, one compile for every length. The CUDA cases skip without a GPU."""
from __future__ import annotations

import pytest
import torch

FNS = {
    "argmax_last_dim": lambda x: x.argmax(-1),
    "argmin_last_dim": lambda x: x.argmin(-1),
    "max_dim": lambda x: x.max(dim=-1),
    "min_dim": lambda x: x.min(dim=-1),
    "argmax_all": lambda x: x.argmax(),
    "argmin_outer_dim": lambda x: x.argmin(0),
}


def _rows(n: int) -> torch.Tensor:
    """Rows of length n: a NaN after the maximum, a NaN first, two NaNs, ties, +-inf with a NaN
    after, all NaN, random numbers."""
    nan, inf = float("nan"), float("inf")
    x = torch.randn(7, n)
    x[0, n // 2] = 50.0
    x[0, n - 1] = nan
    x[1, 0] = nan
    x[2, 1], x[2, n - 2] = nan, nan
    x[3] = 1.0
    x[4, 0], x[4, n // 2] = -inf, inf
    x[4, n - 1] = nan
    x[5] = nan
    return x


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(FNS))
def test_matches_eager_with_nans_ties_and_infinities(name, device, dynamo_graphs):
    fn = FNS[name]
    cf = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n in (5, 9, 33, 3000):
        x = _rows(n).to(device)
        torch.testing.assert_close(cf(x), fn(x), equal_nan=True)
    assert dynamo_graphs() == 1
