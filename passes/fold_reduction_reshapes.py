"""Fold `tensor.expand_shape`s that only add unit dims to a reduction's result into the reduction:
the reduction writes the expanded shape itself, its output map taking index 0 in the new dims. And
an expand of a `tensor.empty`, or of a fill of one, becomes an empty (a fill of an empty) of the
expanded shape.

torch-mlir lowers `amax(x, -1, keepdim=True)` (softmax's max) to a reduction into `[.., n]`
followed by an expand to `[.., n, 1]`, while the sum that follows reduces straight into
`[.., n, 1]`. Bufferized, the max was stored through one memref and read through its expanded
view, so sym-gpu-map-parallel could not put max, sum and normalization in one launch with a block
per row (a row group exchanges data only through buffers accessed the same way): the causal
softmax of GPT-2's attention was three launches and two fills a layer instead of one launch.

A reduction is rewritten when every use of its result is an expand_shape with the same result
type and reassociation, and each reassociation group has at most one dim that is not a static 1
(which takes the source dim's index; the others index 0). Its init becomes a fill of an empty of the new shape
when it was a fill of an empty (bufferized, the fill then writes the buffer the reduction reads, and
sym-gpu-map-parallel folds it into the reduction's start value), else the expand of the old init.
Other generics are left alone: an all-parallel generic's expand is a free reshape of a fresh buffer.

Elementwise fusion propagates reshapes up to the inits: BERT's max reduced into an expand of a fill
of an empty, bufferized as a fill of the empty's buffer and a reduction into its expanded view, which
again kept the fill out of the row group (no canonicalization runs between fusion and bufferization).

Before:
  %m = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0)],
                       iterator_types = ["parallel", "reduction"]} ins(%x) outs(%fill : tensor<?xf32>) {maximumf}
  %e = tensor.expand_shape %m [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
After:
  %i = linalg.fill ins(%ninf : f32) outs(tensor.empty(%n) : tensor<?x1xf32>) -> tensor<?x1xf32>
  %e = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, 0)], ...} ins(%x) outs(%i : tensor<?x1xf32>) {maximumf}
"""
from __future__ import annotations

from torch_mlir import ir

from torch_mlir.dialects import tensor

from mlir_sym.passes._compute_common import defining_op, ops_named, use_owner
from mlir_sym.passes.registry import SymPass, register




def _groups(e: ir.Operation) -> list[list[int]]:
    return [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(e.attributes["reassociation"])]


def _expanded_map(out: ir.AffineMap, groups: list[list[int]], shape: list[int]) -> ir.AffineMap | None:
    """The output map of the expanded result: in each group, the one dim that is not a static 1 (or the
    first, when all are) takes the source dim's expression, the rest constant 0. None when a group has
    two dims that are not static 1s."""
    exprs: list = []
    zero = ir.AffineConstantExpr.get(0)
    for src_dim, group in enumerate(groups):
        wide = [d for d in group if shape[d] != 1]
        if len(wide) > 1:
            return None
        keep = wide[0] if wide else group[0]
        exprs.extend(out.results[src_dim] if d == keep else zero for d in group)
    return ir.AffineMap.get(out.n_dims, out.n_symbols, exprs)


def _empty_like(expand: ir.Operation, before: ir.Operation) -> ir.Value:
    """A `tensor.empty` of `expand`'s result type (sizes from its output_shape), right before `before`."""
    rtype = ir.RankedTensorType(expand.results[0].type)
    dynamic = iter(expand.opview.output_shape)
    sizes = [next(dynamic) if ir.ShapedType.is_dynamic_size(d) else d for d in rtype.shape]
    with before.location, ir.InsertionPoint(before):
        return tensor.EmptyOp(sizes, rtype.element_type).result


def _fresh_init(init: ir.Value, expand: ir.Operation, before: ir.Operation) -> ir.Value | None:
    """`init`, an empty or a fill of an empty, made anew in `expand`'s result shape right before
    `before` (the old ops are erased when nothing else reads them); None for any other init."""
    fill = defining_op(init)
    if fill is not None and fill.name == "tensor.empty":
        fill, empty = None, fill
    else:
        empty = defining_op(fill.operands[1]) if fill is not None and fill.name == "linalg.fill" else None
    if empty is None or empty.name != "tensor.empty":
        return None
    if fill is None:
        return _empty_like(expand, before)
    new_fill = fill.clone(ip=ir.InsertionPoint(before))
    new_fill.operands[1] = _empty_like(expand, new_fill)
    new_fill.results[0].set_type(expand.results[0].type)
    return new_fill.results[0]


def _erase_unused(v: ir.Value) -> None:
    """Erases the fill or empty defining `v` if nothing reads it, and then a fill's empty."""
    o = defining_op(v)
    if o is None or o.name not in ("linalg.fill", "tensor.empty") or list(o.results[0].uses):
        return
    inner = o.operands[1] if o.name == "linalg.fill" else None
    o.erase()
    if inner is not None:
        _erase_unused(inner)


@register
class FoldReductionReshapes(SymPass):
    """A reduction whose result is only read through expand_shapes adding unit dims writes the expanded shape itself."""

    name = "sym-fold-reduction-reshapes"

    def run(self, op: ir.Operation) -> None:
        for e in ops_named(op, {"tensor.expand_shape"}):
            src = e.operands[0]
            new = _fresh_init(src, e, e)
            if new is not None:
                e.results[0].replace_all_uses_with(new)
                e.erase()
                _erase_unused(src)
                self.bump("inits-reshaped")
        for g in ops_named(op, {"linalg.generic"}):
            if self._fold(g):
                self.bump("reductions-expanded")

    @staticmethod
    def _fold(g: ir.Operation) -> bool:
        if len(g.results) != 1 or not isinstance(g.results[0].type, ir.RankedTensorType):
            return False
        if all("parallel" in str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"])):
            return False
        users = [use_owner(u) for u in g.results[0].uses]
        if not users or any(u.name != "tensor.expand_shape" for u in users):
            return False
        first = users[0]
        if any(u.results[0].type != first.results[0].type or _groups(u) != _groups(first) for u in users):
            return False
        if any(u.block != g.block for u in users):
            return False
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
        shape = ir.RankedTensorType(first.results[0].type).shape
        out = _expanded_map(maps[-1], _groups(first), shape)
        if out is None:
            return False
        # The generic moves right before its first user, whose output_shape operands dominate there
        # (a clone of that user expands the init); the generic's operands dominate its old place.
        at = first
        for u in users[1:]:
            if u.is_before_in_block(at):
                at = u
        g.move_before(at)
        n = len(g.operands) - 1
        init = g.operands[n]
        new = _fresh_init(init, at, g)
        if new is None:  # the old init through the expand
            new = at.clone(ip=ir.InsertionPoint(g)).results[0]
            defining_op(new).operands[0] = init
        g.operands[n] = new
        _erase_unused(init)
        maps[-1] = out
        g.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
        g.results[0].set_type(first.results[0].type)
        for u in users:
            u.results[0].replace_all_uses_with(g.results[0])
            u.erase()
        return True

