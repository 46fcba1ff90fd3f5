"""The one place that makes an MLIR context: torch-mlir's dialects plus `sym`, all from the bundled MLIR."""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir._mlir_libs._torchMlir import register_dialect as register_torch_dialect
from torch_mlir.passmanager import PassManager

from mlir_sym.dialects import sym


def make_context() -> ir.Context:
    ctx = ir.Context()
    # torch_mlir.dialects.torch would also import its generated op classes (0.4 s, none used here)
    register_torch_dialect(ctx)
    sym.load(ctx)
    _load_tm_tensor(ctx)
    return ctx


def _load_tm_tensor(ctx: ir.Context) -> None:
    """Load torch-mlir's `tm_tensor` dialect (sort, scan, scatter), so that IR holding its ops parses
    (symopt inputs, lit tests of passes over it). The Python bindings expose no registration for it;
    a pass that produces it loads it, so run one on an empty module."""
    with ctx, ir.Location.unknown():
        PassManager.parse("builtin.module(func.func(convert-torch-to-tmtensor))").run(ir.Module.create().operation)
