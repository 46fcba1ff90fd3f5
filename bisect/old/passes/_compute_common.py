"""Helpers shared by the passes that work on compute functions (every `func.func` with a body that
is not the guard function): sym-readonly-inputs, sym-unshare-inits, sym-defer-nested-asserts and
sym-nested-assert-to-status, and the GPU passes."""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.dialects import sym


def compute_funcs(module_op: ir.Operation) -> list:
    """The module's compute functions: defined `func.func`s without the guard-function attribute."""
    return [f for f in module_op.regions[0].blocks[0].operations
            if f.operation.name == "func.func" and sym.GUARD_FN_ATTR not in f.operation.attributes
            and len(f.regions[0].blocks) > 0]


def defining_op(v: ir.Value) -> ir.Operation | None:
    """The operation that defines `v`, or None for a block argument."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def constant_value(v: ir.Value) -> int | float | None:
    """The Python value of a scalar `arith.constant` (integer, index or float), else None."""
    op = defining_op(v)
    if op is None or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    return None


def walk_ops(op: ir.Operation):
    """Every operation nested in `op` (not `op` itself), in pre-order."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from walk_ops(child.operation)
