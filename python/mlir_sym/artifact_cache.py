"""The artifact cache: compiled artifacts on disk, keyed by the Dynamo graph, so that a second process
compiling the same program skips AOTAutograd's tracing, the import and every lowering, and is left
with Dynamo's own capture plus loading (as TorchInductor's AOTAutogradCache does for inductor).

Key (SHA-256): the Dynamo graph's code, each input's kind, dtype, device type, symbolic sizes and
strides and requires_grad, the ShapeEnv's state at entry (ranges of the inputs' symbols, guards,
replacements), grad mode, the backend's config, and the compiler's identity (code_cache.compiler_digest:
mlir_sym's sources, torch, torch-mlir and llvmlite versions). Hints (the sizes of the first call) are
not in it: every size in range shares the entry.

Entry (JSON under `$MLIR_SYM_CACHE_DIR/artifacts`): the artifact's per-call plan
(capture.artifact_plan), each variant's code (the guard function and compute: LLVM-dialect MLIR for the
CPU, GpuCode for CUDA: guard function, host program, PTX), the outputs' dynamic dims, and the guards
the compile added to the ShapeEnv (AOTAutograd's tracing and our own specializations). On a hit those
guards are checked against this call's sizes (a miss if one fails) and installed in the ShapeEnv, so
Dynamo's guards for the frame are what a full compile would have given.

A graph whose compile made Dynamo restart its trace (AOTAutograd's TensorifyScalarRestartAnalysis:
float inputs to specialize) gets an entry that replays the restart, so the next process does not
trace it through AOTAutograd only to throw the result away.

Stored only when nothing but the artifact runs per call (the direct path of backend.py: inference, no
mutation, no aliasing, no lifted parameters or buffers, no graph attributes or submodules), for plain
artifacts (not count/fill ones) whose graph added no runtime assertions. `MLIR_SYM_ARTIFACT_CACHE=0`
turns it off (and `MLIR_SYM_CODE_CACHE=0`, which turns every disk cache off).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import sympy
import torch
import torch.fx as fx

from mlir_sym import attention, timing
from mlir_sym.codegen import code_cache
from mlir_sym.importer import node_origin
from mlir_sym.pipelines import PIPELINES

log = logging.getLogger("mlir_sym.compile")

FORMAT = "1"  # bump when an entry's layout changes


def enabled() -> bool:
    return code_cache.enabled() and os.environ.get("MLIR_SYM_ARTIFACT_CACHE", "1") != "0"


def cache_dir() -> Path:
    return code_cache.cache_root() / "artifacts"


def shape_env_of(gm: fx.GraphModule, example_inputs: Sequence[Any]):
    ctx = torch._guards.TracingContext.try_get()
    mode = getattr(ctx, "fake_mode", None) or torch._guards.detect_fake_mode(symbolic_inputs(gm, example_inputs))
    return getattr(mode, "shape_env", None)


def why_not_cacheable(gm: fx.GraphModule, shape_env) -> str | None:
    if shape_env is None:
        return "no ShapeEnv"
    if any(True for _ in gm.parameters()) or any(True for _ in gm.buffers()):
        return "the graph holds parameters or buffers"
    for n in gm.graph.nodes:
        if n.op in ("get_attr", "call_module"):
            return f"the graph has a {n.op} node ({n.target})"
    return None


def _meta(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return (f"T:{v.dtype}:{v.device.type}:{tuple(str(s) for s in v.shape)}:{tuple(str(s) for s in v.stride())}"
                f":{v.requires_grad}")
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return f"S:{type(v).__name__}:{v.node.expr}"
    return f"V:{type(v).__name__}:{v!r}"


def symbolic_inputs(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> list[Any]:
    """The graph's inputs as Dynamo traced them (fake tensors with symbolic sizes, SymInts); Dynamo may
    hand the backend real tensors, whose sizes are the first call's."""
    metas = [n.meta.get("example_value") for n in gm.graph.find_nodes(op="placeholder")]
    return [m if m is not None else v for m, v in zip(metas, example_inputs)]


def key(gm: fx.GraphModule, example_inputs: Sequence[Any], shape_env, config: dict) -> str:
    example_inputs = symbolic_inputs(gm, example_inputs)
    h = hashlib.sha256(f"{FORMAT}\0{code_cache.compiler_digest()}\0{gm.code}".encode())
    for v in example_inputs:
        h.update(b"\0" + _meta(v).encode())
    syms: set = set()
    for v in example_inputs:
        if isinstance(v, torch.Tensor):
            for s in (*v.shape, *v.stride()):
                if isinstance(s, torch.SymInt):
                    syms |= s.node.expr.free_symbols
        elif isinstance(v, torch.SymInt):
            syms |= v.node.expr.free_symbols
    ranges = sorted((str(s), str(shape_env.var_to_range.get(s))) for s in syms)
    h.update(repr(ranges).encode())
    h.update(repr([str(g.expr) for g in shape_env.guards]).encode())
    h.update(repr(sorted((str(k), str(v)) for k, v in shape_env.replacements.items())).encode())
    h.update(repr(sorted(config.items())).encode())
    # the compiled checks' messages name the user's lines: the same graph at other lines is another entry
    h.update(repr([node_origin(n) for n in gm.graph.nodes]).encode())
    h.update(repr(sorted(PIPELINES.items())).encode())  # MLIR_SYM_GPU_MAP_OPTIONS changes the GPU pipeline
    h.update(global_state().encode())
    h.update(f"causal_masks={attention.causal_masks_enabled()}".encode())
    from mlir_sym.capture import cpu_compute_pipeline  # (capture imports this module)
    h.update(f"cpu_pipeline={cpu_compute_pipeline()}".encode())  # MLIR_SYM_EMULATE_GPU: which of them runs
    return h.hexdigest()


def global_state() -> str:
    """The global state AOTAutograd traces under that changes the graph it makes, and that Dynamo
    guards on (its GLOBAL_STATE guard) rather than putting in its graph: grad mode (an inference or a
    training graph), autocast per device type and its dtype (its casts are traced into the graph: a
    graph compiled without autocast must not serve a call under it, nor one for another dtype), the default dtype
    (factory functions without a dtype) and deterministic algorithms (decompositions such as
    `index_put`'s)."""
    parts = [f"grad={torch.is_grad_enabled()}", f"default_dtype={torch.get_default_dtype()}",
             f"deterministic={torch.are_deterministic_algorithms_enabled()}"]
    for device_type in ("cpu", "cuda"):
        # the dtype even when autocast is off: `torch.autocast("cpu")` inside the function, without a
        # dtype, takes the global one (torch.set_autocast_dtype) when AOTAutograd traces it
        parts.append(f"autocast_{device_type}={torch.is_autocast_enabled(device_type)}:"
                     f"{torch.get_autocast_dtype(device_type)}")
    return " ".join(parts)


class Mark:
    """The ShapeEnv's state before a compile, to tell what the compile added."""

    def __init__(self, shape_env) -> None:
        self.shape_env = shape_env
        self.guards = len(shape_env.guards)
        self.asserts = sum(len(v) for v in shape_env.deferred_runtime_asserts.values())

    def added_guards(self) -> list[str] | None:
        """The guards added since, as `sympy.srepr` text (which keeps the symbols' assumptions and
        torch's sympy functions such as FloorDiv); None when runtime assertions were added too."""
        se = self.shape_env
        if sum(len(v) for v in se.deferred_runtime_asserts.values()) != self.asserts:
            return None
        return [sympy.srepr(g.expr) for g in se.guards[self.guards:]]


def store(k: str, artifact, plan: dict, dynamic_dims: list[tuple[int, set[int]]], added_guards: list[str] | None) -> bool:
    """Write `artifact`'s entry; False (nothing written) when it cannot be rebuilt from data."""
    if added_guards is None or not plan.get("storable") or any(v.record is None for v in artifact.variants):
        return False
    with timing.phase("artifact-cache-store"):
        entry = {"format": FORMAT, "plan": plan, "variants": [v.record() for v in artifact.variants],
                 "dynamic_dims": [[i, sorted(d)] for i, d in dynamic_dims], "guards": added_guards}
        if not _write(k, entry):
            return False
    log.info("artifact cache: stored %s (%d variants, %d guards)", k[:16], len(entry["variants"]), len(added_guards))
    return True


def store_restart(k: str, specialize: list[str]) -> None:
    """Remember that AOTAutograd, given the graph of key `k`, makes Dynamo restart its trace with the
    float inputs `specialize` (symbol names, stable across restarts and processes) specialized."""
    _write(k, {"format": FORMAT, "restart": "tensorify", "specialize": specialize})
    log.info("artifact cache: stored a restart for %s (specialize %s)", k[:16], specialize)


def _write(k: str, entry: dict) -> bool:
    text = json.dumps(entry)  # a plan that is not data is our bug: let it raise
    path = cache_dir() / f"{k}.json"
    try:
        code_cache.write_atomic(path, text)
    except OSError as e:  # a read-only home is no reason to fail
        log.debug("artifact cache entry not written: %s", e)
        return False
    return True


def lookup(k: str) -> dict | None:
    try:
        with open(cache_dir() / f"{k}.json") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    return entry if entry.get("format") == FORMAT else None


@lru_cache(maxsize=1)
def _sympy_namespace() -> dict:
    import torch.utils._sympy.functions as fns

    return {**vars(sympy), **{n: getattr(fns, n) for n in fns.__all__}}


def install_guards(texts: Sequence[str], shape_env) -> bool:
    """Check the stored guards against this call's sizes and add them to the ShapeEnv, as the compile
    that stored them did. False (nothing installed) when one does not hold for these sizes: the
    stored artifact is not for them."""
    hints = getattr(shape_env, "backed_var_to_val", None) or shape_env.var_to_val
    exprs = []
    for t in texts:
        try:
            e = eval(t, _sympy_namespace())  # noqa: S307 - srepr text from our own cache, like its code
        except Exception as err:  # noqa: BLE001 - an entry we cannot read is a miss, not an error
            log.info("artifact cache: guard %r not readable: %s", t[:80], err)
            return False
        if not e.free_symbols <= set(hints) or e.xreplace(hints) is not sympy.true:
            return False
        exprs.append(e)
    for e in exprs:
        shape_env.evaluate_expr(e)
    return True


def load(entry: dict, device: torch.device | None):
    """The artifact of `entry`, its code loaded (GPU: the PTX onto `device`)."""
    from mlir_sym.capture import artifact_from_plan, cpu_opt_level, cpu_variant
    from mlir_sym.context import make_context
    from mlir_sym.runtime.cpu import JitModule
    from torch_mlir import ir

    ctx = make_context()
    variants = []
    for r in entry["variants"]:
        if r["target"] == "cpu":
            with ctx, timing.phase("llvm-jit"):
                jit = JitModule(ir.Module.parse(r["llvm"]), cpu_opt_level())
            variants.append(cpu_variant(jit, ctx, r["label"], r["func"], r["n_sources"], [tuple(k) for k in r["kinds"]],
                                        [tuple(c) for c in r["checks"]], r["assert_msgs"]))
        else:
            from mlir_sym.gpu_compile import GpuCode, load_variant

            with ctx:
                code = GpuCode.from_json(r["code"])
            variants.append(load_variant(code, r["n_sources"], ctx, device, r["cpu_inputs"], r["func"]))
        variants[-1].record = (lambda r=r: r)
    artifact = artifact_from_plan(entry["plan"], variants, device if entry["variants"][0]["target"] != "cpu" else None)
    keep = variants[-1].keepalive
    if isinstance(keep, dict) and "gpu" in keep:  # as gpu_compile.compile_graph sets it (inspection)
        artifact.gpu = keep["gpu"]
    return artifact, [(i, set(d)) for i, d in entry["dynamic_dims"]]


def try_load(k: str, shape_env, device: torch.device | None) -> tuple[Any, list] | None:
    """The cached artifact for key `k` with its guards installed, or None. Raises Dynamo's
    TensorifyScalarRestartAnalysis (with the same floats to specialize) where the graph's compile
    did."""
    with timing.phase("artifact-cache-load"):
        entry = lookup(k)
        if entry is None:
            return None
        if entry.get("restart") == "tensorify":
            from mlir_sym.float_inputs import restart

            log.info("artifact cache: %s restarts Dynamo (specialize %s)", k[:16], entry["specialize"])
            restart(entry["specialize"])
        if not install_guards(entry["guards"], shape_env):
            log.info("artifact cache: entry %s does not hold for these sizes", k[:16])
            return None
        artifact, dims = load(entry, device)
    log.info("artifact cache: hit %s (%d variants)", k[:16], len(artifact.variants))
    return artifact, dims

