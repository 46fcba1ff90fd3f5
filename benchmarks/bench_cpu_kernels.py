"""CPU kernels of a decode step, eager beside, in one process: a linear layer's product at a few
rows against a [8000, 256] weight (a language model's head: dot products over the weight's rows),
GPT-2's Conv1D (`addmm` with a [256, 768] weight as [in, out]),
and float32 exp, tanh, sigmoid, tanh-GELU, log, erf and erf-GELU over 1.3M elements. Median microseconds per call of
eager and of torch.compile(backend="mlir_sym", dynamic=True), and their ratio.

`--without PASSES` takes passes out of the CPU pipeline (`linalg-to-llvm` and its lowering) for the
whole run, to measure what they bring: e.g. `--without sym-cpu-accumulators,sym-cpu-vector-math`
(a pass with options is named as it appears there: `sym-fold-transposes{arguments=1}`). The
artifact cache is off, so every graph is compiled with the pipeline of the run.

    python benchmarks/bench_cpu_kernels.py [--without P1,P2] [--repeat 50] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ["MLIR_SYM_ARTIFACT_CACHE"] = "0"

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def cases() -> list[tuple[str, object, list[torch.Tensor]]]:
    torch.manual_seed(0)
    w = torch.randn(8000, 256)
    x = torch.randn(5 * 64 * 4096)

    def linear(a):
        return F.linear(a, w)

    def gelu_tanh(a):
        return F.gelu(a, approximate="tanh")

    out = [(f"linear [{m}, 256] x [8000, 256]^T", linear, [torch.randn(m, 256)]) for m in (1, 8, 32)]
    w2, b2 = torch.randn(256, 768), torch.randn(768)

    def conv1d(a):  # GPT-2's Conv1D: addmm with the weight as [in, out]
        return torch.addmm(b2, a, w2)

    out += [(f"addmm [{m}, 256] x [256, 768]", conv1d, [torch.randn(m, 256)]) for m in (8, 32)]
    out += [(f"{fn.__name__} [{x.numel()}]", fn, [x]) for fn in (torch.exp, torch.tanh, torch.sigmoid, gelu_tanh)]
    out.append((f"log [{x.numel()}]", torch.log, [x.abs() + 1e-3]))
    out.append((f"erf [{x.numel()}]", torch.erf, [x]))
    out.append((f"gelu (erf) [{x.numel()}]", F.gelu, [x]))
    return out


def median_us(fn, args, repeat: int) -> float:
    for _ in range(3):
        fn(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--without", default="", help="passes taken out of the CPU pipeline, comma-separated")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--threads", type=int, default=1, help="torch's CPU threads (eager's kernels; ours use one)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    from mlir_sym import pipelines

    for name in filter(None, a.without.split(",")):
        found = False
        for key in ("linalg-to-llvm", "gpu-emulated"):
            text = pipelines.PIPELINES[key]
            if f" {name}," in text:
                pipelines.PIPELINES[key] = text.replace(f" {name},", "", 1)
                found = True
        if not found:
            raise SystemExit(f"{name} is not in the CPU pipeline: {pipelines.PIPELINES['linalg-to-llvm']}")
    rows = []
    for label, fn, args in cases():
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
        small = [t[:2] if t.dim() == 2 else t[:1000] for t in args]  # a first size: the graph is dynamic
        compiled(*small)
        got, want = compiled(*args), fn(*args)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)
        eager, ours = median_us(fn, args, a.repeat), median_us(compiled, args, a.repeat)
        rows.append((label, eager, ours))
        print(f"{label}: eager {eager:.0f} us, mlir_sym {ours:.0f} us", flush=True)
    print(f"\nCommand: `python benchmarks/bench_cpu_kernels.py{' --without ' + a.without if a.without else ''}`  ")
    print(f"torch {torch.__version__}, {a.threads} thread(s) for eager; median µs per call of {a.repeat}\n")
    print("| case | eager µs | mlir_sym µs | mlir_sym / eager |")
    print("|---|---|---|---|")
    for label, eager, ours in rows:
        print(f"| {label} | {eager:.0f} | {ours:.0f} | {ours / eager:.2f}x |")


if __name__ == "__main__":
    main()
