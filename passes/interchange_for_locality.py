"""Reorder a linalg.generic's loops so the innermost loop walks memory contiguously (CPU loops).

`convert-linalg-to-loops` nests loops in the generic's dimension order. For a matmul that order is
(i, j, k): the innermost loop reads `B[k, j]` with stride N and cannot be vectorized. This pass picks,
among the parallel dimensions, the one that makes the fewest operands strided in the innermost loop
(an operand is fine if it does not depend on that dimension or if it is its last index) and moves it
innermost, keeping the relative order of the other dimensions. Reduction dimensions keep their
order, so every output element is accumulated in the same order as before: results are bitwise equal.
Generics with non-permutation maps or `linalg.index` in their body are left alone, as are those whose
innermost loop is already best.

Before (a generalized matmul):
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]} ...
After:
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                   affine_map<(d0, d1, d2) -> (d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]} ...
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import ops_named, walk_ops
from mlir_sym.passes.registry import SymPass, register


def _strided(maps: list[ir.AffineMap], dim: int) -> int:
    """How many operands the loop over `dim` walks with a stride other than 1 (or 0)."""
    count = 0
    for m in maps:
        positions = [ir.AffineDimExpr(e).position for e in m.results]
        if dim in positions and positions[-1] != dim:
            count += 1
    return count


@register
class InterchangeForLocality(SymPass):
    """Move the parallel loop with the fewest strided accesses innermost in linalg.generic (matmul: i,k,j)."""

    name = "sym-interchange-for-locality"

    def run(self, op: ir.Operation) -> None:
        for o in ops_named(op, {"linalg.generic"}):
            self._generic(o)

    def _generic(self, o: ir.Operation) -> None:
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(o.attributes["indexing_maps"])]
        iters = list(ir.ArrayAttr(o.attributes["iterator_types"]))
        n = len(iters)
        if n < 2 or not all(m.is_projected_permutation for m in maps) or any(m.n_symbols for m in maps):
            return
        if any(c.name == "linalg.index" for c in walk_ops(o)):
            return
        parallel = [d for d in range(n) if "parallel" in str(iters[d])]
        if not parallel:
            return
        best = min(parallel, key=lambda d: (_strided(maps, d), d != n - 1))
        if best == n - 1 or _strided(maps, best) >= _strided(maps, n - 1):
            return
        perm = [d for d in range(n) if d != best] + [best]  # new loop q iterates old dim perm[q]
        inv = [0] * n
        for q, d in enumerate(perm):
            inv[d] = q
        subst = ir.AffineMap.get_permutation(inv)  # old dim d -> new dim inv[d]
        new_maps = [ir.AffineMap.get(n, 0, [e.compose(subst) for e in m.results]) for m in maps]
        o.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
        o.attributes["iterator_types"] = ir.ArrayAttr.get([iters[d] for d in perm])
        self.bump("generics-interchanged")
