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
    options = {"block-size": int}
    block_size = 256

    def run(self, op: ir.Operation) -> None:
        bs = getattr(self, "block-size", self.block_size)
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

        for child in list(block.operations):
            o = child.operation
            if o.name == "scf.parallel":
                self._serial(run)
                run = []
                self._parallel(o, bs)
            elif o.name in BARRIER_HOST_OPS:
                self._serial(run)
                run = []
            elif _touches_host_buffer(o) or (_is_pure_host_name(o.name) and not from_device(o)):
                if run:  # independent of the open run: evaluate it on the host before the run
                    o.move_before(run[0])
            else:
                run.append(o)
                device_values.extend(o.results)
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

    # -- parallel nest -------------------------------------------------------------------------
    def _parallel(self, p: ir.Operation, bs: int) -> None:
        if len(p.results):
            raise located_error(p, "scf.parallel with reductions (results) is not supported on the GPU path")
        pv = p.opview
        lbs, ubs, steps = list(pv.lowerBound), list(pv.upperBound), list(pv.step)
        n = len(lbs)
        idx = ir.IndexType.get()
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
            grid = arith.CeilDivUIOp(total, cbs).result
            launch = gpu.LaunchOp((grid, c1, c1), (cbs, c1, c1))
            body = launch.regions[0].blocks[0]
        bx, tx = body.arguments[0], body.arguments[3]
        with ir.InsertionPoint(body), p.location:
            cbs_in = arith.ConstantOp(idx, bs).result
            lin = arith.AddIOp(arith.MulIOp(bx, cbs_in).result, tx).result
            ok = arith.CmpIOp(arith.CmpIPredicate.ult, lin, total).result
            ifop = scf.IfOp(ok)
            gpu.TerminatorOp()
        then = ifop.then_block
        with ir.InsertionPoint(then), p.location:
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
            y = scf.YieldOp([])
        pbody = p.regions[0].blocks[0]
        for arg, iv in zip(pbody.arguments, ivs):
            arg.replace_all_uses_with(iv)
        for child in list(pbody.operations):
            o = child.operation
            if o.name == "scf.reduce":
                continue
            o.move_before(y.operation)
        p.erase()
        self.bump("parallel-launches")


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


_LIBRARY_OPS = {"linalg.matmul": "matmul", "linalg.batch_matmul": "batch_matmul"}
_LIBRARY_ELEMENTS = {"f32", "f64", "f16", "bf16"}
_DEFAULT_MAPS = {
    "linalg.matmul": ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"],
    "linalg.batch_matmul": ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)",
                            "(d0, d1, d2, d3) -> (d0, d1, d2)"],
}


@register
class GpuLibraryCalls(SymPass):
    """Replace linalg.matmul / linalg.batch_matmul on memrefs by calls the GPU runtime serves with cuBLAS.

    `linalg.matmul ins(%a, %b) outs(%c)` becomes `func.call @__sym_matmul_<n>(%a, %b, %c)` (C += A*B);
    when the op right before it fills %c with zero, the fill goes and the call is
    `@__sym_matmul_init_<n>` (C = A*B). The callee is a private declaration; the GPU runtime maps the
    name to torch.mm / addmm_ (bmm / baddbmm_ for batches) on the same buffers. Matmuls with other
    element types or explicit indexing maps are left to the loop lowering."""

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
                    prev = o

    @staticmethod
    def _eligible(o: ir.Operation) -> bool:
        if len(o.results):
            return False
        if "indexing_maps" in o.attributes:
            maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(o.attributes["indexing_maps"])]
            if maps != _DEFAULT_MAPS[o.name]:
                return False
        if len(o.operands) != 3 or not all(isinstance(v.type, ir.MemRefType) for v in o.operands):
            return False
        return all(str(ir.MemRefType(v.type).element_type) in _LIBRARY_ELEMENTS for v in o.operands) and \
            len({str(ir.MemRefType(v.type).element_type) for v in o.operands}) == 1

    def _replace(self, module: ir.Operation, o: ir.Operation, prev, decls: dict[str, str]) -> None:
        from torch_mlir.dialects import func as func_d

        kind = _LIBRARY_OPS[o.name]
        a, b, c = list(o.operands)
        init = prev is not None and prev.name == "linalg.fill" and len(prev.operands) == 2 \
            and prev.operands[1] == c and _is_zero(prev.operands[0])
        if init:
            kind += "_init"
            prev.erase()
        types = [v.type for v in (a, b, c)]
        sig = f"{kind}:{','.join(str(t) for t in types)}"
        if sig not in decls:
            name = f"__sym_{kind}_{len(decls)}"
            decls[sig] = name
            with ir.InsertionPoint(module.regions[0].blocks[0]), o.location:
                f = func_d.FuncOp(name, ir.FunctionType.get(types, []), visibility="private")
                f.operation.attributes["sym.library_call"] = ir.StringAttr.get(kind)
        with ir.InsertionPoint(o), o.location:
            func_d.CallOp([], ir.FlatSymbolRefAttr.get(decls[sig]), [a, b, c])
        o.erase()
        self.bump("library-calls")


def _is_zero(v: ir.Value) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value == 0.0
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value == 0
    return False


@register
class GpuUniqueKernelNames(SymPass):
    """Name each outlined kernel after its gpu.module (`@main_kernel_3::@main_kernel_3`), so that the
    kernels of all modules can share one PTX module."""

    name = "sym-gpu-unique-kernel-names"

    def run(self, op: ir.Operation) -> None:
        renames: dict[str, tuple[str, str]] = {}
        for child in op.regions[0].blocks[0].operations:
            m = child.operation
            if m.name != "gpu.module":
                continue
            mname = ir.StringAttr(m.attributes["sym_name"]).value
            kernels = [k.operation for k in m.regions[0].blocks[0].operations
                       if k.operation.name == "gpu.func" and "kernel" in k.operation.attributes]
            if len(kernels) != 1:
                continue
            k = kernels[0]
            old = ir.StringAttr(k.attributes["sym_name"]).value
            if old != mname:
                k.attributes["sym_name"] = ir.StringAttr.get(mname)
                renames[f"@{mname}::@{old}"] = (mname, mname)
        if not renames:
            return

        def walk(o: ir.Operation) -> None:
            for region in o.regions:
                for block in region.blocks:
                    for c in block.operations:
                        c = c.operation
                        if c.name == "gpu.launch_func":
                            key = str(c.attributes["kernel"])
                            if key in renames:
                                c.attributes["kernel"] = ir.SymbolRefAttr.get(list(renames[key]))
                                self.bump("kernels-renamed")
                        else:
                            walk(c)

        walk(op)


_NESTED_ASSERT_MARKER = "__mlir_sym_nested_assert"  # sym-defer-nested-asserts' marker (pipelines.py)


@register
class GpuDeviceAsserts(SymPass):
    """Inside gpu.modules, turn the marker calls of sym-defer-nested-asserts back into cf.assert, which
    convert-gpu-to-nvvm lowers to a device-side assertion (`__assertfail`, as CUDA's assert()): a bad
    index (embedding, gather) stops the kernel with the check's message instead of reading out of
    bounds. The marker declarations copied into the gpu.modules go."""

    name = "sym-gpu-device-asserts"

    def run(self, op: ir.Operation) -> None:
        from torch_mlir.dialects import cf

        for child in op.regions[0].blocks[0].operations:
            m = child.operation
            if m.name != "gpu.module":
                continue
            calls: list[ir.Operation] = []

            def walk(o: ir.Operation) -> None:
                for region in o.regions:
                    for block in region.blocks:
                        for c in block.operations:
                            c = c.operation
                            if c.name == "func.call" and ir.FlatSymbolRefAttr(c.attributes["callee"]).value == _NESTED_ASSERT_MARKER:
                                calls.append(c)
                            else:
                                walk(c)

            walk(m)
            for c in calls:
                msg = ir.StringAttr(c.attributes["sym.assert_msg"]).value if "sym.assert_msg" in c.attributes else "check failed"
                with ir.InsertionPoint(c), c.location:
                    cf.AssertOp(c.operands[0], msg)
                c.erase()
                self.bump("device-asserts")
            for f in list(m.regions[0].blocks[0].operations):
                f = f.operation
                if f.name == "func.func" and ir.StringAttr(f.attributes["sym_name"]).value == _NESTED_ASSERT_MARKER:
                    f.erase()
