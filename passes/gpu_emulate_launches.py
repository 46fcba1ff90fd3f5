"""Run `gpu.launch` regions on the host as loops: a testing aid that executes the GPU mapping on the CPU.

Each launch becomes `for bx < grid.x { for ty < block.y { for tx < block.x { body } } }` (the z
ids are 0, the grid and block sizes the launch's). A launch with a `gpu.barrier`, `gpu.all_reduce`
or `gpu.shuffle` runs one thread in x per block and y: a barrier is then a no-op, a block reduction
the thread's own value and a shuffle the thread's own value too. Kernels written for any x size
(sym-gpu-map-parallel's: threads stride by the block's x size, combine across x, and index
independent work by y) compute the same elements that way; what this checks is which elements
each thread and phase computes, not the cross-thread combination (upstream's gpu.all_reduce and
gpu.shuffle, checked on a GPU). The `gpu-emulated` pipeline
(`MLIR_SYM_EMULATE_GPU=1` for CPU artifacts) runs the GPU mapping through it and the CPU lowering.

Before:
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, ...) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, ...) {
    BODY(%bx, %tx, %sx)
    gpu.terminator
  }
After:
  scf.for %bx = %c0 to %g step %c1 {
    scf.for %ty = %c0 to %c1 step %c1 {
      scf.for %tx = %c0 to %c256 step %c1 {
        BODY(%bx, %tx, %c256)
      }
    }
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, scf

from mlir_sym.passes.registry import SymPass, located_error, register


def _ops(block: ir.Block) -> list[ir.Operation]:
    return [o.operation for o in block.operations]


def _contains(op: ir.Operation, names: tuple[str, ...]) -> bool:
    return any(o.name in names or _contains(o, names)
               for region in op.regions for block in region.blocks for o in _ops(block))


def _launches(op: ir.Operation, out: list) -> list:
    for region in op.regions:
        for block in region.blocks:
            for o in _ops(block):
                if o.name == "gpu.launch":
                    out.append(o)
                else:
                    _launches(o, out)
    return out


def _strip_block_sync(op: ir.Operation) -> None:
    for region in op.regions:
        for block in region.blocks:
            for o in _ops(block):
                if o.name == "gpu.barrier":
                    o.erase()
                elif o.name == "gpu.all_reduce" and not o.regions[0].blocks:
                    o.results[0].replace_all_uses_with(o.operands[0])
                    o.erase()
                elif o.name == "gpu.shuffle":  # (value, valid): the thread's own value
                    with ir.InsertionPoint(o), o.location:
                        valid = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
                    o.results[0].replace_all_uses_with(o.operands[0])
                    o.results[1].replace_all_uses_with(valid)
                    o.erase()
                else:
                    _strip_block_sync(o)


@register
class GpuEmulateLaunches(SymPass):
    """Turn gpu.launch into host loops over blocks and threads (one x thread per block when its threads combine)."""

    name = "sym-gpu-emulate-launches"

    def run(self, op: ir.Operation) -> None:
        idx = ir.IndexType.get()
        for launch in _launches(op, []):
            if "sym.warp_synchronous" in launch.attributes:  # sym-gpu-attention's: its lanes exchange values
                raise located_error(launch, "a warp-synchronous launch (sym-gpu-attention) needs 32 lanes a warp "
                                            "and cannot be emulated by one thread")
            lv = launch.opview
            body = launch.regions[0].blocks[0]
            cooperative = _contains(launch, ("gpu.barrier", "gpu.all_reduce", "gpu.shuffle"))
            with ir.InsertionPoint(launch), launch.location:
                c0 = arith.ConstantOp(idx, 0).result
                c1 = arith.ConstantOp(idx, 1).result
                nthreads = c1 if cooperative else lv.blockSizeX
                outer = scf.ForOp(c0, lv.gridSizeX, c1)
            with ir.InsertionPoint(outer.body), launch.location:
                rows = scf.ForOp(c0, lv.blockSizeY, c1)
                scf.YieldOp([])
            with ir.InsertionPoint(rows.body), launch.location:
                inner = scf.ForOp(c0, nthreads, c1)
                scf.YieldOp([])
            with ir.InsertionPoint(inner.body), launch.location:
                y = scf.YieldOp([])
            values = [outer.induction_variable, c0, c0, inner.induction_variable, rows.induction_variable, c0,
                      lv.gridSizeX, c1, c1, nthreads, lv.blockSizeY, c1]  # block ids, thread ids, grid, block
            for arg, v in zip(list(body.arguments), values):
                arg.replace_all_uses_with(v)
            for o in _ops(body):
                if o.name == "gpu.terminator":
                    o.erase()
                else:
                    o.move_before(y.operation)
            _strip_block_sync(inner.operation)
            launch.erase()
            self.bump("launches-emulated")
