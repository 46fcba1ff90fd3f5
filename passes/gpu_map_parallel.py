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
from mlir_sym.passes.registry import SymPass, located_error, register

# Host ops without side effects on buffers: evaluated by the host program in Python, so they may be
# hoisted above device work they do not depend on.
PURE_HOST_OPS = {
    "memref.dim", "memref.alloc", "memref.alloca", "memref.cast", "memref.subview", "memref.expand_shape",
    "memref.collapse_shape", "memref.reinterpret_cast", "memref.reshape", "ub.poison",
}
# Host ops that touch buffers or the control flow: device work cannot move across them.
BARRIER_HOST_OPS = {
    "memref.dealloc", "memref.copy", "func.return", "func.call", "cf.br", "cf.cond_br", "gpu.launch",
    "gpu.launch_func",
}
HOST_BUFFER_ATTR = "sym.host_buffer"
_MAX_HOST_BUFFER = 64


def _is_pure_host_name(name: str) -> bool:
    return name in PURE_HOST_OPS or name.split(".")[0] in ("arith", "math", "index")


def is_host_buffer(v: ir.Value) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation if hasattr(owner, "operation") else owner
    return op.name == "memref.alloc" and HOST_BUFFER_ATTR in op.attributes


def mark_host_buffers(block: ir.Block) -> None:
    """Small integer buffers that only hold sizes (the shape operand of memref.reshape, built with
    memref.store of symbol values): the host keeps them as Python lists instead of device memory."""
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
            if u.block != block:
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
    options = {"block-size": int, "elements-per-thread": int}
    block_size = 256
    elements_per_thread = 4

    def run(self, op: ir.Operation) -> None:
        bs = getattr(self, "block-size", self.block_size)
        self.ept = max(1, getattr(self, "elements-per-thread", self.elements_per_thread))
        for fn in list(op.regions[0].blocks[0].operations):
            if fn.operation.name != "func.func" or sym.GUARD_FN_ATTR in fn.operation.attributes:
                continue
            if len(fn.regions[0].blocks) == 0:
                continue
            for block in fn.regions[0].blocks:
                mark_host_buffers(block)
                self._map_block(block, bs)

    def _map_block(self, block: ir.Block, bs: int) -> None:
        run: list[ir.Operation] = []
        device_values: list[ir.Value] = []  # scalars computed on the device (results of device ops)

        def from_device(o: ir.Operation) -> bool:
            return any(any(v == d for d in device_values) for v in o.operands)

        held = None  # a fill (scf.parallel storing one value everywhere) not mapped yet: the
        #              reduction right after it may take its value as the initial one instead

        def flush_held() -> None:
            nonlocal held
            if held is not None:
                self._parallel(held, bs)
                held = None

        for child in list(block.operations):
            o = child.operation
            if o.name == "scf.parallel" or (o.name == "scf.for" and _match_reduction(o) is not None):
                self._serial(run)
                run = []
                m = _match_reduction(o)
                if m is not None:
                    init = _fill_value(held, m.store.operands[1]) if held is not None else None
                    if init is not None:
                        held.erase()
                        held = None
                        self.bump("fills-folded")
                    flush_held()
                    self._reduction(o, m, init)
                elif _fill_value(o, None) is not None:
                    flush_held()
                    held = o
                else:
                    flush_held()
                    self._parallel(o, bs)
            elif o.name in BARRIER_HOST_OPS:
                flush_held()
                self._serial(run)
                run = []
            elif _touches_host_buffer(o) or (_is_pure_host_name(o.name) and not from_device(o)):
                if run:  # independent of the open run: evaluate it on the host before the run
                    o.move_before(run[0])
            else:
                flush_held()
                run.append(o)
                device_values.extend(o.results)
        flush_held()
        self._serial(run)

    # -- one thread --------------------------------------------------------------------------
    def _serial(self, ops: list[ir.Operation]) -> None:
        if not ops:
            return
        for o in ops:
            for r in o.results:
                for use in r.uses:
                    owner = use.owner
                    top = _top_in_block(owner, ops[0].block)
                    if top is None or not any(top == x for x in ops):
                        raise located_error(o, f"'{o.name}' computes a value the host needs; "
                                               "the GPU path cannot read device results on the host")
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
    def _reduction(self, root: ir.Operation, m: "_Reduction", init: ir.Value | None = None) -> None:
        idx = ir.IndexType.get()
        T = m.combine.results[0].type
        with ir.InsertionPoint(root), root.location:
            c1 = arith.ConstantOp(idx, 1).result
            nred = m.red_trips[0]
            for t in m.red_trips[1:]:
                nred = arith.MulIOp(nred, t).result
            nout = c1
            for t in m.par_trips:
                nout = t if nout is c1 else arith.MulIOp(nout, t).result
            # threads per block: 32..256, by the reduction length (a warp for short rows)
            block = arith.ConstantOp(idx, 32).result
            for width in (64, 128, 256):
                w = arith.ConstantOp(idx, width).result
                ge = arith.CmpIOp(arith.CmpIPredicate.uge, nred, w).result
                block = arith.SelectOp(ge, w, block).result
            launch = gpu.LaunchOp((nout, c1, c1), (block, c1, c1))
            body = launch.regions[0].blocks[0]
        bx, tx, bdim = body.arguments[0], body.arguments[3], body.arguments[9]
        with ir.InsertionPoint(body), root.location:
            rem = bx
            par_ivs = [None] * len(m.par_trips)
            for k in range(len(m.par_trips) - 1, -1, -1):
                if k == 0:
                    par_ivs[k] = rem
                else:
                    par_ivs[k] = arith.RemUIOp(rem, m.par_trips[k]).result
                    rem = arith.DivUIOp(rem, m.par_trips[k]).result
            ident = arith.ConstantOp(T, m.identity).result
            U = self.ept  # elements per thread and iteration: their loads are in flight together
            stride = arith.MulIOp(bdim, arith.ConstantOp(idx, U).result).result
            rfor = scf.ForOp(tx, nred, stride, [ident])
        if m.parallel is not None:
            for arg, iv in zip(m.parallel.regions[0].blocks[0].arguments, par_ivs):
                arg.replace_all_uses_with(iv)
        for_ivs = [f.regions[0].blocks[0].arguments[0] for f in m.fors]
        with ir.InsertionPoint(rfor.body), root.location:
            iv = rfor.induction_variable
            vals = []
            for u in range(U):
                lin = iv if u == 0 else arith.AddIOp(iv, arith.MulIOp(bdim, arith.ConstantOp(idx, u).result).result).result
                ok = arith.CmpIOp(arith.CmpIPredicate.ult, lin, nred).result if u else None
                safe = arith.SelectOp(ok, lin, iv).result if u else lin
                rem = safe
                mapping = {}
                for k in range(len(m.red_trips) - 1, -1, -1):
                    if k == 0:
                        mapping[for_ivs[k]] = rem
                    else:
                        mapping[for_ivs[k]] = arith.RemUIOp(rem, m.red_trips[k]).result
                        rem = arith.DivUIOp(rem, m.red_trips[k]).result
                for o in m.value_ops:
                    _clone_mapped(o, mapping)
                v = mapping.get(m.value, m.value)
                vals.append(arith.SelectOp(ok, v, ident).result if u else v)
            attrs = {k: m.combine.attributes[k] for k in m.combine.attributes}

            def comb(a, b):
                return ir.Operation.create(m.combine.name, results=[T], operands=[a, b], attributes=attrs).results[0]

            while len(vals) > 1:  # a tree: fewer dependent steps
                vals = [comb(vals[i], vals[i + 1]) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
            scf.YieldOp([comb(rfor.inner_iter_args[0], vals[0])])
        with ir.InsertionPoint(body), root.location:
            total = gpu.AllReduceOp(rfor.results[0], op=ir.Attribute.parse(f"#gpu<all_reduce_op {m.kind}>"),
                                    uniform=True).result
            zero = arith.ConstantOp(idx, 0).result
            first = arith.CmpIOp(arith.CmpIPredicate.eq, tx, zero).result
            ifop = scf.IfOp(first)
            gpu.TerminatorOp()
        with ir.InsertionPoint(ifop.then_block), root.location:
            y = scf.YieldOp([])
        for o in m.index_ops + [m.acc_load, m.combine, m.store]:
            o.move_before(y.operation)
        for i, v in enumerate(m.combine.operands):
            if v == m.value:
                m.combine.operands[i] = total
        if init is not None:  # the folded fill's value instead of reading it back
            m.acc_load.results[0].replace_all_uses_with(init)
            m.acc_load.erase()
        root.erase()
        self.bump("reduction-launches")

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

        def delinearize(lin: ir.Value) -> list:
            ivs = [None] * n
            rem = lin
            for k in range(n - 1, -1, -1):
                if k == 0:
                    i = rem
                else:
                    i = arith.RemUIOp(rem, trips[k]).result
                    rem = arith.DivUIOp(rem, trips[k]).result
                if not (_const(lbs[k]) == 0 and _const(steps[k]) == 1):
                    i = arith.AddIOp(lbs[k], arith.MulIOp(i, steps[k]).result).result
                ivs[k] = i
            return ivs

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
            # `ept` elements per thread, `bs` apart (each warp access stays coalesced). The body is
            # copied per element; all copies load and compute first (indices clamped into range), then
            # each stores under its own bounds check, so the loads of all elements are in flight together.
            stores: list = []
            with ir.InsertionPoint(term), p.location:
                zero = arith.ConstantOp(idx, 0).result
                for j in range(ept):
                    lin = base if j == 0 else arith.AddIOp(base, arith.ConstantOp(idx, j * bs).result).result
                    ok = arith.CmpIOp(arith.CmpIPredicate.ult, lin, total).result
                    safe = arith.SelectOp(ok, lin, zero).result
                    mapping = {a: iv for a, iv in zip(pbody.arguments, delinearize(safe))}
                    for o in body_ops:
                        if o.name == "memref.store":
                            stores.append((ok, o, mapping))
                            continue
                        _clone_mapped(o, mapping)
                for ok, o, mapping in stores:
                    ifop = scf.IfOp(ok)
                    with ir.InsertionPoint(ifop.then_block):
                        _clone_mapped(o, mapping)
                        scf.YieldOp([])
        p.erase()
        self.bump("parallel-launches")


def _clone_mapped(o, mapping: dict) -> None:
    """Clone `o` at the insertion point with its operands remapped; its results join `mapping`."""
    c = o.clone()
    for i, v in enumerate(list(c.operands)):
        if v in mapping:
            c.operands[i] = mapping[v]
    for r0, r1 in zip(o.results, c.results):
        mapping[r0] = r1


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
    if ir.MemRefType(mem.type).rank != len(list(body.arguments)) or list(st.operands)[2:] != list(body.arguments):
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


def _match_reduction(root: ir.Operation) -> "_Reduction | None":
    """The reduction pattern of linalg's parallel-loop lowering, or None (mapped one thread per output)."""
    parallel = None
    par_trips: list = []
    top = root
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
    fors: list = []
    f = top
    while f is not None and f.name == "scf.for":
        fv = f.opview
        if len(f.results) or _const(fv.lowerBound) != 0 or _const(fv.step) != 1:
            return None
        fors.append(f)
        ops = [o.operation for o in f.regions[0].blocks[0].operations]
        inner = [o for o in ops if o.name != "scf.yield"]
        if len(inner) == 1 and inner[0].name == "scf.for":
            f = inner[0]
        else:
            f = None
    if not fors:
        return None
    loop_blocks = [x.regions[0].blocks[0] for x in fors] + ([parallel.regions[0].blocks[0]] if parallel else [])
    for x in fors:  # bounds must be computable outside the nest
        if _defined_in(x.opview.upperBound, loop_blocks):
            return None
    body = fors[-1].regions[0].blocks[0]
    ops = [o.operation for o in body.operations if o.operation.name != "scf.yield"]
    stores = [o for o in ops if o.name == "memref.store"]
    if len(stores) != 1:
        return None
    store = stores[0]
    out = store.operands[1]
    idxs = list(store.operands)[2:]
    comb = store.operands[0].owner
    if isinstance(comb, ir.Block):
        return None
    comb = comb.operation if hasattr(comb, "operation") else comb
    if comb.name not in _COMBINE or not (comb.block == body) or str(comb.results[0].type) not in ("f32", "i32"):
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
    value_ops = [o for o in ops if not any(o == x for x in [load, comb, store] + index_ops)]
    for o in value_ops:
        if o.name in ("memref.store", "memref.copy") or o.regions:
            return None
        if o.name == "memref.load" and o.operands[0] == out:
            return None
    return _Reduction(parallel=parallel, par_trips=par_trips, fors=fors,
                      red_trips=[x.opview.upperBound for x in fors], value_ops=value_ops, value=value,
                      acc_load=load, combine=comb, store=store, index_ops=index_ops, kind=_COMBINE[comb.name][0])


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
        if o.block == block:
            return o
        parent = o.parent
        if parent is None:
            return None
        o = parent.operation if hasattr(parent, "operation") else parent
    return None
