"""Lower `aten.unflatten.int` whose result has several dynamic dims to an exact `tensor.expand_shape`
(on the torch dialect, before torch-mlir's backend pipeline).

With a dynamic batch, every linear layer of a transformer flattens [b, s, d] to [b*s, d] and
unflattens its result back to [b, s, n] (`fx_rewrites.views_to_collapse_split` makes GPT-2's views
these exact flattens and unflattens). torch-mlir lowers an unflatten into two or more dynamic sizes as
a `tensor.reshape` to a shape built at run time: bufferized, a `memref.reshape` that needs an
identity layout (a copy of any strided operand, a `torch.empty` on the GPU), and sizes the rest of
the program cannot relate to its own (`reshape(-1)` inference at run time), so fusion, row groups
and sibling fusion stopped at every such reshape (GPT-2 at batch 2: 29 allocations a call, 17
with this pass; none at batch 1, where the batch is the static 1). The unflatten is an `expand_shape` whose group
of dims at `dim` takes the given sizes (the others the input's), which this pass builds directly:
`torch_c.to_builtin_tensor` of the input, the expand with its output sizes (`torch_c.to_i64` of the
symbolic ones, `tensor.dim`s of the input for the dims outside the group), and
`torch_c.from_builtin_tensor` of the result. Unflattens with a `-1` or a non-constant `dim`, and
those whose result has at most one dynamic dim, are left to torch-mlir. This includes the heads
split beside two dynamic dims ([b, s, 256] to [b, s, 4, 64], constant sizes in the group): lowering
it here first cost batch 1 six launch sites, because the `tensor.dim` sizes made here were values
torch-mlir's broadcast checks could not relate to their own (a size assert stayed, the causal mask
was materialized); sym-assert-elim now reads dims through expands and the SymInt arguments' facts,
and sym-unify-sizes makes equal sizes one value, so both batch 1 and a dynamic batch gain.

Before:
  %l = torch.prim.ListConstruct %s0, %s1 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %int0, %l : !torch.vtensor<[?,12],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,12],f32>
After:
  %b = torch_c.to_builtin_tensor %x : !torch.vtensor<[?,12],f32> -> tensor<?x12xf32>
  %e = tensor.expand_shape %b [[0, 1], [2]] output_shape [%i0, %i1, 12] : tensor<?x12xf32> into tensor<?x?x12xf32>
  %y = torch_c.from_builtin_tensor %e : tensor<?x?x12xf32> -> !torch.vtensor<[?,?,12],f32>
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, tensor

from mlir_sym.passes._compute_common import defining_op, ops_named
from mlir_sym.passes.registry import SymPass, register
from mlir_sym.passes.torch_elementwise_math import _builtin, _parse


def _const_int(v: ir.Value) -> int | None:
    o = defining_op(v)
    if o is None or o.name != "torch.constant.int":
        return None
    return ir.IntegerAttr(o.attributes["value"]).value


@register
class TorchUnflatten(SymPass):
    """Lower aten.unflatten.int with several dynamic result dims to an exact tensor.expand_shape."""

    name = "sym-torch-unflatten"

    def run(self, op: ir.Operation) -> None:
        for o in ops_named(op, {"torch.aten.unflatten.int"}):
            if self._lower(o):
                self.bump("unflattens-lowered")

    @staticmethod
    def _lower(o: ir.Operation) -> bool:  # noqa: C901
        src, res = _parse(o.operands[0].type), _parse(o.results[0].type)
        k = _const_int(o.operands[1])
        lst = defining_op(o.operands[2])
        if src is None or res is None or k is None or lst is None or lst.name != "torch.prim.ListConstruct":
            return False
        (sdims, elem), (rdims, _) = src, res
        sizes = list(lst.operands)
        k = k + len(sdims) if k < 0 else k
        if not (0 <= k < len(sdims)) or len(rdims) != len(sdims) + len(sizes) - 1:
            return False
        consts = [_const_int(v) for v in sizes]
        if any(c is not None and c < 0 for c in consts) or sum(d is None for d in rdims) < 2:
            return False
        groups = [[d] for d in range(k)] + [list(range(k, k + len(sizes)))] + \
                 [[d + len(sizes) - 1] for d in range(k + 1, len(sdims))]
        with ir.InsertionPoint(o), o.location:
            b = ir.Operation.create("torch_c.to_builtin_tensor", results=[_builtin(sdims, elem)],
                                    operands=[o.operands[0]]).result
            idx = ir.IndexType.get()
            dynamic, static = [], []
            for d, rd in enumerate(rdims):
                if rd is not None:  # static in the result's type
                    static.append(rd)
                    continue
                if k <= d < k + len(sizes):
                    i64 = ir.Operation.create("torch_c.to_i64", results=[ir.IntegerType.get_signless(64)],
                                              operands=[sizes[d - k]]).result
                    dynamic.append(arith.index_cast(idx, i64))
                else:
                    sd = d if d < k else d - len(sizes) + 1
                    dynamic.append(tensor.dim(b, arith.constant(idx, sd)))
                static.append(ir.ShapedType.get_dynamic_size())
            rtype = _builtin(rdims, elem)
            # expand_shape wants a group's source dim static exactly when all its result dims are (a
            # dim typed dynamic but guarded static, or the mirror case, was invalid IR): a cast first
            want = []
            for g in groups:
                sizes_g = [rdims[d] for d in g]
                want.append(None if any(x is None for x in sizes_g) else _product(sizes_g))
            if want != list(sdims):
                b = tensor.CastOp(_builtin(want, elem), b).result
            reassoc = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d)
                                                          for d in g]) for g in groups])
            e = tensor.ExpandShapeOp(rtype, b, reassoc, dynamic, static).result
            back = ir.Operation.create("torch_c.from_builtin_tensor", results=[o.results[0].type],
                                       operands=[e]).result
        o.results[0].replace_all_uses_with(back)
        o.erase()
        return True


def _product(xs: list[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p
