"""Artifacts with several variants (sym-specialize under a guard) and Dynamo's dynamic-shape controls."""
import pytest
import torch
import torch._dynamo

from mlir_sym import backend

_DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"))]


def _fresh():
    torch._dynamo.reset()
    backend._CACHE.clear()
    backend.stats.reset()


def _fn(x, y):
    return torch.relu(x @ y).sum(1) * x.shape[0]


def test_hint_variant_serves_hot_size_and_generic_serves_the_rest(monkeypatch):
    _fresh()
    monkeypatch.setattr(backend.config, "specialize_hints", True)
    f = torch.compile(_fn, backend="mlir_sym", dynamic=True)
    for n in (8, 13, 8, 5):
        x, y = torch.randn(n, 4), torch.randn(4, 6)
        torch.testing.assert_close(f(x, y), _fn(x, y))
    art = next(iter(backend._CACHE.values()))
    names = [v.name for v in art.variants]
    assert names[-1] == "generic" and "s" in names[0] and "=8" in names[0], names
    assert [v.calls for v in art.variants] == [2, 2]
    assert backend.stats.compiles == 1 and backend.stats.guard_misses == 0
    # the specialization is a guard of its variant, with its origin
    assert any(kind == "guard" and origin.startswith("specialized") for kind, _, origin in art.variants[0].checks)


@pytest.mark.parametrize("device", _DEVICES)
def test_backward_graphs_get_a_specialized_variant(monkeypatch, caplog, device):
    """A training step under MLIR_SYM_SPECIALIZE=1: the forward and the backward graph each get a
    variant for the traced sizes, which serves them, and the generic one serves the others; results
    and gradients match eager's. The backward's variant did not lower (canonicalization folds the
    specialized arguments' casts into users whose result types stay dynamic; its shapes are refined
    again before the lowering now: "torch-to-linalg-specialized")."""
    _fresh()
    monkeypatch.setattr(backend.config, "specialize_hints", True)
    h = lambda x, w: (x * w).sum(0)  # noqa: E731
    f = torch.compile(h, backend="mlir_sym", dynamic=True)
    for n, m in ((3, 4), (5, 6), (3, 4)):
        x = torch.randn(n, m, device=device, requires_grad=True)
        w = torch.randn(m, device=device, requires_grad=True)
        got = f(x, w)
        gx, gw = torch.autograd.grad(got.sum(), (x, w))
        want = h(x, w)
        wx, ww = torch.autograd.grad(want.sum(), (x, w))
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(gx, wx)
        torch.testing.assert_close(gw, ww)
    assert "does not lower" not in caplog.text
    arts = list(backend._CACHE.values())
    assert len(arts) == 2  # forward and backward
    for art in arts:
        assert [v.name for v in art.variants][-1] == "generic" and len(art.variants) == 2, art.variants
        assert [v.calls for v in art.variants] == [2, 1], (art.name, [v.calls for v in art.variants])


def test_a_specialized_variant_that_does_not_lower_is_left_out(monkeypatch, caplog):
    """A specialized variant is a fast path, not needed for correctness: one that does not lower is
    left out with a warning, and the generic variant serves every size (before, the backward of any
    training step failed under MLIR_SYM_SPECIALIZE=1; a review found it)."""
    from mlir_sym import capture
    from mlir_sym.pipelines import LoweringError

    _fresh()
    monkeypatch.setattr(backend.config, "specialize_hints", True)
    lower = capture.torch_to_linalg

    def failing(ig, mod, specialized=False):
        if specialized:
            raise LoweringError("pipeline 'torch-to-linalg-specialized' failed:\n"
                                "loc(\"f.py\":3:0): the located reason (stand-in)\n  note: more")
        return lower(ig, mod, specialized)

    monkeypatch.setattr(capture, "torch_to_linalg", failing)
    h = lambda x: (x * 2).sum(0)  # noqa: E731
    f = torch.compile(h, backend="mlir_sym", dynamic=True)
    for n in (3, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(f(x), h(x))
    assert "does not lower; the generic variant serves those sizes" in caplog.text
    # the warning says why: the first located diagnostic, not only the pipeline's name
    assert 'loc("f.py":3:0): the located reason (stand-in)' in caplog.text
    art = next(iter(backend._CACHE.values()))
    assert [v.name for v in art.variants] == ["generic"]


@pytest.mark.parametrize("device", _DEVICES)
def test_a_sort_gets_a_specialized_variant(monkeypatch, caplog, device):
    """torch.sort's specialized variant lowers (its results' shapes refined before torch-mlir lowers
    sorts to TMTensor: they stayed `?` while the lowering built them static, "failed to legalize
    unresolved target materialization"), serves its sizes, and matches eager's stable sort, ties
    included."""
    _fresh()
    monkeypatch.setattr(backend.config, "specialize_hints", True)
    h = lambda x: torch.sort(x, dim=-1, descending=True)  # noqa: E731
    f = torch.compile(h, backend="mlir_sym", dynamic=True)
    for n, m in ((3, 5), (4, 7), (3, 5)):
        x = torch.randint(0, 3, (n, m), generator=torch.Generator().manual_seed(n)).float().to(device)
        got, want = f(x), torch.sort(x, dim=-1, descending=True, stable=True)
        torch.testing.assert_close(got.values, want.values)
        torch.testing.assert_close(got.indices, want.indices)
    assert "does not lower" not in caplog.text
    (art,) = backend._CACHE.values()
    assert len(art.variants) == 2 and [v.calls for v in art.variants] == [2, 1], art.variants


@pytest.mark.parametrize("name", ["reductions", "same_shape_reductions", "unbind_repeat_flip", "searchsorted",
                                  "medians", "mode", "frexp"])
def test_specialized_variants_of_e2e_cases_lower_and_match(monkeypatch, caplog, name):
    """Cases whose specialized variant did not lower (the generic one served their sizes) or, for
    frexp, gave wrong results (isfinite's `x == x` folded to true once shapes are static:
    numerics.self_comparisons_as_isnan): torch-mlir's decompositions of amax / amin (and others)
    into multi-result ops put static results where the function returns `?` unless the shapes are
    refined before its backend pipeline too (torch-to-linalg-specialized), and sym-sort-to-merge
    read a static 2-D buffer as 1-D of element type "7xf32". The specialized variant serves the
    hinted size and matches eager."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from cases import BY_NAME

    _fresh()
    monkeypatch.setattr(backend.config, "specialize_hints", True)
    case = BY_NAME[name]
    fn = case.build()
    f = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n in case.sizes[:2]:
        args = case.inputs(n)
        torch.testing.assert_close(f(*args), fn(*args), atol=case.atol, rtol=case.rtol, equal_nan=True)
    assert "does not lower" not in caplog.text
    (art,) = backend._CACHE.values()
    assert len(art.variants) == 2 and [v.calls for v in art.variants] == [1, 1], art.variants


def test_without_specialization_one_generic_variant():
    _fresh()
    f = torch.compile(_fn, backend="mlir_sym", dynamic=True)
    for n in (3, 9):
        x, y = torch.randn(n, 4), torch.randn(4, 6)
        torch.testing.assert_close(f(x, y), _fn(x, y))
    art = next(iter(backend._CACHE.values()))
    assert [v.name for v in art.variants] == ["generic"]


def test_mark_static_gives_a_static_graph():
    _fresh()
    f = torch.compile(lambda x: (x * 2).sum(0), backend="mlir_sym")
    x = torch.randn(6, 3)
    torch._dynamo.mark_static(x, 0)
    torch.testing.assert_close(f(x), (x * 2).sum(0))
    art = next(iter(backend._CACHE.values()))
    assert "[6,3]" in art.source_ir.replace(" ", "")


def test_mark_dynamic_one_compile_for_many_sizes():
    _fresh()
    f = torch.compile(lambda x: torch.softmax(x, -1), backend="mlir_sym")
    for n in (4, 7, 30):
        x = torch.randn(n, 5)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(f(x), torch.softmax(x, -1))
    assert backend.stats.compiles == 1


def test_maybe_mark_dynamic_one_compile_for_many_sizes():
    _fresh()
    f = torch.compile(lambda x: x.cumsum(0) * 2, backend="mlir_sym")
    for n in (5, 9, 33):
        x = torch.randn(n, 3)
        torch._dynamo.maybe_mark_dynamic(x, 0)
        torch.testing.assert_close(f(x), x.cumsum(0) * 2)
    assert backend.stats.compiles == 1


def test_explain_logs_guards_and_what_the_passes_removed(caplog):
    import logging

    _fresh()
    caplog.set_level(logging.INFO, logger="mlir_sym.guards")
    f = torch.compile(lambda x: torch.cat([x, x[: x.shape[0] // 2]]) * 2, backend="mlir_sym", dynamic=True)
    f(torch.randn(8, 4))
    text = caplog.text
    assert "variant generic" in text and "range of s" in text  # each check with its origin
    assert "pipeline guards-to-llvm: sym-" in text  # the guard passes' statistics


def test_a_data_dependent_graph_under_specialization_warns_of_nothing(monkeypatch, caplog):
    """The generic variant is compiled first: a graph with a data-dependent size (`x[mask] @ w`, no
    where form) fails it and goes to the count/fill phases at once. The specialized variant was tried
    first, and its failure logged "the generic variant serves those sizes", which was not so."""
    _fresh()
    monkeypatch.setattr(backend.config, "specialize_hints", True)

    def f(x, m, w):
        out = x.clone()
        out[m] = torch.relu(x[m] @ w)
        return out

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    w = torch.randn(4, 4)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True):
        for n in (6, 9, 6):
            x = torch.randn(n, 4)
            m = x[:, 0] > 0
            torch.testing.assert_close(cf(x, m, w), f(x, m, w))
    assert not torch._dynamo.utils.counters["graph_break"]
    assert "does not lower" not in caplog.text
    assert backend.stats.compiles >= 1 and backend.stats.fallbacks == 0
