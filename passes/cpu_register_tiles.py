"""Compute a product's outputs four rows at a time on the CPU, so that each weight element loaded
serves four rows (unroll and jam of the row loop around a dot product).

After `sym-cpu-accumulators` a product `C[i, j] = sum_k A[i, k] B[j, k]` (a linear layer with its
weight read where it is) is three loops: rows i, columns j, and the dot product over k with its
accumulator in a register, which LLVM vectorizes. Each step of the dot product loads one element of
A and one of B for one multiply-add: the loop is bound by loads, and for every row i the whole of B
(a [8000, 256] head: 8 MB) streams from the caches again. At 32 rows the product took 1.1-1.4 times
eager's single-threaded time (eager's GEMM blocks for registers and caches).

Here the row loop steps by 4 and its body computes the dot products of rows i .. i+3 with column j
in one k loop with four accumulators: each step loads B[j, k] once and A[i+u, k] for the four rows
(5 loads for 4 multiply-adds), and B streams once per four rows. Rows past the last multiple of 4
run in the original loops (the loop's lower bound moved). One row (decode at batch 1) runs as
before.

What qualifies: an `scf.for` over rows (step 1, no results) whose body is only an `scf.for` over
columns, whose body is only `load C[idx]`, a k loop carrying that value (one `iter_args`, a body of
arithmetic and loads without regions) and `store C[idx]` of its result. The indices `idx` of C are
the two loop variables among values from outside the loops (so every (i, j) has its own element:
the rows are independent), C's root buffer is a function argument or an allocation distinct from
every buffer the k loop reads (as sym-cpu-accumulators decides aliasing), and some load of the k
loop does not depend on the row while another does (else nothing is shared).

The other form of a product, `C[i, j] += A[i, k] W[k, j]` with W as [K, N] (`x @ W`, GPT-2's Conv1D),
is loops i, k, j with the columns innermost (vectorized over j, C's row updated at every k). There
the row loop steps by 4 around the k and j loops, and the j loop's body runs for the four rows,
every row's loads and arithmetic before the stores (C's four elements are distinct, and C's buffer
is distinct from the others), so the four loads of W[k, j] are one: the j loop loads W once for
four rows' updates, and W streams once per four rows. Qualifies: the row loop (step 1) holds only
the k loop, which holds only the j loop; its body's one store is to C at an index of i and j (as
above), it loads C only there and before the store, reads other buffers, one without i.
Counted as `update-tiles` (the first form: `row-tiles`).

Before:
  scf.for %i = %lo to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %c = memref.load %C[%i, %j]
      %r = scf.for %k ... iter_args(%a = %c) { %x = load %A[%i, %k]; %w = load %B[%j, %k]; ... yield }
      memref.store %r, %C[%i, %j]
    }
  }
After:
  %main = %lo + (max(%m - %lo, 0) floordiv 4) * 4
  scf.for %i = %lo to %main step %c4 {
    scf.for %j = %c0 to %n step %c1 {
      %c0..%c3 = memref.load %C[%i + u, %j]
      %r:4 = scf.for %k ... iter_args(%a0 = %c0, ..., %a3 = %c3) { the body four times, %i + u }
      memref.store %r#u, %C[%i + u, %j]
    }
  }
  scf.for %i = %main to %m step %c1 { ...as before... }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, memref as memref_d, scf

from mlir_sym.passes._compute_common import (clone_remapped, constant_value, defining_op, identity_layout, ops_named,
                                              root_buffer)
from mlir_sym.passes.cpu_accumulators import _buffer, _depends_on, _inside
from mlir_sym.passes.registry import SymPass, register

ROWS = 4
_PURE_DIALECTS = ("arith.", "math.", "index.")


def _rows(t: ir.Value) -> list[ir.Value]:
    """t, t + 1, ..., t + ROWS - 1 (at the insertion point)."""
    idx_t = ir.IndexType.get()
    return [t] + [arith.AddIOp(t, arith.ConstantOp(idx_t, u).result).result for u in range(1, ROWS)]


def _rows_apart(buf: ir.Value, dim: int) -> bool:
    """Whether different values of index `dim` of `buf` are different elements: an identity layout,
    a static nonzero stride there, or a dynamic one through views that keep rows apart (subviews,
    casts, reshapes; not a reinterpret_cast, which may give the rows a stride of 0)."""
    t = ir.MemRefType(buf.type)
    if identity_layout(t):
        return True
    stride = t.get_strides_and_offset()[0][dim]
    if stride == 0:
        return False
    if not ir.ShapedType.is_dynamic_stride_or_offset(stride):
        return True
    v = buf
    while True:
        op = defining_op(v)
        if op is None:
            return True  # a function argument
        if op.name not in ("memref.subview", "memref.cast", "memref.expand_shape", "memref.collapse_shape"):
            return op.name in ("memref.alloc", "memref.alloca", "memref.get_global")
        v = op.operands[0]


def _body(loop: ir.Operation) -> list[ir.Operation]:
    """The ops of a loop's body but its terminator."""
    return [o.operation for o in loop.regions[0].blocks[0].operations][:-1]


def _only_loop(loop: ir.Operation) -> ir.Operation | None:
    """The one scf.for (without results) that is all of `loop`'s body, or None."""
    body = _body(loop)
    if len(body) != 1 or body[0].name != "scf.for" or len(body[0].results):
        return None
    return body[0]


def _output_root(buf: ir.Value, idx: list, i: ir.Value, j: ir.Value, rows: ir.Operation) -> tuple | None:
    """C's root buffer (`_buffer`) when C[idx] gives each (i, j) its own element: i and j once each
    among values from outside the nest, rows apart in C's layout; else None."""
    if (_inside(buf, rows) or sum(v == i for v in idx) != 1 or sum(v == j for v in idx) != 1
            or any(v not in (i, j) and _inside(v, rows) for v in idx)):
        return None
    root = _buffer(root_buffer(buf))
    return root if root is not None and _rows_apart(buf, idx.index(i)) else None


def _reads_ok(body: list, root: tuple, i: ir.Value, rows: ir.Operation, own=None) -> bool:
    """Whether a body reads only buffers distinct from C (`root`; `own(load)`: C's own element,
    allowed), holds no regions and nothing but arithmetic, loads and (`own` given) stores, and reads
    something with the row and something without."""
    shared = by_row = False
    for o in body:
        if len(o.regions):
            return False
        if o.name == "memref.load":
            if own is not None and own(o):
                continue
            other = _buffer(root_buffer(o.operands[0]))
            if other is None or other == root or _inside(o.operands[0], rows):
                return False
            if any(_depends_on(v, i, rows) for v in o.operands[1:]):
                by_row = True
            else:
                shared = True
        elif not (o.name.startswith(_PURE_DIALECTS) or (own is not None and o.name == "memref.store")):
            return False
    return shared and by_row


@register
class CpuRegisterTiles(SymPass):
    """Compute a product's rows four at a time (unroll and jam of the row loop), sharing each loaded weight element."""

    name = "sym-cpu-register-tiles"

    def run(self, op: ir.Operation) -> None:
        for loop in ops_named(op, {"scf.for"}):
            match = self._match(loop)
            if match is not None:
                self._rewrite(loop, *match)
                self.bump("row-tiles")
                continue
            match = self._match_rows_of_updates(loop)
            if match is not None:
                self._rewrite_updates(loop, *match)
                self.bump("update-tiles")

    def _match_rows_of_updates(self, rows: ir.Operation):
        """`C[i, j] += A[i, k] W[k, j]` as loops i, k, j (W as [K, N], the columns innermost): the row
        loop (step 1) holding only a k loop holding only a j loop whose body loads and stores C at
        one index holding i and j, and reads other buffers, one of them without i."""
        if len(rows.results) or constant_value(rows.operands[2]) != 1:
            return None
        kl = _only_loop(rows)
        jl = _only_loop(kl) if kl is not None else None
        if jl is None:
            return None
        i, j = rows.regions[0].blocks[0].arguments[0], jl.regions[0].blocks[0].arguments[0]
        if any(_inside(v, rows) for v in [*kl.operands[:3], *jl.operands[:3]]):
            return None
        body = _body(jl)
        stores = [o for o in body if o.name == "memref.store"]
        if len(stores) != 1:
            return None
        store = stores[0]
        buf, idx = store.operands[1], list(store.operands[2:])
        root = _output_root(buf, idx, i, j, rows)
        if root is None:
            return None
        if any(o.name == "memref.load" for o in body[body.index(store):]):
            return None  # the stores move after every load: none may read after the store
        if not _reads_ok(body, root, i, rows, own=lambda o: o.operands[0] == buf and list(o.operands[1:]) == idx):
            return None
        return kl, jl, i

    def _rewrite_updates(self, rows: ir.Operation, kl, jl, i: ir.Value) -> None:
        tiles, main = self._tiles(rows)
        with ir.InsertionPoint(tiles.body), rows.location:
            nk = scf.ForOp(kl.operands[0], kl.operands[1], kl.operands[2])
            scf.YieldOp([])
        with ir.InsertionPoint(nk.body), rows.location:
            rows_u = _rows(tiles.induction_variable)
            nj = scf.ForOp(jl.operands[0], jl.operands[1], jl.operands[2])
            scf.YieldOp([])
        with ir.InsertionPoint(nj.body), rows.location:
            # every row's loads and arithmetic first, then the stores (each row's own element of C,
            # which no other row reads), so that the rows' identical loads of W are one (CSE)
            maps = [{i: r, kl.regions[0].blocks[0].arguments[0]: nk.induction_variable,
                     jl.regions[0].blocks[0].arguments[0]: nj.induction_variable} for r in rows_u]
            body = _body(jl)
            for m in maps:
                for o in body:
                    if o.name != "memref.store":
                        clone_remapped(o, m)
            for m in maps:
                for o in body:
                    if o.name == "memref.store":
                        clone_remapped(o, m)
            scf.YieldOp([])
        rows.operands[0] = main  # the rows past the last whole tile: the original loops

    @staticmethod
    def _tiles(rows: ir.Operation) -> tuple:
        """Before `rows`: the loop over its whole tiles of ROWS rows (an empty body), and where the
        tiles end: `lo + (max(hi - lo, 0) floordiv ROWS) * ROWS`."""
        idx_t = ir.IndexType.get()
        lo, hi = rows.operands[0], rows.operands[1]
        with ir.InsertionPoint(rows), rows.location:
            cst = lambda v: arith.ConstantOp(idx_t, v).result  # noqa: E731
            n = arith.MaxSIOp(arith.SubIOp(hi, lo).result, cst(0)).result
            whole = arith.MulIOp(arith.FloorDivSIOp(n, cst(ROWS)).result, cst(ROWS)).result
            main = arith.AddIOp(lo, whole).result
            tiles = scf.ForOp(lo, main, cst(ROWS))
        return tiles, main

    def _match(self, rows: ir.Operation):
        if len(rows.results) or constant_value(rows.operands[2]) != 1:
            return None
        cols = _only_loop(rows)
        if cols is None:
            return None
        inner = _body(cols)
        if len(inner) != 3 or [o.name for o in inner] != ["memref.load", "scf.for", "memref.store"]:
            return None
        load, red, store = inner
        i, j = rows.regions[0].blocks[0].arguments[0], cols.regions[0].blocks[0].arguments[0]
        buf, idx = load.operands[0], list(load.operands[1:])
        if (len(red.results) != 1 or red.operands[3] != load.results[0] or store.operands[0] != red.results[0]
                or store.operands[1] != buf or list(store.operands[2:]) != idx):
            return None
        if any(_inside(v, rows) for v in red.operands[:3]) or any(_inside(v, rows) for v in cols.operands[:3]):
            return None  # bounds from outside the nest
        root = _output_root(buf, idx, i, j, rows)
        if root is None or not _reads_ok(_body(red), root, i, rows):
            return None
        return cols, load, red, store, i, j

    def _rewrite(self, rows: ir.Operation, cols, load, red, store, i: ir.Value, j: ir.Value) -> None:
        tiles, main = self._tiles(rows)
        with ir.InsertionPoint(tiles.body), rows.location:
            ncols = scf.ForOp(cols.operands[0], cols.operands[1], cols.operands[2])
            scf.YieldOp([])
        with ir.InsertionPoint(ncols.body), rows.location:
            maps = [{i: r, j: ncols.induction_variable} for r in _rows(tiles.induction_variable)]
            buf, idx = load.operands[0], list(load.operands[1:])
            inits = [memref_d.LoadOp(buf, [m.get(v, v) for v in idx]).result for m in maps]
            nred = scf.ForOp(red.operands[0], red.operands[1], red.operands[2], inits)
            old_yield = [o.operation for o in red.regions[0].blocks[0].operations][-1]
            with ir.InsertionPoint(nred.body):
                for u, m in enumerate(maps):
                    m[load.results[0]] = inits[u]  # C's first value, if the k loop reads it directly
                    m[red.regions[0].blocks[0].arguments[0]] = nred.induction_variable
                    m[red.regions[0].blocks[0].arguments[1]] = nred.inner_iter_args[u]
                    for o in _body(red):
                        clone_remapped(o, m)
                scf.YieldOp([m.get(old_yield.operands[0], old_yield.operands[0]) for m in maps])
            for u, m in enumerate(maps):
                memref_d.StoreOp(nred.results[u], buf, [m.get(v, v) for v in idx])
            scf.YieldOp([])
        rows.operands[0] = main  # the rows past the last whole tile: the original loops
