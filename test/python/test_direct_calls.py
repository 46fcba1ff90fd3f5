"""Dynamo calls an artifact directly when AOTAutograd's runtime wrapper would do nothing (inference,
no input mutation, no aliased output, ...): same results, same output metadata, and the wrapper stays
wherever it has work to do (backend.Config.direct_calls, backend.wrapper_is_noop)."""
from __future__ import annotations

import pytest
import torch
import torch._dynamo

from mlir_sym import backend


@pytest.fixture(autouse=True)
def fresh():
    torch._dynamo.reset()
    backend.stats.reset()
    yield
    torch._dynamo.reset()


def _compile(fn):
    return torch.compile(fn, backend="mlir_sym", dynamic=True)


def test_plain_inference_graph_is_called_directly():
    def f(x):
        return (x * 2 + 1).relu(), x.sum(0)

    cf = _compile(f)
    for n in (5, 9, 17):
        x = torch.randn(n, 3)
        got, want = cf(x), f(x)
        torch.testing.assert_close(got, want)
    assert backend.stats.direct_graphs == 1
    assert backend.stats.compiles == 1
    # the outputs carry the dynamic dims AOTAutograd's wrapper would have marked on them
    ref = torch.compile(f, backend="aot_eager", dynamic=True)(x)
    for attr in ("_dynamo_propagated_dynamic_indices", "_dynamo_weak_dynamic_indices"):
        assert getattr(got[0], attr, None) == getattr(ref[0], attr, None), attr


def test_dynamic_dims_marker_on_a_torch_without_the_helper(monkeypatch):
    """torch 2.11 (the H100 machine) has no mark_dynamo_propagated_dynamic_indices: its wrapper sets
    `_dynamo_weak_dynamic_indices`, and so do we."""
    from torch._functorch._aot_autograd import runtime_wrappers

    monkeypatch.delattr(runtime_wrappers, "mark_dynamo_propagated_dynamic_indices", raising=False)
    mark = backend._dynamic_dims_marker()
    t = torch.ones(2, 2)
    mark(t, {0})
    mark(t, {1})
    assert t._dynamo_weak_dynamic_indices == {0, 1}


def test_grad_mode_is_off_inside_and_restored_after():
    def f(x):
        return x * 3

    cf = _compile(f)
    x = torch.randn(4)
    assert torch.is_grad_enabled()
    out = cf(x)
    assert torch.is_grad_enabled() and not out.requires_grad
    assert backend.stats.direct_graphs == 1


def _mutating(c, x, pos, count):
    c.index_copy_(0, pos, x)  # written in place (mutations.py)
    count.add_(2)  # elementwise: copied into count after the call
    return c.sum(0) * count


@pytest.mark.parametrize("inplace", [True, False])
def test_a_graph_mutating_inputs_is_called_directly_when_its_mutations_are_ours(monkeypatch, inplace):
    """Mutations AOTAutograd keeps in the graph (keep_inference_input_mutations) are done by the
    call (mutations.with_mutations): Dynamo calls it directly, and the mutated input's version
    counter moves as the wrapper would move it. With inplace_mutations off, AOTAutograd applies
    them and its wrapper stays."""
    monkeypatch.setattr(backend.config, "inplace_mutations", inplace)
    cf = _compile(_mutating)
    for n in (6, 9, 6):
        c, x, pos, count = torch.randn(n, 3), torch.randn(2, 3), torch.tensor([1, 4]), torch.ones(3)
        ref, ref_count = c.clone(), count.clone()
        versions = c._version, count._version
        torch.testing.assert_close(cf(c, x, pos, count), _mutating(ref, x, pos, ref_count))
        torch.testing.assert_close(c, ref)  # the mutations reached the caller's tensors
        torch.testing.assert_close(count, ref_count)
        assert c._version > versions[0] and count._version > versions[1]
    assert backend.stats.direct_graphs == (1 if inplace else 0)
    if inplace:
        assert backend.stats.mutations_in_place == 3 and backend.stats.mutations_copied == 3


def test_a_mutating_graph_is_not_stored_in_the_artifact_cache(monkeypatch, tmp_path):
    """The artifact alone does not do its mutations' copies (its call does): a graph that mutates
    inputs is compiled in each process, never loaded."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    for attempt in range(2):
        torch._dynamo.reset()
        backend._CACHE.clear()
        cf = _compile(_mutating)
        c, x, pos, count = torch.randn(7, 3), torch.randn(2, 3), torch.tensor([0, 6]), torch.ones(3)
        ref, ref_count = c.clone(), count.clone()
        torch.testing.assert_close(cf(c, x, pos, count), _mutating(ref, x, pos, ref_count))
        torch.testing.assert_close(c, ref)
        torch.testing.assert_close(count, ref_count)
    assert backend.stats.artifact_cache_stores == 0 and backend.stats.artifact_cache_hits == 0
    assert backend.stats.compiles == 2


def test_output_aliasing_an_input_keeps_the_wrapper():
    def f(x):
        return x.view(-1), x + 1

    cf = _compile(f)
    x = torch.randn(3, 4)
    view, _ = cf(x)
    assert view._base is x  # a real view of the input, as eager returns
    assert backend.stats.direct_graphs == 0


def test_training_graph_keeps_the_wrapper():
    lin = torch.nn.Linear(3, 2)
    cm = _compile(lin)
    x = torch.randn(5, 3)
    out = cm(x)
    assert out.requires_grad
    assert backend.stats.direct_graphs == 0


def test_direct_calls_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(backend.config, "direct_calls", False)
    cf = _compile(lambda x: x + 1)
    torch.testing.assert_close(cf(torch.ones(3)), torch.full((3,), 2.0))
    assert backend.stats.direct_graphs == 0


def test_noop_check_names_what_the_wrapper_would_do():
    from types import SimpleNamespace

    from torch._functorch._aot_autograd.schemas import OutputType

    ok = SimpleNamespace(input_info=[SimpleNamespace(mutates_data=False, mutates_metadata=False)],
                         output_info=[SimpleNamespace(output_type=OutputType.non_alias)], num_intermediate_bases=0,
                         subclass_inp_meta=[0], tokens={}, is_rng_op_functionalized=False, grad_enabled_mutation=None)
    assert backend.wrapper_is_noop(ok, 1, 1) is None
    assert "Dynamo inputs" in backend.wrapper_is_noop(ok, 1, 2)
    assert backend.wrapper_is_noop(None, 1, 1) == "no AOTAutograd metadata"
    from torch._functorch._aot_autograd.schemas import MutationType

    def mutated(kind, metadata=False):
        info = SimpleNamespace(mutates_data=True, mutates_metadata=metadata, mutation_type=kind)
        return SimpleNamespace(**{**vars(ok), "input_info": [info]})

    # a data mutation in the graph is the call's (mutations.py); one AOTAutograd applies is not
    assert backend.wrapper_is_noop(mutated(MutationType.MUTATED_IN_GRAPH), 1, 1) is None
    assert "mutation" in backend.wrapper_is_noop(mutated(MutationType.MUTATED_OUT_GRAPH), 1, 1)
    assert "mutation" in backend.wrapper_is_noop(mutated(MutationType.MUTATED_IN_GRAPH, metadata=True), 1, 1)
    aliased = SimpleNamespace(**{**vars(ok), "output_info": [SimpleNamespace(output_type=OutputType.alias_of_input)]})
    assert "aliases" in backend.wrapper_is_noop(aliased, 1, 1)
    rng = SimpleNamespace(**{**vars(ok), "is_rng_op_functionalized": True})
    assert "RNG" in backend.wrapper_is_noop(rng, 1, 1)
