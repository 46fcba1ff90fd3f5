import os, sys, math, torch, torch.nn.functional as F
import torch._dynamo
DEV = "cuda"
torch.manual_seed(0)
W = torch.randn(256, 768, device=DEV) * 0.05
G = torch.randn(256, device=DEV); Bt = torch.randn(256, device=DEV)
def ln(x): return F.layer_norm(x, (256,), G, Bt)
def sm(x): return torch.softmax(x, -1)
def rowsum(x): return x.sum(-1)
def mean(x): return x.mean(-1, keepdim=True)
def conv1d(x): return torch.addmm(torch.zeros(768, device=DEV), x.view(-1, 256), W).view(x.shape[0], x.shape[1], 768)
def gelu_new(x): return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
def split_heads(x):
    q, k, v = x.split(256, dim=2)
    q = q.view(x.shape[0], x.shape[1], 4, 64).transpose(1, 2)
    k = k.view(x.shape[0], x.shape[1], 4, 64).transpose(1, 2)
    return q @ k.transpose(-1, -2)
def causal(s):
    L = s.shape[-1]
    m = torch.ones(L, L, device=DEV, dtype=torch.bool).tril()
    return torch.softmax(torch.where(m, s, torch.finfo(s.dtype).min), -1)
def sdpa(x):
    q, k, v = x.split(256, dim=2)
    sh = lambda t: t.view(x.shape[0], x.shape[1], 4, 64).transpose(1, 2)
    return F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True).transpose(1, 2).reshape(x.shape[0], x.shape[1], 256)
CASES = [(ln, lambda B, L: (torch.randn(B, L, 256, device=DEV),)), (sm, lambda B, L: (torch.randn(B, 4, L, L, device=DEV),)),
         (rowsum, lambda B, L: (torch.randn(B, L, 256, device=DEV),)), (mean, lambda B, L: (torch.randn(B, L, 256, device=DEV),)),
         (conv1d, lambda B, L: (torch.randn(B, L, 256, device=DEV),)), (gelu_new, lambda B, L: (torch.randn(B, L, 768, device=DEV),)),
         (split_heads, lambda B, L: (torch.randn(B, L, 768, device=DEV),)), (causal, lambda B, L: (torch.randn(B, 4, L, L, device=DEV),)),
         (sdpa, lambda B, L: (torch.randn(B, L, 768, device=DEV),))]
for fn, mk in CASES:
    for B in (1, 2):
        torch._dynamo.reset()
        f = torch.compile(fn, backend="mlir_sym", dynamic=True)
        errs = []
        for L in (8, 11):
            args = mk(B, L)
            with torch.no_grad():
                errs.append((f(*args) - fn(*args)).abs().max().item())
        print(fn.__name__, "B=%d" % B, ["%.2g" % e for e in errs], flush=True)
