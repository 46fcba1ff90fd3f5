"""The GPU mapping on every e2e case, executed on the CPU: no GPU needed (CI runs it).

With MLIR_SYM_EMULATE_GPU=1, CPU artifacts are lowered by the `gpu-emulated` pipeline: the compute
goes through sym-lower-to-nvvm's mapping (sym-gpu-map-parallel: linearized launches, the 128-bit path
and its scalar fallback, block reductions, row groups; matmuls mapped as loop nests instead of cuBLAS
calls), then sym-gpu-emulate-launches runs each launch as loops over blocks and threads. Every case
of test/python/cases.py is compiled once with dynamic=True and checked against eager on its sizes,
as in test/python/test_e2e.py, and so is every data-dependent pattern of test/python/test_datadep.py
and every masked pattern of test/python/test_masks.py (their asserts on device-computed counts are read
back by the host program). What this cannot check: the cross-thread combination of block
reductions (one thread per block here), PTX, the driver; test_gpu_e2e.py checks those on a GPU.

    pytest -q test/gpu/test_emulated_e2e.py [-k name]
"""
from __future__ import annotations

import pytest
import torch

from cases import CASES, Case, cpu_has_bf16
from mlir_sym import backend
from test_datadep import CASES as DATADEP_CASES
from test_datadep import DYNAMO_SETTINGS as DATADEP_SETTINGS
from test_datadep import run_case as run_datadep_case
from test_masks import CASES as MASK_CASES
from test_masks import run_case as run_mask_case
from test_errors import GATHERS


@pytest.fixture(autouse=True)
def emulate_gpu(monkeypatch):
    monkeypatch.setenv("MLIR_SYM_EMULATE_GPU", "1")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES if not c.xfail])
def test_gpu_mapping_emulated(case: Case):
    if "bf16" in case.tags and not cpu_has_bf16():
        pytest.skip("the emulated mapping's bf16 vectors need __truncsfbf2, which the CPU JIT lacks without AVX512-BF16")
    fn = case.build()
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n in case.sizes:
        args = case.inputs(n)
        with torch.no_grad():
            expected = fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
            got = compiled(*args)
        torch.testing.assert_close(got, expected, atol=case.atol, rtol=case.rtol, equal_nan=case.equal_nan,
                                   msg=lambda m: f"{case.name}, size {n}: {m}")
    assert backend.stats.compiles == case.graphs
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0


def test_gpu_mapping_emulated_training_step():
    """The forward and backward graphs of a language model's training step (test/python/training.py),
    mapped for the GPU and emulated: the loss and every gradient against eager."""
    from training import check_training

    check_training("cpu", sizes=((2, 7), (3, 16)))
    assert backend.stats.compiles == 2
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in DATADEP_CASES])
def test_gpu_mapping_emulated_data_dependent(case):
    """The count and fill graphs of the data-dependent patterns (test/python/test_datadep.py), mapped
    for the GPU and emulated: random, all-true and all-false masks (empty outputs) against eager."""
    with torch._dynamo.config.patch(**DATADEP_SETTINGS):
        run_datadep_case(case, torch.compile(case.fn, backend="mlir_sym", dynamic=True))
    assert backend.stats.compiles == 1
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in MASK_CASES])
def test_gpu_mapping_emulated_masked(case):
    """The masked patterns (sym-mask-to-where) mapped for the GPU and emulated, against eager with
    random, all-true and all-false masks (an empty x[mask].amax() raises as eager does). Four of them
    failed to lower for the GPU on the H100 ('arith.cmpi' computes a value the host needs) before the
    host read the counts back."""
    with torch._dynamo.config.patch(**DATADEP_SETTINGS):
        run_mask_case(case, torch.compile(case.fn, backend="mlir_sym", dynamic=True))
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0


def test_column_sum_of_a_view(monkeypatch):
    """x.view(m, 2, -1).sum(1): a column reduction over a view, through the whole backend with the GPU
    mapping emulated (the JIT runs the emulation at opt_level 0: at 1..3 every output column of
    this graph landed in column 0)."""
    monkeypatch.setenv("MLIR_SYM_EMULATE_GPU", "1")

    def fn(x):
        return x.view(x.shape[0], 2, -1).sum(1)

    cf = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for m, n in [(5, 8), (3, 16), (40, 6)]:
        x = torch.randn(m, n)
        torch.testing.assert_close(cf(x), fn(x))


@pytest.mark.parametrize("fn,make_x,make_i,bad", [pytest.param(*g, id=g[0].__name__.lstrip("_")) for g in GATHERS])
def test_gathers_emulated(fn, make_x, make_i, bad):
    """test/python/test_errors.py's gathers of every rank and dim through the GPU mapping (the GPU's
    `index_select(-1, i) * 3` once fused the gather's `linalg.index` through a permutation wrongly)."""
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    for n, idx in ((5, [0, 4, 2, 2, 1, 3]), (9, [8, 1, 3, 0, 2, 7, 5, 6])):
        x, i = make_x(n), make_i(idx)
        torch.testing.assert_close(compiled(x, i), fn(x, i))
