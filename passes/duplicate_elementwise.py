"""Give each consumer of a multi-use elementwise `linalg.generic` its own copy of it (on tensors).

`linalg-fuse-elementwise-ops` fuses a producer into its consumer only when the consumer is its single
user; a producer with several users is materialized (written to memory and read back by each).
Recomputing a few arithmetic ops is cheaper on the GPU than that, so before fusion each use beyond the
first gets its own copy of the producer (placed right before it), and fusion then reaches every
consumer. Softmax's exp(x - max) feeds both the sum and the division: without this it is materialized.
Only producers with one ranked-tensor result, all-parallel iterators and a body of at most
12 ops without calls (a gather's bounds checks are calls, see sym-defer-nested-asserts) are copied,
and only when every user is a linalg.generic in the same block taking it as an
input (`ins`, not `outs`).

Before:
  %e = linalg.generic {iterator_types = ["parallel"]} ins(%x) outs(%i0) { exp }
  %s = linalg.generic {iterator_types = ["reduction"]} ins(%e) outs(%acc) { sum }
  %y = linalg.generic {iterator_types = ["parallel"]} ins(%e, %b) outs(%i1) { div }
After:
  %e1 = linalg.generic {iterator_types = ["parallel"]} ins(%x) outs(%i0) { exp }
  %e = linalg.generic {iterator_types = ["parallel"]} ins(%x) outs(%i0) { exp }
  %s = linalg.generic {iterator_types = ["reduction"]} ins(%e) outs(%acc) { sum }
  %y = linalg.generic {iterator_types = ["parallel"]} ins(%e1, %b) outs(%i1) { div }
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes.registry import SymPass, register

_MAX_DUPLICATED_BODY = 12


@register
class DuplicateElementwise(SymPass):
    """Copy a multi-use elementwise linalg.generic once per consumer, so elementwise fusion reaches them all."""

    name = "sym-duplicate-elementwise"

    def run(self, op: ir.Operation) -> None:
        for fn in op.regions[0].blocks[0].operations:
            if fn.operation.name != "func.func" or len(fn.operation.regions[0].blocks) == 0:
                continue
            for block in fn.operation.regions[0].blocks:
                for child in reversed(list(block.operations)):
                    o = child.operation
                    if not self._candidate(o):
                        continue
                    uses = [(u.owner, u.operand_number) for u in o.results[0].uses]
                    for owner, num in uses[1:]:
                        owner = owner.operation if hasattr(owner, "operation") else owner
                        with ir.InsertionPoint(o), o.location:
                            c = o.clone()
                        owner.operands[num] = c.results[0]
                        self.bump("producers-duplicated")

    @staticmethod
    def _candidate(o: ir.Operation) -> bool:
        if o.name != "linalg.generic" or len(o.results) != 1:
            return False
        if not isinstance(o.results[0].type, ir.RankedTensorType):
            return False
        its = [str(a) for a in ir.ArrayAttr(o.attributes["iterator_types"])]
        if not all("parallel" in a for a in its):
            return False
        if len(o.regions[0].blocks[0].operations) > _MAX_DUPLICATED_BODY:
            return False
        if any(b.operation.name == "func.call" for b in o.regions[0].blocks[0].operations):
            return False  # a checked gather (its bounds asserts): a copy would check again, and the
            # original, kept for its side effect, would still run as a kernel of its own
        uses = list(o.results[0].uses)
        if len(uses) < 2:
            return False
        for u in uses:
            owner = u.owner.operation if hasattr(u.owner, "operation") else u.owner
            if owner.name != "linalg.generic" or owner.block != o.block:
                return False
            # only as an input (fusing into an `outs` operand is not elementwise fusion)
            n_in = len(owner.operands) - len(owner.results)
            if u.operand_number >= n_in:
                return False
        return True
