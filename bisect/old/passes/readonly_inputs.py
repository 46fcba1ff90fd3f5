"""Mark the tensor arguments of compute functions read-only for bufferization.

One-shot bufferization treats function arguments as writable by default, so an in-place update of
an input-derived tensor (`y = x.clone(); y[1:] += 1` becomes `tensor.insert_slice ... into %x`
once the clone folds away) would be bufferized into the caller's input buffer, silently mutating
the user's tensor. Inputs belong to the caller: with `bufferization.writable = false` on every
ranked-tensor argument, bufferization copies before writing. Existing argument attributes are kept;
non-tensor arguments (out-param memrefs, scalars) and the guard function are left alone.

Before:
  func.func @main(%x: tensor<?x4xf32> {sym.dims = ["s0", "4"]}, %out: memref<?x4xf32>, %n: i64) -> i32
After:
  func.func @main(%x: tensor<?x4xf32> {bufferization.writable = false, sym.dims = ["s0", "4"]},
                  %out: memref<?x4xf32>, %n: i64) -> i32
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import compute_funcs
from mlir_sym.passes.registry import SymPass, register


@register
class ReadonlyInputs(SymPass):
    """Mark every tensor argument of compute functions `bufferization.writable = false`."""

    name = "sym-readonly-inputs"

    def run(self, op: ir.Operation) -> None:
        false = ir.BoolAttr.get(False)
        for fn in compute_funcs(op):
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
