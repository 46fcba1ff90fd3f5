"""Carry `mlir_sym::attention` through torch-mlir's backend pipeline as one `tm_tensor.attention`
(on the torch dialect, before that pipeline; the GPU's fused attention kernel, sym-gpu-attention).

On the GPU the importer keeps each attention node our fused kernel serves (attention.py) and
torch-mlir's FX importer makes it an opaque `torch.operator "torch.mlir_sym.attention"` (q, k, v,
mask or none, is_causal, scale or none), which its backend pipeline cannot lower. This pass writes it
as a `tm_tensor.attention` (legal in the linalg-on-tensors contract; bufferized by tm-tensor-bufferize)
on builtin tensors, with the output's `tensor.empty` (q's batch dims and length, v's head dim) and
two attributes: `sym.causal` (bool) and `sym.scale` (f64; 1/sqrt(head dim) when none was given).
A mask becomes a `linalg.generic` that broadcasts it to the scores' shape (tm_tensor's verifier
compares the mask's dims with q's literally; the generic, and whatever fusion puts into it, is
computed inside sym-gpu-attention's kernel, not written).
`tm_tensor.attention`'s own semantics (no mask kinds, no causal, no scale) are not ours: only
sym-gpu-attention may lower what this pass makes, and sym-gpu-emulate-launches rejects it.

Before:
  %0 = torch.operator "torch.mlir_sym.attention"(%q, %k, %v, %none, %true, %none) : (...) -> !torch.vtensor<[1,4,?,64],f32>
After:
  %qb = torch_c.to_builtin_tensor %q : !torch.vtensor<[1,4,?,64],f32> -> tensor<1x4x?x64xf32>
  ...
  %l = tensor.dim %qb, %c2 : tensor<1x4x?x64xf32>
  %e = tensor.empty(%l) : tensor<1x4x?x64xf32>
  %r = tm_tensor.attention {sym.causal = true, sym.scale = 1.250000e-01 : f64}
         ins(%qb, %kb, %vb : ...) outs(%e : tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32>
  %0 = torch_c.from_builtin_tensor %r : tensor<1x4x?x64xf32> -> !torch.vtensor<[1,4,?,64],f32>

Training attention (attention.py `attention_forward`, `attention_backward`: q, k, v and grads in
[B, L, H, E]) has several results, which no tm_tensor op has: each becomes a `func.call` of a private
declaration tagged `sym.library_call = "sdpa_forward"` / `"sdpa_backward"` (`@__sym_sdpa_forward_<n>`)
on builtin tensors, with `sym.causal` and `sym.scale` (and the packed forward's `sym.heads`: it
takes the projection q, k, v are the heads of) on the call, and `sym.result_dims`: which operand
dims the results' dims are (sym-assert-elim proves torch-mlir's checks of them). sym-library-calls-to-buffers gives
the call buffers before bufferization; the GPU runtime calls PyTorch's memory-efficient kernels.

  %1:2 = torch.operator "torch.mlir_sym.attention_forward"(%q, %k, %v, %true, %float0.25) : (...) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>)
becomes
  %2:2 = func.call @__sym_sdpa_forward_0(%qb, %kb, %vb) {sym.causal = true, sym.scale = 2.500000e-01 : f64}
      : (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>)
"""
from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from mlir_sym.passes._compute_common import defining_op, library_declaration, new_generic, ops_named
from mlir_sym.passes.assert_elim import RESULT_DIMS_ATTR
from mlir_sym.passes.registry import SymPass, located_error, register
from mlir_sym.passes.torch_elementwise_math import _builtin, _name, _parse

OPERATOR = "torch.mlir_sym.attention"
# training attention's torch.operator names -> (sym.library_call kind, operand tensors); the packed
# forward's one tensor (the projection) is followed by the number of heads (`sym.heads`)
TRAINING = {"torch.mlir_sym.attention_forward": ("sdpa_forward", 3),
            "torch.mlir_sym.attention_forward_packed": ("sdpa_forward_packed", 1),
            "torch.mlir_sym.attention_backward": ("sdpa_backward", 6),
            "torch.mlir_sym.attention_backward_packed": ("sdpa_backward_packed", 6)}
# each result's dims as (operand, dim) of the call (sym.result_dims, which sym-assert-elim reads: the
# checks torch-mlir writes on the results' sizes go); (-1, -1): a static dim of the packed forms
_S = (-1, -1)
_RESULT_DIMS = {
    "sdpa_forward": [[(0, 0), (0, 1), (0, 2), (2, 3)], [(0, 0), (0, 2), (0, 1)]],  # out [B, L, H, Ev], lse [B, H, L]
    "sdpa_forward_packed": [[(0, 0), (0, 1), _S, _S], [(0, 0), _S, (0, 1)]],
    "sdpa_backward": [[(1, d) for d in range(4)], [(2, d) for d in range(4)], [(3, d) for d in range(4)]],
    "sdpa_backward_packed": [[(1, 0), (1, 1), _S]],
}


def _constant(v: ir.Value, what: str, at: ir.Operation) -> bool | float | None:
    o = defining_op(v)
    if o is not None and o.name == "torch.constant.none":
        return None
    if o is not None and o.name == "torch.constant.bool":
        return bool(ir.BoolAttr(o.attributes["value"]).value)
    if o is not None and o.name == "torch.constant.float":
        return ir.FloatAttr(o.attributes["value"]).value
    if o is not None and o.name == "torch.constant.int":
        return ir.IntegerAttr(o.attributes["value"]).value
    raise located_error(at, f"{_name(at)}: {what} is not a constant")


def _to_builtin(v: ir.Value, at: ir.Operation) -> tuple[ir.Value, list[int | None]]:
    parsed = _parse(v.type)
    if parsed is None:
        raise located_error(at, f"{OPERATOR}: operand of type {v.type} is not a value tensor of a known dtype and rank")
    dims, elem = parsed
    b = ir.Operation.create("torch_c.to_builtin_tensor", results=[_builtin(dims, elem)], operands=[v]).result
    return b, dims


def _broadcast_mask(o: ir.Operation, m: ir.Value, mdims: list, q: ir.Value, qdims: list, k: ir.Value,
                    kdims: list) -> ir.Value:
    """The mask as a `linalg.generic` broadcast to the scores' shape [*q's batch dims, L, S]:
    tm_tensor's verifier compares the mask's dims with q's literally. sym-gpu-attention computes the
    generic's body inside the kernel (no scores-sized buffer is written)."""
    idx = ir.IndexType.get()
    rank, mrank = len(qdims), len(mdims)
    target = qdims[:-1] + [kdims[-2]]
    if mrank > rank:
        raise located_error(o, f"{OPERATOR}: mask of rank {mrank} for q of rank {rank}")
    sizes: list = []
    for d, t in enumerate(target):
        src, sd = (k, rank - 2) if d == rank - 1 else (q, d)
        sizes.append(t if t is not None else tensor.dim(src, arith.constant(idx, sd)))
    elem = ir.RankedTensorType(m.type).element_type
    out = tensor.EmptyOp(sizes, elem).result
    exprs = []
    for t, md in enumerate(mdims):
        p = rank - mrank + t
        exprs.append(ir.AffineConstantExpr.get(0) if md == 1 and target[p] != 1 else ir.AffineDimExpr.get(p))
    maps = [ir.AffineMap.get(rank, 0, exprs), ir.AffineMap.get_identity(rank)]
    parallel = ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank)
    g = new_generic(o, [out.type], [m], [out], maps, parallel)
    body = g.regions[0].blocks.append(elem, elem)
    with ir.InsertionPoint(body), o.location:
        linalg.YieldOp([body.arguments[0]])
    return g.results[0]


@register
class TorchAttention(SymPass):
    """Write mlir_sym::attention (torch.operator) as tm_tensor.attention with sym.causal and sym.scale."""

    name = "sym-torch-attention"

    def run(self, op: ir.Operation) -> None:
        for o in [o for o in ops_named(op, {"torch.operator"}) if _name(o) == OPERATOR]:
            self._lower(o)
            self.bump("attentions")
        training = [o for o in ops_named(op, {"torch.operator"}) if _name(o) in TRAINING]
        if training:
            decls = {ir.StringAttr(f.attributes["sym_name"]).value: f
                     for f in ops_named(op, {"func.func"}) if "sym_name" in f.attributes}
            for o in training:
                self._call(op, o, decls)
                self.bump("training attentions")

    @staticmethod
    def _call(module: ir.Operation, o: ir.Operation, decls: dict) -> None:
        """A training attention torch.operator as a func.call of its library declaration."""
        name = _name(o)
        kind, n = TRAINING[name]
        packed = kind == "sdpa_forward_packed"
        if len(o.operands) != n + 2 + packed:
            raise located_error(o, f"{name} takes {n + 2 + packed} operands ({n} tensors, {'heads, ' if packed else ''}"
                                   f"is_causal, scale), got {len(o.operands)}")
        attrs = {}
        if packed:
            heads = _constant(o.operands[n], "heads", o)
            if not isinstance(heads, int) or heads <= 0:
                raise located_error(o, f"{name}: heads is not a positive number")
            attrs["sym.heads"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), heads)
        causal = _constant(o.operands[n + packed], "is_causal", o)
        scale = _constant(o.operands[n + packed + 1], "scale", o)
        if scale is None:
            raise located_error(o, f"{name}: no scale")
        results = []
        for r in o.results:
            parsed = _parse(r.type)
            if parsed is None:
                raise located_error(o, f"{name}: result type {r.type} is not a ranked value tensor")
            results.append(_builtin(*parsed))
        with ir.InsertionPoint(o), o.location:
            ins = [_to_builtin(o.operands[i], o)[0] for i in range(n)]
            callee = library_declaration(module, o, kind, [v.type for v in ins], results, decls)
            dims = ir.ArrayAttr.get([ir.DenseI64ArrayAttr.get([x for pair in r for x in pair]) for r in _RESULT_DIMS[kind]])
            call = ir.Operation.create("func.call", results=results, operands=ins, attributes={
                "callee": ir.FlatSymbolRefAttr.get(callee), "sym.causal": ir.BoolAttr.get(bool(causal)),
                "sym.scale": ir.FloatAttr.get(ir.F64Type.get(), float(scale)), RESULT_DIMS_ATTR: dims, **attrs})
            for r, b in zip(o.results, call.results):
                back = ir.Operation.create("torch_c.from_builtin_tensor", results=[r.type], operands=[b]).result
                r.replace_all_uses_with(back)
        o.erase()

    @staticmethod
    def _lower(o: ir.Operation) -> None:
        loc = o.location
        if len(o.operands) != 6:
            raise located_error(o, f"{OPERATOR} takes 6 operands (q, k, v, mask, is_causal, scale), got {len(o.operands)}")
        res = _parse(o.results[0].type)
        if res is None:
            raise located_error(o, f"{OPERATOR}: result type {o.results[0].type} is not a ranked value tensor")
        causal = _constant(o.operands[4], "is_causal", o)
        scale = _constant(o.operands[5], "scale", o)
        idx = ir.IndexType.get()
        with ir.InsertionPoint(o), loc:
            (q, qdims), (k, kdims), (v, _) = (_to_builtin(o.operands[i], o) for i in range(3))
            ins = [q, k, v]
            if defining_op(o.operands[3]) is None or defining_op(o.operands[3]).name != "torch.constant.none":
                m, mdims = _to_builtin(o.operands[3], o)
                ins.append(_broadcast_mask(o, m, mdims, q, qdims, k, kdims))
            if scale is None:
                if qdims[-1] is None:
                    raise located_error(o, f"{OPERATOR}: no scale and a dynamic head dim")
                scale = 1.0 / math.sqrt(qdims[-1])
            rdims, relem = res
            sizes: list = []  # static sizes, and q's batch dims and length / v's head dim where dynamic
            for d, rd in enumerate(rdims):
                src = v if d == len(rdims) - 1 else q
                sizes.append(rd if rd is not None else tensor.dim(src, arith.constant(idx, d)))
            rtype = _builtin(rdims, relem)
            empty = tensor.EmptyOp(sizes, rtype.element_type).result
            att = ir.Operation.create(
                "tm_tensor.attention", results=[rtype], operands=ins + [empty],
                attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(ins), 1]),
                            "sym.causal": ir.BoolAttr.get(bool(causal)),
                            "sym.scale": ir.FloatAttr.get(ir.F64Type.get(), float(scale))})
            back = ir.Operation.create("torch_c.from_builtin_tensor", results=[o.results[0].type],
                                       operands=[att.result]).result
        o.results[0].replace_all_uses_with(back)
        o.erase()
