"""Convolutional blocks on the GPU: eager, inductor (dynamic=True) and mlir_sym (dynamic=True: its
convolutions are torch.convolution calls, sym-gpu-library-convolutions) side by side in one process;
`mlir_sym_loops` is mlir_sym without that pass (each convolution a kernel of ours, a thread per
output element), at the smallest size only.

Graphs: a ResNet basic block (two 3x3 convolutions with batch norm, ReLU and the residual add) and
a depthwise-separable block (3x3 depthwise, 1x1 pointwise, batch norm, ReLU6), in eval mode, at
several batch and image sizes, all served by one compiled graph per backend (the table says how
many compilations mlir_sym took). Per row: wall µs a call (CUDA events around back-to-back calls,
median of rounds), GPU µs a call (torch.profiler) with the kernels a call, and the ratios to
inductor; outputs checked against eager.

    python benchmarks/bench_conv.py [--dtype float32|bfloat16] [--json out.json] [--kernels] [--shapes 32x64x28x28]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

import torch
import torch._dynamo
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu import compile_count  # noqa: E402
from bench_overhead import gpu_kernels, kernel_times  # noqa: E402
from bench_wall_host import wall_and_host_us  # noqa: E402

DEV = "cuda"
LOOPS = "mlir_sym_loops"
# (batch, channels, height, width)
SIZES = {"resnet_block": [(1, 64, 56, 56), (8, 64, 56, 56), (32, 64, 28, 28), (5, 64, 37, 41)],
         "depthwise_separable": [(1, 64, 56, 56), (8, 64, 56, 56), (32, 64, 28, 28), (5, 64, 37, 41)]}


class ResNetBlock(nn.Module):
    def __init__(self, c: int = 64) -> None:
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + x)


class DepthwiseSeparable(nn.Module):
    def __init__(self, c: int = 64, out: int = 128) -> None:
        super().__init__()
        self.dw, self.pw, self.bn = nn.Conv2d(c, c, 3, padding=1, groups=c), nn.Conv2d(c, out, 1), nn.BatchNorm2d(out)

    def forward(self, x):
        return torch.nn.functional.relu6(self.bn(self.pw(self.dw(x))))


MODELS = {"resnet_block": ResNetBlock, "depthwise_separable": DepthwiseSeparable}


@contextlib.contextmanager
def pipeline_for(backend: str):
    """mlir_sym_loops: sym-lower-to-nvvm without sym-gpu-library-convolutions while it compiles and runs."""
    from mlir_sym import pipelines

    text = pipelines.PIPELINES["sym-lower-to-nvvm"]
    if backend == LOOPS:
        pipelines.PIPELINES["sym-lower-to-nvvm"] = text.replace(" sym-gpu-library-convolutions,", "")
    try:
        yield
    finally:
        pipelines.PIPELINES["sym-lower-to-nvvm"] = text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default=f"eager,inductor,mlir_sym,{LOOPS}")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--json", default="")
    p.add_argument("--kernels", action="store_true", help="also list each row's kernels (name: GPU µs a call)")
    p.add_argument("--shapes", default="", help="only these sizes, e.g. 32x64x28x28,1x64x56x56")
    a = p.parse_args()
    dtype = getattr(torch, a.dtype)
    rows, compiled = [], {}
    for name in a.models.split(","):
        torch.manual_seed(0)
        model = MODELS[name]().to(DEV, dtype).eval()
        for be in a.backends.split(","):
            torch._dynamo.reset()
            fn = model if be == "eager" else torch.compile(model, backend="mlir_sym" if be == LOOPS else be, dynamic=True)
            sizes = SIZES[name][:1] if be == LOOPS else SIZES[name]
            if a.shapes:
                sizes = [s for s in sizes if "x".join(map(str, s)) in a.shapes.split(",")]
            before = compile_count("mlir_sym") or 0
            with pipeline_for(be), torch.no_grad():
                for shape in sizes:
                    x = torch.randn(*shape, device=DEV, dtype=dtype)
                    want = model(x).float()
                    got = fn(x).float()
                    tol = 2e-2 if dtype != torch.float32 else 1e-3
                    ok = bool(torch.allclose(got, want, atol=tol, rtol=tol))
                    wall, host = wall_and_host_us(lambda: fn(x), a.iters)
                    k, gpu = gpu_kernels(lambda: fn(x), a.iters)
                    rows.append({"model": name, "backend": be, "shape": list(shape), "wall_us": round(wall, 1),
                                 "host_us": round(host, 1), "gpu_us": round(gpu, 1), "kernels": k, "ok": ok})
                    if a.kernels:
                        rows[-1]["kernel_us"] = {n: round(t, 2) for n, t in kernel_times(lambda: fn(x), a.iters).items()}
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            if be == "mlir_sym":
                compiled[name] = (compile_count(be) or 0) - before
    print(f"`python benchmarks/bench_conv.py {' '.join(sys.argv[1:])}` on {torch.cuda.get_device_name()} "
          f"(torch {torch.__version__}), {a.dtype}; µs a call, ratio = mlir_sym / inductor\n")
    print("| model | shape | backend | wall µs | GPU µs (kernels) | wall ratio | GPU ratio | matches |")
    print("|---|---|---|---|---|---|---|---|")
    base = {(r["model"], tuple(r["shape"])): r for r in rows if r["backend"] == "inductor"}
    for r in rows:
        b = base.get((r["model"], tuple(r["shape"])))
        ratio = (f"{r['wall_us'] / b['wall_us']:.2f} | {r['gpu_us'] / b['gpu_us']:.2f}"
                 if b and r["backend"] != "inductor" else " | ")
        print(f"| {r['model']} | {'x'.join(map(str, r['shape']))} | {r['backend']} | {r['wall_us']} | "
              f"{r['gpu_us']} ({r['kernels']:g}) | {ratio} | {r['ok']} |")
    for name, n in compiled.items():
        print(f"# {name}: mlir_sym compiled {n} time(s) for {len(SIZES[name])} sizes")
    for r in rows if a.kernels else ():
        print(f"\n{r['model']} {'x'.join(map(str, r['shape']))} {r['backend']}:")
        for n, t in r["kernel_us"].items():
            print(f"  {t:8.2f} µs  {n[:150]}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
