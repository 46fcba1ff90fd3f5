"""Specialize symbols to constants under a guard: one variant of an artifact for a hot size.

For `values=s0:8`, the guard function gains `sym.guard(s0 == 8)` (origin: "specialized s0 = 8"),
and every compute function sees the constant: a tensor dimension bound to an expression of
specialized symbols gets that static size (the argument's type is refined and cast back with
`torch.tensor_static_info_cast`, so torch-mlir's shape refinement propagates it), and a SymInt
argument bound to one becomes `torch.constant.int`. A value outside the symbol's range is a
contradiction and is rejected. Symbols not named stay symbolic.

Before (values=s0:8):
  "sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
  func.func @guards(%a: index) attributes {sym.guards} {
    %s0 = "sym.value"() {symbol = "s0"} : () -> index
    "sym.bind"(%a, %s0) : (index, index) -> ()
    return
  }
  func.func @main(%n: !torch.int, %x: !torch.vtensor<[?,4],f32>) -> ... {
    %s0 = "sym.value"() {symbol = "s0"} : () -> index
    "sym.bind"(%n, %s0) : (!torch.int, index) -> ()
    "sym.bind"(%x, %s0) {dim = 0 : i64} : (!torch.vtensor<[?,4],f32>, index) -> ()
    ... uses of %n and %x ...
After:
  "sym.symbol"() {sym_name = "s0", lo = 2 : i64, specialized = 8 : i64} : () -> ()
  func.func @guards(%a: index) attributes {sym.guards} {
    ...
    %c8 = "sym.constant"() {value = 8 : i64} : () -> index
    %eq = "sym.cmp"(%s0, %c8) {predicate = "eq"} : (index, index) -> i1
    "sym.guard"(%eq) {origin = "specialized s0 = 8"} : (i1) -> ()
    return
  }
  func.func @main(%n: !torch.int, %x: !torch.vtensor<[8,4],f32>) -> ... {
    %int8 = torch.constant.int 8
    %0 = torch.tensor_static_info_cast %x : !torch.vtensor<[8,4],f32> to !torch.vtensor<[?,4],f32>
    ... uses of %int8 and %0 ...
"""
from __future__ import annotations

import re

import sympy
from torch_mlir import ir

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import PassError, SymPass, located_error, register


def parse_values(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in filter(None, re.split(r"[,;]", text)):
        name, sep, value = item.partition(":")
        if not sep:
            raise PassError(f"sym-specialize: expected 'symbol:value', got '{item}'")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise PassError(f"sym-specialize: value of '{name}' must be an integer, got '{value}'") from None
    return out


def _i64(v: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def _static_vtensor(t: ir.Type, dim: int, size: int) -> ir.Type | None:
    m = re.fullmatch(r"!torch\.vtensor<\[([^\]]*)\],(.+)>", str(t))
    if not m:
        return None
    dims = m.group(1).split(",") if m.group(1) else []
    if dims[dim] == str(size):
        return None
    dims[dim] = str(size)
    return ir.Type.parse(f"!torch.vtensor<[{','.join(dims)}],{m.group(2)}>")


@register
class Specialize(SymPass):
    """Replace symbols by constants (values=s0:8,s1:4) under a guard; refine compute types."""

    name = "sym-specialize"
    options = {"values": str}
    values = ""

    def run(self, op: ir.Operation) -> None:
        from mlir_sym import shapes

        values = parse_values(self.values)
        if not values:
            return
        decls = sym.declared_symbols(op)
        for name, v in values.items():
            if name not in decls:
                raise PassError(f"sym-specialize: unknown symbol '{name}'")
            d = decls[name].operation
            lo = ir.IntegerAttr(d.attributes["lo"]).value
            hi = ir.IntegerAttr(d.attributes["hi"]).value if "hi" in d.attributes else None
            if v < lo or (hi is not None and v > hi):
                raise located_error(d, f"cannot specialize '{name}' to {v}: outside its range [{lo}, {hi if hi is not None else 'oo'}]")
            d.attributes["specialized"] = _i64(v)
        subs = {sympy.Symbol(k, integer=True): v for k, v in values.items()}
        for fn in op.regions[0].blocks[0].operations:
            if fn.operation.name != "func.func" or not len(fn.regions[0].blocks):
                continue
            if sym.GUARD_FN_ATTR in fn.operation.attributes:
                self._guard(fn, values)
            else:
                self._compute(fn, subs, shapes)

    def _guard(self, fn, values: dict[str, int]) -> None:
        block = fn.regions[0].blocks[0]
        ret = block.operations[len(block.operations) - 1]
        with ir.InsertionPoint(ret.operation):
            for name, v in values.items():
                loc = ir.Location.name(f"specialized {name} = {v}")
                s = sym.ValueOp(ir.StringAttr.get(name), loc=loc).res
                c = sym.ConstantOp(_i64(v), loc=loc).res
                eq = sym.CmpOp(ir.StringAttr.get("eq"), s, c, loc=loc).res
                sym.GuardOp(eq, ir.StringAttr.get(f"specialized {name} = {v}"), loc=loc)
                self.bump("guards-added")

    def _compute(self, fn, subs, shapes) -> None:
        entry = fn.regions[0].blocks[0]
        first = entry.operations[0]
        for child in list(entry.operations):
            o = child.operation
            if o.name != "sym.bind":
                continue
            arg = o.operands[0]
            if not isinstance(arg, ir.BlockArgument):
                continue
            try:
                expr = sympy.sympify(shapes.to_sympy(o.operands[1])).subs(subs)
            except Exception:  # an expression we cannot read: leave this fact symbolic
                continue
            if not expr.is_Integer:
                continue
            n = int(expr)
            if "dim" in o.attributes:
                dim = ir.IntegerAttr(o.attributes["dim"]).value
                new_t = _static_vtensor(arg.type, dim, n)
                if new_t is None:
                    continue
                self._refine_arg(fn, arg, new_t)
            elif str(arg.type) == "!torch.int":
                uses = [u for u in arg.uses if u.owner.name != "sym.bind"]
                if not uses:
                    continue
                with ir.InsertionPoint(first), o.location:
                    const = ir.Operation.create(
                        "torch.constant.int", results=[arg.type], attributes={"value": _i64(n)}).result
                for u in uses:
                    u.owner.operands[u.operand_number] = const
                self.bump("symints-specialized")

    def _refine_arg(self, fn, arg, new_t: ir.Type) -> None:
        old_t = arg.type
        uses = [u for u in arg.uses if u.owner.name != "sym.bind"]
        arg.set_type(new_t)
        # At the very beginning: a later refinement of the same argument must dominate earlier casts.
        with ir.InsertionPoint.at_block_begin(fn.regions[0].blocks[0]), fn.location:
            cast = ir.Operation.create("torch.tensor_static_info_cast", results=[old_t], operands=[arg]).result
        for u in uses:
            u.owner.operands[u.operand_number] = cast
        ftype = ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)
        inputs = list(ftype.inputs)
        inputs[arg.arg_number] = new_t
        fn.operation.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
        self.bump("dims-specialized")
