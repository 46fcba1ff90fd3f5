"""Reorder a linalg.generic's loops so its parallel dimensions come first (GPU mapping).

`convert-linalg-to-parallel-loops` nests loops in the generic's dimension order. A reduction over
the leading dimension (`x.sum(0)`, `x[mask].sum(0)`: iterators [reduction, parallel]) becomes an
`scf.for` over the rows around an `scf.parallel` over the columns, which sym-gpu-map-parallel can only
run in a single thread (a masked row sum over [8192, 4] took 2 ms on the H100, eager 0.08 ms). With
the parallel dimensions first it is an `scf.parallel` around the reduction loop: a reduction per
output element, mapped to a block each. Parallel and reduction dimensions each keep their relative
order, so every output element is accumulated in the same order as before: results are bitwise equal.
The indexing maps are composed with the permutation and `linalg.index` ops renumbered (argmax over
the rows, `x.argmax(0)`, reads its position with `linalg.index`); generics with maps with symbols,
or with `linalg.index` inside a nested op, are left alone.

Before:
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]} ...
After:
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]} ...
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import ops_named, walk_ops
from mlir_sym.passes.registry import SymPass, register


def _iterators(op: ir.Operation) -> list[str]:
    return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]


@register
class ParallelDimsFirst(SymPass):
    """Move a linalg.generic's parallel dimensions before its reduction dimensions (keeping each group's order)."""

    name = "sym-parallel-dims-first"

    def run(self, op: ir.Operation) -> None:
        for g in ops_named(op, {"linalg.generic"}):
            its = _iterators(g)
            order = [d for d, t in enumerate(its) if t == "parallel"] + [d for d, t in enumerate(its) if t != "parallel"]
            if order == list(range(len(its))):
                continue
            body = [c.operation for c in g.regions[0].blocks[0].operations]
            own = [o for o in body if o.name == "linalg.index"]
            if sum(1 for o in walk_ops(g) if o.name == "linalg.index") != len(own):
                self.bump("skipped-linalg-index")  # an index of a nested op: not ours to renumber
                continue
            # old dim order[k] becomes new dim k: each map's old d_i is new d_{pos[i]}
            pos = {old: new for new, old in enumerate(order)}
            n = len(its)
            perm = ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(pos[i]) for i in range(n)])
            maps = []
            for m in ir.ArrayAttr(g.attributes["indexing_maps"]):
                am = ir.AffineMapAttr(m).value
                if am.n_symbols:
                    break
                maps.append(ir.AffineMapAttr.get(ir.AffineMap.get(n, 0, [r.compose(perm) for r in am.results])))
            if len(maps) != len(ir.ArrayAttr(g.attributes["indexing_maps"])):
                continue
            g.attributes["indexing_maps"] = ir.ArrayAttr.get(maps)
            i64 = ir.IntegerType.get_signless(64)
            for o in own:  # linalg.index d names a loop dim: the same loop under its new number
                o.attributes["dim"] = ir.IntegerAttr.get(i64, pos[ir.IntegerAttr(o.attributes["dim"]).value])
            old = list(ir.ArrayAttr(g.attributes["iterator_types"]))
            g.attributes["iterator_types"] = ir.ArrayAttr.get([old[d] for d in order])
            self.bump("generics-reordered")
