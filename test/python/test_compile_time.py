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
