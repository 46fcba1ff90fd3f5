"""Fuse an elementwise `linalg.generic` into the generics that consume it, where
`linalg-fuse-elementwise-ops` left them apart (on tensors): because of `tensor.dim` uses, or because
the producer has several consumers, some of them reductions.

Upstream fusion fuses a producer only into its single user. When it propagates reshapes (a
`collapse_shape` of a matmul's rows expanded back), it makes `tensor.dim`s of the producers' results
to size the new `expand_shape`s, in the same rewrite; those are users too, so the next fusion in the
chain is refused and the canonicalization that would fold them comes after the pass. A bf16 linear
layer followed by a reshape was then three kernels after the library call: the bias add in float32
(written to memory), and the rounding to bf16 reading it back (GPT-2 in bf16: one extra launch per
linear layer). Attention's scaling of the scores, read by softmax's max, its sum of exponentials and
its normalization, stayed a kernel writing the scaled scores (sym-duplicate-elementwise, which runs
before fusion, saw reshapes between them then). Running upstream fusion a second time fuses those
but also elementwise producers into contractions (a layer norm into the next matmul's generic),
which then stop being library calls; this pass never fuses into a contraction.

A producer P is fused into a consumer C when:
  - both are `linalg.generic`s on tensors in the same block, P all-parallel with one result and an
    identity output map whose body does not read its `outs` value; C all-parallel or a reduction
    that is not a contraction (a body of only extf / mulf / addf: sym-gpu-library-calls' form);
  - C reads P's result (every such operand) as an input through one permutation map over as many
    loops (P's input maps are composed with it, and P's `linalg.index k` becomes the index of C's
    loop that P's loop k is: q's bias add read through the permute into heads), or, when P has no
    inputs and at most 6 body ops, through a broadcast (distinct loops and zeros: the aranges of a
    causal mask over [s, 1] and [1, s] at a dynamic batch; a zero's `linalg.index` is 0);
    every loop of C is an operand's dim or one of P's dims, and, C being a reduction, the fused
    generic is not a contraction (`(x * y).sum(0)` stays our column reduction, not a library call
    torch would run);
  - P's result has no other users but `tensor.dim`s (rewritten to the dims of P's `outs` operand once
    P is gone) and other such consumers; with several consumers each gets a copy of P's body (at most
    12 ops without calls, loading at most `max-reads` (2) tensors at every element, as
    sym-duplicate-elementwise copies);
  - the bodies have no ops with regions.
The fused generic takes P's inputs then C's other inputs (their maps unchanged: both iterate over
the same space) and C's outputs; its body is P's body, whose yielded value replaces C's block
argument, then C's body. A loop whose size only P's result gave (the row sum of cross entropy's
one-hot gradient, made from [N, 1] targets over the vocabulary: a float32 [N, V] buffer written and
read back) gets a 1-d `tensor.empty` of that size as an input the body never reads, which
canonicalization folds away once the loop bounds are taken from it.

Before:
  %a = linalg.generic {parallel} ins(%mm, %bias : tensor<?x?x32xf32>, tensor<32xbf16>) outs(%e0) { extf, addf }
  %d = tensor.dim %a, %c0
  %r = linalg.generic {parallel} ins(%a : tensor<?x?x32xf32>) outs(%e1 : tensor<?x?x32xbf16>) { truncf }
After:
  %d = tensor.dim %e0, %c0
  %r = linalg.generic {parallel} ins(%mm, %bias) outs(%e1) { extf, addf, truncf }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, tensor

from mlir_sym.passes._compute_common import (MAX_COPIED_READS, clone_remapped, compute_funcs, defining_op,
                                              full_reads, indexing_maps, new_generic, use_owner)
from mlir_sym.passes.registry import SymPass, register




def _identity(m: ir.AffineMap) -> bool:
    return m.n_symbols == 0 and str(m) == str(ir.AffineMap.get_identity(m.n_dims))


def _permutation(m: ir.AffineMap) -> bool:
    return m.n_symbols == 0 and m.is_permutation


_MAX_BROADCAST_BODY = 6  # a producer read through a broadcast is recomputed per consumer element


def _broadcast(m: ir.AffineMap, rank: int) -> bool:
    """Whether `m` reads a rank-`rank` tensor through distinct loop dims or 0 (a broadcast unit dim),
    at least one loop of the consumer not among them (otherwise it is a permutation)."""
    if m.n_symbols != 0 or len(m.results) != rank:
        return False
    dims = [e.position for e in m.results if isinstance(e, ir.AffineDimExpr)]
    zeros = [e for e in m.results if isinstance(e, ir.AffineConstantExpr) and e.value == 0]
    return len(dims) + len(zeros) == rank and len(set(dims)) == len(dims) and len(dims) < m.n_dims


def _reads_ok(m: ir.AffineMap, p: ir.Operation) -> bool:
    """Whether a consumer reading P's result through `m` may take P's body: a permutation of P's
    loops, or, for a producer of a few ops without inputs (an arange of a causal mask, [s, 1] and
    [1, s] at a dynamic batch), a broadcast."""
    rank = indexing_maps(p)[-1].n_dims
    if _permutation(m) and m.n_dims == rank:
        return True
    body = list(p.regions[0].blocks[0].operations)
    return _n_inputs(p) == 0 and len(body) <= _MAX_BROADCAST_BODY and _broadcast(m, rank)


def _compose(m: ir.AffineMap, perm: ir.AffineMap) -> ir.AffineMap:
    """P's input map `m` (over P's loops, which are its identity output's dims) seen from the loops of
    a consumer reading that output through the permutation `perm`: P's loop k is `perm`'s result k,
    in every expression of `m` (a `d1 mod 8` of sym-concat-to-select too, not only bare dims)."""
    return ir.AffineMap.get(perm.n_dims, 0, [e.compose(perm) for e in m.results])


def _elementwise(g: ir.Operation | None) -> bool:
    if g is None or g.name != "linalg.generic" or not g.results:
        return False
    if not all(isinstance(r.type, ir.RankedTensorType) for r in g.results):
        return False
    if not all("parallel" in str(a) for a in ir.ArrayAttr(g.attributes["iterator_types"])):
        return False
    return all(len(o.operation.regions) == 0 for o in g.regions[0].blocks[0].operations)


_MAX_COPIED_BODY = 12  # as sym-duplicate-elementwise: a producer copied into several consumers


_CONTRACTION_OPS = {"arith.extf", "arith.mulf", "arith.addf", "linalg.yield"}


def _contracts(g: ir.Operation, bodies: tuple) -> bool:
    """Whether `g` reduces and `bodies` (its own, or its own and a producer's fused in) make
    sym-gpu-library-calls' contraction body (`out + a * b`, with conversions)."""
    if all("parallel" in str(a) for a in ir.ArrayAttr(g.attributes["iterator_types"])):
        return False
    names = {o.operation.name for b in bodies for o in b.regions[0].blocks[0].operations}
    return "arith.mulf" in names and names <= _CONTRACTION_OPS


def _contraction(g: ir.Operation) -> bool:
    """A reduction whose body is `out + a * b`: sym-gpu-library-calls makes it a cuBLAS call, which a
    fused producer would prevent."""
    return _contracts(g, (g,))


def _would_contract(p: ir.Operation, c: ir.Operation) -> bool:
    """Whether fusing P into the reduction C makes a contraction's body (`(x * x[0]).sum(0)`): it would
    become a library call of an equation cuBLAS does not take, instead of our column reduction."""
    return _contracts(c, (p, c))


def _consumer(g: ir.Operation) -> bool:
    """A generic on tensors a producer may be fused into: elementwise, or a reduction other than a
    contraction (softmax's max and sum of the scaled scores)."""
    if g.name != "linalg.generic" or not g.results:
        return False
    if not all(isinstance(r.type, ir.RankedTensorType) for r in g.results) or _contraction(g):
        return False
    return all(len(o.operation.regions) == 0 for o in g.regions[0].blocks[0].operations)


def _n_inputs(g: ir.Operation) -> int:
    return len(g.operands) - len(g.results)


def _size_operands(p: ir.Operation, c: ir.Operation, perm: ir.AffineMap, maps: list[ir.AffineMap]) -> list | None:
    """The inputs the fused generic needs besides `maps` (its other operands') for linalg to know
    every loop's size: none when those cover the loops; else, for each loop only P's result had
    (a reduction over the vocabulary of cross entropy's one-hot gradient, whose inputs are [N, 1]),
    a 1-d `tensor.empty` of that size (P's `outs` dim) read through that loop and never loaded:
    its dim folds to the size, and the empty tensor goes. None when a loop is no dim of P's."""
    seen = {r.position for m in maps for r in m.results if isinstance(r, ir.AffineDimExpr)}
    missing = [d for d in range(perm.n_dims) if d not in seen]
    dims = [next((k for k, e in enumerate(perm.results) if isinstance(e, ir.AffineDimExpr) and e.position == d), None)
            for d in missing]
    if None in dims:
        return None
    sizes = []
    init = p.operands[_n_inputs(p)]
    t = ir.RankedTensorType(init.type)
    for d, k in zip(missing, dims):
        with ir.InsertionPoint(c), c.location:
            if t.is_dynamic_dim(k):
                n = tensor.DimOp(init, arith.ConstantOp(ir.IndexType.get(), k).result).result
                e = tensor.EmptyOp([n], t.element_type).result
            else:
                e = tensor.EmptyOp([t.shape[k]], t.element_type).result
        sizes.append((e, ir.AffineMap.get(perm.n_dims, 0, [ir.AffineDimExpr.get(d)])))
    return sizes




@register
class FuseElementwiseChains(SymPass):
    """Fuse elementwise linalg.generics into their consumers (elementwise, or reductions but contractions) where upstream fusion did not."""

    name = "sym-fuse-elementwise-chains"
    options = {"max-reads": int}
    max_reads = MAX_COPIED_READS  # tensors a copy into one of several consumers may load at every element

    def run(self, op: ir.Operation) -> None:
        for fn in compute_funcs(op):
            for block in fn.operation.regions[0].blocks:
                changed = True
                while changed:  # sweeps until one fuses nothing (a sweep is linear: a fusion erases
                    changed = False  # the consumer, replaced in place, and producers already passed)
                    for child in list(block.operations):
                        c = child.operation
                        while c is not None and _consumer(c):
                            c = self._fuse_one(c)
                            changed = changed or c is not None

    def _fuse_one(self, c: ir.Operation) -> ir.Operation | None:
        """Fuse the first fusable producer of `c`'s inputs into it; the fused op, or None."""
        cmaps = indexing_maps(c)
        n_in = _n_inputs(c)
        for i in range(n_in):
            p = defining_op(c.operands[i])
            if p is None or p.block != c.block or not self._producer_ok(p, c, getattr(self, "max-reads", self.max_reads)):
                continue
            if not _reads_ok(cmaps[i], p):
                continue
            value = c.operands[i]
            reads = [j for j in range(n_in) if c.operands[j] == value]
            if any(str(cmaps[j]) != str(cmaps[i]) for j in reads):
                continue
            pins = [_compose(m, cmaps[i]) for m in indexing_maps(p)[:_n_inputs(p)]]
            if _would_contract(p, c):
                continue
            sizes = _size_operands(p, c, cmaps[i], pins + [cmaps[j] for j in range(len(cmaps)) if j not in reads])
            if sizes is None:
                continue
            fused = self._fuse(p, c, reads, pins, cmaps[i], sizes)
            self.bump("generics-fused")
            return fused
        return None

    @staticmethod
    def _producer_ok(p: ir.Operation, c: ir.Operation, max_reads: int) -> bool:
        if not _elementwise(p) or len(p.results) != 1:
            return False
        pmaps = indexing_maps(p)
        if not _identity(pmaps[-1]):
            return False
        body = p.regions[0].blocks[0]
        if len(list(body.arguments[_n_inputs(p)].uses)) != 0:  # reads its outs value
            return False
        others = 0
        for u in p.results[0].uses:
            owner = use_owner(u)
            if owner.name == "tensor.dim":
                continue
            if u.operand_number >= _n_inputs(owner) or not _consumer(owner) or owner.block != p.block \
                    or not _reads_ok(indexing_maps(owner)[u.operand_number], p):
                return False
            others += owner != c
        # several consumers: each gets its own copy of P's body (cheap arithmetic, not a buffer); not a
        # checked gather's (its bounds asserts are calls: every copy would check, and load, again),
        # nor one loading more tensors than writing P once costs (max-reads)
        return others == 0 or (len(list(body.operations)) <= _MAX_COPIED_BODY
                               and not any(o.operation.name == "func.call" for o in body.operations)
                               and len(full_reads(p)) <= max_reads)

    @staticmethod
    def _fuse(p: ir.Operation, c: ir.Operation, reads: list[int], pins: list[ir.AffineMap],
              perm: ir.AffineMap, sizes: list) -> ir.Operation:
        p_in, c_in = _n_inputs(p), _n_inputs(c)
        init = p.operands[p_in]
        keep = [j for j in range(c_in) if j not in reads]
        ins = list(p.operands[:p_in]) + [c.operands[j] for j in keep] + [v for v, _ in sizes]
        outs = list(c.operands[c_in:])
        cmaps = indexing_maps(c)
        maps = pins + [cmaps[j] for j in keep] + [m for _, m in sizes] + cmaps[c_in:]
        fused = new_generic(c, [r.type for r in c.results], ins, outs, maps, c.attributes["iterator_types"])
        pb, cb = p.regions[0].blocks[0], c.regions[0].blocks[0]
        types = [a.type for a in pb.arguments[:p_in]] + [cb.arguments[j].type for j in keep] + \
                [ir.RankedTensorType(v.type).element_type for v, _ in sizes] + [a.type for a in cb.arguments[c_in:]]
        block = fused.regions[0].blocks.append(*types)
        mapping: dict = {}
        for k in range(p_in):
            mapping[pb.arguments[k]] = block.arguments[k]
        for n, j in enumerate(keep):
            mapping[cb.arguments[j]] = block.arguments[p_in + n]
        for k in range(len(outs)):
            mapping[cb.arguments[c_in + k]] = block.arguments[p_in + len(keep) + len(sizes) + k]
        with ir.InsertionPoint(block):
            for o in pb.operations:
                o = o.operation
                if o.name == "linalg.yield":
                    produced = mapping[o.operands[0]] if o.operands[0] in mapping else o.operands[0]
                    for j in reads:
                        mapping[cb.arguments[j]] = produced
                    continue
                if o.name == "linalg.index":  # P's loop k is C's loop perm.results[k], or 0 (broadcast)
                    e = perm.results[ir.IntegerAttr(o.attributes["dim"]).value]
                    if not isinstance(e, ir.AffineDimExpr):
                        with o.location:
                            mapping[o.results[0]] = arith.ConstantOp(ir.IndexType.get(), 0).result
                        continue
                    clone_remapped(o, mapping)
                    mapping[o.results[0]].owner.attributes["dim"] = ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(64), e.position)
                    continue
                clone_remapped(o, mapping)
            for o in cb.operations:
                clone_remapped(o.operation, mapping)
        for old, new in zip(c.results, fused.results):
            old.replace_all_uses_with(new)
        c.erase()
        if all(use_owner(u).name == "tensor.dim" for u in p.results[0].uses):
            for u in list(p.results[0].uses):  # the dims of P's result are those of its outs operand
                use_owner(u).operands[0] = init
            p.erase()
        return fused

