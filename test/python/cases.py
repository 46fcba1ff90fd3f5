"""End-to-end cases: one source of truth for test_e2e.py and benchmarks/bench_cpu.py.

A case is a function or a small nn.Module (`build()` makes a fresh, seeded one) plus `inputs(n)`,
which makes the example inputs for one "size" n. The test compiles `build()` once with
`torch.compile(..., backend="mlir_sym", dynamic=True)`, runs it on every size in `sizes` and compares
with eager; `graphs` is how many graphs Dynamo hands the backend (usually 1) and therefore how many
compilations must serve all sizes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Case:
    name: str
    build: Callable[[], Callable]
    inputs: Callable[[int], tuple]
    sizes: tuple[int, ...] = (3, 8, 17)
    graphs: int = 1
    atol: float | None = None
    rtol: float | None = None
    bench_sizes: tuple[int, ...] | None = None  # set: the case is part of the CPU benchmark (sizes
    # there, like in `sizes`, must not make two input dims equal on the first call: Dynamo's duck
    # sizing would tie them into one symbol and recompile when they differ)
    equal_nan: bool = False  # NaN outputs must be NaN where eager's are
    xfail: str | None = None  # a known limitation (strict xfail in the tests)
    tags: tuple[str, ...] = field(default_factory=tuple)

    def __str__(self) -> str:
        return self.name


def cpu_has_bf16() -> bool:
    """Whether this CPU has AVX512-BF16: without it the CPU JIT lacks __truncsfbf2, which the
    emulated GPU mapping's bf16 vectors (and bf16 scatter-adds there) need."""
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512_bf16" in f.read()
    except OSError:
        return False


def _gen(n: int, salt: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(1000 * n + salt)


def randn(n: int, *shape: int, salt: int = 0, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(n, salt), dtype=dtype)


def randint(n: int, lo: int, hi: int, *shape: int, salt: int = 0) -> torch.Tensor:
    return torch.randint(lo, hi, shape, generator=_gen(n, salt), dtype=torch.int64)


def _fn(f: Callable) -> Callable[[], Callable]:
    return lambda: f


def _module(make: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(0)
        return make().eval()

    return build


class _ConvThenLinear(nn.Module):
    """A conv whose output a linear layer reads (its size check splits the compute into blocks) and
    a second output reads too."""

    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        y = self.c(x)
        return self.fc(y.flatten(1)), y * 2


class _Conv3dThenTransposed(nn.Module):
    """A 3-d convolution and a transposed 2-d one (upsampling by 2) on two inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.c3 = nn.Conv3d(2, 4, 3, padding=1)
        self.t2 = nn.ConvTranspose2d(4, 3, 3, stride=2)

    def forward(self, x, y):
        return self.c3(x), self.t2(y)


CASES: list[Case] = []


def case(**kw: Any) -> Callable[[Callable], Callable]:
    """Decorator for function cases: `@case(inputs=...)` registers the function under its name."""

    def deco(f: Callable) -> Callable:
        CASES.append(Case(name=f.__name__, build=_fn(f), **kw))
        return f

    return deco


def add(c: Case) -> Case:
    CASES.append(c)
    return c


# ---------------------------------------------------------------------------------------------
# pointwise


@case(inputs=lambda n: (randn(n, n, 5), randn(n, n, 5, salt=1)), bench_sizes=(64, 4096))
def pointwise_chain(x, y):
    a = torch.exp(-torch.abs(x)) + torch.tanh(y)
    b = torch.sigmoid(a * 2.0) - torch.relu(-y)
    return torch.neg(b) * x + 3.0


@case(inputs=lambda n: (randn(n, n, 4), randn(n, n, 4, salt=1)))
def where_clamp(x, y):
    return torch.where(x > 0, x, y).clamp(-0.5, 0.75) + torch.clamp(y, min=0.1)


@case(inputs=lambda n: (randn(n, n, 6),))
def pow_sqrt_rsqrt(x):
    a = torch.abs(x) + 1.0
    return torch.sqrt(a) + torch.rsqrt(a) * torch.pow(x, 2) - x ** 3 + torch.pow(a, 0.5)


@case(inputs=lambda n: (randn(n, n, 7),))
def activations(x):
    return F.gelu(x) + F.silu(x) + F.leaky_relu(x, 0.1) + F.softplus(x) + torch.erf(x)


@case(inputs=lambda n: (randn(n, n, 6), randn(n, n, 6, salt=1) > 0))
def masked_fill_where(x, m):
    return x.masked_fill(m, -1e9), torch.where(m, x, torch.tensor(0.5)), torch.zeros_like(x) + x.new_ones(x.shape)


@case(inputs=lambda n: (randn(n, n, 6),))
def dtype_casts(x):
    return x.to(torch.float64) * 2, (x * 10).to(torch.int32), x.half().float(), x.to(torch.bfloat16).float()


# ---------------------------------------------------------------------------------------------
# broadcasting


@case(inputs=lambda n: (randn(n, n, n + 1), randn(n, n + 1, salt=1)))
def broadcast_row(x, b):
    return x * b + b


@case(inputs=lambda n: (randn(n, n, 1), randn(n, 1, n + 2, salt=1)), bench_sizes=(64, 256))
def broadcast_outer(a, b):
    # [s0, 1] x [1, s1] -> [s0, s1]
    return a * b + torch.exp(a - b)


@case(inputs=lambda n: (randn(n, 2, n, 1, 5), randn(n, 1, 1, n + 3, 5, salt=1)))
def broadcast_size1_dims(x, y):
    return (x + y).sum(dim=-1)


@case(inputs=lambda n: (randn(n, n, 4), randn(n, 4, salt=1)))
def broadcast_scalar_tensor(x, y):
    return x * y.sum() + x.mean()


# ---------------------------------------------------------------------------------------------
# reductions


@case(inputs=lambda n: (randn(n, n, n + 2, 7),), bench_sizes=(32, 128))
def reductions(x):
    return (x.sum(dim=1), x.mean(dim=(0, 2), keepdim=True), x.amax(dim=-1), x.amin(dim=0, keepdim=True),
            x.sum())


@case(inputs=lambda n: (randn(n, n, 9),))
def same_shape_reductions(x):
    # several results from reductions with one (CSE-shared) zero init, each its own output
    return [c.sum(1) for c in x.chunk(3, dim=1)] + [x.sum(1), (x * 2).sum(1), x.amax(1), x.mean(1)]


@case(inputs=lambda n: (randn(n, n, n + 3),))
def var_std(x):
    return x.var(dim=1), x.std(dim=0, keepdim=True), x.var(dim=1, unbiased=False), x.std()


@case(inputs=lambda n: (randn(n, n, 7),))
def argmax_max(x):
    v, i = x.max(dim=1)
    return v, i, x.argmax(dim=0), x.argmin()


@case(inputs=lambda n: (randn(n, n, 5),))
def cumsum_logsumexp(x):
    return torch.cumsum(x, dim=0) + torch.cumsum(x, dim=1), torch.logsumexp(x, dim=1), torch.cumprod(x, dim=0)


def _ties_and_nans(n: int) -> torch.Tensor:
    """Small integers as floats (many ties) with a NaN in some rows, at different places."""
    x = randint(n, -3, 4, n, 9).to(torch.float32)
    x[1, 4] = float("nan")
    x[n - 1, 0] = float("nan")
    return x


@case(inputs=lambda n: (_ties_and_nans(n),), equal_nan=True)
def cummax_cummin(x):
    """Eager's rules: ties go to the later position, a NaN stays once met (its position: the last NaN)."""
    v, i = torch.cummax(x, 1)
    w, j = torch.cummin(x, -1)
    u, k = torch.cummax(x, 0)
    return v + 1.0, i, w, j, u, k


@case(inputs=lambda n: (randint(n, -5, 6, n, 7), randn(n, n, 7)))
def cummax_cummin_int_and_float(x, y):
    v, i = torch.cummin(x, 1)
    w, j = torch.cummax(y * 2.0, 1)
    return v * 3, i, w, j


@case(inputs=lambda n: (randn(n, n, 6),))
def sort_topk(x):
    v, i = torch.sort(x, dim=1)
    return v, i, torch.topk(x, 2, dim=1).values


# ---------------------------------------------------------------------------------------------
# matmul family (symbols shared between inputs)


@case(inputs=lambda n: (randn(n, n, n + 1), randn(n, n + 1, n + 2, salt=1)), bench_sizes=(32, 96))
def matmul_shared(x, y):
    # x: [s0, s1], y: [s1, s2]
    return x @ y


@case(inputs=lambda n: (randn(n, 2, n, 5), randn(n, 2, 5, n + 1, salt=1)))
def bmm(a, b):
    return torch.bmm(a, b)


@case(inputs=lambda n: (randn(n, n, n + 2),))
def gram_transpose(x):
    return (x @ x.t()) @ x + x.transpose(0, 1).sum(dim=1)


add(Case("linear_2d", _module(lambda: nn.Linear(16, 8)), lambda n: (randn(n, n, 16),), bench_sizes=(64, 512)))
add(Case("linear_3d", _module(lambda: nn.Linear(12, 5)), lambda n: (randn(n, 2, n, 12),)))


@case(inputs=lambda n: (randn(n, n, 6),))
def einsum_contractions(x):
    return torch.einsum("ij,kj->ik", x, x), torch.einsum("ij->j", x)


# ---------------------------------------------------------------------------------------------
# attention with symbolic head dim: the softmax scale is a float computed from a size


@case(inputs=lambda n: (randn(n, 2, n, 8), randn(n, 2, n + 1, 8, salt=1), randn(n, 2, n + 1, 8, salt=2)),
      bench_sizes=(32, 128))
def sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def _key_mask(n: int) -> torch.Tensor:
    """[n, 1, n, n + 1] keys each query may attend to: every query keeps at least its first key."""
    m = randn(n, n, 1, n, n + 1, salt=3) > 0
    m[..., 0] = True
    return m


# attention as the mlir_sym::attention op (attention.py): causal with more keys than queries (PyTorch's
# mask is top-left aligned), a boolean key mask broadcast over heads, an additive float mask broadcast
# from rank 1, an explicit scale, and 3-d inputs (one batch dim)
@case(inputs=lambda n: (randn(n, 2, 4, n, 8), randn(n, 2, 4, n + 2, 8, salt=1), randn(n, 2, 4, n + 2, 6, salt=2)),
      sizes=(3, 9, 17))
def sdpa_causal_scaled(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)


@case(inputs=lambda n: (randn(n, n, 2, n, 8), randn(n, n, 2, n + 1, 8, salt=1), randn(n, n, 2, n + 1, 8, salt=2),
                        _key_mask(n), randn(n, n, n + 1, salt=4)))
def sdpa_masks(q, k, v, key_mask, bias):
    return (F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask),
            F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


@case(inputs=lambda n: (randn(n, 3, n, 8), randn(n, 3, n, 8, salt=1)), sizes=(4, 9, 17))
def sdpa_3d_causal(q, kv):
    return F.scaled_dot_product_attention(q, kv, kv, is_causal=True)


# causal masks built in the function (HuggingFace's sdpa_mask under torch.compile: aranges compared and
# expanded over the batch; a tril of ones): attention.causal_masks makes them is_causal, no mask
@case(inputs=lambda n: (randn(n, n, 2, n, 8), randn(n, n, 2, n, 8, salt=1), randn(n, n, 2, n, 8, salt=2)),
      sizes=(3, 9, 17))
def sdpa_causal_mask_built(q, k, v):
    n = q.shape[-2]
    pos = torch.arange(n, device=q.device)
    hf = (pos[None, None, None, :] <= pos[None, None, :, None]).expand(q.shape[0], 1, n, n)
    tril = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
    return (F.scaled_dot_product_attention(q, k, v, attn_mask=hf),
            F.scaled_dot_product_attention(q, k, v, attn_mask=tril))


@case(inputs=lambda n: (randn(n, n, 8),))
def causal_attention_manual(x):
    s = x.shape[0]
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)
    att = (x @ x.t() / math.sqrt(x.shape[-1])).masked_fill(mask, float("-inf"))
    return torch.softmax(att, -1) @ x, F.scaled_dot_product_attention(x[None], x[None], x[None], is_causal=True)


# ---------------------------------------------------------------------------------------------
# normalization


@case(inputs=lambda n: (randn(n, n, n + 4),), bench_sizes=(64, 256))
def softmax_logsoftmax(x):
    return torch.softmax(x, dim=-1), torch.log_softmax(x, dim=0), F.softmax(x * 2, dim=1)


add(Case("layernorm", _module(lambda: nn.LayerNorm(24)), lambda n: (randn(n, 2, n, 24),), bench_sizes=(64, 256)))


add(Case("groupnorm", _module(lambda: nn.GroupNorm(2, 6)), lambda n: (randn(n, 2, 6, n),)))
add(Case("conv2d_bn_relu", _module(lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())),
         lambda n: (randn(n, 2, 3, n, n + 1),), sizes=(5, 8, 17), atol=1e-4, rtol=1e-4))
add(Case("conv1d", _module(lambda: nn.Conv1d(3, 4, 3, padding=1)), lambda n: (randn(n, 2, 3, n + 4),)))
# every layout sym-gpu-library-convolutions calls the library for: padded, strided, grouped, depthwise
# with dilation, 1x1 without bias; grouped 1-d (a 2-d conv with a unit dim), 3-d, transposed
add(Case("conv2d_layouts", _module(lambda: nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2),
    nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8), nn.Conv2d(8, 4, 1, bias=False))),
    lambda n: (randn(n, 2, 3, n + 3, n + 5),), sizes=(5, 8, 17), atol=1e-4, rtol=1e-4))
add(Case("conv_then_linear", _module(lambda: _ConvThenLinear()), lambda n: (randn(n, n + 1, 3, 8, 8),), sizes=(3, 6, 12),
         atol=1e-4, rtol=1e-4))


class _ConvReturned(nn.Module):
    """A 1x1 conv with bias whose result is a graph output and a ReLU's input: the bias stays in the
    call (the output must have it too)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 1)

    def forward(self, x):
        y = self.conv(x)
        return y, torch.relu(y)


add(Case("conv_bias_returned", _module(lambda: _ConvReturned()), lambda n: (randn(n, 2, 4, n + 3, n + 5),),
         atol=1e-4, rtol=1e-4))
def _channel_norm() -> nn.Module:
    """Batch norm (eval) with random statistics and affine parameters, then ReLU: per-channel values
    that differ, so a lane reading another channel's would show."""
    bn = nn.BatchNorm2d(5)
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(5))
        bn.running_var.copy_(torch.rand(5) + 0.5)
        bn.weight.copy_(torch.randn(5))
        bn.bias.copy_(torch.randn(5))
    return nn.Sequential(bn, nn.ReLU())


# H*W no multiple of the width (54, 154: the flat 128-bit path, a thread's lanes spanning two channels;
# totals of 810 and 2310 leave a partial last vector) and a multiple of it (460: the plain path)
add(Case("channel_norm_odd_sizes", _module(_channel_norm), lambda n: (randn(n, 3, 5, n + 3, n + 6),)))


add(Case("conv1d_grouped_dilated", _module(lambda: nn.Conv1d(4, 8, 3, padding=2, dilation=2, groups=2)),
         lambda n: (randn(n, 3, 4, n + 6),), atol=1e-4, rtol=1e-4))
add(Case("conv3d_transposed2d", _module(lambda: _Conv3dThenTransposed()),
         lambda n: (randn(n, 1, 2, n + 10, n + 12, 3), randn(n + 1, 2, 4, n + 4, n + 4)), sizes=(3, 5, 8), atol=1e-4, rtol=1e-4))


@case(inputs=lambda n: (randn(n, n + 1, 2 * n + 7),))
def odd_slices(x):
    """Elementwise over slices with static offsets at odd row lengths (the flat path's 1-D views of a
    slice; its rows are not contiguous over the iteration space, so the scalar path runs for it)."""
    a, b = x[:, 1:], x[:, :-1]
    return a * 2 + b, torch.exp(x[:, 3:]) - 1


@case(inputs=lambda n: (randn(n, n, 10),))
def manual_normalize(x):
    m = x.mean(dim=-1, keepdim=True)
    v = ((x - m) ** 2).mean(dim=-1, keepdim=True)
    return (x - m) / torch.sqrt(v + 1e-5)


# ---------------------------------------------------------------------------------------------
# views with symbolic products


@case(inputs=lambda n: (randn(n, 2, n, 6),))
def view_flat(x):
    return x.view(-1, 6) * 2, x.reshape(-1)


@case(inputs=lambda n: (randn(n, n, n + 1, n + 2),))
def view_minus_one(x):
    # -1 inside a split group, and views whose dims regroup across ([a, b, c] -> [b, a, c], [c, a*b])
    b, s, d = x.shape
    flat = x.view(-1, d)
    return (flat.view(b, -1, d) * 2, x.view(-1).view(d, -1).sum(1), x.reshape(s, b, d) + 1,
            x.reshape(b, -1).view(b, s, -1).sum(-1))


@case(inputs=lambda n: (randn(n, 2, 8, n, n + 1),))
def pixel_shuffle(x):
    return F.pixel_shuffle(x, 2) + 1


@case(inputs=lambda n: (randn(n, n, n + 1, 8),))
def reshape_roundtrip(x):
    b, s, d = x.shape
    y = x.reshape(b * s, d) @ torch.ones(d, 3)
    return y.reshape(b, s, 3) + 1


@case(inputs=lambda n: (randn(n, n, 7, n + 1),))
def flatten_unflatten(x):
    y = torch.flatten(x, 1) + 1
    return y.unflatten(1, (7, x.shape[2])) * 2, torch.flatten(x, 0, 1)


@case(inputs=lambda n: (randn(n, 2, n, 16),), bench_sizes=(64, 256))
def heads_split_merge(x):
    b, s, d = x.shape
    h = 4
    q = x.view(b, s, h, d // h).permute(0, 2, 1, 3)  # [b, h, s, dh]
    att = torch.softmax(q @ q.transpose(-1, -2), dim=-1)
    o = att @ q
    return o.permute(0, 2, 1, 3).contiguous().view(b, s, d)


@case(inputs=lambda n: (randn(n, n, 6),))
def expand_unsqueeze(x):
    return x.unsqueeze(1).expand(-1, x.shape[0], -1) + x.unsqueeze(0), x[:, None, :].squeeze(1)


# ---------------------------------------------------------------------------------------------
# cat / split / slice / narrow with symbolic bounds


@case(inputs=lambda n: (randn(n, n, 4),), sizes=(5, 8, 17))
def slice_half(x):
    n = x.shape[0]
    return x[: n // 2] * 2, x[n // 2:], x[1::2], x[:, 1:3]


@case(inputs=lambda n: (randn(n, n, 5),))
def cat_shifted(x):
    return torch.cat([x, x[1:]], dim=0), torch.cat([x, x * 2], dim=1)


@case(inputs=lambda n: (randn(n, n, n + 2, 6),))
def cat_of_empty_pieces(x):
    """Every piece statically empty along the concat dim (torch-mlir's lowering left a concat of
    no inputs, and the process aborted); one piece empty, the other not."""
    empty = torch.cat([x[:, 2:2], x[:, 4:4]], dim=1)
    return empty * 2, torch.cat([x[:, :, 3:3].int(), x[:, :, 5:5].float()], dim=2), torch.cat([x[:, 1:1], x], 1)


@case(inputs=lambda n: (randn(n, 2, 4, n + 3, n + 5),))
def pad_that_crops(x):
    """Negative pads crop (the backward of a pad): torch-mlir's lowering corrupted the heap or gave
    wrong values (decompositions.constant_pad_nd)."""
    return F.pad(x, (0, -1, 0, -1)), F.pad(x, (-1, 0)), F.pad(x, (1, -1)) * 2, F.pad(x, (2, -1, -3, 1), value=0.5)


@case(inputs=lambda n: (randn(n, n, 4), randn(n, 20 - n, 4, salt=1)), sizes=(5, 8, 17))
def pad_to_the_longer(x, y):
    """`max` / `min` of two sizes (`torch.sym_max` / `sym_min`, which torch-mlir's importer cannot
    map): either input is the longer one across the sizes."""
    n, m = max(x.shape[0], y.shape[0]), min(x.shape[0], y.shape[0])
    return F.pad(x, (0, 0, 0, n - x.shape[0])) + F.pad(y, (0, 0, 0, n - y.shape[0])), x[:m] * y[:m]


@case(inputs=lambda n: (randn(n, n, 6),), sizes=(5, 8, 17))
def split_sizes(x):
    k = x.shape[0] // 2
    a, b = x.split([k, x.shape[0] - k])
    c, d = x.chunk(2, dim=1)
    return a.sum(0), b * 2, c - d


@case(inputs=lambda n: (randn(n, n, n),), sizes=(6, 9, 17))
def narrow_symbolic(x):
    n = x.shape[0]
    return torch.narrow(x, 0, 1, n - 2) + 1, torch.narrow(x, 1, 0, n // 3)


@case(inputs=lambda n: (randn(n, n + 1, 6), randn(n, n + 2, 6, salt=1)))
def stack_pad(x, y):
    z = torch.cat([x, y])
    return F.pad(z, (1, 2)), torch.stack([z, z + 1], dim=1)


@case(inputs=lambda n: (randint(n, 0, 12, n, n + 1), randn(n, n, n + 1, 4)), sizes=(5, 8, 17))
def put_2d_index(idx, v):
    """Accumulating puts with a [n, n + 1] index into rows of a static 4 (an embedding's backward):
    torch-mlir broadcast the values to [n, 1, 4] (fx_rewrites.flat_put_indices); a scalar value too."""
    return (v.new_zeros(12, 4).index_put((idx,), v, accumulate=True),
            v.new_zeros(12, 4).index_put((idx,), torch.tensor(1.0, device=v.device), accumulate=True))


@case(inputs=lambda n: (randn(n, n, n + 2), randint(n, 0, n + 2, n, 1), randint(n, 0, n, 1, n + 2), randn(n, n, n + 2, salt=1)),
      sizes=(5, 8, 17))
def scatter_one_per_slice(x, i, i0, src):
    """Scatters writing one element per row or column (cross entropy's backward: a one-hot of -1 at
    the targets) become where(iota == index) (fx_rewrites.scatter_as_where): values, sources, a
    scatter into zeros times x (the one-hot fused with its reader), a 3-d scatter along the last dim."""
    y = x.view(1, *x.shape) + 1
    return (x.scatter(1, i, -1.0), x.scatter(0, i0, 2.5), x.scatter(1, i, src), torch.zeros_like(x).scatter_(1, i, 1.0) * x,
            y.scatter(2, i.unsqueeze(0), 7.0))


@case(inputs=lambda n: (randn(n, n, n + 1, 4), randint(n, 0, 9, n, n + 1)), sizes=(5, 8, 17))
def put_broadcast_indices(h, ids):
    """An accumulating put at (row, ids % length) with the index tensors [n, 1] and [n, length], into
    rows of a static 4 (fx_rewrites.flat_put_indices: torch-mlir dropped updates)."""
    h = h * torch.arange(1.0, 5.0, device=h.device)
    idx = ids % h.shape[1]
    return h.new_zeros(h.shape).index_put((torch.arange(h.shape[0], device=h.device)[:, None], idx), h, accumulate=True)


@case(inputs=lambda n: (randn(n, n, n + 2, 4),))
def view_of_a_cat_into_static_groups(x):
    """A view of [b, t, 4] (4 guarded static, typed dynamic after the cat) as [b, t, 2, 2]:
    sym-torch-unflatten made an invalid expand_shape (a review's random training programs)."""
    h = torch.cat([x, x[:, :1] * 3], 1)
    b, t, d = h.shape
    y = h.view(b, t, 2, 2)
    return (y * y.mean((0, 1), keepdim=True)).reshape(b, t, 4)


@case(inputs=lambda n: (randn(n, n, 7), randint(n, 0, n, n + 1)))
def index_gather(x, idx):
    return x.index_select(0, idx), x[idx], torch.gather(x, 0, idx[:, None].expand(-1, 7)[: x.shape[0]])


@case(inputs=lambda n: (randn(n, n, 6),))
def unbind_repeat_flip(x):
    return x.unbind(1), x.repeat(2, 1), x.flip(0), torch.roll(x, 1, 0)


@case(inputs=lambda n: (randn(n, n, 6),))
def inplace_on_copy(x):
    y = x.clone()
    y[1:] += 1
    y[:, 0] = 0.0
    return y


@case(inputs=lambda n: (randn(n, n, n + 1),))
def interpolate_nearest(x):
    return F.interpolate(x[None], scale_factor=2, mode="nearest")


# ---------------------------------------------------------------------------------------------
# SymInt outputs / arithmetic, iota


@case(inputs=lambda n: (randn(n, n, 5),))
def symint_arith(x):
    n = x.shape[0]
    return x * n + (n // 2), n * 2, x.shape[1] + n


@case(inputs=lambda n: (randn(n, n, 4),))
def arange_full(x):
    n = x.shape[0]
    pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    return x + pos + torch.ones(n, 1) + x.new_zeros(n, 4), torch.full((n, 2), 3.0)


# ---------------------------------------------------------------------------------------------
# integer and bool tensors


@case(inputs=lambda n: (randint(n, -50, 50, n, 5), randint(n, 1, 9, n, 5, salt=1)))
def int64_ops(a, b):
    return ((a * 3 + b) // 2, a % b, torch.maximum(a, b), a.sum(dim=0), (a > b).to(torch.int64),
            torch.div(a, b, rounding_mode="trunc"), a / b)


@case(inputs=lambda n: (randn(n, n, 4), randn(n, n, 4, salt=1)))
def bool_masks(x, y):
    m = (x > 0) & ~(y < 0.5) | (x < -1)
    return m, torch.where(m, x, 0.0), m.sum(dim=1), m.any(dim=0), torch.logical_xor(x > 0, y > 0)


def _graph_break(x):
    y = torch.tanh(x) * 2
    torch._dynamo.graph_break()  # two graphs, each compiled once for all sizes
    return y.sum(0) + x.shape[0]


add(Case("graph_break", _fn(_graph_break), lambda n: (randn(n, n, 6),), graphs=2))


# ---------------------------------------------------------------------------------------------
# small models


class MLP(nn.Module):
    def __init__(self, d: int = 16, hidden: int = 32, out: int = 8) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(torch.tanh(self.fc1(x)))))


class Block(nn.Module):
    """Pre-norm transformer block: LayerNorm + MultiheadAttention(batch_first) + MLP with GELU."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class CausalSelfAttention(nn.Module):
    """GPT-2's attention: one fused qkv projection split into heads, causal SDPA. At batch 1 the
    slices of the qkv buffer reach kernels as views with static offsets (k and v were read from q's
    columns on the GPU before sym-gpu-dynamic-offsets)."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (t.view(b, n, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, n, d))


def _split_slices(x):
    a, b, c = x.split(4, dim=-1)
    return b * 2 + c.exp() - a


class Embed(nn.Module):
    def __init__(self, vocab: int = 50, d: int = 8) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(64, d)
        self.proj = nn.Linear(d, 4)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        return self.proj(self.emb(ids) + self.pos(pos))


add(Case("mlp", _module(MLP), lambda n: (randn(n, n, 16),), bench_sizes=(64, 512)))
add(Case("transformer_block", _module(Block), lambda n: (randn(n, 2, n, 16),), bench_sizes=(12, 48),
         atol=1e-4, rtol=1e-4))
add(Case("causal_attention_batch1", _module(CausalSelfAttention), lambda n: (randn(n, 1, n, 16),),
         atol=1e-4, rtol=1e-4))
class _PreNormStream(nn.Module):
    """GPT-2's residual stream: `h = h + f(ln(h))` over 5 layers, then a final norm. Each `h` feeds the
    next sum and a layer norm; copied into both, the last norm would recompute every layer's sum
    (sym-duplicate-elementwise keeps a copy to two loads a element, so every other `h` is written,
    by the layer norm's launch on the GPU)."""

    def __init__(self) -> None:
        super().__init__()
        self.norms = nn.ModuleList(nn.LayerNorm(32) for _ in range(5))
        self.lins = nn.ModuleList(nn.Linear(32, 32) for _ in range(5))
        self.final = nn.LayerNorm(32)

    def forward(self, x):
        h = x
        for norm, lin in zip(self.norms, self.lins):
            h = h + lin(norm(h))
        return self.final(h) * 2.0, h


add(Case("pre_norm_residual_stream", _module(_PreNormStream), lambda n: (randn(n, 2, n, 32),), atol=1e-4, rtol=1e-4))
add(Case("pre_norm_residual_stream_batch1", _module(_PreNormStream), lambda n: (randn(n, 1, n, 32),),
         atol=1e-4, rtol=1e-4))
add(Case("layernorm_batch1", _module(lambda: nn.LayerNorm(24)), lambda n: (randn(n, 1, n, 24),), atol=1e-5, rtol=1e-5))
add(Case("split_slices_batch1", _fn(_split_slices), lambda n: (randn(n, 1, n, 12),)))
add(Case("embedding", _module(Embed), lambda n: (randint(n, 0, 50, 2, n),), sizes=(3, 8, 17, 40)))


class _ProjectBack(nn.Module):
    """A linear layer over [b, s, d] with b and s both dynamic, its result viewed back to [b, s, 12]:
    an unflatten into two dynamic sizes (sym-torch-unflatten), then heads split off beside them."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 12)

    def forward(self, x):
        b, s, d = x.shape
        y = self.lin(x.reshape(-1, d)).view(b, s, 12)
        return torch.relu(y).view(b, s, 3, 4).sum(-1)


add(Case("linear_dynamic_batch", _module(_ProjectBack), lambda n: (randn(n, n + 1, 2 * n + 1, 8),), atol=1e-5, rtol=1e-5))


# Eager's numerics where torch-mlir's lowerings differ (mlir_sym/numerics.py): NaN through clamps and
# maximum/minimum, NaN sorted as the largest key, 1/0 = inf, and half-precision math computed in
# float32 and rounded once (within 2 units in the last place: the CPU JIT keeps chains of bf16
# arithmetic in float32, as inductor does, where eager rounds each op).
def _nan_inputs(n: int) -> tuple:
    x, y = randn(n, n, 6) * 2, randn(n, n, 6, salt=1)
    x[:, 1] = float("nan")
    x[:, 4] = float("inf")
    y[:, 2] = float("nan")
    return x, y


def _nan_selections(x, y):
    return torch.stack([x.clamp(0, 1), x.clamp_min(0.5), x.clamp(max=0.5), x.clamp(y, y + 1), F.hardtanh(x),
                        F.relu6(x), F.hardsigmoid(x), torch.maximum(x, y), torch.minimum(x, y), torch.maximum(y, x)])


def _nan_sort(x, y):
    v, i = x.flatten().sort(stable=True)
    d = x.flatten().sort(descending=True, stable=True).values
    z = torch.cat([y, x, y.flip(1)], 1)  # NaN and inf at several places along dim 1
    rows = z.sort(dim=1, stable=True)  # along a middle dim (the CPU's bubble sort)
    return (v, i, d, x.flatten().topk(3).values, rows.values, rows.indices,
            z.sort(dim=1, descending=True, stable=True).values, z.topk(2, dim=1, largest=False).values)


def _infinite_rows_inputs(n: int) -> tuple:
    x, y = randn(n, n, 5, n + 5), randn(n, n, n + 1, 6, salt=1)
    x[:, 0] = float("-inf")  # a row all -inf: True
    x[:, 1] = float("inf")
    x[:, 2] = float("-inf")
    x[:, 2, 3] = float("nan")  # -inf but for a NaN: False
    x[:, 3, :2] = float("-inf")
    y[:, :, 4] = float("inf")  # a column all inf along dim 1
    y[:, 0, 5] = float("nan")
    return x, y


def _infinite_rows(x, y):
    """`(x == -inf).all(d)` as PyTorch's safe softmax writes it (fx_rewrites.all_infinite_as_extremum)."""
    dead = (x == float("-inf")).all(-1, keepdim=True)
    return (dead, (y == float("inf")).all(1), (x == float("inf")).all(-1),
            torch.where(dead, torch.zeros_like(x), x.softmax(-1)))


def _reciprocal(x):
    z = x.round()  # zeros among them
    return torch.reciprocal(z), 1 / (z + 0.0), torch.reciprocal(z.long())


def _half_math(x, w):
    return (F.gelu(x, approximate="tanh") + F.gelu(x * 0.3), F.elu(x).rsqrt().nan_to_num(), F.selu(x),
            x.norm(dim=-1), x.var(-1), x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, torch.sigmoid(x) * x)


add(Case("reflect_pad", _fn(lambda x: F.pad(x, (2, 3), mode="reflect") * 2), lambda n: (randn(n, 2, 3, n + 4),)))
add(Case("nan_selections", _fn(_nan_selections), _nan_inputs, equal_nan=True))
add(Case("nan_sort", _fn(_nan_sort), _nan_inputs, equal_nan=True))
add(Case("infinite_rows", _fn(_infinite_rows), _infinite_rows_inputs, equal_nan=True))


def _pool_of_a_merged_view(x):
    """A view that merges batch and channels (dim 1 of `x.view(-1, 2, l)` is `(b*c)//((b*c)//2)` in the
    fake value), pooled: torch-mlir's conversion failed on the static 2 the rewritten view gave its
    readers (fx_rewrites.views_to_collapse_split keeps the view's own value)."""
    b, c, length = x.shape
    y = x.reshape(-1, 2, length)
    return F.avg_pool1d(y, 2) * 2, F.avg_pool1d(y, 3, 2)  # (max_pool1d: PyTorch's own guard pins the length)


add(Case("pool_of_a_merged_view", _fn(_pool_of_a_merged_view), lambda n: (randn(n, n, 4, n + 6),)))
add(Case("reciprocal_of_zero", _fn(_reciprocal), lambda n: (randn(n, n, 6),)))
add(Case("bf16_math", _fn(_half_math), lambda n: (randn(n, n, 64, dtype=torch.bfloat16) * 3, randn(n, 64, dtype=torch.bfloat16, salt=1)),
         atol=0, rtol=2 ** -6, tags=("bf16",)))
add(Case("f16_math", _fn(_half_math), lambda n: (randn(n, n, 64, dtype=torch.float16) * 3, randn(n, 64, dtype=torch.float16, salt=1)),
         atol=1e-5, rtol=2 ** -9))

# Half-precision products: on the GPU, cuBLAS on the half buffers with float32 accumulation
# (sym-matmul-half-operands, sym-gpu-library-calls), as eager.
def _half_mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)).to(torch.bfloat16)


def _half_conv() -> nn.Module:
    return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, groups=4)).to(torch.bfloat16)


def _half_attention(q, k):
    return torch.softmax(q @ k.transpose(-1, -2) * 0.25, dim=-1) @ k


def _half_constant(x):
    return x * torch.tensor([0.5, 2.0, -1.0, 3.0], dtype=torch.bfloat16, device=x.device)  # a bf16 literal


def _constant_vector(x):
    # literals of 4 elements (torch-mlir imports them as dense_resource)
    return x * torch.tensor([0.5, 2.0, -1.0, 3.0], device=x.device) + torch.arange(4.0, device=x.device)


add(Case("bf16_constant", _fn(_half_constant), lambda n: (randn(n, n, 4, dtype=torch.bfloat16),), tags=("bf16",)))
add(Case("constant_vector", _fn(_constant_vector), lambda n: (randn(n, n, 4),)))
add(Case("bf16_mlp", _module(_half_mlp), lambda n: (randn(n, n, 16, dtype=torch.bfloat16),),
         atol=2e-2, rtol=2e-2, tags=("bf16",)))
# half convolutions: on the GPU, torch.convolution of the half buffers (a float32 accumulator in linalg)
add(Case("bf16_conv", _module(_half_conv), lambda n: (randn(n, 2, 4, n + 3, n + 5, dtype=torch.bfloat16),),
         sizes=(5, 8), atol=3e-2, rtol=2e-2, tags=("bf16",)))
# a depthwise-separable block in bf16: the 1x1 convolution's bias is added by the batch norm's kernel
# on the GPU (sym-gpu-conv-bias-epilogue), over [N, C, H*W] (sym-collapse-broadcast-dims)
add(Case("bf16_separable", _module(lambda: nn.Sequential(
    nn.Conv2d(4, 4, 3, padding=1, groups=4), nn.Conv2d(4, 8, 1), nn.BatchNorm2d(8), nn.ReLU6()).to(torch.bfloat16)),
    lambda n: (randn(n, 2, 4, n + 3, n + 5, dtype=torch.bfloat16),), sizes=(5, 8), atol=3e-2, rtol=2e-2, tags=("bf16",)))
add(Case("bf16_attention", _fn(_half_attention),
         lambda n: (randn(n, 2, n, 16, dtype=torch.bfloat16), randn(n, 2, n, 16, dtype=torch.bfloat16, salt=1)),
         atol=2e-2, rtol=2e-2, tags=("bf16",)))

# scaled_dot_product_attention on half tensors (attention.py): float32 inside, probabilities rounded to
# the half type for the second product; on the GPU both products are cuBLAS on half buffers.
def _half_sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


add(Case("bf16_sdpa", _fn(_half_sdpa),
         lambda n: (randn(n, 2, 4, n, 16, dtype=torch.bfloat16), randn(n, 2, 4, n, 16, dtype=torch.bfloat16, salt=1),
                    randn(n, 2, 4, n, 16, dtype=torch.bfloat16, salt=2)),
         atol=2e-2, rtol=2e-2, tags=("bf16",)))


# Elementwise ops torch-mlir has no lowering for (passes/torch_elementwise_math.py), on inputs with
# signed zeros, NaNs, infinities and values whose squares overflow float32.
def _special_elementwise(x, y):
    return (torch.erfc(x), torch.hypot(x, y), torch.nextafter(x, y), torch.signbit(x), torch.copysign(x, y),
            x.view(torch.int32) >> 20, torch.signbit((y * 4).long()), torch.copysign(x, (y > 0).long()))


def _special_inputs(n: int) -> tuple:
    x, y = randn(n, n, 8) * 3, randn(n, n, 8, salt=1) * 3
    x[0, :4] = torch.tensor([-0.0, float("nan"), float("inf"), 3e30])
    y[0, :4] = torch.tensor([float("nan"), 0.0, -float("inf"), 3e30])
    x[-1, :3] = torch.tensor([0.0, 1.0, -2.0])
    y[-1, :3] = torch.tensor([-1.0, 1.0, -2.0])
    return x, y


def _special_half(x, y):
    return torch.erfc(x), torch.hypot(x, y), torch.copysign(x, y), torch.signbit(x)


def _erfinv_inputs(n: int) -> tuple:
    y = torch.tanh(randn(n, n, 8)) * 0.99
    y[0, :5] = torch.tensor([1.0, -1.0, 1.5, float("nan"), -0.0])
    return (y,)


add(Case("erfinv", _fn(torch.erfinv), _erfinv_inputs, equal_nan=True, atol=1e-6, rtol=1e-5))


def _gamma_functions(x):
    return torch.lgamma(x), torch.digamma(x), torch.lgamma(x.double()), torch.digamma(x.double())


def _gamma_inputs(n: int) -> tuple:
    x = randn(n, n, 6) * 6
    x[0, :6] = torch.tensor([0.0, -0.0, -3.0, float("inf"), float("nan"), 1.0000001])
    return (x,)


add(Case("gamma_functions", _fn(_gamma_functions), _gamma_inputs, equal_nan=True, atol=1e-6, rtol=1e-6))


# Modified Bessel functions (i0, i0e, i1, i1e: Cephes' Chebyshev series as eager's CPU kernels, the
# float32 tables for i1 / i1e) and ndtri (its tails in float64), float32, float64 and bf16
# (passes/_special_math.py); edges: +-0, +-8 (the series' boundary), NaN, overflow, y = 0, 1, out of range.
def _bessel_ndtri(x, y):
    S = torch.special
    xd = x.double()
    return (torch.i0(x), S.i0e(x), S.i1(x), S.i1e(x), S.ndtri(y), torch.i0(xd), S.i1e(xd), S.ndtri(y.double()),
            torch.i0((x.abs() * 3).int()))


def _bessel_inputs(n: int) -> tuple:
    x = randn(n, n, 6) * 6
    x[0, :6] = torch.tensor([0.0, -0.0, 8.0, -8.0, float("nan"), 700.0])
    y = (randn(n, n, 6, salt=1).abs() / 4).clamp(max=1.0)
    y[0, :6] = torch.tensor([0.0, 1.0, -0.1, 1.1, 1e-20, 1 - 1e-7])
    return x, y


add(Case("bessel_ndtri", _fn(_bessel_ndtri), _bessel_inputs, equal_nan=True, atol=0, rtol=2e-6))
# erfcx and log_ndtr as eager computes them (ATen's calc_erfcx: 100 Chebyshev pieces, a continued
# fraction past 50; log_ndtr through erfcx below -1): every branch and its edges, float32 and float64.
def _erfcx_log_ndtr(x):
    S = torch.special
    return S.erfcx(x), S.log_ndtr(x), S.erfcx(x.double()), S.log_ndtr(x.double())


def _erfcx_inputs(n: int) -> tuple:
    x = randn(n, n, 8) * 8
    x[0, :8] = torch.tensor([0.0, -0.0, 50.0, 60.0, 6e7, -6.2, -27.0, float("nan")])
    return (x,)


add(Case("erfcx_log_ndtr", _fn(_erfcx_log_ndtr), _erfcx_inputs, equal_nan=True, atol=0, rtol=3e-6))

# log1p / expm1 of small |x|: the CPU path calls libm (sym-math-precise-libm); MLIR's LLVM lowering
# computed log(1 + x) and exp(x) - 1, which gave log1p(1e-10) = 0 in float32.
add(Case("log1p_expm1_small", _fn(lambda x: (torch.log1p(x), torch.expm1(x), torch.log1p(x.double()),
                                              torch.expm1(x.double()))),
         lambda n: (randn(n, n, 5) * torch.tensor([1e-12, 1e-7, 1e-4, 1e-1, 10.0]),), atol=0, rtol=3e-7,
         equal_nan=True))


add(Case("bf16_bessel", _fn(lambda x: (torch.i0(x), torch.special.i1(x), torch.special.i1e(x))),
         lambda n: (_bessel_inputs(n)[0].to(torch.bfloat16),), equal_nan=True, tags=("bf16",)))
add(Case("special_elementwise", _fn(_special_elementwise), _special_inputs, equal_nan=True, atol=0, rtol=2e-7))
add(Case("bf16_special_elementwise", _fn(_special_half),
         lambda n: tuple(t.to(torch.bfloat16) for t in _special_inputs(n)), equal_nan=True, tags=("bf16",)))


# Scalar operands: bitwise ops and fmod by scalars, shifts by tensors (sym-torch-elementwise-math),
# xlogy by a scalar (prims.scalar_tensor); with half tensors, eager converts the scalar (or a 0-d
# float32 tensor) to the half type first for these ops (numerics._ROUNDS_OTHER_OPERANDS).
def _scalar_operands(x):
    n = (x * 1000).long()
    return (n | 8, (x > 0) ^ True, n.int() ^ 3, n >> (n % 70), n << (n % 70), n.int() >> (n % 40).int(),
            torch.fmod(x, 0.7), torch.fmod(x, -2), torch.xlogy(x, 0.7), torch.xlogy(2.0, x.abs()))


def _half_scalar_operands(x, s):
    return (torch.remainder(x, 0.7), torch.fmod(x, 0.7), torch.atan2(x, s), x.abs() ** 0.7, 0.7 ** x,
            torch.hypot(x, s), x * s, x - 0.7)


add(Case("scalar_operands", _fn(_scalar_operands), lambda n: (randn(n, n, 6) * 5,)))
add(Case("bf16_scalar_operands", _fn(_half_scalar_operands),
         lambda n: ((randn(n, n, 6) * 5).to(torch.bfloat16), torch.tensor(0.7)), atol=0, rtol=0, tags=("bf16",)))


# Float floor division as eager's (Python's) formula, C's fmod, comparisons of constant tensors with
# ints, logaddexp with NaN (numerics.python_floor_division, float_comparison_scalars).
def _float_floor_division(x, y):
    return (x // y, torch.floor_divide(x, 0.1), torch.fmod(x, y), torch.where(torch.zeros(()) == 0, x, -x),
            torch.logaddexp(x, y), torch.dist(x, y))


def _floor_division_inputs(n: int) -> tuple:
    x, y = randn(n, n, 5) * 4, randn(n, n, 5, salt=1)
    x[0, :4] = torch.tensor([1.0, 5.0, float("inf"), float("nan")])
    y[0, :4] = torch.tensor([0.1, 0.1, -3.0, -float("inf")])
    return x, y


add(Case("float_floor_division", _fn(_float_floor_division), _floor_division_inputs, equal_nan=True, atol=1e-5, rtol=1e-5))


# Integer division (numerics.exact_integer_division, passes/checked_int_division.py): floor division
# exact beyond 2^53 (torch-mlir went through float64), fmod, powers by constants.
def _int_division(a, b):
    return (torch.div(a, b, rounding_mode="floor"), a // 3, a // -3, torch.div(a, b, rounding_mode="trunc"),
            a % b, torch.fmod(a, b), torch.fmod(a, -3), (a % 1000) ** 3, a ** 0, a.int() // b.int())


def _int_operands(n: int) -> tuple:
    a = randint(n, -(2 ** 62), 2 ** 62, n, 6)
    a[0, :4] = torch.tensor([7, -7, 2 ** 53 + 1, -(2 ** 53) - 3])
    b = randint(n, -9, 10, n, 6, salt=1)
    b[b == 0] = 4
    return a, b


add(Case("int_division", _fn(_int_division), _int_operands))


# Decompositions (decompositions.py): medians through a stable sort (NaN rows give NaN and the first
# NaN's index), pairwise distances from broadcast differences.
def _medians(x, k):
    # the index eager gives for an all-NaN row of nanmedian is its nth_element's (not specified)
    return (torch.median(x, 1), torch.median(x, -1, keepdim=True), torch.nanmedian(x, 1).values,
            torch.nanmedian(x[:-1], 1).indices, torch.median(x), torch.nanmedian(x), torch.median(k, 0))


def _median_inputs(n: int) -> tuple:
    x = randn(n, n, 7)
    x[0, 2] = x[0, 5] = float("nan")
    x[-1, :] = float("nan")
    return x, randint(n, -50, 50, n, 4)


def _cdists(a, b):
    return tuple(torch.cdist(a, b, p=p) for p in (2.0, 1.0, 0.0, float("inf"), 3.0))


add(Case("medians", _fn(_medians), _median_inputs, equal_nan=True))


# searchsorted: a 1-d sequence (bucketize's binary search; with a sorter, side="right", int32, a
# NaN value), batched sequences (a count per value), a scalar value.
def _searchsorted(seq, rows, v, order):
    return (torch.searchsorted(seq, v), torch.searchsorted(seq, v, right=True, out_int32=True),
            torch.searchsorted(seq[order], v, sorter=torch.argsort(order)),
            torch.searchsorted(rows, v[: rows.shape[0]], side="right"), torch.searchsorted(rows, v[: rows.shape[0]]),
            torch.searchsorted(seq, 0.25))


def _searchsorted_inputs(n: int) -> tuple:
    seq = torch.sort(randn(n, n + 3)).values
    seq[1] = seq[2]  # a tie
    rows = torch.sort(randn(n, 2, n + 1, salt=1), dim=-1).values
    v = randn(n, 2, 5, salt=2)
    v[0, 0] = float("nan")
    v[0, 1] = seq[2]
    return seq, rows, v, torch.randperm(n + 3, generator=torch.Generator().manual_seed(n))

add(Case("searchsorted", _fn(_searchsorted), _searchsorted_inputs))


# Integer loops in elementwise bodies (sym-torch-elementwise-math, an scf.while per element): pow of
# integers by an integer tensor (by squaring, wrapping; negative exponents as eager: 1, +-1 or 0),
# gcd and lcm by Euclid's algorithm (signs, zeros).
def _integer_loops(a, e):
    small = a % 97 - 40
    return (torch.pow(a, e), torch.pow(small.int(), e), torch.gcd(small, e), torch.lcm(small, e + 1), torch.gcd(a, small),
            torch.pow(small[:1], e[:, :1]))


def _integer_loop_inputs(n: int) -> tuple:
    a = randint(n, -(2 ** 62), 2 ** 62, n, 6)
    e = randint(n, -4, 70, n, 6, salt=1)
    a[0, :4] = torch.tensor([1, -1, 0, -1])
    e[0, :4] = torch.tensor([-3, -3, 0, -4])
    return a, e


add(Case("integer_loops", _fn(_integer_loops), _integer_loop_inputs))


def _frexp(x, h):
    m, e = torch.frexp(x)
    return m, e, torch.frexp(x.double()), torch.frexp(h), torch.frexp(h.to(torch.bfloat16)), m * 2.0 ** e


def _frexp_inputs(n: int) -> tuple:
    x = randn(n, n, 4) * 1e3
    x[0] = torch.tensor([0.0, -0.0, float("inf"), float("nan")])
    x[1] = torch.tensor([1e-45, -3e-40, 1.0, -0.75])
    h = (randn(n, n, 4, salt=1) * 100).half()
    h[0, 0] = 1e-7
    return x, h

add(Case("frexp", _fn(_frexp), _frexp_inputs, equal_nan=True, tags=("bf16",)))


# histc (decompositions.py): eager's linear binning with given bounds, the data's range, one value
# (widened by 1), float64; values on the upper bound in the last bin, outside and NaN not counted.
def _histc(x, y):
    return (torch.histc(x, 10, -1, 3), torch.histc(y), torch.histc(x, 7, 0, 1), torch.histc(x.double(), 5, -2.5, 2.5),
            torch.histc(y * 0 + 2, 4))


def _histc_inputs(n: int) -> tuple:
    x = randn(n, n, n + 2) * 2
    x[0, :3] = torch.tensor([3.0, -1.0, float("nan")])
    return x, randn(n, n, 4, salt=1)


add(Case("histc", _fn(_histc), _histc_inputs))
add(Case("cdist", _fn(_cdists), lambda n: (randn(n, 2, n, 5), randn(n, 2, n + 3, 5, salt=1)), atol=1e-5, rtol=1e-5))


# A gather of one element: its loop of one iteration is unrolled onto the host, where the GPU path
# runs it (and its index check) in a one-thread launch.
def _gather_one(x, i):
    return torch.gather(x.flatten(), 0, i) * 2, torch.median(x[:1, :1], 1)


add(Case("gather_one", _fn(_gather_one), lambda n: (randn(n, n, 4), torch.tensor([2 * n + 1]))))


# Rotary position embeddings as Llama computes them: cos / sin of cat(freqs, freqs), q * cos +
# rotate_half(q) * sin with rotate_half(q) = cat(-q[.., 8:], q[.., :8]): concats of equal pieces
# become selects that fuse with what produces and reads them (sym-concat-to-select); also a concat of
# four pieces, and one with a product as a piece (left to sym-decompose-concat).
def _rotary(x, pos, w):
    q = x.view(x.shape[0], 2, -1, 16)
    inv = 1.0 / 10000 ** (torch.arange(8, device=x.device) / 8.0)  # a constant size, as a module buffer's
    freqs = pos[:, None].float() * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    rotated = torch.cat((-q[..., 8:], q[..., :8]), dim=-1)
    quarters = torch.cat((q[..., :4], q[..., 4:8] * 2, q[..., 8:12].exp(), q[..., 12:]), dim=-1)
    return q * emb.cos() + rotated * emb.sin(), quarters, torch.cat((q @ w, q[..., :16] + 1), dim=-1)


def _rotary_inputs(n: int) -> tuple:
    return randn(n, n, 2, 16 * (n + 3)), torch.arange(n + 3), randn(n, 16, 16, salt=1)


add(Case("rotary_embedding", _fn(_rotary), _rotary_inputs, atol=1e-5, rtol=1e-5))


# A concat of equal pieces read permuted or transposed: its `j mod n` maps composed into the
# consumers' loops (a fusion that substituted bare dims only read the wrong elements on the GPU path).
def _concat_permuted(x):
    x = x.view(x.shape[0], -1, 8)  # pieces of a constant size
    c = torch.cat([x, -x], -1)
    t = torch.cat([x[0], x[0] * 2], -1).t()
    return c.permute(2, 0, 1).exp(), t.contiguous() + 1, t.exp(), t.sin()


add(Case("concat_permuted", _fn(_concat_permuted), lambda n: (randn(n, n + 1, 40),), atol=1e-5, rtol=1e-5))


# --- Bessel functions of the first and second kind, modified of the second kind, Airy (passes/_special_bessel.py)
# Eager's Cephes kernels (ATen/native/Math.h), float32 and float64, bit-exact (the products eager's
# AVX2 build contracts are FMAs here too). Row 0 holds every branch's edges: 0, -0, tiny (j0's 1e-5),
# 5 (j, y), 2 (k), 8 (i), +-2.09 and 8.32 (ai), past 103.892 (ai = 0), the zero of ai's series f at
# -1.98635, +-inf, NaN; the other rows scale randn by 0.5 to 60 (both signs: NaN for y, k below 0).
_BESSEL_JY = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0", "airy_ai")
_BESSEL_IK = ("modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
              "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")


def _bessel_ops(names, x, *more):
    return tuple(getattr(torch.special, f)(v) for v in (x, *more) for f in names)


def _bessel_x(n: int) -> torch.Tensor:
    x = randn(n, n, 16) * torch.tensor([0.5, 3.0, 10.0, 60.0]).repeat(4)
    x[0] = torch.tensor([0.0, -0.0, 3e-6, 5.0, -5.0, 2.0, 8.0, -2.09, 2.09, 8.3203353, 110.0, -1.9863527,
                         float("inf"), -float("inf"), float("nan"), 0.3])
    return x


add(Case("bessel_jy_airy", _fn(lambda x, k: _bessel_ops(_BESSEL_JY, x, x.double(), k)),
         lambda n: (_bessel_x(n), randint(n, -30, 30, n, 4)), equal_nan=True, atol=1e-7, rtol=2e-6))
add(Case("bessel_ik", _fn(lambda x: _bessel_ops(_BESSEL_IK, x, x.double())), lambda n: (_bessel_x(n),),
         equal_nan=True, atol=1e-7, rtol=2e-6))
# (bit-exact against this CPU's eager; the tolerances leave room for an eager build that does not
# contract the products into FMAs, up to 1e-3 relative near the functions' zeros in float32)
# No bf16 case: eager's kernels take float and double only ("not implemented for 'BFloat16'"), so
# there is no eager result to compare with, and test_codegen_cases.py runs each traced graph eagerly.


# --- orthogonal polynomials, zeta, polygamma, incomplete gamma (passes/_special_series.py)
# The orthogonal polynomials as eager's recurrences compute them: n < 0, 0, 1, small, past the
# trigonometric form's threshold with |x| < 1, x at the ends (+-1; 0 and 1 for the shifted ones),
# infinities, a NaN order, n = 150 and 200 (Hermite's NaN past 128); n as a float tensor, an int64
# tensor and scalars; float32 and float64. NaN x only with n <= 1: for n >= 2 eager returns an
# uninitialized value for U, V, W, L and P. No infinite order: converted to int64 on a GPU it is
# 2^63 - 1 (the CPU's conversion gives -2^63, so 0), and eager's CUDA recurrences, like ours, would
# loop that many times (the GPU run of this case hung there).
_POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")


def _orthogonal_polynomials(x, n, k):
    S = torch.special
    out = [getattr(S, p)(x, n) for p in _POLYNOMIALS] + [getattr(S, p)(x.double(), k) for p in _POLYNOMIALS]
    return (*out, S.chebyshev_polynomial_t(x, 9), S.legendre_polynomial_p(0.25, n), S.hermite_polynomial_h(x, 3.7),
            S.shifted_chebyshev_polynomial_w(0.75, k))


def _polynomial_inputs(size: int) -> tuple:
    x = randn(size, size, 8) * 1.2
    n = randint(size, -2, 16, size, 8, salt=1).float()
    x[0], n[0] = torch.tensor([1.0, -1.0, 0.0, 1.0, float("inf"), -float("inf"), 0.5, 0.3]), \
        torch.tensor([7.0, 9.0, 12.0, 2.0, 3.0, 4.0, float("nan"), 150.0])
    x[1, :4], n[1, :4] = torch.tensor([float("nan"), float("nan"), -0.9, 0.3]), torch.tensor([0.0, 1.0, 30.0, 200.0])
    x[-1], n[-1] = torch.tensor([-0.9, 0.99, 0.0, 1.0, -1.0, 0.25, -0.6, 2.0]), \
        torch.tensor([-1.0, 0.0, 1.0, 10.0, 11.0, 25.0, 40.0, 20.0])
    k = n.nan_to_num(nan=-3.0, posinf=5.0).long()
    return x, n, k


add(Case("orthogonal_polynomials", _fn(_orthogonal_polynomials), _polynomial_inputs, equal_nan=True, atol=1e-7, rtol=2e-6))


# Hurwitz zeta (Cephes, in double for float32 as eager's acc_type) and polygamma n >= 1 (trigamma; the
# factorial times zeta): x = 1, x < 1, non-positive integer and negative q (integer and not), q = 0,
# -0, tiny, huge, inf, NaN; the scalar overloads; float32 and float64.
def _zeta_polygamma(x, q):
    S = torch.special
    return (S.zeta(x, q), S.zeta(x.double(), q.double()), S.zeta(x, 2.5), S.zeta(3.0, q), torch.polygamma(1, q),
            torch.polygamma(2, q), S.polygamma(5, q), torch.polygamma(1, q.double()), S.polygamma(3, q.double()))


def _zeta_inputs(size: int) -> tuple:
    x = 1 + torch.rand(size, 8, generator=_gen(size)) * 6
    x[:, ::2] = x[:, ::2].floor()  # integer exponents: negative q allowed
    q = randn(size, size, 8, salt=1) * 6
    x[0], q[0] = torch.tensor([1.0, 0.5, 2.0, 3.0, float("nan"), 2.0, 2.0, 4.5]), \
        torch.tensor([1.0, 1.0, -2.0, -2.5, 1.0, float("nan"), float("inf"), -3.5])
    x[-1], q[-1] = torch.tensor([2.0, 2.0, 3.0, 1.5, 2.0, 6.0, 7.0, 2.0]), \
        torch.tensor([0.0, -0.0, 1e-3, 1e8, 9.5, 0.5, -0.5, -float("inf")])
    return x, q


add(Case("zeta_polygamma", _fn(_zeta_polygamma), _zeta_inputs, equal_nan=True, atol=1e-7, rtol=2e-6))
# (both bit-exact against this CPU's eager, FMAs where its AVX2 build contracts; the tolerances leave
# room for an eager build that does not)


# The regularized incomplete gamma functions (eager's calc_igamma / calc_igammac): the series, the
# complement's series, the continued fraction and the asymptotic series (a in (20, 200) and past 200
# near x), every boundary (0, negative, inf, NaN); float32 and float64. lgamma (Lanczos in double,
# eager: glibc's lgamma) limits the agreement; polygamma(0, x) is torch_elementwise_math's digamma.
def _incomplete_gamma(a, x):
    S = torch.special
    return (S.gammainc(a, x), S.gammaincc(a, x), torch.igamma(a.double(), x.double()),
            torch.igammac(a.double(), x.double()), torch.polygamma(0, x), S.polygamma(0, x.double() - 3))


def _igamma_inputs(size: int) -> tuple:
    g = _gen(size)
    a = torch.cat([torch.rand(size, 4, generator=g) * 5, 10 ** (torch.rand(size, 4, generator=g) * 2.5)], 1)
    x = torch.cat([torch.rand(size, 4, generator=g) * 6, a[:, 4:] * (0.75 + 0.5 * torch.rand(size, 4, generator=g))], 1)
    inf, nan = float("inf"), float("nan")
    a[0], x[0] = torch.tensor([0.0, 0.0, 1.0, -1.0, 1.0, inf, inf, 2.0]), torch.tensor([1.0, 0.0, 0.0, 1.0, -1.0, 1.0, inf, inf])
    a[-1], x[-1] = torch.tensor([nan, 1.0, 25.0, 250.0, 1.05, 3.0, 0.3, 1e-3]), \
        torch.tensor([1.0, nan, 24.0, 260.0, 1.07, 0.4, 0.7, 0.8])
    return a, x


add(Case("incomplete_gamma", _fn(_incomplete_gamma), _igamma_inputs, equal_nan=True, atol=1e-6, rtol=1e-5))
add(Case("bf16_polygamma_igamma", _fn(lambda a, x: (torch.polygamma(1, x), torch.polygamma(3, x), torch.special.gammainc(a, x),
                                                      torch.special.gammaincc(a, x))),
         lambda size: tuple(t.to(torch.bfloat16) for t in _igamma_inputs(size)), equal_nan=True, tags=("bf16",)))


# --- mode (decompositions.py)
# torch.mode: the smallest of the most frequent values and its largest index (eager CPU's for slices of
# up to 16; over longer slices eager's index is std::sort's, unspecified: checked through the value it
# points at). Ties, signed zeros, int64 beyond 2^53, bool, bf16, dims of size 1 and 0-d, several dims,
# keepdim.
def _modes(x, k, c, h):
    long_v, long_i = torch.mode(k.t(), 1)  # slices of n
    return (torch.mode(x), torch.mode(x, 1, keepdim=True), torch.mode(k, -1), torch.mode(k > 0, 1),
            torch.mode(c, 1), torch.mode(c, -1, keepdim=True), torch.mode(x[:, :1], 1), torch.mode(x[0, 0]),
            long_v, torch.gather(k.t(), 1, long_i[:, None]), torch.mode(c, 0).values, torch.mode(h, 1))


def _mode_inputs(n: int) -> tuple:
    x = randint(n, -2, 3, n, 7).float()
    x[x == 0] *= torch.where(randint(n, 0, 2, n, 7, salt=4) == 1, -1.0, 1.0)[x == 0]  # signed zeros
    x[0] = torch.tensor([3.0, 1.0, 3.0, 1.0, 2.0, 2.0, 0.0])  # a three-way tie: 1 at index 3
    k = randint(n, -3, 4, n, 9, salt=1) * 2 ** 55 + 1
    c = randint(n, 0, 3, n, 6, 4, salt=2).float()
    h = randint(n, -2, 3, n, 6, salt=3).to(torch.bfloat16)
    return x, k, c, h


add(Case("mode", _fn(_modes), _mode_inputs))


# NaN: each one its own value, sorted last. CPU eager's result depends on where NaNs sit (std::sort's
# comparator is not NaN-aware), so the rows here are ones where it agrees: trailing NaNs, an all-NaN row
# (NaN, 0), a leading NaN before repeats. CUDA eager's fused kernel sorts with a bitonic network whose
# comparator is not NaN-aware either; its result depends on the network's pairs (the H100 disagreed on a
# row of trailing NaNs at size 17), which we do not model: not run on the GPU.
def _mode_nan_inputs(n: int) -> tuple:
    x, _, _, h = _mode_inputs(n)
    nan = float("nan")
    x[1, 4:] = nan
    x[2] = nan
    if n > 3:
        x[3, 0] = nan
    h[0, 3:] = nan
    return x, h


add(Case("mode_nan", _fn(lambda x, h: (torch.mode(x), torch.mode(x, 1, keepdim=True), torch.mode(h, 1))),
         _mode_nan_inputs, equal_nan=True))


# --- 8-bit integers with integer scalars (sym-torch-int8-scalars: torch-mlir crashed on these):
# arithmetic modulo 2^8 as eager, scalars beyond the type's range wrapped, a SymInt scalar, alpha.
def _int8_scalars(x, y):
    n = x.shape[0]
    return (x * 3, x - 5, 7 - x, x * 300, x * n, x - n, torch.rsub(x, 300, alpha=2), torch.sub(x, 3, alpha=n),
            y * 3, y - 200, 250 - y, y * n)


add(Case("int8_scalars", _fn(_int8_scalars),
         lambda n: (randint(n, -128, 128, n, 5).to(torch.int8), randint(n, 0, 256, n, 4, salt=1).to(torch.uint8)),
         atol=0, rtol=0))

BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"


def bench_cases() -> list[Case]:
    return [c for c in CASES if c.bench_sizes]
