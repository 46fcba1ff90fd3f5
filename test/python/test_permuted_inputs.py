"""Inputs laid out as a permutation of a contiguous tensor (fx_rewrites.permuted_inputs): the
artifact takes the contiguous tensor they view, the graph permutes it back, and no call copies them.
The case that matters is training: each linear layer's forward saves `weight.t()` for its backward,
which AOTAutograd hands over as that transposed view; the runtime copied every one of them at every
step before."""
from __future__ import annotations

import pytest
import torch
import torch._dynamo
import torch.nn as nn
from torch._subclasses.fake_tensor import FakeTensor

from mlir_sym import backend

from direct_call_spy import spy_on_direct
from training import twins


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    torch._dynamo.reset()
    backend.stats.reset()
    backend._CACHE.clear()
    monkeypatch.setattr(backend.config, "direct_calls", True)
    yield
    torch._dynamo.reset()


@pytest.fixture
def copies(monkeypatch):
    """The tensors `.contiguous()` was called on (the runtime's copy of an input it cannot read)."""
    seen: list = []
    contiguous = torch.Tensor.contiguous

    def spy(self, *a, **kw):
        if not isinstance(self, FakeTensor):  # tracing's
            seen.append(tuple(self.shape))
        return contiguous(self, *a, **kw)

    monkeypatch.setattr(torch.Tensor, "contiguous", spy)
    return seen


@pytest.mark.parametrize("fast", [True, False], ids=["generated_call", "general_path"])
def test_transposed_input_is_read_in_place(monkeypatch, copies, fast):
    monkeypatch.setattr(backend.config, "fast_calls", fast)
    returned = spy_on_direct(monkeypatch)

    def f(x, y):
        return (x @ y).relu() + x.sum(1, keepdim=True)

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n, k in ((5, 3), (9, 4), (17, 6)):
        x, y = torch.randn(k, n).t(), torch.randn(k, n)  # x: [n, k] with strides (1, n)
        copies.clear()
        torch.testing.assert_close(cf(x, y), f(x, y))
        assert not copies, f"inputs copied at {n}x{k}: {copies}"
    (fn,) = returned
    assert [p for p in fn.artifact.input_perms if p] == [(1, 0)]  # x's (the sizes come first)
    if fast:
        assert "p2 = a2.permute((1, 0))" in fn.source
    assert backend.stats.compiles == 1


def test_permuted_3d_input():
    def f(x):
        return x.softmax(-1) * 2

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in (3, 7):
        x = torch.randn(4, n, 5).permute(1, 2, 0)  # [n, 5, 4], strides (5, 1, 5n)
        torch.testing.assert_close(cf(x), f(x))
        y = torch.randn(n, 5, 4)  # contiguous: the artifact's view of it is not, and is copied
        torch.testing.assert_close(cf(y), f(y))


def test_training_reads_saved_transposed_weights_in_place(copies):
    ref, model = twins(lambda: nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)))
    step = torch.compile(model, backend="mlir_sym", dynamic=True)
    for n in (3, 6, 11):
        x = torch.randn(n, 8)
        ref.zero_grad()
        model.zero_grad()
        ref(x).square().mean().backward()
        copies.clear()
        step(x).square().mean().backward()
        assert not copies, f"inputs copied at {n}: {copies}"
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, msg=lambda m: f"grad of {name} at {n}: {m}")
    perms = [a.input_perms for a in backend._CACHE.values() if getattr(a, "input_perms", None)]
    assert perms and any((1, 0) in p for p in perms), "the backward takes the saved weight.t() as the weight"


def test_views_of_a_permuted_input_are_its_views():
    """Outputs that are the input or views of it are rebuilt from the argument as the user passed it
    (the graph's permute back is a view step of their replay), not from the permuted view."""
    def f(x):
        return x, x[1:], x * 2, x.t()

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in (4, 7):
        x = torch.randn(3, n).t()
        got, want = cf(x), f(x)
        for i, (a, b) in enumerate(zip(got, want)):
            torch.testing.assert_close(a, b)
            if i != 2:  # the views
                assert a.stride() == b.stride() and a.data_ptr() == b.data_ptr(), (i, a.stride(), b.stride())



def test_the_graph_key_tells_layouts_apart():
    """The in-memory artifact cache's key includes the inputs' strides: a graph that differs only in an
    input's layout gets an artifact of its own (the other's would copy that input at every call)."""
    import torch.fx as fx

    def graph(x: torch.Tensor) -> fx.GraphModule:
        g = fx.Graph()
        p = g.placeholder("x")
        p.meta["val"] = x
        g.output(g.call_function(torch.ops.aten.exp.default, (p,)))
        return fx.GraphModule(torch.nn.Module(), g)

    a, b = graph(torch.randn(3, 5)), graph(torch.randn(5, 3).t())
    assert a.code == b.code
    assert backend.graph_key(a) != backend.graph_key(b)
    assert backend.graph_key(a) == backend.graph_key(graph(torch.randn(3, 5)))
