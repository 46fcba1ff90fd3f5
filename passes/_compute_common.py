"""Helpers shared by the passes that work on compute functions (every `func.func` with a body that
is not the guard function): sym-readonly-inputs, sym-unshare-inits, sym-defer-nested-asserts and
sym-nested-assert-to-status."""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.dialects import sym


def compute_funcs(module_op: ir.Operation) -> list:
    """The module's compute functions: defined `func.func`s without the guard-function attribute."""
    return [f for f in module_op.regions[0].blocks[0].operations
            if f.operation.name == "func.func" and sym.GUARD_FN_ATTR not in f.operation.attributes
            and len(f.regions[0].blocks) > 0]
