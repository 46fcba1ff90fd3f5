import os, sys, torch
DEV = "cuda"; B = int(os.environ.get("B", "1"))
sys.path.insert(0, "benchmarks")
from bench_gpu_compile import make_model
torch.manual_seed(0)
m = make_model("gpt2").eval().to(DEV)
ids = torch.randint(0, 8000, (B, 8), device=DEV)
with torch.no_grad():
    want = m(input_ids=ids).logits
    f = torch.compile(m, backend="mlir_sym", dynamic=True)
    for L in (8, 11):
        ids = torch.randint(0, 8000, (B, L), device=DEV)
        got = f(input_ids=ids).logits
        print(L, (got - m(input_ids=ids).logits).abs().max().item())
