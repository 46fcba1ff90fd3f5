"""sym-guard-cse: erase guards that are semantically equal to, or implied by, the guards kept.

Upstream `cse` never merges checks (they have effects) and only merges expressions that are
syntactically identical. This pass compares the *meaning* of guard conditions: each is read in the
canonical form of `shapes.read_condition` (linear form over integer atoms, gcd divided out, strict
relations made non-strict), so commuted operands (`s0 + s1` / `s1 + s0`), mirrored relations
(`a < b` / `b > a`), scaled ones (`2*s0 >= 4` / `s0 >= 2`) and reassociated products (`2*s0` /
`s0*2`) are recognized as the same check. In each function:

* a guard (or assert) whose condition equals an earlier check's is erased (the first one stays);
* guards on the same atoms are merged: `s0 >= 2` and `s0 >= 4` keep only `s0 >= 4` (upper bounds and
  linear forms of several symbols, `s0 - s1 >= 0` / `s0 - s1 >= 3`, likewise);
* a guard implied by the other guards kept is erased (`s0 >= 4` and `s1 >= s0` imply `s1 >= 2`).

Unlike sym-canonicalize, declared symbol ranges are not used as facts, conditions are not rewritten,
and nothing is reported: only checks are erased (with the expressions only they used). A guard is
erased only on the strength of checks before it or of guards after it up to the next assert, and an
assert only when an identical check precedes it, so the first failing check for any input is still
a guard (another variant) or an assert (the user's error) exactly as before. `sym.bind` is never
touched. Statistics: `guards-removed`, `asserts-removed`.

Before:
  "sym.guard"(%a) {origin = "range of s0"}     // s0 >= 2
  "sym.guard"(%b) {origin = "model.py:3"}      // 2*s0 >= 8
  "sym.guard"(%c) {origin = "model.py:4"}      // 4 <= s0*2  (same as above)
After:
  "sym.guard"(%b) {origin = "model.py:3"}
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes.canonicalize import GuardBlock, GuardBlockPass, erase_dead_expressions
from mlir_sym.passes.registry import register


@register
class SymGuardCSE(GuardBlockPass):
    """Erase guards semantically equal to or implied by other guards (merging range guards per symbol)."""

    name = "sym-guard-cse"

    def _round(self, block: ir.Block, module: ir.Operation | None) -> bool:
        gb = GuardBlock(block, module, ranges="none")
        if sum(c.cond is not None for c in gb.checks) < 2:
            return False
        guards, asserts = gb.remove_duplicates()
        removed = {"guard": guards, "assert": asserts}

        def count(c, why) -> None:  # noqa: ANN001
            removed[c.kind] += 1

        gb.remove_implied(on_remove=count, asserts=False)
        if gb.erase_removed():
            erase_dead_expressions(block)
        if removed["guard"]:
            self.bump("guards-removed", removed["guard"])
        if removed["assert"]:
            self.bump("asserts-removed", removed["assert"])
        return removed["assert"] > 0
