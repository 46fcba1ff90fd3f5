"""HuggingFace models and the e2e cases under mlir_sym: guard counts before/after the guard passes,
recompiles over random sequence lengths (side by side with inductor), accuracy, first-call time.

Requires `transformers` (a benchmark-only requirement, NOT a dependency of mlir_sym: `pip install
transformers` into the venv). Without it the script prints a message and exits 0. Nothing is
downloaded: the models are built from tiny configs (2 layers, hidden 64, 2 heads, vocab 1000) with
random weights (seeded), with HF_HUB_OFFLINE=1, `use_cache=False`, `attn_implementation="eager"`.

(a) Guard counts. "before" = the `sym.guard` + `sym.assert` ops of the imported guard function
    (`@guards`, the function with the `sym.guards` attribute, in `art.source_ir`, the module as the
    importer produced it, before any pass); "after" = the guard/assert entries of
    `art.generic.checks` (what the native guard function evaluates, after sym-canonicalize,
    sym-guard-cse, sym-guard-schedule in the guards-to-llvm pipeline). Reading the imported IR
    rather than compiling a second time without the passes keeps it one compile per graph, and it
    is exactly the pass input. `sym.bind` checks (one input dim equal to an already bound symbol)
    are not counted on either side (the passes do not remove them); their number is printed apart.
    Summed over every graph of the model (a graph break gives two graphs).
(b) Recompiles: one compile on the first call, then `--calls` calls with random sequence lengths in
    [2, 512] (seeded) and random batch in {2, 3}. Batch 1 is excluded, as is length 1: Dynamo
    specializes sizes 0 and 1 (a dim of size 1 is a constant in the graph, not a symbol; 0/1 are
    not in a symbol's range [2, oo]), so a call at batch 1 after a compile at batch 2 is a new graph
    for every backend, which measures Dynamo, not the backend. Recompiles = Dynamo's
    counters["stats"]["unique_graphs"] after the first call minus after it (target 0), beside
    mlir_sym's backend.stats.compiles (artifacts compiled), guard misses and graph breaks
    (counters["graph_break"]). Inductor (dynamic=True) runs in the same process on the same
    inputs. The compiled outputs (last hidden state) are compared with eager (max abs diff over
    a few lengths).

    python benchmarks/bench_hf.py [--models gpt2,bert,t5] [--calls 50] [--quick] [--no-inductor]
                                  [--no-cases] [--cases a,b] [--seed 0]
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
import traceback
from dataclasses import dataclass, field

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
import torch._dynamo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

from mlir_sym import backend as ms_backend  # noqa: E402

VOCAB, HIDDEN, LAYERS, HEADS = 1000, 64, 2, 2
MAX_LEN = 512
CHECK_LENGTHS = (2, 7, 64, 333, 512)  # eager-vs-compiled comparison lengths (batch 2)


# --- models ----------------------------------------------------------------------------------------

class LastHidden(torch.nn.Module):
    """`model(input_ids).last_hidden_state` (a plain tensor out: the same thing for every backend)."""

    def __init__(self, model: torch.nn.Module, decoder: bool = False) -> None:
        super().__init__()
        self.model, self.decoder = model, decoder

    def forward(self, input_ids):
        if self.decoder:  # T5: encoder-decoder; the decoder reads the same ids (one length symbol)
            return self.model(input_ids=input_ids, decoder_input_ids=input_ids).last_hidden_state
        return self.model(input_ids=input_ids).last_hidden_state


def build_model(name: str) -> torch.nn.Module:
    import transformers as tf

    common = dict(use_cache=False, attn_implementation="eager")
    torch.manual_seed(0)
    if name == "gpt2":
        cfg = tf.GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_positions=MAX_LEN,
                            n_inner=4 * HIDDEN, **common)
        m = LastHidden(tf.GPT2Model(cfg))
    elif name == "bert":
        cfg = tf.BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                            intermediate_size=4 * HIDDEN, max_position_embeddings=MAX_LEN, **common)
        m = LastHidden(tf.BertModel(cfg, add_pooling_layer=False))
    elif name == "t5":
        cfg = tf.T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=4 * HIDDEN, num_layers=LAYERS,
                          num_decoder_layers=LAYERS, num_heads=HEADS, decoder_start_token_id=0, **common)
        m = LastHidden(tf.T5Model(cfg), decoder=True)
    else:
        raise ValueError(f"unknown model {name!r} (gpt2, bert, t5)")
    for p in m.parameters():
        p.requires_grad_(False)
    return m.eval()


def ids(batch: int, length: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (batch, length), generator=g)


# --- guard counting --------------------------------------------------------------------------------

_OP = re.compile(r'"?sym\.(guard|assert|bind)"?\(')


def guards_before(source_ir: str) -> dict[str, int]:
    """sym.guard / sym.assert / sym.bind ops in the imported guard function (attribute `sym.guards`)."""
    out = {"guard": 0, "assert": 0, "bind": 0}
    inside = False
    for line in source_ir.splitlines():
        s = line.strip()
        if s.startswith("func.func"):
            inside = "sym.guards" in s
            continue
        if inside:
            if line.startswith("  }") or s == "}":
                inside = False
                continue
            m = _OP.search(s)
            if m:
                out[m.group(1)] += 1
    return out


def artifact_counts() -> dict[str, int]:
    """Summed over the artifacts in mlir_sym's cache (cleared per model): graphs, before/after, binds."""
    c = {"graphs": 0, "before": 0, "after": 0, "binds_before": 0, "binds_after": 0}
    for art in ms_backend._CACHE.values():
        b = guards_before(getattr(art, "source_ir", ""))
        c["graphs"] += 1
        c["before"] += b["guard"] + b["assert"]
        c["binds_before"] += b["bind"]
        c["after"] += sum(1 for k, _, _ in art.generic.checks if k in ("guard", "assert"))
        c["binds_after"] += sum(1 for k, _, _ in art.generic.checks if k == "bind")
    return c


def _reset() -> None:
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    ms_backend._CACHE.clear()
    ms_backend.stats.reset()


def _err(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}".replace("|", "\\|")


def _graph_breaks() -> int:
    return sum(torch._dynamo.utils.counters["graph_break"].values())


# --- (b) recompiles --------------------------------------------------------------------------------

@dataclass
class Run:
    first_call_s: float | None = None
    graphs_first: int | None = None  # Dynamo unique graphs after the first call
    recompiles: int | None = None  # unique graphs added by the later calls
    ms_compiles_first: int | None = None
    ms_compiles_later: int | None = None
    guard_misses: int | None = None
    breaks: int | None = None
    max_diff: float | None = None
    counts: dict = field(default_factory=dict)
    error: str | None = None


def run_backend(name: str, backend: str, plan: list[tuple[int, int]], opts) -> Run:
    r = Run()
    model = build_model(name)
    _reset()
    compiled = torch.compile(model, backend=backend, dynamic=True)
    counters = torch._dynamo.utils.counters
    try:
        with torch.no_grad():
            b0, l0 = plan[0]
            t0 = time.perf_counter()
            compiled(ids(b0, l0, 0))
            r.first_call_s = time.perf_counter() - t0
            r.graphs_first = counters["stats"]["unique_graphs"]
            r.ms_compiles_first = ms_backend.stats.compiles
            if backend == "mlir_sym":
                r.counts = artifact_counts()
            for i, (b, n) in enumerate(plan[1:], 1):
                compiled(ids(b, n, i))
            r.recompiles = counters["stats"]["unique_graphs"] - r.graphs_first
            r.ms_compiles_later = ms_backend.stats.compiles - r.ms_compiles_first
            r.guard_misses = ms_backend.stats.guard_misses
            # Accuracy against eager, at a few lengths (these calls count towards recompiles too).
            before = counters["stats"]["unique_graphs"]
            diff = 0.0
            for k, n in enumerate(CHECK_LENGTHS):
                x = ids(2, n, 10_000 + k)
                diff = max(diff, (compiled(x) - model(x)).abs().max().item())
            r.max_diff = diff
            r.recompiles += counters["stats"]["unique_graphs"] - before
            r.ms_compiles_later = ms_backend.stats.compiles - r.ms_compiles_first
            r.breaks = _graph_breaks()
    except Exception as e:  # noqa: BLE001 - a model that fails is reported in the table
        r.error = _err(e)
        r.breaks = _graph_breaks()
        if opts.verbose:
            traceback.print_exc()
    return r


# --- (a) e2e cases ---------------------------------------------------------------------------------

def run_case(case) -> dict:
    fn = case.build()
    _reset()
    out = {"name": case.name}
    try:
        compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
        with torch.no_grad():
            compiled(*case.inputs(case.sizes[0]))
        out.update(artifact_counts())
        out["breaks"] = _graph_breaks()
    except Exception as e:  # noqa: BLE001
        out["error"] = _err(e)
    return out


# --- main ------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gpt2,bert,t5")
    ap.add_argument("--calls", type=int, default=50, help="calls with random (batch, length) after the first")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="10 calls, only the bench cases")
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--no-cases", action="store_true", help="skip the e2e cases")
    ap.add_argument("--cases", default="", help="comma-separated e2e case names (default: all without xfail)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (0: torch's default)")
    ap.add_argument("-v", "--verbose", action="store_true")
    opts = ap.parse_args(argv)
    try:
        import transformers
    except ImportError:
        print("bench_hf: `transformers` is not installed; it is a benchmark-only requirement "
              "(pip install transformers). Nothing to do.")
        return 0
    if opts.quick:
        opts.calls = min(opts.calls, 10)
    if opts.threads:
        torch.set_num_threads(opts.threads)
    try:
        import torch._inductor.config as inductor_config

        inductor_config.fx_graph_cache = False  # a real first compile, as mlir_sym's (cache cleared per model)
    except Exception:  # noqa: BLE001
        pass
    transformers.logging.set_verbosity_error()

    rng = random.Random(opts.seed)
    plan = [(2, 37)] + [(rng.choice((2, 3)), rng.randint(2, MAX_LEN)) for _ in range(opts.calls)]
    backends = (["inductor"] if not opts.no_inductor else []) + ["mlir_sym"]
    models = [m for m in opts.models.split(",") if m]
    results: dict[tuple[str, str], Run] = {}
    for name in models:
        for be in backends:
            t0 = time.perf_counter()
            r = run_backend(name, be, plan, opts)
            results[(name, be)] = r
            print(f"[{name}] {be}: {r.error or 'ok'} ({time.perf_counter() - t0:.1f}s)", file=sys.stderr, flush=True)

    case_rows = []
    if not opts.no_cases:
        from cases import CASES, bench_cases

        cases = bench_cases() if opts.quick else [c for c in CASES if not c.xfail]
        if opts.cases:
            cases = [c for c in CASES if c.name in opts.cases.split(",")]
        for c in cases:
            case_rows.append(run_case(c))
            print(f"[case {c.name}] {case_rows[-1].get('error', 'ok')}", file=sys.stderr, flush=True)

    cmd = "python " + " ".join([os.path.relpath(__file__, ROOT)] + (argv if argv is not None else sys.argv[1:]))
    print(f"\nCommand: `{cmd}`  ")
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {torch.get_num_threads()} threads; "
          f"models: {LAYERS} layers, hidden {HIDDEN}, {HEADS} heads, vocab {VOCAB}, random weights, "
          f"use_cache=False, eager attention; input_ids only, output last_hidden_state.  ")
    print(f"First call at batch 2, length 37; then {opts.calls} calls with batch in {{2, 3}} and length in "
          f"[2, {MAX_LEN}] (seed {opts.seed}), then batch 2 at lengths {list(CHECK_LENGTHS)} for the eager "
          f"comparison. Batch/length 1 excluded: Dynamo specializes sizes 0/1.\n")

    print("### (b) Recompiles, accuracy, first call\n")
    head = ["model", "backend", "first call (s)", "graphs on 1st call", "recompiles after", "mlir_sym compiles (1st / after)",
            "guard misses", "graph breaks", "max abs diff vs eager", "error"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")
    na = "n/a"
    for name in models:
        for be in backends:
            r = results[(name, be)]
            ms = be == "mlir_sym"
            row = [name, be, f"{r.first_call_s:.2f}" if r.first_call_s is not None else na,
                   str(r.graphs_first) if r.graphs_first is not None else na,
                   str(r.recompiles) if r.recompiles is not None else na,
                   (f"{r.ms_compiles_first} / {r.ms_compiles_later}" if r.ms_compiles_later is not None else na) if ms else "-",
                   (str(r.guard_misses) if r.guard_misses is not None else na) if ms else "-",
                   str(r.breaks) if r.breaks is not None else na,
                   f"{r.max_diff:.2e}" if r.max_diff is not None else na,
                   r.error or ""]
            print("| " + " | ".join(row) + " |")

    print("\n### (a) Guard checks before / after the guard passes (mlir_sym)\n")
    print("before = sym.guard + sym.assert ops in the imported @guards (art.source_ir); after = guard/assert "
          "entries of art.generic.checks; binds (input dim == bound symbol) counted apart. Summed over "
          "the graphs of the model/case (first compile).\n")
    head = ["model / case", "graphs", "guards before", "guards after", "removed", "binds (input dims read; unchanged)", "error"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")

    def arow(label: str, c: dict, err: str | None) -> None:
        if c:
            rem = c["before"] - c["after"]
            pct = f" ({100 * rem / c['before']:.0f}%)" if c["before"] else ""
            cells = [str(c["graphs"]), str(c["before"]), str(c["after"]), f"{rem}{pct}", str(c["binds_after"])]
        else:
            cells = [na] * 5
        print("| " + " | ".join([label] + cells + [err or ""]) + " |")

    tot = {"before": 0, "after": 0}
    for name in models:
        r = results[(name, "mlir_sym")]
        arow(f"**{name}**", r.counts, r.error if not r.counts else None)
    for c in case_rows:
        arow(c["name"], {k: c[k] for k in ("graphs", "before", "after", "binds_after")} if "error" not in c else {},
             c.get("error"))
        if "error" not in c:
            tot["before"] += c["before"]
            tot["after"] += c["after"]
    if case_rows:
        ok = sum("error" not in c for c in case_rows)
        print(f"\ne2e cases: {ok}/{len(case_rows)} compiled; guards before {tot['before']}, after {tot['after']}.")
    errors = [(k, r.error) for k, r in results.items() if r.error] + [((c["name"], "mlir_sym"), c["error"])
                                                                     for c in case_rows if "error" in c]
    if errors:
        print("\nFailures (n/a above):")
        for (name, be), err in errors:
            print(f"- {name} / {be}: {err}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
