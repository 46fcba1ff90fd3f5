"""Compile time on a GPU: GPT-2, BERT and T5 from configs (4 layers, hidden 256, random weights, as
../shared/gpu/gpu_reference.py), 20 calls with random sequence lengths in [2, 512], dynamic=True.

Each measurement runs in a fresh process (so caches are exactly what the row says):
  eager            Dynamo alone (its graphs run eagerly): the floor of a warm start that skips AOTAutograd;
  aot_eager        Dynamo + AOTAutograd capture, nothing compiled: the floor every backend pays;
  inductor cold    fresh TORCHINDUCTOR_CACHE_DIR;   inductor warm: a second process on that cache;
  mlir_sym cold    fresh MLIR_SYM_CACHE_DIR;        mlir_sym warm: a second process on that cache
                   (artifacts from the disk cache, AOTAutograd skipped: what a restarted job pays).
Per row: first-call seconds (compile + run), total for the 20 calls, "added" = first call minus
aot_eager's first call (what the backend adds to capture), graphs and graph breaks, recompiles
(graphs compiled after the first call), and the max |compiled - eager| over the 20 outputs.

    python benchmarks/bench_hf_gpu.py [--models gpt2,bert,t5] [--backends eager,aot_eager,inductor,mlir_sym]
                                      [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

MODELS = ("gpt2", "bert", "t5")


def worker(model_name: str, backend: str) -> dict:
    """One measurement, in this (fresh) process."""
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters

    from bench_gpu_compile import make_model  # the same configs as gpu_reference.py

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = make_model(model_name).to(dev).eval()
    random.seed(0)
    lens = [random.randint(2, 512) for _ in range(20)]

    def inputs(L):
        g = torch.Generator().manual_seed(L)
        ids = torch.randint(0, 8000, (2, L), generator=g).to(dev)
        kw = {"input_ids": ids}
        if model_name == "t5":
            kw["decoder_input_ids"] = ids[:, : max(2, L // 2)]
        return kw

    def out(o):
        return (o.logits if hasattr(o, "logits") and o.logits is not None else o.last_hidden_state).float()

    with torch.no_grad():
        eager = [out(model(**inputs(L))).cpu() for L in lens]
        counters.clear()
        cm = torch.compile(model, backend=backend, dynamic=True)
        profile_to = os.environ.get("BENCH_PROFILE_DIR")
        prof = None
        if profile_to:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        t0 = time.perf_counter()
        first, diff, graphs_after_first = None, 0.0, 0
        for k, L in enumerate(lens):
            o = out(cm(**inputs(L)))
            if dev == "cuda":
                torch.cuda.synchronize()
            if first is None:
                first = time.perf_counter() - t0
                graphs_after_first = counters["stats"]["unique_graphs"]
                if prof is not None:
                    prof.disable()
                    _write_profile(prof, os.path.join(profile_to, f"{model_name}-{backend}-{os.environ.get('BENCH_CACHE_KIND', '')}.txt"))
            diff = max(diff, (o.cpu() - eager[k]).abs().max().item())
        total = time.perf_counter() - t0
    row = {"model": model_name, "backend": backend, "first_call_s": round(first, 2), "total_20_calls_s": round(total, 2),
           "graphs": counters["stats"]["unique_graphs"], "graph_breaks": sum(counters["graph_break"].values()),
           "recompiles": counters["stats"]["unique_graphs"] - graphs_after_first, "max_abs_diff": diff}
    if backend == "mlir_sym":
        from mlir_sym import backend as mb

        from mlir_sym import timing

        row["artifacts"] = mb.stats.compiles
        row["direct_graphs"] = mb.stats.direct_graphs
        row["artifact_cache_hits"] = mb.stats.artifact_cache_hits
        row["phases_s"] = timing.totals()
    return row


def _write_profile(prof, path: str) -> None:
    """The first call's profile: the top functions by cumulative and by own time."""
    import io
    import pstats

    os.makedirs(os.path.dirname(path), exist_ok=True)
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    st.sort_stats("cumulative").print_stats(60)
    st.sort_stats("tottime").print_stats(40)
    with open(path, "w") as f:
        f.write(buf.getvalue())


def spawn(model: str, backend: str, env: dict) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", model, backend]
    p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"model": model, "backend": backend, "error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--backends", default="eager,aot_eager,inductor,mlir_sym")
    ap.add_argument("--json", default="")
    ap.add_argument("--profile", default="", metavar="DIR",
                    help="write a cProfile of each row's first call under DIR")
    ap.add_argument("--worker", nargs=2, metavar=("MODEL", "BACKEND"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(*a.worker)), flush=True)
        return
    rows = []
    for m in a.models.split(","):
        floor = None
        for be in a.backends.split(","):
            runs = [("", {})]
            if be in ("inductor", "mlir_sym"):
                cache = tempfile.mkdtemp(prefix=f"cache-{be}-")
                env = {"TORCHINDUCTOR_CACHE_DIR": cache} if be == "inductor" else {"MLIR_SYM_CACHE_DIR": cache}
                runs = [("cold", env), ("warm", env)]
            for kind, env in runs:
                if a.profile:
                    env = {**env, "BENCH_PROFILE_DIR": a.profile, "BENCH_CACHE_KIND": kind}
                row = spawn(m, be, env)
                row["cache"] = kind
                if be == "aot_eager" and "first_call_s" in row:
                    floor = row["first_call_s"]
                if floor is not None and "first_call_s" in row:
                    row["added_s"] = round(row["first_call_s"] - floor, 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(f"\n{'model':6} {'backend':10} {'cache':5} {'first s':>8} {'added s':>8} {'20 calls s':>10} {'graphs':>6} "
          f"{'breaks':>6} {'recomp':>6} {'max|diff|':>10}")
    for r in rows:
        if "error" in r:
            print(f"{r['model']:6} {r['backend']:10} {r['cache']:5} error: {r['error']}")
            continue
        print(f"{r['model']:6} {r['backend']:10} {r['cache']:5} {r['first_call_s']:8.2f} {r.get('added_s', float('nan')):8.2f} "
              f"{r['total_20_calls_s']:10.2f} {r['graphs']:6d} {r['graph_breaks']:6d} {r['recompiles']:6d} "
              f"{r['max_abs_diff']:10.2e}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
