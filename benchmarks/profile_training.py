"""On a GPU: where a compiled training step's GPU time goes, by host-program statement.

bench_training.py's TinyLM step (forward + backward) compiled by mlir_sym with CUDA graphs off, so
that each kernel is launched by its host program's statement. Every launch and library call is
timed by CUDA events named after the statement that made it (its host program, line and text), the
step queued behind a spinning kernel so that its work runs back to back; averaged over `--steps`.
Kernel names alone do not tell the forward's `main_kernel_3` from the backward's; the statement does.
Inductor's and eager's kernels by name are printed beside for comparison (`--baselines`).

    python benchmarks/profile_training.py [--length 256] [--top 40] [--baselines inductor]
"""
from __future__ import annotations

import argparse
import linecache
import os
import sys

import torch
import torch._dynamo

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
sys.path.insert(0, HERE)
from training import TinyLM  # noqa: E402

# the host programs' calls (torch_einsum is library_einsum's fallback: timed within its caller's row)
_WRAPPED = ("launch", "library_einsum", "library_attention", "library_conv", "library_sort", "library_scan",
            "library_scatter", "library_sdpa")


def _label(what: str) -> str:
    f = sys._getframe(2)  # the host program's frame (the wrapper, then the method)
    text = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return f"{f.f_code.co_filename}:{f.f_lineno} {what}: {text[:110]}"


_RECORDS: list = []  # (label, start event, end event) of the calls being timed


def instrument() -> None:
    """Wrap the runtime's launch and library methods in CUDA events named by their statement."""
    from mlir_sym.runtime.cuda import Runtime

    def timed(label: str, fn, *args, **kw):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        try:
            return fn(*args, **kw)
        finally:
            e1.record()
            _RECORDS.append((label, e0, e1))

    for name in _WRAPPED:
        fn = getattr(Runtime, name, None)
        if fn is None:
            continue
        if isinstance(Runtime.__dict__.get(name), staticmethod):
            setattr(Runtime, name, staticmethod(lambda *a, fn=fn, name=name, **kw: timed(_label(name), fn, *a, **kw)))
        else:
            setattr(Runtime, name, lambda self, *a, fn=fn, name=name, **kw: timed(
                _label(a[0].name if name == "launch" else name), fn, self, *a, **kw))


def profile(step, steps: int) -> tuple[dict[str, float], float]:
    """GPU µs a step by statement, and the whole step's GPU span. Each step is queued behind a
    spinning kernel, so that the GPU runs its work back to back (the events time kernels, not the
    host's gaps between them)."""
    rows: dict[str, float] = {}
    span = 0.0
    for _ in range(steps):
        torch.cuda.synchronize()
        _RECORDS.clear()
        torch.cuda._sleep(200_000_000)  # about 0.1 s: more than the host needs to queue a step
        first, last = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        first.record()
        step()
        last.record()
        torch.cuda.synchronize()
        span += first.elapsed_time(last) * 1e3 / steps
        for label, e0, e1 in _RECORDS:
            rows[label] = rows.get(label, 0.0) + e0.elapsed_time(e1) * 1e3 / steps
    rows["(the rest of the step: kernels outside host-program statements)"] = span - sum(rows.values())
    return dict(sorted(rows.items(), key=lambda kv: -kv[1])), span


def kernels_by_name(step, steps: int) -> tuple[dict[str, float], float]:
    from bench_overhead import kernel_times

    rows = kernel_times(step, steps)
    return rows, sum(rows.values())


def main() -> None:
    from bench_training import add_model_args

    ap = argparse.ArgumentParser()
    add_model_args(ap)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--baselines", default="inductor")
    ap.add_argument("--dump", default="", help="a folder to write the host programs into")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("profile_training.py times CUDA kernels: it needs a GPU")
    os.environ["MLIR_SYM_CUDA_GRAPHS"] = "0"
    from bench_training import _step

    g = torch.Generator().manual_seed(1)
    ids, labels = (torch.randint(0, a.vocab, (a.batch, a.length), generator=g).cuda() for _ in range(2))
    for be in [b for b in a.baselines.split(",") if b] + ["mlir_sym"]:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = TinyLM(vocab=a.vocab, d=a.d, heads=a.d // 64, layers=a.layers).to("cuda", getattr(torch, a.dtype))
        model.pos = torch.nn.Embedding(a.length, a.d).to("cuda", getattr(torch, a.dtype))
        run = model if be == "eager" else torch.compile(model, backend=be, dynamic=True)
        for _ in range(2):
            _step(run, ids, labels)
        if be == "mlir_sym":
            instrument()
        if be == "mlir_sym":
            rows, total = profile(lambda: _step(run, ids, labels), a.steps)
            what = "GPU span of a step queued back to back (CUDA events), by host-program statement"
        else:
            rows, total = kernels_by_name(lambda: _step(run, ids, labels), a.steps)
            what = "GPU time of a step by kernel name (torch.profiler)"
        print(f"\n## {be}: length {a.length}, batch {a.batch}, d {a.d}, {a.layers} layers, vocab {a.vocab}, {a.dtype}: "
              f"{total:.0f} µs: {what} ({len(rows)} rows)")
        for k, us in list(rows.items())[:a.top]:
            print(f"{us:8.1f}  {k}")
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        for name, entry in list(linecache.cache.items()):
            if name.startswith("<mlir_sym host"):
                with open(os.path.join(a.dump, name.strip("<>").replace(" ", "_").replace("#", "") + ".py"), "w") as f:
                    f.writelines(entry[2])


if __name__ == "__main__":
    main()
