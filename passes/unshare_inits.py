"""Give every use of a `tensor.empty` or `linalg.fill` result its own copy of the op.

CSE in torch-mlir's pipeline merges the identical `fill(0, empty)` inits of reductions, so one init
feeds several ops. `eliminate-empty-tensors` then replaces that empty with the out-param of one
result (`to_tensor %out0 restrict`), and One-Shot bufferization lets another of those ops write
into the same buffer in place: the materialization of result 0 into %out0 clobbered result 2
(`[c.sum(1) for c in x.chunk(3, dim=1)]` returned chunk 0's sums twice). Cloning these pure ops per
use, right before the user, keeps each chain from an empty tensor to its own destination. Fills
are cloned first, so the fill clones share their empty, which is then cloned per fill.

Only ops directly in a compute function's body are considered (torch-mlir puts inits there). An op
with several uses is cloned right before each user and erased, so every init sits next to the op it
initializes: a fill left where CSE put it (before the first layer of a model) was a launch of its own
far from its reduction, where sym-gpu-map-parallel could not fold it into the reduction's start value
(GPT-2's attention softmax: two fill launches a layer).

Before:
  %e = tensor.empty(%n) : tensor<?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %a = linalg.generic {...} ins(%x0 : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {...} -> tensor<?xf32>
  %b = linalg.generic {...} ins(%x1 : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {...} -> tensor<?xf32>
After:
  %e0 = tensor.empty(%n) : tensor<?xf32>
  %z0 = linalg.fill ins(%cst : f32) outs(%e0 : tensor<?xf32>) -> tensor<?xf32>
  %a = linalg.generic {...} ins(%x0 : tensor<?x?xf32>) outs(%z0 : tensor<?xf32>) {...} -> tensor<?xf32>
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<?xf32>) -> tensor<?xf32>
  %b = linalg.generic {...} ins(%x1 : tensor<?x?xf32>) outs(%z1 : tensor<?xf32>) {...} -> tensor<?xf32>
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
                    uses = list(o.results[0].uses)
                    if len(uses) < 2:
                        continue
                    for use in uses:
                        user = use.owner
                        clone = o.clone(ip=ir.InsertionPoint(user))
                        user.operands[use.operand_number] = clone.results[0]
                        self.bump("inits-cloned")
                    o.erase()
