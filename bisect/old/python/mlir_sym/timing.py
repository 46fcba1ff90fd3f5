"""Process-wide compile-time accounting by phase (import, lowering, PTX, module load, ...), and the
GC pause that compiles run under.

Benchmarks read `totals()` to say where a model's compile time goes (bench_hf_gpu.py reports it per
row); `MLIR_SYM_LOGS=timing` logs each phase as it ends. Phases may nest: each one counts its own wall
time, so nested phases are not to be summed with their parent.
"""
from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections import defaultdict
from typing import Iterator

log = logging.getLogger("mlir_sym.timing")
_totals: defaultdict[str, float] = defaultdict(float)
_counts: defaultdict[str, int] = defaultdict(int)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        dt = time.perf_counter() - t0
        _totals[name] += dt
        _counts[name] += 1
        log.info("%s: %.3fs", name, dt)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic GC off for the duration (as it was before, afterwards).

    A compile allocates many small objects (MLIR handles, strings, FX nodes) beside the large heap
    Dynamo and the ShapeEnv keep alive, and each full collection walks that heap: about a second of a
    GPT-2 GPU compile (1.3 s of 8 on this project's 2-core CPU) was collections. Our compile makes
    no long-lived cycles; what it leaves is collected as usual once the GC is back on."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def totals() -> dict[str, float]:
    """Seconds per phase since the last reset(), rounded to the millisecond."""
    return {k: round(v, 3) for k, v in sorted(_totals.items())}


def counts() -> dict[str, int]:
    return dict(sorted(_counts.items()))


def reset() -> None:
    _totals.clear()
    _counts.clear()
