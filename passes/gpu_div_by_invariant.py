"""Divide by a loop-invariant value as a multiply by its reciprocal, computed once before the loop
(or once per loop iteration, for the lanes of an unrolled vector body).

In kernels, a division inside a loop by a value defined outside it (softmax's `e / sum`, layer
norm's `(x - mean) / std`: one divisor per row, a division per element) runs the correctly rounded
`div.rn.f32` subroutine per element; the softmax and layer-norm kernels were compute-bound on it in
bf16. The reciprocal is computed once, before the outermost loop the divisor is invariant in, and
each division becomes a multiply: the result changes by at most about 1.5 ulp (PyTorch's CUDA kernels
and Triton's approximate division differ from IEEE division as much). Only ops inside `gpu.module`s
are rewritten.

When the divisor is not invariant in the loop (softmax's row sum is re-read from memory in each
iteration), divisions by the same value in one block (the lanes of a 128-bit vector body: 4 in f32,
8 in bf16) share one reciprocal, computed before the first of them. A single division outside any
loop is left to IEEE (or to sym-gpu-div-by-constant).

Before:
  %s = ...                                    // the row's sum
  scf.for %j = %tid to %n step %bdim {
    %y = arith.divf %e, %s : f32
After:
  %one = arith.constant 1.0 : f32
  %r = arith.divf %one, %s : f32
  scf.for %j = %tid to %n step %bdim {
    %y = arith.mulf %e, %r : f32
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith

from mlir_sym.passes._compute_common import defining_op, enclosing, ops_named
from mlir_sym.passes.registry import SymPass, register

_LOOPS = ("scf.for", "scf.while", "scf.parallel")
_FLOATS = ("f16", "bf16", "f32", "f64")


def _defined_outside(v: ir.Value, loop: ir.Operation) -> bool:
    """Whether `v` is defined outside `loop` (so it dominates the loop and does not change in it)."""
    op = defining_op(v)
    if op is not None:
        node = op
    else:
        owner = v.owner.owner  # the op whose region holds the block `v` is an argument of
        node = owner.operation if hasattr(owner, "operation") else owner
        if node == loop:
            return False
    cur = node
    while cur is not None:
        if cur == loop:
            return False
        parent = cur.parent
        cur = parent.operation if parent is not None and hasattr(parent, "operation") else parent
    return True


@register
class GpuDivByInvariant(SymPass):
    """In gpu.modules: arith.divf inside a loop by a loop-invariant divisor becomes arith.mulf by its reciprocal."""

    name = "sym-gpu-div-by-invariant"

    def run(self, op: ir.Operation) -> None:
        found: list[tuple[ir.Operation, list[ir.Operation]]] = []  # division, enclosing loops (innermost first)

        for c in ops_named(op, {"arith.divf"}):
            outer = enclosing(c, ("gpu.module",) + tuple(_LOOPS))
            if op.name == "gpu.module" or any(o.name == "gpu.module" for o in outer):
                found.append((c, [o for o in outer if o.name in _LOOPS]))
        reciprocals: dict[tuple, ir.Value] = {}
        by_block: dict[tuple, list[ir.Operation]] = {}
        for div, loops in found:
            if str(div.results[0].type) not in _FLOATS:
                continue
            d = div.operands[1]
            outer = None
            for loop in loops:  # innermost first: the outermost loop `d` is still invariant in
                if _defined_outside(d, loop):
                    outer = loop
                else:
                    break
            if outer is not None:
                self._rewrite(div, reciprocals, (d, outer), outer)
                self.bump("divisions-hoisted")
            else:
                by_block.setdefault((d, div.block), []).append(div)
        for k, ((d, _), divs) in enumerate(by_block.items()):
            if len(divs) >= 2:  # one reciprocal before the first of them (they are in block order)
                first = divs[0]
                for div in divs:
                    self._rewrite(div, reciprocals, ("block", k), first)
                    self.bump("divisions-sharing-a-reciprocal")

    @staticmethod
    def _rewrite(div: ir.Operation, reciprocals: dict, key: tuple, before: ir.Operation) -> None:
        """Replace `div` by a multiply with the reciprocal of its divisor, made before `before`."""
        r = reciprocals.get(key)
        if r is None:  # `before` is still in place: the first rewrite of a key inserts before erasing
            with ir.InsertionPoint(before), div.location:
                one = arith.ConstantOp(div.results[0].type, 1.0).result
                r = ir.Operation.create("arith.divf", results=[div.results[0].type],
                                        operands=[one, div.operands[1]]).results[0]
            reciprocals[key] = r
        with ir.InsertionPoint(div), div.location:
            attrs = {"fastmath": div.attributes["fastmath"]} if "fastmath" in div.attributes else {}
            new = ir.Operation.create("arith.mulf", results=[div.results[0].type], operands=[div.operands[0], r],
                                      attributes=attrs)
        div.results[0].replace_all_uses_with(new.results[0])
        div.erase()
