"""Mixed precision with `torch.autocast` (CPU, bfloat16): a graph traced under autocast carries its
casts (AOTAutograd traces them in), runs with autocast off (as AOTAutograd's wrapper does: the
compiled code's own torch calls are not cast again) and is still called directly; results match
eager's in inference and training, at every size without a recompile."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from mlir_sym import backend

AMP = dict(device_type="cpu", dtype=torch.bfloat16)


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 8))


def test_autocast_around_the_call_matches_eager_at_every_size(dynamo_graphs):
    m = _mlp()

    def f(x):
        return m(x).softmax(-1)

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in (4, 7, 9):
        x = torch.randn(n, 16)
        with torch.autocast(**AMP):
            got, want = cf(x), f(x)
        assert got.dtype == want.dtype == torch.bfloat16
        torch.testing.assert_close(got, want)
    assert dynamo_graphs() == 1


def test_autocast_inside_the_function_matches_eager():
    m = _mlp()

    def f(x):
        with torch.autocast(**AMP):
            y = m(x)
        return y.float().log_softmax(-1)

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in (3, 10):
        x = torch.randn(n, 16)
        got, want = cf(x), f(x)
        assert got.dtype == want.dtype == torch.float32
        torch.testing.assert_close(got, want)


def test_a_training_step_under_autocast_gives_eager_gradients():
    m = _mlp()
    x = torch.randn(6, 16, requires_grad=True)
    cf = torch.compile(m, backend="mlir_sym", dynamic=True)

    def grads(fn):
        m.zero_grad(set_to_none=True)
        x.grad = None
        with torch.autocast(**AMP):
            y = fn(x)
        assert y.dtype == torch.bfloat16
        (y.float() ** 2).sum().backward()
        return [x.grad] + [p.grad for p in m.parameters()]

    want, got = grads(m), grads(cf)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        # bf16 products: eager and the compiled code round the same values, in another order
        torch.testing.assert_close(g, w, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("fast_calls", [True, False])
def test_a_graph_traced_under_autocast_is_called_directly_with_autocast_off(fast_calls):
    """AOTAutograd's wrapper turns autocast off around a graph traced under it; our direct call does
    too, through the generated call and the general path alike."""
    backend.config.fast_calls = fast_calls

    def f(x, w):
        return torch.nn.functional.gelu(x @ w) * 2

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    x, w = torch.randn(5, 16), torch.randn(16, 8)
    with torch.autocast(**AMP):
        cf(x, w)
    assert backend.stats.direct_graphs == 1
    (art,) = backend._CACHE.values()
    seen = []
    for v in art.variants:
        def spy(values, compute=v.compute):
            seen.append(torch.is_autocast_enabled("cpu"))
            return compute(values)

        v.compute = spy
    for n in (5, 11):
        x = torch.randn(n, 16)
        with torch.autocast(**AMP):
            got, want = cf(x, w), f(x, w)
        assert got.dtype == want.dtype == torch.bfloat16
        torch.testing.assert_close(got, want)
    assert seen and not any(seen)
