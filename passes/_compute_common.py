"""Helpers shared by the passes that work on compute functions (every `func.func` with a body that
is not the guard function): sym-readonly-inputs, sym-unshare-inits, sym-defer-nested-asserts and
sym-nested-assert-to-status, the GPU passes, and the fusion passes on linalg generics (their maps,
operand uses, and bodies cloned with remapped operands)."""
from __future__ import annotations

from torch_mlir import ir, rewrite
from torch_mlir.dialects import func as func_d
from torch_mlir.dialects import memref as memref_d

from mlir_sym.dialects import sym


# The indexing maps of a named contraction (what it means without an `indexing_maps` attribute, and
# the only maps a library call takes): A[m, k] * B[k, n] -> C[m, n], batched with a leading dim.
NAMED_CONTRACTION_MAPS = {
    "linalg.matmul": ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"],
    "linalg.batch_matmul": ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)",
                            "(d0, d1, d2, d3) -> (d0, d1, d2)"],
}


def compute_funcs(module_op: ir.Operation) -> list:
    """The module's compute functions: defined `func.func`s without the guard-function attribute."""
    return [f for f in module_op.regions[0].blocks[0].operations
            if f.operation.name == "func.func" and sym.GUARD_FN_ATTR not in f.operation.attributes
            and len(f.regions[0].blocks) > 0]


def defining_op(v: ir.Value) -> ir.Operation | None:
    """The operation that defines `v`, or None for a block argument."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


MEMREF_VIEW_OPS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast",
                   "memref.reinterpret_cast", "memref.transpose", "memref.reshape")


def identity_layout(t: ir.MemRefType) -> bool:
    """Whether a memref type has the identity (row-major, contiguous) layout."""
    return str(t.layout) == str(ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank)))


def root_buffer(v: ir.Value) -> ir.Value:
    """The allocation or argument a chain of memref views (MEMREF_VIEW_OPS) starts from."""
    while True:
        op = defining_op(v)
        if op is None or op.name not in MEMREF_VIEW_OPS:
            return v
        v = op.operands[0]


def transpose_view(src: ir.Value, perm: list[int], at: ir.Operation) -> ir.Value | None:
    """Before `at`: `memref.transpose` of `src` by `perm` (result dim i is `src`'s dim perm[i], as
    linalg.transpose's `permutation`), its strides permuted; None if `src` has no strided layout."""
    st = ir.MemRefType(src.type)
    try:
        strides, offset = st.get_strides_and_offset()
    except Exception:  # noqa: BLE001 - not strided
        return None
    shape = [st.shape[p] for p in perm]
    view_t = ir.MemRefType.get(shape, st.element_type, ir.StridedLayoutAttr.get(offset, [strides[p] for p in perm]),
                               st.memory_space)
    with ir.InsertionPoint(at), at.location:
        return memref_d.TransposeOp(view_t, src, ir.AffineMapAttr.get(ir.AffineMap.get_permutation(perm))).result


def constant_value(v: ir.Value) -> int | float | None:
    """The Python value of a scalar `arith.constant` (integer, index or float), else None."""
    op = defining_op(v)
    if op is None or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    return None


def walk_ops(op: ir.Operation):
    """Every operation nested in `op` (not `op` itself), in pre-order."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from walk_ops(child.operation)


def ops_named(op: ir.Operation, names: frozenset | set | tuple) -> list[ir.Operation]:
    """Every operation in `op` (itself included) whose name is in `names`, in pre-order.

    Found by MLIR's walk-based pattern driver with a pattern per name that records its root and
    fails (no rewrite, no folding): only the matches call back into Python, where a walk with a
    Python callback calls it for every op (10-20 times slower on a model's kernels). The driver
    visits in post-order, so a match is moved before the matches nested in it."""
    found: list[ir.Operation] = []

    def record(o, _rewriter) -> bool:
        found.append(o.operation if hasattr(o, "operation") else o)
        return True  # "no match": nothing is rewritten

    patterns = rewrite.RewritePatternSet(op.context)
    for name in set(names):
        patterns.add(name, record)
    rewrite.walk_and_apply_patterns(op, patterns.freeze())
    out: list[ir.Operation] = [op] if op.name in names else []
    start = len(out)
    for o in found:  # post-order -> pre-order: o goes before its descendants, the list's tail
        k = len(out)
        while k > start and _inside(out[k - 1], o):
            k -= 1
        out.insert(k, o)
    return out


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    p = op.parent
    while p is not None:
        if p == ancestor:
            return True
        p = p.parent
    return False


def enclosing(op: ir.Operation, names: tuple) -> list[ir.Operation]:
    """The ancestors of `op` whose name is in `names`, innermost first."""
    out = []
    p = op.parent
    while p is not None:
        if p.name in names:
            out.append(p)
        p = p.parent
    return out


def use_owner(use) -> ir.Operation:
    """The operation holding an operand use, as an `ir.Operation`."""
    o = use.owner
    return o.operation if hasattr(o, "operation") else o


def indexing_maps(g: ir.Operation) -> list[ir.AffineMap]:
    """A linalg op's indexing maps."""
    return [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]


# A producer copied into each of its consumers (sym-duplicate-elementwise, sym-fuse-elementwise-chains)
# makes each copy load the tensors the producer reads. Materialized, it costs one write and a read per
# consumer; copied into two consumers, 2k loads for k tensors read: copies pay up to k = 2. Past that
# a chain of copies grows with every link (GPT-2's residual stream: each layer norm recomputed the sum
# of every earlier layer's outputs, 2k + 1 loads and 2 more kernel arguments per layer).
MAX_COPIED_READS = 2


def full_reads(g: ir.Operation) -> list[ir.Value]:
    """The inputs a linalg.generic reads at every point of its iteration space (through a permutation
    of all its loops): one load per element, unlike a broadcast (a bias, a row's max), which caches."""
    maps = indexing_maps(g)
    n_in = len(g.operands) - len(g.results)
    out = []
    for v, m in zip(list(g.operands)[:n_in], maps):
        if m.n_symbols == 0 and m.is_permutation and v not in out:
            out.append(v)
    return out


def dim_or_zero(e) -> bool:
    """Whether an affine expression is a loop dim or the constant 0 (a broadcast unit dim)."""
    return isinstance(e, ir.AffineDimExpr) or (isinstance(e, ir.AffineConstantExpr) and e.value == 0)


def clone_remapped(o: ir.Operation, mapping: dict) -> None:
    """Clone `o` at the current insertion point with its operands remapped, and those of the ops in
    its regions (an scf.while in a body reads the body's values inside its own regions); record its
    results."""
    new = o.clone()
    for inner in (new, *walk_ops(new)):
        for k, v in enumerate(inner.operands):
            if v in mapping:
                inner.operands[k] = mapping[v]
    for old, r in zip(o.results, new.results):
        mapping[old] = r


def new_generic(before: ir.Operation, results: list, ins: list, outs: list, maps: list,
                iterator_types: ir.Attribute) -> ir.Operation:
    """A `linalg.generic` right before `before` (at its location), with an empty body region."""
    with ir.InsertionPoint(before), before.location:
        return ir.Operation.create(
            "linalg.generic", results=results, operands=ins + outs,
            attributes={
                "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                "iterator_types": iterator_types,
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(ins), len(outs)]),
            },
            regions=1)


def before(a: ir.Operation, b: ir.Operation) -> bool:
    """Whether `a` comes before `b` (both in one block)."""
    for o in a.block.operations:
        if o.operation == a:
            return True
        if o.operation == b:
            return False
    return False


def ops_between(a: ir.Operation, b: ir.Operation) -> list[ir.Operation] | None:
    """The ops strictly between `a` and `b` of one block; None unless `b` comes after `a`."""
    out, inside = [], False
    for o in a.block.operations:
        o = o.operation
        if o == b:
            return out if inside else None
        if inside:
            out.append(o)
        inside = inside or o == a
    return None


def ancestor_in(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """The op of `block` that is `op` or contains it; None when `op` is outside the block (another
    block of the function)."""
    while True:
        if op.block == block:
            return op
        parent = op.parent
        if parent is None or parent.name in ("func.func", "builtin.module"):
            return None
        op = parent


def module_functions(module: ir.Operation) -> dict[str, ir.Operation]:
    """The module's top-level `func.func`s (definitions and declarations): name -> op."""
    return {f.operation.attributes["sym_name"].value: f.operation
            for f in module.regions[0].blocks[0].operations if f.operation.name == "func.func"}


def library_declarations(module: ir.Operation, kinds: tuple[str, ...] | None = None) -> dict[str, ir.Operation]:
    """The module's declarations of runtime calls (`sym.library_call`), of `kinds` when given: name -> op."""
    out = {}
    for f in ops_named(module, {"func.func"}):
        if "sym.library_call" in f.attributes and (
                kinds is None or ir.StringAttr(f.attributes["sym.library_call"]).value in kinds):
            out[ir.StringAttr(f.attributes["sym_name"]).value] = f
    return out


def library_declaration(module: ir.Operation, like: ir.Operation, kind: str, types: list, results: list,
                        decls: dict) -> str:
    """The name of the module's private declaration of runtime call `kind` (`sym.library_call`) with
    this signature, made (at `like`'s location, named `__sym_<kind>_<n>`) if missing. `decls` maps
    the module's function names to their ops and gets the new one."""
    ftype = ir.FunctionType.get(types, results)
    for name, f in decls.items():
        if "sym.library_call" in f.attributes and ir.StringAttr(f.attributes["sym.library_call"]).value == kind \
                and str(ir.TypeAttr(f.attributes["function_type"]).value) == str(ftype):
            return name
    prefix, n = f"__sym_{kind}_", sum("sym.library_call" in f.attributes for f in decls.values())
    while f"{prefix}{n}" in decls:
        n += 1
    with ir.InsertionPoint(module.regions[0].blocks[0]), like.location:
        f = func_d.FuncOp(f"{prefix}{n}", ftype, visibility="private")
        f.operation.attributes["sym.library_call"] = ir.StringAttr.get(kind)
    decls[f"{prefix}{n}"] = f.operation
    return f"{prefix}{n}"


def erase_uncalled(module: ir.Operation, names: set, decls: dict) -> None:
    """Erase the declarations among `names` (keys of `decls`, name -> op) that no `func.call`
    anywhere in `module` calls any more (a pass replaced all their calls)."""
    called = {ir.FlatSymbolRefAttr(o.attributes["callee"]).value for o in ops_named(module, {"func.call"})}
    for name in names:
        if name not in called:
            decls[name].erase()
