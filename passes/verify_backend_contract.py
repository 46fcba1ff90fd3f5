"""torch-mlir's linalg-on-tensors backend contract check (`torch-verify-linalg-on-tensors-backend-contract`),
with calls of our runtime library allowed.

The contract admits linalg, tensor, tm_tensor, scf and scalar ops, and no `func.call`, while
sym-torch-attention writes training attention as calls on tensors of declarations tagged
`sym.library_call` (PyTorch's memory-efficient kernels on the GPU). The `torch-to-linalg`
pipeline runs torch-mlir's backend pipeline pass by pass, this pass in place of its last one: it
checks a copy of the module in which each such call's results are `tensor.empty`s of their types,
so that every other op that is not lowered (an aten op torch-mlir does not convert) fails as it
does upstream, with the same located "failed to legalize operation" diagnostics (upstream's
summary at the module's location is left out).
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, tensor
from torch_mlir.passmanager import PassManager

from mlir_sym.passes._compute_common import library_declarations, ops_named
from mlir_sym.passes.registry import PassError, SymPass, register

UPSTREAM = "torch-verify-linalg-on-tensors-backend-contract"


def _library_calls(module: ir.Operation) -> list[ir.Operation]:
    decls = library_declarations(module)
    return [c for c in ops_named(module, {"func.call"}) if ir.FlatSymbolRefAttr(c.attributes["callee"]).value in decls]


@register
class VerifyBackendContract(SymPass):
    """torch-mlir's linalg-on-tensors backend contract check, with our runtime library's calls allowed."""

    name = "sym-verify-backend-contract"

    def run(self, op: ir.Operation) -> None:
        probe = op.clone()
        try:
            for call in _library_calls(probe):
                with ir.InsertionPoint(call), call.location:
                    for r in call.results:
                        t = ir.RankedTensorType(r.type)
                        sizes = [arith.constant(ir.IndexType.get(), 1) if d == ir.ShapedType.get_dynamic_size() else d
                                 for d in t.shape]
                        r.replace_all_uses_with(tensor.EmptyOp(sizes, t.element_type).result)
                call.erase()
            # the ops' diagnostics reach the caller's handlers as they are; upstream's summary at the
            # probe module's location does not (it would name a module that is not the caller's)
            seen: list[str] = []

            def handle(d) -> bool:
                seen.append(d.message)
                return d.message.startswith("Module does not conform")

            handler = op.context.attach_diagnostic_handler(handle)
            try:
                PassManager.parse(f"builtin.module({UPSTREAM})").run(probe)
            except ir.MLIRError as e:
                # what the run kept (the probe failing the verifier, e.g. an op a pass before made
                # invalid) is emitted again; the check's own diagnostics have reached the caller
                kept = [d for d in e.error_diagnostics if not d.message.startswith("Module does not conform")]
                for d in kept:
                    d.location.emit_error(d.message)
                err = PassError("the module does not conform to the linalg-on-tensors backend contract")
                located = kept or [m for m in seen if not m.startswith("Module does not conform")]
                err.emitted = bool(located)  # type: ignore[attr-defined]  (else the registry says this much)
                raise err from None
            finally:
                handler.detach()
        finally:
            probe.erase()
