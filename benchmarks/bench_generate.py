"""Autoregressive decoding with a KV cache (HuggingFace `generate`, greedy): the dynamic-shape workload
where every step has a new past length. Causal LMs from configs (4 layers, hidden 256, random
weights), `model.forward` compiled with dynamic=True, each backend side by side in one process.

Per backend and model: the first `generate` (compile included; each backend gets a fresh
MLIR_SYM_CACHE_DIR unless `--warm`), then `--repeat` rounds of generates at several prompt lengths;
the decode time per token is (time of N new tokens - time of 1) / (N - 1) per round and length, its
median reported; "prefill" is the median time of a whole 1-token generate (HF's own work in it);
graphs compiled after the first generate (recompiles), and the generated tokens against eager's
(sequences equal / all).

    python benchmarks/bench_generate.py [--models gpt2,llama] [--dtype float32|bfloat16|amp]
        [--backends eager,inductor,mlir_sym] [--batch 1] [--prompts 32,17,45] [--new 48] [--repeat 5]
        [--passes 2] [--cache dynamic|static] [--warm] [--profile 16] [--json out.json]

`--cache static`: HF's static cache (`cache_implementation="static"`, the setup HF recommends for
torch.compile): the cache is preallocated at its largest length and written in place (an input
mutation), so every decode step has the same sizes and one CUDA graph serves them. Every row passes
`disable_compile=True`: on CUDA with a static cache HF otherwise compiles `__call__` itself (inductor,
mode="reduce-overhead", static shapes), which traces into the backend's compiled forward and serves
the decode steps of every row, eager's included. The backend `hf_compile` is that compile (what HF
users get by default).

`--dtype amp`: float32 weights under `torch.autocast(device, bfloat16)`. A backend `inductor_ro` is
inductor with mode="reduce-overhead" (CUDA graphs, recorded per size); `mlir_sym_nographs` is ours
with CUDA graphs off, `mlir_sym@N` ours with CUDA graphs for at most N sizes an artifact
(`cuda_graph_max_sizes`), `mlir_sym_copies` ours with input mutations (the static cache's writes) left to
AOTAutograd (a new cache computed and copied back, MLIR_SYM_INPLACE_MUTATIONS=0). `--passes 2` runs the whole backend sequence twice (Dynamo reset before each
backend; a second pass starts from warm disk caches): decode is bound by host time, which drifts on
a shared host, and the two passes show by how much.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

VOCAB = 8000


def make_model(name: str):
    import transformers as T

    torch.manual_seed(0)
    if name == "gpt2":
        cfg = T.GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=VOCAB, n_positions=1024)
        model = T.GPT2LMHeadModel(cfg)
    elif name == "llama":
        cfg = T.LlamaConfig(num_hidden_layers=4, hidden_size=256, intermediate_size=688, num_attention_heads=4,
                            num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=1024)
        model = T.LlamaForCausalLM(cfg)
    else:
        raise SystemExit(f"unknown model {name} (gpt2, llama)")
    model.generation_config.eos_token_id = None  # every generate makes exactly the tokens asked for
    model.generation_config.pad_token_id = 0
    return model.eval()


def compiled_copy(model, backend: str):
    import copy

    m = copy.deepcopy(model)
    if backend.startswith("mlir_sym"):
        from mlir_sym import backend as mb

        mb._CACHE.clear()  # this process's artifacts (and their CUDA graphs): each row compiles its own
    if backend.startswith("mlir_sym@"):  # CUDA graphs for at most N sizes an artifact (config set by main)
        m.forward = torch.compile(m.forward, backend="mlir_sym", dynamic=True)
    elif backend == "mlir_sym_copies":  # input mutations left to AOTAutograd's copies (config set by main)
        m.forward = torch.compile(m.forward, backend="mlir_sym", dynamic=True)
    elif backend == "mlir_sym_nographs":
        m.forward = torch.compile(m.forward, backend="mlir_sym", dynamic=True)
    elif backend == "inductor_ro":
        m.forward = torch.compile(m.forward, backend="inductor", mode="reduce-overhead", dynamic=True)
    elif backend not in ("eager", "hf_compile"):
        m.forward = torch.compile(m.forward, backend=backend, dynamic=True)
    return m


def main() -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="gpt2,llama")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "amp"])
    p.add_argument("--backends", default="eager,inductor,mlir_sym")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompts", default="32,17,45")
    p.add_argument("--new", type=int, default=48)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--passes", type=int, default=1)
    p.add_argument("--cache", default="dynamic", choices=["dynamic", "static"],
                   help="HF's KV cache: dynamic (grows a step: a new past length each step) or static "
                        "(cache_implementation='static': preallocated, written in place; decode steps of one size)")
    p.add_argument("--warm", action="store_true", help="keep MLIR_SYM_CACHE_DIR (first generate loads artifacts)")
    p.add_argument("--profile", type=int, default=0,
                   help="after the rounds, torch.profiler over a generate of this many tokens: top GPU and host ops")
    p.add_argument("--json", default="")
    a = p.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    prompts = [int(v) for v in a.prompts.split(",")]
    rows = []
    from mlir_sym import backend as mb

    cuda_graphs_default, max_sizes_default = mb.config.cuda_graphs, mb.config.cuda_graph_max_sizes
    # HF compiles `__call__` itself (inductor, mode reduce-overhead) on CUDA with a static cache unless
    # `disable_compile`: that compile would trace into ours and serve the decode steps of every row
    # (eager's too); the backend `hf_compile` is HF's own compile, as HF users get it by default
    cache = {"cache_implementation": "static"} if a.cache == "static" else {}
    for name in a.models.split(","):
        base = make_model(name).to(dev)
        if a.dtype == "bfloat16":
            base = base.to(torch.bfloat16)
        amp = (lambda: torch.autocast(dev, dtype=torch.bfloat16)) if a.dtype == "amp" else contextlib.nullcontext
        g = torch.Generator().manual_seed(0)
        ids = {L: torch.randint(0, VOCAB, (a.batch, L), generator=g).to(dev) for L in prompts}

        def gen(m, L, n, be="eager"):
            with torch.no_grad(), amp():
                out = m.generate(ids[L], max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                 disable_compile=be != "hf_compile", **cache)
            if dev == "cuda":
                torch.cuda.synchronize()
            return out

        eager_tokens = {L: gen(base, L, a.new).cpu() for L in prompts}
        for pass_no, be in [(k, be) for k in range(1, a.passes + 1) for be in a.backends.split(",")]:
            torch._dynamo.reset()
            from torch._dynamo.utils import counters

            from mlir_sym import backend as mb

            counters.clear()
            mb.stats.reset()
            if not a.warm:  # a compile, not a load of the last backend's (or run's) artifacts
                os.environ["MLIR_SYM_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_generate_")
            mb.config.cuda_graphs = be != "mlir_sym_nographs" and cuda_graphs_default
            mb.config.inplace_mutations = be != "mlir_sym_copies"
            mb.config.cuda_graph_max_sizes = int(be.partition("@")[2] or max_sizes_default)
            m = compiled_copy(base, be)
            if dev == "cuda":
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter()
            try:
                gen(m, prompts[0], a.new, be)
            except Exception as e:  # a backend that fails (inductor_ro on some setups) is a row, not the end
                import traceback

                traceback.print_exc()
                why = " ".join(ln for ln in str(e).splitlines() if ln.strip() and "raised:" not in ln)[:400]
                print(f"## {name} {be}: failed: {type(e).__name__}: {why}", flush=True)
                rows.append({"model": name, "dtype": a.dtype, "cache": a.cache, "backend": be, "pass": pass_no,
                             "error": f"{type(e).__name__}: {why}"})
                continue
            first = time.perf_counter() - t0
            graphs_first = counters["stats"]["unique_graphs"]
            prefill, total, decode, equal = [], [], [], 0
            for _ in range(a.repeat):
                for L in prompts:
                    t0 = time.perf_counter()
                    gen(m, L, 1, be)
                    t1 = time.perf_counter()
                    gen(m, L, a.new, be)
                    t2 = time.perf_counter()
                    prefill.append(t1 - t0)
                    total.append(t2 - t1)
                    decode.append(((t2 - t1) - (t1 - t0)) / (a.new - 1))  # this round and length's
            for L in prompts:
                equal += int(torch.equal(gen(m, L, a.new, be).cpu(), eager_tokens[L]))
            if a.profile:
                from torch.profiler import ProfilerActivity, profile

                acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
                with profile(activities=acts) as prof:
                    gen(m, prompts[0], a.profile, be)
                avg = prof.key_averages()
                print(f"## {name} {be}: a generate of {a.profile} tokens", flush=True)
                if dev == "cuda":
                    print(avg.table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=60))
                print(avg.table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=60), flush=True)
            pre, tot = statistics.median(prefill), statistics.median(total)
            per_token = statistics.median(decode)
            row = {"model": name, "dtype": a.dtype, "cache": a.cache, "backend": be, "pass": pass_no, "batch": a.batch, "new": a.new,
                   "first_generate_s": round(first, 2), "prefill_ms": round(pre * 1e3, 2),
                   "decode_ms_per_token": round(per_token * 1e3, 3),
                   "generate_ms": round(tot * 1e3, 1), "graphs": counters["stats"]["unique_graphs"],
                   "recompiles": counters["stats"]["unique_graphs"] - graphs_first,
                   "graph_breaks": sum(counters["graph_break"].values()),
                   "tokens_equal": f"{equal}/{len(prompts)}"}
            if dev == "cuda":  # what the row's graphs, caches and temporaries took at most
                row["max_reserved_mb"] = round(torch.cuda.max_memory_reserved() / 2**20, 1)
            if be.startswith("mlir_sym"):
                row["direct_graphs"] = mb.stats.direct_graphs
                row["mutations_in_place"], row["mutations_copied"] = mb.stats.mutations_in_place, mb.stats.mutations_copied
                cgs = [a.graphs for a in mb._CACHE.values() if getattr(a, "graphs", None) is not None]
                row["cuda_graph_captures"] = sum(g.captures for g in cgs)  # over the whole row
                row["cuda_graph_replays"] = sum(g.replays for g in cgs)
            rows.append(row)
            print(json.dumps(row), flush=True)
    ind = {(r["model"], r["pass"]): r["decode_ms_per_token"] for r in rows if r["backend"] == "inductor"}
    print(f"\nmodel  dtype    backend        pass  first s  prefill ms  decode ms/tok  x inductor  graphs recomp  "
          f"tokens  (batch {a.batch}, prompts {a.prompts}, {a.new} new, {a.cache} cache, {dev})")
    for r in rows:
        if "error" in r:
            print(f"{r['model']:6} {r['dtype']:8} {r['backend']:17} {r['pass']:2}  failed: {r['error'][:100]}")
            continue
        ratio = ind.get((r["model"], r["pass"]), float("nan")) / r["decode_ms_per_token"]
        print(f"{r['model']:6} {r['dtype']:8} {r['backend']:17} {r['pass']:2} {r['first_generate_s']:7.2f} {r['prefill_ms']:11.2f} "
              f"{r['decode_ms_per_token']:14.3f} {ratio:10.2f}x {r['graphs']:6} {r['recompiles']:6}  {r['tokens_equal']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
