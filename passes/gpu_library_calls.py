"""Replace `linalg.matmul` / `linalg.batch_matmul` on memrefs by calls the GPU runtime serves with cuBLAS,
and `tm_tensor.sort` by calls it serves with torch.sort.

Runs on the bufferized compute function, before `convert-linalg-to-parallel-loops` would turn the
matmul into a loop nest of one thread per output element. `linalg.matmul ins(%a, %b) outs(%c)`
becomes `func.call @__sym_matmul_<n>(%a, %b, %c)` (C += A*B); when the op right before it fills %c
with zero, the fill goes and the call is `@__sym_matmul_init_<n>` (C = A*B). The callee is a private
declaration tagged `sym.library_call` with its kind, one per kind and signature; the GPU runtime maps
the name to torch.mm / addmm_ (bmm / baddbmm_ for batches) on the same buffers; half inputs with a
float32 accumulator (a bf16 nn.Linear once sym-matmul-half-operands has run) multiply in cuBLAS with
a float32 result (`out_dtype`). Matmuls on tensors, with other mixed or non-float element types, or with explicit non-default indexing maps (transposed
operands) are left to the loop lowering. An operand that a `linalg.transpose` of a function argument
fills just for the matmul (nn.Linear's `weight.t()`) becomes a `memref.transpose` view of the
argument: no copy kernel per call, cuBLAS reads it transposed.

Sorts (torch.sort, topk, unique, ...): torch-mlir's `tm_tensor.sort` becomes a bubble sort in loops
(`tm-tensor-to-loops`), which the GPU mapping can only run in one thread (top-k filtering of
[2048, 2048] logits took 425 ms on the H100). A sort whose comparator is one `arith.cmpf`/`arith.cmpi`
of the keys (what torch-mlir emits: `ole`/`sle` ascending, `oge`/`sge` descending, ties in input order)
becomes `func.call @__sym_sort_<asc|desc>_d<dim>_<n>(%keys, %others...)`: the runtime sorts the keys
with a stable torch.sort along `dim` and gathers the other operands (the indices) along.
Scans (cumsum, cumprod, cummax / cummin's: `tm_tensor.scan`, a one-thread loop otherwise) whose
combiner is one `arith.addf/addi/mulf/muli/maximumf/maxsi/minimumf/minsi` become
`func.call @__sym_scan_<add|mul|max|min>_<inc|exc>_d<dim>_<n>(%in, %out, %acc)`: torch.cumsum /
cumprod / cummax / cummin along `dim` (an exclusive scan starts from the accumulator's value), the
accumulator gets the last element.
Contractions that elementwise fusion turned into `linalg.generic`s (GPT-2's `x.view(-1, C) @ W` becomes
a 4-loop generic once the reshape is folded through it: no matmul was left for cuBLAS, and the
contraction ran as our own loops), i.e. a generic whose body is `out + a * b` over two float inputs
indexed by projected permutations, become `func.call @__sym_einsum[_init]_<a>_<b>_<out>_<n>`: the
runtime computes `torch.einsum("<a>,<b>-><out>", ...)` (cuBLAS for these shapes) into the output,
replacing it when a zero fill of the output comes right before (`_init`), else adding to it.
Scatters that `sym-scatter-to-parallel` (which runs first) leaves as `tm_tensor.scatter` (a one-thread
loop otherwise): adds of narrow integers (no hardware atomics), or any scatter where this pass runs
alone, if they overwrite with unique indices or add, become `func.call
@__sym_scatter_<set|add>_m<dims>_<n>(%updates, %indices, %original)`: one `index_put_` with an index
tensor per dimension of the original (its dimension map, plus the update's own slice positions).

Before:
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
After:
  call @__sym_matmul_init_0(%a, %b, %c) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  ...
  func.func private @__sym_matmul_init_0(memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>)
      attributes {sym.library_call = "matmul_init"}
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import (MEMREF_VIEW_OPS, NAMED_CONTRACTION_MAPS, constant_value, defining_op,
                                              root_buffer, transpose_view)
from mlir_sym.passes.registry import SymPass, register
from mlir_sym.passes.scatter_to_parallel import scatter_combiner

_LIBRARY_OPS = {"linalg.matmul": "matmul", "linalg.batch_matmul": "batch_matmul"}
_LIBRARY_ELEMENTS = {"f32", "f64", "f16", "bf16"}


@register
class GpuLibraryCalls(SymPass):
    """Replace linalg.matmul / linalg.batch_matmul on memrefs by calls the GPU runtime serves with cuBLAS."""

    name = "sym-gpu-library-calls"

    def run(self, op: ir.Operation) -> None:
        module = op
        decls: dict[str, str] = {}
        for fn in list(module.regions[0].blocks[0].operations):
            if fn.operation.name != "func.func" or len(fn.regions[0].blocks) == 0:
                continue
            for block in fn.regions[0].blocks:
                prev = None
                for child in list(block.operations):
                    o = child.operation
                    if o.name in _LIBRARY_OPS and self._eligible(o):
                        self._replace(module, o, prev, decls)
                        prev = None
                        continue
                    if o.name == "linalg.generic" and _einsum_equation(o) is not None:
                        self._einsum(module, o, prev, decls)
                        prev = None
                        continue
                    if o.name == "tm_tensor.sort":
                        self._sort(module, o, decls)
                    elif o.name == "tm_tensor.scan":
                        self._scan(module, o, decls)
                    elif o.name == "tm_tensor.scatter":
                        self._scatter(module, o, decls)
                    prev = o

    @staticmethod
    def _eligible(o: ir.Operation) -> bool:
        if len(o.results):
            return False
        if "indexing_maps" in o.attributes:
            maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(o.attributes["indexing_maps"])]
            if maps != NAMED_CONTRACTION_MAPS[o.name]:
                return False
        if not _three_memrefs(o):
            return False
        return _library_types([str(ir.MemRefType(v.type).element_type) for v in o.operands])

    def _replace(self, module: ir.Operation, o: ir.Operation, prev, decls: dict[str, str]) -> None:
        kind = _LIBRARY_OPS[o.name]
        a, b, c = list(o.operands)
        self._dead: list[ir.Operation] = []
        a, b = self._untranspose(o, a), self._untranspose(o, b)
        init = prev is not None and prev.name == "linalg.fill" and len(prev.operands) == 2 \
            and prev.operands[1] == c and _is_zero(prev.operands[0])
        if init:
            kind += "_init"
            prev.erase()
        self._library_call(module, o, decls, kind, [a, b, c])
        for dead in self._dead:
            dead.erase()
        self.bump("library-calls")


    def _einsum(self, module: ir.Operation, o: ir.Operation, prev, decls: dict[str, str]) -> None:
        a, b, out = _einsum_equation(o)
        c = o.operands[2]
        fill = _zero_fill_before(o, c)
        if fill is not None:
            fill.erase()
        # a transposed weight (GPT-2's / BERT's linear layers once fusion generalized the matmul): the
        # view has the copy's logical shape, so the subscripts stay
        self._dead = []
        x, y = self._untranspose(o, o.operands[0]), self._untranspose(o, o.operands[1])
        self._library_call(module, o, decls, f"einsum{'_init' if fill is not None else ''}_{a}_{b}_{out}", [x, y, c])
        for dead in self._dead:
            dead.erase()
        self.bump("library-einsums")

    def _scan(self, module: ir.Operation, o: ir.Operation, decls: dict[str, str]) -> None:
        combine = _scan_combiner(o)
        if combine is None or not _three_memrefs(o):
            return
        dim = ir.IntegerAttr(o.attributes["dimension"]).value
        inclusive = ir.BoolAttr(o.attributes["inclusive"]).value
        operands = list(o.operands)
        cast = _cast_feeding(o, operands[0])
        alloc = None
        if cast is not None:  # torch.cumsum(x, dtype=out.dtype) converts as the cast did: no kernel
            operands[0] = cast.operands[0]
            alloc = defining_op(cast.operands[1])
            cast.erase()
            self.bump("scan-casts-folded")
        self._library_call(module, o, decls, f"scan_{combine}_{'inc' if inclusive else 'exc'}_d{dim}", operands)
        if alloc is not None and not list(alloc.results[0].uses):
            alloc.erase()
        self.bump("library-scans")

    def _scatter(self, module: ir.Operation, o: ir.Operation, decls: dict[str, str]) -> None:
        combine = scatter_combiner(o)
        if combine is None or not _three_memrefs(o):
            return
        unique = "unique_indices" in o.attributes and ir.BoolAttr(o.attributes["unique_indices"]).value
        if combine == "set" and not unique:
            return  # duplicate indices: the loop's last-writer order is the semantics; keep it
        dims = list(ir.DenseI64ArrayAttr(o.attributes["dimension_map"]))
        self._library_call(module, o, decls, f"scatter_{combine}_m{'x'.join(str(d) for d in dims)}")
        self.bump("library-scatters")

    def _sort(self, module: ir.Operation, o: ir.Operation, decls: dict[str, str]) -> None:
        direction = _sort_direction(o)
        if direction is None or not o.operands or not all(isinstance(v.type, ir.MemRefType) for v in o.operands):
            return
        dim = ir.IntegerAttr(o.attributes["dimension"]).value
        self._library_call(module, o, decls, f"sort_{direction}_d{dim}")
        self.bump("library-sorts")

    @staticmethod
    def _library_call(module: ir.Operation, o: ir.Operation, decls: dict[str, str], kind: str,
                      operands: list[ir.Value] | None = None, results: list[ir.Type] = ()) -> ir.Operation:
        """Replace `o` by a call of the runtime's `kind` on `operands` (default: its own) returning
        `results`, with one private declaration per kind and signature; the call."""
        operands = list(o.operands) if operands is None else operands
        types, results = [v.type for v in operands], list(results)
        sig = f"{kind}:{','.join(str(t) for t in types)}->{','.join(str(t) for t in results)}"
        if sig not in decls:
            name = f"__sym_{kind}_{len(decls)}"
            decls[sig] = name
            with ir.InsertionPoint(module.regions[0].blocks[0]), o.location:
                f = func_d.FuncOp(name, ir.FunctionType.get(types, results), visibility="private")
                f.operation.attributes["sym.library_call"] = ir.StringAttr.get(kind)
        with ir.InsertionPoint(o), o.location:
            call = func_d.CallOp(results, ir.FlatSymbolRefAttr.get(decls[sig]), operands)
        o.erase()
        return call.operation

    def _untranspose(self, mm: ir.Operation, v: ir.Value) -> ir.Value:
        """`v` itself, or, when `v` is a buffer that only a `linalg.transpose` of the last two dims of a
        function argument fills (nn.Linear's weight.t()), a transposed view of that argument: cuBLAS
        reads it transposed, and the copy kernel and its buffer go."""
        tr = _sole_writer(v, mm, "linalg.transpose")
        if tr is None:
            return v
        src = tr.operands[0]
        if not (tr.operands[1] == v) or not isinstance(src.owner, ir.Block) or tr.block != mm.block:
            return v  # only function arguments: nothing writes them between the copy and the call
        perm = list(ir.DenseI64ArrayAttr(tr.attributes["permutation"]))
        rank = len(perm)
        if perm != list(range(rank - 2)) + [rank - 1, rank - 2]:
            return v
        view = transpose_view(src, perm, mm)
        if view is None:
            return v
        tr.erase()
        self._dead.append(defining_op(v))  # the allocation: erased once the matmul that reads it is gone
        self.bump("transposes-folded")
        return view


_ASCENDING = {"ole", "olt", "ule", "ult", "sle", "slt", "ule", "ult"}
_DESCENDING = {"oge", "ogt", "uge", "ugt", "sge", "sgt"}
_CMPF_NAMES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une",
               "uno", "true"]
_CMPI_NAMES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


def _sole_writer(v: ir.Value, consumer: ir.Operation, name: str) -> ir.Operation | None:
    """The one `name` op that fills `v`, a fresh allocation whose only other user is `consumer`."""
    alloc = defining_op(v)
    if alloc is None or alloc.name != "memref.alloc":
        return None
    users = [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in v.uses]
    writers = [u for u in users if u.name == name]
    if len(users) != 2 or len(writers) != 1 or not any(u == consumer for u in users):
        return None
    return writers[0]


_TORCH_CASTS = ("arith.extsi", "arith.sitofp", "arith.extf")  # what torch's .to(dtype) does too


def _cast_feeding(scan: ir.Operation, v: ir.Value) -> ir.Operation | None:
    """The elementwise `linalg.generic` that only converts another buffer into the scan's input `v`
    (`cumsum(mask.to(int64))`: extui of i1, extsi, sitofp, extf; conversions torch.cumsum's dtype
    makes the same way), when `v` is a temporary only it writes and the scan reads, and nothing
    between them may write its source (only arithmetic, allocations, views, loads and linalg ops
    writing fresh allocations of their own are between them); else None."""
    g = _sole_writer(v, scan, "linalg.generic")
    if g is None:
        return None
    if len(g.operands) != 2 or g.operands[1] != v or g.block != scan.block or len(g.regions[0].blocks) != 1:
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    rank = ir.MemRefType(v.type).rank
    if any(m != ir.AffineMap.get_identity(rank) for m in maps):
        return None
    src = g.operands[0]
    if not isinstance(src.type, ir.MemRefType) or ir.MemRefType(src.type).shape != ir.MemRefType(v.type).shape:
        return None
    body = [c.operation for c in g.regions[0].blocks[0].operations]
    args = list(g.regions[0].blocks[0].arguments)
    if len(body) != 2 or body[1].name != "linalg.yield" or body[1].operands[0] != body[0].results[0]:
        return None
    c = body[0]
    if len(c.operands) != 1 or c.operands[0] != args[0]:
        return None
    from_i1 = str(c.operands[0].type) == "i1"
    if not (c.name in _TORCH_CASTS or (c.name == "arith.extui" and from_i1)):
        return None
    ops = [x.operation for x in scan.block.operations]
    i, j = ops.index(g), ops.index(scan)
    root = root_buffer(src)
    for between in ops[i + 1:j]:
        if not _writes_only_elsewhere(between, root):
            return None  # it may write the source (or a view of it) before the scan reads it
    return g


_NO_WRITES = ("memref.alloc", "memref.dim", "memref.load") + MEMREF_VIEW_OPS


def _writes_only_elsewhere(op: ir.Operation, root: ir.Value) -> bool:
    """Whether `op` writes nothing, or only fresh buffers other than `root` (linalg outputs that are
    allocations of their own); anything else (calls, stores, nested regions, views of the source)
    counts as a possible write of the source."""
    if op.name.startswith("arith.") or op.name in _NO_WRITES:
        return True
    if op.name in ("linalg.generic", "linalg.fill"):
        n_in = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
        for out in list(op.operands)[n_in:]:
            a = defining_op(out)
            if a is None or a.name != "memref.alloc" or out == root:
                return False
        return True
    return False


def _three_memrefs(o: ir.Operation) -> bool:
    """Whether `o` has exactly three operands, all memrefs (a bufferized library-call candidate)."""
    return len(o.operands) == 3 and all(isinstance(v.type, ir.MemRefType) for v in o.operands)


def _sort_direction(o: ir.Operation) -> str | None:
    """"asc" / "desc" for a tm_tensor.sort whose comparator is a single compare of the keys' pair
    (block arguments 0 and 1, in either order), else None."""
    body = o.regions[0].blocks[0]
    ops = [c.operation for c in body.operations]
    if len(ops) != 2 or ops[0].name not in ("arith.cmpf", "arith.cmpi") or ops[1].name != "tm_tensor.yield":
        return None
    cmp = ops[0]
    if not (len(ops[1].operands) == 1 and ops[1].operands[0] == cmp.results[0]):
        return None
    names = _CMPF_NAMES if cmp.name == "arith.cmpf" else _CMPI_NAMES
    pred = names[ir.IntegerAttr(cmp.attributes["predicate"]).value]
    a, b = body.arguments[0], body.arguments[1]
    if cmp.operands[0] == a and cmp.operands[1] == b:
        swapped = False
    elif cmp.operands[0] == b and cmp.operands[1] == a:
        swapped = True
    else:
        return None
    if pred in _ASCENDING:
        return "desc" if swapped else "asc"
    if pred in _DESCENDING:
        return "asc" if swapped else "desc"
    return None


_NO_WRITES = ("memref.expand_shape", "memref.collapse_shape", "memref.subview", "memref.dim", "memref.cast",
              "memref.reinterpret_cast", "memref.alloc", "arith.", "affine.apply", "index.")


def _zero_fill_before(o: ir.Operation, c: ir.Value) -> ir.Operation | None:
    """The `linalg.fill` of zero into `c` that `o` follows, with only ops that write no memory (views,
    sizes, allocations, scalar arithmetic) in between; else None."""
    cur = o.operation
    while True:
        prev = _previous_op(cur)
        if prev is None:
            return None
        if prev.name == "linalg.fill":
            ok = len(prev.operands) == 2 and any(prev.operands[1] == v for v in _whole_views(c)) \
                and _is_zero(prev.operands[0])
            return prev if ok else None
        if not prev.name.startswith(_NO_WRITES):
            return None
        cur = prev


def _whole_views(v: ir.Value) -> list[ir.Value]:
    """`v` and the buffers it reshapes (expand/collapse_shape: the same elements, all of them)."""
    out = [v]
    op = defining_op(v)
    while op is not None and op.name in ("memref.expand_shape", "memref.collapse_shape"):
        out.append(op.operands[0])
        op = defining_op(op.operands[0])
    return out


def _previous_op(o: ir.Operation) -> ir.Operation | None:
    prev = None
    for child in o.block.operations:
        if child.operation == o:
            return prev
        prev = child.operation
    return None


def _library_types(types: list[str]) -> bool:
    """Operand element types the runtime multiplies: one float type, or half inputs (one of bf16 / f16)
    with a float32 accumulator (cuBLAS accumulates in float32 and writes it: what linalg's mixed
    matmul, which converts its inputs to the accumulator's type, computes)."""
    a, b, c = types
    return (a == b == c and a in _LIBRARY_ELEMENTS) or (a == b and a in ("bf16", "f16") and c == "f32")


def _einsum_equation(o: ir.Operation) -> tuple[str, str, str] | None:
    """The einsum subscripts (a, b, out) of a linalg.generic on memrefs that computes
    `out += a * b` (or `out += extf(a) * extf(b)` of half inputs into float32) summed over the dims
    `out` lacks, else None."""
    if len(o.results) or not _three_memrefs(o):
        return None
    if not _library_types([str(ir.MemRefType(v.type).element_type) for v in o.operands]):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(o.attributes["indexing_maps"])]
    its = [str(t).split("<")[-1].rstrip(">") for t in ir.ArrayAttr(o.attributes["iterator_types"])]
    if "reduction" not in its or len(its) > 26:
        return None
    subs = []
    for m in maps:
        if not all(isinstance(r, ir.AffineDimExpr) for r in m.results):
            return None
        dims = [r.position for r in m.results]
        if len(set(dims)) != len(dims):
            return None
        subs.append(dims)
    out, ins = set(subs[2]), set(subs[0]) | set(subs[1])
    if any((its[d] == "parallel") != (d in out) for d in range(len(its))):
        return None  # parallel dims are exactly the output's; the others are summed
    if any(d not in ins for d in range(len(its)) if its[d] != "parallel"):
        return None  # a reduction over a dim no input has would multiply by its size: not an einsum
    body = o.regions[0].blocks[0]
    ops = [c.operation for c in body.operations]
    x, y, acc = body.arguments
    if str(x.type) != str(acc.type):  # half inputs: each converted once, then the float32 product
        if len(ops) != 5 or ops[0].name != "arith.extf" or ops[1].name != "arith.extf" \
                or {ops[0].operands[0], ops[1].operands[0]} != {x, y} or x == y:
            return None
        x, y = (ops[0].results[0], ops[1].results[0]) if ops[0].operands[0] == x else (ops[1].results[0], ops[0].results[0])
        ops = ops[2:]
    if len(ops) != 3 or ops[0].name != "arith.mulf" or ops[1].name != "arith.addf" or ops[2].name != "linalg.yield":
        return None
    mul, add = ops[0], ops[1]
    if not ((mul.operands[0] == x and mul.operands[1] == y) or (mul.operands[0] == y and mul.operands[1] == x)):
        return None
    if not ((add.operands[0] == acc and add.operands[1] == mul.results[0])
            or (add.operands[1] == acc and add.operands[0] == mul.results[0])):
        return None
    if not (len(ops[2].operands) == 1 and ops[2].operands[0] == add.results[0]):
        return None
    letters = "abcdefghijklmnopqrstuvwxyz"
    return tuple("".join(letters[d] for d in dims) for dims in subs)  # type: ignore[return-value]


_SCAN_COMBINERS = {"arith.addf": "add", "arith.addi": "add", "arith.mulf": "mul", "arith.muli": "mul",
                   "arith.maximumf": "max", "arith.maxsi": "max", "arith.minimumf": "min", "arith.minsi": "min"}


def _scan_combiner(o: ir.Operation) -> str | None:
    """"add" / "mul" / "max" / "min" for a tm_tensor.scan whose region combines its two arguments with
    one op (max / min: NaN-propagating for floats, signed for integers), else None."""
    body = o.regions[0].blocks[0]
    ops = [c.operation for c in body.operations]
    if len(ops) != 2 or ops[0].name not in _SCAN_COMBINERS or ops[1].name != "tm_tensor.yield":
        return None
    args = list(body.arguments)
    if len(args) != 2 or not (len(ops[1].operands) == 1 and ops[1].operands[0] == ops[0].results[0]):
        return None
    a, b = ops[0].operands[0], ops[0].operands[1]
    if not ((a == args[0] and b == args[1]) or (a == args[1] and b == args[0])):
        return None
    return _SCAN_COMBINERS[ops[0].name]


def _is_zero(v: ir.Value) -> bool:
    return constant_value(v) == 0
