"""Training steps on a GPU: forward + backward of a causal language model (test/python/training.py's
TinyLM, sized up) at dynamic lengths, eager against inductor and mlir_sym (dynamic=True) in one
process. Per backend: the first step's time (compilation), the Dynamo graphs compiled (1: no
recompile over the lengths), per length the median wall time of a step, its GPU time and kernels
(torch.profiler's CUDA activity: wall above GPU time is the host's), and the largest gradient
difference from eager's; `--top N`: each backend's N longest kernels at the last length.

    python benchmarks/bench_training.py [--d 256] [--layers 4] [--batch 8] [--lengths 64,128,256]
        [--backends eager,inductor,mlir_sym] [--steps 20] [--dtype float32]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch._dynamo

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
sys.path.insert(0, HERE)
from training import TinyLM  # noqa: E402


def _step(model, ids, labels):
    model.zero_grad(set_to_none=True)
    loss = model(ids, labels)
    loss.backward()
    return loss


def add_model_args(ap: argparse.ArgumentParser) -> None:
    """The model's and the batch's sizes (profile_training.py takes the same)."""
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])


def main() -> None:
    ap = argparse.ArgumentParser()
    add_model_args(ap)
    ap.add_argument("--lengths", default="64,128,256,100")
    ap.add_argument("--backends", default="eager,inductor,mlir_sym")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--json", default="")
    ap.add_argument("--device", default="cuda", help="cuda (timings that count); cpu for a smoke test")
    ap.add_argument("--top", type=int, default=0, help="print each backend's N longest kernels at the last length")
    a = ap.parse_args()
    dev = a.device
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    dtype = getattr(torch, a.dtype)
    lengths = [int(x) for x in a.lengths.split(",")]
    torch.manual_seed(0)
    base = TinyLM(vocab=a.vocab, d=a.d, heads=a.d // 64, layers=a.layers).to(dev, dtype)
    base.pos = torch.nn.Embedding(max(lengths), a.d).to(dev, dtype)
    g = torch.Generator().manual_seed(1)
    data = {t: (torch.randint(0, a.vocab, (a.batch, t), generator=g).to(dev),
                torch.randint(0, a.vocab, (a.batch, t), generator=g).to(dev)) for t in lengths}
    ref_grads = {}
    rows = []
    for be in a.backends.split(","):
        torch._dynamo.reset()
        model = TinyLM(vocab=a.vocab, d=a.d, heads=a.d // 64, layers=a.layers).to(dev, dtype)
        model.pos = torch.nn.Embedding(max(lengths), a.d).to(dev, dtype)
        model.load_state_dict(base.state_dict())
        run = model if be == "eager" else torch.compile(model, backend=be, dynamic=True)
        from torch._dynamo.utils import counters
        counters.clear()
        sync()
        t0 = time.perf_counter()
        _step(run, *data[lengths[0]])
        sync()
        first = time.perf_counter() - t0
        row = {"backend": be, "dtype": a.dtype, "first_step_s": round(first, 2), "per_length": {}}
        for t in lengths:
            _step(run, *data[t])  # warm (a new length)
            grads = [p.grad.float().clone() for p in model.parameters()]
            if be == "eager":
                ref_grads[t] = grads
            # against eager's gradients when eager ran first (--backends eager,...); else None
            err = max((x - y).abs().max().item() for x, y in zip(grads, ref_grads[t])) if t in ref_grads else None
            times = []
            for _ in range(a.steps):
                sync()
                t1 = time.perf_counter()
                _step(run, *data[t])
                sync()
                times.append((time.perf_counter() - t1) * 1e6)
            row["per_length"][t] = {"us": round(statistics.median(times), 1), "max_grad_diff": err}
            if dev == "cuda":
                from bench_overhead import gpu_kernels, kernel_times

                k, gpu = gpu_kernels(lambda: _step(run, *data[t]), 5)
                row["per_length"][t].update({"gpu_us": round(gpu, 1), "kernels": k})
                if a.top and t == lengths[-1]:
                    top = list(kernel_times(lambda: _step(run, *data[t]), 5).items())[:a.top]
                    row["top_kernels"] = [(name[:80], round(us, 1)) for name, us in top]
        row["graphs"] = counters["stats"].get("unique_graphs", 0)  # Dynamo graphs compiled (1: no recompile)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\n`python benchmarks/bench_training.py {' '.join(sys.argv[1:])}` on {torch.cuda.get_device_name() if dev == 'cuda' else 'CPU'} "
          f"(torch {torch.__version__}), batch {a.batch}, d {a.d}, {a.layers} layers, vocab {a.vocab}, {a.dtype}: "
          "median µs per training step (ratio to inductor), its GPU time, largest gradient difference from eager\n")
    ind = next((r for r in rows if r["backend"] == "inductor"), None)
    print("| backend | first step s | graphs | " + " | ".join(f"length {t}" for t in lengths) + " |")
    print("|---|---|---|" + "---|" * len(lengths))
    for r in rows:
        cells = []
        for t in lengths:
            c = r["per_length"][t]
            ratio = f" ({c['us'] / ind['per_length'][t]['us']:.2f})" if ind else ""
            gpu = f", GPU {c['gpu_us']:.0f} ({c['kernels']:.0f} kernels)" if "gpu_us" in c else ""
            diff = "grads not compared" if c["max_grad_diff"] is None else f"{c['max_grad_diff']:.1e}"
            cells.append(f"{c['us']:.0f}{ratio}{gpu}, {diff}")
        print(f"| {r['backend']} | {r['first_step_s']} | {r['graphs']} | " + " | ".join(cells) + " |")
    for r in rows:
        for name, us in r.get("top_kernels", []):
            print(f"  {r['backend']}: {us:8.1f} µs  {name}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
