"""The generated call of a directly called artifact (runtime/fast_call.py): what Dynamo calls is one
generated function per artifact; it gives what the general path gives (results, output metadata,
grad mode, errors) and hands every case it does not cover to that path."""
from __future__ import annotations

import pytest
import torch
import torch._dynamo

from mlir_sym import backend
from mlir_sym.runtime import fast_call


@pytest.fixture(autouse=True)
def fresh():
    torch._dynamo.reset()
    backend.stats.reset()
    yield
    torch._dynamo.reset()


class _Seen(list):
    args: tuple = ()


@pytest.fixture
def returned(monkeypatch):
    """The callables the backend returns to Dynamo; `seen.args` the arguments of the last call."""
    seen = _Seen()
    direct = backend._direct

    def spy(*a):
        c = direct(*a)
        seen.append(c)

        def recording(*args):
            seen.args = args
            return c(*args)

        return recording

    monkeypatch.setattr(backend, "_direct", spy)
    return seen


def _compile(fn):
    return torch.compile(fn, backend="mlir_sym", dynamic=True)


def test_generated_call_matches_eager_and_the_general_path(returned):
    def f(x, y):
        return (x * 2 + y).relu(), x.sum(1), x.shape[0] * 3

    cf = _compile(f)
    for n in (5, 9, 17, 9):
        x, y = torch.randn(n, 4), torch.randn(4)
        torch.testing.assert_close(cf(x, y), f(x, y))
    (fn,) = returned
    assert "memo_get" in fn.source and fn.artifact is not None
    # the general path (its fallback) gives the same for a size the generated call has planned
    slow = fn.__globals__["slow"]
    args = returned.args  # the last call's (n = 9)
    for got, want in zip(fn(*args), slow(*args)):
        torch.testing.assert_close(got, want)
    assert backend.stats.compiles == 1
    art = fn.artifact
    assert art.calls == backend.stats.calls  # every call counted once, by either path


def test_outputs_marked_and_grad_mode_restored(returned):
    def f(x):
        return x * 3 + 1

    cf = _compile(f)
    x = torch.randn(6, 2)
    cf(x)
    out = cf(x)  # planned size: the generated call's own path
    assert returned and hasattr(returned[0], "source")
    assert torch.is_grad_enabled() and not out.requires_grad
    ref = torch.compile(f, backend="aot_eager", dynamic=True)(x)
    for attr in ("_dynamo_propagated_dynamic_indices", "_dynamo_weak_dynamic_indices"):
        assert getattr(out, attr, None) == getattr(ref, attr, None), attr


def test_non_contiguous_inputs_through_the_generated_call(returned):
    def f(x):
        return torch.tanh(x) * 2

    cf = _compile(f)
    for n in (4, 7, 4):
        x = torch.randn(n + 2, n).t()
        torch.testing.assert_close(cf(x), f(x))
    assert hasattr(returned[0], "source")


def test_failing_runtime_check_raises_the_users_error(returned):
    """An index out of range is found by the compiled code (a status, not a guard): the generated call
    hands the call to the general path, which raises what eager raises."""

    def f(x, i):
        return x.index_select(0, i) * 2

    cf = _compile(f)
    x = torch.randn(5, 4)
    ok = torch.tensor([0, 4, 2])
    torch.testing.assert_close(cf(x, ok), f(x, ok))
    torch.testing.assert_close(cf(x, ok), f(x, ok))  # the size is planned: the generated call runs it
    assert hasattr(returned[0], "source")
    bad = torch.tensor([0, 7, 2])
    with pytest.raises(IndexError):
        f(x, bad)
    with pytest.raises(IndexError):
        cf(x, bad)
    torch.testing.assert_close(cf(x, ok), f(x, ok))  # and calls go on


def test_size_derived_floats(returned):
    def f(x):
        return x / x.shape[0] + x.shape[1] * 0.5

    cf = _compile(f)
    for n in (3, 8, 8, 21):
        x = torch.randn(n, n + 1)
        torch.testing.assert_close(cf(x), f(x))
    assert backend.stats.compiles == 1


def test_turned_off(monkeypatch, returned):
    monkeypatch.setattr(backend.config, "fast_calls", False)
    cf = _compile(lambda x: x + 1)
    torch.testing.assert_close(cf(torch.ones(3)), torch.full((3,), 2.0))
    assert returned and not hasattr(returned[0], "source")


def test_why_not_names_what_it_cannot_generate():
    from types import SimpleNamespace

    from mlir_sym.runtime.artifact import Artifact, OutputPlan

    def art(outputs, sources=((0, 0),)):
        a = Artifact(name="g", variants=[], read_sources=lambda a: [], symbol_from_source=[],
                     sizes_fn=lambda *s: (), outputs=outputs, device=None)
        a.plan = {"sources": [list(s) for s in sources]}
        return a

    tensor = OutputPlan("tensor", torch.float32)
    assert fast_call.why_not(art([tensor]), ["tensor"]) is None
    assert "view" in fast_call.why_not(art([OutputPlan("alias")]), ["tensor"])
    assert "on cuda" in fast_call.why_not(art([OutputPlan("tensor", torch.float32, device="cuda")]), ["tensor"])
    assert "neither" in fast_call.why_not(art([tensor]), ["tensor", "SymFloat"])
    assert "not a tensor" in fast_call.why_not(art([tensor]), ["int"])
    assert "count and fill" in fast_call.why_not(SimpleNamespace(), ["tensor"])
