"""Per-call time of small HuggingFace models on a GPU at short lengths (where a call is launch- and
host-bound): eager, inductor (dynamic=True), mlir_sym, and mlir_sym with CUDA graphs per input size
(`config.cuda_graphs`), in one process, medians of back-to-back calls, ratios to inductor.

Models from configs as in gpu_reference.py (4 layers, hidden 256, random weights; needs
`pip install transformers`). Each compiled model is first called at every length (compiles, and
for CUDA graphs, each size's capture), then timed per length. The outputs are checked against eager
(`max_abs_err`); with `--dtype bfloat16` (or float16) also against the float32 model with the same
weights (`err_vs_fp32`, eager's own in the `eager` row): how much a backend's half-precision
numerics add to eager's.

    python benchmarks/bench_hf_calls.py [--models gpt2,bert] [--lengths 8,32,128] [--batch 1] [--calls 200]
        [--dtype float32|bfloat16|float16] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("MLIR_SYM_ARTIFACT_CACHE", "0")
import torch  # noqa: E402
import torch._dynamo  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def per_call_us(fn, calls: int, rounds: int = 5) -> float:
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="gpt2,bert")
    p.add_argument("--lengths", default="8,32,128")
    p.add_argument("--batch", type=int, default=1, help="rows of input ids (above 1: a dynamic batch)")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--backends", default="eager,inductor,mlir_sym,mlir_sym_graphs")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--json", default="")
    a = p.parse_args()
    from bench_gpu_compile import make_model

    import mlir_sym.backend as mb

    dev = "cuda"
    lengths = [int(v) for v in a.lengths.split(",")]
    rows = []
    for name in a.models.split(","):
        dtype = getattr(torch, a.dtype)
        torch.manual_seed(0)
        model = make_model(name).to(dev).eval()
        ids = {L: torch.randint(0, 8000, (a.batch, L), device=dev) for L in lengths}

        def out(o):
            return o.logits if hasattr(o, "logits") and o.logits is not None else o.last_hidden_state

        with torch.no_grad():
            want32 = {L: out(model(input_ids=ids[L])).float() for L in lengths}
            model = model.to(dtype)
            want = {L: out(model(input_ids=ids[L])) for L in lengths}
            for be in a.backends.split(","):
                torch._dynamo.reset()
                mb._CACHE.clear()
                if be == "eager":
                    f = model
                else:
                    mb.config.cuda_graphs = be == "mlir_sym_graphs"
                    f = torch.compile(model, backend="mlir_sym" if be.startswith("mlir_sym") else be, dynamic=True)
                t0 = time.perf_counter()
                for _ in range(3):  # compile; for CUDA graphs, each size's first call and its capture
                    for L in lengths:
                        f(input_ids=ids[L])
                torch.cuda.synchronize()
                warm_s = time.perf_counter() - t0
                for L in lengths:
                    got = out(f(input_ids=ids[L]))
                    err = (got.float() - want[L].float()).abs().max().item()
                    err32 = (got.float() - want32[L]).abs().max().item()
                    mean32 = (got.float() - want32[L]).abs().mean().item()
                    us = per_call_us(lambda: f(input_ids=ids[L]), a.calls)
                    graphs = [x.graphs for x in mb._CACHE.values() if getattr(x, "graphs", None) is not None]
                    row = {"model": name, "length": L, "backend": be, "dtype": a.dtype, "us": us, "max_abs_err": err,
                           "err_vs_fp32": err32, "mean_err_vs_fp32": mean32,
                           "compile_and_warm_s": warm_s,
                           "graph_captures": sum(g.captures for g in graphs) if graphs else 0}
                    rows.append(row)
                    print(json.dumps({k: (float(f"{v:.2e}") if "err" in k else round(v, 3) if isinstance(v, float)
                                      else v) for k, v in row.items()}), flush=True)
        mb.config.cuda_graphs = False
    print(f"\n{'model':6} {'length':>6} " + " ".join(f"{b:>16}" for b in a.backends.split(",")) + "   (us/call; ratio to inductor)")
    for name in a.models.split(","):
        for L in lengths:
            r = {x["backend"]: x["us"] for x in rows if x["model"] == name and x["length"] == L}
            ind = r.get("inductor")
            cells = [f"{r[b]:8.1f} ({r[b] / ind:.2f})" if ind and b in r else f"{r.get(b, float('nan')):16.1f}"
                     for b in a.backends.split(",")]
            print(f"{name:6} {L:6d} " + " ".join(f"{c:>16}" for c in cells))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
