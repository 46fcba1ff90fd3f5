"""Give `aten.sort`'s results the static sizes of its input (on the torch dialect, before torch-mlir's
lowering of a variant specialized to sizes).

A variant specialized to sizes (`sym-specialize`) makes the arguments' types static, and torch-mlir's
shape refinement carries them to most ops' results, but not to `aten.sort`'s, which it leaves `?`.
torch-mlir's lowering of the sort builds its results from the input's (static) type, and the
dialect conversion then has no cast from `tensor<3x5xi64>` back to the op's `tensor<?x?xi64>`
("failed to legalize unresolved target materialization"), so the specialized variant did not lower
and the generic one served its sizes. Both results of a sort have the shape of its input: this pass
gives them its known sizes and puts a `torch.tensor_static_info_cast` back to the old type in front
of their users (canonicalization folds it into users that take any shape). Sorts whose results
already have those sizes, or sizes that disagree with the input's, are left alone.

Before:
  %v, %i = torch.aten.sort %x, %int-1, %false : !torch.vtensor<[3,5],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
After:
  %v, %i = torch.aten.sort %x, %int-1, %false : !torch.vtensor<[3,5],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,5],f32>, !torch.vtensor<[3,5],si64>
  %v2 = torch.tensor_static_info_cast %v : !torch.vtensor<[3,5],f32> to !torch.vtensor<[?,?],f32>
  %i2 = torch.tensor_static_info_cast %i : !torch.vtensor<[3,5],si64> to !torch.vtensor<[?,?],si64>
"""
from __future__ import annotations

import re

from torch_mlir import ir

from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.registry import SymPass, register

_VTENSOR = re.compile(r"^!torch\.vtensor<\[([^\]]*)\],(.+)>$")


def _dims(t: ir.Type) -> tuple[list[int | None], str] | None:
    """(dims, element type text) of a ranked `!torch.vtensor` type; None dims are dynamic."""
    m = _VTENSOR.match(str(t))
    if m is None:
        return None
    dims = [None if d.strip() == "?" else int(d) for d in m.group(1).split(",")] if m.group(1).strip() else []
    return dims, m.group(2)


@register
class TorchSortShapes(SymPass):
    """Give aten.sort's results the static sizes of its input, cast back for their users."""

    name = "sym-torch-sort-shapes"

    def run(self, op: ir.Operation) -> None:
        for o in ops_named(op, {"torch.aten.sort"}):
            src = _dims(o.operands[0].type)
            results = [_dims(r.type) for r in o.results]
            if src is None or any(res is None or len(res[0]) != len(src[0]) or any(
                    a is not None and b is not None and a != b for a, b in zip(res[0], src[0])) for res in results):
                continue  # unranked, or sizes that disagree: not ours to settle
            for r, res in zip(o.results, results):
                dims = [a if a is not None else b for a, b in zip(res[0], src[0])]
                if dims == res[0]:
                    continue
                old = r.type
                uses = [(u.owner, u.operand_number) for u in r.uses]
                r.set_type(ir.Type.parse(f"!torch.vtensor<[{','.join('?' if d is None else str(d) for d in dims)}],{res[1]}>"))
                with ir.InsertionPoint(o), o.location:
                    cast = ir.Operation.create("torch.tensor_static_info_cast", results=[old], operands=[r])
                cast.move_after(o)
                for owner, k in uses:
                    owner = owner.operation if hasattr(owner, "operation") else owner
                    owner.operands[k] = cast.result
                self.bump("sort-results-refined")

