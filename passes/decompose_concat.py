"""Decompose `tensor.concat` into `tensor.empty` + one `tensor.insert_slice` per input.

Bufferized as it is, a concat allocates its result and copies every input into it: one
`memref.copy` per input and call (on the GPU, a `copy_` per input from the host program, or a copy
kernel). Written as insert_slices into an empty tensor, `eliminate-empty-tensors` (which runs next)
lets the op producing an input (a `linalg.generic` into a `tensor.empty`) write straight into its
slice of the result: the copy goes. Inputs that are not produced in place (function arguments,
constants) keep their copy.

Before:
  %c = tensor.concat dim(0) %a, %b : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
After:
  %n = tensor.dim %a, %c0
  %size = arith.addi %n, %c1
  %e = tensor.empty(%size) : tensor<?xi64>
  %0 = tensor.insert_slice %a into %e[0] [%n] [1] : tensor<?xi64> into tensor<?xi64>
  %c = tensor.insert_slice %b into %0[%n] [1] [1] : tensor<1xi64> into tensor<?xi64>
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, tensor

from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.registry import SymPass, register


@register
class DecomposeConcat(SymPass):
    """Rewrite tensor.concat as tensor.empty and insert_slices (so eliminate-empty-tensors can place
    the inputs' producers in the result)."""

    name = "sym-decompose-concat"

    def run(self, op: ir.Operation) -> None:
        found = ops_named(op, {"tensor.concat"})
        for c in found:
            if all(isinstance(v.type, ir.RankedTensorType) for v in c.operands):
                self._decompose(c)
                self.bump("concats-decomposed")

    @staticmethod
    def _decompose(c: ir.Operation) -> None:
        dim = ir.IntegerAttr(c.attributes["dim"]).value
        rt = ir.RankedTensorType(c.results[0].type)
        dyn = ir.ShapedType.get_dynamic_size()
        with ir.InsertionPoint(c), c.location:
            index = ir.IndexType.get()

            def const(v: int) -> ir.Value:
                return arith.ConstantOp(index, v).result

            def size_of(v: ir.Value, k: int) -> int | ir.Value:
                s = ir.RankedTensorType(v.type).shape[k]
                return s if s != dyn else tensor.DimOp(v, const(k)).result

            def as_value(s: int | ir.Value) -> ir.Value:
                return const(s) if isinstance(s, int) else s

            inputs = list(c.operands)
            offsets: list[int | ir.Value] = []
            total: int | ir.Value = 0
            for v in inputs:
                offsets.append(total)
                s = size_of(v, dim)
                if isinstance(total, int) and isinstance(s, int):
                    total = total + s
                else:
                    total = arith.AddIOp(as_value(total), as_value(s)).result
            sizes: list[int | ir.Value] = []
            for k in range(rt.rank):
                want = total if k == dim else size_of(inputs[0], k)
                # keep the result's type: a dim it declares dynamic stays a value
                sizes.append(as_value(want) if rt.shape[k] == dyn else rt.shape[k])
            dest = tensor.EmptyOp(sizes, rt.element_type).result
            for v, off in zip(inputs, offsets):
                t = ir.RankedTensorType(v.type)
                st_off, dy_off, st_size, dy_size = [], [], [], []
                for k in range(rt.rank):
                    o = off if k == dim else 0
                    if isinstance(o, int):
                        st_off.append(o)
                    else:
                        st_off.append(dyn)
                        dy_off.append(o)
                    if t.shape[k] != dyn:
                        st_size.append(t.shape[k])
                    else:
                        st_size.append(dyn)
                        dy_size.append(tensor.DimOp(v, const(k)).result)
                dest = tensor.InsertSliceOp(v, dest, dy_off, dy_size, [], st_off, st_size, [1] * rt.rank).result
        c.results[0].replace_all_uses_with(dest)
        c.erase()
