"""Destination passing for compute functions: tensor results become memref out-params, the
function returns an i32 status (0 = success).

The runtime allocates each output with torch's allocator, sized from the symbol values, and passes
it in (each out-param gets the `sym.dims` fact of its sizes, read from the result's producers as
sym-assert-elim reads sizes, where they are expressions of the symbols: after bufferization the
out-param is what kernels read, and sym-unify-sizes needs its sizes to be the inputs' for the loops
over them to share launches, a training forward's layer norm over a saved sum among them); `bufferization.materialize_in_destination` (with empty-tensor elimination afterwards) makes the
last producer write straight into it, so no copy is needed in the common case. Runs on
linalg-on-tensors IR (after torch-mlir's backend pipeline), before bufferization.

Before:
  func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = linalg.generic ... -> tensor<?xf32>
    return %0 : tensor<?xf32>
  }
After:
  func.func @main(%x: tensor<?xf32>, %out0: memref<?xf32>) -> i32 attributes {llvm.emit_c_interface, sym.out_params = 1 : i64} {
    %0 = linalg.generic ... -> tensor<?xf32>
    bufferization.materialize_in_destination %0 in restrict writable %out0 : (tensor<?xf32>, memref<?xf32>) -> ()
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32 : i32
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith
from torch_mlir.dialects import bufferization as buf
from torch_mlir.dialects import func as func_d

from mlir_sym import shapes
from mlir_sym.dialects import sym
from mlir_sym.passes.assert_elim import DIMS_ATTR, size_reader
from mlir_sym.passes.canonicalize import declared_ranges, module_of, recorded_ranges
from mlir_sym.passes.registry import SymPass, located_error, register


# the number of out-params, the function's last arguments (codegen/host.py reads it: an output the
# program fills with a fresh library result becomes that result instead of a copy of it)
OUT_PARAMS_ATTR = "sym.out_params"


@register
class ResultsToOutParams(SymPass):
    """Turn tensor results into memref out-params and return an i32 status instead."""

    name = "sym-results-to-out-params"

    def run(self, op: ir.Operation) -> None:
        for fn in list(op.regions[0].blocks[0].operations):
            if fn.operation.name != "func.func" or sym.GUARD_FN_ATTR in fn.operation.attributes:
                continue
            if len(fn.regions[0].blocks) == 0:
                continue
            self._convert(fn)

    def _convert(self, fn) -> None:
        ftype = ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)
        results = list(ftype.results)
        for t in results:
            if not isinstance(t, ir.RankedTensorType):
                raise located_error(fn.operation, f"result type {t} is not a ranked tensor; cannot pass it as an out-param")
        out_dims = self._result_dims(fn)
        memrefs = [ir.MemRefType.get(ir.RankedTensorType(t).shape, ir.RankedTensorType(t).element_type) for t in results]
        entry = fn.regions[0].blocks[0]
        out_args = [entry.add_argument(m, fn.location) for m in memrefs]
        i32 = ir.IntegerType.get_signless(32)
        for block in fn.regions[0].blocks:
            term = block.operations[len(block.operations) - 1]
            if term.operation.name != "func.return":
                continue
            with ir.InsertionPoint(term.operation), term.operation.location:
                for value, dest in zip(term.operation.operands, out_args):
                    buf.MaterializeInDestinationOp(None, value, dest, restrict=True, writable=True)
                zero = arith.ConstantOp(i32, 0).result
                func_d.ReturnOp([zero])
            term.operation.erase()
        if "arg_attrs" in fn.operation.attributes:  # keep one attribute dict per argument
            old = list(ir.ArrayAttr(fn.operation.attributes["arg_attrs"]))
            fn.operation.attributes["arg_attrs"] = ir.ArrayAttr.get(old + [_dims_attr(d) for d in out_dims])
        fn.operation.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(ftype.inputs) + memrefs, [i32]))
        fn.operation.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        fn.operation.attributes[OUT_PARAMS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(results))
        self.bump("results-converted", len(results))

    def _result_dims(self, fn) -> list[list[str] | None]:
        """Per result, its sizes as fact strings ("?" where no expression of the symbols is known),
        or None when nothing is known: read from the single return's operands."""
        returns = [b.operations[len(b.operations) - 1] for b in fn.regions[0].blocks
                   if b.operations[len(b.operations) - 1].operation.name == "func.return"]
        n = len(ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value).results)
        if len(returns) != 1 or "arg_attrs" not in fn.operation.attributes:
            return [None] * n
        module = module_of(fn.operation)
        reader = size_reader(fn.operation, declared_ranges(module), recorded_ranges(module))
        out = []
        for value in returns[0].operation.operands:
            dims, dynamic = [], False
            for k, size in enumerate(ir.RankedTensorType(value.type).shape):
                e = reader.dim(value, k)
                text = str(e)
                known = not any(n.startswith("%") for n in shapes.expr_symbols(e))
                try:
                    known = known and shapes.parse_size_expr(text) == e
                except shapes.UnsupportedExpr:
                    known = False
                dims.append(text if known else "?")
                dynamic |= known and size == ir.ShapedType.get_dynamic_size()
            out.append(dims if dynamic else None)
        return out


def _dims_attr(dims: list[str] | None) -> ir.Attribute:
    if dims is None:
        return ir.DictAttr.get({})
    return ir.DictAttr.get({DIMS_ATTR: ir.ArrayAttr.get([ir.StringAttr.get(d) for d in dims])})
