"""Lower `gpu.all_reduce` in launches of whole warps to xor shuffles: no partial-warp paths.

Upstream's lowering (in convert-gpu-to-nvvm) handles any block size: each warp reduction has a
full-warp and a partial-warp path, then the warps' values go through shared memory with barriers and
a second, again two-path, warp reduction, even for a block of one warp. A layer norm kernel of
GPT-2 (two reductions, the row in registers and a looping fallback) had 82 shuffles and 212 basic
blocks of LLVM IR; the partial paths never run where sym-gpu-map-parallel chose the block, a
constant multiple of 32 threads.

For a `uniform` all_reduce of f32 or i32 (no region: a named combining op) in a launch whose block
is a multiple of 32 in x (up to 1024: a constant, or a select among such constants) and 1 in y and z:
  v = combine(v, shuffle xor v by 16, 8, 4, 2, 1)   every lane holds its warp's total
and with more than one warp, a workgroup buffer of a value per warp (an attribution of the launch,
one per reduction):
  lane 0 stores v at [warp]; barrier; every thread combines the buffer's values in warp order (a
  loop over the block's warps when the size is chosen at run time);
  barrier (the buffer may be written again: a reduction in a loop)
Other all_reduces (other types, block sizes, non-uniform) keep upstream's lowering, and so does
every one with `max-block=0` (the largest block size lowered here; 1024). Runs after the
GPU mapping's emulation point (the emulation runs one lane in x: a shuffle there returns the lane's
own value).

Before:
  gpu.launch ... threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %t = gpu.all_reduce add %v uniform {} : (f32) -> f32
After:
  gpu.launch ... threads(...) in (%sx = %c64, ...) workgroup(%w : memref<2xf32, #gpu.address_space<workgroup>>) {
    %s0, %ok0 = gpu.shuffle xor %v, %c16_i32, %c32_i32 : f32
    %a0 = arith.addf %v, %s0 : f32
    ... (offsets 8, 4, 2, 1)
    scf.if %lane_is_0 { memref.store %a4, %w[%warp] }
    gpu.barrier
    %t = arith.addf (memref.load %w[0]), (memref.load %w[1]) : f32
    gpu.barrier
"""
from __future__ import annotations

import re

from torch_mlir import ir
from torch_mlir.dialects import arith, gpu, memref, scf

from mlir_sym.passes._compute_common import constant_value, defining_op, ops_named
from mlir_sym.passes.registry import SymPass, register

WARP = 32
_FLOAT = {"add": "arith.addf", "mul": "arith.mulf", "minnumf": "arith.minnumf", "maxnumf": "arith.maxnumf",
          "minimumf": "arith.minimumf", "maximumf": "arith.maximumf"}
_INT = {"add": "arith.addi", "mul": "arith.muli", "minsi": "arith.minsi", "maxsi": "arith.maxsi",
        "minui": "arith.minui", "maxui": "arith.maxui", "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}


def _possible(v: ir.Value, depth: int = 0) -> set[int] | None:
    """The values `v` may take: a constant, or a tree of arith.select of constants (the block size
    sym-gpu-map-parallel picks from a row length); None when not such a tree."""
    c = constant_value(v)
    if isinstance(c, int):
        return {c}
    o = defining_op(v)
    if depth > 16 or o is None or o.name != "arith.select":
        return None
    taken = _constant_condition(o.operands[0])
    if taken is not None:
        return _possible(o.operands[1 if taken else 2], depth + 1)
    a, b = _possible(o.operands[1], depth + 1), _possible(o.operands[2], depth + 1)
    return None if a is None or b is None else a | b


_PREDICATES = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b, 3: lambda a, b: a <= b,
               4: lambda a, b: a > b, 5: lambda a, b: a >= b, 6: lambda a, b: a < b, 7: lambda a, b: a <= b,
               8: lambda a, b: a > b, 9: lambda a, b: a >= b}  # arith.cmpi's, on non-negative sizes


def _constant_condition(c: ir.Value) -> bool | None:
    """An arith.cmpi of two non-negative constants (a static row length against a threshold), evaluated."""
    o = defining_op(c)
    if o is None or o.name != "arith.cmpi":
        return None
    a, b = constant_value(o.operands[0]), constant_value(o.operands[1])
    if not isinstance(a, int) or not isinstance(b, int) or a < 0 or b < 0:
        return None
    return _PREDICATES[ir.IntegerAttr(o.attributes["predicate"]).value](a, b)


def _block_x(launch: ir.Operation) -> tuple[ir.Value, set[int]] | None:
    """The launch's block size in x and the values it may take, when y and z are 1; else None."""
    segments = list(ir.DenseI32ArrayAttr(launch.attributes["operandSegmentSizes"]))
    first = segments[0] + 3  # async dependencies, then grid x, y, z, then block x, y, z
    if constant_value(launch.operands[first + 1]) != 1 or constant_value(launch.operands[first + 2]) != 1:
        return None
    sizes = _possible(launch.operands[first])
    return None if sizes is None else (launch.operands[first], sizes)


def _workgroup_count(launch: ir.Operation) -> int:
    return ir.IntegerAttr(launch.attributes["workgroup_attributions"]).value \
        if "workgroup_attributions" in launch.attributes else 0


def _combiner(op: ir.Operation) -> str | None:
    """The arith op combining two values of this all_reduce, when we lower it; else None."""
    if len(op.regions[0].blocks) or "op" not in op.attributes or "uniform" not in op.attributes:
        return None
    m = re.search(r"all_reduce_op\s+(\w+)", str(op.attributes["op"]))
    t = str(op.results[0].type)
    if m is None or t not in ("f32", "i32"):
        return None
    return (_FLOAT if t == "f32" else _INT).get(m.group(1))


@register
class GpuWarpReduce(SymPass):
    """Lower gpu.all_reduce (f32 / i32) in launches of whole warps to xor shuffles and a value per warp."""

    name = "sym-gpu-warp-reduce"
    options = {"max-block": int}
    max_block = 1024  # the largest block size lowered here (0: none, upstream's lowering everywhere)

    def run(self, op: ir.Operation) -> None:
        top = min(getattr(self, "max-block", self.max_block), 1024)
        for launch in ops_named(op, {"gpu.launch"}):
            block = _block_x(launch)
            if block is None or any(b % WARP or not WARP <= b <= top for b in block[1]):
                continue
            sizes = block[1]
            warps = next(iter(sizes)) // WARP if len(sizes) == 1 else -(max(sizes) // WARP)
            if warps != 1 and len(launch.regions[0].blocks[0].arguments) != 12 + _workgroup_count(launch):
                continue  # private attributions follow the workgroup ones: no buffer appended here
            for red in ops_named(launch, {"gpu.all_reduce"}):
                combine = _combiner(red)
                if combine is None:
                    continue
                self._lower(launch, red, combine, warps)
                self.bump("all-reduces-as-shuffles")

    def _lower(self, launch: ir.Operation, red: ir.Operation, combine: str, warps: int) -> None:
        """`warps`: the block's warps, or minus the most it may have (a block size known at run time)."""
        body = launch.regions[0].blocks[0]
        t = red.results[0].type
        i32, idx = ir.IntegerType.get_signless(32), ir.IndexType.get()
        with ir.InsertionPoint(red), red.location:
            def join(a: ir.Value, b: ir.Value) -> ir.Value:
                return ir.Operation.create(combine, results=[t], operands=[a, b]).results[0]

            v = red.operands[0]
            width = arith.ConstantOp(i32, WARP).result
            xor = ir.Attribute.parse("#gpu<shuffle_mode xor>")
            for off in (16, 8, 4, 2, 1):
                s = gpu.ShuffleOp(v, arith.ConstantOp(i32, off).result, width, xor).results[0]
                v = join(v, s)
            if warps != 1:
                buf = self._workgroup_buffer(launch, body, t, abs(warps))
                tx = body.arguments[3]
                c32 = arith.ConstantOp(idx, WARP).result
                lane0 = arith.CmpIOp(arith.CmpIPredicate.eq, arith.RemUIOp(tx, c32).result,
                                     arith.ConstantOp(idx, 0).result).result
                store = scf.IfOp(lane0)
                with ir.InsertionPoint(store.then_block):
                    memref.StoreOp(v, buf, [arith.DivUIOp(tx, c32).result])
                    scf.YieldOp([])
                gpu.BarrierOp()
                v = memref.LoadOp(buf, [arith.ConstantOp(idx, 0).result]).result
                if warps > 0:
                    for w in range(1, warps):
                        v = join(v, memref.LoadOp(buf, [arith.ConstantOp(idx, w).result]).result)
                else:  # as many warps as the block size (body argument 9) has
                    n = arith.DivUIOp(body.arguments[9], c32).result
                    loop = scf.ForOp(arith.ConstantOp(idx, 1).result, n, arith.ConstantOp(idx, 1).result, [v])
                    with ir.InsertionPoint(loop.body):
                        w = memref.LoadOp(buf, [loop.induction_variable]).result
                        scf.YieldOp([join(loop.inner_iter_args[0], w)])
                    v = loop.results[0]
                gpu.BarrierOp()
        red.results[0].replace_all_uses_with(v)
        red.erase()

    @staticmethod
    def _workgroup_buffer(launch: ir.Operation, body: ir.Block, t: ir.Type, n: int) -> ir.Value:
        """A new workgroup attribution of the launch: memref<n x t> in shared memory."""
        count = _workgroup_count(launch)
        space = ir.Attribute.parse("#gpu.address_space<workgroup>")
        arg = body.add_argument(ir.MemRefType.get([n], t, memory_space=space), launch.location)
        launch.attributes["workgroup_attributions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), count + 1)
        return arg
