"""A training step for the end-to-end tests (CPU, emulated GPU mapping, GPU): a two-layer causal
language model with the parts whose backward graphs matter: an embedding tied to the output head (its
backward is an accumulating index_put with a 2-d index), layer norms, fused qkv projections split
into heads, scaled_dot_product_attention (causal), GELU, residuals, cross entropy.

`check_training(dev, sizes)` compiles it (dynamic=True) and compares the loss and every parameter's
gradient with eager's for each (batch, length). `check_backward(name, dev)` does the same for the
convolution and pooling modules of `CONV_MODULES` (float64), whose backward ops are our
decompositions (decompositions.py)."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 50, d: int = 32, heads: int = 4, layers: int = 2) -> None:
        super().__init__()
        self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(64, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(d)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.lnf(x) @ self.emb.weight.t()
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


def twins(make) -> tuple[nn.Module, nn.Module]:
    """Two modules from `make()` with the same parameters (seeded): eager's reference and the one
    compiled."""
    torch.manual_seed(0)
    ref, model = make(), make()
    model.load_state_dict(ref.state_dict())
    return ref, model


def check_training(dev: str, sizes=((2, 7), (3, 16), (4, 9), (2, 33)), atol: float = 2e-5) -> None:
    ref, model = twins(lambda: TinyLM().to(dev))
    step = torch.compile(model, backend="mlir_sym", dynamic=True)
    g = torch.Generator().manual_seed(1)
    for b, t in sizes:
        ids = torch.randint(0, 50, (b, t), generator=g).to(dev)
        labels = torch.randint(0, 50, (b, t), generator=g).to(dev)
        ref.zero_grad()
        model.zero_grad()
        want = ref(ids, labels)
        want.backward()
        got = step(ids, labels)
        got.backward()
        torch.testing.assert_close(got, want, atol=atol, rtol=1e-5, msg=lambda m: f"loss at {b}x{t}: {m}")
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, atol=atol, rtol=1e-4, msg=lambda m: f"grad of {name} at {b}x{t}: {m}")


CONV_MODULES = {
    "grouped_conv": (lambda: nn.Sequential(nn.Conv2d(4, 6, 3, padding=1, groups=2), nn.AdaptiveAvgPool2d(1)),
                     (2, 4, "n", "n")),
    "depthwise_strided": (lambda: nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4), (2, 4, "n", "n")),
    "transposed": (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
                   (2, 4, "n", "n")),
    "avg_pools": (lambda: nn.Sequential(nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
                                        nn.AdaptiveAvgPool2d((2, 3))), (2, 3, "n", "n")),
    "unbatched_pools": (lambda: nn.Sequential(nn.MaxPool2d(2), nn.AvgPool2d(2)), (3, "n", "n")),
    # an even kernel's "same" padding is asymmetric: its backward crops with a negative pad
    "same_even_kernel": (lambda: nn.Conv2d(2, 3, 2, padding="same"), (2, 2, "n", "n")),
    # output padding past the stride (allowed where the dilation is larger)
    "transposed_output_padding": (lambda: nn.ConvTranspose2d(2, 2, 2, dilation=3, output_padding=2), (1, 2, "n", "n")),
    "adaptive_keeps_a_dim": (lambda: nn.AdaptiveAvgPool2d((3, None)), (2, 2, "n", "n")),
    # one channel in and out per group: its forward did not lower either
    "depthwise_transposed": (lambda: nn.ConvTranspose2d(3, 3, 3, stride=2, padding=1, output_padding=1, groups=3),
                             (2, 3, "n", "n")),
    # a 3-d convolution with one channel in and out per group did not lower (fx_rewrites.depthwise_conv3d_doubled)
    "depthwise_conv3d": (lambda: nn.Conv3d(3, 3, 3, stride=(1, 2, 1), padding=1, groups=3), (1, 3, 4, "n", "n")),
}


def check_backward(name: str, dev: str, sizes=(9, 12, 15), one_compilation: bool = True) -> None:
    """CONV_MODULES[name] compiled (dynamic=True) against eager in float64: the output, the input's
    and every parameter's gradient at each size; one forward and one backward compilation (unless
    `one_compilation` is off: where the PyTorch build's own pooling shape function guards on the
    size's remainder, as the GPU machine's does, Dynamo recompiles per parity before we see a graph)."""
    from mlir_sym import backend

    make, shape = CONV_MODULES[name]
    torch.manual_seed(0)
    m = make().double().to(dev)
    compiled = torch.compile(m, backend="mlir_sym", dynamic=True)
    g = torch.Generator().manual_seed(0)
    for n in sizes:
        x = torch.randn(*[n if d == "n" else d for d in shape], generator=g, dtype=torch.float64).to(dev)
        x2 = x.clone().requires_grad_(True)
        x.requires_grad_(True)
        got, want = compiled(x), m(x2)
        torch.testing.assert_close(got, want)
        up = torch.randn(want.shape, generator=g, dtype=torch.float64).to(dev)
        grads = torch.autograd.grad(got, [x, *m.parameters()], up)
        expected = torch.autograd.grad(want, [x2, *m.parameters()], up)
        torch.testing.assert_close(grads, expected, msg=lambda msg: f"size {n}: {msg}")
    if one_compilation:
        assert backend.stats.compiles == 2, "one forward and one backward compilation"
    assert backend.stats.fallbacks == 0 and backend.stats.guard_misses == 0
