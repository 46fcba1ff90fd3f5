"""Products computed four rows at a time on the CPU (passes/cpu_register_tiles.py), in both loop
forms: linear layers (dot products over the weight's rows: `row-tiles`) and `x @ W`, `addmm` and
batched matmuls (the columns innermost: `update-tiles`), at row counts below, at and past multiples
of 4 (the tiles and the remaining rows), against eager, one compilation serving every row count;
the pipeline's statistics show the pass applied (each test fails without it)."""
from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F

from mlir_sym import backend


def _check(fn, make, sizes, graphs=1):
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n in sizes:
        args = make(n)
        torch.testing.assert_close(compiled(*args), fn(*args), rtol=1e-4, atol=1e-4, msg=lambda m: f"rows {n}: {m}")
    assert backend.stats.compiles == graphs


def test_linear_rows_in_tiles_of_four_and_the_rest(caplog, monkeypatch):
    monkeypatch.setenv("MLIR_SYM_ARTIFACT_CACHE", "0")  # compiled here, so the pipeline's statistics are logged
    caplog.set_level(logging.INFO, logger="mlir_sym.passes")
    torch.manual_seed(0)
    w, b = torch.randn(300, 96), torch.randn(300)
    _check(lambda x: F.linear(x, w, b), lambda n: [torch.randn(n, 96)], [2, 3, 4, 5, 7, 8, 13, 2])
    assert "sym-cpu-register-tiles: row-tiles=1" in caplog.text


@pytest.mark.parametrize("what", ["matmul", "addmm", "bmm"])
def test_updates_of_rows_in_tiles_of_four(caplog, monkeypatch, what):
    monkeypatch.setenv("MLIR_SYM_ARTIFACT_CACHE", "0")
    caplog.set_level(logging.INFO, logger="mlir_sym.passes")
    torch.manual_seed(1)
    w, b = torch.randn(64, 48), torch.randn(48)
    if what == "matmul":
        _check(lambda x: x @ w, lambda n: [torch.randn(n, 64)], [2, 6, 9, 12])
    elif what == "addmm":  # GPT-2's Conv1D
        _check(lambda x: torch.addmm(b, x, w), lambda n: [torch.randn(n, 64)], [3, 8, 13])
    else:
        _check(torch.bmm, lambda n: [torch.randn(3, n, 32), torch.randn(3, 32, 40)], [2, 5, 12])
    assert "update-tiles=1" in caplog.text


@pytest.mark.parametrize("rows", [2, 11])
def test_mlp_block(rows):
    torch.manual_seed(2)
    m = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64)).eval()
    x = torch.randn(rows, 64)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(m, backend="mlir_sym", dynamic=True)(x), m(x), rtol=1e-4, atol=1e-4)
