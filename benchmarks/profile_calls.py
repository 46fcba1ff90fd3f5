"""Per-call profile on a GPU: softmax fp32 [4096, 1024] compiled on that size (CUDA-event time per call,
backend counters, host program, cProfile), then the tiny graph through Dynamo and its artifact alone.

    python benchmarks/profile_calls.py   (CUDA only)
"""
import cProfile, io, os, pstats, sys, time, torch, torch._dynamo
import mlir_sym.backend as mb
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu import bench_ms

def prof(fn, n, title, k=22):
    pr = cProfile.Profile(); pr.enable()
    for _ in range(n): fn()
    torch.cuda.synchronize(); pr.disable()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(k)
    print("-----", title); print(s.getvalue()[-6000:], flush=True)

def softmax(x): return torch.softmax(x, dim=-1)
def tiny(x): return (x * 2 + 1).relu()
for dt in (torch.float32,):
    torch._dynamo.reset(); mb.stats.reset()
    cf = torch.compile(softmax, backend="mlir_sym", dynamic=True)
    x = torch.randn(4096, 1024, device="cuda", dtype=dt)
    cf(x); torch.cuda.synchronize()
    ms = bench_ms(lambda: cf(x))
    print("softmax", dt, "event ms/call", ms, "stats", mb.stats, flush=True)
    art = list(mb._CACHE.values())[-1]
    print(art.gpu["host_source"])
    prof(lambda: cf(x), 200, "softmax 4096x1024 compiled call")
    y = torch.randn(8192, 4096, device="cuda", dtype=dt)
    print("8192x4096 event ms", bench_ms(lambda: cf(y)), "then 4096x1024 again", bench_ms(lambda: cf(x)), mb.stats, flush=True)
torch._dynamo.reset()
cf = torch.compile(tiny, backend="mlir_sym", dynamic=True)
x = torch.randn(64, device="cuda"); cf(torch.randn(65, device="cuda")); cf(x)
prof(lambda: cf(x), 3000, "tiny compiled call")
art = list(mb._CACHE.values())[-1]
seen = []
read = art.read_sources
art.read_sources = lambda flat: (seen.append(list(flat)), read(flat))[1]
cf(x); art.read_sources = read
flat = seen[-1]
prof(lambda: art(flat), 3000, "tiny artifact alone")
