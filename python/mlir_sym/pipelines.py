"""Named pipelines, in the textual syntax `symopt --pass-pipeline=` accepts, and the module surgery
that separates an imported module into its guard part and its compute part.

  guards-to-llvm   : sym guard function -> arith -> LLVM dialect
  torch-to-linalg  : torch-mlir's backend pipeline (torch dialect -> linalg on tensors)
  linalg-to-llvm   : destination passing, fusion, bufferization, deallocation, loops -> LLVM dialect

Checks inside loop bodies (torch-mlir's per-element index bounds checks of embedding/gather/index)
cannot become an early return while they sit in a region, so `sym-defer-nested-asserts` parks each
as a call to a marker function; once the loops are a plain CFG (after convert-scf-to-cf),
`sym-nested-assert-to-status` turns each marker call into a branch to a `return -k` block, like
`sym-assert-to-status` does for the function body. A failing check therefore raises in Python, as
eager PyTorch does for an out-of-range index, instead of aborting the process. (Buffers allocated
before a failing check are not freed on that error path.)
"""
from __future__ import annotations

import logging
import time

from torch_mlir import ir
from torch_mlir.dialects import arith, cf
from torch_mlir.dialects import func as func_d

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import PassError, SymPass, build_pipeline, located_error, register, register_pipeline

log = logging.getLogger("mlir_sym.pipelines")

TO_LLVM = (
    "convert-scf-to-cf, expand-strided-metadata, lower-affine, finalize-memref-to-llvm, "
    "convert-math-to-llvm, convert-math-to-libm, convert-arith-to-llvm, convert-cf-to-llvm, convert-func-to-llvm, "
    "convert-ub-to-llvm, canonicalize, reconcile-unrealized-casts"
)

# The compute pipeline converts structured control flow first, so that deferred checks can branch.
_COMPUTE_TO_LLVM = "convert-scf-to-cf, sym-nested-assert-to-status, " + TO_LLVM.replace("convert-scf-to-cf, ", "", 1)

PIPELINES: dict[str, str] = {
    "guards-to-llvm": f"builtin.module(sym-canonicalize, sym-guard-cse, sym-guard-schedule, canonicalize, cse, convert-sym-to-arith, canonicalize, cse, {TO_LLVM})",
    "torch-to-linalg": (
        "builtin.module(sym-strip-facts, sym-mask-to-where{strict=1}, func.func(torch-match-quantized-custom-ops), "
        "torchdynamo-export-to-torch-backend-pipeline, torch-backend-to-linalg-on-tensors-backend-pipeline)"
    ),
    "linalg-to-llvm": (
        "builtin.module(sym-assert-elim, sym-results-to-out-params, sym-readonly-inputs, sym-defer-nested-asserts, sym-assert-to-status, canonicalize, "
        "func.func(linalg-fuse-elementwise-ops), sym-unshare-inits, eliminate-empty-tensors, empty-tensor-to-alloc-tensor, "
        "one-shot-bufferize{allow-unknown-ops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, "
        "func.func(tm-tensor-bufferize), canonicalize, func.func(buffer-hoisting, buffer-loop-hoisting), ownership-based-buffer-deallocation, "
        "canonicalize, buffer-deallocation-simplification, bufferization-lower-deallocations, cse, canonicalize, "
        f"sym-memref-copy-to-linalg, func.func(convert-linalg-to-loops, tm-tensor-to-loops), {_COMPUTE_TO_LLVM})"
    ),
    # GPU (gpu_compile.py): linalg on tensors -> host function of gpu.launch_func + gpu.modules in NVVM.
    # Destination passing and fusion as for the CPU; matmuls become cuBLAS calls; every linalg op
    # becomes a parallel loop nest launched over its linearized iteration space (sym-gpu-map-parallel);
    # the kernels are outlined and lowered to the NVVM/LLVM dialects, the host side is left for the
    # runtime (codegen/host.py) and deliberately not deallocated (torch's allocator owns buffers).
    "sym-lower-to-nvvm": (
        "builtin.module(sym-assert-elim, sym-results-to-out-params, sym-readonly-inputs, sym-defer-nested-asserts, sym-assert-to-status, "
        "canonicalize, sym-duplicate-elementwise, func.func(linalg-fuse-elementwise-ops), sym-unshare-inits, "
        "eliminate-empty-tensors, empty-tensor-to-alloc-tensor, "
        "one-shot-bufferize{allow-unknown-ops bufferize-function-boundaries "
        "function-boundary-type-conversion=identity-layout-map}, func.func(tm-tensor-bufferize), canonicalize, cse, "
        "sym-gpu-library-calls, func.func(convert-linalg-to-parallel-loops, tm-tensor-to-loops), lower-affine, "
        "canonicalize, sym-gpu-map-parallel, gpu-kernel-outlining, sym-gpu-unique-kernel-names, "
        "sym-gpu-device-asserts, sym-gpu-fpowi-i32, canonicalize, cse, "
        "gpu.module(expand-strided-metadata, lower-affine, arith-expand, convert-scf-to-cf, convert-gpu-to-nvvm, "
        "canonicalize, cse), reconcile-unrealized-casts)"
    ),
}


SUMMARIES = {
    "guards-to-llvm": "optimize the sym guard function and lower it to the LLVM dialect",
    "torch-to-linalg": "strip sym facts, then torch-mlir: torch dialect -> linalg on tensors",
    "linalg-to-llvm": "destination passing, fusion, bufferization, deallocation, loops -> LLVM dialect (CPU)",
    "sym-lower-to-nvvm": "linalg on tensors -> parallel loops -> gpu.launch -> outlined kernels in NVVM (GPU)",
}
for _name, _text in PIPELINES.items():
    register_pipeline(_name, _text, SUMMARIES.get(_name, f"named pipeline {_name}"))


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


# ---------------------------------------------------------------------------------------------
# Inputs are read-only


@register
class ReadonlyInputs(SymPass):
    """Mark every tensor argument of compute functions `bufferization.writable = false`.

    One-shot bufferization treats function arguments as writable by default, so an in-place update
    of an input-derived tensor (`y = x.clone(); y[1:] += 1` becomes `tensor.insert_slice ... into %x`)
    would be bufferized into the caller's input buffer, silently mutating the user's tensor. Inputs
    belong to the caller: bufferization must copy before writing."""

    name = "sym-readonly-inputs"

    def run(self, op: ir.Operation) -> None:
        false = ir.BoolAttr.get(False)
        for fn in _compute_funcs(op):
            ftype = ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)
            old = list(ir.ArrayAttr(fn.operation.attributes["arg_attrs"])) if "arg_attrs" in fn.operation.attributes else []
            new = []
            for i, t in enumerate(ftype.inputs):
                entries = {a.name: a.attr for a in ir.DictAttr(old[i])} if i < len(old) else {}
                if isinstance(t, ir.RankedTensorType):
                    entries["bufferization.writable"] = false
                    self.bump("inputs-marked")
                new.append(ir.DictAttr.get(entries))
            fn.operation.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


# ---------------------------------------------------------------------------------------------
# One init per destination-style op


@register
class UnshareInits(SymPass):
    """Give every use of a `tensor.empty` or `linalg.fill` result its own copy of the op.

    CSE in torch-mlir's pipeline merges the identical `fill(0, empty)` inits of reductions, so one
    init feeds several ops. `eliminate-empty-tensors` then replaces that empty with the out-param
    of one result (`to_tensor %out0 restrict`), and One-Shot bufferization lets another of those
    ops write into the same buffer in place: the materialization of result 0 into %out0 clobbered
    result 2 (`[c.sum(1) for c in x.chunk(3, dim=1)]` returned chunk 0's sums twice). Cloning these
    pure ops per use keeps each chain from an empty tensor to its own destination."""

    name = "sym-unshare-inits"

    def run(self, op: ir.Operation) -> None:
        for fn in _compute_funcs(op):
            for kind in ("linalg.fill", "tensor.empty"):  # fills first: their clones share the empty
                for o in [o.operation for b in fn.regions[0].blocks for o in b.operations if o.operation.name == kind]:
                    result = o.results[0]
                    for use in list(result.uses)[1:]:
                        user = use.owner
                        clone = o.clone(ip=ir.InsertionPoint(user))
                        user.operands[use.operand_number] = clone.results[0]
                        self.bump("inits-cloned")


# ---------------------------------------------------------------------------------------------
# Checks nested in regions (see the module docstring)

_MARKER = "__mlir_sym_nested_assert"
_MSG_ATTR = "sym.assert_msg"


def _compute_funcs(module_op: ir.Operation) -> list:
    return [f for f in module_op.regions[0].blocks[0].operations
            if f.operation.name == "func.func" and sym.GUARD_FN_ATTR not in f.operation.attributes
            and len(f.regions[0].blocks) > 0]


def _loc_text(loc: ir.Location) -> str:
    text = str(loc)  # loc("file.py":12:0) -> file.py:12
    if text.startswith('loc("') and '":' in text:
        path, rest = text[5:].split('":', 1)
        return f"{path}:{rest.split(':')[0]}"
    return ""


@register
class DeferNestedAsserts(SymPass):
    """Park each cf.assert nested in a region as a call to a marker, for sym-nested-assert-to-status."""

    name = "sym-defer-nested-asserts"

    def run(self, op: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def walk(o: ir.Operation) -> None:
            for region in o.regions:
                for block in region.blocks:
                    for child in block.operations:
                        if child.operation.name == "cf.assert":
                            found.append(child.operation)
                        walk(child.operation)

        for fn in _compute_funcs(op):
            for block in fn.regions[0].blocks:
                for child in block.operations:
                    walk(child.operation)  # asserts directly in the body are sym-assert-to-status's
        if not found:
            return
        i1 = ir.IntegerType.get_signless(1)
        with ir.InsertionPoint(op.regions[0].blocks[0]), ir.Location.unknown():
            func_d.FuncOp(_MARKER, ir.FunctionType.get([i1], []), visibility="private")
        for a in found:
            msg = ir.StringAttr(a.attributes["msg"]).value
            where = _loc_text(a.location)
            with ir.InsertionPoint(a), a.location:
                call = func_d.CallOp([], ir.FlatSymbolRefAttr.get(_MARKER), [a.operands[0]])
            call.operation.attributes[_MSG_ATTR] = ir.StringAttr.get(f"{msg} (at {where})" if where else msg)
            a.erase()
            self.bump("asserts-deferred")


@register
class NestedAssertToStatus(SymPass):
    """Turn the marker calls of sym-defer-nested-asserts into branches to a `return -k` block."""

    name = "sym-nested-assert-to-status"

    def run(self, op: ir.Operation) -> None:
        i32 = ir.IntegerType.get_signless(32)
        for fn in _compute_funcs(op):
            calls, nested = [], []
            for b in fn.regions[0].blocks:
                for o in b.operations:
                    if _is_marker_call(o.operation):
                        calls.append(o.operation)
                    elif o.operation.regions:
                        nested.append(o.operation)
            for o in nested:
                if _contains_marker_call(o):
                    raise located_error(o, "a deferred check is still nested in a region (run convert-scf-to-cf first)")
            if not calls:
                continue
            ftype = ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)
            if list(ftype.results) != [i32]:
                raise located_error(fn.operation, "function must return an i32 status (run sym-results-to-out-params first)")
            attrs = fn.operation.attributes
            msgs = [ir.StringAttr(m).value for m in ir.ArrayAttr(attrs["sym.assert_msgs"])] if "sym.assert_msgs" in attrs else []
            for call in calls:
                block = call.block
                ops = list(block.operations)
                idx = next(i for i, o in enumerate(ops) if o.operation == call)
                msgs.append(ir.StringAttr(call.attributes[_MSG_ATTR]).value)
                cont = block.create_after()
                for o in ops[idx + 1:]:
                    cont.append(o.operation)
                fail = cont.create_after()
                with ir.InsertionPoint(fail), call.location:
                    func_d.ReturnOp([arith.ConstantOp(i32, -len(msgs)).result])
                with ir.InsertionPoint(call), call.location:
                    cf.CondBranchOp(call.operands[0], [], [], cont, fail)
                call.erase()
                self.bump("asserts-converted")
            attrs["sym.assert_msgs"] = ir.ArrayAttr.get([ir.StringAttr.get(m) for m in msgs])
        for f in list(op.regions[0].blocks[0].operations):
            if f.operation.name == "func.func" and ir.StringAttr(f.operation.attributes["sym_name"]).value == _MARKER:
                f.operation.erase()


def _is_marker_call(o: ir.Operation) -> bool:
    return o.name == "func.call" and _MSG_ATTR in o.attributes


def _contains_marker_call(o: ir.Operation) -> bool:
    return any(_is_marker_call(c.operation) or _contains_marker_call(c.operation)
               for r in o.regions for b in r.blocks for c in b.operations)
