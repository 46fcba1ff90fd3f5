"""runtime/cublas.py's GEMM plans, checked on the CPU: each plan is run by a column-major emulation
of cublasGemmStridedBatchedEx (what cuBLAS computes from those arguments) on the operands' own
storage, and the output must equal torch.einsum. The GPU tests run the same plans in cuBLAS."""
from __future__ import annotations

import pytest
import torch

from mlir_sym.runtime.cublas import MAX_CALLS, CUBLAS_OP_N, GemmPlan, collapse, gemm_calls, gemm_plan
from mlir_sym.runtime.cuda import matmul_form


def _op(store: torch.Tensor, off: int, trans: int, rows: int, cols: int, ld: int) -> torch.Tensor:
    """op(X) of a column-major X at `off` (rows x cols after the op)."""
    if trans == CUBLAS_OP_N:
        return store.as_strided((rows, cols), (1, ld), off)
    return store.as_strided((rows, cols), (ld, 1), off)


def emulate(p: GemmPlan, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, init: bool,
            offsets: tuple = (0, 0, 0)) -> None:
    """cuBLAS's C' = op(A') op(B') (+ C' unless init), batch by batch, on the storages of a, b, c,
    after cuBLAS's argument checks (it returns CUBLAS_STATUS_INVALID_VALUE where these fail)."""
    assert p.lda >= max(1, p.m if p.transa == CUBLAS_OP_N else p.k), p
    assert p.ldb >= max(1, p.k if p.transb == CUBLAS_OP_N else p.n), p
    assert p.ldc >= max(1, p.m) and min(p.m, p.n, p.k, p.batch) >= 0, p
    first, second = (b, a) if p.swap else (a, b)
    o1, o2 = (offsets[1], offsets[0]) if p.swap else (offsets[0], offsets[1])
    sa, sb, sc = (t.untyped_storage() for t in (first, second, c))
    fa = torch.tensor([], dtype=first.dtype).set_(sa)
    fb = torch.tensor([], dtype=second.dtype).set_(sb)
    fc = torch.tensor([], dtype=c.dtype).set_(sc)
    for i in range(p.batch):
        x = _op(fa, first.storage_offset() + o1 + i * p.stride_a, p.transa, p.m, p.k, p.lda)
        y = _op(fb, second.storage_offset() + o2 + i * p.stride_b, p.transb, p.k, p.n, p.ldb)
        out = fc.as_strided((p.m, p.n), (1, p.ldc), c.storage_offset() + offsets[2] + i * p.stride_c)
        r = x @ y
        out.copy_(r if init else out + r)


def _plan(equation: str, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> GemmPlan | None:
    return gemm_plan(matmul_form(equation), *((list(t.shape), list(t.stride())) for t in (a, b, c)))


FORMS = ["abd,dc->abc", "abce,abed->abcd", "abce,abde->abcd", "abec,abed->abcd", "abce,aebd->abcd", "ab,cb->ac",
         "abde,dec->abc", "abde,cde->abc", "abe,cde->abcd", "aeb,ecd->abcd", "bce,de->bcd", "abde,ced->abc",
         "ik,kj->ij", "bik,bkj->bij"]


def _operands(equation: str, layout: str, sizes: dict, dtype=torch.float64, out_dtype=torch.float64,
              device: str = "cpu"):
    lhs, res = equation.split("->")
    ea, eb = lhs.split(",")
    g = torch.Generator().manual_seed(3)
    rand = lambda shape: torch.randn(shape, generator=g, dtype=torch.float64).to(device, dtype)  # noqa: E731
    full = lambda shape: torch.full(shape, 3.0, dtype=out_dtype, device=device)  # noqa: E731
    a, b = rand([sizes[x] for x in ea]), rand([sizes[x] for x in eb])
    shape = [sizes[x] for x in res]
    c = full(shape)
    if layout == "transposed":  # the last two dims of every operand stored the other way round
        a, b = a.mT.contiguous().mT, b.mT.contiguous().mT
        c = full(shape[:-2] + shape[-2:][::-1]).mT if len(shape) > 1 else c
    elif layout == "column-major-out":
        c = full(shape[::-1]).permute(*reversed(range(len(shape))))
    elif layout == "padded":  # rows of a and c inside wider buffers (a slice of a fused qkv projection)
        a = rand([sizes[x] for x in ea][:-1] + [3 * sizes[ea[-1]]])[..., sizes[ea[-1]]:2 * sizes[ea[-1]]]
        c = full(shape[:-1] + [2 * shape[-1]])[..., :shape[-1]]
    return a, b, c


# (layout, equation) pairs one strided GEMM cannot compute in place: a group of dims (batch, rows,
# contracted, columns) of some operand does not collapse into one strided dim (e.g. v in [batch,
# length, heads, dim] has two batch dims 90 and 5 apart; a row slice of a wider buffer cannot merge
# its contracted dims); the runtime takes torch's path for them
NO_PLAN = {
    "contiguous": {"abce,aebd->abcd", "aeb,ecd->abcd", "abde,ced->abc"},
    "transposed": {"abd,dc->abc", "abce,aebd->abcd", "abde,dec->abc", "abde,cde->abc", "abe,cde->abcd",
                   "aeb,ecd->abcd", "bce,de->bcd", "abde,ced->abc"},
    "column-major-out": set(FORMS) - {"ab,cb->ac", "ik,kj->ij"},  # a reversed 3-d / 4-d output
    "padded": {"abce,aebd->abcd", "abde,dec->abc", "abde,cde->abc", "abe,cde->abcd", "aeb,ecd->abcd",
               "abde,ced->abc"},
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "column-major-out", "padded"])
@pytest.mark.parametrize("equation", FORMS)
def test_plans_compute_the_einsum(equation, layout):
    sizes = dict(zip("abcdeijk", (2, 3, 4, 5, 6, 7, 8, 9)))
    a, b, c = _operands(equation, layout, sizes)
    want = torch.einsum(equation, a, b)
    p = _plan(equation, a, b, c)
    if equation in NO_PLAN[layout]:
        assert p is None, (equation, layout, p)
        return
    assert p is not None, (equation, layout)
    emulate(p, a, b, c, init=True)
    torch.testing.assert_close(c, want)
    emulate(p, a, b, c, init=False)
    torch.testing.assert_close(c, 2 * want)


@pytest.mark.parametrize("equation", FORMS)
def test_unit_dims_and_single_rows(equation):
    """A batch of 1, one row (GPT-2 at length 1): unit dims say nothing of layout, any ld is valid."""
    sizes = dict(zip("abcdeijk", (1, 1, 1, 5, 6, 1, 8, 9)))
    a, b, c = _operands(equation, "contiguous", sizes)
    p = _plan(equation, a, b, c)
    if equation == "abde,ced->abc":  # the contracted dims of b (d, e) are stored the other way round
        assert p is None
        return
    assert p is not None and p.lda >= 1 and p.ldb >= 1 and p.ldc >= 1
    emulate(p, a, b, c, init=True)
    torch.testing.assert_close(c, torch.einsum(equation, a, b))


def test_layouts_cublas_cannot_read_have_no_plan():
    a = torch.randn(4, 12, dtype=torch.float64)[:, ::2]  # no unit stride: a copy would be needed
    b = torch.randn(6, 5, dtype=torch.float64)
    c = torch.empty(4, 5, dtype=torch.float64)
    assert _plan("ik,kj->ij", a, b, c) is None
    # rows (a, b) that do not collapse into one strided dim
    x = torch.randn(2, 7, 6, dtype=torch.float64)[:, :3]
    assert _plan("abd,dc->abc", x, b, torch.empty(2, 3, 5, dtype=torch.float64)) is None
    # an output whose batches overlap (stride 0) cannot be written by a batched GEMM
    cb = torch.empty(4, 5, dtype=torch.float64).expand(3, 4, 5)
    assert _plan("bik,bkj->bij", torch.randn(3, 4, 6, dtype=torch.float64), torch.randn(3, 6, 5, dtype=torch.float64), cb) is None
    # an empty contraction (k = 0) is left to torch: it must still zero the output
    assert _plan("ik,kj->ij", torch.empty(4, 0), torch.empty(0, 5), torch.empty(4, 5)) is None


def test_collapse():
    assert collapse([2, 3, 4], [12, 4, 1], [0, 1, 2]) == (24, 1)
    assert collapse([2, 1, 4], [4, 99, 1], [0, 1, 2]) == (8, 1)  # a unit dim's stride is free
    assert collapse([2, 3], [1, 2], [0, 1]) is None  # transposed: not one dim
    assert collapse([1, 1], [5, 7], [0, 1]) == (1, 0)
    assert collapse([], [], []) == (1, 0)


# Where splitting does not help: whichever dim of the group is looped over, some operand's matrix has
# no unit stride (e.g. b's contracted (d, e) stored as (1, 5) with its columns 30 apart: looping over
# d leaves [e, c] with strides (5, 30)); the runtime takes torch's path (a copy) there.
NO_GEMM = {
    "contiguous": {"abde,ced->abc"},
    "transposed": {"abce,aebd->abcd", "abde,dec->abc", "abde,cde->abc", "abe,cde->abcd", "aeb,ecd->abcd",
                   "abde,ced->abc"},
    "padded": {"abde,ced->abc"},
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "padded"])
@pytest.mark.parametrize("equation", FORMS)
def test_split_contractions(equation, layout):
    """What one strided GEMM cannot compute is split at the group that does not collapse, one GEMM per
    index (a split contracted dim accumulates into what its first GEMM set), within MAX_CALLS GEMMs."""
    sizes = dict(zip("abcdeijk", (2, 3, 4, 5, 6, 7, 8, 9)))
    a, b, c = _operands(equation, layout, sizes)
    want = torch.einsum(equation, a, b)
    ops = [(list(t.shape), list(t.stride())) for t in (a, b, c)]
    for init, scale in ((True, 1), (False, 2)):
        calls = gemm_calls(matmul_form(equation), *ops, init, max_batch_split=MAX_CALLS)
        if equation in NO_GEMM[layout]:
            assert calls is None
            return
        assert calls is not None, (equation, layout)
        assert (len(calls) == 1) == (equation not in NO_PLAN[layout])
        for plan, oa, ob, oc, sub_init in calls:
            emulate(plan, a, b, c, sub_init, (oa, ob, oc))
        torch.testing.assert_close(c, scale * want)


def test_batch_split_into_many_gemms_goes_to_torch():
    """Attention's `p @ v` with v read from the projection's [B, L, H, E] buffer (the batch dims B, H do
    not collapse): split into one GEMM per batch index only up to MAX_BATCH_SPLIT, else None (torch's
    path: v copied, one batched GEMM); 8 GEMMs of 4 heads took 90 us a call where the copy and one
    GEMM take about 12 (H200, B 8, L 256)."""
    p = torch.randn(8, 4, 5, 5, dtype=torch.float64)  # a b c e
    v = torch.randn(8, 5, 4, 6, dtype=torch.float64)  # a e b d
    c = torch.zeros(8, 4, 5, 6, dtype=torch.float64)
    ops = [(list(t.shape), list(t.stride())) for t in (p, v, c)]
    assert gemm_calls(matmul_form("abce,aebd->abcd"), *ops, True) is None
    calls = gemm_calls(matmul_form("abce,aebd->abcd"), *ops, True, max_batch_split=8)
    assert len(calls) == 8
    for plan, oa, ob, oc, sub_init in calls:
        emulate(plan, p, v, c, sub_init, (oa, ob, oc))
    torch.testing.assert_close(c, torch.einsum("abce,aebd->abcd", p, v))
    two = [(list(t.shape), list(t.stride())) for t in (p[:2], v[:2], c[:2])]
    assert len(gemm_calls(matmul_form("abce,aebd->abcd"), *two, True)) == 2  # a batch of 2 stays split


def test_empty_batch_is_no_gemm():
    """A batch dim of size 0 that a split reaches (3 batch dims, the inner ones not collapsing): no
    GEMMs, torch's path (which does nothing); it divided by zero (a review found it)."""
    p, v, c = torch.randn(0, 2, 4, 5, 5), torch.randn(0, 2, 5, 4, 6), torch.zeros(0, 2, 4, 5, 6)
    ops = [(list(t.shape), list(t.stride())) for t in (p, v, c)]
    for limit in (2, MAX_CALLS):
        assert gemm_calls(matmul_form("abhce,abehd->abhcd"), *ops, True, max_batch_split=limit) is None


def test_split_of_bert_attention_output():
    """BERT's output projection of the heads-first attention output ([1, 4, L, 64] read as [L, 256]):
    the contracted (heads, head_dim) do not collapse, so one GEMM per head, accumulating."""
    ctx = torch.randn(1, 4, 5, 64, dtype=torch.float64)  # a d b e
    w = torch.randn(256, 4, 64, dtype=torch.float64)  # c d e
    c = torch.full((1, 5, 256), 7.0, dtype=torch.float64)
    ops = [(list(t.shape), list(t.stride())) for t in (ctx, w, c)]
    calls = gemm_calls(matmul_form("adbe,cde->abc"), *ops, True)
    assert len(calls) == 4 and [x[4] for x in calls] == [True, False, False, False]
    for plan, oa, ob, oc, sub_init in calls:
        emulate(plan, ctx, w, c, sub_init, (oa, ob, oc))
    torch.testing.assert_close(c, torch.einsum("adbe,cde->abc", ctx, w))


def test_no_split_without_a_unit_stride():
    a = torch.randn(4, 12, dtype=torch.float64)[:, ::2]
    assert gemm_calls(matmul_form("ik,kj->ij"), ([4, 6], list(a.stride())), ([6, 5], [5, 1]), ([4, 5], [5, 1]), True) is None


def test_a_failed_handle_names_an_earlier_device_failure(monkeypatch):
    """A device-side assertion (an index check in a kernel) leaves the context unusable, and the next
    call reports it: when that is cuBLAS's first handle, the error said only "cublasCreate failed
    with status 14"; it now says that a kernel failed before, with torch's report of it."""
    import contextlib

    import torch

    from mlir_sym.runtime import cublas

    class Lib:
        def cublasCreate_v2(self, handle):
            return 14

    def synchronize(index=None):
        raise RuntimeError("CUDA error: device-side assert triggered\nmore")

    monkeypatch.setattr(torch.cuda, "device", lambda index: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "synchronize", synchronize)
    with pytest.raises(RuntimeError, match=r"status 14: an earlier kernel failed on the device "
                                           r"\(CUDA error: device-side assert triggered;"):
        cublas.Blas(Lib(), 0)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda index=None: None)
    with pytest.raises(RuntimeError, match=r"^cublasCreate failed with status 14$"):
        cublas.Blas(Lib(), 0)


@pytest.mark.parametrize("equation, a_shape, b_shape, c_shape", [
    ("ik,kj->ij", (1, 64), (64, 96), (1, 96)),  # one row (a decoding step): taken as row-major
    ("ik,kj->ij", (37, 64), (64, 96), (37, 96)),
    ("abd,cd->abc", (1, 1, 16), (24, 16), (1, 1, 24)),
    ("ca,cb->ab", (40, 12), (40, 20), (12, 20)),  # a weight gradient: a is B', summed over k
])
def test_bias_plan_is_row_major(equation, a_shape, b_shape, c_shape):
    """cublas.bias_plan (cuBLASLt's bias epilogues): the output row-major (swap), so that the bias
    runs along m = the output's columns and a bias gradient along n = a's kept dim; the emulated
    GEMM equals einsum, and a column-major output has no bias plan."""
    from mlir_sym.runtime.cublas import bias_plan

    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(a_shape, generator=g, dtype=torch.float64), torch.randn(b_shape, generator=g, dtype=torch.float64)
    c = torch.zeros(c_shape, dtype=torch.float64)
    p = bias_plan(matmul_form(equation), *((list(t.shape), list(t.stride())) for t in (a, b, c)))
    assert p is not None and p.swap and p.batch == 1 and p.m == c_shape[-1], p
    assert p.n == torch.Size(c_shape[:-1]).numel()
    if equation == "ca,cb->ab":  # the layout the runtime gives cuBLASLt's BGRADB (measured on the H200)
        assert (p.transa, p.transb) == (CUBLAS_OP_N, 1), p
    emulate(p, a, b, c, True)
    torch.testing.assert_close(c, torch.einsum(equation, a, b))
    if c_shape[0] > 1 and len(c_shape) == 2:
        ct = torch.zeros(c_shape[::-1], dtype=torch.float64).t()
        assert bias_plan(matmul_form(equation), *((list(t.shape), list(t.stride())) for t in (a, b, ct))) is None
