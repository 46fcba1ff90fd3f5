"""The `sym` dialect: symbolic sizes, their facts, and the checks that guard a compiled artifact.

Defined in Python on IRDL (`torch_mlir.dialects.ext`), so ops print in MLIR's generic form. The dialect
has three layers (reference with examples: dialects/sym.md):

* declarations (module level): `sym.symbol` names a size variable as PyTorch does (`s0`, `u0` for
  unbacked), with its value range [lo, hi] (`hi` absent = unbounded) and an optional `hint`;
* expressions (Pure, index-typed, CSE-able): `sym.value` reads a symbol, `sym.constant`, the integer
  arithmetic sympy uses for sizes (`add sub mul floordiv ceildiv mod min max pow`), `sym.cmp`
  (`eq ne lt le gt ge`, result i1) and boolean `and or not`;
* facts and checks (side-effecting, never erased by DCE): `sym.bind` ties a value (a SymInt argument,
  an index, or with `dim = d` a tensor's dimension) to an expression; `sym.guard` is a validity condition
  of a compiled artifact (failing selects another variant or recompiles); `sym.assert` is a runtime check
  whose failure is the user's error.
"""

from typing import Any

from torch_mlir import ir
from torch_mlir.dialects import ext
from torch_mlir.dialects.ext import Dialect, Operand, Pure, Result

INF = None  # an absent `hi` means the range is unbounded above
CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
BINARY_OPS = ("add", "sub", "mul", "floordiv", "ceildiv", "mod", "min", "max", "pow")
BOOL_BINARY_OPS = ("and", "or")


class Sym(Dialect, name="sym"):
    pass


def _index() -> ir.Type:
    return ir.IndexType.get()


def _i1() -> ir.Type:
    return ir.IntegerType.get_signless(1)


def _error(op: ir.OpView, message: str) -> bool:
    op.location.emit_error(f"'{op.operation.name}' op {message}")
    return False


def _int_attr(op: ir.OpView, name: str) -> int | None:
    attrs = op.operation.attributes
    if name not in attrs:
        return None
    attr = attrs[name]
    if not isinstance(attr, ir.IntegerAttr):
        raise TypeError(name)
    return ir.IntegerAttr(attr).value


def enclosing_module(op: ir.Operation) -> ir.Operation | None:
    cur = op.parent
    while cur is not None and cur.name != "builtin.module":
        cur = cur.parent
    return cur


def declared_symbols(module: ir.Operation) -> dict[str, "SymbolOp"]:
    """Name -> `sym.symbol` op for every declaration at the top of `module`."""
    out: dict[str, ir.OpView] = {}
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "sym.symbol":
            out[ir.StringAttr(op.operation.attributes["sym_name"]).value] = op
    return out


class SymbolOp(Sym.Operation, name="symbol"):
    """A size variable with its range: `"sym.symbol"() {sym_name = "s0", lo = 2, hi = 64, hint = 8}`."""

    sym_name: ir.StringAttr
    lo: ir.IntegerAttr

    def verify_invariants(self) -> bool:
        try:
            lo, hi, hint = _int_attr(self, "lo"), _int_attr(self, "hi"), _int_attr(self, "hint")
        except TypeError as e:
            return _error(self, f"attribute '{e}' must be an integer")
        name = ir.StringAttr(self.operation.attributes["sym_name"]).value
        if not name or not (name[0].isalpha() or name[0] == "_"):
            return _error(self, f"symbol name '{name}' must start with a letter")
        if hi is not None and lo > hi:
            return _error(self, f"symbol '{name}' has an empty range: lo = {lo} > hi = {hi}")
        if hint is not None and (hint < lo or (hi is not None and hint > hi)):
            return _error(self, f"symbol '{name}' hint {hint} lies outside its range")
        parent = self.operation.parent
        if parent is None or parent.name != "builtin.module":
            return _error(self, "must be declared at the top level of a module")
        count = sum(
            1
            for op in parent.regions[0].blocks[0].operations
            if op.operation.name == "sym.symbol"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == name
        )
        if count > 1:
            return _error(self, f"symbol '{name}' is declared more than once")
        return True


class ValueOp(Sym.Operation, name="value", traits=[Pure]):
    """The value of a declared symbol in this invocation: `%s0 = "sym.value"() {symbol = "s0"}`."""

    symbol: ir.StringAttr
    res: Result[ir.IndexType] = ext.result(default_factory=_index)

    def verify_invariants(self) -> bool:
        name = ir.StringAttr(self.operation.attributes["symbol"]).value
        module = enclosing_module(self.operation)
        if module is None or name not in declared_symbols(module):
            return _error(self, f"refers to unknown symbol '{name}'")
        return True


class ConstantOp(Sym.Operation, name="constant", traits=[Pure]):
    value: ir.IntegerAttr
    res: Result[ir.IndexType] = ext.result(default_factory=_index)


def _binary(opname: str) -> type:
    class _Binary(Sym.Operation, name=opname, traits=[Pure]):
        lhs: Operand[ir.IndexType]
        rhs: Operand[ir.IndexType]
        res: Result[ir.IndexType] = ext.result(default_factory=_index)

    _Binary.__name__ = _Binary.__qualname__ = opname.capitalize() + "Op"
    return _Binary


AddOp, SubOp, MulOp, FloorDivOp, CeilDivOp, ModOp, MinOp, MaxOp, PowOp = (
    _binary(n) for n in BINARY_OPS
)
BINARY_OP_CLASSES = dict(zip(BINARY_OPS, (AddOp, SubOp, MulOp, FloorDivOp, CeilDivOp, ModOp, MinOp, MaxOp, PowOp)))


class CmpOp(Sym.Operation, name="cmp", traits=[Pure]):
    """`%c = "sym.cmp"(%a, %b) {predicate = "le"} : (index, index) -> i1`."""

    predicate: ir.StringAttr
    lhs: Operand[ir.IndexType]
    rhs: Operand[ir.IndexType]
    res: Result[ir.IntegerType] = ext.result(default_factory=_i1)

    def verify_invariants(self) -> bool:
        pred = ir.StringAttr(self.operation.attributes["predicate"]).value
        if pred not in CMP_PREDICATES:
            return _error(self, f"unknown predicate '{pred}' (expected one of {', '.join(CMP_PREDICATES)})")
        return _verify_i1_result(self)


def _bool_binary(opname: str) -> type:
    class _BoolBinary(Sym.Operation, name=opname, traits=[Pure]):
        lhs: Operand[ir.IntegerType]
        rhs: Operand[ir.IntegerType]
        res: Result[ir.IntegerType] = ext.result(default_factory=_i1)

    _BoolBinary.__name__ = _BoolBinary.__qualname__ = opname.capitalize() + "Op"
    return _BoolBinary


AndOp, OrOp = (_bool_binary(n) for n in BOOL_BINARY_OPS)


class NotOp(Sym.Operation, name="not", traits=[Pure]):
    operand: Operand[ir.IntegerType]
    res: Result[ir.IntegerType] = ext.result(default_factory=_i1)


def _verify_i1(op: ir.OpView) -> bool:
    for v in op.operation.operands:
        if isinstance(v.type, ir.IntegerType) and ir.IntegerType(v.type).width != 1:
            return _error(op, f"expects i1 operands, got {v.type}")
    return _verify_i1_result(op)


def _verify_i1_result(op: ir.OpView) -> bool:
    for r in op.operation.results:
        if isinstance(r.type, ir.IntegerType) and ir.IntegerType(r.type).width != 1:
            return _error(op, f"expects an i1 result, got {r.type}")
    return True


for _cls in (AndOp, OrOp, NotOp):
    _cls.verify_invariants = _verify_i1


class BindOp(Sym.Operation, name="bind"):
    """A fact: `value` (or dimension `dim` of the tensor `value`) equals the index expression `expr`."""

    value: Operand[Any]
    expr: Operand[ir.IndexType]

    def verify_invariants(self) -> bool:
        try:
            dim = _int_attr(self, "dim")
        except TypeError:
            return _error(self, "attribute 'dim' must be an integer")
        vtype = self.operation.operands[0].type
        if dim is None:
            if not (isinstance(vtype, (ir.IndexType, ir.IntegerType)) or str(vtype) == "!torch.int"):
                return _error(self, f"binds a non-integer value of type {vtype}; add 'dim' to bind a tensor dimension")
            return True
        rank = _rank(vtype)
        if rank is None:
            return _error(self, f"'dim' given but the bound value has type {vtype}, not a ranked tensor")
        if not 0 <= dim < rank:
            return _error(self, f"dim {dim} is out of range for a rank-{rank} tensor")
        return True


def _rank(t: ir.Type) -> int | None:
    if isinstance(t, ir.RankedTensorType) or isinstance(t, ir.MemRefType):
        return ir.ShapedType(t).rank
    s = str(t)
    if s.startswith("!torch.vtensor<[") or s.startswith("!torch.tensor<["):
        dims = s.split("[", 1)[1].split("]", 1)[0]
        return 0 if dims == "" else dims.count(",") + 1
    return None


class GuardOp(Sym.Operation, name="guard"):
    """Validity condition of the artifact: `"sym.guard"(%c) {origin = "x.size(0) >= 2  # model.py:12"}`."""

    cond: Operand[ir.IntegerType]
    origin: ir.StringAttr

    verify_invariants = _verify_i1


class AssertOp(Sym.Operation, name="assert"):
    """A runtime check whose failure is the user's error: `"sym.assert"(%c) {msg = "...", origin = "..."}`."""

    cond: Operand[ir.IntegerType]
    msg: ir.StringAttr

    verify_invariants = _verify_i1


GUARD_FN_ATTR = "sym.guards"  # marks the function that checks an artifact's guards and asserts
SOURCE_ATTR = "sym.source"  # arg attr of the guard function: which input size the argument is


def load(context: ir.Context) -> None:
    """Register `sym` in `context` (idempotent)."""
    with context:
        if not context.is_dialect_loaded("sym"):
            Sym.load()


# The bindings look an op's dialect module up as `torch_mlir.dialects.<name>` each time they wrap an op;
# without this alias every wrap of a sym op pays a failed import (~100 µs, measured in the guard passes).
import sys as _sys  # noqa: E402

_sys.modules.setdefault("torch_mlir.dialects.sym", _sys.modules[__name__])
