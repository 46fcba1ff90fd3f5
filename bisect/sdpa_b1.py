import torch, torch.nn.functional as F, torch._dynamo
DEV = "cuda"
def sdpa(x):
    q, k, v = x.split(256, dim=2)
    sh = lambda t: t.view(x.shape[0], x.shape[1], 4, 64).transpose(1, 2)
    return F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True).transpose(1, 2).reshape(x.shape[0], x.shape[1], 256)
def pv(p, v):
    return p @ v
for fn, mk in [(sdpa, lambda L: (torch.randn(1, L, 768, device=DEV),)),
               (pv, lambda L: (torch.softmax(torch.randn(1, 4, L, L, device=DEV), -1), torch.randn(1, 4, L, 64, device=DEV)))]:
    torch._dynamo.reset()
    f = torch.compile(fn, backend="mlir_sym", dynamic=True)
    errs = []
    for L in (8, 11, 40):
        a = mk(L)
        with torch.no_grad():
            errs.append((f(*a) - fn(*a)).abs().max().item())
    print(fn.__name__, ["%.2g" % e for e in errs], flush=True)
