"""Named pipelines, in the textual syntax `symopt --pass-pipeline=` accepts, and the module surgery
that separates an imported module into its guard part and its compute part.

  guards-to-llvm   : sym guard function -> arith -> LLVM dialect
  torch-to-linalg  : torch-mlir's backend pipeline (torch dialect -> linalg on tensors)
  linalg-to-llvm   : destination passing, fusion, bufferization, deallocation, loops -> LLVM dialect

The passes these pipelines name live in passes/, one per file (importing `mlir_sym.passes`
registers them). Order matters in two places of the compute pipelines: `sym-readonly-inputs` and
`sym-unshare-inits` must run before bufferization (and the latter after the last CSE on tensors),
and checks nested in loops are parked by `sym-defer-nested-asserts` before bufferization and turned
into status returns by `sym-nested-assert-to-status` right after convert-scf-to-cf.

`run_named` verifies the module once, after the whole pipeline: verifying after every pass (mlir-opt's
default, and `symopt`'s) took a third of `sym-lower-to-nvvm` on GPT-2 and most of `guards-to-llvm`, so
it is on only with `MLIR_SYM_VERIFY_EACH=1` (to find the pass that broke the IR).
`MLIR_SYM_PASS_TIMING=1` prints MLIR's execution time report (wall time per pass) of each pipeline
run to stderr, as `symopt --mlir-timing` does.
"""
from __future__ import annotations

import logging
import os
import re
import time

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

import mlir_sym.passes  # noqa: F401 - registers every pass the pipelines below name
from mlir_sym.dialects import sym
from mlir_sym.passes.registry import PassError, build_pipeline, register_pipeline
from mlir_sym.passes.canonicalize import RANGES_ATTR, declared_ranges

log = logging.getLogger("mlir_sym.pipelines")

TO_LLVM = (
    "convert-scf-to-cf, math-extend-to-supported-types, arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}, arith-expand{include-bf16=true}, expand-strided-metadata, lower-affine, finalize-memref-to-llvm, "
    "sym-math-precise-libm, convert-math-to-llvm, convert-math-to-libm, convert-arith-to-llvm, convert-cf-to-llvm, convert-func-to-llvm, "
    "convert-ub-to-llvm, canonicalize, reconcile-unrealized-casts"
)

# The compute pipeline converts structured control flow first, so that deferred checks can branch.
# and computes float32 exp, tanh, log and erf with arithmetic (sym-cpu-vector-math), which LLVM vectorizes, where libm's is a call
_COMPUTE_TO_LLVM = "convert-scf-to-cf, sym-nested-assert-to-status, " + TO_LLVM.replace("convert-scf-to-cf, ", "", 1).replace(
    "sym-math-precise-libm, ", "sym-cpu-vector-math, sym-math-precise-libm, ", 1)


def _torch_backend_passes() -> str:
    """torch-mlir's `torch-backend-to-linalg-on-tensors-backend-pipeline` pass by pass, with
    sym-verify-backend-contract in place of its last pass, the contract check (which admits no call
    of our runtime library: sym-torch-attention's training attention)."""
    from mlir_sym.context import make_context
    from mlir_sym.passes.verify_backend_contract import UPSTREAM

    with make_context():
        text = str(PassManager.parse("builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"))
    inner = text[len("builtin.module("):-1]
    if not inner.endswith("," + UPSTREAM):
        raise RuntimeError(f"torch-mlir's backend pipeline no longer ends with {UPSTREAM}: {text}")
    return inner[:-len(UPSTREAM)] + "sym-verify-backend-contract"


PIPELINES: dict[str, str] = {
    "guards-to-llvm": f"builtin.module(sym-canonicalize, sym-guard-cse, sym-guard-schedule, canonicalize, cse, convert-sym-to-arith, canonicalize, cse, {TO_LLVM})",
    "torch-to-linalg": (
        "builtin.module(sym-strip-facts, sym-mask-to-where{strict=1}, sym-torch-elementwise-math, sym-torch-cumulative-extrema, sym-torch-unflatten, sym-torch-int8-scalars, sym-torch-attention, func.func(torch-match-quantized-custom-ops), "
        f"torchdynamo-export-to-torch-backend-pipeline, {_torch_backend_passes()})"
    ),
    "linalg-to-llvm": (
        "builtin.module(sym-nan-arg-reductions, sym-assert-elim, sym-results-to-out-params, sym-readonly-inputs, sym-checked-int-division, sym-defer-nested-asserts, sym-assert-to-status, sym-concat-to-select, sym-decompose-concat, canonicalize, "
        "func.func(linalg-fuse-elementwise-ops), sym-fold-transposes{arguments=1}, sym-erase-dead-checks, sym-unshare-inits, eliminate-empty-tensors, empty-tensor-to-alloc-tensor, "
        "one-shot-bufferize{allow-unknown-ops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, "
        "func.func(tm-tensor-bufferize), canonicalize, sym-forward-copies, func.func(buffer-hoisting, buffer-loop-hoisting), ownership-based-buffer-deallocation, "
        "canonicalize, buffer-deallocation-simplification, bufferization-lower-deallocations, cse, canonicalize, "
        f"sym-memref-copy-to-linalg, func.func(linalg-generalize-named-ops), sym-interchange-for-locality, sym-sort-to-merge, sym-scatter-to-parallel{{atomics=0}}, "
        f"func.func(convert-linalg-to-loops, tm-tensor-to-loops), sym-cpu-accumulators, sym-cpu-register-tiles, {_COMPUTE_TO_LLVM})"
    ),
    # GPU (gpu_compile.py): linalg on tensors -> host function of gpu.launch_func + gpu.modules in NVVM.
    # Destination passing and fusion as for the CPU; matmuls become cuBLAS calls; every linalg op
    # becomes a parallel loop nest launched over its linearized iteration space, with a 128-bit path
    # under a runtime alignment check, and loops over the same rows (softmax, layer norm) share one
    # launch with a block per row (sym-gpu-map-parallel); constants and sizes are sunk into the
    # kernels, which are outlined and lowered to the NVVM/LLVM dialects; the host side is left for the
    # runtime (codegen/host.py) and deliberately not deallocated (torch's allocator owns buffers).
    "sym-lower-to-nvvm": (
        "builtin.module(sym-assert-elim, sym-unify-sizes, sym-results-to-out-params, sym-readonly-inputs, sym-checked-int-division, sym-defer-nested-asserts, sym-assert-to-status, "
        "sym-concat-to-select, sym-decompose-concat, sym-matmul-half-operands, canonicalize, sym-duplicate-elementwise, func.func(linalg-fuse-elementwise-ops), sym-unify-sizes{values=0}, sym-split-sliced-generics, func.func(linalg-fuse-elementwise-ops), sym-unify-sizes, sym-fold-transposes, sym-fuse-elementwise-chains, sym-fuse-siblings, sym-fold-reduction-reshapes, sym-erase-dead-checks, sym-unshare-inits, "
        "sym-library-calls-to-buffers, eliminate-empty-tensors, empty-tensor-to-alloc-tensor, "
        "one-shot-bufferize{allow-unknown-ops bufferize-function-boundaries "
        "function-boundary-type-conversion=identity-layout-map}, func.func(tm-tensor-bufferize), canonicalize, cse, "
        "func.func(resolve-ranked-shaped-type-result-dims), canonicalize, sym-forward-copies, sym-gpu-attention, sym-scatter-to-parallel, sym-gpu-library-convolutions, sym-gpu-conv-bias-epilogue, sym-gpu-library-calls, sym-gpu-gemm-bias-epilogue, sym-gpu-library-half-results, sym-gpu-gemm-bias-grad, sym-collapse-broadcast-dims, sym-collapse-leading-dims, sym-parallel-dims-first, func.func(convert-linalg-to-parallel-loops, tm-tensor-to-loops), lower-affine, "
        "canonicalize, sym-unify-sizes, sym-gpu-gather-rows, sym-gpu-map-parallel, gpu-launch-sink-index-computations, sym-gpu-dynamic-offsets, sym-gpu-warp-reduce, gpu-kernel-outlining, sym-gpu-unique-kernel-names, "
        "sym-gpu-device-asserts, sym-gpu-fpowi-i32, sym-gpu-div-by-constant, sym-gpu-div-by-invariant, canonicalize, cse, sym-gpu-dedup-kernels, sym-gpu-occupancy, "
        "gpu.module(expand-strided-metadata, lower-affine, arith-expand, convert-scf-to-cf, convert-vector-to-llvm, convert-gpu-to-nvvm, convert-math-to-llvm, "
        "canonicalize, cse), reconcile-unrealized-casts)"
    ),
}
# MLIR_SYM_FUSED_ATTENTION=0: attention on the GPU as its expansion (cuBLAS products and a softmax
# kernel) instead of sym-gpu-attention's fused kernel, which is slower at long sequences (2.6-5 times
# inductor's GPU time at lengths 1024-2048 on an H100, benchmarks/bench_attention.py). The importer
# keeps attention nodes only while the pipeline has sym-torch-attention (attention_fused_on_gpu), so
# the setting enters the code and artifact caches' keys with the pipeline text.
if os.environ.get("MLIR_SYM_FUSED_ATTENTION", "1") == "0":
    PIPELINES["torch-to-linalg"] = PIPELINES["torch-to-linalg"].replace(" sym-torch-attention,", "")


# A variant specialized to sizes (sym-specialize): its arguments' static types reach their users when
# canonicalization folds the casts back to `?`, but the users' result types stay dynamic
# (`aten.unsqueeze` of a [4] typed [1,?]), which torch-mlir's lowerings do not take ("failed to
# legalize unresolved target materialization from tensor<1x4xf32> to tensor<1x?xf32>": every
# backward graph's specialized variant; a sort's results, which torch-mlir lowers to TMTensor
# before the rest). Its decompositions do not take them either: `amax` of a static input became a
# `max.dim` whose static result the function returned as `?` ("type of return operand doesn't
# match function result type"). So the shapes are refined before torch-mlir's backend pipeline and
# again right before the lowering to linalg.
_EXPORT = "torchdynamo-export-to-torch-backend-pipeline"
_TO_LINALG = "func.func(convert-torch-to-linalg"
for _pass in (_EXPORT, _TO_LINALG):
    if _pass not in PIPELINES["torch-to-linalg"]:
        raise RuntimeError(f"torch-mlir's backend pipeline no longer has {_pass}")
PIPELINES["torch-to-linalg-specialized"] = PIPELINES["torch-to-linalg"].replace(
    _EXPORT, "torch-shape-refinement-pipeline, " + _EXPORT, 1).replace(
    _TO_LINALG, "torch-shape-refinement-pipeline, " + _TO_LINALG, 1)


def attention_fused_on_gpu() -> bool:
    """Whether GPU imports keep attention nodes for the fused kernel (MLIR_SYM_FUSED_ATTENTION)."""
    return " sym-torch-attention," in PIPELINES["torch-to-linalg"]


# Tuning the GPU mapping without editing the pipeline: MLIR_SYM_GPU_MAP_OPTIONS="reduction-vectors=2
# max-reduction-block=128" passes options to sym-gpu-map-parallel (they enter the code cache's key
# with the pipeline text). For experiments; benchmarks/bench_gpu_variants.py compares settings.
# MLIR_SYM_GPU_PASS_OPTIONS="sym-gpu-occupancy{elementwise-blocks=6} sym-gpu-map-parallel{...}" does
# the same for any pass of that pipeline.
_MAP_OPTIONS = os.environ.get("MLIR_SYM_GPU_MAP_OPTIONS", "").strip()
_PASS_OPTIONS = ([("sym-gpu-map-parallel", _MAP_OPTIONS)] if _MAP_OPTIONS else []) + re.findall(
    r"([\w-]+)\{([^}]*)\}", os.environ.get("MLIR_SYM_GPU_PASS_OPTIONS", ""))
for _name, _opts in _PASS_OPTIONS:
    if f" {_name}," not in PIPELINES["sym-lower-to-nvvm"]:
        raise ValueError(f"MLIR_SYM_GPU_PASS_OPTIONS: {_name} is not a pass of sym-lower-to-nvvm (or has options already)")
    PIPELINES["sym-lower-to-nvvm"] = PIPELINES["sym-lower-to-nvvm"].replace(f" {_name},", f" {_name}{{{_opts}}},")
# The GPU mapping executed on the CPU (sym-gpu-emulate-launches; MLIR_SYM_EMULATE_GPU=1 for CPU
# artifacts): sym-lower-to-nvvm up to sym-gpu-map-parallel, matmuls mapped like any loop nest (no
# library calls; sorts, which the GPU sorts with torch.sort, are the CPU path's merge sort), then the launches
# as loops and the CPU lowering. A test of the kernels' index math.
PIPELINES["gpu-emulated"] = (
    PIPELINES["sym-lower-to-nvvm"].split(" gpu-launch-sink-index-computations")[0]
    .replace("sym-gpu-library-convolutions, sym-gpu-conv-bias-epilogue, sym-gpu-library-calls, sym-gpu-gemm-bias-epilogue, sym-gpu-library-half-results, sym-gpu-gemm-bias-grad, ", "sym-sort-to-merge, ").replace("sym-scatter-to-parallel,", "sym-scatter-to-parallel{atomics=0},")
    .rstrip(", ")
    + ", sym-gpu-emulate-launches, canonicalize, sym-memref-copy-to-linalg, func.func(convert-linalg-to-loops), "
    + _COMPUTE_TO_LLVM.replace("finalize-memref-to-llvm", "convert-vector-to-llvm, finalize-memref-to-llvm") + ")"
)


SUMMARIES = {
    "guards-to-llvm": "optimize the sym guard function and lower it to the LLVM dialect",
    "torch-to-linalg": "strip sym facts, then torch-mlir: torch dialect -> linalg on tensors",
    "torch-to-linalg-specialized": "torch-to-linalg for a variant specialized to sizes: shapes refined before torch-mlir's pipeline and before the lowering",
    "linalg-to-llvm": "destination passing, fusion, bufferization, deallocation, loops -> LLVM dialect (CPU)",
    "sym-lower-to-nvvm": "linalg on tensors -> parallel loops -> gpu.launch -> outlined kernels in NVVM (GPU)",
    "gpu-emulated": "the GPU mapping of sym-lower-to-nvvm run on the CPU: launches as loops -> LLVM dialect (testing)",
}
for _name, _text in PIPELINES.items():
    register_pipeline(_name, _text, SUMMARIES.get(_name, f"named pipeline {_name}"))


class LoweringError(RuntimeError):
    """A pipeline failed; the message carries MLIR's located diagnostics."""


def run_named(name: str, module: ir.Module, context: ir.Context, *, dump: bool = False) -> float:
    """Run pipeline `name` in place; returns seconds spent."""
    t0 = time.perf_counter()
    try:
        pipe = build_pipeline(PIPELINES[name], context=context, print_ir_after_all=dump,
                              timing=_env_flag("MLIR_SYM_PASS_TIMING"), verify_each=_env_flag("MLIR_SYM_VERIFY_EACH"))
        pipe.run(module)
        if not module.operation.verify():  # raises MLIRError with the diagnostics
            raise LoweringError(f"pipeline '{name}' produced invalid IR")
    except (ir.MLIRError, PassError) as e:
        raise LoweringError(f"pipeline '{name}' failed:\n{_format(e)}") from None
    dt = time.perf_counter() - t0
    log.debug("pipeline %s: %.3fs", name, dt)
    stats = pipe.statistics()
    if stats:  # what our passes changed (e.g. guards the guard passes removed): MLIR_SYM_LOGS=guards,passes
        stat_log = logging.getLogger("mlir_sym.guards" if name == "guards-to-llvm" else "mlir_sym.passes")
        stat_log.info("pipeline %s: %s", name, "; ".join(
            f"{p}: " + ", ".join(f"{k}={v}" for k, v in c.items()) for p, c in stats.items()))
    return dt


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def _format(e: Exception) -> str:
    diags = getattr(e, "error_diagnostics", None)
    if not diags:
        return str(e)
    lines = []
    for d in diags:
        lines.append(f"{d.location}: {d.message}")
        for n in d.notes:
            lines.append(f"  note: {n.location}: {n.message}")
    return "\n".join(lines)


def split_guards(module: ir.Module, context: ir.Context) -> tuple[ir.Module, ir.Module]:
    """Two new modules from one imported module: (guards, compute). The guards module keeps the symbol
    declarations; the compute module keeps none of the `sym` ops, and their ranges as its `sym.ranges`
    attribute (which the guard function checks on entry)."""
    with context:
        text = module.operation.get_asm(enable_debug_info=True)
        guards = ir.Module.parse(text)
        compute = ir.Module.parse(text)
    for op in list(guards.body.operations):
        if op.operation.name == "func.func" and sym.GUARD_FN_ATTR not in op.operation.attributes:
            op.operation.erase()
    ranges = {}
    for name, (lo, hi) in declared_ranges(compute.operation).items():
        ranges[name] = ir.StringAttr.get(f"{'' if lo is None else lo}:{'' if hi is None else hi}", context)
    if ranges:  # what sym-assert-elim / sym-unify-sizes may assume: the guard function checks it
        compute.operation.attributes[RANGES_ATTR] = ir.DictAttr.get(ranges, context)
    for op in list(compute.body.operations):
        if op.operation.name == "sym.symbol" or (
            op.operation.name == "func.func" and sym.GUARD_FN_ATTR in op.operation.attributes
        ):
            op.operation.erase()
    return guards, compute


def unsupported_ops(module: ir.Module) -> list[tuple[str, str]]:
    """(op name, location) of each op torch-mlir imported as an opaque `torch.operator` that no pass
    of ours lowers (sym-torch-elementwise-math, sym-torch-cumulative-extrema, sym-torch-attention)."""
    from mlir_sym.passes.torch_attention import OPERATOR as ATTENTION, TRAINING
    from mlir_sym.passes.torch_cumulative_extrema import OPERATOR_NAMES as EXTREMA
    from mlir_sym.passes.torch_elementwise_math import OPERATOR_NAMES

    out: list[tuple[str, str]] = []

    def walk(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    o = child.operation
                    if o.name == "torch.operator" and ir.StringAttr(o.attributes["name"]).value not in (*OPERATOR_NAMES, *EXTREMA, ATTENTION, *TRAINING):
                        out.append((ir.StringAttr(o.attributes["name"]).value, str(o.location)))
                    walk(o)

    walk(module.operation)
    return out
