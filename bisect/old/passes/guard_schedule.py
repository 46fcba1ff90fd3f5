"""sym-guard-schedule: order the checks of the guard function cheapest first.

`convert-sym-to-arith` returns the id of the first failing check in program order, so the order of
the checks decides which failure is reported (and, for an early-exit evaluation, what is computed
before it). This pass reorders each function's checks, inside each *segment* (the checks up to and
including the next `sym.assert`):

1. `sym.bind`s first, in their original order: they load each input size once (the symbols'
   scratch values) and check the other inputs bound to the same expression;
2. then the guards by cost class (`shapes.cost_class`): single-symbol range checks (`s0 >= 2`,
   `s0 <= 64`, `s0 == 4`, `s0 != 1`), then linear equalities (`s0 == s1`, `s0 == 2*s1`), then other
   linear relations of several symbols (`s0 <= s1 + 1`), then nonlinear and boolean conditions
   (`s0*s1 <= 4096`, `Mod(s0, 8) == 0`, `a or b`) and anything opaque;
3. inside a class, by when the inputs they read are loaded (the position of the last `sym.bind`
   defining one of their symbols), so a guard over several sources comes as soon as all its sources
   are loaded; then in program order;
4. the segment's assert last.

A guard never moves across an assert (that would turn a user error into a "try another variant" or
back), and asserts keep their order, so for every input the first failing check is still of the same
kind (guard or assert) as before; which guard is reported may change (all guard failures mean the
same: this artifact does not apply). Every expression op is then placed just before its first user,
so each check's condition is computed right where it is checked. Functions holding ops other than
sym ops and the terminator are left alone. Statistics: `checks-moved`.

Before:
  "sym.bind"(%a, %s0); "sym.bind"(%b, %s1)
  "sym.guard"(%p)   // s0*s1 <= 4096      (nonlinear)
  "sym.guard"(%e)   // s0 == s1           (equality)
  "sym.guard"(%r)   // s1 >= 2            (range)
After:
  "sym.bind"(%a, %s0); "sym.bind"(%b, %s1)
  "sym.guard"(%r); "sym.guard"(%e); "sym.guard"(%p)
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym import shapes
from mlir_sym.passes.canonicalize import GuardBlock, GuardBlockPass, defining_op, place_expressions, sym_only
from mlir_sym.passes.registry import register

@register
class SymGuardSchedule(GuardBlockPass):
    """Order guard checks cheapest-first (binds, ranges, equalities, relations, nonlinear) within assert-bounded segments."""

    name = "sym-guard-schedule"

    def _block(self, block: ir.Block, module: ir.Operation | None) -> None:
        if not sym_only(block):
            return  # something we do not know how to move
        gb = GuardBlock(block, module, ranges="none")
        if len(gb.checks) < 2:
            return
        # When each symbol is loaded: the position of the first bind of an input to exactly it.
        loaded: dict[str, int] = {}
        for i, c in enumerate(c for c in gb.checks if c.kind == "bind"):
            expr = defining_op(c.op.operands[1])
            if expr is not None and expr.name == "sym.value":
                loaded.setdefault(ir.StringAttr(expr.attributes["symbol"]).value, i)
        never = len(loaded) + 1

        def key(c) -> tuple:  # noqa: ANN001
            stage = max((loaded.get(s, never) for s in shapes.cond_symbols(c.cond)), default=0)
            return (shapes.cost_class(c.cond), stage, c.index)

        order = []
        for seg in range(max(c.segment for c in gb.checks) + 1):
            members = [c for c in gb.checks if c.segment == seg]
            order += [c for c in members if c.kind == "bind"]
            order += sorted((c for c in members if c.kind == "guard"), key=key)
            order += [c for c in members if c.kind == "assert"]
        moved = sum(1 for i, c in enumerate(order) if c.index != i)
        # Place every check after the expressions it uses, each expression just before its first user.
        place_expressions(block, [c.op for c in order])
        if moved:
            self.bump("checks-moved", moved)
