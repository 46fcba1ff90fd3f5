"""Make equal sizes one SSA value: every index value of a compute function's entry block whose size
expression (read under the argument facts, as sym-assert-elim reads them) equals an earlier value's is
replaced by that earlier value.

torch-mlir sizes each op from its own operands: one size is a `tensor.dim` of a reshape here, an
`index_cast` of a SymInt argument there, an `affine.apply` of another dim elsewhere, all the same
symbol. Passes that compare loop sizes by value (sym-fuse-siblings' loop keys, the row groups of
sym-gpu-map-parallel, elementwise fusion's reifications) then see different sizes where there is
one, and with a dynamic batch (GPT-2's [b, s, 256] split into heads: the batch and the length come
from the SymInt arguments and from tensor dims) the q, k and v bias adds stayed three launches, the
residual adds apart from their layer norms. The guard function has checked the facts before any
compute runs, so equal expressions are equal values.

With the sizes known, a `tensor.expand_shape` that undoes the `tensor.collapse_shape` it reads (the same
groups, output sizes equal to the collapse source's dims) is that source: upstream folds such a pair
only when a group has at most one dynamic dim, and elementwise fusion's reshape propagation leaves one
around every linear layer's result at a dynamic batch ([b, s, 768] collapsed to [b*s, 768] and
expanded back), which hid GPT-2's q, k, v slices from sym-split-sliced-generics. The pass runs again
after fusion for those, with `values=0`: only reshapes then (a `tensor.dim` that upstream fusion left is a
user that keeps it from fusing a producer into a contraction, see sym-fuse-elementwise-chains). A pair
that a contraction reads stays: upstream fusion, which runs again after sym-split-sliced-generics,
would fuse the source's producer into it (a layer norm into the next linear layer's contraction,
which then is no library call).

Only values defined directly in the entry block are replaced (an earlier value there dominates every
later use, nested regions included), and only by one of the same type. A `tensor.dim` is read through
its producers (empties, reshapes, slices, casts, a linalg op's `outs`) down to an argument's fact or
a static size, a SymInt argument through its `sym.int`; what the reader cannot express is a value of
its own, equal only to itself. A size the facts fix (a dim bound to "4") becomes an earlier
`arith.constant` of its type.

Before (the facts: %arg0 is s0, dim 0 of %x is s0):
  %b = arith.index_cast %arg0 : i64 to index
  %d = tensor.dim %x, %c0 : tensor<?x256xf32>
  %e = tensor.empty(%d) : tensor<?x256xf32>
After:
  %b = arith.index_cast %arg0 : i64 to index
  %e = tensor.empty(%b) : tensor<?x256xf32>
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import compute_funcs, defining_op, use_owner
from mlir_sym.passes.assert_elim import size_reader
from mlir_sym.passes.canonicalize import declared_ranges, module_of, recorded_ranges
from mlir_sym.passes.fuse_elementwise_chains import _contraction
from mlir_sym.passes.registry import SymPass, register

_SIZE_OPS = ("tensor.dim", "memref.dim", "arith.index_cast", "arith.index_castui", "affine.apply",
             "arith.addi", "arith.subi", "arith.muli", "arith.floordivsi", "arith.ceildivsi", "arith.divsi",
             "arith.remsi", "arith.minsi", "arith.maxsi", "arith.constant", "arith.extsi", "arith.trunci")


@register
class UnifySizes(SymPass):
    """Replace index values equal (under the size facts) to an earlier one by that value; fold reshape pairs that restore their source (option values=0: only those)."""

    name = "sym-unify-sizes"
    options = {"values": bool}
    values = True

    def run(self, op: ir.Operation) -> None:
        declared, recorded = declared_ranges(module_of(op)), recorded_ranges(module_of(op))
        for fn in compute_funcs(op):
            reader = size_reader(fn, declared, recorded)
            first: dict = {}
            for child in list(fn.regions[0].blocks[0].operations) if self.values else []:
                o = child.operation
                if o.name not in _SIZE_OPS or len(o.results) != 1:
                    continue
                v = o.results[0]
                if not isinstance(v.type, (ir.IndexType, ir.IntegerType)) or str(v.type) == "i1":
                    continue
                expr = reader.int(v)  # unknown values are symbols of their own: equal only to themselves
                key = (str(v.type), str(expr))
                if key not in first:
                    first[key] = v
                    continue
                if list(v.uses):
                    v.replace_all_uses_with(first[key])
                    self.bump("sizes-unified")
            for o in [c.operation for c in fn.regions[0].blocks[0].operations]:
                if o.name == "tensor.expand_shape" and self._restores(o, reader):
                    collapse = defining_op(o.operands[0])
                    o.results[0].replace_all_uses_with(collapse.operands[0])
                    o.erase()
                    if not list(collapse.results[0].uses):  # a dead user would hide the source's other
                        collapse.erase()  # users from the passes that count them
                    self.bump("reshapes-folded")

    @staticmethod
    def _restores(expand: ir.Operation, reader) -> bool:
        """Whether `expand` undoes the `tensor.collapse_shape` it reads: the same groups, and output
        sizes equal to the collapse's source dims under the facts."""
        collapse = defining_op(expand.operands[0])
        if collapse is None or collapse.name != "tensor.collapse_shape" or collapse.operands[0].type != expand.results[0].type:
            return False
        if str(collapse.attributes["reassociation"]) != str(expand.attributes["reassociation"]):
            return False
        for u in expand.results[0].uses:  # not in front of a contraction: the second elementwise
            user = use_owner(u)  # fusion would fuse the source's producer into it (a layer norm into
            if user.name == "linalg.generic" and _contraction(user):  # the next matmul)
                return False
        src = collapse.operands[0]
        shape = ir.RankedTensorType(src.type).shape
        sizes = list(expand.operands)[1:]
        k = 0
        for d, n in enumerate(shape):
            if n != ir.ShapedType.get_dynamic_size():
                continue
            if k >= len(sizes) or reader.int(sizes[k]) != reader.dim(src, d):
                return False
            k += 1
        return True
