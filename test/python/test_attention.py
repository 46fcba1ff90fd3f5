"""scaled_dot_product_attention traced as one node (mlir_sym::attention) and expanded after AOTAutograd
(attention.py): which calls are rewritten, PyTorch's semantics kept (masks, causal alignment, rows with
every key masked), and the calls left to PyTorch's own tracing. The e2e cases (cases.py: sdpa*)
compare the results for several sizes on the CPU and, through the same cases, on the GPU."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from mlir_sym import backend


def _run(fn, *inputs_per_call):
    cf = torch.compile(fn, backend="mlir_sym", dynamic=True)
    with torch.no_grad():
        for args in inputs_per_call:
            torch.testing.assert_close(cf(*args), fn(*args), equal_nan=True)


def test_rows_with_every_key_masked_give_zeros_as_pytorch_does():
    def f(q, k, v, keep, bias):
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=keep),
                F.scaled_dot_product_attention(q, k, v, attn_mask=bias))

    def inputs(n):
        q, k, v = torch.randn(2, 3, n, 8), torch.randn(2, 3, n + 1, 8), torch.randn(2, 3, n + 1, 8)
        keep = torch.rand(n, n + 1) > 0.5
        keep[1] = False  # query 1 sees no key
        bias = torch.randn(n, n + 1)
        bias[0] = float("-inf")
        return q, k, v, keep, bias

    out = F.scaled_dot_product_attention(*inputs(5)[:3], attn_mask=inputs(5)[3])
    assert torch.equal(out[:, :, 1], torch.zeros_like(out[:, :, 1]))  # what PyTorch does
    _run(f, inputs(5), inputs(9))
    assert backend.stats.attention_ops == 2
    assert backend.stats.compiles == 1


def test_calls_we_do_not_expand_keep_pytorchs_tracing():
    def f(q, k, v):
        # grouped-query attention (k, v with fewer heads): not rewritten; the causal call (dropout_p 0) is
        return (F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                F.scaled_dot_product_attention(q, q, q, dropout_p=0.0, is_causal=True))

    def inputs(n):
        return torch.randn(2, 4, n, 8), torch.randn(2, 2, n, 8), torch.randn(2, 2, n, 8)

    _run(f, inputs(5), inputs(7))
    assert backend.stats.attention_ops == 1  # the second call only


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_inputs_are_expanded_in_float32(dtype):
    """Half q, k, v: the products in float32 of the half tensors, softmax in float32, the
    probabilities rounded to the half type for the second product (as PyTorch's fused kernels),
    the output rounded once. Closer to float64 than a half-precision computation: within eager's own
    error of the float64 result, for a causal call and one with a half float mask."""
    def f(q, k, v, bias):
        return (F.scaled_dot_product_attention(q, k, v, is_causal=True),
                F.scaled_dot_product_attention(q, k, v, attn_mask=bias))

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for n in (5, 9):
        g = torch.Generator().manual_seed(n)
        q, k, v = (torch.randn(2, 3, n, 8, generator=g).to(dtype) for _ in range(3))
        bias = torch.randn(n, n, generator=g).to(dtype)
        with torch.no_grad():
            out, eager = cf(q, k, v, bias), f(q, k, v, bias)
            exact = f(q.double(), k.double(), v.double(), bias.double())
        for o, e, x in zip(out, eager, exact):
            assert o.dtype == dtype
            ulp = torch.finfo(dtype).eps * x.abs().clamp_min(1)
            assert ((o.double() - x).abs() <= 2 * ulp).all()
            torch.testing.assert_close(o, e, atol=2e-2 if dtype == torch.bfloat16 else 2e-3, rtol=0)
    assert backend.stats.attention_ops == 2
    assert backend.stats.compiles == 1


@pytest.mark.parametrize("scale", [None, 0.3])
def test_inputs_that_require_grad_take_the_math_form(scale):
    """Differentiated attention is PyTorch's math form (attention.math_form_for_grad), not the custom
    op: outputs and gradients match eager at two sizes, the head dim symbolic too (its default scale
    1 / sqrt(E) is a 0-d tensor: as a SymFloat the backward graph would take it as an input)."""

    def f(x, m):
        return F.scaled_dot_product_attention(x, x, x * 2, is_causal=True, scale=scale) * m

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    for shape in [(2, 3, 5, 8), (3, 2, 7, 6)]:
        q = torch.randn(*shape, requires_grad=True)
        q2 = q.detach().clone().requires_grad_(True)
        m = torch.randn(shape[-1])
        got, want = cf(q, m), f(q2, m)
        torch.testing.assert_close(got, want)
        got.pow(2).sum().backward()
        want.pow(2).sum().backward()
        torch.testing.assert_close(q.grad, q2.grad, atol=1e-5, rtol=1e-4)
    assert backend.stats.attention_ops == 0
    assert backend.stats.compiles == 2


def test_bool_mask_with_grad():
    """A bool mask in the math form (training): F.scaled_dot_product_attention passes it as 0 / -inf,
    the math op would add True as 1 (outputs and gradients were off by up to 1.9). A row with no key
    kept (all False) too."""

    def f(q, k, v, m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    g = torch.Generator().manual_seed(0)
    for b, t in [(3, 5), (4, 8)]:  # no size equal to another on the first call (duck sizing)
        q, k, v = (torch.randn(b, 2, t, 4, generator=g, requires_grad=True) for _ in range(3))
        m = torch.ones(b, 1, t, t, dtype=torch.bool).tril()
        m[0, 0, 1, :] = False
        got, want = cf(q, k, v, m), f(q, k, v, m)
        torch.testing.assert_close(got, want)
        up = torch.randn(got.shape, generator=g)
        for a, e in zip(torch.autograd.grad(got, (q, k, v), up), torch.autograd.grad(want, (q, k, v), up)):
            torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4)
    assert backend.stats.compiles == 2


@pytest.mark.parametrize("on", [True, False])
def test_the_switch(on):
    backend.config.attention_op = on

    def f(q):
        return F.scaled_dot_product_attention(q, q, q)

    _run(f, (torch.randn(2, 3, 6, 8),))
    assert backend.stats.attention_ops == int(on)


def test_expansion_leaves_core_aten_ops():
    """expand_attention on an aten graph: no custom op left, two bmms, a softmax and the causal mask."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from mlir_sym.attention import expand_attention

    def f(q, k, v):
        return torch.ops.mlir_sym.attention(q, k, v, None, True, None)

    gm = make_fx(f, tracing_mode="symbolic")(torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4))
    assert expand_attention(gm.graph) == 1
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert "mlir_sym.attention.default" not in targets
    assert targets.count("aten.bmm.default") == 2
    assert "aten._softmax.default" in targets and "aten.masked_fill.Scalar" in targets
    gm.recompile()
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4)
    torch.testing.assert_close(gm(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True))


def test_causal_mask_factories_name_the_cpu_on_cuda_values():
    """On CUDA values (fake here: no GPU needed) the causal mask's aranges name the CPU in the graph,
    as gpu_compile._factories_on_cpu does for the graph's own factories (torch-mlir refuses CUDA),
    while their fake values stay on the GPU so the mask broadcasts against the scores."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from mlir_sym.attention import expand_attention

    with FakeTensorMode(shape_env=ShapeEnv()):
        q = torch.empty(2, 3, 5, 8, device="cuda")
        gm = make_fx(lambda q: torch.ops.mlir_sym.attention(q, q, q, None, True, 0.5), tracing_mode="real")(q)
    assert expand_attention(gm.graph) == 1
    aranges = [n for n in gm.graph.nodes if n.target is torch.ops.aten.arange.default]
    assert len(aranges) == 2
    assert all(n.kwargs["device"] == torch.device("cpu") and n.meta["val"].device.type == "cuda" for n in aranges)


def test_output_layout_lets_views_after_the_head_transpose_trace_as_in_eager():
    """PyTorch's fused kernels return [B, H, L, E] over a [B, L, H, E] buffer, so `o.transpose(1, 2)
    .view(...)` works eagerly; the custom op's fake and eager kernels give that layout too."""
    def f(x):
        b, n = x.shape[0], x.shape[1]
        q = x.view(b, n, 2, 8).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, q, q)
        return o.transpose(1, 2).view(b, n, 16)

    _run(f, (torch.randn(2, 5, 16),), (torch.randn(3, 7, 16),))
    assert backend.stats.attention_ops == 1
    out = torch.ops.mlir_sym.attention(torch.randn(2, 3, 5, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 8),
                                       None, False, None)
    assert out.transpose(1, 2).is_contiguous()


def _arange_le(q, k):  # HuggingFace's sdpa_mask under torch.compile: kv positions <= q positions
    L, S = q.shape[-2], k.shape[-2]
    rows = torch.arange(0, L)[None, None, :, None]
    cols = torch.arange(0, S)[None, None, None, :]
    return (cols <= rows).expand(q.shape[0], 1, L, S)


def _ge_swapped(q, k):
    return torch.arange(q.shape[-2]).unsqueeze(1) >= torch.arange(k.shape[-2]).unsqueeze(0)


def _lt_next(q, k):
    return torch.arange(k.shape[-2]).view(1, -1) < torch.arange(q.shape[-2]).view(-1, 1) + 1


def _tril(q, k):
    return torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()


def _not_triu(q, k):
    return ~torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).triu(1)


def _and_all_true(q, k):
    return _tril(q, k) & torch.ones(1, k.shape[-2], dtype=torch.bool)


def _strict(q, k):  # j < i: row 0 sees nothing
    return torch.arange(k.shape[-2])[None, :] < torch.arange(q.shape[-2])[:, None]


def _diagonal_1(q, k):
    return torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(1)


def _shifted(q, k):  # queries at positions 1.. (a cache of one): j <= i + 1
    return torch.arange(k.shape[-2])[None, :] <= torch.arange(1, q.shape[-2] + 1)[:, None]


def _anti(q, k):  # i <= j
    return torch.arange(q.shape[-2])[:, None] <= torch.arange(k.shape[-2])[None, :]


def _wrapping(q, k):  # uint8 positions: j - i wraps, so (j - i) <= 0 is j == i, not j <= i
    i = torch.arange(q.shape[-2], dtype=torch.uint8)[:, None]
    j = torch.arange(k.shape[-2], dtype=torch.uint8)[None, :]
    return (j - i) <= 0


def _int_eq_bool(q, k):  # torch: 1 == True everywhere, so the mask is all true (sympy: Eq(1, true) is false)
    L, S = q.shape[-2], k.shape[-2]
    return (torch.arange(S)[None, :] <= torch.arange(L)[:, None]) | (
        torch.ones(L, S, dtype=torch.int64) == torch.ones(L, S, dtype=torch.bool))


def _logic_on_ints(q, k):  # j <= (i != 0), written with logical_not twice (sympy: Not(Not(i)) is i)
    nz = torch.logical_not(torch.logical_not(torch.arange(q.shape[-2])))[:, None]
    return torch.arange(k.shape[-2])[None, :] <= nz


def _wrapping_int32(q, k):  # j + c <= i + c wraps for c near 2^31: not j <= i at every element
    c = 2 ** 31 - 1
    return (torch.arange(k.shape[-2], dtype=torch.int32)[None, :] + c) <= \
        (torch.arange(q.shape[-2], dtype=torch.int32)[:, None] + c)


def _keys_only(q, k):  # [1, S]: the same for every query
    return (torch.arange(k.shape[-2]) < 3)[None, :]


@pytest.mark.parametrize("build, causal", [
    (_arange_le, True), (_ge_swapped, True), (_lt_next, True), (_tril, True), (_not_triu, True),
    (_and_all_true, True), (_strict, False), (_wrapping, False), (_int_eq_bool, False),
    (_logic_on_ints, False), (_wrapping_int32, False), (_diagonal_1, False), (_shifted, False), (_anti, False),
    (_keys_only, False)])
def test_causal_masks_become_is_causal(build, causal):
    """attention.causal_masks on an aten graph with symbolic sizes (L queries, S keys): a bool mask equal
    to `j <= i` everywhere, however it is built from aranges, tril / triu and broadcasts, becomes
    is_causal=True with its ops erased; any other mask stays. The graph's result is PyTorch's either way."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from mlir_sym.attention import causal_masks

    def f(q, k, v):
        return torch.ops.mlir_sym.attention(q, k, v, build(q, k), False, None)

    def inputs(n):
        return torch.randn(2, 3, n, 8), torch.randn(2, 3, n + 2, 8), torch.randn(2, 3, n + 2, 4)

    gm = make_fx(f, tracing_mode="symbolic")(*inputs(5))
    assert causal_masks(gm.graph) == int(causal)
    (att,) = [n for n in gm.graph.nodes if n.target is torch.ops.mlir_sym.attention.default]
    assert (att.args[3] is None and att.args[4] is True) == causal
    compares = [n for n in gm.graph.nodes if n.op == "call_function" and n.target not in (
        torch.ops.mlir_sym.attention.default, torch.ops.aten.sym_size.int)]
    assert (compares == []) == causal  # the mask's ops are gone with it
    gm.recompile()
    for n in (1, 6):
        q, k, v = inputs(n)
        torch.testing.assert_close(gm(q, k, v), F.scaled_dot_product_attention(q, k, v, attn_mask=build(q, k)),
                                   equal_nan=True)


def test_a_mask_read_from_an_input_stays():
    from torch.fx.experimental.proxy_tensor import make_fx

    from mlir_sym.attention import causal_masks

    def f(q, keep):
        return torch.ops.mlir_sym.attention(q, q, q, _tril(q, q) & keep, False, None)

    gm = make_fx(f, tracing_mode="symbolic")(torch.randn(2, 3, 5, 8), torch.ones(5, 5, dtype=torch.bool))
    assert causal_masks(gm.graph) == 0


def test_causal_masks_switch(monkeypatch):
    """MLIR_SYM_CAUSAL_MASKS=0 leaves a causal bool mask as a mask: the same results either way."""
    from mlir_sym import attention

    def f(q):
        n = q.shape[-2]
        return F.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(n, n, dtype=torch.bool).tril())

    seen = []
    real = attention.causal_masks
    monkeypatch.setattr(attention, "causal_masks", lambda g: seen.append(real(g)) or seen[-1])
    for off in (False, True):
        if off:
            monkeypatch.setenv("MLIR_SYM_CAUSAL_MASKS", "0")
        torch._dynamo.reset()
        _run(f, (torch.randn(2, 3, 5, 8),), (torch.randn(2, 3, 9, 8),))
    assert seen == [1]  # the first compile only


@pytest.mark.parametrize("kind", ["forward", "forward_packed", "backward", "backward_packed"])
def test_runtime_training_attention_calls(monkeypatch, kind):
    """The GPU runtime's `library_sdpa` (the host program's training attention calls), on the CPU
    with the memory-efficient kernels stood in for by the CPU ops of attention.py: each kind takes
    its operands (the packed forward the projection and `heads`) and returns contiguous results
    equal to the custom ops'."""
    from mlir_sym import attention
    from mlir_sym.runtime.cuda import Runtime

    monkeypatch.setattr(attention, "eager_attention_forward",
                        lambda q, k, v, c, s: torch.ops.mlir_sym.attention_forward(q, k, v, c, s))
    monkeypatch.setattr(attention, "eager_attention_backward",
                        lambda *a, packed=False: (torch.ops.mlir_sym.attention_backward_packed(*a),) if packed
                        else torch.ops.mlir_sym.attention_backward(*a))
    g = torch.Generator().manual_seed(0)
    qkv = torch.randn(2, 6, 3 * 2 * 8, generator=g)
    q, k, v = attention.heads_of(qkv, 2)  # strided views of the projection, as the host passes them
    out, lse = torch.ops.mlir_sym.attention_forward(q, k, v, True, 0.3)
    dout = torch.randn(out.shape, generator=g)
    want = {"forward": (out, lse), "forward_packed": (out, lse),
            "backward": torch.ops.mlir_sym.attention_backward(dout, q, k, v, out, lse, True, 0.3),
            "backward_packed": (torch.ops.mlir_sym.attention_backward_packed(dout, q, k, v, out, lse, True, 0.3),)}[kind]
    args = {"forward": (q, k, v), "forward_packed": (qkv,)}.get(kind, (dout, q, k, v, out, lse))
    extra = {"heads": 2} if kind == "forward_packed" else {}
    got = Runtime.library_sdpa(kind, True, 0.3, tuple(str(a.dtype)[6:] for a in args), (None,) * len(args), *args, **extra)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.is_contiguous()
        torch.testing.assert_close(a, b)
