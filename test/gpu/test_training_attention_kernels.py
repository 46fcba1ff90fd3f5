"""The GPU kernels of training attention's ops (attention.eager_attention_forward / _backward, which
the host programs' `library_sdpa` calls run): PyTorch's memory-efficient kernels, and cuDNN's for
half operands on Hopper (`config.attention_half_kernel`), against autograd of the math form in
float64, with the packed backward as the concatenation of the unpacked one.

Skips (cleanly) without a CUDA device:  pytest -q test/gpu/test_training_attention_kernels.py
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

from mlir_sym import attention, backend  # noqa: E402

HOPPER = torch.cuda.get_device_capability() >= (9, 0)


@pytest.mark.parametrize("kernel", ["cudnn", "efficient"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("length,heads,dim", [(256, 4, 64), (100, 4, 64), (37, 2, 128), (5, 3, 32), (1, 2, 64)])
@pytest.mark.parametrize("causal", [True, False])
def test_kernels_match_autograd(monkeypatch, kernel, dtype, length, heads, dim, causal):
    monkeypatch.setattr(backend.config, "attention_half_kernel", kernel)
    g = torch.Generator(device="cuda").manual_seed(0)
    b = 3
    qkv = torch.randn(b, length, 3 * heads * dim, device="cuda", dtype=dtype, generator=g)
    q, k, v = (t.view(b, length, heads, dim) for t in qkv.split(heads * dim, -1))  # heads of one projection
    assert attention._cudnn(q, k, causal) == (kernel == "cudnn" and dtype != torch.float32 and HOPPER and length > 1)
    scale = dim ** -0.5
    ref = [t.detach().double().requires_grad_() for t in (q, k, v)]
    want = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in ref), is_causal=causal, scale=scale).transpose(1, 2)
    out, lse = attention.eager_attention_forward(q, k, v, causal, scale)
    assert out.shape == (b, length, heads, dim) and lse.shape == (b, heads, length) and lse.dtype == torch.float32
    tol = dict(atol=2e-2, rtol=2e-2) if dtype != torch.float32 else dict(atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(out.double(), want, **tol)
    scores = torch.einsum("blhe,bshe->bhls", *ref[:2]) * scale
    if causal:
        scores = scores.masked_fill(torch.ones(length, length, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    torch.testing.assert_close(lse.double(), scores.logsumexp(-1).detach(), atol=1e-3, rtol=1e-4)
    dout = torch.randn(out.shape, device="cuda", dtype=dtype, generator=g)
    grads = torch.autograd.grad(want, ref, dout.double())
    got = attention.eager_attention_backward(dout, q, k, v, out, lse, causal, scale)
    for name, a, w in zip("qkv", got, grads):
        torch.testing.assert_close(a.double(), w, **tol, msg=lambda m: f"d{name}: {m}")
    (packed,) = attention.eager_attention_backward(dout, q, k, v, out, lse, causal, scale, packed=True)
    assert packed.shape == (b, length, 3 * heads * dim) and packed.is_contiguous()
    torch.testing.assert_close(packed, torch.cat([x.flatten(2) for x in got], -1))


@pytest.mark.skipif(not HOPPER, reason="cuDNN attention is PyTorch's choice on sm90+ only")
def test_causal_cross_lengths_keep_the_efficient_kernel(monkeypatch):
    monkeypatch.setattr(backend.config, "attention_half_kernel", "cudnn")
    q = torch.randn(2, 7, 2, 64, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(2, 9, 2, 64, device="cuda", dtype=torch.bfloat16)
    assert not attention._cudnn(q, k, True) and attention._cudnn(q, k, False)
    monkeypatch.setattr(backend.config, "attention_half_kernel", "flash")
    with pytest.raises(ValueError, match="attention_half_kernel"):
        attention._cudnn(q, k, False)
