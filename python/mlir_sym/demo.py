"""The main job: compile a small transformer block with dynamic shapes through `mlir_sym`.

    python -m mlir_sym.demo [--sizes 8,13,100] [--no-ir]

Prints the imported module (torch dialect compute + `sym` symbols, bindings and guards), then runs
the compiled block on several batch/sequence sizes, comparing each output with eager PyTorch, and
shows that one compilation served them all.
"""
from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    """Pre-norm transformer block: LayerNorm, multi-head self-attention, GELU MLP."""

    def __init__(self, d: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,13,100,37", help="sequence lengths to run (batch varies too; sizes 0 and 1 are specialized by Dynamo)")
    ap.add_argument("--no-ir", action="store_true", help="do not print the imported IR")
    args = ap.parse_args(argv)

    from mlir_sym import backend  # only to read its counters; the backend is found by entry point

    torch.manual_seed(0)
    model = Block().eval()
    compiled = torch.compile(model, backend="mlir_sym", dynamic=True)
    backend.stats.reset()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"model: {type(model).__name__} (d=64, 4 heads); torch.compile(backend='mlir_sym', dynamic=True)\n")
    rows = []
    with torch.no_grad():
        for k, seq in enumerate(sizes):
            batch = 2 + k % 3
            x = torch.randn(batch, seq, 64)
            t0 = time.perf_counter()
            out = compiled(x)
            dt = time.perf_counter() - t0
            ref = model(x)
            err = (out - ref).abs().max().item()
            torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
            rows.append((batch, seq, tuple(out.shape), err, dt))
            if k == 0 and not args.no_ir:
                art = next(iter(backend._CACHE.values()))
                print("== imported module: torch compute + sym symbols, bindings and guards ==")
                # an artifact loaded from the disk cache keeps no IR (MLIR_SYM_ARTIFACT_CACHE=0 compiles)
                print(getattr(art, "source_ir", None) or "(loaded from the disk cache, which keeps no IR: "
                      "MLIR_SYM_ARTIFACT_CACHE=0 make demo shows it)\n")
                if art.checks:
                    print("== guards of the artifact (id: kind, condition, origin) ==")
                    for i, (kind, text, origin) in enumerate(art.checks, 1):
                        print(f"  {i:2d}: {kind:6s} {text}    [{origin}]")
                    print()
    print(f"{'batch':>5} {'seq':>5} {'output shape':>16} {'max |out-eager|':>16} {'call time':>10}")
    for batch, seq, shape, err, dt in rows:
        print(f"{batch:5d} {seq:5d} {str(shape):>16} {err:16.2e} {dt * 1e3:8.1f}ms")
    st = backend.stats
    print(f"\ncompilations: {st.compiles} for {len(rows)} different input shapes, artifacts loaded from "
          f"the disk cache: {st.artifact_cache_hits} (guard misses: {st.guard_misses}, eager fallbacks: {st.fallbacks})")
    # a second run loads the artifact the first one stored (artifact_cache.py) instead of compiling it
    ok = st.compiles + st.artifact_cache_hits == 1 and st.fallbacks == 0 and st.guard_misses == 0
    print("OK: one compiled artifact served every size" if ok else "UNEXPECTED: more than one compilation")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
