"""Arg-reductions with eager's NaN rule on the CPU path: the first NaN wins (argmax, argmin, max(dim), min(dim)).

torch-mlir lowers `x.argmax(d)` to a linalg.generic that carries the running extreme with
`arith.maximumf` (a NaN propagates) and its position with `select(cmpf ogt, in, extreme)`: once a NaN
is the extreme, no later element compares greater, and the NaN itself never did, so the position is
the extreme before the NaN. Eager returns the first NaN's position. The position's comparison
becomes "greater or unordered, while the extreme so far is not a NaN" (`ugt(in, acc) and
ord(acc, acc)`; `ult` for argmin): the first NaN replaces a number, nothing replaces a NaN, and ties
keep the first position as before. Only the comparisons that pair with a NaN-propagating extreme
(`maximumf` / `minimumf` of the same two values) change. The GPU path has its own
(`sym-gpu-map-parallel`'s arg-reductions).

Before:
  ^bb0(%in: f32, %acc: f32, %pos: i64):
    %v = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %p = arith.select %gt, %i, %pos : i64
After:
    %u = arith.cmpf ugt, %in, %acc : f32
    %o = arith.cmpf ord, %acc, %acc : f32
    %gt = arith.andi %u, %o : i1
    %p = arith.select %gt, %i, %pos : i64
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith

from mlir_sym.passes.registry import SymPass, register

_OGT, _OLT, _ORD, _UGT, _ULT = 2, 4, 7, 9, 11  # arith.cmpf predicates
_EXTREME = {_OGT: ("arith.maximumf", _UGT), _OLT: ("arith.minimumf", _ULT)}


def _generics(op: ir.Operation, out: list) -> list:
    for region in op.regions:
        for block in region.blocks:
            for c in block.operations:
                c = c.operation
                if c.name == "linalg.generic":
                    out.append(c)
                _generics(c, out)
    return out


@register
class NanArgReductions(SymPass):
    """Make arg-reductions (argmax/argmin) return the first NaN's position, as eager does."""

    name = "sym-nan-arg-reductions"

    def run(self, op: ir.Operation) -> None:
        for g in _generics(op, []):
            if "reduction" not in str(g.attributes["iterator_types"]):
                continue
            body = g.regions[0].blocks[0]
            ops = [c.operation for c in body.operations]
            yielded = list(ops[-1].operands)
            n_in = len(body.arguments) - len(yielded)
            outs = list(body.arguments)[n_in:]
            for cmp in ops:
                if cmp.name != "arith.cmpf":
                    continue
                pred = ir.IntegerAttr(cmp.attributes["predicate"]).value
                if pred not in _EXTREME:
                    continue
                x, acc = cmp.operands[0], cmp.operands[1]
                k = next((i for i, o in enumerate(outs) if o == acc), None)
                if k is None or not any(x == a for a in list(body.arguments)[:n_in]):
                    continue
                ext = yielded[k].owner
                ext = ext.operation if hasattr(ext, "operation") else ext
                if isinstance(ext, ir.Block) or ext.name != _EXTREME[pred][0]:
                    continue
                a, b = ext.operands[0], ext.operands[1]
                if not ((a == x and b == acc) or (a == acc and b == x)):
                    continue
                users = [u.owner for u in cmp.results[0].uses]
                if not users or any((u.operation if hasattr(u, "operation") else u).name != "arith.select" for u in users):
                    continue
                with ir.InsertionPoint(cmp), cmp.location:
                    unordered = arith.CmpFOp(arith.CmpFPredicate(_EXTREME[pred][1]), x, acc).result
                    number = arith.CmpFOp(arith.CmpFPredicate(_ORD), acc, acc).result
                    both = arith.AndIOp(unordered, number).result
                cmp.results[0].replace_all_uses_with(both)
                cmp.erase()
                self.bump("arg-reductions")
