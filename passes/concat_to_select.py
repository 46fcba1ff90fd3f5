"""Write a `tensor.concat` of equal-sized pieces as one elementwise `linalg.generic` that selects its piece.

A concat of k inputs of the same constant size n along dim d is, element by element,
`out[.., j, ..] = x_{j floordiv n}[.., j mod n, ..]`: a generic over the result that reads every
input through the map `j -> j mod n` and selects by `j < n`, `j < 2n`, ... As an elementwise op it
fuses both ways (linalg-fuse-elementwise-ops): an elementwise producer of an input is computed in
it (its operands read through `j mod n` too, slices of one tensor as views), and the consumers of
the result compute it in their own loop. Rotary position embeddings (Llama, Mistral, Qwen:
`rotate_half(q) = cat(-q[.., n:], q[.., :n])`, then `q * cos + rotate_half(q) * sin`, and
`cat(freqs, freqs)` for cos / sin) become one kernel per q or k, where the insert_slices of
sym-decompose-concat left a kernel for the negated half, a copy for the other half and a buffer
the product re-read.

Applied when the pieces' sizes along d are the same constant (from their types or folded from the
index arithmetic that computed them) and no piece is produced by a non-elementwise op (a
contraction or reduction writes its slice in place through sym-decompose-concat instead, no copy).
Other concats are left to sym-decompose-concat.

Before:
  %r = tensor.concat dim(1) %a, %b : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x64xf32>
After:
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %r = linalg.generic {indexing_maps = [(i, j) -> (i, j mod 32), (i, j) -> (i, j mod 32), (i, j) -> (i, j)]}
         ins(%a, %b) outs(%e) {
    %j = linalg.index 1; %first = arith.cmpi ult, %j, %c32; select %first, %in_a, %in_b }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from mlir_sym.passes._compute_common import defining_op, ops_named
from mlir_sym.passes.registry import SymPass, register

_FOLDABLE = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
             "arith.minsi": min, "arith.maxsi": max, "arith.minui": min, "arith.maxui": max,
             "arith.floordivsi": lambda a, b: a // b if b else None}


def _constant(v: ir.Value, depth: int = 0) -> int | None:
    """The value of an integer / index `v` when the ops computing it fold to a constant (torch-mlir
    computes a slice's size as max(size - min(size, start), 0) of dims whose sizes are constants)."""
    if depth > 16:
        return None
    op = defining_op(v)
    if op is None:
        return None
    name = op.name
    if name == "arith.constant":
        attr = op.attributes["value"]
        return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None
    if name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"):
        return _constant(op.operands[0], depth + 1)
    if name in _FOLDABLE:
        a, b = (_constant(x, depth + 1) for x in op.operands)
        return None if a is None or b is None else _FOLDABLE[name](a, b)
    if name == "tensor.dim":
        k = _constant(op.operands[1], depth + 1)
        return None if k is None else _dim(op.operands[0], k, depth + 1)
    return None


def _dim(t: ir.Value, k: int, depth: int = 0) -> int | None:
    """Dim `k` of tensor `t` when it is a constant: from its type, or from the op that made it."""
    shape = ir.RankedTensorType(t.type).shape
    if k >= len(shape):
        return None
    if shape[k] != ir.ShapedType.get_dynamic_size():
        return shape[k]
    if depth > 16:
        return None
    op = defining_op(t)
    if op is None:
        return None
    if op.name == "tensor.empty":
        dyn = [i for i, s in enumerate(shape) if s == ir.ShapedType.get_dynamic_size()]
        return _constant(op.operands[dyn.index(k)], depth + 1)
    if op.name == "linalg.generic" and len(op.results) == 1:
        return _dim(op.operands[len(op.operands) - 1], k, depth + 1)  # its init has the result's shape
    if op.name in ("tensor.extract_slice", "tensor.expand_shape"):
        attr = "static_sizes" if op.name == "tensor.extract_slice" else "static_output_shape"
        static = ir.DenseI64ArrayAttr(op.attributes[attr])
        if len(static) != len(shape):
            return None  # a rank-reducing slice: its sizes are the source's dims, not the result's
        if static[k] != ir.ShapedType.get_dynamic_size():
            return static[k]
        dynamic = [i for i in range(len(static)) if static[i] == ir.ShapedType.get_dynamic_size()]
        first = 1 if op.name == "tensor.expand_shape" else 1 + len(_dynamic_offsets(op))
        return _constant(op.operands[first + dynamic.index(k)], depth + 1)
    return None


def _dynamic_offsets(op: ir.Operation) -> list[int]:
    static = ir.DenseI64ArrayAttr(op.attributes["static_offsets"])
    return [i for i in range(len(static)) if static[i] == ir.ShapedType.get_dynamic_size()]


def _elementwise_or_view(v: ir.Value) -> bool:
    """Whether the piece costs no more inside the generic than before: a view, an argument, or an
    all-parallel linalg.generic (fused in); not a contraction, reduction or other op."""
    op = defining_op(v)
    if op is None or op.name in ("tensor.extract_slice", "tensor.expand_shape", "tensor.collapse_shape",
                                 "tensor.cast", "arith.constant"):
        return True
    if op.name != "linalg.generic":
        return False
    return all("parallel" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"]))


@register
class ConcatToSelect(SymPass):
    """Rewrite a tensor.concat of equal constant-size pieces as an elementwise linalg.generic that selects by index (fusable)."""

    name = "sym-concat-to-select"

    def run(self, op: ir.Operation) -> None:
        for c in ops_named(op, {"tensor.concat"}):
            d = ir.IntegerAttr(c.attributes["dim"]).value
            pieces = list(c.operands)
            sizes = {_dim(v, d) for v in pieces}
            if len(pieces) < 2 or len(sizes) != 1 or None in sizes or 0 in sizes:
                continue
            if not all(_elementwise_or_view(v) for v in pieces):
                self.bump("concats-kept")
                continue
            self._rewrite(c, d, sizes.pop())
            self.bump("concats-as-selects")

    @staticmethod
    def _rewrite(c: ir.Operation, d: int, n: int) -> None:
        rt = ir.RankedTensorType(c.results[0].type)
        rank = rt.rank
        pieces = list(c.operands)
        idx = ir.IndexType.get()
        with ir.InsertionPoint(c), c.location:
            sizes: list = []  # the result's static dims as ints, its dynamic ones as values
            for k in range(rank):
                if rt.shape[k] != ir.ShapedType.get_dynamic_size():
                    sizes.append(rt.shape[k])
                elif k == d:
                    sizes.append(arith.ConstantOp(idx, n * len(pieces)).result)
                else:
                    sizes.append(tensor.DimOp(pieces[0], arith.ConstantOp(idx, k).result).result)
            init = tensor.EmptyOp(sizes, rt.element_type).result
            dims = [ir.AffineDimExpr.get(k) for k in range(rank)]
            piece_map = ir.AffineMap.get(rank, 0, [ir.AffineModExpr.get(dims[k], ir.AffineConstantExpr.get(n))
                                                   if k == d else dims[k] for k in range(rank)])
            maps = [piece_map] * len(pieces) + [ir.AffineMap.get_identity(rank)]
            parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
            generic = ir.Operation.create(
                "linalg.generic", results=[rt], operands=pieces + [init],
                attributes={"indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                            "iterator_types": ir.ArrayAttr.get([parallel] * rank),
                            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(pieces), 1])},
                regions=1)
            body = generic.regions[0].blocks.append(*([rt.element_type] * (len(pieces) + 1)))
            with ir.InsertionPoint(body):
                j = linalg.IndexOp(d).result
                value = body.arguments[len(pieces) - 1]
                for i in range(len(pieces) - 2, -1, -1):
                    first = arith.CmpIOp(arith.CmpIPredicate.ult, j, arith.ConstantOp(idx, (i + 1) * n).result).result
                    value = arith.SelectOp(first, body.arguments[i], value).result
                linalg.YieldOp([value])
        c.results[0].replace_all_uses_with(generic.results[0])
        c.erase()
