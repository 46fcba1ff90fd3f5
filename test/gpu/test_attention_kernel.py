"""The fused attention kernel (sym-torch-attention, sym-gpu-attention) against eager PyTorch on the GPU:
`F.scaled_dot_product_attention` compiled with backend="mlir_sym", dynamic=True, over sizes that
cross the kernel's chunks of 32 keys and blocks of 4 rows: causal (L = S and L != S), bool and float
masks broadcast over batch / heads / rows (the mask's producer computed inside the kernel), rows whose
keys are all masked (0, as PyTorch's safe softmax), head dims not a multiple of 32, v's head dim apart
from q's, rank 3 and 5, q / k / v read in place from the qkv buffer (the heads split), float32, bf16
and f16; one compile serves every size. GPU only (CPU coverage: lit tests and test_codegen_cases)."""
from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

TOL = {torch.float32: (2e-5, 2e-5), torch.bfloat16: (2e-2, 2e-2), torch.float16: (2e-3, 2e-3)}


def _library_above(monkeypatch, above: int) -> None:
    """Run sym-gpu-attention with library-above(-half)=`above`: -1 always the fused kernel, 0 always
    PyTorch's attention (the pipeline text enters the code and artifact caches' keys)."""
    from mlir_sym import pipelines

    text = pipelines.PIPELINES["sym-lower-to-nvvm"]
    assert " sym-gpu-attention," in text
    monkeypatch.setitem(pipelines.PIPELINES, "sym-lower-to-nvvm", text.replace(
        " sym-gpu-attention,", f" sym-gpu-attention{{library-above={above} library-above-half={above}}},"))


@pytest.fixture(autouse=True)
def _kernel_unless_library_test(request, monkeypatch):
    """The kernel's tests run the kernel at every size (by default long sequences call PyTorch's)."""
    if not request.node.name.startswith("test_library"):
        _library_above(monkeypatch, -1)


class _Calls:
    """Counts Runtime.library_attention calls (the host program looks it up at every call)."""

    def __init__(self, monkeypatch) -> None:
        from mlir_sym.runtime.cuda import Runtime

        self.n = 0
        real = Runtime.library_attention

        def counted(*args):
            self.n += 1
            return real(*args)

        monkeypatch.setattr(Runtime, "library_attention", staticmethod(counted))


def _heads(*ts):
    """q, k, v inputs with static head dims (as a model's are: dynamic=True would make them symbols
    too, and the fused kernel takes static head dims; a symbolic one is expanded)."""
    for t in ts:
        torch._dynamo.mark_static(t, t.dim() - 1)
    return ts


def _compile(fn):
    torch._dynamo.reset()
    return torch.compile(fn, backend="mlir_sym", dynamic=True)


def _check(fn, make, sizes, dtype, caplog):
    caplog.set_level(logging.DEBUG, logger="mlir_sym.compile")
    cf = _compile(fn)
    for s in sizes:
        args = make(s)
        with torch.no_grad():
            want, got = fn(*args), cf(*args)
        rtol, atol = TOL[dtype]
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=lambda m: f"size {s}: {m}")
    from mlir_sym import backend

    src = list(backend._CACHE.values())[-1].gpu["host_source"]
    why = [r.getMessage() for r in caplog.records if "attention" in r.getMessage()]
    assert "library_einsum" not in src, f"attention was expanded, not the fused kernel: {why}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_causal_heads_split(dtype, caplog):
    """GPT-2's form: q, k, v split from one projection, heads first, causal; the output transposed back.
    (Head counts and dims are literals, as a model's view has them: with dynamic=True Dynamo may make
    a closure's ints symbols, and a symbolic head dim is expanded, not fused.)"""

    def f(qkv):
        b, s, _ = qkv.shape
        q, k, v = (t.view(b, s, 4, 64).transpose(1, 2) for t in qkv.split(256, dim=2))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return o.transpose(1, 2).reshape(b, s, 256)

    _check(f, lambda s: (torch.randn(s[0], s[1], 768, device="cuda", dtype=dtype),),
           [(1, 7), (2, 33), (3, 64), (1, 130)], dtype, caplog)


def _bert_form(qkv, keep):
    """BERT's attention: 2 heads of 48 split from one projection, an additive mask [B, 1, 1, S] made
    from a 0/1 attention_mask in the graph."""
    b, s, _ = qkv.shape
    q, k, v = (t.view(b, s, 2, 48).transpose(1, 2) for t in qkv.split(96, dim=2))
    mask = (1.0 - keep[:, None, None, :].to(qkv.dtype)) * torch.finfo(qkv.dtype).min
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _bert_inputs(size, dtype):
    keep = (torch.rand(*size, device="cuda") > 0.3).to(torch.int64)
    keep[:, 0] = 1
    return torch.randn(*size, 288, device="cuda", dtype=dtype), keep


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_float_mask_broadcast(dtype, caplog):
    """BERT's form: an additive mask [B, 1, 1, S] made from a 0/1 attention_mask in the graph (computed
    in the kernel), head dim 48."""

    _check(_bert_form, lambda s: _bert_inputs(s, dtype), [(2, 5), (1, 40), (3, 70)], dtype, caplog)


def test_bool_mask_rows_all_masked(caplog):
    """A bool mask [L, S] broadcast over batch and heads, keys and values from their own projection
    (S != L, v's head dim 80 apart from q's 32); rows with every key masked give 0."""

    def f(xq, xkv, m):
        b, n, _ = xq.shape
        kv = xkv.shape[1]
        q = xq.view(b, n, 2, 32).transpose(1, 2)
        k, v = xkv.split([64, 160], dim=2)
        k, v = k.view(b, kv, 2, 32).transpose(1, 2), v.view(b, kv, 2, 80).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    def make(s):
        b, n, kv = s
        m = torch.rand(n, kv, device="cuda") > 0.5
        m[0] = False
        return torch.randn(b, n, 64, device="cuda"), torch.randn(b, kv, 224, device="cuda"), m

    _check(f, make, [(2, 6, 9), (1, 35, 70)], torch.float32, caplog)


@pytest.mark.parametrize("shape", [(3, 20, 24), (2, 2, 2, 19, 40)])
def test_causal_cross_lengths_and_ranks(shape, caplog):
    """Causal with L != S (top-left aligned, as PyTorch), rank 3 and rank 5, head dims 24 and 40, a scale."""
    *batch, n, d = shape

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)

    def make(s):
        q = torch.randn(*batch, s, d, device="cuda")
        return _heads(q, torch.randn(*batch, s + 5, d, device="cuda"), torch.randn(*batch, s + 5, d, device="cuda"))

    _check(f, make, [n, n + 17, 3], torch.float32, caplog)


def test_one_launch_no_library_calls():
    """The compiled attention is one launch of 32 x 16 threads with shuffles and shared memory, and no
    cuBLAS call."""
    from mlir_sym import backend

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    (q,) = _heads(torch.randn(1, 4, 20, 64, device="cuda"))
    cf = _compile(f)
    with torch.no_grad():
        torch.testing.assert_close(cf(q, q, q), f(q, q, q), rtol=2e-5, atol=2e-5)
    art = list(backend._CACHE.values())[-1]
    src, ptx = art.gpu["host_source"], art.gpu["ptx"]
    assert "library_einsum" not in src and src.count("rt.launch(") == 1, src
    assert "shfl.sync.idx" in ptx and "shfl.sync.bfly" in ptx and ".shared" in ptx


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_library_branch_forms(dtype, caplog, monkeypatch):
    """With library-above=0 every size takes the branch that calls PyTorch's attention: causal heads
    split (q / k / v read in place, the output written into the transposed buffer) and BERT's additive
    mask computed at its broadcast shape [B, 1, 1, S] by a kernel of ours, against eager."""
    _library_above(monkeypatch, 0)
    calls = _Calls(monkeypatch)

    def causal(qkv):
        b, s, _ = qkv.shape
        q, k, v = (t.view(b, s, 4, 64).transpose(1, 2) for t in qkv.split(256, dim=2))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, 256) * 2

    _check(causal, lambda s: (torch.randn(*s, 768, device="cuda", dtype=dtype),), [(1, 7), (2, 130)], dtype, caplog)
    n = calls.n
    assert n >= 2, n
    _check(_bert_form, lambda s: _bert_inputs(s, dtype), [(2, 5), (3, 70)], dtype, caplog)
    assert calls.n >= n + 2, calls.n


def test_library_split_by_size_one_artifact(caplog, monkeypatch):
    """Default thresholds: one compiled artifact runs the fused kernel at short sequences and calls
    PyTorch's attention past 2^21 scores (float32), without recompiling."""
    from mlir_sym import backend

    calls = _Calls(monkeypatch)

    def f(qkv):
        b, s, _ = qkv.shape
        q, k, v = (t.view(b, s, 4, 64).transpose(1, 2) for t in qkv.split(256, dim=2))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, 256)

    _check(f, lambda s: (torch.randn(*s, 768, device="cuda"),), [(2, 64), (1, 512)], torch.float32, caplog)
    assert calls.n == 0, "2 x 4 x 64 x 64 and 4 x 512 x 512 scores are the kernel's"
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    _check(f, lambda s: (torch.randn(*s, 768, device="cuda"),), [(2, 64), (2, 1024), (3, 40)], torch.float32, caplog)
    assert calls.n >= 1, "2 x 4 x 1024 x 1024 scores are PyTorch's"
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] - graphs == 1  # one artifact, no recompile
    src = list(backend._CACHE.values())[-1].gpu["host_source"]
    assert src.count("rt.library_attention(") == 1 and "2097152" in src, src
