"""Give every use of a `tensor.empty` or `linalg.fill` result its own copy of the op.

CSE in torch-mlir's pipeline merges the identical `fill(0, empty)` inits of reductions, so one init
feeds several ops. `eliminate-empty-tensors` then replaces that empty with the out-param of one
result (`to_tensor %out0 restrict`), and One-Shot bufferization lets another of those ops write
into the same buffer in place: the materialization of result 0 into %out0 clobbered result 2
(`[c.sum(1) for c in x.chunk(3, dim=1)]` returned chunk 0's sums twice). Cloning these pure ops per
use, right before the user, keeps each chain from an empty tensor to its own destination. Fills
are cloned first, so the fill clones share their empty, which is then cloned per fill.

Only ops directly in a compute function's body are considered (torch-mlir puts inits there); the
first use in MLIR's use list (the most recently created) keeps the original op, every other use
gets a clone inserted right before its user.

Before:
  %e = tensor.empty(%n) : tensor<?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %a = linalg.generic {...} ins(%x0 : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {...} -> tensor<?xf32>
  %b = linalg.generic {...} ins(%x1 : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {...} -> tensor<?xf32>
After:
  %e = tensor.empty(%n) : tensor<?xf32>
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e1 : tensor<?xf32>) -> tensor<?xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %a = linalg.generic {...} ins(%x0 : tensor<?x?xf32>) outs(%z1 : tensor<?xf32>) {...} -> tensor<?xf32>
  %b = linalg.generic {...} ins(%x1 : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {...} -> tensor<?xf32>
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import compute_funcs
from mlir_sym.passes.registry import SymPass, register


@register
class UnshareInits(SymPass):
    """Give every use of a `tensor.empty` or `linalg.fill` result its own copy of the op."""

    name = "sym-unshare-inits"

    def run(self, op: ir.Operation) -> None:
        for fn in compute_funcs(op):
            for kind in ("linalg.fill", "tensor.empty"):  # fills first: their clones share the empty
                for o in [o.operation for b in fn.regions[0].blocks for o in b.operations if o.operation.name == kind]:
                    result = o.results[0]
                    for use in list(result.uses)[1:]:
                        user = use.owner
                        clone = o.clone(ip=ir.InsertionPoint(user))
                        user.operands[use.operand_number] = clone.results[0]
                        self.bump("inits-cloned")
