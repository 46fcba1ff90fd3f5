"""The generated call of a directly called artifact (runtime/fast_call.py): what Dynamo calls is one
generated function per artifact; it gives what the general path gives (results, output metadata,
grad mode, errors) and hands every case it does not cover to that path."""
from __future__ import annotations

import pytest
import torch
import torch._dynamo

from mlir_sym import backend
from mlir_sym.runtime import fast_call

from direct_call_spy import count_general, spy_on_direct


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    torch._dynamo.reset()
    backend.stats.reset()
    monkeypatch.setattr(backend.config, "direct_calls", True)  # whatever the environment says
    monkeypatch.setattr(backend.config, "fast_calls", True)
    yield
    torch._dynamo.reset()


@pytest.fixture
def returned(monkeypatch):
    """The callables the backend returns to Dynamo; `.args` the arguments of the last call."""
    return spy_on_direct(monkeypatch)


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


def test_planned_sizes_never_take_the_general_path(returned):
    def f(x):
        return x.cos() + 1

    cf = _compile(f)
    cf(torch.randn(4, 3))
    (fn,) = returned
    general = count_general(fn)
    for n in (4, 4, 9, 9, 9, 4):
        x = torch.randn(n, 3)
        torch.testing.assert_close(cf(x), f(x))
    assert len(general) == 1  # size 9's first call: its guards run on the general path, then planned


def _hand_made(compute, derived=None):
    """An artifact over `compute` (a CPU stand-in): inputs (n, x[n]), outputs a tensor [n], the symbol
    n * 2, a constant, None and an int64 tensor [n + 1]."""
    from mlir_sym.runtime.artifact import Artifact, OutputPlan, Variant

    v = Variant("generic", guard=lambda sizes: 0, compute=compute, checks=[], assert_msgs=["n must be even"])
    a = Artifact(name="g", variants=[v], read_sources=lambda args: [args[0], args[1].shape[0]],
                 symbol_from_source=[0], sizes_fn=lambda n: (n, n * 2, n + 1),
                 outputs=[OutputPlan("tensor", torch.float32, (0, 1)), OutputPlan("sym", index=1),
                          OutputPlan("const", const=3.5), OutputPlan("none"), OutputPlan("tensor", torch.int64, (2, 3))])
    a.plan = {"sources": [[0, None], [1, 0]]}
    a.derived_fn = derived
    return a, v


def test_generated_call_passes_what_the_general_path_passes():
    """Inputs, size-derived floats (after the inputs) and outputs reach the compute in the general
    path's order; sym / const / none outputs come back as it returns them."""
    from types import SimpleNamespace

    seen: list = []

    def compute(values):
        seen.append(values)
        values[-2].fill_(7.0)
        return 0

    art, v = _hand_made(compute, derived=lambda n: (n / 2.0, n * 1.5))
    fn = fast_call.generate(art, ["int", "tensor"], [(0, {0})], lambda *a: art(list(a)),
                            lambda t, d: setattr(t, "_marked", d), SimpleNamespace(calls=0), None)
    assert "derived(*symvals)" in fn.source
    x = torch.randn(6)
    general = fn(6, x)  # unplanned: the general path
    fast = fn(6, x)
    assert [type(r) for r in fast] == [type(r) for r in general]
    assert fast[1:4] == general[1:4] == [12, 3.5, None]
    assert fast[0].shape == (6,) and fast[4].shape == (7,) and fast[4].dtype == torch.int64
    assert torch.equal(fast[0], torch.full((6,), 7.0)) and fast[0]._marked == {0}
    assert [type(w) for w in seen[1]] == [type(w) for w in seen[0]]
    assert seen[1][0] == 6 and seen[1][1] is x and seen[1][2:4] == [3.0, 9.0]
    assert art.calls == v.calls == 2


def test_failed_check_raises_without_running_again():
    """A nonzero status raises the general path's error at once: the compute runs once (a graph
    drawing random numbers would draw again on a second run)."""
    from types import SimpleNamespace

    from mlir_sym.runtime.artifact import SymAssertionError, status_error

    runs = [0]

    def compute(values):
        runs[0] += 1
        return 0 if values[0] % 2 == 0 else -1

    art, v = _hand_made(compute)
    stats = SimpleNamespace(calls=0)
    fn = fast_call.generate(art, ["int", "tensor"], [], lambda *a: art(list(a)), lambda t, d: None,
                            stats, status_error)
    fn(6, torch.randn(6))
    art._plan([5, 5])  # planned (its guards hold); the compute's check fails
    runs[0] = 0
    calls = (stats.calls, art.calls, v.calls)
    with pytest.raises(SymAssertionError, match="n must be even"):
        fn(5, torch.randn(5))
    assert runs[0] == 1
    assert (stats.calls, art.calls, v.calls) == tuple(c + 1 for c in calls)  # counted, as the general path


def test_grad_mode_is_off_during_the_compute():
    from types import SimpleNamespace

    modes: list = []

    def compute(values):
        modes.append(torch.is_grad_enabled())
        return 0

    art, _ = _hand_made(compute)
    fn = fast_call.generate(art, ["int", "tensor"], [], lambda *a: art(list(a)), lambda t, d: None,
                            SimpleNamespace(calls=0), None)
    art._plan([4, 4])
    assert torch.is_grad_enabled()
    fn(4, torch.randn(4))
    with torch.no_grad():
        fn(4, torch.randn(4))
    assert modes == [False, False] and torch.is_grad_enabled()


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
    raises what eager raises, shown as the general path shows it (its context suppressed)."""

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
    slow = returned[0].__globals__["slow"]
    bad_args = [bad if a is ok else a for a in returned.args]  # the last call's, with the bad index
    general = count_general(returned[0])
    raised = []
    for call in (lambda: cf(x, bad), lambda: slow(*bad_args)):
        try:
            raise KeyError("the caller's own")
        except KeyError:
            try:
                call()
            except IndexError as e:
                raised.append((type(e), e.__suppress_context__))
    assert raised[0] == raised[1] and raised[0][1], raised
    assert len(general) == 0  # the generated call raised it
    torch.testing.assert_close(cf(x, ok), f(x, ok))  # and calls go on


def test_a_loaded_artifact_gets_the_generated_call(returned):
    """The artifact-cache hit path (a second compile of the same graph) returns a generated call too."""

    def f(x):
        return x.sin() * 2

    for _ in range(2):
        torch._dynamo.reset()
        backend._CACHE.clear()
        cf = _compile(f)
        x = torch.randn(5, 3)
        torch.testing.assert_close(cf(x), f(x))
    assert backend.stats.artifact_cache_hits == 1
    assert len(returned) == 2 and all(hasattr(c, "source") for c in returned)


def test_float_math_on_sizes(returned):
    """Sizes in float arithmetic (Dynamo passes them as SymInt inputs here; the generated call's
    size-derived floats are tested on a hand-made artifact below)."""

    def f(x):
        return x / x.shape[0] + x.shape[1] * 0.5

    cf = _compile(f)
    for n in (3, 8, 8, 21):
        x = torch.randn(n, n + 1)
        torch.testing.assert_close(cf(x), f(x))
    assert backend.stats.compiles == 1
    assert hasattr(returned[0], "source")


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
    graphed = art([tensor])
    graphed.graphs = object()
    assert "CUDA graphs" in fast_call.why_not(graphed, ["tensor"])
    assert "neither" in fast_call.why_not(art([tensor]), ["tensor", "SymFloat"])
    assert "not a tensor" in fast_call.why_not(art([tensor]), ["int"])
    assert "count and fill" in fast_call.why_not(SimpleNamespace(), ["tensor"])
