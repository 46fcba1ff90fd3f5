"""The one place that makes an MLIR context: torch-mlir's dialects plus `sym`, all from the bundled MLIR."""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from mlir_sym.dialects import sym


def make_context() -> ir.Context:
    ctx = ir.Context()
    torch_d.register_dialect(ctx)
    sym.load(ctx)
    return ctx
