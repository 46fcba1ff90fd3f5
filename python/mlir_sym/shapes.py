"""Symbolic sizes: the only module that speaks sympy.

`ExprBuilder` turns PyTorch's sympy size expressions (Add, Mul, FloorDiv, Mod/PythonMod, CeilDiv,
Min, Max, Pow, relations, And/Or/Not) into `sym` ops; `to_sympy` reads `sym` ops back; `Range` and
`symbol_range` carry value ranges; `compile_exprs` turns expressions into one Python function of the
symbol values (for output sizes), built once per artifact.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import sympy
from torch_mlir import ir

from mlir_sym.dialects import sym

try:  # PyTorch's own size functions; their names are what ShapeEnv expressions contain
    from torch.utils._sympy import functions as tfn
except ImportError:  # pragma: no cover
    tfn = None


class UnsupportedExpr(ValueError):
    """An expression we cannot represent; the message names it."""


def _tfn(name: str) -> type | None:
    return getattr(tfn, name, None) if tfn is not None else None


FLOORDIV = tuple(t for t in (_tfn("FloorDiv"), _tfn("CleanDiv")) if t)
MOD = tuple(t for t in (_tfn("PythonMod"), _tfn("Mod"), sympy.Mod) if t)
CEILDIV = tuple(t for t in (_tfn("CeilDiv"),) if t)
POW = tuple(t for t in (_tfn("PowByNatural"), sympy.Pow) if t)
MIN = tuple(t for t in (sympy.Min, _tfn("Min")) if t)  # PyTorch's own Min/Max are not sympy's subclasses
MAX = tuple(t for t in (sympy.Max, _tfn("Max")) if t)
REL = {
    sympy.Eq: "eq", sympy.Ne: "ne", sympy.Lt: "lt", sympy.Le: "le",
    sympy.Gt: "gt", sympy.Ge: "ge", sympy.StrictLessThan: "lt", sympy.LessThan: "le",
    sympy.StrictGreaterThan: "gt", sympy.GreaterThan: "ge",
}


@dataclass(frozen=True)
class Range:
    lo: int
    hi: int | None  # None: unbounded

    def __str__(self) -> str:
        return f"[{'-oo' if self.lo == I64_MIN else self.lo}, {'oo' if self.hi is None else self.hi}]"


I64_MIN = -(2**63)
_UNBOUNDED_HI = 2**62  # PyTorch bounds unbacked counts by int64's max - 1: no bound in practice


def symbol_range(shape_env, s: sympy.Symbol) -> Range:
    """The ShapeEnv's value range of `s`. A size is never negative, so a backed symbol's lower bound is
    at least 0; an unbacked one (the value of `.item()`) may be unbounded below: lo = I64_MIN."""
    vr = shape_env.var_to_range.get(s)
    if vr is None:
        return Range(0, None)
    if getattr(vr.lower, "is_Integer", False):
        lo = max(int(vr.lower), I64_MIN)
    else:
        lo = I64_MIN if s.name.startswith("u") and vr.lower.is_negative else 0
    hi = int(vr.upper) if getattr(vr.upper, "is_Integer", False) and int(vr.upper) < _UNBOUNDED_HI else None
    return Range(lo, hi)


def free_symbols(e: sympy.Basic) -> list[sympy.Symbol]:
    return sorted(e.free_symbols, key=lambda s: s.name)


class ExprBuilder:
    """Emit `sym` ops for sympy expressions at the current insertion point, memoizing per builder."""

    def __init__(self, loc: ir.Location | None = None) -> None:
        self._memo: dict[sympy.Basic, ir.Value] = {}
        self.loc = loc

    def value(self, e: sympy.Basic | int) -> ir.Value:
        e = sympy.sympify(e)
        if e in self._memo:
            return self._memo[e]
        v = self._emit(e)
        self._memo[e] = v
        return v

    def _emit(self, e: sympy.Basic) -> ir.Value:
        loc = self.loc
        if e.is_Integer:
            return sym.ConstantOp(_i64(int(e)), loc=loc).res
        if isinstance(e, sympy.Symbol):
            return sym.ValueOp(ir.StringAttr.get(e.name), loc=loc).res
        if isinstance(e, sympy.Add):
            pos = [a for a in e.args if not _is_negated(a)]
            neg = [-a for a in e.args if _is_negated(a)]
            acc = self._fold("add", pos) if pos else self.value(0)
            for n in neg:
                acc = sym.SubOp(acc, self.value(n), loc=loc).res
            return acc
        if isinstance(e, sympy.Mul):
            return self._fold("mul", list(e.args))
        if FLOORDIV and isinstance(e, FLOORDIV):
            return sym.FloorDivOp(self.value(e.args[0]), self.value(e.args[1]), loc=loc).res
        if CEILDIV and isinstance(e, CEILDIV):
            return sym.CeilDivOp(self.value(e.args[0]), self.value(e.args[1]), loc=loc).res
        if isinstance(e, MOD):
            return sym.ModOp(self.value(e.args[0]), self.value(e.args[1]), loc=loc).res
        if isinstance(e, MIN):
            return self._fold("min", list(e.args))
        if isinstance(e, MAX):
            return self._fold("max", list(e.args))
        if isinstance(e, POW):
            base, exp = e.args
            if not (exp.is_Integer and int(exp) >= 0):
                raise UnsupportedExpr(f"power with a non-constant or negative exponent: {e}")
            return sym.PowOp(self.value(base), self.value(exp), loc=loc).res
        modind = _tfn("ModularIndexing")
        if modind and isinstance(e, modind):  # (x // d) % m
            x, d, m = e.args
            q = sym.FloorDivOp(self.value(x), self.value(d), loc=loc).res
            return sym.ModOp(q, self.value(m), loc=loc).res
        raise UnsupportedExpr(f"unsupported size expression '{e}' ({type(e).__name__})")

    def _fold(self, kind: str, args: list[sympy.Basic]) -> ir.Value:
        cls = sym.BINARY_OP_CLASSES[kind]
        args = sorted(args, key=sympy.default_sort_key)
        acc = self.value(args[0])
        for a in args[1:]:
            acc = cls(acc, self.value(a), loc=self.loc).res
        return acc

    def condition(self, e: sympy.Basic) -> ir.Value:
        """An i1 value for a relation or boolean combination of relations."""
        if e is sympy.true or e == True:  # noqa: E712
            return sym.CmpOp(ir.StringAttr.get("eq"), self.value(0), self.value(0), loc=self.loc).res
        if e is sympy.false or e == False:  # noqa: E712
            return sym.CmpOp(ir.StringAttr.get("ne"), self.value(0), self.value(0), loc=self.loc).res
        for rel, pred in REL.items():
            if type(e) is rel:
                return sym.CmpOp(ir.StringAttr.get(pred), self.value(e.lhs), self.value(e.rhs), loc=self.loc).res
        if isinstance(e, sympy.And):
            vals = [self.condition(a) for a in sorted(e.args, key=sympy.default_sort_key)]
            acc = vals[0]
            for v in vals[1:]:
                acc = sym.AndOp(acc, v, loc=self.loc).res
            return acc
        if isinstance(e, sympy.Or):
            vals = [self.condition(a) for a in sorted(e.args, key=sympy.default_sort_key)]
            acc = vals[0]
            for v in vals[1:]:
                acc = sym.OrOp(acc, v, loc=self.loc).res
            return acc
        if isinstance(e, sympy.Not):
            return sym.NotOp(self.condition(e.args[0]), loc=self.loc).res
        raise UnsupportedExpr(f"unsupported condition '{e}' ({type(e).__name__})")


def _is_negated(a: sympy.Basic) -> bool:
    return a.could_extract_minus_sign() and not a.is_Integer or (a.is_Integer and int(a) < 0)


def _i64(v: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


# ---------------------------------------------------------------------------------------------
# sym ops -> sympy (used by passes that reason about guards)

_BINARY_TO_SYMPY: dict[str, Callable[[sympy.Expr, sympy.Expr], sympy.Expr]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: (tfn.FloorDiv(a, b) if tfn else sympy.floor(a / b)),
    "ceildiv": lambda a, b: (tfn.CeilDiv(a, b) if tfn and hasattr(tfn, "CeilDiv") else sympy.ceiling(a / b)),
    "mod": lambda a, b: (tfn.PythonMod(a, b) if tfn and hasattr(tfn, "PythonMod") else sympy.Mod(a, b)),
    "min": sympy.Min,
    "max": sympy.Max,
    "pow": lambda a, b: a**b,
}
_CMP_TO_SYMPY = {"eq": sympy.Eq, "ne": sympy.Ne, "lt": sympy.Lt, "le": sympy.Le, "gt": sympy.Gt, "ge": sympy.Ge}


def to_sympy(v: ir.Value, memo: dict | None = None) -> sympy.Basic:
    """Read the expression computing `v` (a tree of sym ops) as sympy. Values not produced by a sym
    op become opaque symbols named after their SSA position (`%argN`)."""
    memo = {} if memo is None else memo
    key = v
    if key in memo:
        return memo[key]
    owner = v.owner
    name = owner.name if isinstance(owner, ir.Operation) else getattr(getattr(owner, "operation", None), "name", None)
    if name is None or not name.startswith("sym."):
        out = sympy.Symbol(f"%{v.get_name()}" if hasattr(v, "get_name") else "%opaque", integer=True)
    else:
        op = owner.operation if hasattr(owner, "operation") else owner
        kind = name[4:]
        args = [to_sympy(o, memo) for o in op.operands]
        attrs = op.attributes
        if kind == "constant":
            out = sympy.Integer(ir.IntegerAttr(attrs["value"]).value)
        elif kind == "value":
            out = sympy.Symbol(ir.StringAttr(attrs["symbol"]).value, integer=True)
        elif kind in _BINARY_TO_SYMPY:
            out = _BINARY_TO_SYMPY[kind](*args)
        elif kind == "cmp":
            out = _CMP_TO_SYMPY[ir.StringAttr(attrs["predicate"]).value](*args)
        elif kind == "and":
            out = sympy.And(*args)
        elif kind == "or":
            out = sympy.Or(*args)
        elif kind == "not":
            out = sympy.Not(args[0])
        else:
            raise UnsupportedExpr(f"'{name}' is not an expression op")
    memo[key] = out
    return out


# ---------------------------------------------------------------------------------------------
# Evaluation in Python (output sizes: built once per artifact, called per invocation)


def compile_exprs(exprs: Sequence[sympy.Basic | int], symbols: Sequence[str]) -> Callable[..., tuple]:
    """A function `f(*symbol_values) -> tuple(int(expr) for expr in exprs)` generated once."""
    from torch.utils._sympy.printers import PythonPrinter  # how PyTorch prints sizes as Python

    printer = PythonPrinter()
    body = ", ".join(printer.doprint(sympy.sympify(e)) for e in exprs)
    args = ", ".join(symbols)
    src = f"def _sizes({args}):\n    return ({body}{',' if len(exprs) == 1 else ''})\n"
    ns: dict = {"math": __import__("math")}
    exec(compile(src, "<mlir_sym sizes>", "exec"), ns)  # noqa: S102 - our own printed expressions
    fn = ns["_sizes"]
    fn.source = src  # type: ignore[attr-defined]
    return fn


def as_int(e: sympy.Basic | int) -> int | None:
    e = sympy.sympify(e)
    return int(e) if e.is_Integer else None


def sorted_symbols(symbols: Iterable[sympy.Symbol]) -> list[sympy.Symbol]:
    return sorted(set(symbols), key=lambda s: s.name)


# ---------------------------------------------------------------------------------------------
# Guard reasoning (used by sym-canonicalize, sym-guard-cse, sym-guard-schedule, sym-assert-elim).
#
# A condition is read into a canonical form (`Cond`):
#   * `Rel(kind, lin)`: `lin >= 0` (kind "ge"), `lin == 0` ("eq") or `lin != 0` ("ne"), where `lin` is an
#     integer combination of *atoms* (symbols, or nonlinear terms: `s0*s1`, `FloorDiv(s0, 2)`,
#     `PythonMod(s0, 8)`, `Max(s0, s1)`, ...) plus a constant. Strict relations become non-strict
#     (integers: `a < b` is `b - a - 1 >= 0`), the gcd of the coefficients is divided out (rounding the
#     constant of a `>=`), and an equality's first term is positive; so `2*s0 > 3`, `s0*2 >= 4` and
#     `4 <= 2*s0` are the same `Rel("ge", s0 - 2)`;
#   * `BoolCond("and"|"or", args)`, `ConstCond(bool)`, and `OpaqueCond` for what sympy cannot read
#     (compared only for identity, never rewritten).
# `Facts` decides conditions from assumptions (conditions with an owner, e.g. a guard's position) and
# trusted symbol ranges: interval arithmetic over atom ranges (torch's `bound_sympy` for nonlinear
# atoms), atom bounds tightened by single-atom assumptions, exact matches on the same linear form, and
# one-step linear combinations `query - r * assumption`. Sound, not complete: None means "unknown".

import logging
import math as _math

_SORT_KEYS: dict = {}


def _skey(a: sympy.Basic):
    k = _SORT_KEYS.get(a)
    if k is None:
        if len(_SORT_KEYS) > 100_000:
            _SORT_KEYS.clear()
        k = _SORT_KEYS[a] = sympy.default_sort_key(a)
    return k


@dataclass(frozen=True)
class Lin:
    """`sum(coeff * atom) + const`; terms sorted by atom, coefficients non-zero integers."""

    terms: tuple
    const: int

    def __neg__(self) -> "Lin":
        return Lin(tuple((a, -c) for a, c in self.terms), -self.const)

    def shifted(self, k: int) -> "Lin":
        return Lin(self.terms, self.const + k)

    @property
    def atoms(self) -> tuple:
        return tuple(a for a, _ in self.terms)


@dataclass(frozen=True)
class Rel:
    kind: str  # "ge" | "eq" | "ne": lin >= 0 | lin == 0 | lin != 0
    lin: Lin


@dataclass(frozen=True)
class BoolCond:
    op: str  # "and" | "or"
    args: tuple


@dataclass(frozen=True)
class ConstCond:
    value: bool


@dataclass(frozen=True)
class OpaqueCond:
    key: object  # hashable identity (an ir.Value, or a tuple naming what could not be read)


TRUE, FALSE = ConstCond(True), ConstCond(False)


def _linear_parts(e: sympy.Basic) -> tuple[dict, int] | None:
    """(atom -> int coefficient, int constant) of `e` scaled by a positive integer, or None."""
    try:
        e = sympy.expand(e)
    except Exception:  # noqa: BLE001 - sympy cannot handle it: the caller keeps the expression opaque
        return None
    if e.is_Number:
        if not e.is_Rational:
            return None
        return {}, sympy.Rational(e)  # type: ignore[return-value]
    coeffs: dict = {}
    const = sympy.Integer(0)
    for term, c in e.as_coefficients_dict().items():
        c = sympy.sympify(c)
        if not c.is_Rational:
            return None
        if term == 1:
            const += c
            continue
        if term.is_Number or not term.free_symbols:
            return None
        coeffs[term] = coeffs.get(term, 0) + c
    dens = [sympy.Rational(c).q for c in coeffs.values()] + [sympy.Rational(const).q]
    scale = 1
    for d in dens:
        scale = scale * int(d) // _math.gcd(scale, int(d))
    return {a: int(c * scale) for a, c in coeffs.items()}, int(const * scale)


def _canonical(kind: str, coeffs: dict, const) -> "Rel | ConstCond":
    coeffs = {a: c for a, c in coeffs.items() if c}
    if not coeffs:
        if isinstance(const, sympy.Basic) and not const.is_Integer:  # a rational constant relation
            const = sympy.Rational(const)
            return ConstCond(bool(const >= 0) if kind == "ge" else (const == 0) == (kind == "eq"))
        const = int(const)
        return ConstCond(const >= 0 if kind == "ge" else (const == 0) == (kind == "eq"))
    const = int(const)
    g = 0
    for c in coeffs.values():
        g = _math.gcd(g, abs(c))
    if kind == "ge":
        const = const // g  # floor: sum(c/g * a) >= -const/g  <=>  sum(c/g * a) + floor(const/g) >= 0
    else:
        if const % g:
            return ConstCond(kind == "ne")
        const //= g
    terms = sorted(((a, c // g) for a, c in coeffs.items()), key=lambda t: _skey(t[0]))
    if kind != "ge" and terms[0][1] < 0:
        terms = [(a, -c) for a, c in terms]
        const = -const
    return Rel(kind, Lin(tuple(terms), const))


def relation(pred: str, lhs: sympy.Basic, rhs: sympy.Basic) -> "Rel | ConstCond | OpaqueCond":
    """The canonical form of `lhs <pred> rhs` (`pred`: eq ne lt le gt ge), integers."""
    parts = _linear_parts(sympy.sympify(lhs) - sympy.sympify(rhs))
    if parts is None:
        return OpaqueCond(("rel", pred, lhs, rhs))
    coeffs, k = parts
    neg = {a: -c for a, c in coeffs.items()}
    if pred == "ge":
        return _canonical("ge", coeffs, k)
    if pred == "gt":
        return _canonical("ge", coeffs, k - 1)
    if pred == "le":
        return _canonical("ge", neg, -k)
    if pred == "lt":
        return _canonical("ge", neg, -k - 1)
    if pred in ("eq", "ne"):
        return _canonical(pred, coeffs, k)
    raise ValueError(f"unknown predicate '{pred}'")


def negate(c):
    """The canonical form of `not c`."""
    if isinstance(c, ConstCond):
        return ConstCond(not c.value)
    if isinstance(c, Rel):
        if c.kind == "ge":
            return Rel("ge", (-c.lin).shifted(-1))
        return Rel("ne" if c.kind == "eq" else "eq", c.lin)
    if isinstance(c, BoolCond):
        return make_bool("or" if c.op == "and" else "and", [negate(a) for a in c.args])
    key = c.key
    if isinstance(key, tuple) and key and key[0] == "not":
        return OpaqueCond(key[1])
    return OpaqueCond(("not", key))


def make_bool(op: str, args) -> object:
    """Canonical `and`/`or` of conditions: flattened, constants folded, duplicates dropped, sorted."""
    unit, absorbing = (TRUE, FALSE) if op == "and" else (FALSE, TRUE)
    flat: list = []
    for a in args:
        parts = a.args if isinstance(a, BoolCond) and a.op == op else (a,)
        for p in parts:
            if p == absorbing:
                return absorbing
            if p != unit and p not in flat:
                flat.append(p)
    if not flat:
        return unit
    if len(flat) == 1:
        return flat[0]
    for p in flat:
        if negate(p) in flat:
            return absorbing
    flat.sort(key=cond_text)
    return BoolCond(op, tuple(flat))


def cond_symbols(c) -> set[str]:
    """Names of the symbols a condition reads (opaque conditions: none known)."""
    if isinstance(c, Rel):
        out: set[str] = set()
        for a in c.lin.atoms:
            out |= {s.name for s in a.free_symbols}
        return out
    if isinstance(c, BoolCond):
        out = set()
        for a in c.args:
            out |= cond_symbols(a)
        return out
    return set()


def is_linear(c) -> bool:
    """A relation whose atoms are all plain symbols."""
    return isinstance(c, Rel) and all(isinstance(a, sympy.Symbol) for a in c.lin.atoms)


def is_single_symbol_bound(c) -> bool:
    """`s >= k`, `s <= k`, `s == k` or `s != k` for one symbol `s`."""
    return isinstance(c, Rel) and len(c.lin.terms) == 1 and isinstance(c.lin.terms[0][0], sympy.Symbol)


def _sum(terms) -> sympy.Expr:
    return sympy.Add(*[c * a for a, c in terms]) if terms else sympy.Integer(0)


def rel_sides(r: Rel) -> tuple[str, sympy.Expr, sympy.Expr]:
    """(predicate, lhs, rhs) of a relation as emitted: terms with positive coefficients on the left,
    the rest and the constant on the right (`2*s0 - s1 - 3 >= 0` is `2*s0 >= s1 + 3`; `64 - s0 >= 0`
    is `s0 <= 64`)."""
    pos = [(a, c) for a, c in r.lin.terms if c > 0]
    neg = [(a, -c) for a, c in r.lin.terms if c < 0]
    k = r.lin.const
    if r.kind == "ge" and not pos:
        return "le", _sum(neg), sympy.Integer(k)
    return r.kind, _sum(pos), _sum(neg) - k


_PRED_TEXT = {"ge": ">=", "le": "<=", "eq": "==", "ne": "!=", "gt": ">", "lt": "<"}


def cond_text(c) -> str:
    """Readable text of a canonical condition (`s0 >= 2`, `Eq(...)` style avoided)."""
    if isinstance(c, Rel):
        pred, lhs, rhs = rel_sides(c)
        return f"{lhs} {_PRED_TEXT[pred]} {rhs}"
    if isinstance(c, BoolCond):
        return "(" + f" {c.op} ".join(cond_text(a) for a in c.args) + ")"
    if isinstance(c, ConstCond):
        return "true" if c.value else "false"
    key = c.key
    if isinstance(key, tuple) and key and key[0] == "rel":
        return f"{key[2]} {_PRED_TEXT[key[1]]} {key[3]}"
    if isinstance(key, tuple) and key and key[0] == "not":
        return f"not ({cond_text(OpaqueCond(key[1]))})"
    return "<opaque condition>"


def _opaque_free(e: sympy.Basic) -> bool:
    return not any(s.name.startswith("%") for s in e.free_symbols)


def emittable(c) -> bool:
    """Whether `emit_condition` can rebuild `c` from sym ops alone."""
    if isinstance(c, Rel):
        return all(_opaque_free(a) for a in c.lin.atoms)
    if isinstance(c, BoolCond):
        return all(emittable(a) for a in c.args)
    return isinstance(c, ConstCond)


def emit_condition(b: ExprBuilder, c) -> ir.Value:
    """Emit sym ops computing canonical condition `c` (check `emittable` first)."""
    if isinstance(c, ConstCond):
        return sym.CmpOp(ir.StringAttr.get("eq" if c.value else "ne"), b.value(0), b.value(0), loc=b.loc).res
    if isinstance(c, Rel):
        pred, lhs, rhs = rel_sides(c)
        lv, rv = b.value(lhs), b.value(rhs)
        return sym.CmpOp(ir.StringAttr.get(pred), lv, rv, loc=b.loc).res
    if isinstance(c, BoolCond):
        cls = sym.AndOp if c.op == "and" else sym.OrOp
        acc = emit_condition(b, c.args[0])
        for a in c.args[1:]:
            acc = cls(acc, emit_condition(b, a), loc=b.loc).res
        return acc
    raise UnsupportedExpr(f"cannot emit an opaque condition ({cond_text(c)})")


def seeded_builder(values: Iterable[ir.Value], loc: ir.Location | None = None) -> ExprBuilder:
    """An ExprBuilder that reuses the given existing index values (results of sym expression ops) for
    the expressions they compute, instead of emitting new ops."""
    b = ExprBuilder(loc)
    for v in values:
        try:
            b._memo.setdefault(to_sympy(v), v)
        except UnsupportedExpr:
            pass
    return b


def _value_op_name(v: ir.Value) -> str | None:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation.name if hasattr(owner, "operation") else getattr(owner, "name", None)


def read_condition(v: ir.Value, memo: dict | None = None):
    """The canonical condition computed by the i1 value `v` (a tree of sym ops). Anything that is not a
    sym expression, or that sympy cannot handle, is an `OpaqueCond` keyed by the value."""
    memo = {} if memo is None else memo
    key = ("cond", v)
    if key in memo:
        return memo[key]
    name = _value_op_name(v)
    out: object
    try:
        if name == "sym.cmp":
            op = v.owner.operation
            pred = ir.StringAttr(op.attributes["predicate"]).value
            out = relation(pred, to_sympy(op.operands[0], memo), to_sympy(op.operands[1], memo))
        elif name in ("sym.and", "sym.or"):
            op = v.owner.operation
            out = make_bool(name[4:], [read_condition(o, memo) for o in op.operands])
        elif name == "sym.not":
            out = negate(read_condition(v.owner.operation.operands[0], memo))
        else:
            out = OpaqueCond(("value", v))
    except Exception:  # noqa: BLE001 - sympy could not handle it: keep the condition as it is
        out = OpaqueCond(("value", v))
    if isinstance(out, OpaqueCond) and not (isinstance(out.key, tuple) and out.key[0] in ("value", "not")):
        out = OpaqueCond(("value", v))  # a relation sympy cannot linearize: never rebuilt
    memo[key] = out
    return out


# --- the prover ----------------------------------------------------------------------------------

_Bound = "int | None"


def _add(a, b):
    return None if a is None or b is None else a + b


def _finite(x, rounding) -> int | None:
    try:
        x = sympy.sympify(x)
    except Exception:  # noqa: BLE001
        return None
    if x.is_Integer:
        return int(x)
    if x.is_Rational:
        return int(rounding(x))
    return None  # infinite or symbolic


class Facts:
    """Assumptions with owners plus trusted symbol ranges; `decide(cond)` -> (True|False|None, why),
    where `why` is the set of owners (and `("range", name)` for a symbol's trusted range) the verdict
    used. `allowed(owner)` restricts which assumptions a query may use; `kill(owner)` retires one."""

    PAIRWISE_LIMIT = 48  # assumptions combined with one query (the rest are found by exact match/ranges)

    def __init__(self, ranges: dict[str, tuple[int | None, int | None]] | None = None) -> None:
        self.ranges = dict(ranges or {})
        self.alive: set = set()
        self._bounds: dict = {}  # atom -> [(lo, hi, excluded, owner)] from single-atom relations
        self._by_terms: dict = {}  # terms -> [(kind, const, owner)]
        self._by_atom: dict = {}  # atom -> [(Rel, owner)] for relations of two or more atoms
        self._exact: dict = {}  # condition -> [owner]
        self._bound_cache: dict = {}

    def add(self, owner, cond) -> None:
        self.alive.add(owner)
        self._index(owner, cond)

    def kill(self, owner) -> None:
        self.alive.discard(owner)

    def _index(self, owner, cond) -> None:
        if isinstance(cond, BoolCond) and cond.op == "and":
            for c in cond.args:
                self._index(owner, c)
        self._exact.setdefault(cond, []).append(owner)
        if not isinstance(cond, Rel):
            return
        lin = cond.lin
        self._by_terms.setdefault(lin.terms, []).append((cond.kind, lin.const, owner))
        if len(lin.terms) == 1:
            (a, c), k = lin.terms[0], lin.const  # canonical: c is 1 or -1
            lo = hi = excl = None
            if cond.kind == "ge":
                if c > 0:
                    lo = -(k // c)
                else:
                    hi = k // (-c)
            elif cond.kind == "eq":
                lo = hi = -k * c
            else:
                excl = -k * c
            self._bounds.setdefault(a, []).append((lo, hi, excl, owner))
        else:
            for a in lin.atoms:
                self._by_atom.setdefault(a, []).append((cond, owner))

    def decide(self, cond, allowed: Callable[[object], bool] | None = None, *, exact: bool = True) -> tuple[bool | None, set]:
        """`exact=False` skips the shortcut "an assumption is this very condition" (to look for a
        refutation even when the condition is among the assumptions)."""
        q = _Query(self, allowed)
        q.exact = exact
        return q.decide(cond)

    def atom_range(self, atom: sympy.Basic, allowed=None) -> tuple[int | None, int | None]:
        lo, hi, _, _ = _Query(self, allowed).atom_range(atom)
        return lo, hi

    def _bound(self, atom: sympy.Basic, rs: dict) -> tuple[int | None, int | None]:
        key = (atom, tuple(sorted((s.name, lo, hi) for s, (lo, hi) in rs.items())))
        hit = self._bound_cache.get(key)
        if hit is not None:
            return hit
        out: tuple[int | None, int | None] = (None, None)
        if not any(lo is not None and hi is not None and lo > hi for lo, hi in rs.values()):
            try:
                int_oo, ValueRanges, bound_sympy = _torch_bounds()
                vr = {s: ValueRanges(-int_oo if lo is None else lo, int_oo if hi is None else hi)
                      for s, (lo, hi) in rs.items()}
                quiet = logging.getLogger("torch.utils._sympy.interp")  # it logs what it cannot bound
                level = quiet.level
                quiet.setLevel(logging.ERROR)
                try:
                    r = bound_sympy(atom, vr)
                finally:
                    quiet.setLevel(level)
                out = (_finite(r.lower, _math.ceil), _finite(r.upper, _math.floor))
            except Exception:  # noqa: BLE001 - no bound known
                out = (None, None)
        if len(self._bound_cache) > 50_000:
            self._bound_cache.clear()
        self._bound_cache[key] = out
        return out


_TORCH_BOUNDS: tuple = ()


def _torch_bounds() -> tuple:
    global _TORCH_BOUNDS
    if not _TORCH_BOUNDS:
        from torch.utils._sympy.numbers import int_oo
        from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

        _TORCH_BOUNDS = (int_oo, ValueRanges, bound_sympy)
    return _TORCH_BOUNDS


class _Query:
    def __init__(self, facts: Facts, allowed) -> None:
        self.f = facts
        self.allowed = allowed
        self.ranges: dict = {}
        self.exact = True

    def ok(self, owner) -> bool:
        if owner not in self.f.alive:
            return False
        allowed = self.allowed
        return allowed is None or allowed(owner)

    # ranges ---------------------------------------------------------------------------------
    PROPAGATE_DEPTH = 2  # levels of bound propagation through relations of several atoms

    def atom_range(self, a, depth: int = 0):
        """(lo, hi, why_lo, why_hi) of atom `a`: its trusted range (or torch's bound of a nonlinear
        atom over its symbols' ranges), tightened by the single-atom assumptions and, up to
        PROPAGATE_DEPTH levels, by relations of several atoms (`c*a + rest >= 0` bounds `a` by the
        range of `rest`, computed one level deeper)."""
        key = (a, depth)
        hit = self.ranges.get(key)
        if hit is not None:
            return hit
        self.ranges[key] = (None, None, frozenset(), frozenset())  # cycle guard (unbounded: sound)
        lo = hi = None
        wl: set = set()
        wh: set = set()
        if isinstance(a, sympy.Symbol):
            lo, hi = self.f.ranges.get(a.name, (None, None))
            if lo is not None:
                wl.add(("range", a.name))
            if hi is not None:
                wh.add(("range", a.name))
        else:
            rs = {}
            why: set = set()
            for s in sorted(a.free_symbols, key=lambda s: s.name):
                slo, shi, swl, swh = self.atom_range(s, depth)
                rs[s] = (slo, shi)
                why |= swl | swh
            lo, hi = self.f._bound(a, rs)
            if lo is not None:
                wl |= why
            if hi is not None:
                wh |= why
        excluded = []
        for blo, bhi, excl, owner in self.f._bounds.get(a, ()):
            if not self.ok(owner):
                continue
            if blo is not None and (lo is None or blo > lo):
                lo, wl = blo, {owner}
            if bhi is not None and (hi is None or bhi < hi):
                hi, wh = bhi, {owner}
            if excl is not None:
                excluded.append((excl, owner))
        if depth < self.PROPAGATE_DEPTH:
            seen = 0
            for rel, owner in self.f._by_atom.get(a, ()):
                if rel.kind == "ne" or not self.ok(owner):
                    continue
                seen += 1
                if seen > 16:
                    break
                c = dict(rel.lin.terms)[a]
                rest = [(b, k) for b, k in rel.lin.terms if b != a]
                rlo, rhi, rwl, rwh = self.interval(rest, rel.lin.const, depth + 1)
                # c*a + rest >= 0 with rest <= rhi: c > 0 gives a >= ceil(-rhi / c), c < 0 gives
                # a <= floor(rhi / -c). An equality also gives the same for -(c*a + rest) >= 0.
                for sign in ((1,) if rel.kind == "ge" else (1, -1)):
                    cc = c * sign
                    r_hi, r_wh = (rhi, rwh) if sign == 1 else (None if rlo is None else -rlo, rwl)
                    if r_hi is None:
                        continue
                    if cc > 0:
                        b = -(r_hi // cc)
                        if lo is None or b > lo:
                            lo, wl = b, set(r_wh) | {owner}
                    else:
                        b = r_hi // (-cc)
                        if hi is None or b < hi:
                            hi, wh = b, set(r_wh) | {owner}
        if excluded:
            changed = True
            while changed:
                changed = False
                for v, owner in excluded:
                    if lo is not None and v == lo:
                        lo, wl = lo + 1, wl | {owner}
                        changed = True
                    if hi is not None and v == hi:
                        hi, wh = hi - 1, wh | {owner}
                        changed = True
        out = (lo, hi, frozenset(wl), frozenset(wh))
        self.ranges[key] = out
        return out

    def interval(self, items, const, depth: int = 0):
        lo = hi = const
        wl: set = set()
        wh: set = set()
        for a, c in items:
            if not c:
                continue
            alo, ahi, awl, awh = self.atom_range(a, depth)
            if c > 0:
                lo = None if lo is None or alo is None else lo + c * alo
                hi = None if hi is None or ahi is None else hi + c * ahi
                wl |= awl
                wh |= awh
            else:
                lo = None if lo is None or ahi is None else lo + c * ahi
                hi = None if hi is None or alo is None else hi + c * alo
                wl |= awh
                wh |= awl
        return lo, hi, wl, wh

    # relations ------------------------------------------------------------------------------
    def ge(self, lin: Lin):
        lo, hi, wl, wh = self.interval(lin.terms, lin.const)
        if lo is not None and lo >= 0:
            return True, wl
        if hi is not None and hi < 0:
            return False, wh
        for kind, k2, owner in self.f._by_terms.get(lin.terms, ()):
            if not self.ok(owner):
                continue
            if kind == "ge" and lin.const >= k2:
                return True, {owner}
            if kind == "eq":
                return lin.const - k2 >= 0, {owner}
        neg = (-lin).terms
        for kind, k2, owner in self.f._by_terms.get(neg, ()):
            if not self.ok(owner):
                continue
            if kind == "ge" and k2 + lin.const < 0:
                return False, {owner}
            if kind == "eq":
                return k2 + lin.const >= 0, {owner}
        return self.pairwise(lin)

    def pairwise(self, lin: Lin):
        """`lin >= 0` from one assumption A sharing an atom: with r = num/den (den > 0) the ratio of
        their coefficients on that atom, bound D = den*lin - num*A. A `>= 0` with r > 0: lo(D) >= 0
        proves it; r < 0: hi(D) < 0 refutes it. A `== 0`: either, for any r."""
        mine = dict(lin.terms)
        seen: set = set()
        count = 0
        for a in lin.atoms:
            for rel, owner in self.f._by_atom.get(a, ()):
                key = (id(rel), owner)
                if key in seen or rel.kind == "ne" or not self.ok(owner):
                    continue
                seen.add(key)
                count += 1
                if count > Facts.PAIRWISE_LIMIT:
                    return None, set()
                theirs = dict(rel.lin.terms)
                ratios = set()
                for b, cb in mine.items():
                    if b in theirs:
                        t = theirs[b]
                        num, den = (cb, t) if t > 0 else (-cb, -t)
                        g = _math.gcd(num, den)
                        ratios.add((num // g, den // g))
                for num, den in sorted(ratios):
                    items = [(b, den * mine.get(b, 0) - num * theirs.get(b, 0)) for b in mine.keys() | theirs.keys()]
                    lo, hi, wl, wh = self.interval(items, den * lin.const - num * rel.lin.const)
                    if rel.kind == "ge":
                        if num > 0 and lo is not None and lo >= 0:
                            return True, wl | {owner}
                        if num < 0 and hi is not None and hi < 0:
                            return False, wh | {owner}
                    else:
                        if lo is not None and lo >= 0:
                            return True, wl | {owner}
                        if hi is not None and hi < 0:
                            return False, wh | {owner}
        return None, set()

    def eq(self, lin: Lin):
        for kind, k2, owner in self.f._by_terms.get(lin.terms, ()):
            if not self.ok(owner):
                continue
            if kind == "eq":
                return k2 == lin.const, {owner}
            if kind == "ne" and k2 == lin.const:
                return False, {owner}
        v1, w1 = self.ge(lin)
        if v1 is False:
            return False, w1
        v2, w2 = self.ge(-lin)
        if v2 is False:
            return False, w2
        if v1 and v2:
            return True, w1 | w2
        v3, w3 = self.ge(lin.shifted(-1))
        if v3:
            return False, w3
        v4, w4 = self.ge((-lin).shifted(-1))
        if v4:
            return False, w4
        return None, set()

    def decide(self, c):
        if isinstance(c, ConstCond):
            return c.value, set()
        for owner in self.f._exact.get(c, ()) if self.exact else ():
            if self.ok(owner):
                return True, {owner}
        if isinstance(c, OpaqueCond):
            for owner in self.f._exact.get(negate(c), ()):
                if self.ok(owner):
                    return False, {owner}
            return None, set()
        if isinstance(c, Rel):
            if c.kind == "ge":
                return self.ge(c.lin)
            v, w = self.eq(c.lin)
            return (v if c.kind == "eq" or v is None else not v), w
        verdicts = [self.decide(a) for a in c.args]
        why: set = set()
        if c.op == "and":
            for v, w in verdicts:
                if v is False:
                    return False, w
            if all(v for v, _ in verdicts):
                for _, w in verdicts:
                    why |= w
                return True, why
            return None, set()
        for v, w in verdicts:
            if v:
                return True, w
        if all(v is False for v, _ in verdicts):
            for _, w in verdicts:
                why |= w
            return False, why
        return None, set()


def cost_class(c) -> int:
    """Evaluation cost class of a check, cheapest first: 0 single-symbol range checks (`s >= k`,
    `s == k`, ...), 1 linear equalities, 2 other linear relations, 3 nonlinear or boolean conditions
    and anything opaque."""
    if is_single_symbol_bound(c):
        return 0
    if is_linear(c):
        return 1 if c.kind == "eq" else 2
    return 3


def equality_canon(pairs: Iterable[tuple[sympy.Basic, sympy.Basic]]) -> Callable[[sympy.Basic], sympy.Basic]:
    """`canon(expr)`: `expr` with every expression of an equality class of `pairs` (facts `a == b`,
    e.g. the guard `Eq(s0*s1, s2*s3)` when two inputs' sizes have symbols of their own) written as
    the class's least member by sympy's sort key, so that equal sizes read as equal expressions.
    Without pairs, the identity."""
    parent: dict = {}

    def find(e):
        while parent.get(e, e) != e:
            e = parent[e]
        return e

    for a, b in pairs:
        a, b = find(sympy.sympify(a)), find(sympy.sympify(b))
        if a != b:
            lo, hi = sorted((a, b), key=sympy.default_sort_key)
            parent[hi] = lo
    subs = [(e, find(e)) for e in parent if find(e) != e]
    if not subs:
        return lambda e: e

    def canon(e: sympy.Basic) -> sympy.Basic:
        if not isinstance(e, sympy.Basic) or not e.free_symbols:
            return e
        for _ in range(4):  # a class's least member never rewrites back into another member
            todo = [(k, v) for k, v in subs if k.free_symbols <= e.free_symbols]
            new = e.subs(todo) if todo else e
            if new == e:
                break
            e = new
        return e

    return canon


def parse_size_expr(text: str) -> sympy.Expr:
    """A size expression written in sympy syntax, as `str()` of PyTorch's size expressions prints it
    (`s0`, `4`, `2*s0 + 1`, `(s0//2)`, `FloorDiv(s0, 2)`, `PythonMod(s0, 8)`, `Max(1, s0)`, `s0**2`,
    `ModularIndexing(s0, 2, 4)`); every name is an integer symbol. A call or operator it does not know
    (`TruncToInt(...)`, `/`) becomes an opaque integer named by its text, so equal texts stay equal.
    Raises UnsupportedExpr on a syntax error."""
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise UnsupportedExpr(f"cannot parse size expression '{text}': {e.msg}") from None
    funcs = {
        "FloorDiv": _BINARY_TO_SYMPY["floordiv"], "CleanDiv": _BINARY_TO_SYMPY["floordiv"],
        "CeilDiv": _BINARY_TO_SYMPY["ceildiv"], "Mod": _BINARY_TO_SYMPY["mod"],
        "PythonMod": _BINARY_TO_SYMPY["mod"], "PowByNatural": _BINARY_TO_SYMPY["pow"],
        "ModularIndexing": lambda x, d, m: _BINARY_TO_SYMPY["mod"](_BINARY_TO_SYMPY["floordiv"](x, d), m),
        "Min": sympy.Min, "Max": sympy.Max,
    }
    binops = {
        ast.Add: _BINARY_TO_SYMPY["add"], ast.Sub: _BINARY_TO_SYMPY["sub"], ast.Mult: _BINARY_TO_SYMPY["mul"],
        ast.FloorDiv: _BINARY_TO_SYMPY["floordiv"], ast.Mod: _BINARY_TO_SYMPY["mod"], ast.Pow: _BINARY_TO_SYMPY["pow"],
    }

    def conv(n: ast.AST) -> sympy.Expr:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return sympy.Integer(n.value)
        if isinstance(n, ast.Name):
            return sympy.Symbol(n.id, integer=True)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = conv(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp) and type(n.op) in binops:
            return binops[type(n.op)](conv(n.left), conv(n.right))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in funcs and not n.keywords:
            try:
                return funcs[n.func.id](*[conv(a) for a in n.args])
            except TypeError:  # wrong arity: not the function we know
                pass
        return sympy.Symbol("%" + ast.unparse(n), integer=True)  # opaque, but equal to itself

    return conv(tree.body)


def integer_symbol(name: str) -> sympy.Symbol:
    """The symbol `to_sympy` and `parse_size_expr` use for `name` (an integer symbol)."""
    return sympy.Symbol(name, integer=True)


def size_binary(kind: str, a: sympy.Basic | int, b: sympy.Basic | int) -> sympy.Expr:
    """`a <kind> b` for kind in sym's binary ops (add sub mul floordiv ceildiv mod min max pow)."""
    return _BINARY_TO_SYMPY[kind](sympy.sympify(a), sympy.sympify(b))


def expr_symbols(e: sympy.Basic) -> set[str]:
    return {s.name for s in sympy.sympify(e).free_symbols}


def sympy_int(n: int) -> sympy.Integer:
    return sympy.Integer(int(n))


def single_symbol_bound(c) -> tuple[str, str, int] | None:
    """(symbol, "lo" | "hi" | "eq", value) when `c` is `s >= value`, `s <= value` or `s == value`."""
    if not is_single_symbol_bound(c) or c.kind == "ne":
        return None
    (atom, coeff), k = c.lin.terms[0], c.lin.const
    if c.kind == "eq":
        return atom.name, "eq", -k
    return (atom.name, "lo", -k) if coeff > 0 else (atom.name, "hi", k)
