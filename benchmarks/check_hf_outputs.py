"""HuggingFace models from configs (bench_gpu_compile.make_model: GPT-2, BERT, T5, Llama, 4 layers, hidden 256)
compiled with backend="mlir_sym", dynamic=True, against eager on the same inputs: the largest
difference of the outputs per model, dtype, batch and length, and the compilations (0 recompiles
expected past the first batch-2 size). On the GPU the whole model runs through our kernels and
library calls, which the unit tests cover op by op; this checks that they compose.

    python benchmarks/check_hf_outputs.py [--models gpt2,bert,t5,llama] [--dtypes float32,bfloat16] [--device cuda]
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu_compile import make_model  # noqa: E402

TOL = {"float32": 2e-3, "bfloat16": 0.1}  # of the outputs' scale (max |eager|)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="gpt2,bert,t5,llama")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--sizes", default="1x17,2x32,2x45,3x9", help="batch x length, comma separated")
    a = p.parse_args()
    import mlir_sym.backend as mb

    bad = 0
    print("| model | dtype | batch x length | max abs diff | max abs eager | ok |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in a.models.split(","):
        for dt in a.dtypes.split(","):
            torch.manual_seed(0)
            model = make_model(name).to(a.device, getattr(torch, dt)).eval()
            torch._dynamo.reset()
            before = mb.stats.compiles
            cm = torch.compile(model, backend="mlir_sym", dynamic=True)
            for size in a.sizes.split(","):
                b, n = (int(x) for x in size.split("x"))
                ids = torch.randint(0, 8000, (b, n), device=a.device)
                kw = dict(input_ids=ids)
                if name == "t5":
                    kw["decoder_input_ids"] = ids[:, : max(2, n // 2)]
                with torch.no_grad():
                    want = model(**kw)[0].float()
                    got = cm(**kw)[0].float()
                diff = (got - want).abs().max().item()
                scale = want.abs().max().item()
                ok = diff <= TOL[dt] * max(scale, 1.0)
                bad += not ok
                print(f"| {name} | {dt} | {b} x {n} | {diff:.3g} | {scale:.3g} | {ok} |", flush=True)
            print(f"# {name} {dt}: {mb.stats.compiles - before} compilation(s) for {len(a.sizes.split(','))} sizes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
