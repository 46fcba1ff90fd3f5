"""Reorder a linalg.generic's loops so the innermost loop walks memory contiguously (CPU loops).

`convert-linalg-to-loops` nests loops in the generic's dimension order. For a matmul that order is
(i, j, k): the innermost loop reads `B[k, j]` with stride N and cannot be vectorized. This pass picks,
among the parallel dimensions, the one that makes the fewest operands strided in the innermost loop
(an operand is fine if it does not depend on that dimension or if it is its last index, possibly
followed by constant indices into dims of static size 1) and moves it innermost, keeping the relative order of the other dimensions. Reduction dimensions keep their
order, so every output element is accumulated in the same order as before: results are bitwise equal.
Generics whose maps are not loop dims (each once) and constants, or with `linalg.index` in their
body, are left alone, as are those whose innermost loop is already best. Constant indices matter: a
row statistic `[b, s, 1]` read at `(d0, d1, 0)` (layer norm's mean, fused into the product it feeds)
made the map no projected permutation, the pass left the product in (i, j, k) order reading the
weight down its columns, and GPT-2's MLP after its layer norm took 0.8 ms a call on the CPU (0.04
with the layer norm not fused).

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


def _dims(m: ir.AffineMap) -> list[int | None]:
    """The loop dim of each result of `m`, None for a constant (a size-1 or broadcast dim)."""
    return [e.position if isinstance(e, ir.AffineDimExpr) else None for e in m.results]


def _simple(m: ir.AffineMap) -> bool:
    """Whether each result of `m` is a loop dim, used once, or a constant: a projected permutation
    that may also read a fixed index (a row statistic of shape [b, s, 1] at (d0, d1, 0))."""
    if m.n_symbols or not all(isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for e in m.results):
        return False
    dims = [d for d in _dims(m) if d is not None]
    return len(dims) == len(set(dims))


def _strided(maps: list[ir.AffineMap], dim: int, shapes: list[list[int] | None]) -> int:
    """How many operands the loop over `dim` walks with a stride other than 1 (or 0): `dim` indexes
    them, and not as their last dim-indexed result followed only by constant indices into dims of
    static size 1 (`shapes`: each operand's static shape, -1 for a dynamic size; None for a scalar)."""
    count = 0
    for m, shape in zip(maps, shapes):
        dims = _dims(m)
        if dim not in dims:
            continue
        last = max(k for k, d in enumerate(dims) if d is not None)
        ones = shape is not None and all(shape[k] == 1 for k in range(last + 1, len(dims)))
        if dims[last] != dim or not ones:
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
        if n < 2 or not all(_simple(m) for m in maps):
            return
        if any(c.name == "linalg.index" for c in walk_ops(o)):
            return
        shapes = [list(v.type.shape) if isinstance(v.type, ir.ShapedType) else None for v in o.operands]
        parallel = [d for d in range(n) if "parallel" in str(iters[d])]
        if not parallel:
            return
        best = min(parallel, key=lambda d: (_strided(maps, d, shapes), d != n - 1))
        if best == n - 1 or _strided(maps, best, shapes) >= _strided(maps, n - 1, shapes):
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
