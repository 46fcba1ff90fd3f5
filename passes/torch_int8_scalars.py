"""Give `mul` / `sub` / `rsub` / `floor_divide` / `remainder` / `div` (with a rounding mode) of an 8-bit
integer tensor and an integer scalar their scalar as a 0-d tensor of the tensor's dtype (on the
torch dialect, before torch-mlir's backend pipeline).

torch-mlir's conversion to linalg crashes (a segmentation fault, not a diagnostic) on these `.Scalar`
ops whose tensor and result are `si8` or `ui8` and whose scalar is a `!torch.int` (`x * 2`, `x - n`,
`x * x.shape[0]` on int8 or uint8 tensors; the divisions as a review found them, which Dynamo's
graphs reach through other forms today); 16- and 32-bit integers, float scalars and `add.Scalar`
lower fine, and so do the `.Tensor` forms with a 0-d operand of the tensor's dtype. Eager computes
these ops in the 8-bit type with the scalar wrapped to it (int8 `x // 300` is `x // 44`), which the
`.Tensor` forms compute too: the scalar becomes a 0-d si64 tensor (`prim.NumToTensor.Scalar`),
converted to the 8-bit dtype (`aten.to.dtype`, a truncation), and `rsub(x, s, alpha)`
(s - alpha * x) becomes `sub.Tensor(s, x, alpha)`. torch-mlir cannot divide 8-bit tensors at all (a
diagnostic), so the divisions run on int32 copies of both operands and truncate the result: exact,
as every 8-bit quotient and remainder fits (int8 -128 // -1 wraps to -128 as eager's does).

Before:
  %y = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[?,?],si8>, !torch.int -> !torch.vtensor<[?,?],si8>
After:
  %t = torch.prim.NumToTensor.Scalar %int2 : !torch.int -> !torch.vtensor<[],si64>
  %t8 = torch.aten.to.dtype %t, %int1, %false, %false, %none : ... -> !torch.vtensor<[],si8>
  %y = torch.aten.mul.Tensor %x, %t8 : !torch.vtensor<[?,?],si8>, !torch.vtensor<[],si8> -> !torch.vtensor<[?,?],si8>
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.registry import SymPass, register
from mlir_sym.passes.torch_elementwise_math import _parse

_OPS = ("torch.aten.mul.Scalar", "torch.aten.sub.Scalar", "torch.aten.rsub.Scalar", "torch.aten.floor_divide.Scalar",
        "torch.aten.remainder.Scalar", "torch.aten.div.Scalar_mode")
_DTYPE_CODE = {"ui8": 0, "si8": 1}  # torch.uint8, torch.int8 (c10::ScalarType)


def _create(name: str, result: ir.Type, operands: list, attributes: dict | None = None) -> ir.Value:
    return ir.Operation.create(name, results=[result], operands=operands, attributes=attributes).result


@register
class TorchInt8Scalars(SymPass):
    """Give mul / sub / rsub / floor_divide / remainder / div of an int8 or uint8 tensor and an int scalar a 0-d tensor operand (torch-mlir crashes on them)."""

    name = "sym-torch-int8-scalars"

    def run(self, op: ir.Operation) -> None:
        for o in ops_named(op, set(_OPS)):
            if self._rewrite(o):
                self.bump("scalars-made-tensors")

    @staticmethod
    def _rewrite(o: ir.Operation) -> bool:
        x, s = o.operands[0], o.operands[1]
        src, res = _parse(x.type), _parse(o.results[0].type)
        if src is None or res is None or src[1] not in _DTYPE_CODE or res[1] != src[1] or str(s.type) != "!torch.int":
            return False
        elem = src[1]
        i64 = ir.IntegerType.get_signless(64)
        with ir.InsertionPoint(o), o.location:
            t64 = _create("torch.prim.NumToTensor.Scalar", ir.Type.parse("!torch.vtensor<[],si64>"), [s])
            code = _create("torch.constant.int", ir.Type.parse("!torch.int"), [],
                           {"value": ir.IntegerAttr.get(i64, _DTYPE_CODE[elem])})
            false = _create("torch.constant.bool", ir.Type.parse("!torch.bool"), [], {"value": ir.BoolAttr.get(False)})
            none = _create("torch.constant.none", ir.Type.parse("!torch.none"), [])
            t = _create("torch.aten.to.dtype", ir.Type.parse(f"!torch.vtensor<[],{elem}>"), [t64, code, false, false, none])
            rtype = o.results[0].type
            if o.name == "torch.aten.mul.Scalar":
                y = _create("torch.aten.mul.Tensor", rtype, [x, t])
            elif o.name == "torch.aten.sub.Scalar":
                y = _create("torch.aten.sub.Tensor", rtype, [x, t, o.operands[2]])
            elif o.name == "torch.aten.rsub.Scalar":  # rsub(x, s, alpha) = s - alpha * x
                y = _create("torch.aten.sub.Tensor", rtype, [t, x, o.operands[2]])
            else:  # the divisions, in int32 (torch-mlir cannot divide 8-bit tensors): exact, then truncated
                dims = ",".join("?" if d is None else str(d) for d in src[0])
                wide_t = ir.Type.parse(f"!torch.vtensor<[{dims}],si32>")
                i32 = _create("torch.constant.int", ir.Type.parse("!torch.int"), [],
                              {"value": ir.IntegerAttr.get(i64, 3)})  # torch.int32
                xw = _create("torch.aten.to.dtype", wide_t, [x, i32, false, false, none])
                tw = _create("torch.aten.to.dtype", ir.Type.parse("!torch.vtensor<[],si32>"), [t, i32, false, false, none])
                if o.name == "torch.aten.floor_divide.Scalar":
                    yw = _create("torch.aten.floor_divide", wide_t, [xw, tw])
                elif o.name == "torch.aten.remainder.Scalar":
                    yw = _create("torch.aten.remainder.Tensor", wide_t, [xw, tw])
                else:  # div.Scalar_mode with a rounding mode (an 8-bit result: "floor" or "trunc")
                    yw = _create("torch.aten.div.Tensor_mode", wide_t, [xw, tw, o.operands[2]])
                y = _create("torch.aten.to.dtype", rtype, [yw, code, false, false, none])
        o.results[0].replace_all_uses_with(y)
        o.erase()
        return True
