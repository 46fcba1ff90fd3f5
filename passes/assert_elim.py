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
* argument attribute `sym.int` on an integer argument (a SymInt input): its value, e.g. `"s0"`;
* `sym.bind` facts on the function's arguments, with `dim = d` or on a SymInt (before `sym-strip-facts`
  turns them into the attributes above);
* static dimensions of the tensor types, and that every dimension is non-negative (which alone proves
  torch-mlir's `arith.cmpi sge, %dim, %c0` "negative values not allowed" checks);
* the declared ranges of the module's `sym.symbol`s, when it declares any (a name in `sym.dims` must
  then be declared: an unknown one is a located error), and those a compute module records in its
  `sym.ranges` attribute (`{s0 = "2:512"}`: pipelines.split_guards moves the declarations to the guard
  function's module, which checks them); otherwise symbols are unconstrained integers;
* the size equalities the module records in `sym.equalities` (`[["s0*s1", "s2*s3"]]`: the importer
  writes Dynamo's guards `Eq(a, b)` between expressions of symbols there, and the guard function
  checks them): every size is read with each class of equal expressions written as one
  (shapes.equality_canon), so a check between the two sides holds and sym-unify-sizes merges them;
* an assert of the entry block that stays holds for the code after it.

The conditions are read through `arith` (`cmpi` signed and, on provably non-negative operands,
unsigned; `addi subi muli floordivsi ceildivsi minsi maxsi`, `divsi/remsi` on non-negative operands,
`index_cast`, `ext*`, `trunci`, `select` on a decided condition, `andi ori`, `xori` with true),
`affine.apply`, and `tensor.dim`/`memref.dim` with a constant index, read through the op that made the
tensor: `tensor.empty` / `memref.alloc` sizes, `expand_shape` output sizes, `collapse_shape` groups
(products), `extract_slice` / `subview` sizes, casts, a library call's operand dims for its results
(`sym.result_dims`: training attention's outputs have its inputs' sizes), and a linalg op's `outs`
for its results (at a
dynamic batch torch-mlir checks sizes of reshaped and sliced values against the SymInt arguments: GPT-2
kept eight such checks, each a branch of the host program that stopped fusion across it). Anything else
is an unknown value, so an assert that depends on it stays. Statistics: `asserts-removed`.
"""
from __future__ import annotations

import itertools

from torch_mlir import ir

from mlir_sym import shapes
from mlir_sym.passes.canonicalize import (EQUALITIES_ATTR, declared_ranges, functions, module_of, recorded_equalities,
                                          recorded_ranges)
from mlir_sym.passes.registry import SymPass, located_error, register

DIMS_ATTR = "sym.dims"
# on a func.call of the runtime library (sym-torch-attention): per result, (operand, dim) pairs, one
# per dimension, of the operand dimension it equals (-1: none)
RESULT_DIMS_ATTR = "sym.result_dims"
INT_ATTR = "sym.int"
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


_AFFINE_BINARY = {ir.AffineAddExpr: "add", ir.AffineMulExpr: "mul", ir.AffineFloorDivExpr: "floordiv",
                  ir.AffineCeilDivExpr: "ceildiv", ir.AffineModExpr: "mod"}


def _affine(e, dims: list, syms: list):
    """An affine expression over sympy operands as a sympy expression (None for an unknown form)."""
    if isinstance(e, ir.AffineConstantExpr):
        return shapes.sympy_int(e.value)
    if isinstance(e, ir.AffineDimExpr):
        return dims[e.position]
    if isinstance(e, ir.AffineSymbolExpr):
        return syms[e.position]
    kind = _AFFINE_BINARY.get(type(e))
    if kind is None:
        return None
    lhs, rhs = _affine(e.lhs, dims, syms), _affine(e.rhs, dims, syms)
    return None if lhs is None or rhs is None else shapes.size_binary(kind, lhs, rhs)


def _fact_expr(fn: ir.Operation, where: str, e: ir.Attribute, declared: dict, static: int | None):
    """A fact attribute's entry as a sympy expression (None for "?"), checked: a string in sympy
    syntax or an integer, naming declared symbols only, agreeing with a static size."""
    if isinstance(e, ir.IntegerAttr):
        expr = shapes.sympy_int(ir.IntegerAttr(e).value)
    elif isinstance(e, ir.StringAttr):
        text = ir.StringAttr(e).value
        if text.strip() == "?":
            return None
        try:
            expr = shapes.parse_size_expr(text)
        except shapes.UnsupportedExpr as err:
            raise located_error(fn, f"{where}: {err}") from None
    else:
        raise located_error(fn, f"{where}: expected a string, got {e}")
    names = {n for n in shapes.expr_symbols(expr) if not n.startswith("%")}
    unknown = sorted(names - set(declared)) if declared else []
    if unknown:
        raise located_error(fn, f"{where}: unknown symbol '{unknown[0]}'")
    if static is not None and getattr(expr, "is_Integer", False) and int(expr) != static:
        raise located_error(fn, f"{where}: '{expr}' contradicts the static size {static}")
    return expr


class _Reader:
    """Reads arith/tensor values as sympy size expressions and i1 values as canonical conditions."""

    def __init__(self, facts: shapes.Facts, dims: dict, canon=lambda e: e) -> None:
        self.facts = facts
        self.dims = dims  # (block argument, dim) -> sympy expression
        self.canon = canon  # equal sizes as one expression (the module's sym.equalities)
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
        out = self.canon(self._int(v))
        self.ints[v] = out
        return out

    def dim(self, src: ir.Value, d: int):
        """Dimension `d` of the tensor or memref `src`: a fact of an argument, a static size, or read
        through the op that made `src` (its size operands, or the operand it takes its shape from:
        a linalg op's `outs`, a cast's source, an expand's output sizes, a collapse's groups);
        otherwise one opaque value per (src, d)."""
        key = (src, d)
        if key in self.dims:
            return self.dims[key]
        shape = _rank_and_shape(src.type)
        if shape is None or not 0 <= d < len(shape):
            return self._opaque(nonneg=True)
        if shape[d] is not None:
            return shapes.sympy_int(shape[d])
        if key in self.opaque_dims:
            return self.opaque_dims[key]
        self.opaque_dims[key] = self._opaque(nonneg=True)  # a cycle through block arguments ends here
        known = self._produced_dim(src, d, shape)
        if known is not None:
            self.opaque_dims[key] = self.canon(known)
        return self.opaque_dims[key]

    def _produced_dim(self, src: ir.Value, d: int, shape: list):
        """Dimension `d` of `src` from its defining op, or None."""
        op = _defining_op(src)
        if op is None:
            return None
        name = op.name
        dynamic_index = sum(1 for k in range(d) if shape[k] is None)  # among the result's dynamic dims
        if name in ("tensor.empty", "memref.alloc", "memref.alloca"):
            sizes = [v for v in op.operands if isinstance(v.type, ir.IndexType)]
            return self.int(sizes[dynamic_index]) if dynamic_index < len(sizes) else None
        if name in ("tensor.cast", "memref.cast"):
            return self.dim(op.operands[0], d)
        if name in ("tensor.expand_shape", "memref.expand_shape"):
            sizes = list(op.operands)[1:]
            return self.int(sizes[dynamic_index]) if dynamic_index < len(sizes) else None
        if name in ("tensor.collapse_shape", "memref.collapse_shape"):
            groups = [[ir.IntegerAttr(x).value for x in g] for g in ir.ArrayAttr(op.attributes["reassociation"])]
            if d >= len(groups):
                return None
            out = shapes.sympy_int(1)
            for k in groups[d]:
                out = shapes.size_binary("mul", out, self.dim(op.operands[0], k))
            return out
        if name in ("tensor.extract_slice", "memref.subview"):
            static = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
            if len(static) != len(shape):
                return None  # rank-reducing
            segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
            sizes = list(op.operands)[segments[0] + segments[1]:segments[0] + segments[1] + segments[2]]
            k = sum(1 for x in static[:d] if x == ir.ShapedType.get_dynamic_size())
            return self.int(sizes[k]) if static[d] == ir.ShapedType.get_dynamic_size() and k < len(sizes) else None
        if (name.startswith("linalg.") or name.startswith("tm_tensor.")) and "operandSegmentSizes" in op.attributes:
            # a destination-style op: result i has the shape of its i-th `outs` operand
            segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
            outs = list(op.operands)[segments[0]:segments[0] + segments[1]]
            for i, r in enumerate(op.results):
                if r == src and i < len(outs):
                    return self.dim(outs[i], d)
        if name in ("linalg.transpose", "linalg.broadcast", "linalg.copy", "linalg.map") and len(op.results) == 1:
            return self.dim(op.operands[len(op.operands) - 1], d)  # one `outs` operand, the last
        if name == "func.call" and RESULT_DIMS_ATTR in op.attributes:  # a library call's result dims
            for i, r in enumerate(op.results):
                if r == src:
                    pairs = list(ir.DenseI64ArrayAttr(ir.ArrayAttr(op.attributes[RESULT_DIMS_ATTR])[i]))
                    k, kd = pairs[2 * d], pairs[2 * d + 1]
                    return self.dim(op.operands[k], kd) if 0 <= k < len(op.operands) else None
        return None

    def _int(self, v: ir.Value):
        op = _defining_op(v)
        if op is None:
            return self.dims[(v, None)] if (v, None) in self.dims else self._opaque()
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
            return self.dim(src, int(d))
        if name == "affine.apply":
            amap = ir.AffineMapAttr(op.attributes["map"]).value
            if len(amap.results) != 1:
                return self._opaque()
            args = [self.int(x) for x in op.operands]
            return _affine(amap.results[0], args[:amap.n_dims], args[amap.n_dims:]) or self._opaque()
        if name in _CASTS:
            src = op.operands[0]
            if isinstance(src.type, ir.IntegerType) and ir.IntegerType(src.type).width == 1:
                verdict, _ = self.facts.decide(self.cond(src))
                return self._opaque() if verdict is None else shapes.sympy_int(int(verdict))
            return self.int(src)
        if name in ("arith.minsi", "arith.maxsi"):  # the operand the facts prove the smaller / larger
            a, b = self.int(op.operands[0]), self.int(op.operands[1])
            verdict, _ = self.facts.decide(shapes.relation("le", a, b))
            if verdict is not None:
                return a if verdict == (name == "arith.minsi") else b
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


def argument_facts(fn: ir.Operation, declared: dict) -> dict:
    """The size facts of a function's arguments: (argument, dim) -> expression for tensor dims
    (`sym.dims`, `sym.bind` with `dim`), (argument, None) -> expression for SymInt arguments
    (`sym.int`, `sym.bind` without `dim`)."""
    entry = fn.regions[0].blocks[0]
    dims: dict = {}
    arg_attrs = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else None
    if arg_attrs is not None:
        for i, d in enumerate(ir.ArrayAttr(arg_attrs)):
            d = ir.DictAttr(d)
            arg = entry.arguments[i]
            if INT_ATTR in d:
                if not isinstance(arg.type, (ir.IntegerType, ir.IndexType)):
                    raise located_error(fn, f"{INT_ATTR} on argument {i} of type {arg.type}, not an integer")
                expr = _fact_expr(fn, f"{INT_ATTR} of argument {i}", d[INT_ATTR], declared, None)
                if expr is not None:
                    dims[(arg, None)] = expr
            if DIMS_ATTR not in d:
                continue
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
                expr = _fact_expr(fn, f"{DIMS_ATTR} of argument {i}, dim {k}", e, declared, shape[k])
                if expr is not None:
                    dims[(arg, k)] = expr
    # sym.bind facts on the arguments (compute functions carry them until sym-strip-facts).
    for op in entry.operations:
        o = op.operation
        if o.name != "sym.bind":
            continue
        arg = o.operands[0]
        if not isinstance(arg.owner, ir.Block):
            continue
        k = ir.IntegerAttr(o.attributes["dim"]).value if "dim" in o.attributes else None
        try:
            dims.setdefault((arg, k), shapes.to_sympy(o.operands[1]))
        except shapes.UnsupportedExpr:
            pass
    return dims


def size_reader(fn: ir.Operation, declared: dict, recorded: dict | None = None) -> _Reader:
    """A reader of `fn`'s index values as sympy expressions of the symbols, under its argument facts,
    the declared symbol ranges and those the module records in `sym.ranges` (also used by
    sym-unify-sizes). Only declarations make an unknown name in the facts an error. Sizes equal by
    the module's `sym.equalities` read as one expression (shapes.equality_canon)."""
    pairs = [tuple(_fact_expr(fn, f"{EQUALITIES_ATTR} entry {i}", side, declared, None) for side in pair)
             for i, pair in enumerate(recorded_equalities(module_of(fn)))]
    canon = shapes.equality_canon(p for p in pairs if None not in p)
    dims = {key: canon(expr) for key, expr in argument_facts(fn, declared).items()}
    facts = shapes.Facts({**(recorded or {}), **declared})
    for (arg, k), expr in dims.items():
        if k is not None:  # a dimension (a SymInt argument may be negative)
            facts.add(("dim", k, str(expr)), shapes.relation("ge", expr, 0))
    return _Reader(facts, dims, canon)


@register
class SymAssertElim(SymPass):
    """Erase cf.assert ops proven by the tensor-size facts (sym.dims / sym.bind on arguments, dims >= 0)."""

    name = "sym-assert-elim"

    def run(self, op: ir.Operation) -> None:
        module = module_of(op)
        declared, recorded = declared_ranges(module), recorded_ranges(module)
        for fn in functions(op):
            if fn.regions[0].blocks:
                self._function(fn, declared, recorded)

    def _function(self, fn: ir.Operation, declared: dict, recorded: dict) -> None:
        reader = size_reader(fn, declared, recorded)
        facts = reader.facts
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
