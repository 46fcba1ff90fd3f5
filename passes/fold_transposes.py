"""Fold `linalg.transpose` on tensors into the generics that read it or into the generic that makes
its input, so that a permute is not a kernel of its own.

`linalg-fuse-elementwise-ops` fuses generics only, so a transpose (torch's permute, `x.transpose`,
`k.transpose(-1, -2)`) stayed a launch that reads and writes the whole tensor. In attention that was
the bias add of each q/k/v projection followed by the permute into heads (two launches a
projection), the `k^T` copy before `q @ k^T`, and the permuted weights of a generalized contraction
(BERT's `[4, 64, 256]` views of a projection weight) copied at every call before the einsum call.
Runs after elementwise fusion (reshapes are propagated by then), in two ways, until nothing changes:

- into the readers: when only `linalg.generic`s read the transpose, as inputs (and shape queries:
  `tensor.dim`s, reshapes only `tensor.dim`s read, which then ask the transpose's init), each reads the
  transpose's input through the composed indexing map (a contraction keeps its `out + a * b` body,
  so sym-gpu-library-calls still makes it a library call, whose runtime reads the strided view);
- into the producer: otherwise, when the input is the only use of an all-parallel generic's result
  (whose body does not read its output), that generic writes the transposed layout itself: its init
  becomes the transpose's and its output map the composed one.

A `linalg.matmul` / `linalg.batch_matmul` reading the transpose of a computed tensor (of one element
type, floats, or half operands accumulated in float32) is first written as the `linalg.generic` it stands for, which then reads the
transpose's input: the gradient of a tied output head, `grad_logits^T @ h`, was a kernel copying
[tokens, vocab] transposed before the library call; cuBLAS reads the strided operand itself (the
runtime's einsum). The transpose of a function argument (nn.Linear's weight) stays for
sym-gpu-library-calls, whose matmul call reads it as a transposed view.

Nothing is fused beyond that: a contraction never absorbs an elementwise producer here (its library
call would be lost).

Before:
  %y = linalg.generic {... ["parallel" x4]} ins(%x, %b) outs(%e0) {addf} -> tensor<1x?x4x64xf32>
  %t = linalg.transpose ins(%y : tensor<1x?x4x64xf32>) outs(%e1 : tensor<1x4x?x64xf32>) permutation = [0, 2, 1, 3]
After:
  %t = linalg.generic {indexing_maps = [..., affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>], ...}
      ins(%x, %b) outs(%e1) {addf} -> tensor<1x4x?x64xf32>
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import NAMED_CONTRACTION_MAPS, clone_remapped, defining_op, new_generic, ops_named
from mlir_sym.passes.registry import SymPass, register


def _user(u) -> ir.Operation:
    return u.owner.operation if hasattr(u.owner, "operation") else u.owner


def _maps(g: ir.Operation) -> list[ir.AffineMap]:
    if "indexing_maps" not in g.attributes and g.name in NAMED_CONTRACTION_MAPS:
        # the default maps: sym-matmul-half-operands builds its bf16 products without the attribute
        # (a linear layer under autocast reads its weight's bf16 cast transposed)
        return [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{m}>")).value for m in NAMED_CONTRACTION_MAPS[g.name]]
    return [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]


def _set_maps(g: ir.Operation, maps: list[ir.AffineMap]) -> None:
    g.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def _n_inputs(g: ir.Operation) -> int:
    return len(g.opview.inputs)


def _all_parallel(g: ir.Operation) -> bool:
    return all("parallel" in str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"]))


_CONTRACTIONS = {"linalg.matmul": 2, "linalg.batch_matmul": 3}  # named op -> its parallel dims


def _generalizable(o: ir.Operation) -> bool:
    """A named matmul on tensors whose operands share one float element type and whose body is the
    plain `out + a * b` (no casts), or whose inputs share one half type and accumulate in float32
    (`out + extf(a) * extf(b)`: sym-matmul-half-operands' form of a bf16 / f16 product)."""
    types = [v.type for v in o.operands]
    if not all(isinstance(t, ir.RankedTensorType) for t in types) or len(o.results) != 1:
        return False
    a, b, out = (str(ir.RankedTensorType(t).element_type) for t in types[:3])
    body = [c.operation.name for c in o.regions[0].blocks[0].operations]
    if a == b == out and out in ("f32", "f64", "f16", "bf16"):
        return body == ["arith.mulf", "arith.addf", "linalg.yield"]
    if a == b and a in ("f16", "bf16") and out == "f32":
        return body == ["arith.extf", "arith.extf", "arith.mulf", "arith.addf", "linalg.yield"]
    return False


def _generalize(o: ir.Operation) -> ir.Operation:
    """The `linalg.generic` a named matmul stands for (its indexing maps and body), replacing it."""
    npar = _CONTRACTIONS[o.name]
    its = ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>")
                            for k in ["parallel"] * npar + ["reduction"]])
    g = new_generic(o, [o.results[0].type], list(o.operands)[:2], [o.operands[2]], _maps(o), its)
    old = o.regions[0].blocks[0]
    block = g.regions[0].blocks.append(*[a.type for a in old.arguments])
    mapping = dict(zip(old.arguments, block.arguments))
    with ir.InsertionPoint(block), o.location:
        for c in old.operations:
            clone_remapped(c.operation, mapping)
    o.results[0].replace_all_uses_with(g.results[0])
    o.erase()
    return g


def _asks_shape_only(o: ir.Operation) -> bool:
    """A `tensor.dim`, or a reshape whose results only such ops read: what it computes depends on its
    source's shape alone, which the transpose's init has too (reshapes left to read a dim of the
    result, e.g. q @ k^T's sizes, kept the transpose a kernel of its own)."""
    if o.name == "tensor.dim":
        return True
    if o.name not in ("tensor.collapse_shape", "tensor.expand_shape"):
        return False
    return all(_asks_shape_only(_user(u)) for r in o.results for u in r.uses)


@register
class FoldTransposes(SymPass):
    """Fold linalg.transpose on tensors into the generics reading it or into the all-parallel generic making its input."""

    name = "sym-fold-transposes"
    # arguments=1: transposes of function arguments too (nn.Linear's weight), the CPU's: its loops
    # read the weight where it is (sym-cpu-accumulators then vectorizes the dot products) instead of
    # copying it transposed at every call (a Llama head's [8000, 256]: 5 of a decode step's 15 ms)
    options = {"arguments": int}
    arguments = 0

    def run(self, op: ir.Operation) -> None:
        changed = True
        while changed:
            changed = False
            for t in ops_named(op, {"linalg.transpose"}):
                if len(t.results) != 1 or not isinstance(t.results[0].type, ir.RankedTensorType):
                    continue  # on buffers
                if self._into_readers(t):
                    self.bump("into-readers")
                    changed = True
                elif self._into_producer(t):
                    self.bump("into-producer")
                    changed = True

    @staticmethod
    def _perm(t: ir.Operation) -> list[int]:
        return list(ir.DenseI64ArrayAttr(t.attributes["permutation"]))

    def _into_readers(self, t: ir.Operation) -> bool:
        # a function argument's stays for the GPU's library calls (see the module doc)
        computed = self.arguments or not isinstance(t.operands[0].owner, ir.Block)
        for u in list(t.results[0].uses):
            o = _user(u)
            if computed and o.name in _CONTRACTIONS and u.operand_number < 2 and _generalizable(o):
                _generalize(o)
                self.bump("matmuls-generalized")
        uses = [(_user(u), u.operand_number) for u in t.results[0].uses]
        shape_only = [o for o, _ in uses if _asks_shape_only(o)]
        uses = [(o, n) for o, n in uses if not _asks_shape_only(o)]
        if not uses or any(o.name != "linalg.generic" or n >= _n_inputs(o) for o, n in uses):
            return False
        for o in shape_only:  # the transpose's init has its shape
            o.operands[0] = t.operands[1]
        perm = self._perm(t)
        inverse = [0] * len(perm)
        for j, k in enumerate(perm):
            inverse[k] = j
        src = t.operands[0]
        for o, n in uses:
            maps = _maps(o)
            m = maps[n]
            # the reader indexes the transpose's dim j with m.results[j]; the input's dim k is the
            # transpose's dim j with perm[j] == k
            maps[n] = ir.AffineMap.get(m.n_dims, m.n_symbols, [m.results[inverse[k]] for k in range(len(perm))])
            _set_maps(o, maps)
            o.operands[n] = src
        t.erase()
        return True

    def _into_producer(self, t: ir.Operation) -> bool:
        src = t.operands[0]
        g = defining_op(src)
        if g is None or g.name != "linalg.generic" or len(g.results) != 1 or not _all_parallel(g):
            return False
        if len(list(src.uses)) != 1:
            return False
        body = g.regions[0].blocks[0]
        if len(list(body.arguments[-1].uses)):
            return False  # the body reads its output: a new init would change what it computes
        maps = _maps(g)
        out = maps[-1]
        perm = self._perm(t)
        # the result's dim j is the input's dim perm[j], which the generic wrote at out.results[perm[j]]
        maps[-1] = ir.AffineMap.get(out.n_dims, out.n_symbols, [out.results[perm[j]] for j in range(len(perm))])
        g.move_before(t)  # the transpose's init may be defined after the generic
        _set_maps(g, maps)
        g.operands[_n_inputs(g)] = t.operands[1]
        g.results[0].set_type(t.results[0].type)
        t.results[0].replace_all_uses_with(g.results[0])
        t.erase()
        return True
