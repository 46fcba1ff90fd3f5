"""sym-assert-elim: erase the runtime asserts of lowered compute IR that the size facts prove.

torch-mlir's lowering to linalg checks shapes at runtime with `cf.assert`, e.g.

  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %d0 = tensor.dim %b, %c0 : tensor<?x?xf32>
  %eq = arith.cmpi eq, %d1, %d0 : index
  cf.assert %eq, "mismatching contracting dimension for torch.aten.mm"

For a graph compiled with symbolic sizes the guards already established these facts. The pass reads
them from the function's tensor arguments and erases every assert whose condition they prove (and the
arithmetic only it used).

Facts:
* argument attribute `sym.dims` on a ranked tensor/memref argument: an ArrayAttr with one entry per
  dimension, each a string in sympy syntax (a symbol name `"s0"`, an integer `"4"`, an expression
  `"2*s0 + 1"`, `"s0//2"`, `"Mod(s0, 8)"`, `"Min(s0, s1)"`), or `"?"` for a dimension with no known
  expression (integer attributes are accepted too):
    func.func @main(%a: tensor<?x?xf32> {sym.dims = ["s0", "s1"]}, %b: tensor<?x?xf32> {sym.dims = ["s1", "s2"]})
* `sym.bind` facts with `dim = d` on the function's arguments (before `sym-strip-facts` removes them);
* static dimensions of the tensor types, and that every dimension is non-negative (which alone proves
  torch-mlir's `arith.cmpi sge, %dim, %c0` "negative values not allowed" checks);
* the declared ranges of the module's `sym.symbol`s, when it declares any (a name in `sym.dims` must
  then be declared: an unknown one is a located error); otherwise symbols are unconstrained integers;
* an assert of the entry block that stays holds for the code after it.

The conditions are read through `arith` (`cmpi` signed and, on provably non-negative operands,
unsigned; `addi subi muli floordivsi ceildivsi minsi maxsi`, `divsi/remsi` on non-negative operands,
`index_cast`, `ext*`, `trunci`, `select` on a decided condition, `andi ori`, `xori` with true) and
`tensor.dim`/`memref.dim` with a constant index. Anything else is an unknown value, so an assert that
depends on it stays. Statistics: `asserts-removed`.
"""
from __future__ import annotations

import itertools

from torch_mlir import ir

from mlir_sym import shapes
from mlir_sym.passes.canonicalize import declared_ranges, functions, module_of
from mlir_sym.passes.registry import SymPass, located_error, register

DIMS_ATTR = "sym.dims"
_SIGNED = {0: "eq", 1: "ne", 2: "lt", 3: "le", 4: "gt", 5: "ge"}
_UNSIGNED = {6: "lt", 7: "le", 8: "gt", 9: "ge"}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci")
_BINARY = {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.floordivsi": "floordiv",
    "arith.ceildivsi": "ceildiv", "arith.minsi": "min", "arith.maxsi": "max",
}
_NONNEG_BINARY = {"arith.divsi": "floordiv", "arith.divui": "floordiv", "arith.remsi": "mod", "arith.remui": "mod"}
_ERASABLE_PREFIXES = ("arith.",)
_ERASABLE = ("tensor.dim", "memref.dim")


def _defining_op(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation


def _rank_and_shape(t: ir.Type) -> list[int | None] | None:
    if isinstance(t, (ir.RankedTensorType, ir.MemRefType)):
        st = ir.ShapedType(t)
        return [None if st.is_dynamic_dim(i) else st.get_dim_size(i) for i in range(st.rank)]
    return None


class _Reader:
    """Reads arith/tensor values as sympy size expressions and i1 values as canonical conditions."""

    def __init__(self, facts: shapes.Facts, dims: dict) -> None:
        self.facts = facts
        self.dims = dims  # (block argument, dim) -> sympy expression
        self.ints: dict = {}
        self.conds: dict = {}
        self.fresh = itertools.count()
        self.opaque_dims: dict = {}

    def _opaque(self, nonneg: bool = False):
        s = shapes.integer_symbol(f"%v{next(self.fresh)}")
        if nonneg:
            self.facts.add(("dim", s.name), shapes.relation("ge", s, 0))
        return s

    def nonneg(self, e) -> bool:
        return self.facts.decide(shapes.relation("ge", e, 0))[0] is True

    def int(self, v: ir.Value):
        if v in self.ints:
            return self.ints[v]
        out = self._int(v)
        self.ints[v] = out
        return out

    def _int(self, v: ir.Value):
        op = _defining_op(v)
        if op is None:
            return self._opaque()
        name = op.name
        if name == "arith.constant":
            attr = op.attributes["value"]
            if isinstance(attr, ir.BoolAttr):
                return shapes.sympy_int(int(ir.BoolAttr(attr).value))
            if isinstance(attr, ir.IntegerAttr):
                attr = ir.IntegerAttr(attr)
                t = attr.type
                is_i1 = isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1
                return shapes.sympy_int(int(bool(attr.value)) if is_i1 else attr.value)
            return self._opaque()
        if name in ("tensor.dim", "memref.dim"):
            src, idx = op.operands
            d = self.int(idx)
            if not getattr(d, "is_Integer", False):
                return self._opaque(nonneg=True)
            d = int(d)
            if (src, d) in self.dims:
                return self.dims[(src, d)]
            shape = _rank_and_shape(src.type)
            if shape is not None and 0 <= d < len(shape) and shape[d] is not None:
                return shapes.sympy_int(shape[d])
            key = (src, d)
            if key not in self.opaque_dims:  # the same dimension read twice is the same value
                self.opaque_dims[key] = self._opaque(nonneg=True)
            return self.opaque_dims[key]
        if name in _CASTS:
            src = op.operands[0]
            if isinstance(src.type, ir.IntegerType) and ir.IntegerType(src.type).width == 1:
                verdict, _ = self.facts.decide(self.cond(src))
                return self._opaque() if verdict is None else shapes.sympy_int(int(verdict))
            return self.int(src)
        if name in _BINARY:
            return shapes.size_binary(_BINARY[name], self.int(op.operands[0]), self.int(op.operands[1]))
        if name in _NONNEG_BINARY:
            a, b = self.int(op.operands[0]), self.int(op.operands[1])
            if self.nonneg(a) and self.facts.decide(shapes.relation("gt", b, 0))[0] is True:
                return shapes.size_binary(_NONNEG_BINARY[name], a, b)
            return self._opaque()
        if name == "arith.select":
            c, a, b = op.operands
            verdict, _ = self.facts.decide(self.cond(c))
            if verdict is True:
                return self.int(a)
            if verdict is False:
                return self.int(b)
            ea, eb = self.int(a), self.int(b)
            return ea if ea == eb else self._opaque()
        return self._opaque()

    def cond(self, v: ir.Value):
        if v in self.conds:
            return self.conds[v]
        out = self._cond(v)
        self.conds[v] = out
        return out

    def _cond(self, v: ir.Value):
        op = _defining_op(v)
        if op is None:
            return shapes.OpaqueCond(("value", v))
        name = op.name
        if name == "arith.constant":
            attr = op.attributes["value"]
            if isinstance(attr, ir.BoolAttr):
                return shapes.ConstCond(bool(ir.BoolAttr(attr).value))
            if isinstance(attr, ir.IntegerAttr):
                return shapes.ConstCond(bool(ir.IntegerAttr(attr).value))
        elif name == "arith.cmpi":
            pred = ir.IntegerAttr(op.attributes["predicate"]).value
            a, b = self.int(op.operands[0]), self.int(op.operands[1])
            if pred in _SIGNED:
                return shapes.relation(_SIGNED[pred], a, b)
            if pred in _UNSIGNED and self.nonneg(a) and self.nonneg(b):
                return shapes.relation(_UNSIGNED[pred], a, b)
        elif name in ("arith.andi", "arith.ori"):
            return shapes.make_bool("and" if name == "arith.andi" else "or", [self.cond(x) for x in op.operands])
        elif name == "arith.xori":
            a, b = (self.cond(x) for x in op.operands)
            if a == shapes.TRUE:
                return shapes.negate(b)
            if b == shapes.TRUE:
                return shapes.negate(a)
        return shapes.OpaqueCond(("value", v))


@register
class SymAssertElim(SymPass):
    """Erase cf.assert ops proven by the tensor-size facts (sym.dims / sym.bind on arguments, dims >= 0)."""

    name = "sym-assert-elim"

    def run(self, op: ir.Operation) -> None:
        module = module_of(op)
        declared = declared_ranges(module)
        for fn in functions(op):
            if fn.regions[0].blocks:
                self._function(fn, declared)

    def _dims(self, fn: ir.Operation, declared: dict) -> dict:
        entry = fn.regions[0].blocks[0]
        dims: dict = {}
        arg_attrs = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else None
        if arg_attrs is not None:
            for i, d in enumerate(ir.ArrayAttr(arg_attrs)):
                d = ir.DictAttr(d)
                if DIMS_ATTR not in d:
                    continue
                arg = entry.arguments[i]
                shape = _rank_and_shape(arg.type)
                entries = d[DIMS_ATTR]
                if not isinstance(entries, ir.ArrayAttr):
                    raise located_error(fn, f"{DIMS_ATTR} of argument {i} must be an array of strings, got {entries}")
                entries = list(ir.ArrayAttr(entries))
                if shape is None:
                    raise located_error(fn, f"{DIMS_ATTR} on argument {i} of type {arg.type}, not a ranked tensor or memref")
                if len(entries) != len(shape):
                    raise located_error(
                        fn, f"{DIMS_ATTR} of argument {i} has {len(entries)} entries for a rank-{len(shape)} argument"
                    )
                for k, e in enumerate(entries):
                    if isinstance(e, ir.IntegerAttr):
                        expr = shapes.sympy_int(ir.IntegerAttr(e).value)
                    elif isinstance(e, ir.StringAttr):
                        text = ir.StringAttr(e).value
                        if text.strip() == "?":
                            continue
                        try:
                            expr = shapes.parse_size_expr(text)
                        except shapes.UnsupportedExpr as err:
                            raise located_error(fn, f"{DIMS_ATTR} of argument {i}, dim {k}: {err}") from None
                    else:
                        raise located_error(fn, f"{DIMS_ATTR} of argument {i}, dim {k}: expected a string, got {e}")
                    names = {n for n in shapes.expr_symbols(expr) if not n.startswith("%")}
                    unknown = sorted(names - set(declared)) if declared else []
                    if unknown:
                        raise located_error(fn, f"{DIMS_ATTR} of argument {i}, dim {k}: unknown symbol '{unknown[0]}'")
                    if shape[k] is not None and getattr(expr, "is_Integer", False) and int(expr) != shape[k]:
                        raise located_error(
                            fn, f"{DIMS_ATTR} of argument {i}, dim {k}: '{expr}' contradicts the static size {shape[k]}"
                        )
                    dims[(arg, k)] = expr
        # sym.bind facts on the arguments (compute functions carry them until sym-strip-facts).
        for op in entry.operations:
            o = op.operation
            if o.name != "sym.bind" or "dim" not in o.attributes:
                continue
            arg = o.operands[0]
            if not isinstance(arg.owner, ir.Block):
                continue
            try:
                dims.setdefault((arg, ir.IntegerAttr(o.attributes["dim"]).value), shapes.to_sympy(o.operands[1]))
            except shapes.UnsupportedExpr:
                pass
        return dims

    def _function(self, fn: ir.Operation, declared: dict) -> None:
        dims = self._dims(fn, declared)
        facts = shapes.Facts({name: rng for name, rng in declared.items()})
        for (arg, k), expr in dims.items():
            facts.add(("dim", k, str(expr)), shapes.relation("ge", expr, 0))
        reader = _Reader(facts, dims)
        entry = fn.regions[0].blocks[0]
        erased: list[ir.Operation] = []

        def walk(block: ir.Block, straight: bool) -> None:
            for op in list(block.operations):
                o = op.operation
                if o.name == "cf.assert":
                    cond = reader.cond(o.operands[0])
                    verdict, _ = facts.decide(cond)
                    if verdict is True:
                        erased.append(o)
                    elif straight:
                        facts.add(("assert", len(erased), id(o)), cond)
                    continue
                for region in o.regions:
                    for b in region.blocks:
                        walk(b, False)

        walk(entry, True)
        for o in erased:
            roots = [_defining_op(v) for v in o.operands]
            o.erase()
            _erase_dead(r for r in roots if r is not None)
        if erased:
            self.bump("asserts-removed", len(erased))


def _erase_dead(ops) -> None:
    """Erase the given ops if unused and side-effect free (arith, tensor.dim, memref.dim), then their
    operands' defining ops likewise."""
    work = list(ops)
    dead: set = set()
    while work:
        o = work.pop()
        if o in dead:
            continue
        name = o.name
        if not (name.startswith(_ERASABLE_PREFIXES) or name in _ERASABLE) or len(o.regions):
            continue
        if any(True for r in o.results for _ in r.uses):
            continue
        deps = [_defining_op(v) for v in o.operands]
        dead.add(o)
        o.erase()
        work.extend(d for d in deps if d is not None and d not in dead)
