"""Map the loops of a bufferized compute function onto the GPU: each top-level `scf.parallel` becomes a
`gpu.launch` over its linearized iteration space, other device work runs in a one-thread launch.

Runs after `convert-linalg-to-parallel-loops` on the compute function (the one with an i32 status
result); what stays outside launches is host work the GPU runtime does itself: index arithmetic,
`memref.dim`, `memref.alloc` (torch's allocator), views, `memref.copy`, `func.call` (library calls such
as `@__sym_matmul`), control flow and the status return.

A parallel nest of n dimensions (trip counts t0..t{n-1}, any of them symbolic) is launched as one
dimension of `ceil(t0*...*t{n-1} / block-size)` blocks of `block-size` threads. Thread `g` (< the total)
delinearizes `g` innermost-dimension-first, so consecutive threads take consecutive elements of the
innermost dimension (coalesced for row-major tensors), and runs the loop body once. Reduction loops
(`scf.for` inside) run sequentially in each thread.

128-bit accesses: when every access of an elementwise body is either contiguous along the innermost
dimension or independent of it, a thread takes `16 / widest element size` consecutive elements with
one vector.load/vector.store per buffer, under a uniform runtime check (innermost size a multiple of
the width; every vector buffer's address, offset and outer strides aligned to a whole vector; unit
innermost stride); a load at `innermost mod C` (a concat's piece, sym-concat-to-select) is a vector
load too when the width divides C; otherwise the scalar mapping below runs. Option `vectorize=0` turns it off.

Reductions (a block per output element, 32..`max-reduction-block` threads: the fewest that give
each thread at most 64 bytes of the reduced input: 16 float32 elements, 32 bf16) and the loops of row groups take the same 128-bit path under the
same kind of runtime check, a
reduction issuing `reduction-vectors` (4) vector loads per thread and step. A reduction to one value
(`x.sum()`) is split: up to 1024 blocks reduce chunks into a buffer of partials, one block combines
them (option `split-full=0`: one block for all); not when its length is static and at most one
chunk (8192 elements: the layer norm or softmax of the one row of a decode step at batch 1, whose
unit row dims are gone), which one block reduces in one launch instead of two. A reduction over outer dims (`x.sum(0)`: the loads'
innermost index is the output's) is two coalesced launches instead: a thread per output element
and chunk of rows writes partials, lanes per output (up to a warp, by the number of chunks) combine
them with shuffles, and an elementwise nest over the outputs that reads only its own output's
result runs there too; arg-reductions over outer dims (`x.argmax(0)`) the same way, with (value,
position) partials and their accumulators' fills folded (option `column-reductions=0`:
a block per output; `column-threads` (2^18) and `column-min-rows` (16) size the chunks). Sibling
column reductions (the next one, after a fill of its own output or not, over the same outputs and
rows, neither reading the other's output: a layer norm's weight and bias grads) share the two
launches, a partials buffer each, the second one's epilogue included. A fill of the accumulator right before a reduction
is its initial value, not a launch.

Row groups: consecutive nests over the same rows (reductions into per-row buffers, fills of them,
elementwise nests whose leading dims are the rows: softmax's max / sum of exp / normalize, layer
norm's mean / variance / normalize) become one launch with a block per row; the nests run in order
with a barrier between them, so a row read again comes from L1/L2 instead of DRAM. Nests may only
exchange data through buffers that both access at their own row. A reduction result that only the
group reads stays in registers (gpu.all_reduce gives every thread the total): no buffer, store or
barrier. Option `fuse-rows=0` turns row groups off.

Before:
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) { BODY(%i, %j) }
After:
  %t = arith.muli %m, %n
  %g = arith.ceildivui %t, %c256
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, ...) threads(%tx, ...) in (%c256, %c1, %c1) {
    %lin = %bx * 256 + %tx
    scf.if (%lin < %t) { %j = %lin rem %n; %i = %lin div %n; BODY(%i, %j) }
    gpu.terminator
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, gpu, scf

from mlir_sym.dialects import sym
from mlir_sym.passes._compute_common import MEMREF_VIEW_OPS, constant_value, defining_op, root_buffer
from mlir_sym.passes.defer_nested_asserts import MARKER as _NESTED_ASSERT_MARKER
from mlir_sym.passes.registry import SymPass, located_error, register

# Host ops without side effects on buffers: evaluated by the host program in Python, so they may be
# hoisted above device work they do not depend on.
PURE_HOST_OPS = {
    "memref.dim", "memref.alloc", "memref.alloca", "memref.cast", "memref.subview", "memref.expand_shape",
    "memref.collapse_shape", "memref.reinterpret_cast", "memref.reshape", "memref.transpose", "ub.poison",
    "memref.get_global",  # a constant buffer: the runtime puts it on the device once
}
# Host ops that touch buffers or the control flow: device work cannot move across them.
BARRIER_HOST_OPS = {
    "memref.dealloc", "memref.copy", "func.return", "func.call", "cf.br", "cf.cond_br", "gpu.launch",
    "gpu.launch_func", "scf.yield",  # the end of a host branch (_branches_host_work)
}
HOST_BUFFER_ATTR = "sym.host_buffer"
ROW_BYTES_PER_THREAD = 64  # a block reduction's block size aims at this many bytes of input per thread
# (bytes, not elements: with 16 elements a thread, bf16 rows had half of float32's loads in flight,
# softmax and layer norm at [8192, 4096] 78-81 % of the copy peak against 92 % with 32)
_MAX_HOST_BUFFER = 64


def _is_pure_host_name(name: str) -> bool:
    return name in PURE_HOST_OPS or name.split(".")[0] in ("arith", "math", "index")


def _is_nested_assert(o: ir.Operation) -> bool:
    """A deferred nested assert (sym-defer-nested-asserts) left outside loops: a loop of one iteration
    that canonicalization unrolled onto the host (a gather of one element). It checks values loaded
    from device memory, so it runs in the launch that computes them (sym-gpu-device-asserts)."""
    return o.name == "func.call" and ir.FlatSymbolRefAttr(o.attributes["callee"]).value == _NESTED_ASSERT_MARKER


def is_host_buffer(v: ir.Value) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation if hasattr(owner, "operation") else owner
    return op.name == "memref.alloc" and HOST_BUFFER_ATTR in op.attributes


def mark_host_buffers(block: ir.Block, fn_blocks: list | None = None) -> None:
    """Small integer buffers that only hold sizes (the shape operand of memref.reshape, built with
    memref.store of symbol values): the host keeps them as Python lists instead of device memory.
    Their uses may be in any top-level block of the function (`fn_blocks`; the status returns of
    checks split a function into blocks), never inside loops or launches."""
    fn_blocks = fn_blocks or [block]
    for child in block.operations:
        o = child.operation
        if o.name != "memref.alloc" or len(o.operands):
            continue
        t = ir.MemRefType(o.result.type)
        et = str(t.element_type)
        if t.rank != 1 or t.shape[0] > _MAX_HOST_BUFFER or not (et == "index" or et.startswith("i")):
            continue
        ok, feeds_reshape = True, False
        for use in o.result.uses:
            u = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if not any(u.block == b for b in fn_blocks):
                ok = False
            elif u.name == "memref.store" and u.operands[1] == o.result:
                continue
            elif u.name == "memref.load":
                continue
            elif u.name == "memref.reshape" and u.operands[1] == o.result:
                feeds_reshape = True
            else:
                ok = False
        if ok and feeds_reshape:
            o.attributes[HOST_BUFFER_ATTR] = ir.UnitAttr.get()


def _branches_host_work(o: ir.Operation) -> bool:
    """Whether an scf.if holds host work (a launch, a library call, an allocation): a branch of the
    host program (sym-gpu-attention's library call or fused kernel), whose blocks are mapped like the
    function's, not device work."""
    def walk(op: ir.Operation) -> bool:
        for region in op.regions:
            for b in region.blocks:
                for c in b.operations:
                    c = c.operation
                    if c.name in ("gpu.launch", "func.call", "memref.alloc") or walk(c):
                        return True
        return False
    return walk(o)


def _touches_host_buffer(o: ir.Operation) -> bool:
    if o.name == "memref.store":
        return is_host_buffer(o.operands[1])
    if o.name == "memref.load":
        return is_host_buffer(o.operands[0])
    return False


@register
class GpuMapParallel(SymPass):
    """Turn top-level scf.parallel loops (and other device work) of compute functions into gpu.launch."""

    name = "sym-gpu-map-parallel"
    options = {"block-size": int, "elements-per-thread": int, "vectorize": int, "fuse-rows": int,
               "reduction-vectors": int, "max-reduction-block": int, "split-full": int, "row-registers": int,
               "column-reductions": int, "column-threads": int, "column-min-rows": int, "row-scalar-elements": int,
               "flat-vectors": int, "peel-rows": int, "scalar-chunk": int, "shifted-loads": int}
    block_size = 256
    elements_per_thread = 4
    reduction_vectors = 4  # 128-bit loads per thread and step of a block reduction
    max_reduction_block = 256  # threads of a block reduction: 32 up to this, by the row length
    vectorize = 1  # 128-bit accesses under a runtime check
    fuse_rows = 1  # row groups
    split_full = 1  # a reduction to one value over many blocks
    row_registers = 64  # bytes of a row group's row each thread holds in registers (0: none)
    column_reductions = 1  # reductions over outer dims: a thread per output and chunk of rows, two launches
    column_threads = 1 << 18  # ... about this many threads in the first launch (132 SMs x 2048)
    column_min_rows = 16  # ... each reducing at least this many rows
    row_scalar_elements = 8  # elements per thread and step of a block reduction's scalar path (odd rows)
    flat_vectors = 1  # elementwise launches at odd innermost sizes: vectors over the flattened space
    scalar_chunk = 2  # elements of the scalar path whose loads are in flight together (see _scalar_elements)
    peel_rows = 1  # row loops and block reductions at odd row lengths or unaligned row starts: aligned vectors between head and tail
    # ... a weight at another alignment than the odd rows read as shifted vectors (_shifted_load): 1 in
    # loops, 2 also in rows held in registers; 0 (scalar loops): the selects' registers count for the
    # whole kernel, and a layer norm's aligned rows lost more than its odd ones gained (H200, bf16
    # [8192, 4096] 38.7 -> 51.2 us at 2, [8192, 4097] 109.8 -> 101.6, [1000, 777] 5.2 -> 3.2)
    shifted_loads = 0

    def run(self, op: ir.Operation) -> None:
        bs = getattr(self, "block-size", self.block_size)
        self.ept = max(1, getattr(self, "elements-per-thread", self.elements_per_thread))
        self.vectorize = bool(getattr(self, "vectorize", type(self).vectorize))
        self.fuse_rows = bool(getattr(self, "fuse-rows", type(self).fuse_rows))
        self.red_vectors = max(1, getattr(self, "reduction-vectors", self.reduction_vectors))
        self.max_red_block = getattr(self, "max-reduction-block", self.max_reduction_block)
        self.split_full = bool(getattr(self, "split-full", type(self).split_full))
        self.row_regs = max(0, getattr(self, "row-registers", self.row_registers))
        self.columns = bool(getattr(self, "column-reductions", type(self).column_reductions))
        self.row_scalar = max(1, getattr(self, "row-scalar-elements", self.row_scalar_elements))
        self.flat = bool(getattr(self, "flat-vectors", type(self).flat_vectors))
        self.peel = bool(getattr(self, "peel-rows", type(self).peel_rows))
        self.shifted = getattr(self, "shifted-loads", type(self).shifted_loads)
        self.scalar_chunk = max(1, getattr(self, "scalar-chunk", type(self).scalar_chunk))
        self.column_chunking = (max(1, getattr(self, "column-threads", self.column_threads)),
                                max(1, getattr(self, "column-min-rows", self.column_min_rows)))
        if self.max_red_block not in (32, 64, 128, 256, 512, 1024):
            raise located_error(op, f"max-reduction-block must be a power of two in 32..1024, not {self.max_red_block}")
        for fn in list(op.regions[0].blocks[0].operations):
            if fn.operation.name != "func.func" or sym.GUARD_FN_ATTR in fn.operation.attributes:
                continue
            if len(fn.regions[0].blocks) == 0:
                continue
            blocks = list(fn.regions[0].blocks)
            for block in blocks:
                mark_host_buffers(block, blocks)
            for block in blocks:
                self._map_block(block, bs)

    def _map_block(self, block: ir.Block, bs: int) -> None:
        self._fill_inits: list = []  # (reduction to one value, its folded start value)
        self._arg_fill_inits = self._fold_arg_fills(block)  # (column arg-reduction, its start values)
        run: list[ir.Operation] = []
        device_values: list[ir.Value] = []  # scalars computed on the device (results of device ops)
        group: list[ir.Operation] = []  # loops over the same rows, not mapped yet (see _row_group)
        rows: list = []  # the group's row trip counts

        def from_device(o: ir.Operation) -> bool:
            return any(any(v == d for d in device_values) for v in o.operands)

        lead = False  # group[0] is an elementwise nest that joined the rows of the loops after it

        def flush_group() -> None:
            nonlocal group, rows, lead
            if group:
                columns = self.columns and any(m is not None and _column_reduction_ok(m)
                                               for m in map(_match_reduction, group))
                if columns:  # `x.mean(0)`: the coalesced column reduction, then its own elementwise launch
                    self.bump("row-groups-of-columns-split")
                # the longest prefix that may run row by row (a loop that joins the rows but reads
                # them elsewhere, a broadcast copy of softmax's result, runs after the group)
                k = len(group) if self.fuse_rows and not columns else 0
                while k >= 2 and not _row_group_ok(group[:k], rows):
                    k -= 1
                if lead and k < 3:  # the leading nest does not fit: it runs alone, the rest as a group
                    self._map_loops(group[:1], bs)
                    group, lead = group[1:], False
                    flush_group()
                    return
                if k >= 2 and self._row_group(group[:k], rows):
                    if lead:
                        self.bump("row-groups-led-by-elementwise")
                    if k < len(group):
                        self.bump("row-groups-cut")
                        self._map_loops(group[k:], bs)
                else:
                    self._map_loops(group, bs)
            group, rows, lead = [], [], False

        for child in list(block.operations):
            o = child.operation
            if o.name == "scf.parallel" or (o.name == "scf.for" and (_match_reduction(o) is not None
                                                                   or _match_argreduce(o) is not None)):
                m = _match_reduction(o)
                if m is not None and m.parallel is None and run and _scalar_fill_of(run[-1], m):
                    fill = run.pop()  # `acc[] = c` right before a reduction to one value: its start
                    self._fill_inits.append((o, fill.operands[0]))
                    fill.erase()
                    self.bump("fills-folded")
                self._serial(run)
                run = []
                if group and _joins_rows(o, rows):
                    group.append(o)
                    continue
                m = _match_reduction(o)
                carried = group.pop() if group and m is not None and _fill_value(
                    group[-1], m.store.operands[1]) is not None else None  # still folds into `o`
                # a lone elementwise nest over these rows (and more dims) right before the first
                # loop of a group: it runs in the group's launch, first (a residual sum that a layer
                # norm reduces: written once, its row then read again from L1/L2 or registers)
                new_rows = _row_trips(o)
                led = (self.fuse_rows and new_rows and len(group) == 1 and not rows and carried is None
                       and _fill_value(group[0], None) is None and _joins_rows(group[0], new_rows))
                leader = group.pop() if led else None
                flush_group()
                group, rows = ([leader] if led else []) + ([carried] if carried is not None else []) + [o], new_rows
                lead = bool(led)
            elif _is_nested_assert(o):  # a check of device values (a one-element gather's index): device work
                flush_group()
                run.append(o)
            elif o.name == "scf.if" and _branches_host_work(o):  # sym-gpu-attention's split by size
                flush_group()
                self._serial(run)
                run = []
                saved = self._fill_inits, self._arg_fill_inits
                for region in o.regions:
                    for b in region.blocks:
                        self._map_block(b, bs)
                self._fill_inits, self._arg_fill_inits = saved
            elif o.name in BARRIER_HOST_OPS:
                flush_group()
                self._serial(run)
                run = []
            elif _touches_host_buffer(o) or (_is_pure_host_name(o.name) and not from_device(o)):
                if run:  # independent of the open run: evaluate it on the host before the run
                    o.move_before(run[0])
                elif group:  # ... or before the loops of the open group
                    o.move_before(group[0])
            else:
                flush_group()
                run.append(o)
                device_values.extend(o.results)
        flush_group()
        self._serial(run)

    def _fold_arg_fills(self, block: ir.Block) -> list:
        """The fills of an arg-reduction's value and position buffers right before it (with only
        each other and pure scalar ops between; over its outputs' sizes) become its start values, when it takes the column
        path (which reads them once per output): [(the nest, (value or None, position or None))];
        the fills are erased."""
        out = []
        if not self.columns:
            return out
        ops = [c.operation for c in block.operations]
        for k, o in enumerate(ops):
            if o.name not in ("scf.parallel", "scf.for"):
                continue
            am = _match_argreduce(o)
            if am is None or not _column_reduction_ok(am):
                continue
            inits, fills = [None, None], []
            for prev in reversed(ops[:k]):
                covers = _fill_value(prev, None) is not None and _fill_covers(prev, am.par_trips)
                v = _fill_value(prev, am.storev.operands[1]) if covers else None
                j = _fill_value(prev, am.storei.operands[1]) if covers else None
                if v is not None and inits[0] is None:
                    inits[0] = v
                elif j is not None and inits[1] is None:
                    inits[1] = j
                elif not (_is_pure_host_name(prev.name) and not prev.regions):
                    break
                else:
                    continue
                fills.append(prev)
            if fills:
                for f in fills:
                    f.erase()
                self.bump("fills-folded", len(fills))
                out.append((o, tuple(inits)))
        return out

    def _map_loops(self, loops: list[ir.Operation], bs: int) -> None:
        """One launch per loop nest; a fill right before a reduction into the same buffer becomes its
        initial value instead of a launch of its own (an arg-reduction's: _fold_arg_fills); an
        elementwise nest right after a reduction over outer dims, over its outputs, runs in its
        second launch (_epilogue_ok: a bf16 sum's conversion of the f32 accumulator)."""
        held: list = []  # fills not mapped yet

        def flush_held() -> None:
            for f in held:
                self._parallel(f, bs)
            held.clear()

        def take_fill(buf, trips):  # the value of the last held fill of `buf` (the fill leaves), or None
            for f in reversed(held):
                if not (_root(f_mem := _fill_memref(f)) == _root(buf)):
                    continue  # the latest write of buf's memory decides: exactly buf, all of it
                v = _fill_value(f, buf) if f_mem == buf and _fill_covers(f, trips) else None
                if v is not None:
                    held.remove(f)
                    f.erase()
                    self.bump("fills-folded")
                return v
            return None

        skip: int | set = -1  # the index of an epilogue fused into the reduction before it (erased), or
        # the indexes of a sibling column reduction and its fill (mapped with the one before them)
        for k, o in enumerate(loops):
            if k == skip or (isinstance(skip, set) and k in skip):
                continue
            nxt = loops[k + 1] if k + 1 < len(loops) else None
            m = _match_reduction(o)
            if m is not None:
                init = take_fill(m.store.operands[1], m.par_trips if m.parallel is not None else None)
                flush_held()
                # first: a sibling's fill right after `m` would pass for m's epilogue
                sib = _column_sibling(loops, k, m) if self.columns and _column_reduction_ok(m) else None
                if sib is not None:  # a layer norm's weight and bias grads: one pair of launches
                    k2, m2, fill2, init2 = sib
                    if fill2 is not None:
                        fill2.erase()
                        self.bump("fills-folded")
                    # the second one's epilogue (a mean's division, a bf16 rounding) as for one alone,
                    # when it leaves the first one's buffers alone (other outputs are not done yet)
                    after = loops[k2 + 1] if k2 + 1 < len(loops) else None
                    epi = after if (after is not None and _epilogue_ok(after, m2)
                                    and _leaves_alone(after, m)) else None
                    self._column_reductions([o, loops[k2]], [m, m2], [init, init2], epilogue=epi)
                    skip = set(range(k + 1, k2 + 2 if epi is not None else k2 + 1))
                    continue
                epi = nxt if (nxt is not None and self.columns and m.parallel is not None
                              and _column_reduction_ok(m) and _epilogue_ok(nxt, m)) else None
                self._reduction(o, m, init, epilogue=epi)
                skip = k + 1 if epi is not None else -1
            elif _fill_value(o, None) is not None:
                held.append(o)
            else:
                am = _match_argreduce(o)
                flush_held()
                if am is not None and self.columns and _column_reduction_ok(am):
                    inits = next((v for r, v in self._arg_fill_inits if r == o), (None, None))
                    self._column_argreduction(o, am, inits)
                    continue
                if am is not None:
                    self._argreduction(o, am)
                else:
                    self._parallel(o, bs)
        flush_held()

    # -- one thread --------------------------------------------------------------------------
    def _serial(self, ops: list[ir.Operation]) -> None:
        """Scalar device work (loads of device results and what is computed from them) in one-thread
        launches. Values the host needs (a count an assert checks, `x[mask].numel()` in a division
        on the host) are read back instead: their loads and the arithmetic on them stay on the host
        (the host program reads device memory after the launches before it, a synchronization),
        and the device ops around them are split into launches in the same order."""
        if not ops:
            return

        def inside(x: ir.Operation) -> bool:
            return any(x == y for y in ops)

        def escapes(o: ir.Operation) -> bool:
            for r in o.results:
                for use in r.uses:
                    top = _top_in_block(use.owner, ops[0].block)
                    if top is None or not inside(top):
                        return True
            return False

        host: list[ir.Operation] = []
        work = [o for o in ops if escapes(o)]
        while work:  # the backward slice, within `ops`, of the values the host needs
            o = work.pop()
            if any(o == h for h in host):
                continue
            if not (o.name == "memref.load" or (_is_pure_host_name(o.name) and not o.regions)):
                raise located_error(o, f"'{o.name}' computes a value the host needs; "
                                       "the GPU path cannot read it back (only loads and scalar arithmetic can)")
            host.append(o)
            for v in o.operands:
                d = v.owner
                d = None if isinstance(d, ir.Block) else (d.operation if hasattr(d, "operation") else d)
                if d is not None and inside(d):
                    work.append(d)
        runs: list[list[ir.Operation]] = [[]]
        for o in ops:
            if any(o == h for h in host):
                runs.append([])
                if o.name == "memref.load":
                    self.bump("host-readbacks")
            else:
                runs[-1].append(o)
        runs = [r for r in runs if r]
        for k, r in enumerate(runs):  # an SSA value cannot flow from one launch into another
            for o in r:
                for res in o.results:
                    for use in res.uses:
                        top = _top_in_block(use.owner, ops[0].block)
                        if top is not None and not any(top == x for x in r) and any(
                                top == x for other in runs if other is not r for x in other):
                            raise located_error(o, f"'{o.name}' feeds device work on both sides of a value "
                                                   "the host reads back; the GPU path cannot split it")
        for r in runs:
            self._serial_launch(r)

    def _serial_launch(self, ops: list[ir.Operation]) -> None:
        with ir.InsertionPoint(ops[0]), ops[0].location:
            one = arith.ConstantOp(ir.IndexType.get(), 1).result
            launch = gpu.LaunchOp((one, one, one), (one, one, one))
            body = launch.regions[0].blocks[0]
        with ir.InsertionPoint(body), ops[0].location:
            term = gpu.TerminatorOp()
        for o in ops:
            o.move_before(term.operation)
        self.bump("serial-launches")

    # -- reduction: one block per output element ---------------------------------------------
    def _reduction(self, root: ir.Operation, m: "_Reduction", init: ir.Value | None = None,
                   epilogue: ir.Operation | None = None) -> None:
        for k, (op, value) in enumerate(self._fill_inits):
            if op == root:  # entries leave when used: the roots of those before are erased
                init = value
                del self._fill_inits[k]
                break
        if m.parallel is None and self.split_full and not _one_chunk(m):
            self._split_reduction(root, m, init)
            return
        if self.columns and _column_reduction_ok(m):
            self._column_reduction(root, m, init, epilogue)
            return
        assert epilogue is None, "an epilogue is only fused into a column reduction"
        par_ivs, tx, bdim, term = self._block_per_output(root, m.par_trips, m)
        self._emit_reduction(m, par_ivs, tx, bdim, init, term)
        root.erase()
        self.bump("reduction-launches")

    def _column_reduction(self, root: ir.Operation, m: "_Reduction", init: ir.Value | None,
                          epilogue: ir.Operation | None = None) -> None:
        """A reduction over outer dims (`x.sum(0)`: the loads' innermost index is the output's) in two
        launches, coalesced: thread t of the first takes output element `c = t % P` (P outputs,
        consecutive threads on consecutive columns) and the t / P-th chunk of the reduced elements
        (R chunks of L rows: R * P about `column-threads` threads, L at least `column-min-rows`), writing
        its partial to a [R, P] buffer (`elements-per-thread` rows in flight). In the second, L lanes
        per output (L up to 32, by R: _lanes_launch) each combine every L-th partial, then each
        other's (warp shuffles); lane 0 combines the total with the accumulator, then runs
        `epilogue`'s iteration for its output (an elementwise nest over the outputs). A block per output
        would read a column per block: one element per 32-byte sector and row, 0.13-0.26 of
        inductor's speed on the H100; a thread per output in the second launch took 12 us of 17 at
        [4096, 1024] (1024 threads, 256 partials each)."""
        self._column_reductions([root], [m], [init], epilogue)

    def _column_reductions(self, roots: list, ms: list, inits: list, epilogue: ir.Operation | None = None) -> None:
        """_column_reduction of sibling nests over the same outputs and reduced elements
        (_column_sibling: a layer norm's weight and bias grads, both summing over the rows of one
        gradient) in one pair of launches: each thread folds every nest's element of its column and
        chunk, with a [R, P] partials buffer per nest, and the second launch combines them all."""
        from torch_mlir.dialects import memref

        types = [m.combine.results[0].type for m in ms]

        def combs(a, b):
            return [ir.Operation.create(m.combine.name, results=[t], operands=[x, y],
                                        attributes={k: m.combine.attributes[k] for k in m.combine.attributes}).results[0]
                    for m, t, x, y in zip(ms, types, a, b)]

        def idents():
            return [arith.ConstantOp(t, m.identity).result for m, t in zip(ms, types)]

        root, m0 = roots[0], ms[0]
        with ir.InsertionPoint(root), root.location:
            npar, nred, chunks, rows, c1 = _column_chunks(m0.par_trips, m0.red_trips, self.column_chunking)
            partials = [memref.AllocOp(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], t),
                                       [arith.MulIOp(chunks, npar).result], []).result for t in types]
            t, y = _thread_launch(arith.MulIOp(chunks, npar).result)
        with ir.InsertionPoint(y), root.location:
            col = arith.RemUIOp(t, npar).result
            lo = arith.MulIOp(arith.DivUIOp(t, npar).result, rows).result
            hi = arith.MinUIOp(arith.AddIOp(lo, rows).result, nred).result
            par_ivs = _delinearize(col, m0.par_trips)
            mappings = [dict(zip(list(m.parallel.regions[0].blocks[0].arguments), par_ivs)) for m in ms]

            def element(r):
                red_ivs = _delinearize(r, m0.red_trips)
                values = []
                for m, mapping in zip(ms, mappings):
                    mapping.update(zip([f.regions[0].blocks[0].arguments[0] for f in m.fors], red_ivs))
                    for o in m.value_ops:
                        _clone_mapped(o, mapping)
                    values.append(mapping.get(m.value, m.value))
                return values

            loop = _unrolled_fold(lo, hi, self.ept, idents(), element, combs)
            for k, p in enumerate(partials):
                memref.StoreOp(loop.results[k], p, [t])
        out_ivs, totals, y2 = _combine_partials(root, npar, chunks, partials, m0.par_trips, self.ept, idents, combs)
        for m, total, init in zip(ms, totals, inits):
            for arg, iv in zip(list(m.parallel.regions[0].blocks[0].arguments), out_ivs):
                arg.replace_all_uses_with(iv)
            _finish_reduction(m, y2, total, init)
        if epilogue is not None:
            mapping = dict(zip(list(epilogue.regions[0].blocks[0].arguments), out_ivs))
            with ir.InsertionPoint(y2):
                for o in list(epilogue.regions[0].blocks[0].operations):
                    if o.operation.name != "scf.reduce":
                        _clone_mapped(o.operation, mapping)
            epilogue.erase()
            self.bump("column-epilogues")
        for r in roots:
            r.erase()
            self.bump("column-reductions")
        if len(ms) > 1:
            self.bump("column-reductions-fused")

    def _column_argreduction(self, root: ir.Operation, am: "_ArgReduction", inits: tuple = (None, None)) -> None:
        """argmax / argmin over outer dims (`x.argmax(0)`) in two coalesced launches, as
        _column_reduction, with (value, position) pairs: thread t of the first takes output `t % P`
        and the t / P-th chunk of rows and runs the loop's rule over it in order from its first
        element (`elements-per-thread` rows in flight), writing the chunk's pair (value, J(j): the
        loop's index expression) to two buffers of partials; L lanes per
        output of the second combine the chunks' pairs, then each other's (shuffles), and lane 0
        combines the total with the accumulators by the loop's rule. Pairs combine by eager's rule,
        which does not depend on their order: a NaN wins, the first NaN of several; else the larger
        value (smaller for argmin), the earlier position of equals. The accumulator counts as
        earlier than every element: the total replaces it when larger or a NaN while it is not one.
        `inits`: the values of folded fills of the accumulators (instead of loading them). bf16 /
        f16 are compared in f32."""
        from torch_mlir.dialects import memref

        T = am.newv.results[0].type
        F = ir.F32Type.get() if str(T) in ("bf16", "f16") else T
        J = am.jvalue.type
        is_max = am.newv.name == "arith.maximumf"
        pred = arith.CmpFPredicate.OGT if is_max else arith.CmpFPredicate.OLT

        def widen(v):
            return v if F == T else arith.ExtFOp(F, v).result

        def takes(v, new):  # the loop's rule, with eager's NaN: `new` replaces the running `v`
            v_ok = arith.CmpFOp(arith.CmpFPredicate.ORD, v, v).result
            nan = arith.CmpFOp(arith.CmpFPredicate.UNO, new, new).result
            return arith.AndIOp(v_ok, arith.OrIOp(nan, arith.CmpFOp(pred, new, v).result).result).result

        def pick(a, b):  # eager's rule on (value, position) pairs, whatever their order
            (va, ia), (vb, ib) = a, b
            a_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, va, va).result
            b_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, vb, vb).result
            earlier = arith.CmpIOp(arith.CmpIPredicate.slt, ib, ia).result
            tie = arith.AndIOp(arith.CmpFOp(arith.CmpFPredicate.OEQ, vb, va).result, earlier).result
            better = arith.OrIOp(b_nan, arith.OrIOp(arith.CmpFOp(pred, vb, va).result, tie).result).result
            take = arith.SelectOp(a_nan, arith.AndIOp(b_nan, earlier).result, better).result
            return [arith.SelectOp(take, vb, va).result, arith.SelectOp(take, ib, ia).result]

        def idents():  # a pair every element beats: the worst value at the last position
            worst = arith.ConstantOp(F, float("-inf") if is_max else float("inf")).result
            return [worst, arith.ConstantOp(J, (1 << (ir.IntegerType(J).width - 1)) - 1).result]

        with ir.InsertionPoint(root), root.location:
            npar, nred, chunks, rows, c1 = _column_chunks(am.par_trips, am.red_trips, self.column_chunking)
            total = arith.MulIOp(chunks, npar).result
            dyn = ir.ShapedType.get_dynamic_size()
            part_v = memref.AllocOp(ir.MemRefType.get([dyn], F), [total], []).result
            part_j = memref.AllocOp(ir.MemRefType.get([dyn], J), [total], []).result
            t, y = _thread_launch(total)
        par_args = list(am.parallel.regions[0].blocks[0].arguments)

        with ir.InsertionPoint(y), root.location:
            col = arith.RemUIOp(t, npar).result
            lo = arith.MulIOp(arith.DivUIOp(t, npar).result, rows).result
            hi = arith.MinUIOp(arith.AddIOp(lo, rows).result, nred).result
            mapping = dict(zip(par_args, _delinearize(col, am.par_trips)))

            def element(r):  # (x, J(j)) at reduced position r
                mapping.update(zip(am.ivs, _delinearize(r, am.red_trips)))
                for o in am.pass_ops:
                    _clone_mapped(o, mapping)
                return [widen(mapping.get(am.value, am.value)), mapping.get(am.jvalue, am.jvalue)]

            def in_order(a, b):  # the loop's rule, `b` after `a` (the masked pair is never taken)
                take = takes(a[0], b[0])
                return [arith.SelectOp(take, b[0], a[0]).result, arith.SelectOp(take, b[1], a[1]).result]

            first = element(lo)  # a chunk is never empty
            loop = _unrolled_fold(arith.AddIOp(lo, c1).result, hi, self.ept, idents(), element, in_order,
                                  init=first, in_order=True)
            memref.StoreOp(loop.results[0], part_v, [t])
            memref.StoreOp(loop.results[1], part_j, [t])
        out_ivs, (best_v, best_j), y2 = _combine_partials(root, npar, chunks, [part_v, part_j], am.par_trips,
                                                          self.ept, idents, pick)
        for arg, iv in zip(par_args, out_ivs):
            arg.replace_all_uses_with(iv)
        for o in am.index_ops + [am.loadv, am.loadi]:
            o.move_before(y2.operation)
        for load, init in ((am.loadv, inits[0]), (am.loadi, inits[1])):
            if init is not None:
                load.results[0].replace_all_uses_with(init)
                load.erase()
        with ir.InsertionPoint(y2), root.location:
            acc_v = widen(inits[0] if inits[0] is not None else am.loadv.results[0])
            acc_j = inits[1] if inits[1] is not None else am.loadi.results[0]
            take = takes(acc_v, best_v)
            new_v = arith.SelectOp(take, best_v, acc_v).result
            new_v = new_v if F == T else arith.TruncFOp(T, new_v).result  # exact
            new_j = arith.SelectOp(take, best_j, acc_j).result
        am.storev.operands[0] = new_v
        am.storei.operands[0] = new_j
        am.storev.move_before(y2.operation)
        am.storei.move_before(y2.operation)
        root.erase()
        self.bump("column-arg-reductions")

    def _block_per_output(self, at: ir.Operation, trips: list, nest) -> tuple:
        """A launch before `at` with a block per element of the iteration space `trips` (its threads
        sized by `nest`'s reduction length): (the block's indices, tx, block size, its terminator)."""
        idx = ir.IndexType.get()
        with ir.InsertionPoint(at), at.location:
            c1 = arith.ConstantOp(idx, 1).result
            n = c1
            for t in trips:
                n = t if n is c1 else arith.MulIOp(n, t).result
            launch = gpu.LaunchOp((n, c1, c1), (_reduction_block_size(nest, self.max_red_block), c1, c1))
            body = launch.regions[0].blocks[0]
        bx, tx, bdim = body.arguments[0], body.arguments[3], body.arguments[9]
        with ir.InsertionPoint(body), at.location:
            ivs = _delinearize(bx, trips)
            term = gpu.TerminatorOp()
        return ivs, tx, bdim, term

    def _argreduction(self, root: ir.Operation, am: "_ArgReduction") -> None:
        """argmax / argmin along the innermost or all dims: a block per output element instead of a
        thread (positions as i32; a reduction of 2^31 - 1 elements or more runs the loop as written,
        in thread 0; bf16 / f16 compared in f32). torch-mlir's loop is
        `v = maximumf(x, v); i = x > v ? j : i`; the block finds, in three passes over the row, each
        a block reduction, the first NaN position f, the extreme M of x[0:f] and the first j < f with
        x[j] == M; thread 0 combines with the accumulators: a NaN wins with its first position, as in
        eager PyTorch (the loop itself would keep the position of the extreme before the NaN), else
        a larger extreme takes its position, as the loop does."""
        idx = ir.IndexType.get()
        i32 = ir.IntegerType.get_signless(32)
        T = am.newv.results[0].type  # the values' type; bf16 / f16 are compared in f32 (exactly)
        F = ir.F32Type.get() if str(T) in ("bf16", "f16") else T
        is_max = am.newv.name == "arith.maximumf"
        par_ivs, tx, bdim, term = self._block_per_output(root, am.par_trips, am)
        if am.parallel is not None:
            for arg, iv in zip(am.parallel.regions[0].blocks[0].arguments, par_ivs):
                arg.replace_all_uses_with(iv)

        def rall(v, kind):
            return gpu.AllReduceOp(v, op=ir.Attribute.parse(f"#gpu<all_reduce_op {kind}>"), uniform=True).result

        def widen(v):
            return v if F == T else arith.ExtFOp(F, v).result

        # positions are i32: a reduction of 2^31 - 1 elements or more runs the loop as written, in
        # thread 0 (a runtime split, the loop cloned before its ops move)
        with ir.InsertionPoint(term), root.location:
            n = am.red_trips[0]
            for t in am.red_trips[1:]:
                n = arith.MulIOp(n, t).result
            fits = arith.CmpIOp(arith.CmpIPredicate.ult, n, arith.ConstantOp(idx, 2 ** 31 - 1).result).result
            split = scf.IfOp(fits, has_else=True)
        with ir.InsertionPoint(split.else_block), root.location:
            zero = arith.ConstantOp(idx, 0).result
            only = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, tx, zero).result)
            scf.YieldOp([])
        with ir.InsertionPoint(only.then_block), root.location:
            y0 = scf.YieldOp([])
        am.fors[0].clone(ir.InsertionPoint(y0))
        with ir.InsertionPoint(split.then_block), root.location:
            term = scf.YieldOp([])

        with ir.InsertionPoint(term), root.location:
            big = arith.ConstantOp(i32, 2 ** 31 - 1).result
            ident = arith.ConstantOp(F, float("-inf") if is_max else float("inf")).result

            def strided(end, init, step_fn):
                loop = scf.ForOp(tx, end, bdim, [init])
                with ir.InsertionPoint(loop.body):
                    j = loop.induction_variable
                    mapping = dict(zip(am.ivs, _delinearize(j, am.red_trips)))
                    for o in am.pass_ops:
                        _clone_mapped(o, mapping)
                    x = widen(mapping.get(am.value, am.value))
                    scf.YieldOp([step_fn(loop.inner_iter_args[0], x, j)])
                return loop.results[0]

            def j32(j):
                return arith.IndexCastOp(i32, j).result

            first_nan = rall(strided(n, big, lambda acc, x, j: arith.MinSIOp(acc, arith.SelectOp(
                arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result, j32(j), big).result).result), "minsi")
            f = arith.MinUIOp(arith.IndexCastOp(idx, first_nan).result, n).result
            comb = arith.MaximumFOp if is_max else arith.MinimumFOp
            ext = rall(strided(f, ident, lambda acc, x, j: comb(acc, x).result), "maximumf" if is_max else "minimumf")
            at = rall(strided(f, big, lambda acc, x, j: arith.MinSIOp(acc, arith.SelectOp(
                arith.CmpFOp(arith.CmpFPredicate.OEQ, x, ext).result, j32(j), big).result).result), "minsi")
            zero = arith.ConstantOp(idx, 0).result
            ifop = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, tx, zero).result)
        with ir.InsertionPoint(ifop.then_block), root.location:
            y = scf.YieldOp([])
        for o in am.index_ops + [am.loadv, am.loadi]:
            o.move_before(y.operation)
        with ir.InsertionPoint(y), root.location:
            v0, i0 = widen(am.loadv.results[0]), am.loadi.results[0]
            # the loop's index expression of j, at j = the found position
            def j_at(pos):  # the loop's index expression at linear position `pos`
                mapping = dict(zip(am.ivs, _delinearize(pos, am.red_trips)))
                for o in am.jexpr_ops:
                    _clone_mapped(o, mapping)
                return mapping.get(am.jvalue, am.jvalue)

            pred = arith.CmpFPredicate.OGT if is_max else arith.CmpFPredicate.OLT
            found = arith.AndIOp(arith.CmpFOp(pred, ext, v0).result,
                                 arith.CmpIOp(arith.CmpIPredicate.ne, at, big).result).result
            new_i = arith.SelectOp(found, j_at(arith.IndexCastOp(idx, at).result), i0).result
            has_nan = arith.CmpIOp(arith.CmpIPredicate.ult, f, n).result
            # a NaN is the extreme, as in eager PyTorch (torch.argmax([1, nan, 3]) is 1): its first
            # position, unless the accumulator already held a NaN
            v0_ok = arith.CmpFOp(arith.CmpFPredicate.ORD, v0, v0).result
            safe_f = arith.SelectOp(has_nan, f, arith.ConstantOp(idx, 0).result).result
            new_i = arith.SelectOp(arith.AndIOp(has_nan, v0_ok).result, j_at(safe_f), new_i).result
            nan = arith.ConstantOp(F, float("nan")).result
            new_v = arith.SelectOp(has_nan, nan, comb(v0, ext).result).result
            if F != T:
                new_v = arith.TruncFOp(T, new_v).result  # exact: a value of the row or v0
        am.storev.operands[0] = new_v
        am.storei.operands[0] = new_i
        am.storev.move_before(y.operation)
        am.storei.move_before(y.operation)
        root.erase()
        self.bump("arg-reduction-launches")

    def _split_reduction(self, root: ir.Operation, m: "_Reduction", init: ir.Value | None) -> None:
        """A reduction to one value (`x.sum()`) in two launches instead of one block: `g` blocks
        (one per SPLIT_CHUNK elements, at most SPLIT_BLOCKS) each reduce a chunk of the linearized
        iteration space (a multiple of 16 elements, so the 128-bit path stays aligned) into a buffer
        of partials; then one block reduces the partials and combines them with the accumulator."""
        from torch_mlir.dialects import memref

        idx = ir.IndexType.get()
        T = m.combine.results[0].type
        with ir.InsertionPoint(root), root.location:
            c1 = arith.ConstantOp(idx, 1).result
            c16 = arith.ConstantOp(idx, 16).result
            nred = m.red_trips[0]
            for t in m.red_trips[1:]:
                nred = arith.MulIOp(nred, t).result
            g = arith.MinUIOp(arith.CeilDivUIOp(nred, arith.ConstantOp(idx, SPLIT_CHUNK).result).result,
                              arith.ConstantOp(idx, SPLIT_BLOCKS).result).result
            chunk = arith.CeilDivUIOp(nred, arith.MaxUIOp(g, c1).result).result
            chunk = arith.MulIOp(arith.CeilDivUIOp(chunk, c16).result, c16).result
            partials = memref.AllocOp(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], T), [g], []).result
            first = gpu.LaunchOp((g, c1, c1), (_reduction_block_size(m, self.max_red_block), c1, c1))
            body = first.regions[0].blocks[0]
        bx, tx, bdim = body.arguments[0], body.arguments[3], body.arguments[9]
        with ir.InsertionPoint(body), root.location:
            lo = arith.MulIOp(bx, chunk).result
            hi = arith.MinUIOp(arith.AddIOp(lo, chunk).result, nred).result
            term = gpu.TerminatorOp()
        self._emit_reduction(m, [], tx, bdim, None, term, span=(lo, hi), partial_to=(partials, bx))
        # the partials: one block, then the accumulator as a one-block reduction does
        with ir.InsertionPoint(root), root.location:
            second = gpu.LaunchOp((c1, c1, c1), (arith.ConstantOp(idx, 256).result, c1, c1))
            body = second.regions[0].blocks[0]
        tx, bdim = body.arguments[3], body.arguments[9]
        with ir.InsertionPoint(body), root.location:
            ident = arith.ConstantOp(T, m.identity).result
            attrs = {k: m.combine.attributes[k] for k in m.combine.attributes}
            loop = scf.ForOp(tx, g, bdim, [ident])
            with ir.InsertionPoint(loop.body):
                v = memref.LoadOp(partials, [loop.induction_variable]).result
                acc = ir.Operation.create(m.combine.name, results=[T], operands=[loop.inner_iter_args[0], v],
                                          attributes=attrs).results[0]
                scf.YieldOp([acc])
            total = gpu.AllReduceOp(loop.results[0], op=ir.Attribute.parse(f"#gpu<all_reduce_op {m.kind}>"),
                                    uniform=True).result
            zero = arith.ConstantOp(idx, 0).result
            ifop = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, tx, zero).result)
            gpu.TerminatorOp()
        with ir.InsertionPoint(ifop.then_block), root.location:
            y = scf.YieldOp([])
        _finish_reduction(m, y, total, init)
        root.erase()
        self.bump("split-reductions")

    def _emit_reduction(self, m: "_Reduction", par_ivs: list, tx: ir.Value, bdim: ir.Value,
                        init: ir.Value | None, before: ir.Operation, keep: bool = False,
                        span: tuple | None = None, partial_to: tuple | None = None,
                        regs: "_RowRegisters | None" = None) -> ir.Value | None:
        """The block-wide reduction of one output element (at `par_ivs`) before `before`: each thread
        combines every bdim-th element (`row-scalar-elements` loads in flight per step; with 128-bit loads when the
        innermost reduced length and the buffers allow, a runtime split), then gpu.all_reduce, then
        thread 0 combines with the accumulator and stores. The nest's ops move into the launch.
        With `keep` (and the folded fill's value `init`), nothing is stored: every thread combines
        the block's total with `init`, and that value is returned. With `span` (lo, hi) only the
        linearized elements lo..hi-1 are reduced; with `partial_to` (buffer, index) thread 0 stores
        the block's total there and the nest's own ops are left alone. With `regs` (a row group's row
        held in registers) each thread reduces its vectors of the row, no loop."""
        root = m.parallel if m.parallel is not None else m.fors[0]
        idx = ir.IndexType.get()
        T = m.combine.results[0].type
        if m.parallel is not None:
            for arg, iv in zip(m.parallel.regions[0].blocks[0].arguments, par_ivs):
                arg.replace_all_uses_with(iv)
        for_ivs = [f.regions[0].blocks[0].arguments[0] for f in m.fors]
        red_blocks = [f.regions[0].blocks[0] for f in m.fors]
        plan = _vector_plan(for_ivs, m.value_ops, red_blocks, need_store=False) if self.vectorize else None
        with ir.InsertionPoint(before), root.location:
            nred = m.red_trips[0]
            for t in m.red_trips[1:]:
                nred = arith.MulIOp(nred, t).result
            ident = arith.ConstantOp(T, m.identity).result
            lo, end = span if span is not None else (None, nred)  # the elements lo..end-1
        attrs = {k: m.combine.attributes[k] for k in m.combine.attributes}

        def comb(a, b):
            return ir.Operation.create(m.combine.name, results=[T], operands=[a, b], attributes=attrs).results[0]

        def tree(vals):  # fewer dependent steps than a chain
            while len(vals) > 1:
                vals = [comb(vals[i], vals[i + 1]) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
            return vals[0]

        def scalar_partial() -> ir.Value:
            U = self.row_scalar  # elements per thread and iteration: their loads are in flight together
            stride = arith.MulIOp(bdim, arith.ConstantOp(idx, U).result).result
            rfor = scf.ForOp(tx if lo is None else arith.AddIOp(lo, tx).result, end, stride, [ident])
            with ir.InsertionPoint(rfor.body):
                iv = rfor.induction_variable
                vals = []
                for u in range(U):
                    lin = iv if u == 0 else arith.AddIOp(iv, arith.MulIOp(bdim, arith.ConstantOp(idx, u).result).result).result
                    ok = arith.CmpIOp(arith.CmpIPredicate.ult, lin, end).result if u else None
                    safe = arith.SelectOp(ok, lin, iv).result if u else lin
                    mapping = dict(zip(for_ivs, _delinearize(safe, m.red_trips)))
                    for o in m.value_ops:
                        _clone_mapped(o, mapping)
                    v = mapping.get(m.value, m.value)
                    vals.append(arith.SelectOp(ok, v, ident).result if u else v)
                scf.YieldOp([comb(rfor.inner_iter_args[0], tree(vals))])
            return rfor.results[0]

        def vector_partial(base: ir.Value | None = None, stop: ir.Value | None = None,
                           shifts: list | None = None) -> ir.Value:
            """Vectors from `base` (a multiple of 16 elements or the peeled path's first aligned one;
            None: 0) up to `stop` (None: the end); `shifts`: the peeled path's (_peel_split)."""
            U = self.red_vectors  # vectors per thread and iteration: their loads are in flight together
            W = arith.ConstantOp(idx, plan.width).result
            start = arith.MulIOp(tx, W).result
            if base is not None:
                start = arith.AddIOp(base, start).result
            stop = end if stop is None else stop
            row_step = arith.MulIOp(bdim, W).result
            rfor = scf.ForOp(start, stop, arith.MulIOp(row_step, arith.ConstantOp(idx, U).result).result, [ident])
            with ir.InsertionPoint(rfor.body):
                iv = rfor.induction_variable
                vals = []
                for u in range(U):
                    pos = iv if u == 0 else arith.AddIOp(iv, arith.MulIOp(row_step, arith.ConstantOp(idx, u).result).result).result
                    ok = arith.CmpIOp(arith.CmpIPredicate.ult, pos, stop).result if u else None
                    safe = arith.SelectOp(ok, pos, iv).result if u else pos
                    lanes = _emit_vector_body(plan, for_ivs, m.value_ops, _delinearize(safe, m.red_trips),
                                              shifts=shifts)
                    v = tree([lane.get(m.value, m.value) for lane in lanes])
                    vals.append(arith.SelectOp(ok, v, ident).result if u else v)
                scf.YieldOp([comb(rfor.inner_iter_args[0], tree(vals))])
            return rfor.results[0]

        def leftovers(acc: ir.Value, count: ir.Value, p0: ir.Value, vend: ir.Value) -> ir.Value:
            """`acc` combined with an odd row's head and tail elements (`count`), one per thread."""
            rest = scf.ForOp(tx, count, bdim, [acc])
            with ir.InsertionPoint(rest.body):
                mapping = {for_ivs[0]: _leftover_index(rest.induction_variable, p0, vend)}
                for o in m.value_ops:
                    _clone_mapped(o, mapping)
                scf.YieldOp([comb(rest.inner_iter_args[0], mapping.get(m.value, m.value))])
            return rest.results[0]

        def peeled_partial(p0: ir.Value, vend: ir.Value, shifts: list) -> ir.Value:
            """Odd rows: whole aligned vectors over p0 .. vend - 1, then the head and tail elements."""
            vectors = vector_partial(p0, vend, shifts)  # one reduced dim: _delinearize is the identity
            return leftovers(vectors, arith.AddIOp(p0, arith.SubIOp(end, vend).result).result, p0, vend)

        def register_partial() -> ir.Value:
            vals = []
            for ok, safe in regs.slots:
                lanes = _emit_vector_body(plan, for_ivs, m.value_ops, [safe], regs)
                vals.append(arith.SelectOp(ok, tree([lane.get(m.value, m.value) for lane in lanes]), ident).result)
            total = tree(vals)
            if regs.leftover is not None:  # odd rows: the head and tail elements, one per thread
                total = leftovers(total, *regs.leftover)
            return total

        with ir.InsertionPoint(before), root.location:
            if regs is not None:
                partial = register_partial()
            elif plan is None:
                partial = scalar_partial()
            else:
                split = scf.IfOp(_vector_ok(plan, m.red_trips[-1]), [T], has_else=True)
                with ir.InsertionPoint(split.then_block):
                    scf.YieldOp([vector_partial(lo)])
                peel = (_peel_accesses(plan, for_ivs[0], red_blocks, {})
                        if self.peel and lo is None and len(for_ivs) == 1 else None)
                with ir.InsertionPoint(split.else_block):
                    if peel:
                        ok, p0, vend, shifts = _peel_split(plan, peel, end, self.shifted >= 1)
                        odd = scf.IfOp(ok, [T], has_else=True)
                        with ir.InsertionPoint(odd.then_block):
                            scf.YieldOp([peeled_partial(p0, vend, shifts)])
                        if shifts:
                            self.bump("shifted-loads", len(shifts))
                        with ir.InsertionPoint(odd.else_block):
                            scf.YieldOp([scalar_partial()])
                        scf.YieldOp([odd.results[0]])
                        self.bump("peeled-reductions")
                    else:
                        scf.YieldOp([scalar_partial()])
                partial = split.results[0]
                self.bump("vectorized-reductions")
        with ir.InsertionPoint(before), root.location:
            total = gpu.AllReduceOp(partial, op=ir.Attribute.parse(f"#gpu<all_reduce_op {m.kind}>"),
                                    uniform=True).result
        if partial_to is not None:
            from torch_mlir.dialects import memref

            with ir.InsertionPoint(before), root.location:
                zero = arith.ConstantOp(idx, 0).result
                ifop = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, tx, zero).result)
            with ir.InsertionPoint(ifop.then_block), root.location:
                memref.StoreOp(total, partial_to[0], [partial_to[1]])
                scf.YieldOp([])
            return None
        if keep:  # the total is uniform: every thread has the result, no memory round trip
            m.store.erase()
            m.combine.move_before(before)
            for i, v in enumerate(m.combine.operands):
                if v == m.value:
                    m.combine.operands[i] = total
            m.acc_load.results[0].replace_all_uses_with(init)
            m.acc_load.erase()
            return m.combine.results[0]
        with ir.InsertionPoint(before), root.location:
            zero = arith.ConstantOp(idx, 0).result
            first = arith.CmpIOp(arith.CmpIPredicate.eq, tx, zero).result
            ifop = scf.IfOp(first)
        with ir.InsertionPoint(ifop.then_block), root.location:
            y = scf.YieldOp([])
        _finish_reduction(m, y, total, init)
        return None

    # -- loops over the same rows: one block per row ------------------------------------------
    def _row_group(self, loops: list[ir.Operation], rows: list) -> bool:
        """One launch for consecutive loops over the same rows (softmax: max, sum of exp, normalize;
        layer norm: mean, variance, normalize): block `b` runs every loop for row `b` in order, with a
        barrier between loops, so the later loops re-read the row from L1/L2 instead of DRAM.
        Reductions reduce within the block; parallel loops spread the row's elements over the
        threads. Loops may only exchange data through buffers accessed at their own row.

        Rows that fit in registers (a runtime split: at most `row-registers` bytes per thread,
        every loop 128-bit accessible) are read once: each thread loads its vectors of the row at
        the start and every loop works on them, so what loops recompute from the same elements
        (softmax's exp(x - max), layer norm's x - mean) is computed once (CSE)."""
        reds = [_match_reduction(o) for o in loops]
        row_ivs, tx, bdim, term = self._block_per_output(loops[0], rows, next(m for m in reds if m is not None))
        folds = _fills_to_fold(loops, reds)  # reduction index -> index of the fill that becomes its initial value
        keeps = {}  # reduction index -> its result stays in registers
        for i, m in enumerate(reds):
            if m is not None:
                fill = loops[folds[i]] if i in folds else None
                keeps[i] = (fill is not None and _fill_value(fill, m.store.operands[1]) is not None
                            and _private_result(m, loops[i:], ignore=[fill]))
        kept = [_root(reds[i].store.operands[1]) for i, k in keeps.items() if k]
        regs = self._row_registers(loops, reds, folds, len(rows))
        if regs is None:
            self._emit_row_group(loops, folds, keeps, row_ivs, tx, bdim, term, None)
        else:
            width, nslots, ninner, plans = regs
            accesses = None
            if self.peel and _odd_length(ninner, width):
                # odd rows: the row held in registers from its first aligned element (see _peel_split),
                # the head and tail elements one per thread; aligned rows take it with p = 0
                accesses = []
                for plan, (inner_v, blocks, rows_of) in zip(plans, self._reg_peel_info):
                    acc = _peel_accesses(plan, inner_v, blocks, dict(zip(rows_of, row_ivs)))
                    if acc is None:
                        accesses = None
                        break
                    accesses += acc
            peel = None
            with ir.InsertionPoint(term), loops[0].location:
                if accesses:
                    ok, p0, vend, shifts = _peel_split(_VectorPlan(width, [], []), accesses, ninner, self.shifted >= 2)
                    cap = arith.MulIOp(bdim, arith.ConstantOp(ir.IndexType.get(), width * nslots).result).result
                    fits = arith.AndIOp(ok, arith.CmpIOp(arith.CmpIPredicate.ule, ninner, cap).result).result
                    fits = arith.AndIOp(fits, arith.CmpIOp(arith.CmpIPredicate.ugt, vend, p0).result).result
                    peel = (p0, vend, shifts)
                    if shifts:
                        self.bump("shifted-loads", len(shifts))
                else:
                    fits = self._row_fits(plans, ninner, bdim, width * nslots)
                split = scf.IfOp(fits, has_else=True)
                with ir.InsertionPoint(split.then_block):
                    in_regs = scf.YieldOp([])
                with ir.InsertionPoint(split.else_block):
                    in_memory = scf.YieldOp([])
            clones = [o.clone(ir.InsertionPoint(loops[0])) for o in loops]
            with ir.InsertionPoint(in_regs), loops[0].location:
                rr = _RowRegisters(width, nslots, ninner, tx, bdim, loops, peel)
            if peel is not None:
                self.bump("peeled-rows-in-registers")
            self._emit_row_group(clones, folds, keeps, row_ivs, tx, bdim, in_regs, rr)
            self._emit_row_group(loops, folds, keeps, row_ivs, tx, bdim, in_memory, None)
            self.bump("rows-in-registers")
        for buf in kept:
            _drop_buffer(buf)
        self.bump("row-group-launches")
        self.bump("loops-in-row-groups", len(loops))
        return True

    def _emit_row_group(self, loops: list[ir.Operation], folds: dict, keeps: dict, row_ivs: list, tx, bdim,
                        before: ir.Operation, regs: "_RowRegisters | None") -> None:
        """The loops of a row group, in order, before `before` (inside the launch); they are erased."""
        loc = loops[0].location
        for i, o in enumerate(loops):
            if i in folds.values():
                continue  # folded into a later reduction
            keep = keeps.get(i, False)
            if i in keeps:
                m = _match_reduction(o)  # again: loads of results kept in registers are gone from it
                fill = loops[folds[i]] if i in folds else None
                init = _fill_value(fill, m.store.operands[1]) if fill is not None else None
                if fill is not None:
                    fill.erase()
                    self.bump("fills-folded")
                acc = m.store.operands[1]
                result = self._emit_reduction(m, row_ivs, tx, bdim, init, before, keep, regs=regs)
                o.erase()
                if keep:  # the later loops read the result, not the buffer
                    for later in loops[i + 1:]:
                        for op_l, mem_l, _ in _accesses(later):
                            if op_l.name == "memref.load" and mem_l == acc:
                                op_l.results[0].replace_all_uses_with(result)
                                op_l.erase()
                    self.bump("row-results-in-registers")
            else:
                self._emit_row_parallel(o, row_ivs, len(row_ivs), tx, bdim, before, regs)
            if i + 1 < len(loops) and not keep:  # a kept reduction wrote no memory
                with ir.InsertionPoint(before), loc:
                    gpu.BarrierOp()

    def _row_registers(self, loops: list[ir.Operation], reds: list, folds: dict, k: int) -> tuple | None:
        """(vector width, vectors per thread, row length, the loops' vector plans) when every loop of
        a row group can work on a row held in registers: one reduced / innermost dim of the same
        length, 128-bit accessible with one width; fills of per-row buffers aside. Else None."""
        if not (self.vectorize and self.row_regs):
            return None
        width, ninner, plans = None, None, []
        self._reg_peel_info = []  # per plan: (innermost variable, blocks, row variables of its loop)
        for i, (o, m) in enumerate(zip(loops, reds)):
            if i in folds.values():
                continue
            if m is not None:
                if len(m.red_trips) != 1:
                    return None
                blocks = [f.regions[0].blocks[0] for f in m.fors]
                plan = _vector_plan([b.arguments[0] for b in blocks], m.value_ops, blocks, need_store=False)
                n = m.red_trips[0]
                rows_of = list(m.parallel.regions[0].blocks[0].arguments) if m.parallel is not None else []
                self._reg_peel_info.append((blocks[0].arguments[0], blocks, rows_of))
            else:
                inner = list(o.opview.upperBound)[k:]
                if not inner and _fill_value(o, None) is not None:
                    continue  # a per-row buffer's fill: one store per row
                body = o.regions[0].blocks[0]
                ops = [c.operation for c in body.operations if c.operation.name != "scf.reduce"]
                if len(inner) != 1 or not all(_unrollable(x) for x in ops):
                    return None
                plan = _vector_plan(list(body.arguments), ops, [body])
                n = inner[0]
                self._reg_peel_info.append((body.arguments[k], [body], list(body.arguments)[:k]))
            if plan is None or (width is not None and plan.width != width):
                return None
            if ninner is not None and not _same_sizes([n], [ninner]):
                return None
            width, ninner = plan.width, n
            plans.append(plan)
        if width is None or self.row_regs < 16:
            return None
        return width, self.row_regs // 16, ninner, plans  # 16-byte vectors

    @staticmethod
    def _row_fits(plans: list, n: ir.Value, bdim: ir.Value, per_thread: int) -> ir.Value:
        """i1: the row (length `n`, at least one element) fits `per_thread` elements of each thread and
        every plan's vectors are allowed (_vector_ok)."""
        idx = ir.IndexType.get()
        cap = arith.MulIOp(bdim, arith.ConstantOp(idx, per_thread).result).result
        ok = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.ule, n, cap).result,
                          arith.CmpIOp(arith.CmpIPredicate.uge, n, arith.ConstantOp(idx, 1).result).result).result
        width = plans[0].width
        return arith.AndIOp(ok, _vector_ok(_VectorPlan(width, [o for p in plans for o in p.vector], []), n)).result

    def _emit_row_parallel(self, p: ir.Operation, row_ivs: list, k: int, tx, bdim, before,
                           regs: "_RowRegisters | None" = None) -> None:
        """The elements of one row of parallel nest `p` (its first `k` dims are the rows), spread over
        the block's threads, `ept` per step with their loads in flight together, or 16 bytes per
        thread and access when the row length and the buffers allow (a runtime split). With `regs`
        (the row held in registers): each of the thread's vectors, its stores under its bounds check."""
        idx = ir.IndexType.get()
        pv = p.opview
        inner = list(pv.upperBound)[k:]
        pbody = p.regions[0].blocks[0]
        body_ops = [c.operation for c in pbody.operations if c.operation.name != "scf.reduce"]
        args = list(pbody.arguments)
        U = self.ept if all(_unrollable(o) for o in body_ops) else 1
        plan = _vector_plan(args, body_ops, [pbody]) if self.vectorize and inner and U > 1 else None
        with ir.InsertionPoint(before), p.location:
            c1 = arith.ConstantOp(idx, 1).result
            ninner = c1
            for t in inner:
                ninner = t if ninner is c1 else arith.MulIOp(ninner, t).result

        def scalar_loop() -> None:
            step = arith.MulIOp(bdim, arith.ConstantOp(idx, U).result).result
            loop = scf.ForOp(tx, ninner, step)
            with ir.InsertionPoint(loop.body):
                y = scf.YieldOp([])
            with ir.InsertionPoint(y):
                zero = arith.ConstantOp(idx, 0).result
                elements = []
                for j in range(U):
                    e = loop.induction_variable if j == 0 else arith.AddIOp(
                        loop.induction_variable, arith.MulIOp(bdim, arith.ConstantOp(idx, j).result).result).result
                    ok = arith.CmpIOp(arith.CmpIPredicate.ult, e, ninner).result if U > 1 else None
                    safe = arith.SelectOp(ok, e, zero).result if j else e
                    elements.append((ok, dict(zip(args, row_ivs + _delinearize(safe, inner)))))
                _clone_elements(elements, body_ops)

        def vector_loop(base: ir.Value | None = None, stop: ir.Value | None = None,
                        shifts: list | None = None) -> None:
            """Vectors from `base` (None: 0; the peeled path's first aligned element) up to `stop`;
            `shifts`: the peeled path's (_peel_split)."""
            W = arith.ConstantOp(idx, plan.width).result
            start = arith.MulIOp(tx, W).result
            if base is not None:
                start = arith.AddIOp(base, start).result
            loop = scf.ForOp(start, ninner if stop is None else stop, arith.MulIOp(bdim, W).result)
            with ir.InsertionPoint(loop.body):
                y = scf.YieldOp([])
            with ir.InsertionPoint(y):
                _emit_vector_body(plan, args, body_ops, row_ivs + _delinearize(loop.induction_variable, inner),
                                  shifts=shifts)

        def leftovers(count: ir.Value, p0: ir.Value, vend: ir.Value) -> None:
            """An odd row's head and tail elements (`count`), one per thread."""
            rest = scf.ForOp(tx, count, bdim)
            with ir.InsertionPoint(rest.body):
                y = scf.YieldOp([])
            with ir.InsertionPoint(y):
                e = _leftover_index(rest.induction_variable, p0, vend)
                _clone_elements([(None, dict(zip(args, row_ivs + [e])))], body_ops)

        def peeled_loop(p0: ir.Value, vend: ir.Value, shifts: list) -> None:
            """Odd rows: whole aligned vectors over p0 .. vend - 1, then the head and tail elements."""
            vector_loop(p0, vend, shifts)  # one innermost dim: _delinearize is the identity
            leftovers(arith.AddIOp(p0, arith.SubIOp(ninner, vend).result).result, p0, vend)

        def register_slots() -> None:
            stores: list = []
            for ok, safe in regs.slots:
                _emit_vector_body(plan, args, body_ops, row_ivs + [safe], regs, stores)
            for (ok, _), group in zip(regs.slots, _chunks(stores, len(stores) // len(regs.slots))):
                ifop = scf.IfOp(ok)
                with ir.InsertionPoint(ifop.then_block):
                    for emit in group:
                        emit()
                    scf.YieldOp([])
            if regs.leftover is not None:  # odd rows: the head and tail elements, one per thread
                leftovers(*regs.leftover)

        with ir.InsertionPoint(before), p.location:
            if regs is not None and plan is not None:
                register_slots()
            elif plan is None:
                scalar_loop()
            else:
                split = scf.IfOp(_vector_ok(plan, inner[-1]), has_else=True)
                with ir.InsertionPoint(split.then_block):
                    vector_loop()
                    scf.YieldOp([])
                peel = (_peel_accesses(plan, args[-1], [pbody], dict(zip(args[:-1], row_ivs)))
                        if self.peel and len(inner) == 1 else None)
                with ir.InsertionPoint(split.else_block):
                    if peel:
                        ok, p0, vend, shifts = _peel_split(plan, peel, ninner, self.shifted >= 1)
                        odd = scf.IfOp(ok, has_else=True)
                        with ir.InsertionPoint(odd.then_block):
                            peeled_loop(p0, vend, shifts)
                            scf.YieldOp([])
                        if shifts:
                            self.bump("shifted-loads", len(shifts))
                        with ir.InsertionPoint(odd.else_block):
                            scalar_loop()
                            scf.YieldOp([])
                        self.bump("peeled-row-loops")
                    else:
                        scalar_loop()
                    scf.YieldOp([])
                self.bump("vectorized-row-loops")
        p.erase()

    # -- parallel nest -------------------------------------------------------------------------
    def _parallel(self, p: ir.Operation, bs: int) -> None:
        if len(p.results):
            raise located_error(p, "scf.parallel with reductions (results) is not supported on the GPU path")
        pv = p.opview
        lbs, ubs, steps = list(pv.lowerBound), list(pv.upperBound), list(pv.step)
        n = len(lbs)
        idx = ir.IndexType.get()
        pbody = p.regions[0].blocks[0]
        body_ops = [c.operation for c in pbody.operations if c.operation.name != "scf.reduce"]
        ept = self.ept if all(_unrollable(o) for o in body_ops) else 1
        vec = flat = None
        if ept > 1 and self.vectorize and all(_const(lb) == 0 for lb in lbs) and all(_const(st) == 1 for st in steps):
            vec = _vector_plan(list(pbody.arguments), body_ops, [pbody], broadcasts=True)
            if vec is not None:
                ept = vec.width  # 16 bytes per access of the widest element type
                inner = _const(ubs[-1])
                if self.flat and not (isinstance(inner, int) and (inner % ept == 0 or inner < ept)):
                    flat = _flat_plan(list(pbody.arguments), body_ops, [pbody], ept)
                if flat is not None and isinstance(inner, int):
                    vec = None  # a static innermost size that is no multiple of the width: flat or scalar
        with ir.InsertionPoint(p), p.location:
            c1 = arith.ConstantOp(idx, 1).result
            trips = []
            for lb, ub, st in zip(lbs, ubs, steps):
                if _const(lb) == 0 and _const(st) == 1:
                    trips.append(ub)
                else:
                    span = arith.SubIOp(ub, lb).result
                    trips.append(arith.CeilDivUIOp(span, st).result)
            total = trips[0]
            for t in trips[1:]:
                total = arith.MulIOp(total, t).result
            cbs = arith.ConstantOp(idx, bs).result
            per_block = arith.ConstantOp(idx, bs * ept).result
            grid = arith.CeilDivUIOp(total, per_block).result
            launch = gpu.LaunchOp((grid, c1, c1), (cbs, c1, c1))
            body = launch.regions[0].blocks[0]
        bx, tx = body.arguments[0], body.arguments[3]

        def place(digits: list) -> list:  # the loop variables at iteration digits (lower bound, step)
            return [i if _const(lb) == 0 and _const(st) == 1 else arith.AddIOp(lb, arith.MulIOp(i, st).result).result
                    for i, lb, st in zip(digits, lbs, steps)]

        def delinearize(lin: ir.Value) -> list:
            return place(_delinearize(lin, trips))

        with ir.InsertionPoint(body), p.location:
            base = arith.AddIOp(arith.MulIOp(bx, arith.ConstantOp(idx, bs * ept).result).result, tx).result
            term = gpu.TerminatorOp()
        if ept == 1:
            with ir.InsertionPoint(term), p.location:
                ok = arith.CmpIOp(arith.CmpIPredicate.ult, base, total).result
                ifop = scf.IfOp(ok)
            with ir.InsertionPoint(ifop.then_block), p.location:
                ivs = delinearize(base)
                y = scf.YieldOp([])
            for arg, iv in zip(pbody.arguments, ivs):
                arg.replace_all_uses_with(iv)
            for o in body_ops:
                o.move_before(y.operation)
        else:
            def thread_elements(at: ir.Operation) -> tuple:
                """Before `at`: the thread's first of `ept` consecutive elements, and the point inside
                its bounds check."""
                with ir.InsertionPoint(at), p.location:
                    tid = arith.AddIOp(arith.MulIOp(bx, arith.ConstantOp(idx, bs).result).result, tx).result
                    first = arith.MulIOp(tid, arith.ConstantOp(idx, ept).result).result
                    inrange = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.ult, first, total).result)
                with ir.InsertionPoint(inrange.then_block), p.location:
                    return first, scf.YieldOp([])

            rest_at = term
            if vec is not None:
                # a runtime split, not a recompile: 128-bit accesses when the innermost size and every
                # vector-accessed buffer allow it, else the flat split (odd sizes) or the scalar mapping
                with ir.InsertionPoint(term), p.location:
                    cond = _vector_ok(vec, trips[-1])
                    ifop = scf.IfOp(cond, has_else=True)
                with ir.InsertionPoint(ifop.then_block), p.location:
                    y = scf.YieldOp([])
                first, y2 = thread_elements(y)
                with ir.InsertionPoint(y2), p.location:
                    _emit_vector_body(vec, list(pbody.arguments), body_ops, delinearize(first))
                with ir.InsertionPoint(ifop.else_block), p.location:
                    rest_at = scf.YieldOp([])
                self.bump("vectorized-launches")
            scalar_at = rest_at
            if flat is not None:
                # odd innermost sizes: `ept` consecutive elements of the whole iteration space per
                # thread when every stored buffer is contiguous over it (see _FlatPlan)
                with ir.InsertionPoint(rest_at), p.location:
                    fl = scf.IfOp(_flat_ok(flat, trips), has_else=True)
                with ir.InsertionPoint(fl.then_block), p.location:
                    y = scf.YieldOp([])
                first, y2 = thread_elements(y)
                with ir.InsertionPoint(y2), p.location:
                    end = arith.AddIOp(first, arith.ConstantOp(idx, ept).result).result
                    whole = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.ule, end, total).result, has_else=True)
                with ir.InsertionPoint(whole.then_block), p.location:
                    y4 = scf.YieldOp([])
                with ir.InsertionPoint(y4), p.location:
                    _emit_flat_body(flat, list(pbody.arguments), body_ops, first, trips, delinearize)
                with ir.InsertionPoint(whole.else_block), p.location:
                    y5 = scf.YieldOp([])  # the last thread's partial vector: element by element
                self._scalar_elements(y5, first, total, ept, 1, pbody, body_ops, trips, place, p.location)
                with ir.InsertionPoint(fl.else_block), p.location:
                    scalar_at = scf.YieldOp([])
                self.bump("flat-vector-launches")
            self._scalar_elements(scalar_at, base, total, ept, bs, pbody, body_ops, trips, place, p.location)
        p.erase()
        self.bump("parallel-launches")


    def _scalar_elements(self, before: ir.Operation, base, total, ept: int, bs: int, pbody, body_ops,
                         trips: list, place, loc) -> None:
        """`ept` elements per thread, `bs` apart (each warp access stays coalesced), in chunks of
        `scalar-chunk`: the body is copied per element, and a chunk's copies load and compute first
        (indices clamped into range), then each stores under its own bounds check, so the chunk's
        loads are in flight together. Only the first element's indices are divided out of its linear
        index; each next one adds `bs`'s digits with carries (_step_digits). Both keep what a thread
        holds small: with all 8 bf16 elements in flight and their indices divided out, the kernel
        spilled 476 bytes under the 32 registers of sym-gpu-occupancy and ran x[:, 1:] - x[:, :-1] at
        14 % of the copy peak; in chunks of 2 with stepped indices, 51 % (H100,
        bench_gpu_variants.py, results h100-2026-11-28a-scalar-*)."""
        idx = ir.IndexType.get()
        with ir.InsertionPoint(before), loc:
            zero = arith.ConstantOp(idx, 0).result
            digits = stride = None
            for j0 in range(0, ept, self.scalar_chunk):
                elements = []
                for j in range(j0, min(ept, j0 + self.scalar_chunk)):
                    lin = base if j == 0 else arith.AddIOp(base, arith.ConstantOp(idx, j * bs).result).result
                    ok = arith.CmpIOp(arith.CmpIPredicate.ult, lin, total).result
                    if digits is None:
                        digits = safe = _delinearize(arith.SelectOp(ok, lin, zero).result, trips)
                    else:
                        if stride is None:
                            stride = _delinearize(arith.ConstantOp(idx, bs).result, trips)
                        digits = _step_digits(digits, stride, trips)
                        safe = [arith.SelectOp(ok, d, zero).result for d in digits]
                    elements.append((ok, dict(zip(pbody.arguments, place(safe)))))
                _clone_elements(elements, body_ops)


# A reduction to one value is split over blocks of at least SPLIT_CHUNK elements, at most SPLIT_BLOCKS.
SPLIT_CHUNK = 8192
SPLIT_BLOCKS = 1024


def _one_chunk(m: "_Reduction") -> bool:
    """Whether a reduction's length is static and at most SPLIT_CHUNK: its split would be one block
    of partials and a second launch combining the one partial."""
    n = 1
    for t in m.red_trips:
        c = _const(t)
        if c is None:
            return False
        n *= c
    return n <= SPLIT_CHUNK


# -- helpers: sizes, rows --------------------------------------------------------------------------

def _delinearize(lin: ir.Value, trips: list) -> list:
    """Indices of linear index `lin` over `trips` (row-major: the last dimension varies fastest)."""
    ivs = [None] * len(trips)
    rem = lin
    for k in range(len(trips) - 1, -1, -1):
        if k == 0:
            ivs[k] = rem
        else:
            ivs[k] = arith.RemUIOp(rem, trips[k]).result
            rem = arith.DivUIOp(rem, trips[k]).result
    return ivs


def _step_digits(digits: list, stride: list, trips: list) -> list:
    """The indices (`digits` over `trips`, row-major) of the linear index `stride` further on, where
    `stride` is given by its own digits: a digit-wise add with carries, no division (every digit
    but the first is below its trip count, so one subtraction brings a sum back into range)."""
    out = [None] * len(trips)
    carry = None
    for k in range(len(trips) - 1, -1, -1):
        d = arith.AddIOp(digits[k], stride[k]).result
        if carry is not None:
            d = arith.SelectOp(carry, arith.AddIOp(d, arith.ConstantOp(ir.IndexType.get(), 1).result).result, d).result
        if k == 0:
            out[k] = d
            break
        carry = arith.CmpIOp(arith.CmpIPredicate.uge, d, trips[k]).result
        out[k] = arith.SelectOp(carry, arith.SubIOp(d, trips[k]).result, d).result
    return out


def _finish_reduction(m: "_Reduction", before: ir.Operation, total: ir.Value, init: ir.Value | None) -> None:
    """The nest's own combine with the accumulator, before `before`: the output's index ops, the
    accumulator's load, the combine (of `total` instead of the element's value) and the store move
    there; with a folded fill, its value `init` replaces reading the accumulator back."""
    for o in m.index_ops + [m.acc_load, m.combine, m.store]:
        o.move_before(before.operation if hasattr(before, "operation") else before)
    for i, v in enumerate(m.combine.operands):
        if v == m.value:
            m.combine.operands[i] = total
    if init is not None:
        m.acc_load.results[0].replace_all_uses_with(init)
        m.acc_load.erase()


def _column_sibling(loops: list, k: int, m: "_Reduction") -> tuple | None:
    """A column reduction right after column reduction `m` (loops[k]), or after a fill of its own
    output there, over the same outputs and reduced elements, that `m` can run with
    (_column_reductions): (its index, its match, the fill or None, the fill's value or None).
    Neither may read the other's output (`m2` runs before `m`'s result is written, and `m` read what
    the fill and `m2` write after it)."""
    j = k + 1
    fill = None
    if j < len(loops) and _fill_value(loops[j], None) is not None:
        fill, j = loops[j], j + 1
    if j >= len(loops):
        return None
    m2 = _match_reduction(loops[j])
    if m2 is None or not _column_reduction_ok(m2) or not _same_sizes(m.par_trips, m2.par_trips) \
            or not _same_sizes(m.red_trips, m2.red_trips):
        return None
    b1, b2 = _root(m.store.operands[1]), _root(m2.store.operands[1])
    if b1 == b2 or any(o.name == "memref.load" and _root(o.operands[0]) == b1 for o in m2.value_ops) \
            or any(o.name == "memref.load" and _root(o.operands[0]) == b2 for o in m.value_ops):
        return None
    if not _defined_before(loops[j], loops[k]):
        return None
    init = None
    if fill is not None:
        out = m2.store.operands[1]
        if _fill_memref(fill) != out or not _fill_covers(fill, m2.par_trips):
            return None
        init = _fill_value(fill, out)
        if init is None:
            return None
    return j, m2, fill, init


def _leaves_alone(p: ir.Operation, m: "_Reduction") -> bool:
    """Whether nest `p` neither touches reduction `m`'s output nor writes a buffer `m` reads (an
    access it cannot tell, a copy or a call, counts as touching)."""
    out = _root(m.store.operands[1])
    reads = [_root(o.operands[0]) for o in m.value_ops if o.name == "memref.load"]
    for c, mem, _ in _accesses(p):
        if mem is None:
            return False
        r = _root(mem)
        if r == out or (c.name == "memref.store" and any(r == x for x in reads)):
            return False
    return True


def _defined_before(nest: ir.Operation, at: ir.Operation) -> bool:
    """Whether every value `nest` uses from outside it is defined before `at` (both in one block), so
    that its ops may move there."""
    block = at.block
    block_ops = [o.operation for o in block.operations]
    at_i = next(i for i, o in enumerate(block_ops) if o == at)
    later = block_ops[at_i:]  # `at` and the ops after it, `nest` among them

    def top(v: ir.Value) -> ir.Operation | None:  # the op of `block` that defines or holds v's definition
        owner = v.owner  # a block argument (the function's, or one inside the nest) has none
        return None if isinstance(owner, ir.Block) else _top_in_block(owner, block)

    def ok(op: ir.Operation) -> bool:
        for v in op.operands:
            d = top(v)
            if d is not None and d != nest and any(d == x for x in later):
                return False
        return all(ok(o.operation) for region in op.regions for b in region.blocks for o in b.operations)

    return ok(nest)


def _column_chunks(par_trips: list, red_trips: list, chunking: tuple) -> tuple:
    """At the insertion point: (outputs P, reduced length N, chunks R, rows per chunk L, 1) of a
    column reduction, with `chunking` = (threads, min_rows): R * P about `threads` threads, L at
    least `min_rows`, no empty chunk (R = 0 when N = 0)."""
    threads, min_rows = chunking
    idx = ir.IndexType.get()
    c1 = arith.ConstantOp(idx, 1).result
    npar = c1
    for t in par_trips:
        npar = t if npar is c1 else arith.MulIOp(npar, t).result
    nred = red_trips[0]
    for t in red_trips[1:]:
        nred = arith.MulIOp(nred, t).result
    want = arith.CeilDivUIOp(arith.ConstantOp(idx, threads).result, arith.MaxUIOp(npar, c1).result).result
    most = arith.CeilDivUIOp(nred, arith.ConstantOp(idx, min_rows).result).result
    chunks = arith.MaxUIOp(arith.MinUIOp(want, most).result, c1).result
    rows = arith.CeilDivUIOp(nred, chunks).result
    chunks = arith.CeilDivUIOp(nred, arith.MaxUIOp(rows, c1).result).result
    return npar, nred, chunks, rows, c1


def _unrolled_fold(lo: ir.Value, hi: ir.Value, unroll: int, idents: list, element, comb,
                   stride: ir.Value | None = None, init: list | None = None, in_order: bool = False) -> scf.ForOp:
    """At the insertion point: an scf.for over positions lo, lo + stride, ... below `hi`, `unroll` at
    a time, folding `element(r)` (a list of values, ops built at the insertion point) into
    accumulators from `init` (default `idents`) with `comb(a, b)` (lists; `a` the earlier
    positions'): the step's elements, independent, have their loads in flight together and combine
    as a tree (`in_order`: one after the other into the accumulator, for a rule that needs the
    order); a position past `hi` reads the step's first one (in range) and counts as `idents`."""
    idx = ir.IndexType.get()

    def times(u):  # u * stride
        c = arith.ConstantOp(idx, u).result
        return c if stride is None else arith.MulIOp(c, stride).result

    loop = scf.ForOp(lo, hi, times(unroll), list(init or idents))
    with ir.InsertionPoint(loop.body):
        iv = loop.induction_variable
        vals = []
        for u in range(unroll):
            r = iv if u == 0 else arith.AddIOp(iv, times(u)).result
            ok = arith.CmpIOp(arith.CmpIPredicate.ult, r, hi).result if u else None
            v = element(arith.SelectOp(ok, r, iv).result if u else r)
            vals.append([arith.SelectOp(ok, x, e).result for x, e in zip(v, idents)] if u else v)
        acc = list(loop.inner_iter_args)
        if in_order:
            for v in vals:
                acc = comb(acc, v)
            scf.YieldOp(acc)
            return loop
        while len(vals) > 1:
            vals = [comb(vals[i], vals[i + 1]) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
        scf.YieldOp(comb(acc, vals[0]))
    return loop


def _combine_partials(root: ir.Operation, npar: ir.Value, chunks: ir.Value, bufs: list, trips: list,
                      unroll: int, idents, comb) -> tuple:
    """Before `root`: the second launch of a column reduction. Lanes per output (_lanes_launch)
    fold the output's `chunks` partials (entry k * npar + c of each buffer of `bufs`, every L-th
    chunk per lane, `unroll` loads in flight) from `idents()` with `comb`, then each other's
    (_lanes_combine). Returns (the output's indices over `trips`, the totals, the terminator of
    the branch of lane 0 of an in-range output, where the caller finishes)."""
    from torch_mlir.dialects import memref

    idx = ir.IndexType.get()
    with ir.InsertionPoint(root), root.location:
        c, ok, lane, lanes, term = _lanes_launch(npar, chunks)
    with ir.InsertionPoint(term), root.location:
        out_ivs = _delinearize(c, trips)
        n = arith.SelectOp(ok, chunks, arith.ConstantOp(idx, 0).result).result

        def partial(r):
            k = arith.AddIOp(arith.MulIOp(r, npar).result, c).result
            return [memref.LoadOp(b, [k]).result for b in bufs]

        loop = _unrolled_fold(lane, n, unroll, idents(), partial, comb, stride=lanes)
        totals = _lanes_combine(list(loop.results), lanes, comb)
        first = arith.CmpIOp(arith.CmpIPredicate.eq, lane, arith.ConstantOp(idx, 0).result).result
        ifop = scf.IfOp(arith.AndIOp(ok, first).result)
        with ir.InsertionPoint(ifop.then_block):
            y = scf.YieldOp([])
    return out_ivs, totals, y


def _shufflable(t: ir.Type) -> bool:
    """Whether _shuffle_xor moves values of type `t` between lanes."""
    return str(t) in ("f16", "bf16", "f32", "f64") or (isinstance(t, ir.IntegerType) and ir.IntegerType(t).width <= 64)


def _shuffle_xor(v: ir.Value, offset: int) -> ir.Value:
    """At the insertion point: lane `lane ^ offset`'s `v` (gpu.shuffle xor over the warp, in 32-bit
    pieces: 16-bit floats through f32, narrow integers widened, 64-bit values as two halves)."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    t = v.type

    def shfl(x):
        return gpu.ShuffleOp(x, arith.ConstantOp(i32, offset).result, arith.ConstantOp(i32, 32).result,
                             ir.Attribute.parse("#gpu<shuffle_mode xor>")).results[0]

    if str(t) in ("f32", "i32"):
        return shfl(v)
    if str(t) in ("f16", "bf16"):
        return arith.TruncFOp(t, shfl(arith.ExtFOp(ir.F32Type.get(), v).result)).result
    if isinstance(t, ir.IntegerType) and ir.IntegerType(t).width < 32:
        return arith.TruncIOp(t, shfl(arith.ExtUIOp(i32, v).result)).result
    bits = v if str(t) == "i64" else arith.BitcastOp(i64, v).result
    lo = shfl(arith.TruncIOp(i32, bits).result)
    hi = shfl(arith.TruncIOp(i32, arith.ShRUIOp(bits, arith.ConstantOp(i64, 32).result).result).result)
    out = arith.OrIOp(arith.ExtUIOp(i64, lo).result,
                      arith.ShLIOp(arith.ExtUIOp(i64, hi).result, arith.ConstantOp(i64, 32).result).result).result
    return out if str(t) == "i64" else arith.BitcastOp(t, out).result


def _lanes_launch(npar: ir.Value, chunks: ir.Value) -> tuple:
    """At the insertion point: the second launch of a column reduction, L lanes per output (block
    (L, 256 / L): lanes consecutive in a warp), L a power of two up to 32 with at most 8 of the
    `chunks` partials per lane (1 for 8 chunks or fewer). In its body: (the output c, clamped to 0
    past the end, whether c is in range, the lane, L, the launch's terminator). Every thread,
    out-of-range ones too, reaches the lanes' shuffles."""
    idx = ir.IndexType.get()
    c1 = arith.ConstantOp(idx, 1).result
    lanes = c1
    for below, n in ((8, 2), (16, 4), (32, 8), (64, 16), (128, 32)):
        more = arith.CmpIOp(arith.CmpIPredicate.ugt, chunks, arith.ConstantOp(idx, below).result).result
        lanes = arith.SelectOp(more, arith.ConstantOp(idx, n).result, lanes).result
    per_block = arith.DivUIOp(arith.ConstantOp(idx, 256).result, lanes).result
    lv = gpu.LaunchOp((arith.CeilDivUIOp(npar, per_block).result, c1, c1), (lanes, per_block, c1))
    body = lv.regions[0].blocks[0]
    bx, tx, ty, bdimx, bdimy = (body.arguments[i] for i in (0, 3, 4, 9, 10))
    with ir.InsertionPoint(body):
        term = gpu.TerminatorOp()
    with ir.InsertionPoint(term):
        c = arith.AddIOp(arith.MulIOp(bx, bdimy).result, ty).result
        ok = arith.CmpIOp(arith.CmpIPredicate.ult, c, npar).result
        c = arith.SelectOp(ok, c, arith.ConstantOp(idx, 0).result).result
    return c, ok, tx, bdimx, term


def _lanes_combine(vals: list, lanes: ir.Value, comb) -> list:
    """At the insertion point: every lane of a group of `lanes` (a power of two up to 32,
    consecutive lanes) gets comb over the group's `vals` (a butterfly of xor shuffles; a step of
    `offset` >= lanes keeps the value). `comb` must not depend on its operands' order (a sum, or
    a rule that compares positions): lanes combine their values in different orders."""
    idx = ir.IndexType.get()
    for offset in (16, 8, 4, 2, 1):
        other = [_shuffle_xor(v, offset) for v in vals]
        on = arith.CmpIOp(arith.CmpIPredicate.ult, arith.ConstantOp(idx, offset).result, lanes).result
        vals = [arith.SelectOp(on, x, v).result for x, v in zip(comb(vals, other), vals)]
    return vals


def _thread_launch(total: ir.Value) -> tuple:
    """At the insertion point: a launch of `total` threads in blocks of 256; (the thread's linear
    index, the terminator of its `index < total` branch)."""
    idx = ir.IndexType.get()
    c1 = arith.ConstantOp(idx, 1).result
    bs = arith.ConstantOp(idx, 256).result
    lv = gpu.LaunchOp((arith.CeilDivUIOp(total, bs).result, c1, c1), (bs, c1, c1))
    body = lv.regions[0].blocks[0]
    with ir.InsertionPoint(body):
        term = gpu.TerminatorOp()
    with ir.InsertionPoint(term):
        t = arith.AddIOp(arith.MulIOp(body.arguments[0], bs).result, body.arguments[3]).result
        ifop = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.ult, t, total).result)
    with ir.InsertionPoint(ifop.then_block):
        y = scf.YieldOp([])
    return t, y


def _column_reduction_ok(m) -> bool:
    """Whether reduction (or arg-reduction) `m` reduces over outer dims: every load of its value
    that moves with the reduced dims has the output's innermost index last (`x[j, i]` for
    `x.sum(0)`) with unit stride, so consecutive outputs read consecutive elements. (`x.t().sum(0)`
    reads a transposed view: its rows are contiguous, and a block per output reads them coalesced.)
    The accumulator's type must move between lanes (_shufflable); an arg-reduction's positions must
    be integers."""
    if m.parallel is None:
        return False
    if isinstance(m, _Reduction) and not _shufflable(m.combine.results[0].type):
        return False
    if isinstance(m, _ArgReduction) and not isinstance(m.jvalue.type, ir.IntegerType):
        return False
    inner = list(m.parallel.regions[0].blocks[0].arguments)[-1]
    for_ivs = [f.regions[0].blocks[0].arguments[0] for f in m.fors]
    red_blocks = [f.regions[0].blocks[0] for f in m.fors]
    moving = 0
    for o in m.value_ops:
        if o.name != "memref.load":
            continue
        idxs = list(o.operands)[1:]
        if not any(any(v == f for f in for_ivs) or _defined_in(v, red_blocks) for v in idxs):
            continue  # the same element for every reduced index (a broadcast)
        if not any(v == inner for v in idxs):
            continue  # the same element for neighbouring outputs (a per-row weight `w[j]`)
        if not (idxs[-1] == inner) or any(v == inner for v in idxs[:-1]):
            return False
        try:  # consecutive outputs must be neighbours in memory (not a transposed view's column)
            strides, _ = ir.MemRefType(o.operands[0].type).get_strides_and_offset()
        except Exception:  # noqa: BLE001 - not a strided layout
            return False
        if strides[-1] != 1:
            return False
        moving += 1
    return moving > 0


def _reduction_block_size(m: "_Reduction", largest: int = 256) -> ir.Value:
    """Threads per block for a reduction: the fewest of 32, 64, .. `largest` that give each thread at
    most ROW_BYTES_PER_THREAD bytes of the widest element the reduction loads (float32: a warp for
    rows up to 512 elements, 256 threads from 2049 on; bf16: a warp up to 1024, 256 from 4097), so
    short rows do not leave most threads idle."""
    idx = ir.IndexType.get()
    loads = [o for o in m.value_ops if o.name == "memref.load"]
    itemsize = max([_ITEMSIZE.get(str(ir.MemRefType(o.operands[0].type).element_type), 4) for o in loads] or [4])
    per_thread = max(1, ROW_BYTES_PER_THREAD // itemsize)
    nred = m.red_trips[0]
    for t in m.red_trips[1:]:
        nred = arith.MulIOp(nred, t).result
    widths = [w for w in (32, 64, 128, 256, 512, 1024) if w <= largest]
    block = arith.ConstantOp(idx, widths[-1]).result
    for width in reversed(widths[:-1]):
        fits = arith.CmpIOp(arith.CmpIPredicate.ule, nred, arith.ConstantOp(idx, width * per_thread).result).result
        block = arith.SelectOp(fits, arith.ConstantOp(idx, width).result, block).result
    return block


def _size_key(v: ir.Value) -> tuple:
    """A comparable key for a size: equal keys are equal sizes (memref.dim through views and
    allocations down to a function argument's dimension, or a constant)."""
    c = _const(v)
    if c is not None:
        return ("c", c)
    op = defining_op(v)
    if op is not None and op.name == "memref.dim":
        d = _const(op.operands[1])
        src = op.operands[0]
        if d is not None:
            return _dim_key(src, d)
    return ("v", v)


def _dim_key(mem: ir.Value, d: int) -> tuple:
    mt = ir.MemRefType(mem.type)
    if mt.shape[d] != ir.ShapedType.get_dynamic_size():
        return ("c", mt.shape[d])
    op = defining_op(mem)
    if op is not None and op.name in ("memref.alloc", "memref.expand_shape"):
        dyn = sum(1 for k in range(d) if mt.shape[k] == ir.ShapedType.get_dynamic_size())
        sizes = list(op.operands) if op.name == "memref.alloc" else list(op.operands)[1:]
        if dyn < len(sizes):
            return _size_key(sizes[dyn])
    return ("dim", mem, d)


def _same_sizes(a: list, b: list) -> bool:
    return len(a) == len(b) and all(_size_key(x) == _size_key(y) for x, y in zip(a, b))


def _row_trips(o: ir.Operation) -> list:
    """The rows a loop nest could share with its neighbours: a reduction's output dims, or all dims of
    a fill. Other nests start no row group."""
    m = _match_reduction(o)
    if m is not None:
        return list(m.par_trips) if m.parallel is not None else []
    if _fill_value(o, None) is not None:
        return list(o.opview.upperBound)
    return []


def _joins_rows(o: ir.Operation, rows: list) -> bool:
    if not rows:
        return False
    m = _match_reduction(o)
    if m is not None:
        return m.parallel is not None and _same_sizes(list(m.par_trips), rows)
    if o.name != "scf.parallel" or len(o.results):
        return False
    pv = o.opview
    if not all(_const(lb) == 0 for lb in pv.lowerBound) or not all(_const(st) == 1 for st in pv.step):
        return False
    ubs = list(pv.upperBound)
    return len(ubs) >= len(rows) and _same_sizes(ubs[: len(rows)], rows)


_VIEW_OPS = MEMREF_VIEW_OPS
_root = root_buffer


def _accesses(o: ir.Operation) -> list:
    """(load|store op, memref, indices) of every memory access inside `o`."""
    out = []

    def walk(x: ir.Operation) -> None:
        for region in x.regions:
            for block in region.blocks:
                for c in block.operations:
                    c = c.operation
                    if c.name == "memref.load":
                        out.append((c, c.operands[0], list(c.operands)[1:]))
                    elif c.name == "memref.store":
                        out.append((c, c.operands[1], list(c.operands)[2:]))
                    elif c.name in ("memref.copy", "func.call") or c.name.startswith("vector."):
                        out.append((c, None, []))
                    walk(c)

    walk(o)
    return out


def _epilogue_ok(p: ir.Operation, m) -> bool:
    """Whether nest `p`, right after reduction `m` over outer dims, can run in the reduction's
    second launch, each output's iteration after its result is stored: an scf.parallel from 0 by 1
    over the same outputs (the same sizes), a body without nested regions whose accesses of
    the reduction's output are at the indices where the reduction stores its own output (no other
    output's result is ready yet), and
    whose stores touch no buffer the reduction reads (its input, its accumulator elsewhere)."""
    if p.name != "scf.parallel" or len(p.results) or _match_reduction(p) is not None:
        return False
    pv = p.opview
    if not all(_const(lb) == 0 for lb in pv.lowerBound) or not all(_const(st) == 1 for st in pv.step):
        return False
    ubs = list(pv.upperBound)
    if len(ubs) != len(m.par_trips) or not _same_sizes(ubs, list(m.par_trips)):
        return False
    body = p.regions[0].blocks[0]
    ivs = list(body.arguments)
    if any(c.operation.regions and c.operation.name != "scf.reduce" for c in body.operations):
        return False
    # output (i_0, ..) stores at m.store's indices: each a loop index of the reduction's parallel
    # loop (the epilogue's index at that position) or a constant 0 (a unit dim)
    par_args = list(m.parallel.regions[0].blocks[0].arguments)
    own = []
    for v in list(m.store.operands)[2:]:
        k = next((k for k, a in enumerate(par_args) if v == a), None)
        if k is None and _const(v) != 0:
            return False
        own.append(None if k is None else ivs[k])
    out = _root(m.store.operands[1])
    read = [_root(mem) for _, mem, _ in _accesses(m.parallel) if mem is not None]
    for acc, mem, idxs in _accesses(p):
        if mem is None:
            return False
        r = _root(mem)
        if r == out:
            if not (mem == m.store.operands[1]) or len(idxs) != len(own) or not all(
                    (_const(a) == 0) if b is None else (a == b) for a, b in zip(idxs, own)):
                return False
        elif acc.name == "memref.store" and any(r == x for x in read):
            return False
    return True


def _row_group_ok(loops: list[ir.Operation], rows: list) -> bool:
    """Whether `loops` may run row by row in one block: at least two loops with real work, one of them
    a reduction; parallel bodies without regions; and a buffer written by one loop and accessed by
    another is accessed through the same memref, at that loop's own row, by both."""
    k = len(rows)
    reds = [_match_reduction(o) for o in loops]
    work = [o for o, m in zip(loops, reds) if m is not None or _fill_value(o, None) is None]
    if len(work) < 2 or not any(m is not None for m in reds):
        return False
    row_args = []
    for o, m in zip(loops, reds):
        if m is None:
            body = o.regions[0].blocks[0]
            if any(c.operation.regions for c in body.operations):
                return False
            row_args.append(list(body.arguments)[:k])
        else:
            row_args.append(list(m.parallel.regions[0].blocks[0].arguments))
    acc = [_accesses(o) for o in loops]
    if any(mem is None for a in acc for _, mem, _ in a):
        return False

    def at_row(idxs, args, mem) -> bool:
        # index 0 of a static unit dim (a batch of 1: `[0, row, 0]` into [1, n, 1]) names no row
        shape = ir.MemRefType(mem.type).shape
        idxs = [i for d, i in enumerate(idxs) if not (shape[d] == 1 and _const(i) == 0)]
        return len(idxs) >= k and all(i == a for i, a in zip(idxs[:k], args))

    for a, (accs_a, args_a) in enumerate(zip(acc, row_args)):
        for op_s, mem_s, idx_s in accs_a:
            if op_s.name != "memref.store":
                continue
            root = _root(mem_s)
            for b, (accs_b, args_b) in enumerate(zip(acc, row_args)):
                if a == b:
                    continue
                for op_l, mem_l, idx_l in accs_b:
                    if not (_root(mem_l) == root):
                        continue
                    if not (mem_l == mem_s) or not at_row(idx_s, args_a, mem_s) or not at_row(idx_l, args_b, mem_l):
                        return False
    return True


def _scalar_fill_of(o: ir.Operation, m: "_Reduction") -> bool:
    """Whether `o` stores a value from outside any device work into reduction `m`'s accumulator, a
    buffer of one element (`memref.store %c, %acc[]`, or at constant indices equal to the store's)."""
    if o.name != "memref.store" or not (o.operands[1] == m.store.operands[1]):
        return False
    if list(o.operands)[2:] != list(m.store.operands)[2:] or any(_const(v) is None for v in list(o.operands)[2:]):
        return False
    return defining_op(o.operands[0]) is None or defining_op(o.operands[0]).name == "arith.constant"


def _fills_to_fold(loops: list[ir.Operation], reds: list) -> dict[int, int]:
    """For a row group: reduction index -> index of the fill of its accumulator that becomes its
    initial value, the fill coming before it with no loop in between touching that buffer (layer
    norm fills both accumulators before the first reduction)."""
    folds: dict[int, int] = {}
    for i, o in enumerate(loops):
        if reds[i] is not None or _fill_value(o, None) is None:
            continue
        target = _root(o.regions[0].blocks[0].operations[0].operation.operands[1])  # the fill's store
        for j in range(i + 1, len(loops)):
            if reds[j] is not None and j not in folds and _fill_value(o, reds[j].store.operands[1]) is not None:
                folds[j] = i
                break
            if any(mem is not None and _root(mem) == target for _, mem, _ in _accesses(loops[j])):
                break
    return folds


def _users(v: ir.Value) -> list[ir.Operation]:
    out = []
    for use in v.uses:
        u = use.owner
        out.append(u.operation if hasattr(u, "operation") else u)
    return out


def _views(root: ir.Value) -> list[ir.Value]:
    """`root` and every view of it (through view ops, transitively)."""
    out, todo = [], [root]
    while todo:
        v = todo.pop()
        out.append(v)
        todo.extend(u.results[0] for u in _users(v) if u.name in _VIEW_OPS and u.operands[0] == v)
    return out


def _inside(op: ir.Operation, loops: list[ir.Operation]) -> bool:
    p = op
    while p is not None:
        if any(p == x for x in loops):
            return True
        p = p.parent
        p = p.operation if p is not None and hasattr(p, "operation") else p
    return False


def _private_result(m: "_Reduction", loops: list[ir.Operation], ignore: list = ()) -> bool:
    """Whether the result of reduction `m` (the first of `loops`, a row group's loops from it on) can
    stay in registers: its accumulator is a buffer allocated in the function that nothing but these
    loops accesses (sizes and deallocation aside), written by `m` alone and read through the same
    memref (at the row: _row_group_ok). Accesses inside `ignore` (the fill folded into `m`) do not count."""
    acc = m.store.operands[1]
    root = _root(acc)
    alloc = defining_op(root)
    if alloc is None or alloc.name != "memref.alloc":
        return False
    for v in _views(root):
        for u in _users(v):
            if (u.name in _VIEW_OPS and u.operands[0] == v) or u.name in ("memref.dim", "memref.dealloc"):
                continue
            if any(x is not None for x in ignore) and _inside(u, [x for x in ignore if x is not None]):
                continue
            if not _inside(u, loops):
                return False
            if u.name == "memref.store" and not (u == m.store):
                return False
            if u.name == "memref.load" and not (u.operands[0] == acc):
                return False
            if u.name not in ("memref.load", "memref.store"):
                return False
    return True


def _drop_buffer(root: ir.Value) -> None:
    """Erase a buffer nothing reads or writes any more: its sizes (memref.dim of it or its views) are
    replaced by the values they equal, then its views, deallocation and allocation go."""
    from torch_mlir.dialects import arith as _arith

    views = _views(root)
    for v in views:
        for u in _users(v):
            if u.name != "memref.dim":
                continue
            d = _const(u.operands[1])
            val = _dim_value(v, d, u) if d is not None else None
            if val is not None:
                u.results[0].replace_all_uses_with(val)
                u.erase()
    for v in reversed(views):  # views of views first
        users = _users(v)
        if any(u.name != "memref.dealloc" for u in users):
            return  # a size we could not resolve: the buffer stays (unused by the device)
        for u in users:
            u.erase()
        defining_op(v).erase()


def _dim_value(mem: ir.Value, d: int, at: ir.Operation) -> ir.Value | None:
    """The value dimension `d` of `mem` equals (its static size, or the size operand of the
    memref.alloc / memref.expand_shape that made it), or None."""
    mt = ir.MemRefType(mem.type)
    if mt.shape[d] != ir.ShapedType.get_dynamic_size():
        with ir.InsertionPoint(at), at.location:
            return arith.ConstantOp(ir.IndexType.get(), mt.shape[d]).result
    op = defining_op(mem)
    if op is not None and op.name in ("memref.alloc", "memref.expand_shape"):
        dyn = sum(1 for k in range(d) if mt.shape[k] == ir.ShapedType.get_dynamic_size())
        sizes = list(op.operands) if op.name == "memref.alloc" else list(op.operands)[1:]
        if dyn < len(sizes):
            return sizes[dyn]
    return None


def _clone_elements(elements: list, body_ops: list) -> None:
    """Clone `body_ops` once per element `(ok, mapping)` at the insertion point: every element's loads
    and arithmetic first, then each element's stores under its own bounds check `ok` (None: none), so
    the loads of all elements are in flight together."""
    stores = []
    for ok, mapping in elements:
        for o in body_ops:
            if o.name == "memref.store" and ok is not None:
                stores.append((ok, o, mapping))
                continue
            _clone_mapped(o, mapping)
    for ok, o, mapping in stores:
        ifop = scf.IfOp(ok)
        with ir.InsertionPoint(ifop.then_block):
            _clone_mapped(o, mapping)
            scf.YieldOp([])


def _clone_mapped(o, mapping: dict) -> None:
    """Clone `o` at the insertion point with its operands remapped; its results join `mapping`."""
    c = o.clone()
    for i, v in enumerate(list(c.operands)):
        if v in mapping:
            c.operands[i] = mapping[v]
    for r0, r1 in zip(o.results, c.results):
        mapping[r0] = r1


# -- 128-bit accesses ----------------------------------------------------------------------------

class _VectorPlan:
    """How an elementwise body runs `width` consecutive innermost elements per thread: `vector` accesses
    (last index the innermost loop variable, the others loop variables of other dims or values from
    outside) become one vector.load/vector.store each; `uniform` loads (no index on the innermost
    variable) are loaded once."""

    def __init__(self, width: int, vector: list, uniform: list, not_one: list | None = None,
                 broadcast_loads: list | None = None) -> None:
        self.width, self.vector, self.uniform = width, vector, uniform
        self.not_one = not_one or []  # sizes from outside the body the vector path needs to differ from 1
        self.broadcast_loads = broadcast_loads or []  # loads at `X == 1 ? 0 : inner`: at inner there

    def buffers(self) -> list:
        return _distinct_buffers(self.vector)


def _distinct_buffers(accesses: list) -> list:
    """The buffers of memref.load / memref.store ops, each once, in order."""
    seen: list = []
    for o in accesses:
        m = _mem_and_indices(o)[0]
        if not any(m == x for x in seen):
            seen.append(m)
    return seen


_ITEMSIZE = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i16": 2, "i8": 1, "f64": 8, "i64": 8}


def _vector_plan(args: list, body_ops: list, blocks: list, need_store: bool = True,
                 broadcasts: bool = False) -> "_VectorPlan | None":
    """How `body_ops` (in `blocks`, over loop variables `args`, the innermost last) run `width`
    consecutive innermost elements at once, or None. With `broadcasts` (where the runtime check is made
    outside the loop nest), a load at `X == 1 ? 0 : inner` is a vector load under a check that X != 1;
    index arithmetic of outer loop variables is allowed in outer dims in every case."""
    inner = args[-1]
    vector, uniform, widest, moduli, not_one, broadcast_loads = [], [], 0, [], [], []
    for o in body_ops:
        if o.name not in ("memref.load", "memref.store"):
            continue
        mem, idxs = _mem_and_indices(o)
        mt = ir.MemRefType(mem.type)
        et = str(mt.element_type)
        if et not in _ITEMSIZE:
            return None
        modulus = _modulo_of(idxs[-1], inner) if idxs and o.name == "memref.load" else None
        if modulus is not None:  # a load at `inner mod C` (a concat's piece): contiguous lanes when W divides C
            moduli.append(modulus)
            idxs = idxs[:-1] + [inner]
        size = _broadcast_size(idxs[-1], inner, blocks) if broadcasts and idxs and o.name == "memref.load" else None
        if size is not None:  # `size == 1 ? 0 : inner` (a dynamic broadcast): inner when size != 1
            not_one.append(size)
            broadcast_loads.append(o)
            idxs = idxs[:-1] + [inner]
        for k, v in enumerate(idxs):  # loop variables or values from outside the body; outer dims may
            # also take arithmetic of the outer loop variables (torch-mlir's `dim == 1 ? 0 : i` of a
            # dynamic broadcast), the same for all lanes
            if not (any(v == a for a in args) or not _defined_in(v, blocks)
                    or (k < len(idxs) - 1 and _lane_uniform(v, args[:-1], blocks, body_ops, {}))):
                return None
        uses_inner = [k for k, v in enumerate(idxs) if v == inner]
        if not uses_inner:
            if o.name == "memref.store":
                return None
            uniform.append(o)
            continue
        if uses_inner != [len(idxs) - 1]:
            return None
        try:
            strides, _ = mt.get_strides_and_offset()
        except Exception:  # noqa: BLE001 - not a strided layout
            return None
        if strides[-1] != 1:
            return None
        vector.append(o)
        widest = max(widest, _ITEMSIZE[et])
    if not vector or (need_store and not any(o.name == "memref.store" for o in vector)):
        return None
    width = 16 // widest
    if any(c % width for c in moduli):
        return None
    return _VectorPlan(width, vector, uniform, not_one, broadcast_loads) if width > 1 else None


def _broadcast_size(v: ir.Value, inner: ir.Value, blocks: list) -> ir.Value | None:
    """X when `v` is `select(X == 1, 0, inner)` with X from outside the body: torch-mlir's index into
    a dynamic dim that may broadcast (size 1). Under a check that X != 1 it is `inner`."""
    op = defining_op(v)
    if op is None or op.name != "arith.select" or op.operands[2] != inner or constant_value(op.operands[1]) != 0:
        return None
    cmp = defining_op(op.operands[0])
    if cmp is None or cmp.name != "arith.cmpi" or ir.IntegerAttr(cmp.attributes["predicate"]).value != 0:
        return None  # arith.CmpIPredicate.eq
    a, b = cmp.operands
    x = a if constant_value(b) == 1 else b if constant_value(a) == 1 else None
    return x if x is not None and not _defined_in(x, blocks) else None


_UNIFORM_ARITH = {"arith.select", "arith.cmpi", "arith.addi", "arith.subi", "arith.muli", "arith.divui",
                  "arith.remui", "arith.divsi", "arith.remsi", "arith.index_cast", "arith.constant",
                  "arith.minui", "arith.maxui", "arith.minsi", "arith.maxsi", "arith.andi", "arith.ori"}


def _lane_uniform(v: ir.Value, outer: list, blocks: list, body_ops: list, memo: dict, depth: int = 8) -> bool:
    """Whether `v` is index arithmetic of `body_ops` (which the vector body clones before the accesses)
    of the outer loop variables `outer` and values from outside the body: the same for every lane
    of a vector step (no innermost variable, no loop-carried value)."""
    if any(v == a for a in outer) or not _defined_in(v, blocks):
        return True
    if isinstance(v.owner, ir.Block):
        return False  # the innermost variable, or another block argument (an accumulator)
    op = defining_op(v)
    if op is None or op.name not in _UNIFORM_ARITH or depth == 0 or not any(op == o for o in body_ops):
        return False
    key = op.operation
    if key not in memo:
        memo[key] = all(_lane_uniform(x, outer, blocks, body_ops, memo, depth - 1) for x in op.operands)
    return memo[key]


def _modulo_of(v: ir.Value, inner: ir.Value) -> int | None:
    """C when `v` is `inner mod C` for a constant C > 0, as lower-affine writes `d mod C`
    (`r = inner rem C; r < 0 ? r + C : r`) or as one `arith.remui` / `arith.remsi`. The W lanes of a
    vector step start at a multiple of W, so when W divides C their `inner mod C` are consecutive and
    the load is one vector load at the first lane's index."""
    op = defining_op(v)
    if op is None:
        return None
    if op.name == "arith.select":
        cond, a, r = (defining_op(x) for x in op.operands)
        if cond is None or a is None or r is None or cond.name != "arith.cmpi" or a.name != "arith.addi":
            return None
        if ir.IntegerAttr(cond.attributes["predicate"]).value != 2:  # arith.CmpIPredicate.slt
            return None
        c = _modulo_of(op.operands[2], inner)
        if c is None or not (cond.operands[0] == op.operands[2] and constant_value(cond.operands[1]) == 0):
            return None
        if not (a.operands[0] == op.operands[2] and constant_value(a.operands[1]) == c):
            return None
        return c
    if op.name in ("arith.remsi", "arith.remui") and op.operands[0] == inner:
        c = constant_value(op.operands[1])
        return c if isinstance(c, int) and c > 0 else None
    return None


def _vector_ok(plan: _VectorPlan, inner_trip: ir.Value) -> ir.Value:
    """i1: the innermost size is a multiple of the width and every vector-accessed buffer has its
    offset, outer strides and address aligned to a whole vector."""
    from torch_mlir.dialects import memref

    idx = ir.IndexType.get()
    w = arith.ConstantOp(idx, plan.width).result
    zero = arith.ConstantOp(idx, 0).result

    def multiple(v, k):
        return arith.CmpIOp(arith.CmpIPredicate.eq, arith.RemUIOp(v, k).result, zero).result

    ok = multiple(inner_trip, w)
    one = arith.ConstantOp(idx, 1).result
    for x in plan.not_one:
        ok = arith.AndIOp(ok, arith.CmpIOp(arith.CmpIPredicate.ne, x, one).result).result
    for m in plan.buffers():
        mt = ir.MemRefType(m.type)
        nbytes = arith.ConstantOp(idx, plan.width * _ITEMSIZE[str(mt.element_type)]).result
        ptr = memref.ExtractAlignedPointerAsIndexOp(m).result
        ok = arith.AndIOp(ok, multiple(ptr, nbytes)).result
        meta = memref.ExtractStridedMetadataOp(m)
        res = list(meta.results)
        offset, strides = res[1], res[2 + mt.rank:]
        ok = arith.AndIOp(ok, multiple(offset, w)).result
        for st in strides[:-1]:
            ok = arith.AndIOp(ok, multiple(st, w)).result
        if mt.rank:
            ok = arith.AndIOp(ok, arith.CmpIOp(arith.CmpIPredicate.eq, strides[-1], one).result).result
    return ok


def _peel_accesses(plan: _VectorPlan, inner: ir.Value, blocks: list, outer: dict) -> list | None:
    """(buffer, outer index values, stored) of each vector access when the row loop over `inner` can
    take the peeled path (_peel_split): every vector access's last index is `inner` itself and its
    other indices are loop variables of the rows (`outer` maps them to their values) or values from
    outside the loop body. Else None (a concat's `inner mod C`, a broadcast select, index arithmetic)."""
    seen: list = []
    for o in plan.vector:
        mem, idxs = _mem_and_indices(o)
        if not idxs or idxs[-1] != inner:
            return None
        vals = []
        for v in idxs[:-1]:
            v = outer.get(v, v)
            if _defined_in(v, blocks):
                return None
            vals.append(v)
        stored = o.name == "memref.store"
        for k, (m, vs, st) in enumerate(seen):
            if m == mem and all(a == b for a, b in zip(vs, vals)):
                seen[k] = (m, vs, st or stored)
                break
        else:
            seen.append((mem, vals, stored))
    return seen


def _odd_length(n: ir.Value, width: int) -> bool:
    """Whether a row of length `n` may be no multiple of `width` (dynamic, or a static odd length): a
    row group of static multiples holds its rows in registers only when they are aligned (the plain
    128-bit slots). Its loops in memory, like every reduction and row loop, take the peeled path
    whenever the plain one's check fails: a static multiple whose rows start unaligned (a slice
    x[:, 1:] of rows of 17) runs vectors from each row's first aligned element."""
    c = _const(n)
    return not (isinstance(c, int) and c % width == 0)


def _peel_split(plan: _VectorPlan, accesses: list, n: ir.Value, shift: bool = True) -> tuple:
    """Rows whose length is no multiple of the width (odd rows: each starts at another alignment),
    under (i1 ok, p, vend, shifts): every vector-accessed buffer is 16-byte aligned with a unit
    innermost stride and its row starts at the same element offset modulo the width, so the row's
    elements p .. vend - 1 (p < width: the first aligned one; vend - p a multiple of the width) are
    whole aligned vectors; the other elements (head and tail, fewer than two vectors) go one by one.

    A buffer only read, at the same place for every row (a layer norm's weight and bias: no outer
    index but constants), need not share the rows' alignment: `shifts` lists (buffer, outer
    constants, e), e its misalignment at element p, and its vectors are read as two aligned ones
    shifted by e lanes (_shifted_load). Without this, a layer norm's rows of 4097 bf16 took the
    scalar path at 7 rows in 8 (29 % of the copy peak on an H200)."""
    from torch_mlir.dialects import memref

    idx = ir.IndexType.get()
    w = arith.ConstantOp(idx, plan.width).result
    zero = arith.ConstantOp(idx, 0).result
    one = arith.ConstantOp(idx, 1).result
    written = [_root(m) for m, _, stored in accesses if stored]
    consts = [None if any(_const(v) is None for v in vals) or any(_root(m) == r for r in written)
              else tuple(_const(v) for v in vals) for m, vals, _ in accesses]
    if not shift or all(c is not None for c in consts):
        consts = [None] * len(consts)  # nothing to align with: the first buffer sets the alignment
    ok, mis0, shifting = None, None, []
    for (mem, outer, _), fixed in zip(accesses, consts):
        mt = ir.MemRefType(mem.type)
        nbytes = arith.ConstantOp(idx, plan.width * _ITEMSIZE[str(mt.element_type)]).result
        ptr = memref.ExtractAlignedPointerAsIndexOp(mem).result
        c = arith.CmpIOp(arith.CmpIPredicate.eq, arith.RemUIOp(ptr, nbytes).result, zero).result
        res = list(memref.ExtractStridedMetadataOp(mem).results)
        offset, strides = res[1], res[2 + mt.rank:]
        c = arith.AndIOp(c, arith.CmpIOp(arith.CmpIPredicate.eq, strides[-1], one).result).result
        start = offset
        for v, st in zip(outer, strides[:-1]):
            start = arith.AddIOp(start, arith.MulIOp(v, st).result).result
        if fixed is not None:
            shifting.append((mem, fixed, start))
        else:
            mis = arith.RemUIOp(start, w).result
            if mis0 is None:
                mis0 = mis
            else:
                c = arith.AndIOp(c, arith.CmpIOp(arith.CmpIPredicate.eq, mis, mis0).result).result
        ok = c if ok is None else arith.AndIOp(ok, c).result
    p = arith.MinUIOp(arith.RemUIOp(arith.SubIOp(w, mis0).result, w).result, n).result
    vend = arith.AddIOp(p, arith.MulIOp(arith.DivUIOp(arith.SubIOp(n, p).result, w).result, w).result).result
    shifts = [(mem, fixed, arith.RemUIOp(arith.AddIOp(start, p).result, w).result)
              for mem, fixed, start in shifting]
    return ok, p, vend, shifts


def _shift_of(shifts: list | None, mem: ir.Value, idxs: list) -> ir.Value | None:
    """The misalignment e of a shifted buffer's vector load at `idxs` (_peel_split), or None."""
    for m, fixed, e in shifts or ():
        if m == mem and tuple(_const(v) for v in idxs[:-1]) == fixed:
            return e
    return None


def _shifted_load(vt: ir.VectorType, mem: ir.Value, idxs: list, e: ir.Value, align: int) -> ir.Value:
    """The vector at `idxs` of a buffer whose element there sits e lanes past a 16-byte boundary
    (0 <= e < width): two aligned loads, at idxs[-1] - e and W further (the same one when e = 0:
    nothing past the row is read), and a shift by e lanes in log2(W) selects between static
    shuffles (e is the same for every thread and vector of a row). Both loads touch only the
    16-byte chunks holding elements the vector takes; the first one's index may be below 0 (the
    row's first vector, e > p), an address still inside the buffer's allocation, which MLIR's
    `vector.load` calls out of bounds: one more reason the option is off by default."""
    from torch_mlir.dialects import vector

    idx = ir.IndexType.get()
    W = vt.shape[0]
    zero = arith.ConstantOp(idx, 0).result
    base = arith.SubIOp(idxs[-1], e).result
    more = arith.CmpIOp(arith.CmpIPredicate.ne, e, zero).result
    second = arith.AddIOp(base, arith.SelectOp(more, arith.ConstantOp(idx, W).result, zero).result).result
    a = vector.LoadOp(vt, mem, idxs[:-1] + [base], alignment=align).result
    b = vector.LoadOp(vt, mem, idxs[:-1] + [second], alignment=align).result
    v = vector.ShuffleOp(a, b, list(range(2 * W))).result
    s = W // 2
    while s >= 1:
        n = W + s - 1  # the lanes still needed after this stage
        bit = arith.CmpIOp(arith.CmpIPredicate.ne, arith.AndIOp(e, arith.ConstantOp(idx, s).result).result,
                           zero).result
        hi = vector.ShuffleOp(v, v, [j + s for j in range(n)]).result
        lo = vector.ShuffleOp(v, v, list(range(n))).result
        v = arith.SelectOp(bit, hi, lo).result
        s //= 2
    return v


def _leftover_index(k: ir.Value, p: ir.Value, vend: ir.Value) -> ir.Value:
    """The element of leftover ordinal k: the head's k (k < p), else the tail's vend + k - p."""
    head = arith.CmpIOp(arith.CmpIPredicate.ult, k, p).result
    return arith.SelectOp(head, k, arith.SubIOp(arith.AddIOp(vend, k).result, p).result).result


def _emit_vector_body(plan: _VectorPlan, args: list, body_ops: list, ivs: list,
                      regs: "_RowRegisters | None" = None, stores: list | None = None,
                      shifts: list | None = None) -> list[dict]:
    """The body for `plan.width` consecutive elements from `ivs` (the first one's values of the loop
    variables `args`); returns each lane's value mapping. With `regs`, a vector load the row group
    made already is reused. With `stores`, the vector stores are appended to it (callables that
    emit them) instead of being emitted. `shifts` (the peeled path's, _peel_split; else the row
    group's) are the buffers whose vectors are read shifted."""
    from torch_mlir.dialects import vector

    idx = ir.IndexType.get()
    W = plan.width
    lanes = []
    for j in range(W):
        inner = ivs[-1] if j == 0 else arith.AddIOp(ivs[-1], arith.ConstantOp(idx, j).result).result
        lanes.append({a: v for a, v in zip(args, ivs[:-1] + [inner])})
    base_map = lanes[0]
    for o in body_ops:
        if any(o == x for x in plan.uniform):
            _clone_mapped(o, base_map)
            for lane in lanes[1:]:
                lane[o.results[0]] = base_map[o.results[0]]
        elif any(o == x for x in plan.vector):
            if o.name == "memref.load":
                mem = o.operands[0]
                et = ir.MemRefType(mem.type).element_type
                vt = ir.VectorType.get([W], et)
                idxs = [base_map.get(v, v) for v in list(o.operands)[1:]]
                if any(o == b for b in plan.broadcast_loads):
                    idxs[-1] = ivs[-1]
                ld = regs.load(mem, idxs) if regs is not None else None
                if ld is None:
                    e = _shift_of(shifts if regs is None else regs.shifts, mem, idxs)
                    if e is not None:
                        ld = _shifted_load(vt, mem, idxs, e, W * _ITEMSIZE[str(et)])
                    else:
                        ld = vector.LoadOp(vt, mem, idxs, alignment=W * _ITEMSIZE[str(et)]).result
                    if regs is not None:
                        regs.remember(mem, idxs, ld)
                for j, lane in enumerate(lanes):
                    lane[o.results[0]] = vector.ExtractOp(ld, [], [j]).result
            else:
                mem = o.operands[1]
                et = ir.MemRefType(mem.type).element_type
                vt = ir.VectorType.get([W], et)
                vals = [lane.get(o.operands[0], o.operands[0]) for lane in lanes]
                vec = vector.FromElementsOp(vt, vals).result
                idxs = [base_map.get(v, v) for v in list(o.operands)[2:]]

                def emit(vec=vec, mem=mem, idxs=idxs, align=W * _ITEMSIZE[str(et)]):
                    vector.StoreOp(vec, mem, idxs, alignment=align)
                if regs is not None:
                    regs.stored(mem, idxs, vec)
                if stores is None:
                    emit()
                else:
                    stores.append(emit)
        else:
            for lane in lanes:
                _clone_mapped(o, lane)
    return lanes


class _FlatPlan:
    """How an elementwise launch runs `width` consecutive elements of its whole (flattened) iteration
    space per thread when the innermost size is no multiple of the width (a conv block's N x C x H*W
    with H*W odd, rows of 777), where the plain vector path cannot: a vector may then span two rows.
    `flat` accesses index their buffer with exactly the loop variables, in order (the output and
    inputs of the iteration's own shape; every store must be one): under a runtime check that each
    such buffer is contiguous over the iteration space and aligned, they are one vector access at
    the thread's first linear index of a 1-D view. Every other load is made per lane at the lane's
    indices; `uniform` ones (no innermost index: a per-channel scale) twice, for the first lane's row
    and the last lane's, each lane taking its row's value. Lanes cross at most one row boundary (the
    check asks the innermost size to be at least the width), so two delinearizations serve the
    `width` lanes. This is how TorchInductor's flattened, masked kernels access such shapes."""

    def __init__(self, width: int, flat: list, uniform: list) -> None:
        self.width, self.flat, self.uniform = width, flat, uniform

    def buffers(self) -> list:
        return _distinct_buffers(self.flat)


def _flat_plan(args: list, body_ops: list, blocks: list, width: int) -> "_FlatPlan | None":
    """The flat plan of an elementwise body over loop variables `args` at `width` lanes, or None when
    a store is not flat or a flat access's element is wider than 16 bytes / width."""
    n, inner = len(args), args[-1]
    flat, uniform, memo = [], [], {}
    for o in body_ops:
        if o.name not in ("memref.load", "memref.store"):
            continue
        mem, idxs = _mem_and_indices(o)
        mt = ir.MemRefType(mem.type)
        if len(idxs) == n and all(v == a for v, a in zip(idxs, args)):
            et = str(mt.element_type)
            try:
                strides, _ = mt.get_strides_and_offset()
            except Exception:  # noqa: BLE001 - not a strided layout
                return None
            if et not in _ITEMSIZE or _ITEMSIZE[et] * width > 16 or strides[-1] != 1:
                return None
            flat.append(o)
            continue
        if o.name == "memref.store":
            return None
        if idxs and all(v != inner for v in idxs) and all(_lane_uniform(v, args[:-1], blocks, body_ops, memo)
                                                           for v in idxs):
            uniform.append(o)
    if not any(o.name == "memref.store" for o in flat):
        return None
    return _FlatPlan(width, flat, uniform)


def _flat_ok(plan: _FlatPlan, trips: list) -> ir.Value:
    """i1: the innermost size is at least the width (a vector spans at most two rows) and every flat
    buffer is contiguous over the iteration space `trips` (row-major strides: the last 1, each other
    the next one's times its trip), with its address and offset aligned to a whole vector."""
    from torch_mlir.dialects import memref

    idx = ir.IndexType.get()
    w = arith.ConstantOp(idx, plan.width).result
    zero = arith.ConstantOp(idx, 0).result
    one = arith.ConstantOp(idx, 1).result

    def multiple(v, k):
        return arith.CmpIOp(arith.CmpIPredicate.eq, arith.RemUIOp(v, k).result, zero).result

    ok = arith.CmpIOp(arith.CmpIPredicate.uge, trips[-1], w).result
    for m in plan.buffers():
        mt = ir.MemRefType(m.type)
        nbytes = arith.ConstantOp(idx, plan.width * _ITEMSIZE[str(mt.element_type)]).result
        ok = arith.AndIOp(ok, multiple(memref.ExtractAlignedPointerAsIndexOp(m).result, nbytes)).result
        res = list(memref.ExtractStridedMetadataOp(m).results)
        offset, strides = res[1], res[2 + mt.rank:]
        ok = arith.AndIOp(ok, multiple(offset, w)).result
        ok = arith.AndIOp(ok, arith.CmpIOp(arith.CmpIPredicate.eq, strides[-1], one).result).result
        for k in range(mt.rank - 1):
            want = arith.MulIOp(strides[k + 1], trips[k + 1]).result
            ok = arith.AndIOp(ok, arith.CmpIOp(arith.CmpIPredicate.eq, strides[k], want).result).result
    return ok


def _emit_flat_body(plan: _FlatPlan, args: list, body_ops: list, first: ir.Value, trips: list,
                    delinearize) -> None:
    """The body for linear indices first .. first + width - 1 (all in range), under _flat_ok."""
    from torch_mlir.dialects import memref, vector

    idx = ir.IndexType.get()
    W, n = plan.width, len(args)
    a = delinearize(first)  # the first lane's indices
    b = delinearize(arith.AddIOp(first, arith.ConstantOp(idx, W - 1).result).result)  # the last lane's
    inner_trip = trips[-1]
    lanes, crossed = [], []
    for j in range(W):
        if j == 0:
            lanes.append(dict(zip(args, a)))
            crossed.append(None)
            continue
        s = arith.AddIOp(a[-1], arith.ConstantOp(idx, j).result).result
        c = arith.CmpIOp(arith.CmpIPredicate.uge, s, inner_trip).result  # lane j is in the next row
        ivs = [arith.SelectOp(c, b[k], a[k]).result for k in range(n - 1)]
        ivs.append(arith.SelectOp(c, arith.SubIOp(s, inner_trip).result, s).result)
        lanes.append(dict(zip(args, ivs)))
        crossed.append(c)
    views: list = []

    def view(mem: ir.Value) -> ir.Value:  # the buffer as a 1-D memref from its first element
        for m, v in views:
            if m == mem:
                return v
        mt = ir.MemRefType(mem.type)
        # from the base buffer, not `mem`: sym-gpu-dynamic-offsets rewrites a buffer with a static
        # offset (a slice) by its metadata and rejects views of it inside a launch
        base, offset = list(memref.ExtractStridedMetadataOp(mem).results)[:2]
        total = trips[0]
        for t in trips[1:]:
            total = arith.MulIOp(total, t).result
        dyn = ir.ShapedType.get_dynamic_size()
        layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), [1])
        vt = ir.MemRefType.get([dyn], mt.element_type, layout, mt.memory_space)
        v = memref.ReinterpretCastOp(vt, base, [offset], [total], [], [dyn], [dyn], [1]).result
        views.append((mem, v))
        return v

    for o in body_ops:
        if any(o == x for x in plan.flat):
            if o.name == "memref.load":
                mem = o.operands[0]
                et = ir.MemRefType(mem.type).element_type
                ld = vector.LoadOp(ir.VectorType.get([W], et), view(mem), [first],
                                   alignment=W * _ITEMSIZE[str(et)]).result
                for j, lane in enumerate(lanes):
                    lane[o.results[0]] = vector.ExtractOp(ld, [], [j]).result
            else:
                mem = o.operands[1]
                et = ir.MemRefType(mem.type).element_type
                vals = [lane.get(o.operands[0], o.operands[0]) for lane in lanes]
                vec = vector.FromElementsOp(ir.VectorType.get([W], et), vals).result
                vector.StoreOp(vec, view(mem), [first], alignment=W * _ITEMSIZE[str(et)])
        elif any(o == x for x in plan.uniform):
            _clone_mapped(o, lanes[0])
            _clone_mapped(o, lanes[-1])
            ra, rb = lanes[0][o.results[0]], lanes[-1][o.results[0]]
            for j in range(1, W - 1):
                lanes[j][o.results[0]] = arith.SelectOp(crossed[j], rb, ra).result
        else:
            for lane in lanes:
                _clone_mapped(o, lane)


class _RowRegisters:
    """A row group's row held in registers: thread `tx` holds the vectors at `tx*W + s*bdim*W` for
    s < slots (`slots`: (in the row, the position or 0 when not)), and the vector loads made so far
    of buffers the group does not write (`load` / `remember`), reused by later loops, and the last
    vectors a loop stored (`stored`): a later loop reading them back at the same place takes the
    value (a residual sum written by the group's first loop, then reduced by a layer norm)."""

    def __init__(self, width: int, nslots: int, n: ir.Value, tx: ir.Value, bdim: ir.Value,
                 loops: list[ir.Operation], peel: tuple | None = None) -> None:
        idx = ir.IndexType.get()
        w = arith.ConstantOp(idx, width).result
        zero = arith.ConstantOp(idx, 0).result
        step = arith.MulIOp(bdim, w).result
        pos = arith.MulIOp(tx, w).result
        end, first = n, zero
        self.leftover = None  # odd rows (`peel` = (p, vend, shifts)): (count, p, vend) of the head and tail elements
        self.shifts = None  # odd rows: the buffers read shifted (_peel_split)
        if peel is not None:
            p0, end, self.shifts = peel
            first = p0  # an aligned vector of the row (the split asks vend > p): where idle slots load
            pos = arith.AddIOp(p0, pos).result
            self.leftover = (arith.AddIOp(p0, arith.SubIOp(n, end).result).result, p0, end)
        self.slots = []
        for s in range(nslots):
            if s:
                pos = arith.AddIOp(pos, step).result
            ok = arith.CmpIOp(arith.CmpIPredicate.ult, pos, end).result
            self.slots.append((ok, arith.SelectOp(ok, pos, first).result))
        self.written = [_root(mem) for o in loops for op, mem, _ in _accesses(o)
                        if op.name == "memref.store" and mem is not None]
        self.loads: dict = {}
        self.stores: dict = {}  # key -> (root buffer, the vector last stored there)

    @staticmethod
    def _place(mem: ir.Value, idxs: list) -> tuple:
        mem, idxs = _unexpanded(mem, idxs)
        return (mem, *(_const(v) if _const(v) is not None else v for v in idxs))

    def _key(self, mem: ir.Value, idxs: list) -> tuple | None:
        if any(_root(mem) == w for w in self.written):
            return None
        return self._place(mem, idxs)

    def load(self, mem: ir.Value, idxs: list) -> "ir.Value | None":
        hit = self.stores.get(self._place(mem, idxs))
        if hit is not None:
            return hit[1]
        key = self._key(mem, idxs)
        return self.loads.get(key) if key is not None else None

    def stored(self, mem: ir.Value, idxs: list, value: ir.Value) -> None:
        """`value` is now at `mem[idxs]`: what was stored in its buffer through another view is
        forgotten (it may name the same elements)."""
        root, place = _root(mem), self._place(mem, idxs)
        self.stores = {k: v for k, v in self.stores.items() if not (v[0] == root and not k[0] == place[0])}
        self.stores[place] = (root, value)

    def remember(self, mem: ir.Value, idxs: list, value: ir.Value) -> None:
        key = self._key(mem, idxs)
        if key is not None:
            self.loads[key] = value


def _mem_and_indices(o: ir.Operation) -> tuple:
    """(memref, index values) of a memref.load or memref.store."""
    if o.name == "memref.load":
        return o.operands[0], list(o.operands)[1:]
    return o.operands[1], list(o.operands)[2:]


def _unexpanded(mem: ir.Value, idxs: list) -> tuple:
    """The same element through the source of `memref.expand_shape` views that only add unit dims
    (softmax's max over `x` viewed as [m, 1, n] is the element [i, j] of `x`): (memref, indices)."""
    op = defining_op(mem)
    while op is not None and op.name == "memref.expand_shape":
        shape = ir.MemRefType(mem.type).shape
        src = []
        for group in ir.ArrayAttr(op.attributes["reassociation"]):
            dims = [ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)]
            real = [d for d in dims if not (shape[d] == 1 and _const(idxs[d]) == 0)]
            if len(real) > 1:
                return mem, idxs
            src.append(idxs[real[0]] if real else idxs[dims[0]])
        mem, idxs = op.operands[0], src
        op = defining_op(mem)
    return mem, idxs


def _chunks(xs: list, n: int) -> list:
    return [xs[i:i + n] for i in range(0, len(xs), n)] if n else [[] for _ in xs]


def _fill_memref(p) -> "ir.Value | None":
    """The memref a fill loop (`_fill_value`) writes, or None."""
    if _fill_value(p, None) is None:
        return None
    body = p.regions[0].blocks[0]
    return next(c.operation for c in body.operations if c.operation.name == "memref.store").operands[1]


def _fill_covers(p, trips) -> bool:
    """Whether fill loop `p` runs over `trips` (unit trips aside), so that a nest over `trips`
    writing the same memref overwrites every element it fills: the same number of dims, each the
    same size, or both sizes dynamic (two dims of the same memref, read from different SSA values:
    linalg's lowering sizes a generic's loops by its operands, which agree); a constant against a
    different size is not covered. `trips` None: a reduction to one value, whose fill is checked by
    _fill_value alone."""
    if trips is None:
        return True
    ubs = [u for u in p.opview.upperBound if _const(u) != 1]
    trips = [t for t in trips if _const(t) != 1]
    return len(ubs) == len(trips) and all(
        _size_key(a) == _size_key(b) or (_const(a) is None and _const(b) is None) for a, b in zip(ubs, trips))


def _fill_value(p, out) -> "ir.Value | None":
    """The value a fill loop stores everywhere (`scf.parallel` over all dims of a memref whose body is
    one store of a value defined outside, at the loop's indices), or None. With `out`, the fill must
    write that memref."""
    if p is None or p.name != "scf.parallel" or len(p.results):
        return None
    pv = p.opview
    if not all(_const(lb) == 0 for lb in pv.lowerBound) or not all(_const(st) == 1 for st in pv.step):
        return None
    body = p.regions[0].blocks[0]
    ops = [c.operation for c in body.operations if c.operation.name != "scf.reduce"]
    if len(ops) != 1 or ops[0].name != "memref.store":
        return None
    st = ops[0]
    mem = st.operands[1]
    if out is not None and not (mem == out):
        return None
    mt = ir.MemRefType(mem.type)
    idxs, args = list(st.operands)[2:], list(body.arguments)
    left = [v for k, v in enumerate(idxs) if not (mt.shape[k] == 1 and _const(v) == 0)]  # unit dims at 0
    if len(left) != len(args) or not all(v == a for v, a in zip(left, args)):
        return None
    if _defined_in(st.operands[0], [body]):
        return None
    return st.operands[0]


def _unrollable(o: ir.Operation) -> bool:
    """Ops an elementwise body may hold to be copied per element (no regions, no calls, one store kind)."""
    if o.regions:
        return False
    return o.name in ("memref.load", "memref.store") or o.name.split(".")[0] in ("arith", "math", "index")


# combining op -> (gpu.all_reduce kind, identity as an attribute builder)
_COMBINE = {
    "arith.addf": ("add", 0.0), "arith.mulf": ("mul", 1.0),
    "arith.maximumf": ("maximumf", float("-inf")), "arith.minimumf": ("minimumf", float("inf")),
    "arith.maxnumf": ("maxnumf", float("-inf")), "arith.minnumf": ("minnumf", float("inf")),
    "arith.addi": ("add", 0), "arith.muli": ("mul", 1), "arith.maxsi": ("maxsi", -(2 ** 31)),
    "arith.minsi": ("minsi", 2 ** 31 - 1), "arith.andi": ("and", -1), "arith.ori": ("or", 0),
    "arith.xori": ("xor", 0),
}


class _Reduction:
    """A matched reduction nest: [scf.parallel over outputs] > scf.for chain over the reduced dims >
    body `acc = load out[I]; new = combine(value, acc); store new, out[I]`."""

    def __init__(self, **kw) -> None:
        self.__dict__.update(kw)

    @property
    def identity(self) -> ir.Attribute:
        t = self.combine.results[0].type
        v = _COMBINE[self.combine.name][1]
        if self.combine.name in ("arith.maxsi", "arith.minsi"):  # the extreme of the type's width
            bits = ir.IntegerType(t).width
            v = -(2 ** (bits - 1)) if self.combine.name == "arith.maxsi" else 2 ** (bits - 1) - 1
        return ir.FloatAttr.get(t, v) if isinstance(v, float) else ir.IntegerAttr.get(t, v)


def _defined_in(v: ir.Value, blocks: list) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return any(owner == b for b in blocks)
    op = owner.operation if hasattr(owner, "operation") else owner
    b = op.block
    while True:
        if any(b == x for x in blocks):
            return True
        parent = b.owner  # the op holding the block
        if parent is None:
            return False
        parent = parent.operation if hasattr(parent, "operation") else parent
        if parent.name in ("func.func", "builtin.module"):
            return False
        b = parent.block


def _innermost_body(fors: list) -> tuple:
    """(the innermost loop's block, its ops but the yield, its memref.store ops)."""
    body = fors[-1].regions[0].blocks[0]
    ops = [o.operation for o in body.operations if o.operation.name != "scf.yield"]
    return body, ops, [o for o in ops if o.name == "memref.store"]


def _match_reduction(root: ir.Operation) -> "_Reduction | None":
    """The reduction pattern of linalg's parallel-loop lowering, or None (mapped one thread per output)."""
    nest = _reduction_nest(root)
    if nest is None:
        return None
    parallel, par_trips, fors = nest
    body, ops, stores = _innermost_body(fors)
    if len(stores) != 1:
        return None
    store = stores[0]
    out = store.operands[1]
    idxs = list(store.operands)[2:]
    comb = store.operands[0].owner
    if isinstance(comb, ir.Block):
        return None
    comb = comb.operation if hasattr(comb, "operation") else comb
    if comb.name not in _COMBINE or not (comb.block == body) or str(comb.results[0].type) not in ("f32", "i32", "f64", "i64"):
        return None
    loads = [o for o in ops if o.name == "memref.load" and o.operands[0] == out]
    if len(loads) != 1:
        return None
    load = loads[0]
    if list(load.operands)[1:] != idxs:
        return None
    a, b = comb.operands[0], comb.operands[1]
    if a == load.results[0]:
        value = b
    elif b == load.results[0]:
        value = a
    else:
        return None
    if len(list(load.results[0].uses)) != 1 or len(list(comb.results[0].uses)) != 1:
        return None
    # index ops of the output (inside the body, depending only on outer values) move with the store
    index_ops = []
    red_blocks = [x.regions[0].blocks[0] for x in fors]
    for v in idxs:
        if _defined_in(v, red_blocks):
            o = v.owner
            if isinstance(o, ir.Block):
                return None
            o = o.operation if hasattr(o, "operation") else o
            if o.block != body or any(_defined_in(w, red_blocks) for w in o.operands) or len(o.regions):
                return None
            index_ops.append(o)
    # what each element recomputes: the value's ops and the output's index ops they share (the index
    # ops also move to where the accumulator is combined: a shared one would not dominate its use)
    shared = [o for o in index_ops if any(any(_owner(v) is not None and o == _owner(v) for v in x.operands)
                                           for x in ops if not any(x == y for y in [load, comb, store] + index_ops))]
    value_ops = [o for o in ops if not any(o == x for x in [load, comb, store] + index_ops) or any(o == x for x in shared)]
    for o in value_ops:
        if o.name in ("memref.store", "memref.copy") or o.regions:
            return None
        if o.name == "memref.load" and o.operands[0] == out:
            return None
    return _Reduction(parallel=parallel, par_trips=par_trips, fors=fors,
                      red_trips=[x.opview.upperBound for x in fors], value_ops=value_ops, value=value,
                      acc_load=load, combine=comb, store=store, index_ops=index_ops, kind=_COMBINE[comb.name][0])


class _ArgReduction:
    """A matched arg-reduction along one dim (torch-mlir's argmax / argmin / max.dim): [scf.parallel
    over outputs] > one scf.for over the reduced dim > body `v = load V[I]; i = load IDX[I];
    nv = maximumf(x, v) (minimumf); c = cmpf ogt (olt) x, v; ni = select c, J(j), i; store nv, V[I];
    store ni, IDX[I]` with x computed from loads of other buffers and J an expression of j."""

    def __init__(self, **kw) -> None:
        self.__dict__.update(kw)


_PURE_VALUE_OPS = ("memref.load", "vector.load")


def _reduction_nest(root: ir.Operation) -> tuple | None:
    """(scf.parallel over the outputs or None, its trip counts, the chain of scf.for over the reduced
    dims) of a loop nest `[scf.parallel] > scf.for > ... > scf.for`, all from 0 by 1, the loops' bounds
    computable outside the nest; or None."""
    parallel, par_trips, top = None, [], root
    if root.name == "scf.parallel":
        if len(root.results):
            return None
        pv = root.opview
        if not all(_const(lb) == 0 for lb in pv.lowerBound) or not all(_const(st) == 1 for st in pv.step):
            return None
        ops = [o.operation for o in root.regions[0].blocks[0].operations if o.operation.name != "scf.reduce"]
        if len(ops) != 1 or ops[0].name != "scf.for":
            return None
        parallel, par_trips, top = root, list(pv.upperBound), ops[0]
    fors, f = [], top
    while f is not None and f.name == "scf.for":
        fv = f.opview
        if len(f.results) or _const(fv.lowerBound) != 0 or _const(fv.step) != 1:
            return None
        fors.append(f)
        inner = [o.operation for o in f.regions[0].blocks[0].operations if o.operation.name != "scf.yield"]
        f = inner[0] if len(inner) == 1 and inner[0].name == "scf.for" else None
    if not fors:
        return None
    loop_blocks = [x.regions[0].blocks[0] for x in fors] + ([parallel.regions[0].blocks[0]] if parallel else [])
    if any(_defined_in(x.opview.upperBound, loop_blocks) for x in fors):
        return None
    return parallel, par_trips, fors


def _match_argreduce(root: ir.Operation) -> "_ArgReduction | None":
    nest = _reduction_nest(root)
    if nest is None:
        return None
    parallel, par_trips, fors = nest
    body, ops, stores = _innermost_body(fors)
    ivs = [x.regions[0].blocks[0].arguments[0] for x in fors]
    if len(stores) != 2 or any(o.regions for o in ops):
        return None

    def op_of(v):
        o = defining_op(v)
        return o if o is not None and o.block == body else None

    newv = next((op_of(st.operands[0]) for st in stores if op_of(st.operands[0]) is not None
                 and op_of(st.operands[0]).name in ("arith.maximumf", "arith.minimumf")), None)
    newi = next((op_of(st.operands[0]) for st in stores if op_of(st.operands[0]) is not None
                 and op_of(st.operands[0]).name == "arith.select"), None)
    if newv is None or newi is None or str(newv.results[0].type) not in ("f32", "f64", "bf16", "f16"):
        return None
    storev = next(st for st in stores if st.operands[0] == newv.results[0])
    storei = next(st for st in stores if st.operands[0] == newi.results[0])
    if list(storev.operands)[2:] != list(storei.operands)[2:]:
        return None
    loadv = next((o for o in ops if o.name == "memref.load" and o.operands[0] == storev.operands[1]), None)
    loadi = next((o for o in ops if o.name == "memref.load" and o.operands[0] == storei.operands[1]), None)
    if loadv is None or loadi is None or list(loadv.operands)[1:] != list(storev.operands)[2:] \
            or list(loadi.operands)[1:] != list(storei.operands)[2:]:
        return None
    v_acc = loadv.results[0]
    a, b = newv.operands[0], newv.operands[1]
    if not (b == v_acc or a == v_acc):
        return None
    value = a if b == v_acc else b
    cmp = op_of(newi.operands[0])
    want = 2 if newv.name == "arith.maximumf" else 4  # arith.cmpf predicates ogt, olt
    if cmp is None or cmp.name != "arith.cmpf" or ir.IntegerAttr(cmp.attributes["predicate"]).value != want:
        return None
    if not (cmp.operands[0] == value and cmp.operands[1] == v_acc) or not (newi.operands[2] == loadi.results[0]):
        return None
    # J(j): the select's true value, computed from the loop variables and values from outside
    jvalue = newi.operands[1]
    jexpr_ops, todo = [], [jvalue]
    while todo:
        v = todo.pop()
        o = op_of(v)
        if o is None:
            if not any(v == iv for iv in ivs) and _defined_in(v, [body]):
                return None
            continue
        if o.name not in ("arith.index_cast", "arith.addi", "arith.muli", "arith.constant", "arith.extsi", "arith.trunci"):
            return None
        jexpr_ops.insert(0, o)
        todo.extend(o.operands)
    special = [loadv, loadi, newv, cmp, newi, storev, storei] + jexpr_ops
    index_ops = []
    for v in list(storev.operands)[2:]:
        o = op_of(v)
        if o is not None:
            if any(_defined_in(w, [body]) for w in o.operands) or o.regions:
                return None
            index_ops.append(o)
    value_ops = [o for o in ops if not any(o == x for x in special + index_ops)]
    accumulated = [r for o in (loadv, loadi, newv, cmp, newi) for r in o.results]
    for o in value_ops:
        if o.name not in _PURE_VALUE_OPS and not o.name.startswith(("arith.", "math.")):
            return None  # run once per pass: nothing with effects
        if o.regions or any(any(v == r for r in accumulated) for v in o.operands):
            return None  # x computed from the accumulators: not a plain arg-reduction
        if o.name == "memref.load" and (o.operands[0] == storev.operands[1] or o.operands[0] == storei.operands[1]):
            return None
    # what each pass recomputes per element: x's ops and the index ops they share (`j` cast once
    # for both x and J after CSE), in body order
    pass_ops = [o for o in ops if any(o == x for x in value_ops + jexpr_ops + index_ops)]
    return _ArgReduction(parallel=parallel, par_trips=par_trips, ivs=ivs, fors=fors, pass_ops=pass_ops,
                         red_trips=[x.opview.upperBound for x in fors], value_ops=value_ops, value=value, newv=newv, loadv=loadv,
                         loadi=loadi, storev=storev, storei=storei, jvalue=jvalue, jexpr_ops=jexpr_ops,
                         index_ops=index_ops)


def _owner(v: ir.Value) -> "ir.Operation | None":
    o = v.owner
    if isinstance(o, ir.Block):
        return None
    return o.operation if hasattr(o, "operation") else o


def _const(v: ir.Value):
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name in ("arith.constant",):
        attr = op.attributes["value"]
        if isinstance(attr, ir.IntegerAttr):
            return ir.IntegerAttr(attr).value
    return None


def _top_in_block(op, block: ir.Block):
    """The ancestor of `op` (or op itself) that sits directly in `block`, or None."""
    o = op.operation if hasattr(op, "operation") else op
    while o is not None:
        if o.name in ("func.func", "builtin.module", "gpu.module"):
            return None  # not inside `block` (another block of the function): never past the function
        if o.block == block:
            return o
        parent = o.parent
        if parent is None:
            return None
        o = parent.operation if hasattr(parent, "operation") else parent
    return None
