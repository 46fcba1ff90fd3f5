"""Named pipelines, in the textual syntax `symopt --pass-pipeline=` accepts, and the module surgery
that separates an imported module into its guard part and its compute part.

  guards-to-llvm   : sym guard function -> arith -> LLVM dialect
  torch-to-linalg  : torch-mlir's backend pipeline (torch dialect -> linalg on tensors)
  linalg-to-llvm   : destination passing, fusion, bufferization, deallocation, loops -> LLVM dialect
"""
from __future__ import annotations

import logging
import time

from torch_mlir import ir

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import PassError, build_pipeline

log = logging.getLogger("mlir_sym.pipelines")

TO_LLVM = (
    "convert-scf-to-cf, expand-strided-metadata, lower-affine, finalize-memref-to-llvm, "
    "convert-math-to-llvm, convert-math-to-libm, convert-arith-to-llvm, convert-cf-to-llvm, convert-func-to-llvm, "
    "convert-ub-to-llvm, canonicalize, reconcile-unrealized-casts"
)

PIPELINES: dict[str, str] = {
    "guards-to-llvm": f"builtin.module(canonicalize, cse, convert-sym-to-arith, canonicalize, cse, {TO_LLVM})",
    "torch-to-linalg": (
        "builtin.module(sym-strip-facts, func.func(torch-match-quantized-custom-ops), "
        "torchdynamo-export-to-torch-backend-pipeline, torch-backend-to-linalg-on-tensors-backend-pipeline)"
    ),
    "linalg-to-llvm": (
        "builtin.module(sym-results-to-out-params, sym-assert-to-status, canonicalize, "
        "func.func(linalg-fuse-elementwise-ops), eliminate-empty-tensors, empty-tensor-to-alloc-tensor, "
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, "
        "canonicalize, func.func(buffer-hoisting, buffer-loop-hoisting), ownership-based-buffer-deallocation, "
        "canonicalize, buffer-deallocation-simplification, bufferization-lower-deallocations, cse, canonicalize, "
        f"sym-memref-copy-to-linalg, func.func(convert-linalg-to-loops), {TO_LLVM})"
    ),
}


class LoweringError(RuntimeError):
    """A pipeline failed; the message carries MLIR's located diagnostics."""


def run_named(name: str, module: ir.Module, context: ir.Context, *, dump: bool = False) -> float:
    """Run pipeline `name` in place; returns seconds spent."""
    t0 = time.perf_counter()
    try:
        build_pipeline(PIPELINES[name], context=context, print_ir_after_all=dump).run(module)
    except (ir.MLIRError, PassError) as e:
        raise LoweringError(f"pipeline '{name}' failed:\n{_format(e)}") from None
    dt = time.perf_counter() - t0
    log.debug("pipeline %s: %.3fs", name, dt)
    return dt


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
    """Two new modules from one imported module: (guards, compute). Both keep the symbol declarations
    the guard function needs; the compute module keeps none of the `sym` declarations."""
    with context:
        text = module.operation.get_asm(enable_debug_info=True)
        guards = ir.Module.parse(text)
        compute = ir.Module.parse(text)
    for op in list(guards.body.operations):
        if op.operation.name == "func.func" and sym.GUARD_FN_ATTR not in op.operation.attributes:
            op.operation.erase()
    for op in list(compute.body.operations):
        if op.operation.name == "sym.symbol" or (
            op.operation.name == "func.func" and sym.GUARD_FN_ATTR in op.operation.attributes
        ):
            op.operation.erase()
    return guards, compute


def unsupported_ops(module: ir.Module) -> list[tuple[str, str]]:
    """(op name, location) of each op torch-mlir imported as an opaque `torch.operator`."""
    out: list[tuple[str, str]] = []

    def walk(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    o = child.operation
                    if o.name == "torch.operator":
                        out.append((ir.StringAttr(o.attributes["name"]).value, str(o.location)))
                    walk(o)

    walk(module.operation)
    return out
