"""A training step for the end-to-end tests (CPU, emulated GPU mapping, GPU): a two-layer causal
language model with the parts whose backward graphs matter: an embedding tied to the output head (its
backward is an accumulating index_put with a 2-d index), layer norms, fused qkv projections split
into heads, scaled_dot_product_attention (causal), GELU, residuals, cross entropy.

`check_training(dev, sizes)` compiles it (dynamic=True) and compares the loss and every parameter's
gradient with eager's for each (batch, length)."""
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


def check_training(dev: str, sizes=((2, 7), (3, 16), (4, 9), (2, 33)), atol: float = 2e-5) -> None:
    torch.manual_seed(0)
    ref = TinyLM().to(dev)
    model = TinyLM().to(dev)
    model.load_state_dict(ref.state_dict())
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
