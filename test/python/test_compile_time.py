"""Compile-time plumbing: phase accounting (mlir_sym.timing), the GC pause compiles run under, and the
cheap size-equality proofs of views_to_collapse_split (fx_rewrites.group_dims)."""
from __future__ import annotations

import gc

import pytest
import sympy
import torch

from mlir_sym import timing
from mlir_sym.fx_rewrites import group_dims


def test_backend_compile_records_phases_and_leaves_the_gc_on():
    timing.reset()
    torch._dynamo.reset()
    assert gc.isenabled()

    def f(x):
        return (x.reshape(x.shape[0] * x.shape[1]) * 2).relu()

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    x = torch.randn(3, 5)
    torch.testing.assert_close(cf(x), f(x))
    got = timing.totals()
    assert got["backend-compile"] > 0 and got["import"] > 0, got
    assert got["backend-compile"] >= got["import"]  # import is part of the compile
    assert gc.isenabled()


def test_gc_paused_restores_the_previous_state_even_on_errors():
    assert gc.isenabled()
    with pytest.raises(ValueError):
        with timing.gc_paused():
            assert not gc.isenabled()
            raise ValueError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with timing.gc_paused():
            pass
        assert not gc.isenabled()  # it was off before: stays off
    finally:
        gc.enable()


def test_group_dims_pairs_symbolic_products_without_simplify():
    s0, s1, s2 = sympy.symbols("s0 s1 s2", positive=True, integer=True)
    # [s0, s1, 4] -> [s0*s1, 4]: the product is proven equal by expansion
    assert group_dims([s0, s1, 4], [s0 * s1, 4]) == [([0, 1], [0]), ([2], [1])]
    # [2*s0 + 2*s1] -> [2, s0 + s1]: equal once expanded
    assert group_dims([2 * s0 + 2 * s1], [2, s0 + s1]) == [([0], [0, 1])]
    # sizes that cannot be proven to match: no grouping
    assert group_dims([s0, s1], [s2, 7]) is None


def _breaking_pipeline(monkeypatch):
    """A named pipeline whose one pass leaves a function without its terminator (invalid IR)."""
    from mlir_sym import pipelines
    from mlir_sym.passes import registry

    class DropReturn(registry.SymPass):
        """Erase every func.return (a broken pass)."""

        name = "test-drop-return"

        def run(self, op):
            for f in op.regions[0].blocks[0].operations:
                for blk in f.regions[0].blocks:
                    blk.operations[len(blk.operations) - 1].erase()

    monkeypatch.setitem(registry._REGISTRY, DropReturn.name, DropReturn)
    monkeypatch.setitem(pipelines.PIPELINES, "test-broken", "builtin.module(test-drop-return)")
    return pipelines


@pytest.mark.parametrize("verify_each", ["0", "1"])
def test_invalid_ir_from_a_pipeline_is_an_error_with_or_without_verify_each(monkeypatch, verify_each):
    """Without MLIR_SYM_VERIFY_EACH the module is verified once after the pipeline: a pass that breaks
    the IR is still a LoweringError with MLIR's diagnostic, never invalid IR handed on."""
    from torch_mlir import ir

    from mlir_sym.context import make_context
    from mlir_sym.pipelines import LoweringError

    monkeypatch.setenv("MLIR_SYM_VERIFY_EACH", verify_each)
    pipelines = _breaking_pipeline(monkeypatch)
    ctx = make_context()
    with ctx:
        m = ir.Module.parse("func.func @f(%a: index) -> index { return %a : index }")
    with pytest.raises(LoweringError, match="pipeline 'test-broken' failed:(.|\n)*terminator"):
        pipelines.run_named("test-broken", m, ctx)


def test_pass_timing_reports_each_pass(monkeypatch, capfd):
    from torch_mlir import ir

    from mlir_sym.context import make_context
    from mlir_sym.pipelines import run_named

    monkeypatch.setenv("MLIR_SYM_PASS_TIMING", "1")
    ctx = make_context()
    with ctx:
        m = ir.Module.parse("func.func @f(%a: index) -> index { return %a : index }")
    run_named("guards-to-llvm", m, ctx)
    err = capfd.readouterr().err
    assert "Execution time report" in err and "sym-guard-cse" in err and "ConvertFuncToLLVMPass" in err
