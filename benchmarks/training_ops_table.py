"""On a GPU: torch.profiler's table of a compiled training step's ops and kernels, by GPU time.

bench_training.py's TinyLM step (batch 8, d 256, 4 layers, vocab 8192) compiled by each backend with
CUDA graphs off (mlir_sym's launches are then the host programs' own), three warm steps, then five
profiled ones. The table names PyTorch ops (`aten::clone`, `aten::_efficient_attention_backward`)
with the kernels they launched, so copies and library calls are told apart; kernels of ours appear
by name (`main_kernel_N` of the forward and the backward modules share names: profile_training.py
tells them apart by host-program statement).

    python benchmarks/training_ops_table.py bfloat16 256 mlir_sym[,inductor]
"""
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
os.environ["MLIR_SYM_CUDA_GRAPHS"] = "0"
from bench_training import _step  # noqa: E402
from training import TinyLM  # noqa: E402

if not torch.cuda.is_available():
    sys.exit("training_ops_table.py profiles CUDA kernels: it needs a GPU")
dt = getattr(torch, sys.argv[1])
L = int(sys.argv[2])
g = torch.Generator().manual_seed(1)
ids, labels = (torch.randint(0, 8192, (8, L), generator=g).cuda() for _ in range(2))
for be in sys.argv[3].split(","):
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = TinyLM(vocab=8192, d=256, heads=4, layers=4).to("cuda", dt)
    m.pos = torch.nn.Embedding(L, 256).to("cuda", dt)
    run = torch.compile(m, backend=be, dynamic=True)
    for _ in range(3):
        _step(run, ids, labels)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            _step(run, ids, labels)
        torch.cuda.synchronize()
    print(f"\n#### {be} {dt} L{L} (5 steps)")
    print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=60, max_name_column_width=140))
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=40, max_name_column_width=100))
