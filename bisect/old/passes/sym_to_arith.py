"""Lower the guard function (`sym.guards`) to arith: one native check of every guard and assert.

Each symbol is loaded once from the first input size bound to exactly that symbol (its scratch
value); every other `sym.bind` becomes an equality check, every `sym.guard`/`sym.assert` a check.
The function then returns an i32: 0 if all checks hold, otherwise the id of the first failing check
in program order (ids are 1-based, stored on the function as `sym.checks`; a failing assert
returns its id negated, so the runtime can tell "pick another variant" from "user error").
Evaluation is branch-free; division by zero cannot trap (the divisor is clamped to 1, and a guard
that needs it nonzero fails on its own).

Before:
  func.func @guards(%a: index {sym.source = "x.size(0)"}, %b: index) attributes {sym.guards} {
    %s0 = "sym.value"() {symbol = "s0"} : () -> index
    "sym.bind"(%a, %s0) : (index, index) -> ()
    "sym.bind"(%b, %s0) : (index, index) -> ()
    %c2 = "sym.constant"() {value = 2 : i64} : () -> index
    %ge = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
    "sym.guard"(%ge) {origin = "range of s0"} : (i1) -> ()
    return
  }
After:
  func.func @guards(%a: index, %b: index) -> i32 attributes {sym.guards, sym.check_ids = [...]} {
    %eq = arith.cmpi eq, %b, %a : index
    %ge = arith.cmpi sge, %a, %c2 : index
    %r1 = arith.select %ge, %c0_i32, %c3_i32 : i32
    %r0 = arith.select %eq, %r1, %c2_i32 : i32
    return %r0 : i32
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith
from torch_mlir.dialects import func as func_d

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import SymPass, located_error, register

_CMP = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_PRED = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5}


def _name(op) -> str:
    return op.operation.name


def _attr_str(op, key: str) -> str:
    return ir.StringAttr(op.operation.attributes[key]).value


CHECKS_ATTR = "sym.checks"  # on the lowered guard function: [kind, text, origin] per check id


def lowered_check_table(module) -> list[tuple[str, str, str]]:
    """The check table recorded by convert-sym-to-arith on the guard function of `module` (any
    later stage: arith, LLVM dialect), so ids match whatever the guard passes erased or reordered."""
    for op in module.body.operations:
        attrs = op.operation.attributes
        if sym.GUARD_FN_ATTR in attrs and CHECKS_ATTR in attrs:
            return [tuple(ir.StringAttr(x).value for x in ir.ArrayAttr(row))
                    for row in ir.ArrayAttr(attrs[CHECKS_ATTR])]
    raise ValueError("no lowered guard function with a recorded check table in the module")


def check_table(fn) -> list[tuple[str, str, str]]:
    """(kind, text, origin) of each check op of a guard function, in order: id k is entry k-1."""
    out = []
    for op in fn.regions[0].blocks[0].operations:
        name = _name(op)
        if name == "sym.bind":
            src = ""
            arg = op.operation.operands[0]
            if isinstance(arg, ir.BlockArgument) and fn.arg_attrs is not None:
                d = ir.DictAttr(ir.ArrayAttr(fn.arg_attrs)[arg.arg_number])
                if sym.SOURCE_ATTR in d:
                    src = ir.StringAttr(d[sym.SOURCE_ATTR]).value
            out.append(("bind", f"{src or arg.get_name()} == {_describe(op.operation.operands[1])}", "input size"))
        elif name == "sym.guard":
            out.append(("guard", _describe(op.operation.operands[0]), _attr_str(op, "origin")))
        elif name == "sym.assert":
            origin = _attr_str(op, "origin") if "origin" in op.operation.attributes else str(op.location)
            out.append(("assert", _attr_str(op, "msg"), origin))
    return out


def _describe(v: ir.Value) -> str:
    from mlir_sym import shapes

    try:
        return str(shapes.to_sympy(v))
    except Exception:  # an op we cannot read back: still a valid check, described by its IR
        return str(v.owner)


class _Lowering:
    def __init__(self, fn) -> None:
        self.fn = fn
        self.values: dict = {}  # sym SSA value -> lowered index value
        self.index = ir.IndexType.get()
        self.i32 = ir.IntegerType.get_signless(32)

    def const(self, v: int) -> ir.Value:
        return arith.ConstantOp(self.index, v).result

    def lower(self, v: ir.Value) -> ir.Value:
        return self.values.get(v, v)


@register
class ConvertSymToArith(SymPass):
    """Lower the sym guard function to arith, returning the id of the first failing check."""

    name = "convert-sym-to-arith"

    def run(self, op: ir.Operation) -> None:
        for fn in _guard_functions(op):
            self._lower(fn)

    def _lower(self, fn) -> None:
        table = check_table(fn)  # before lowering: what each returned id means
        block = fn.regions[0].blocks[0]
        ops = list(block.operations)
        # 1. Each symbol's scratch value: the first input bound to exactly that symbol.
        defs: dict[str, ir.Value] = {}
        defining_binds = set()
        for op in ops:
            if _name(op) == "sym.bind":
                expr_owner = op.operation.operands[1].owner
                if isinstance(expr_owner, ir.Operation) or hasattr(expr_owner, "operation"):
                    e = expr_owner.operation if hasattr(expr_owner, "operation") else expr_owner
                    if e.name == "sym.value":
                        s = ir.StringAttr(e.attributes["symbol"]).value
                        if s not in defs:
                            defs[s] = op.operation.operands[0]
                            defining_binds.add(op.operation)
        L = _Lowering(fn)
        checks: list[tuple[ir.Value, int]] = []  # (i1 holds, id to return when it does not)
        check_id = 0
        index = ir.IndexType.get()
        for op in ops:
            name = _name(op)
            if name == "func.return":
                continue
            o = op.operation
            with ir.InsertionPoint(o), o.location:
                if name == "sym.value":
                    s = _attr_str(op, "symbol")
                    if s not in defs:
                        raise located_error(o, f"symbol '{s}' is not bound to any input size of the guard function")
                    L.values[o.results[0]] = defs[s]
                elif name == "sym.constant":
                    L.values[o.results[0]] = L.const(ir.IntegerAttr(o.attributes["value"]).value)
                elif name.startswith("sym.") and name[4:] in sym.BINARY_OPS:
                    L.values[o.results[0]] = self._binary(o, name[4:], L)
                elif name == "sym.cmp":
                    pred = _CMP[_attr_str(op, "predicate")]
                    L.values[o.results[0]] = arith.CmpIOp(_PRED[pred], L.lower(o.operands[0]), L.lower(o.operands[1])).result
                elif name in ("sym.and", "sym.or"):
                    cls = arith.AndIOp if name == "sym.and" else arith.OrIOp
                    L.values[o.results[0]] = cls(L.lower(o.operands[0]), L.lower(o.operands[1])).result
                elif name == "sym.not":
                    one = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
                    L.values[o.results[0]] = arith.XOrIOp(L.lower(o.operands[0]), one).result
                elif name == "sym.bind":
                    check_id += 1
                    if o not in defining_binds:
                        val = o.operands[0]
                        if val.type != index:
                            raise located_error(o, f"guard function binds a value of type {val.type}; expected index")
                        holds = arith.CmpIOp(_PRED["eq"], val, L.lower(o.operands[1])).result
                        checks.append((holds, check_id))
                elif name in ("sym.guard", "sym.assert"):
                    check_id += 1
                    checks.append((L.lower(o.operands[0]), check_id if name == "sym.guard" else -check_id))
                else:
                    raise located_error(o, f"'{name}' cannot appear in a guard function")
        # 2. Status: first failing check in program order, branch-free.
        ret = next(op for op in ops if _name(op) == "func.return")
        with ir.InsertionPoint(ret.operation), ret.operation.location:
            status = arith.ConstantOp(L.i32, 0).result
            for holds, cid in reversed(checks):
                fail = arith.ConstantOp(L.i32, cid).result
                status = arith.SelectOp(holds, status, fail).result
            func_d.ReturnOp([status])
        ret.operation.erase()
        for op in reversed([o for o in ops if o is not ret]):
            if _name(op).startswith("sym."):
                o = op.operation
                if len(o.results) and any(True for _ in o.results[0].uses):
                    o.results[0].replace_all_uses_with(L.lower(o.results[0]))
                o.erase()
        ftype = ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)
        fn.operation.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ftype.inputs, [L.i32]))
        fn.operation.attributes["sym.check_count"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), check_id)
        fn.operation.attributes[CHECKS_ATTR] = ir.ArrayAttr.get(
            [ir.ArrayAttr.get([ir.StringAttr.get(x) for x in row]) for row in table])

    def _binary(self, o: ir.Operation, kind: str, L: _Lowering) -> ir.Value:
        a, b = L.lower(o.operands[0]), L.lower(o.operands[1])
        if kind == "add":
            return arith.AddIOp(a, b).result
        if kind == "sub":
            return arith.SubIOp(a, b).result
        if kind == "mul":
            return arith.MulIOp(a, b).result
        if kind == "min":
            return arith.MinSIOp(a, b).result
        if kind == "max":
            return arith.MaxSIOp(a, b).result
        if kind in ("floordiv", "ceildiv", "mod"):
            zero, one = L.const(0), L.const(1)
            is_zero = arith.CmpIOp(_PRED["eq"], b, zero).result
            safe = arith.SelectOp(is_zero, one, b).result
            if kind == "floordiv":
                return arith.FloorDivSIOp(a, safe).result
            if kind == "ceildiv":
                return arith.CeilDivSIOp(a, safe).result
            q = arith.FloorDivSIOp(a, safe).result  # Python modulo: a - (a // b) * b
            return arith.SubIOp(a, arith.MulIOp(q, safe).result).result
        if kind == "pow":
            exp_owner = o.operands[1].owner
            exp_op = exp_owner.operation if hasattr(exp_owner, "operation") else exp_owner
            if getattr(exp_op, "name", "") != "sym.constant":
                raise located_error(o, "sym.pow needs a constant exponent to be lowered")
            n = ir.IntegerAttr(exp_op.attributes["value"]).value
            acc = L.const(1)
            for _ in range(n):
                acc = arith.MulIOp(acc, a).result
            return acc
        raise located_error(o, f"no lowering for sym.{kind}")


def _guard_functions(op: ir.Operation) -> list:
    out = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                if _name(child) == "func.func" and sym.GUARD_FN_ATTR in child.operation.attributes:
                    out.append(child)
    if _name(op) == "func.func" and sym.GUARD_FN_ATTR in op.attributes:
        out.append(op.opview)
    return out
