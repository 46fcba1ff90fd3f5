"""sym-canonicalize: rewrite guard conditions in canonical form, fold the implied ones, reject
contradictions.

For every function, each `sym.guard`/`sym.assert` condition is read as sympy (through
`shapes.read_condition`) into a canonical relation (`lin >= 0`, `lin == 0`, `lin != 0` over integer
atoms, gcd divided out, strict relations made non-strict) and rebuilt from sym ops in that one form:
`s0*2 >= 4`, `2*s0 > 3` and `4 <= 2*s0` all become `s0 >= 2`, `a < b` and `b > a` both `b >= a + 1`
(in a function of sym ops only, each expression op is then placed just before its first user, so the
output does not depend on where the input put them). Before that:

* a guard that is false under the declared ranges and the other guards is a compile-time error at
  the last such guard, naming the conflicting guards by origin (`contradictory guards: ...`); a guard
  false for every value of a declared range says so (`... can never hold for the declared range of
  s0 [2, oo]`);
* a guard that always holds (a tautology), or that is implied by the declared ranges and the other
  guards, is erased;
* an assert is erased only when provably true: implied by the declared ranges and the checks before
  it (an erased assert joins two segments, so the analysis then runs again).

Facts and their limits (what keeps the rewrite sound for the "first failing check" semantics of
`convert-sym-to-arith`):

* A symbol's declared range is a fact, except for a bound the function itself checks with a range
  check (the importer emits `s0 >= 2` for `lo = 2`, `s0 <= 64` for `hi = 64`; any `s >= c` with
  c >= lo, `s <= c` with c <= hi, or `s == c` counts): such a bound is known only through its range
  checks, and a range check is erased only in favour of another range check of the same symbol at
  least as strong, so the bound stays checked and what is trusted never changes as checks go (the pass
  is idempotent). A declared lower bound <= 0 is always a fact (sizes are never negative; the
  importer checks none), except for an `unbacked` symbol: its value comes from the data (a count,
  `.item()`), its declared range is what torch._check promised, and the importer asserts it, so
  every bound of an unbacked symbol is known only through its checks.
* A guard may be justified by any check before it and by guards after it up to the next assert (moving
  past an assert would turn "try another variant" into the user's error). An assert only by checks
  before it.
* `sym.bind` is never touched and is not a fact here. A condition sympy cannot read (an op outside
  `sym`, an unsupported expression) stays as it is; it can only match an identical condition.

Before:
  "sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
  %g = "sym.cmp"(%c1, %s0) {predicate = "lt"}       // 1 < s0: implied by the range guard
  "sym.guard"(%r) {origin = "range of s0: [2, oo]"} // s0 >= 2
  "sym.guard"(%g) {origin = "model.py:3"}
  %m = "sym.mul"(%s0, %c2); %h = "sym.cmp"(%m, %s1) {predicate = "gt"}
  "sym.guard"(%h) {origin = "model.py:4"}           // s0*2 > s1
After:
  "sym.guard"(%r) {origin = "range of s0: [2, oo]"}
  %m = "sym.mul"(%c2, %s0); %h = "sym.cmp"(%m, %t) {predicate = "ge"}   // 2*s0 >= s1 + 1
  "sym.guard"(%h) {origin = "model.py:4"}

The helpers below (`GuardBlock`, `erase_dead_expressions`, `place_expressions`, `sym_only`,
`module_of`, `functions`) are shared by sym-guard-cse and sym-guard-schedule. Statistics:
`guards-folded` (implied by other checks), `guards-folded-by-ranges`, `tautologies-removed`,
`asserts-removed`, `conditions-rewritten`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from torch_mlir import ir

from mlir_sym import shapes
from mlir_sym.dialects import sym
from mlir_sym.passes.registry import SymPass, located_error, register

CHECK_OPS = {"sym.bind": "bind", "sym.guard": "guard", "sym.assert": "assert"}
PURE_SYM_OPS = frozenset(
    ["sym.value", "sym.constant", "sym.cmp", "sym.and", "sym.or", "sym.not"] + [f"sym.{n}" for n in sym.BINARY_OPS]
)


def _str_attr(op: ir.Operation, key: str) -> str | None:
    return ir.StringAttr(op.attributes[key]).value if key in op.attributes else None


def _range_text(lo: int | None, hi: int | None) -> str:
    return f"[{'-oo' if lo is None else lo}, {'oo' if hi is None else hi}]"


def module_of(op: ir.Operation) -> ir.Operation | None:
    return op if op.name == "builtin.module" else sym.enclosing_module(op)


def functions(op: ir.Operation) -> Iterator[ir.Operation]:
    """The func.func ops a pass anchored on `op` works on (`op` itself, or the module's functions)."""
    if op.name == "func.func":
        yield op
        return
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                if child.operation.name == "func.func":
                    yield child.operation


def declared_ranges(module: ir.Operation | None) -> dict[str, tuple[int | None, int | None]]:
    out: dict[str, tuple[int | None, int | None]] = {}
    if module is None:
        return out
    for name, decl in sym.declared_symbols(module).items():
        attrs = decl.operation.attributes
        lo = ir.IntegerAttr(attrs["lo"]).value if "lo" in attrs else None
        hi = ir.IntegerAttr(attrs["hi"]).value if "hi" in attrs else None
        out[name] = (lo, hi)
    return out


RANGES_ATTR = "sym.ranges"  # on a compute module: its symbols' ranges, {s0 = "2:512"} (pipelines.split_guards)


def recorded_ranges(module: ir.Operation | None) -> dict[str, tuple[int | None, int | None]]:
    """The symbol ranges a compute module carries in its `sym.ranges` attribute (its `sym.symbol`
    declarations stay with the guard function): name -> (lo, hi), None where unbounded."""
    if module is None or RANGES_ATTR not in module.attributes:
        return {}
    out: dict[str, tuple[int | None, int | None]] = {}
    for named in ir.DictAttr(module.attributes[RANGES_ATTR]):
        lo, hi = ir.StringAttr(named.attr).value.split(":")
        out[named.name] = (int(lo) if lo else None, int(hi) if hi else None)
    return out


EQUALITIES_ATTR = "sym.equalities"  # on a module: [["s0*s1", "s2*s3"], ...], size equalities its guards check


def recorded_equalities(module: ir.Operation | None) -> list[tuple[ir.Attribute, ir.Attribute]]:
    """The size equalities a module records in its `sym.equalities` attribute (the importer writes the
    guards `Eq(a, b)` between expressions of symbols there; the guard function checks them before any
    compute runs): pairs of the two sides' attributes, strings in sympy syntax."""
    if module is None or EQUALITIES_ATTR not in module.attributes:
        return []
    out = []
    for pair in ir.ArrayAttr(module.attributes[EQUALITIES_ATTR]):
        a, b = list(ir.ArrayAttr(pair))
        out.append((a, b))
    return out


def declared_unbacked(module: ir.Operation | None) -> set[str]:
    """The declared symbols marked `unbacked` (values that depend on data)."""
    if module is None:
        return set()
    return {name for name, decl in sym.declared_symbols(module).items() if "unbacked" in decl.operation.attributes}


def has_uses(op: ir.Operation) -> bool:
    return any(True for r in op.results for _ in r.uses)


def erase_dead_expressions(block: ir.Block) -> int:
    """Erase the block's unused pure sym expression ops (chains included); returns how many."""
    erased = 0
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.operations)):
            o = op.operation
            if o.name in PURE_SYM_OPS and not has_uses(o):
                o.erase()
                erased += 1
                changed = True
    return erased


_TERMINATORS = ("func.return",)


def defining_op(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation


def sym_only(block: ir.Block) -> bool:
    """The block holds only sym expressions and checks, ended by func.return: its ops may be moved."""
    ops = [o.operation for o in block.operations]
    if not ops or ops[-1].name not in _TERMINATORS:
        return False
    return all(o.name in PURE_SYM_OPS or o.name in CHECK_OPS for o in ops[:-1])


def place_expressions(block: ir.Block, checks: list[ir.Operation]) -> bool:
    """Put `checks` in this order, each expression op just before its first user (operands first);
    ops no check uses keep their order before the terminator. Only for `sym_only` blocks. Returns
    whether anything moved."""
    ops = [o.operation for o in block.operations]
    placed: set = set()
    sequence: list[ir.Operation] = []

    def place(o: ir.Operation) -> None:
        if o in placed:
            return
        placed.add(o)
        for v in o.operands:
            d = defining_op(v)
            if d is not None and d.parent == o.parent and d.name in PURE_SYM_OPS:
                place(d)
        sequence.append(o)

    for c in checks:
        place(c)
    for o in ops[:-1]:
        place(o)
    if sequence == ops[:-1]:
        return False
    for o in sequence:
        o.move_before(ops[-1])
    return True


@dataclass
class Check:
    op: ir.Operation
    kind: str  # "bind" | "guard" | "assert"
    index: int  # position among the block's checks
    segment: int  # number of asserts before this check
    cond: object = None  # canonical condition (guards and asserts)
    label: str = ""  # a guard's origin, an assert's message
    removed: bool = False
    bounds: set = field(default_factory=set)  # declared bounds this range check enforces

    def describe(self) -> str:
        return f'"{self.label}" ({shapes.cond_text(self.cond)})'


@dataclass
class GuardBlock:
    """The checks of one block, their canonical conditions and a `Facts` over them.

    `ranges` decides how declared symbol ranges are used: "trusted" (facts, except bounds the block
    itself checks) or "none" (only the checks are facts)."""

    block: ir.Block
    module: ir.Operation | None
    ranges: str = "trusted"
    checks: list[Check] = field(default_factory=list)

    def __post_init__(self) -> None:
        memo: dict = {}
        segment = 0
        for op in self.block.operations:
            o = op.operation
            kind = CHECK_OPS.get(o.name)
            if kind is None:
                continue
            c = Check(o, kind, len(self.checks), segment)
            if kind != "bind":
                c.cond = shapes.read_condition(o.operands[0], memo)
                c.label = (_str_attr(o, "origin") if kind == "guard" else _str_attr(o, "msg")) or ""
            if kind == "assert":
                segment += 1
            self.checks.append(c)
        self.declared = declared_ranges(self.module)
        self.unbacked = declared_unbacked(self.module)
        for c in self.checks:
            c.bounds = self._checked_bounds(c.cond)
        checked = set().union(*(c.bounds for c in self.checks)) if self.checks else set()
        trusted: dict[str, tuple[int | None, int | None]] = {}
        if self.ranges == "trusted":
            for name, (lo, hi) in self.declared.items():
                trusted[name] = (
                    None if lo is not None and (lo > 0 or name in self.unbacked) and (name, "lo") in checked else lo,
                    None if (name, "hi") in checked else hi,
                )
        self.facts = shapes.Facts(trusted)
        for c in self.checks:
            if c.cond is not None:
                self.facts.add(c.index, c.cond)
        # Per check, for the predicates below: is a guard, segment, id of its condition (equal
        # conditions share one), symbol of a single-symbol range check.
        ids: dict = {}
        self._guard = [c.kind == "guard" for c in self.checks]
        self._segment = [c.segment for c in self.checks]
        self._cond_id = [ids.setdefault(c.cond, len(ids)) if c.cond is not None else -1 for c in self.checks]
        self._range_symbol = []
        for c in self.checks:
            b = shapes.single_symbol_bound(c.cond) if c.cond is not None else None
            self._range_symbol.append(b[0] if b else None)

    def _checked_bounds(self, cond) -> set[tuple[str, str]]:
        """The declared bounds a range check enforces: `s >= c` with c >= lo > 0, `s <= c` with c <= hi,
        `s == c` both (a bound <= 0 needs no check: sizes are never negative; but any bound of an
        unbacked symbol does)."""
        b = shapes.single_symbol_bound(cond) if cond is not None else None
        if b is None or b[0] not in self.declared:
            return set()
        name, kind, value = b
        lo, hi = self.declared[name]
        out = set()
        if kind in ("lo", "eq") and lo is not None and (lo > 0 or name in self.unbacked) and value >= lo:
            out.add((name, "lo"))
        if kind in ("hi", "eq") and hi is not None and value <= hi:
            out.add((name, "hi"))
        return out

    # --- which checks may justify removing another -----------------------------------------
    def justifiers(self, c: Check) -> Callable[[object], bool]:
        """Which checks may justify erasing `c`: for a guard, the checks before it and the guards after
        it up to the next assert; for an assert, the checks before it. A range check of a declared
        bound only by range checks of the same symbol (so that the bound stays checked, and what is
        trusted does not change when checks go)."""
        i, seg, guard = c.index, c.segment, self._guard
        segment = self._segment
        if c.kind == "assert":
            ok = lambda j: j.__class__ is int and j < i  # noqa: E731
        else:
            ok = lambda j: j.__class__ is int and j != i and (j < i or (guard[j] and segment[j] == seg))  # noqa: E731
        if not c.bounds:
            return ok
        name, rsym = next(iter(c.bounds))[0], self._range_symbol
        return lambda j: ok(j) and rsym[j] == name

    def other_guards(self, c: Check) -> Callable[[object], bool]:
        """The other guards, less those with the same condition (with them the facts would already be
        contradictory when `c` is false, and could then prove anything)."""
        guard, cid, mine = self._guard, self._cond_id, self._cond_id[c.index]
        return lambda j: j.__class__ is int and guard[j] and cid[j] != mine

    def remove(self, c: Check) -> None:
        c.removed = True
        self.facts.kill(c.index)

    def live(self) -> list[Check]:
        return [c for c in self.checks if not c.removed]

    # --- shared steps ---------------------------------------------------------------------
    def check_contradiction(self, c: Check) -> None:
        """Raise a located error if guard `c` cannot hold given the declared ranges and the other guards."""
        if c.cond == shapes.FALSE:
            raise located_error(c.op, f'guard "{c.label}" is always false')
        verdict, why = self.facts.decide(c.cond, lambda j: False, exact=False)  # the ranges alone
        if verdict is not False:
            verdict, why = self.facts.decide(c.cond, self.other_guards(c), exact=False)
        if verdict is not False:
            return
        guards = sorted(j for j in why if isinstance(j, int))
        ranges = sorted(name for tag, name in (w for w in why if isinstance(w, tuple)) if tag == "range")
        range_text = " and ".join(
            f"the declared range of {n} {_range_text(*self.declared.get(n, (None, None)))}" for n in ranges
        )
        if not guards:
            raise located_error(c.op, f"guard {c.describe()} can never hold for {range_text or 'any input'}")
        others = [self.checks[j].describe() for j in guards] + ([range_text] if range_text else [])
        raise located_error(c.op, f"contradictory guards: {c.describe()} cannot hold together with {' and '.join(others)}")

    def remove_duplicates(self) -> tuple[int, int]:
        """Erase checks whose canonical condition equals an earlier check's (keeping the first).
        Returns (guards, asserts) removed."""
        first: dict = {}
        removed = [0, 0]
        for c in self.checks:
            if c.cond is None or c.removed:
                continue
            if isinstance(c.cond, shapes.OpaqueCond) and c.cond.key[0] == "value":
                key = ("value", c.op.operands[0])  # same SSA value only
            else:
                key = c.cond
            if key in first:
                self.remove(c)
                removed[c.kind == "assert"] += 1
            else:
                first[key] = c.index
        return removed[0], removed[1]

    def remove_implied(self, *, on_remove: Callable[[Check, set], None] | None = None, asserts: bool = True) -> None:
        """Erase each guard implied by the facts its position allows, and (with `asserts`) each assert
        implied by the checks before it. Expensive conditions are tried first, so that of two guards
        implying each other the cheaper one stays; ties go in program order."""
        order = sorted(
            (c for c in self.checks if c.cond is not None and (asserts or c.kind != "assert")),
            key=lambda c: (-shapes.cost_class(c.cond), c.index),
        )
        for c in order:
            if c.removed:
                continue
            verdict, why = self.facts.decide(c.cond, self.justifiers(c))
            if verdict is True:
                self.remove(c)
                if on_remove:
                    on_remove(c, why)

    def erase_removed(self) -> int:
        n = 0
        for c in self.checks:
            if c.removed and c.op is not None:
                c.op.erase()
                c.op = None  # type: ignore[assignment]
                n += 1
        return n


def value_signature(v: ir.Value, memo: dict | None = None) -> object:
    """A structural key of the expression tree computing `v` (op names, attributes, operands)."""
    memo = {} if memo is None else memo
    if v in memo:
        return memo[v]
    owner = v.owner
    if isinstance(owner, ir.Block):
        out: object = ("arg", ir.BlockArgument(v).arg_number)
    else:
        o = owner.operation
        attrs = tuple(sorted((a.name, str(a.attr)) for a in (o.attributes[i] for i in range(len(o.attributes)))))
        out = (o.name, attrs, tuple(value_signature(x, memo) for x in o.operands))
    memo[v] = out
    return out


class GuardBlockPass(SymPass):
    """Shared driver of the guard passes: `_block` on every block of every guard function."""

    def run(self, op: ir.Operation) -> None:
        module = module_of(op)
        for fn in functions(op):
            for block in fn.regions[0].blocks:
                self._block(block, module)

    def _block(self, block: ir.Block, module: ir.Operation | None) -> None:
        # An erased assert joins two segments, which may let more guards go: repeat until no assert goes.
        for _ in range(8):
            if not self._round(block, module):
                break

    def _round(self, block: ir.Block, module: ir.Operation | None) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError


@register
class SymCanonicalize(GuardBlockPass):
    """Rewrite guard conditions in canonical form, fold implied guards and tautologies, reject contradictions."""

    name = "sym-canonicalize"

    def _round(self, block: ir.Block, module: ir.Operation | None) -> bool:
        """One analysis of the block; returns whether an assert was erased."""
        gb = GuardBlock(block, module, ranges="trusted")
        if not any(c.cond is not None for c in gb.checks):
            return False
        for c in reversed(gb.checks):  # of two conflicting guards, the later one is reported
            if c.kind == "guard":
                gb.check_contradiction(c)
        for c in gb.checks:
            if c.cond == shapes.TRUE:
                gb.remove(c)
                self.bump("tautologies-removed" if c.kind == "guard" else "asserts-removed")
        guards, asserts = gb.remove_duplicates()
        self.bump("guards-folded", guards) if guards else None
        self.bump("asserts-removed", asserts) if asserts else None

        def removed(c: Check, why: set) -> None:
            if c.kind == "assert":
                self.bump("asserts-removed")
            elif any(isinstance(w, int) for w in why):
                self.bump("guards-folded")
            else:
                self.bump("guards-folded-by-ranges")

        gb.remove_implied(on_remove=removed)
        asserts_gone = any(c.removed and c.kind == "assert" for c in gb.checks)
        gb.erase_removed()
        self._rewrite(gb)
        erase_dead_expressions(block)
        return asserts_gone

    def _rewrite(self, gb: GuardBlock) -> None:
        """Rebuild each live condition in canonical form just before its check. `sym.value` and
        `sym.constant` results are reused; in a sym-only block every expression op is then placed just
        before its first user, so the output does not depend on where the input put them (and a second
        run prints the same IR)."""
        live = [c for c in gb.live() if c.cond is not None and shapes.emittable(c.cond)]
        if not live:
            return
        movable = sym_only(gb.block)
        first = live[0].op
        seeds = []
        for op in gb.block.operations:
            o = op.operation
            if o == first and not movable:
                break  # without the final placement, reuse only what dominates every check
            if o.name in ("sym.value", "sym.constant"):
                seeds.append(o.results[0])
        builder = shapes.seeded_builder(seeds)
        for c in live:
            old = c.op.operands[0]
            builder.loc = c.op.location
            with ir.InsertionPoint(c.op):
                try:
                    new = shapes.emit_condition(builder, c.cond)
                except shapes.UnsupportedExpr:
                    continue  # keep the condition as written
            if value_signature(old) != value_signature(new):
                self.bump("conditions-rewritten")
            c.op.operands[0] = new
        erase_dead_expressions(gb.block)
        if movable:
            place_expressions(gb.block, [c.op for c in gb.live()])
