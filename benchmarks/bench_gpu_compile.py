"""Compile time of the GPU path, measured on the CPU: what mlir_sym adds to Dynamo + AOTAutograd capture.

Everything the GPU backend does before touching a device runs on the CPU (import, torch-to-linalg,
sym-lower-to-nvvm, host program, PTX with llvmlite), so this runs anywhere. For GPT-2, BERT and T5 from
configs (4 layers, hidden 256, random weights, as in ../shared/gpu/gpu_reference.py), with dynamic
sequence length, in one process:
  capture : first call with backend="aot_eager" (Dynamo + AOTAutograd, nothing compiled): the floor;
  cold    : our GPU code generation for every graph, PTX disk cache empty;
  warm    : the same again in a fresh Dynamo with the disk caches filled (generated code, PTX): what a
            second process adds;
and the kernels: launched kernels vs distinct kernels compiled (identical layers share PTX).
Not measured here: assembling the PTX with ptxas (codegen/cubin.py, about 0.45 s for GPT-2's modules
in parallel on the H100 host; the driver's JIT took 2-2.8 s one module at a time) and loading it, and
inductor, which needs a GPU (bench_hf_gpu.py measures them on one). `MLIR_SYM_PASS_TIMING=1` adds
MLIR's per-pass time report of each pipeline on stderr.

    python benchmarks/bench_gpu_compile.py [--models gpt2,bert,t5] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch._dynamo
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from mlir_sym import timing
from mlir_sym.artifact_cache import shape_env_of
from mlir_sym.backend import _decompositions, prepare_for_aot
from mlir_sym.capture import CompileStats, check_supported, variant_specs
from mlir_sym.gpu_compile import codegen_variant
from mlir_sym.importer import import_graph

MODELS = ("gpt2", "bert", "t5")


def make_model(name: str):
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, T5Config, T5Model

    if name == "llama":  # not in the reference set: RMSNorm, rotary embeddings, SiLU-gated MLP, grouped KV heads
        from transformers import LlamaConfig, LlamaForCausalLM

        return LlamaForCausalLM(LlamaConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                                            num_key_value_heads=2, intermediate_size=688, vocab_size=8000,
                                            max_position_embeddings=1024))
    if name == "gpt2":
        return GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=8000, n_positions=1024))
    if name == "bert":
        return BertModel(BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                                    intermediate_size=1024, vocab_size=8000))
    return T5Model(T5Config(num_layers=4, d_model=256, num_heads=4, d_ff=1024, d_kv=64, vocab_size=8000))


def run_once(model, name: str, backend, length: int = 37) -> float:
    torch._dynamo.reset()
    cm = torch.compile(model, backend=backend, dynamic=True)
    ids = torch.randint(0, 8000, (2, length))
    kw = dict(input_ids=ids)
    if name == "t5":
        kw["decoder_input_ids"] = ids[:, : max(2, length // 2)]
    t0 = time.perf_counter()
    with torch.no_grad():
        cm(**kw)
    return time.perf_counter() - t0


class GpuCodegenBackend:
    """Dynamo + AOTAutograd as the real backend does, then our GPU code generation for each graph; the
    graph itself runs eagerly (nothing is loaded on a device)."""

    def __init__(self) -> None:
        self.stats = CompileStats()
        self.graphs = 0
        self.codegen_s = 0.0

    def compile(self, gm, example_inputs):
        with timing.gc_paused():  # as the backend compiles
            return self._compile(gm)

    def _compile(self, gm):
        t0 = time.perf_counter()
        ig = import_graph(gm, target="gpu")
        check_supported(ig)
        self.stats.import_s += time.perf_counter() - t0
        for spec in variant_specs(ig, (), False):
            codegen_variant(ig, "main", spec, self.stats)
        self.codegen_s += time.perf_counter() - t0
        self.graphs += 1
        return make_boxed_func(gm.forward)

    def backend(self):
        aot = aot_autograd(fw_compiler=self.compile, inference_compiler=self.compile,
                           decompositions=_decompositions(), keep_inference_input_mutations=False)

        def be(gm, example_inputs, **kw):
            prepare_for_aot(gm, shape_env_of(gm, example_inputs))  # as the backend does
            return aot(gm, example_inputs, **kw)

        return be


def measure(name: str) -> dict:
    model = make_model(name).eval()
    capture = run_once(model, name, "aot_eager")
    row = {"model": name, "capture_s": round(capture, 2)}
    with tempfile.TemporaryDirectory() as cache:
        os.environ["MLIR_SYM_CACHE_DIR"] = cache
        for phase in ("cold", "warm"):
            be = GpuCodegenBackend()
            total = run_once(model, name, be.backend())
            s = be.stats
            row.update({
                f"{phase}_first_call_s": round(total, 2),
                f"{phase}_added_s": round(be.codegen_s, 2),
                f"{phase}_import_s": round(s.import_s, 2),
                f"{phase}_lower_s": round(s.lower_s, 2),
                f"{phase}_ptx_s": round(s.extra.get("ptx_s", 0.0), 2),
            })
            if phase == "cold":
                row["graphs"] = be.graphs
                row["kernels"] = s.extra.get("kernels", 0)
                row["kernels_compiled"] = s.extra.get("kernels_compiled", 0)
            else:
                row["warm_code_cache_hits"] = s.extra.get("code_cache_hits", 0)
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--json", default="")
    args = p.parse_args(argv)
    torch.manual_seed(0)
    rows = [measure(m) for m in args.models.split(",")]
    print(f"`python {' '.join(sys.argv)}` (CPU: {os.cpu_count()} cores; GPU code generation without a GPU)\n")
    cols = ["model", "graphs", "capture_s", "cold_first_call_s", "cold_added_s", "cold_lower_s", "cold_ptx_s",
            "warm_added_s", "warm_ptx_s", "kernels", "kernels_compiled"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    print(f"\nmedian added (cold) / capture: "
          f"{statistics.median(r['cold_added_s'] / r['capture_s'] for r in rows):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
