"""Erase linalg ops on tensors that nothing reads and that only compute and check, where a live op
makes the same checks.

An embedding or gather carries per-element index bounds checks (calls to the nested-assert marker,
sym-defer-nested-asserts) in its body. When elementwise fusion or sym-duplicate-elementwise writes
such a producer into its consumers, the consumer's body holds a copy of the checks, and the producer
is left with no users; canonicalization keeps it, since a call may have side effects. On the GPU it
was a launch over the whole gathered tensor that only checked indices (a token embedding in every
training forward and every language model's call), on the CPU a loop nest.

A consumer that elementwise fusion wrote a producer into reads every element the producer made (its
indexing maps are projected permutations over a domain that covers the operand), so the copy checks
every index the producer checked. This pass erases an op when its results are unused, its body holds
only pure arithmetic (`arith`, `math`, `linalg.index`, `tensor.extract`, the yield) and marker calls,
and each of its checks' messages (which name the source line) is also a check of some live op of the
function. A dead op whose checks no live op makes stays: its checks are the only ones.

Before:
  %0 = linalg.generic ... ins(%idx) outs(%e0) {           // no users
    ... func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index ... (at m.py:3)"} ...
  }
  %1 = linalg.generic ... ins(%idx, %x) outs(%e1) {       // the embedding fused into the add
    ... func.call @__mlir_sym_nested_assert(%ok2) {sym.assert_msg = "index ... (at m.py:3)"} ...
  }
After:
  %1 = linalg.generic ... (unchanged)
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import compute_funcs
from mlir_sym.passes.defer_nested_asserts import MARKER, MSG_ATTR
from mlir_sym.passes.registry import SymPass, register

_PURE_DIALECTS = ("arith.", "math.")
_PURE_OPS = {"linalg.index", "linalg.yield", "tensor.extract"}


def _checks(op: ir.Operation) -> set[str] | None:
    """The messages of the marker calls nested in `op`'s regions, or None if something else in them
    may have a side effect."""
    msgs: set[str] = set()
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                c = child.operation
                if c.name == "func.call":
                    if ir.FlatSymbolRefAttr(c.attributes["callee"]).value != MARKER or MSG_ATTR not in c.attributes:
                        return None
                    msgs.add(ir.StringAttr(c.attributes[MSG_ATTR]).value)
                elif not (c.name.startswith(_PURE_DIALECTS) or c.name in _PURE_OPS):
                    return None
    return msgs


def _made_checks(op: ir.Operation, into: set[str]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                c = child.operation
                if c.name == "func.call" and MSG_ATTR in c.attributes:
                    into.add(ir.StringAttr(c.attributes[MSG_ATTR]).value)
                _made_checks(c, into)


@register
class EraseDeadChecks(SymPass):
    """Erase unused linalg ops on tensors whose only side effects are index checks a live op also makes."""

    name = "sym-erase-dead-checks"

    def run(self, op: ir.Operation) -> None:
        for fn in compute_funcs(op):
            while self._sweep(fn):
                pass

    def _sweep(self, fn: ir.Operation) -> bool:
        dead, live = [], set()
        for child in fn.regions[0].blocks[0].operations:
            o = child.operation
            unused = len(o.results) > 0 and all(isinstance(r.type, ir.RankedTensorType) and not list(r.uses)
                                                for r in o.results)
            msgs = _checks(o) if o.name.startswith("linalg.") and unused else None
            if msgs:
                dead.append((o, msgs))
            else:
                _made_checks(o, live)
        erased = False
        for o, msgs in dead:
            if msgs <= live:
                o.erase()
                self.bump("ops-erased")
                erased = True
        return erased
