"""Fuse independent elementwise `linalg.generic`s over the same iteration space into one generic with
several results (horizontal fusion): one launch instead of several.

Producer-consumer fusion leaves siblings apart: GPT-2's q, k and v (after sym-split-sliced-generics
and sym-fold-transposes, three generics writing [1, heads, n, 64] from slices of one projection)
and BERT's three bias adds of its q, k and v projections were three launches a layer each.

Two generics fuse when both are all-parallel with tensor results, output maps that are permutations
and input maps made of dims and zeros, bodies that do not read their outputs (a `linalg.index` of the
later one names the fused loop its loop became);
when their loops have the same sizes in some order (from each one's first init, a `tensor.empty`:
static sizes equal, dynamic sizes the same SSA values; in the same order, or each size but 1 once so
that the loops pair up unambiguously: q written as [1, n, 4, 64] beside k as [1, 4, n, 64]); and when no use of the
earlier one's results lies before the later one (so neither reads the other; `tensor.dim`s aside,
which then ask the earlier one's init). The fused generic's
loops are the earlier one's, the later one's maps rewritten over them; it sits at the later one's
place and takes both inputs, both inits and both bodies; at most 4 results and 48 body ops, so that
a kernel's registers stay bounded.

Before:
  %q = linalg.generic {maps = [(d0, d1) -> (d0, d1), id]} ins(%a : tensor<4x?xf32>) outs(%e0 : tensor<4x?xf32>) {mulf}
  %k = linalg.generic {maps = [(d0, d1) -> (d0, d1), id]} ins(%b : tensor<?x4xf32>) outs(%e1 : tensor<?x4xf32>) {addf}
After:
  %qk:2 = linalg.generic {maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1, d0), id, (d0, d1) -> (d1, d0)]}
      ins(%a, %b) outs(%e0, %e1 : tensor<4x?xf32>, tensor<?x4xf32>) {mulf; addf}
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import (clone_remapped, compute_funcs, constant_value, defining_op, dim_or_zero,
                                              indexing_maps, new_generic, use_owner)
from mlir_sym.passes.registry import SymPass, register

_MAX_RESULTS = 4
_MAX_BODY_OPS = 48






def _n_inputs(g: ir.Operation) -> int:
    return len(g.opview.inputs)




def _candidate(g: ir.Operation) -> bool:
    if g.name != "linalg.generic" or not g.results or len(g.results) > _MAX_RESULTS:
        return False
    if not all(isinstance(r.type, ir.RankedTensorType) for r in g.results):
        return False
    if not all("parallel" in str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"])):
        return False
    n_in = _n_inputs(g)
    maps = indexing_maps(g)
    if not all(dim_or_zero(e) for m in maps for e in m.results):
        return False
    if not all(m.is_permutation for m in maps[n_in:]):
        return False
    body = g.regions[0].blocks[0]
    if any(len(list(a.uses)) for a in list(body.arguments)[n_in:]):
        return False
    return _loop_key(g) is not None


def _size(v: ir.Value) -> tuple:
    """A dynamic size as ("s", int) or ("d", value), through `tensor.dim`s of empties, reshapes and
    slices to the value that made it (fusion's reshape propagation asks `tensor.dim`s of its new
    reshapes, and no CSE runs before this pass: q's size was another SSA value than k's)."""
    for _ in range(32):
        d = defining_op(v)
        if d is None or d.name != "tensor.dim" or constant_value(d.operands[1]) is None:
            break
        i, src = constant_value(d.operands[1]), defining_op(d.operands[0])
        if src is None:
            break
        t = ir.RankedTensorType(d.operands[0].type)
        if not ir.ShapedType.is_dynamic_size(t.shape[i]):
            return ("s", t.shape[i])
        if src.name == "tensor.empty":
            v = list(src.operands)[sum(ir.ShapedType.is_dynamic_size(x) for x in t.shape[:i])]
        elif src.name in ("tensor.expand_shape", "tensor.extract_slice"):
            sizes = src.opview.output_shape if src.name == "tensor.expand_shape" else src.opview.sizes
            static = src.opview.static_output_shape if src.name == "tensor.expand_shape" else src.opview.static_sizes
            v = list(sizes)[sum(ir.ShapedType.is_dynamic_size(x) for x in list(static)[:i])]
        elif src.name in ("linalg.generic", "linalg.fill") and len(src.results) == 1:
            e = defining_op(src.operands[len(src.operands) - 1])  # a result's sizes are its init's
            if e is None or e.name != "tensor.empty":
                break
            v = list(e.operands)[sum(ir.ShapedType.is_dynamic_size(x) for x in t.shape[:i])]
        else:
            break
    return ("d", v)


def _loop_key(g: ir.Operation) -> tuple | None:
    """The size of each of `g`'s loops, from its first init (a `tensor.empty`, or a fill of one):
    ("s", static size) or ("d", the empty's operand giving it); None when that init is neither."""
    n_in = _n_inputs(g)
    init = g.operands[n_in]
    e = defining_op(init)
    if e is not None and e.name == "linalg.fill":
        e = defining_op(e.operands[1])
    if e is None or e.name != "tensor.empty":
        return None
    dyn = iter(e.operands)
    dims = [("s", d) if not ir.ShapedType.is_dynamic_size(d) else _size(next(dyn))
            for d in ir.RankedTensorType(init.type).shape]
    key: list = [None] * len(dims)
    for j, e in enumerate(indexing_maps(g)[n_in].results):  # output dim j is loop e
        key[e.position] = dims[j]
    return tuple(key)


def _loop_match(a: tuple, b: tuple) -> list[int] | None:
    """A permutation p with b[p[i]] equal to a[i] for every i (loop sizes b in the order of a's), or
    None: the identity when the sizes are equal in order; else static 1s match in order and any
    other size must occur once in each, so that the match is not a guess between two loops of one
    size."""
    if len(a) != len(b):
        return None
    if all(x[0] == y[0] and x[1] == y[1] for x, y in zip(a, b)):
        return list(range(len(a)))
    p: list[int] = []
    for x in a:
        same = [j for j, y in enumerate(b) if y[0] == x[0] and y[1] == x[1]]
        if x == ("s", 1):
            same = [j for j in same if j not in p][:1]
        elif len(same) != 1 or len([y for y in a if y[0] == x[0] and y[1] == x[1]]) != 1:
            return None
        if not same or same[0] in p:
            return None
        p.append(same[0])
    return p


def _remap_loops(g: ir.Operation, p: list[int]) -> list[ir.AffineMap]:
    """`g`'s maps over the fused loops: fused loop i is `g`'s loop p[i]."""
    new_pos = {d: i for i, d in enumerate(p)}

    def remap(m: ir.AffineMap) -> ir.AffineMap:
        exprs = [ir.AffineDimExpr.get(new_pos[e.position]) if isinstance(e, ir.AffineDimExpr) else e
                 for e in m.results]
        return ir.AffineMap.get(m.n_dims, m.n_symbols, exprs)

    return [remap(m) for m in indexing_maps(g)]


def _body_size(g: ir.Operation) -> int:
    return len(list(g.regions[0].blocks[0].operations))




def _used_before(h: ir.Operation, g: ir.Operation) -> bool:
    """Whether a result of `h` is used by `g` or by an op (or inside an op) before `g` in their block
    (uses in the function's other blocks come after both)."""
    fn = g.parent
    for r in h.results:
        for u in r.uses:
            o = use_owner(u)
            if o.name == "tensor.dim":
                continue  # asks the init instead once fused (see _fuse)
            while o.parent != fn:  # a use nested in an op of the function's body
                o = o.parent
            if o.block != g.block:
                continue
            if o == g or o.is_before_in_block(g):
                return True
    return False


def _fuse(h: ir.Operation, g: ir.Operation, p: list[int]) -> ir.Operation:
    """One generic at `g`'s place computing `h`'s results and then `g`'s: its loop i is `h`'s loop i
    and `g`'s loop p[i]."""
    hn, gn = _n_inputs(h), _n_inputs(g)
    hm, gm = indexing_maps(h), _remap_loops(g, p)
    ins = list(h.operands[:hn]) + list(g.operands[:gn])
    outs = list(h.operands[hn:]) + list(g.operands[gn:])
    maps = hm[:hn] + gm[:gn] + hm[hn:] + gm[gn:]
    fused = new_generic(g, [r.type for r in h.results] + [r.type for r in g.results], ins, outs, maps,
                        g.attributes["iterator_types"])
    hb, gb = h.regions[0].blocks[0], g.regions[0].blocks[0]
    hargs, gargs = list(hb.arguments), list(gb.arguments)
    types = [a.type for a in hargs[:hn]] + [a.type for a in gargs[:gn]] + \
            [a.type for a in hargs[hn:]] + [a.type for a in gargs[gn:]]
    block = fused.regions[0].blocks.append(*types)
    bargs = list(block.arguments)
    mapping: dict = {}
    order = hargs[:hn] + gargs[:gn] + hargs[hn:] + gargs[gn:]
    for old, new in zip(order, bargs):
        mapping[old] = new
    new_pos = {d: i for i, d in enumerate(p)}  # `g`'s loop d is the fused loop new_pos[d]
    yielded = []
    with ir.InsertionPoint(block):
        for b in (hb, gb):
            for o in b.operations:
                o = o.operation
                if o.name == "linalg.yield":
                    yielded.extend(mapping[v] if v in mapping else v for v in o.operands)
                    continue
                clone_remapped(o, mapping)
                if o.name == "linalg.index" and b == gb:  # `g`'s loop index: the fused loop it became
                    d = ir.IntegerAttr(o.attributes["dim"]).value
                    mapping[o.results[0]].owner.attributes["dim"] = ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(64), new_pos[d])
        ir.Operation.create("linalg.yield", operands=yielded)
    for k, r in enumerate(h.results):  # a tensor.dim before `g` cannot ask the fused result: its init has the sizes
        for u in list(r.uses):
            if use_owner(u).name == "tensor.dim":
                use_owner(u).operands[0] = h.operands[hn + k]
    results = list(fused.results)
    for old, new in zip(list(h.results) + list(g.results), results):
        old.replace_all_uses_with(new)
    h.erase()
    g.erase()
    return fused


@register
class FuseSiblings(SymPass):
    """Fuse independent elementwise generics over the same iteration space into one multi-result generic."""

    name = "sym-fuse-siblings"

    def run(self, op: ir.Operation) -> None:
        for fn in compute_funcs(op):
            for block in fn.regions[0].blocks:
                self._fuse_block(block)

    def _fuse_block(self, block: ir.Block) -> None:
        open_ops: list[ir.Operation] = []  # candidates seen so far, in block order
        for child in list(block.operations):
            g = child.operation
            if not _candidate(g):
                continue
            key = _loop_key(g)
            partner, p = None, None
            for h in reversed(open_ops):
                if (len(h.results) + len(g.results) <= _MAX_RESULTS
                        and _body_size(h) + _body_size(g) <= _MAX_BODY_OPS
                        and not _used_before(h, g)):
                    p = _loop_match(_loop_key(h), key)
                    if p is not None:
                        partner = h
                        break
            if partner is None:
                open_ops.append(g)
                continue
            open_ops.remove(partner)
            fused = _fuse(partner, g, p)
            self.bump("generics-fused")
            open_ops.append(fused)
