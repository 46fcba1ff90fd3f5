"""Split an elementwise `linalg.generic` read only through `tensor.extract_slice`s into one generic per
slice, over the slice, so that each part fuses with what reads it.

GPT-2's attention projects q, k and v in one matmul: its bias add is one generic over [1, n, 768]
whose result is sliced three ways, each slice reshaped into heads and permuted (k and v are also
returned). After fusion that was four launches a layer: the bias add, then a copy of each of k and v
into the heads layout and q's scale (`sym-fold-transposes` cannot fold a permute through a slice).
Split, each part is a generic of its own: reshape propagation and elementwise fusion (run again
after this pass) turn q's into the scaled heads layout, `sym-fold-transposes` makes k's and v's
write the permuted layout themselves, and `sym-fuse-siblings` runs the three as one launch.

A generic is split when it is all-parallel with one result, an identity output map, input maps
made of dims and zeros, no `linalg.index` and no read of its output; when every use of its result
is a unit-stride, rank-keeping slice (or a `tensor.dim`, which then asks the init); and when each slice is only copied again (read, through
reshapes, by transposes or elementwise generics), so that splitting adds no launch. The part for a
slice reads, of each input, the slice's offsets and sizes in the loop dims that input's map names
(index 0 of a broadcast dim: offset 0, size 1).

Before:
  %b = linalg.generic {maps = [id, (d0, d1) -> (d1), id], parallel x2} ins(%mm, %bias) outs(%e : tensor<?x768xf32>) {addf}
  %k = tensor.extract_slice %b[0, 256] [%n, 256] [1, 1] : tensor<?x768xf32> to tensor<?x256xf32>
After:
  %mm_k = tensor.extract_slice %mm[0, 256] [%n, 256] [1, 1]
  %bias_k = tensor.extract_slice %bias[256] [256] [1]
  %k = linalg.generic {same maps} ins(%mm_k, %bias_k) outs(tensor.empty(%n) : tensor<?x256xf32>) {addf}
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import tensor

from mlir_sym.passes._compute_common import dim_or_zero, indexing_maps, ops_named, use_owner
from mlir_sym.passes.registry import SymPass, register

_MAX_SLICES = 8






def _all_parallel(g: ir.Operation) -> bool:
    return all("parallel" in str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"]))




def _mixed(static: ir.DenseI64ArrayAttr, dynamic) -> list:
    """Static ints and dynamic values of a slice's offsets or sizes, in order."""
    dyn = iter(dynamic)
    return [next(dyn) if ir.ShapedType.is_dynamic_size(s) else s for s in static]


def _copied(v: ir.Value) -> bool:
    """Whether every reader of `v`, through reshapes, copies it anyway: a linalg.transpose or an
    elementwise generic reading it as an input."""
    users = [(use_owner(u), u.operand_number) for u in v.uses]
    if not users:
        return False
    for o, n in users:
        if o.name in ("tensor.expand_shape", "tensor.collapse_shape"):
            if not _copied(o.results[0]):
                return False
        elif o.name == "linalg.transpose":
            if n != 0:
                return False
        elif o.name == "linalg.generic":
            if not _all_parallel(o) or n >= len(o.opview.inputs):
                return False
        else:
            return False
    return True


def _splittable(g: ir.Operation) -> list[ir.Operation] | None:
    """`g`'s slices when it may be split (see the module's summary), else None."""
    if len(g.results) != 1 or not isinstance(g.results[0].type, ir.RankedTensorType) or not _all_parallel(g):
        return None
    maps = indexing_maps(g)
    out = list(maps[-1].results)
    if len(out) != maps[-1].n_dims or not all(isinstance(e, ir.AffineDimExpr) and e.position == i for i, e in enumerate(out)):
        return None  # not the identity
    if not all(dim_or_zero(e) for m in maps[:-1] for e in m.results):
        return None
    body = g.regions[0].blocks[0]
    if list(body.arguments[-1].uses) or any(o.operation.name == "linalg.index" for o in body.operations):
        return None
    slices = [use_owner(u) for u in g.results[0].uses if use_owner(u).name != "tensor.dim"]
    rank = ir.RankedTensorType(g.results[0].type).rank
    if not (2 <= len(slices) <= _MAX_SLICES):
        return None
    for s in slices:
        if s.name != "tensor.extract_slice" or ir.RankedTensorType(s.results[0].type).rank != rank:
            return None
        if list(s.opview.static_strides) != [1] * rank or not _copied(s.results[0]):
            return None
    return slices


def _slice(v: ir.Value, offsets: list, sizes: list) -> ir.Value:
    """`v[offsets][sizes]` with unit strides, at the current insertion point."""
    static_off = [o if isinstance(o, int) else ir.ShapedType.get_dynamic_size() for o in offsets]
    static_sz = [s if isinstance(s, int) else ir.ShapedType.get_dynamic_size() for s in sizes]
    rtype = ir.RankedTensorType.get(static_sz, ir.RankedTensorType(v.type).element_type)
    return tensor.ExtractSliceOp(rtype, v, [o for o in offsets if not isinstance(o, int)],
                                 [s for s in sizes if not isinstance(s, int)], [],
                                 static_off, static_sz, [1] * len(sizes)).result


@register
class SplitSlicedGenerics(SymPass):
    """Split an elementwise generic read only through slices into one generic per slice."""

    name = "sym-split-sliced-generics"

    def run(self, op: ir.Operation) -> None:
        # last first: once a generic is split, its producer is read through slices in turn (a bf16
        # projection's bias add in float32, then its rounding to bf16)
        for g in reversed(ops_named(op, {"linalg.generic"})):
            slices = _splittable(g)
            if slices is None:
                continue
            maps = indexing_maps(g)
            n_in = len(g.opview.inputs)
            for s in slices:
                sv = s.opview
                offsets = _mixed(sv.static_offsets, sv.offsets)
                sizes = _mixed(sv.static_sizes, sv.sizes)
                with ir.InsertionPoint(s), s.location:
                    ins = []
                    for k in range(n_in):
                        v, m = g.operands[k], maps[k]
                        if not isinstance(v.type, ir.RankedTensorType) or len(m.results) == 0:
                            ins.append(v)
                            continue
                        dims = [e.position if isinstance(e, ir.AffineDimExpr) else None
                                for e in m.results]
                        ins.append(_slice(v, [offsets[d] if d is not None else 0 for d in dims],
                                          [sizes[d] if d is not None else 1 for d in dims]))
                    init = tensor.EmptyOp(sizes, ir.RankedTensorType(s.results[0].type).element_type).result
                part = g.clone(ip=ir.InsertionPoint(s))
                for k, v in enumerate(ins):
                    part.operands[k] = v
                part.operands[n_in] = init
                part.results[0].set_type(s.results[0].type)
                s.results[0].replace_all_uses_with(part.results[0])
                s.erase()
            init = g.operands[n_in]
            for u in list(g.results[0].uses):  # tensor.dims: the result's dims are the init's
                use_owner(u).operands[0] = init
            g.erase()
            owner = init.owner
            if not isinstance(owner, ir.Block) and owner.name == "tensor.empty" and not list(init.uses):
                owner.erase()
            self.bump("generics-split")
            self.bump("parts", len(slices))
