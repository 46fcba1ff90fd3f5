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
        return f"[{self.lo}, {'oo' if self.hi is None else self.hi}]"


def symbol_range(shape_env, s: sympy.Symbol) -> Range:
    vr = shape_env.var_to_range.get(s)
    if vr is None:
        return Range(0, None)
    lo = int(vr.lower) if getattr(vr.lower, "is_Integer", False) else 0
    hi = int(vr.upper) if getattr(vr.upper, "is_Integer", False) else None
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
