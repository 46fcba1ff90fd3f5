"""Lower `cummax` / `cummin` (which torch-mlir imports as opaque `torch.operator`s) to two
`tm_tensor.scan`s and an elementwise `linalg.generic` (on the torch dialect, before torch-mlir's
backend pipeline).

Eager's kernel (ATen's cummax_cummin_helper) walks the dim keeping `out` and its position `idx`:
element k replaces them when it is NaN, or when `out` is not NaN and `x[k] >= out` (cummax; `<=`
for cummin): ties go to the later position, and once a NaN is met only NaNs replace it. So:
  values[k]  = the running max (min) of x with NaN propagating: an inclusive scan combining with
               arith.maximumf (minimumf; maxsi / minsi for integers);
  indices[k] = the last position j <= k at which x[j] was taken: j is taken exactly when
               x[j] == values[j] (it is the running extremum there, ties included) or x[j] is NaN
               (the comparison is false once the running value is NaN) — an inclusive max-scan of
               `taken(j) ? j : 0` (position 0 is always taken).
Half types scan in their own type (max and min are exact). The scans are `tm_tensor.scan`s, which
the CPU path runs as loops and the GPU path as torch's cummax / cummin (sym-gpu-library-calls).

Before:
  %v, %i = torch.operator "torch.aten.cummax"(%x, %int1) : (!torch.vtensor<[?,?],f32>, !torch.int)
           -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>)
After:
  %b = torch_c.to_builtin_tensor %x
  %vals:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%b) outs(%e, %acc) { arith.maximumf }
  %pos = linalg.generic ins(%b, %vals#0) outs(%ei) { j = linalg.index 1; taken ? j : 0 }
  %idx:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%pos) outs(%ei2, %acci) { arith.maxsi }
  %v = torch_c.from_builtin_tensor %vals#0 ; %i = torch_c.from_builtin_tensor %idx#0
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from mlir_sym.passes._compute_common import defining_op, new_generic, ops_named
from mlir_sym.passes.registry import SymPass, located_error, register
from mlir_sym.passes.torch_elementwise_math import _builtin, _is_float, _name, _parse

OPERATOR_NAMES = ("torch.aten.cummax", "torch.aten.cummin")


def _scan(x: ir.Value, sizes: list, dim: int, combine) -> ir.Value:
    """An inclusive tm_tensor.scan of `x` along `dim` combining with `combine(a, b)`."""
    t = ir.RankedTensorType(x.type)
    elem = t.element_type
    out = tensor.EmptyOp(sizes, elem).result
    acc = tensor.EmptyOp(sizes[:dim] + sizes[dim + 1:], elem).result
    scan = ir.Operation.create(
        "tm_tensor.scan", results=[out.type, acc.type], operands=[x, out, acc],
        attributes={"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim),
                    "inclusive": ir.BoolAttr.get(True),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 2])},
        regions=1)
    body = scan.regions[0].blocks.append(elem, elem)
    with ir.InsertionPoint(body):
        ir.Operation.create("tm_tensor.yield", operands=[combine(body.arguments[0], body.arguments[1])])
    return scan.results[0]


def _positions_taken(o: ir.Operation, x: ir.Value, values: ir.Value, sizes: list, dim: int) -> ir.Value:
    """`j` where x[j] is the running extremum (or NaN) at j along `dim`, else 0, as i64."""
    rank = len(sizes)
    i64 = ir.IntegerType.get_signless(64)
    out = tensor.EmptyOp(sizes, i64).result
    ident = ir.AffineMap.get_identity(rank)
    parallel = ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank)
    g = new_generic(o, [out.type], [x, values], [out], [ident] * 3, parallel)
    elem = ir.RankedTensorType(x.type).element_type
    body = g.regions[0].blocks.append(elem, elem, i64)
    with ir.InsertionPoint(body), o.location:
        a, v = body.arguments[0], body.arguments[1]
        if _is_float(elem):
            same = arith.cmpf(arith.CmpFPredicate.OEQ, a, v)
            nan = arith.cmpf(arith.CmpFPredicate.UNO, a, a)
            taken = arith.ori(same, nan)
        else:
            taken = arith.cmpi(arith.CmpIPredicate.eq, a, v)
        j = arith.index_cast(i64, linalg.IndexOp(dim).result)
        linalg.YieldOp([arith.select(taken, j, arith.constant(i64, 0))])
    return g.results[0]


@register
class TorchCumulativeExtrema(SymPass):
    """Lower aten.cummax / aten.cummin (opaque torch.operators) to tm_tensor.scans with eager's NaN and tie rules."""

    name = "sym-torch-cumulative-extrema"

    def run(self, op: ir.Operation) -> None:
        for o in [o for o in ops_named(op, {"torch.operator"}) if _name(o) in OPERATOR_NAMES]:
            self._lower(o, _name(o) == "torch.aten.cummax")
            self.bump("cumulative-extrema")

    @staticmethod
    def _lower(o: ir.Operation, is_max: bool) -> None:
        what = _name(o).removeprefix("torch.aten.")
        parsed = _parse(o.operands[0].type)
        if parsed is None or len(o.results) != 2:
            raise located_error(o, f"{what}: operand of type {o.operands[0].type} is not a value tensor of a known dtype")
        dims, elem = parsed
        if elem == "i1":
            raise located_error(o, f"{what} of a bool tensor is not supported")
        d_op = defining_op(o.operands[1])
        if d_op is None or d_op.name != "torch.constant.int":
            raise located_error(o, f"{what}: the dim is not a constant")
        rank = max(1, len(dims))
        dim = ir.IntegerAttr(d_op.attributes["value"]).value
        if not -rank <= dim < rank:
            raise located_error(o, f"{what}: dim {dim} out of range for rank {len(dims)}")
        dim %= rank
        idx = ir.IndexType.get()
        with ir.InsertionPoint(o), o.location:
            b = ir.Operation.create("torch_c.to_builtin_tensor", results=[_builtin(dims, elem)],
                                    operands=[o.operands[0]]).result
            if not dims:  # a 0-d tensor: its value, at position 0
                b = tensor.expand_shape(_builtin([1], elem), b, [], [], [1])
            sizes = [d if d is not None else tensor.dim(b, arith.constant(idx, k))
                     for k, d in enumerate(dims or [1])]
            if _is_float(ir.RankedTensorType(b.type).element_type):
                combine = arith.maximumf if is_max else arith.minimumf
            else:
                combine = arith.maxsi if is_max else arith.minsi
            values = _scan(b, sizes, dim, combine)
            positions = _positions_taken(o, b, values, sizes, dim)
            indices = _scan(positions, sizes, dim, arith.maxsi)
            if not dims:
                values = tensor.collapse_shape(_builtin([], elem), values, [])
                indices = tensor.collapse_shape(ir.RankedTensorType.get([], ir.IntegerType.get_signless(64)),
                                                indices, [])
            outs = [ir.Operation.create("torch_c.from_builtin_tensor", results=[r.type], operands=[v]).result
                    for r, v in zip(o.results, (values, indices))]
        for r, v in zip(o.results, outs):
            r.replace_all_uses_with(v)
        o.erase()
