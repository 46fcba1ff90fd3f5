import os, torch, torch.nn.functional as F, torch._dynamo
DEV = "cuda"
def sdpa_split(x):
    q, k, v = x.split(256, dim=2)
    sh = lambda t: t.view(x.shape[0], x.shape[1], 4, 64).transpose(1, 2)
    return F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True)
def sdpa_split_nocausal(x):
    q, k, v = x.split(256, dim=2)
    sh = lambda t: t.view(x.shape[0], x.shape[1], 4, 64).transpose(1, 2)
    return F.scaled_dot_product_attention(sh(q), sh(k), sh(v))
def sdpa_qkv(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
cases = [(sdpa_split, lambda L: (torch.randn(1, L, 768, device=DEV),)),
         (sdpa_split_nocausal, lambda L: (torch.randn(1, L, 768, device=DEV),)),
         (sdpa_qkv, lambda L: tuple(torch.randn(1, 4, L, 64, device=DEV) for _ in range(3)))]
for fn, mk in cases:
    torch._dynamo.reset()
    f = torch.compile(fn, backend="mlir_sym", dynamic=True)
    errs = []
    for L in (8, 11):
        a = mk(L)
        with torch.no_grad():
            errs.append((f(*a) - fn(*a)).abs().max().item())
    print(os.environ.get("TAG", ""), fn.__name__, ["%.2g" % e for e in errs], flush=True)
