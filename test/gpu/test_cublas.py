"""Contractions in cuBLAS on memref descriptors (runtime/cublas.py, Runtime.library_einsum) against
float64 einsum: every matmul form and layout test_cublas_plan.py plans (one GEMM, or one per index of
a group that does not collapse), with tensors and with arena descriptors as operands, float32 /
float64 / bf16 / f16 (half operands into float32 too), set and accumulated; the shapes cuBLAS cannot
read through torch on wrapped descriptors (and a half result that several GEMMs would add up); a side
stream. GPU only."""
from __future__ import annotations

import os
import sys

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from test_cublas_plan import FORMS, _operands  # noqa: E402

TYPES = [("float32", "float32"), ("float64", "float64"), ("bfloat16", "float32"), ("float16", "float32"),
         ("bfloat16", "bfloat16"), ("float16", "float16")]


def _runtime():
    from mlir_sym.runtime.cuda import Runtime

    return Runtime(torch.device("cuda"))


def _desc(t: torch.Tensor) -> tuple:
    p = t.data_ptr()
    return (p, p, 0, *t.shape, *t.stride())


def _check(equation: str, layout: str, types: tuple, as_desc: bool) -> None:
    from mlir_sym.runtime.cublas import gemm_calls, slow_transposed
    from mlir_sym.runtime.cuda import matmul_form

    rt = _runtime()
    sizes = dict(zip("abcdeijk", (2, 3, 4, 5, 6, 7, 8, 9)))
    a, b, c = _operands(equation, layout, sizes, getattr(torch, types[0]), getattr(torch, types[1]), "cuda")
    want = torch.einsum(equation, a.double(), b.double())
    args = [_desc(x) if as_desc else x for x in (a, b, c)]
    dtypes = (types[0], types[0], types[1])
    tol = dict(atol=1e-9, rtol=1e-9) if types[1] == "float64" else dict(atol=3e-2, rtol=2e-2) \
        if types[1] in ("bfloat16", "float16") else dict(atol=2e-4, rtol=2e-4)
    rt.library_einsum(True, equation, dtypes, *args)
    torch.testing.assert_close(c.double(), want, **tol)
    rt.library_einsum(False, equation, dtypes, *args)
    torch.testing.assert_close(c.double(), 2 * want, **tol)
    calls = gemm_calls(matmul_form(equation), *((list(t.shape), list(t.stride())) for t in (a, b, c)), True)
    in_cublas = calls is not None and not any(slow_transposed(p, types[0]) for p, *_ in calls)
    # a half result set by several GEMMs adding up (a group that does not collapse) is one product
    # through torch: rounded once
    split_half = calls is not None and types[1] in ("bfloat16", "float16") and any(not s for *_, s in calls)
    assert len(rt._gemms) == 2
    assert all((e is not False) == (in_cublas and not (key[1] and split_half)) for key, e in rt._gemms.items())


@pytest.mark.parametrize("types", TYPES, ids=lambda t: "-".join(t))
@pytest.mark.parametrize("equation", FORMS)
def test_contractions_in_cublas(equation, types):
    _check(equation, "contiguous", types, as_desc=True)


@pytest.mark.parametrize("layout", ["transposed", "column-major-out", "padded"])
@pytest.mark.parametrize("equation", FORMS)
@pytest.mark.parametrize("as_desc", [False, True], ids=["tensors", "descriptors"])
def test_contraction_layouts(equation, layout, as_desc):
    _check(equation, layout, ("float32", "float32"), as_desc)


def test_integer_contractions_go_through_torch():
    rt = _runtime()
    a = torch.randint(-5, 5, (4, 6), device="cuda")
    b = torch.randint(-5, 5, (6, 3), device="cuda")
    c = torch.zeros(4, 3, dtype=torch.int64, device="cuda")
    with pytest.raises(RuntimeError):  # as eager: no integer matmul on CUDA
        rt.library_einsum(True, "ik,kj->ij", ("int64", "int64", "int64"), _desc(a), _desc(b), _desc(c))


def test_a_side_stream_gets_its_own_workspace():
    """The handle follows torch's current stream: a GEMM on a side stream is ordered on it."""
    rt = _runtime()
    a, b = torch.randn(64, 32, device="cuda"), torch.randn(32, 16, device="cuda")
    c = torch.empty(64, 16, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        rt.library_einsum(True, "ik,kj->ij", ("float32",) * 3, _desc(a), _desc(b), _desc(c))
        from mlir_sym.runtime.cublas import Blas

        blas = Blas.get(torch.cuda.current_device())
        assert blas.stream == s.cuda_stream and s.cuda_stream in blas.workspaces
    s.synchronize()
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)
    rt.library_einsum(True, "ik,kj->ij", ("float32",) * 3, _desc(a), _desc(b), _desc(c))
    assert blas.stream == torch.cuda.current_stream().cuda_stream
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)


BIAS_TYPES = [("float32", "float32"), ("bfloat16", "bfloat16"), ("float16", "float16"), ("bfloat16", "float32")]


@pytest.mark.parametrize("types", BIAS_TYPES, ids=lambda t: "-".join(t))
@pytest.mark.parametrize("equation, a_shape, b_shape, c_shape", [
    ("ik,kj->ij", (37, 64), (64, 96), (37, 96)),
    ("ik,kj->ij", (1, 64), (64, 96), (1, 96)),  # one row: taken as row-major (cublas.bias_plan)
    ("abd,cd->abc", (3, 50, 256), (768, 256), (3, 50, 768)),  # a linear layer: nn.Linear's weight as stored
    ("abde,cde->abc", (2, 33, 4, 16), (40, 4, 16), (2, 33, 40)),  # an output projection over (heads, head dim)
])
@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "offset"])
def test_contraction_with_bias_in_cublaslt(equation, a_shape, b_shape, c_shape, types, offset):
    """Runtime.library_einsum_bias (sym-gpu-gemm-bias-epilogue): one cuBLASLt GEMM with its bias
    epilogue, as eager's addmm: the product in float32 plus the bias, rounded once; an operand one
    element off its allocation's alignment picks another algorithm."""
    rt = _runtime()
    dt, ct = getattr(torch, types[0]), getattr(torch, types[1])
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(torch.Size(a_shape).numel() + offset, device="cuda", generator=g).to(dt)[offset:].view(a_shape)
    b = torch.randn(b_shape, device="cuda", generator=g).to(dt)
    bias = torch.randn(c_shape[-1], device="cuda", generator=g).to(ct)
    c = torch.full(c_shape, float("nan"), device="cuda", dtype=ct)
    rt.library_einsum_bias(equation, (types[0], types[0], types[1], types[1]), _desc(a), _desc(b), _desc(bias), _desc(c))
    entries = [e for k, e in rt._gemms.items() if k[0] == "lt"]
    assert len(entries) == 1 and entries[0] is not False, "not cuBLASLt's bias GEMM"
    want = torch.einsum(equation, a.double(), b.double()) + bias.double()
    tol = dict(atol=5e-2, rtol=2e-2) if ct in (torch.bfloat16, torch.float16) else dict(atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(c.double(), want, **tol)
    if equation == "ik,kj->ij" and dt == ct:  # eager's addmm (cuBLASLt's bias epilogue too)
        torch.testing.assert_close(c, torch.addmm(bias, a, b), **tol)


def test_contraction_with_bias_that_cublaslt_cannot_take_goes_through_torch():
    """A column-major output (the bias would run along cuBLASLt's columns) takes torch's path:
    product, bias, one rounding."""
    rt = _runtime()
    a = torch.randn(24, 64, device="cuda").bfloat16()
    b = torch.randn(64, 48, device="cuda").bfloat16()
    bias = torch.randn(48, device="cuda").bfloat16()
    c = torch.empty(48, 24, device="cuda", dtype=torch.bfloat16).t()
    rt.library_einsum_bias("ik,kj->ij", ("bfloat16",) * 4, a, b, bias, c)
    assert list(rt._gemms.values()) == [False]
    want = (a.double() @ b.double() + bias.double())
    torch.testing.assert_close(c.double(), want, atol=5e-2, rtol=2e-2)


@pytest.mark.parametrize("types", [("float32", "float32"), ("bfloat16", "bfloat16"), ("float16", "float16")],
                         ids=lambda t: "-".join(t))
@pytest.mark.parametrize("rows", [2048, 100, 1])
@pytest.mark.parametrize("db_shape", ["row", "vector"])
def test_weight_gradient_with_bias_gradient_in_cublaslt(types, rows, db_shape):
    """Runtime.library_einsum_bgrad (sym-gpu-gemm-bias-grad): dW = dY^T X and db = dY summed over the
    rows, one cuBLASLt GEMM with the BGRADB epilogue, db rounded once into the product's type; a
    [1, N] or [N] bias gradient. One row (k = 1): cuBLASLt offers no such GEMM on the H200, torch's
    path computes it."""
    rt = _runtime()
    dt = getattr(torch, types[0])
    g = torch.Generator(device="cuda").manual_seed(1)
    dy = torch.randn(rows, 96, device="cuda", generator=g).to(dt)
    x = torch.randn(rows, 40, device="cuda", generator=g).to(dt)
    dw = torch.full((96, 40), float("nan"), device="cuda", dtype=dt)
    db = torch.full((1, 96) if db_shape == "row" else (96,), float("nan"), device="cuda", dtype=dt)
    rt.library_einsum_bgrad("ca,cb->ab", (types[0],) * 4, _desc(dy), _desc(x), _desc(dw), _desc(db))
    tol = dict(atol=5e-2, rtol=2e-2) if dt != torch.float32 else dict(atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(dw.double(), dy.double().t() @ x.double(), **tol)
    torch.testing.assert_close(db.double().view(-1), dy.double().sum(0), **tol)
    entries = [e for k, e in rt._gemms.items() if k[0] == "lt"]
    assert len(entries) == 1 and (entries[0] is not False or rows == 1), "not cuBLASLt's BGRADB GEMM"
