"""Ask the backend for more resident blocks of elementwise kernels: `nvvm.minctasm` on their gpu.func.

An elementwise kernel (no barrier, block reduction or shuffle: threads never wait for each other)
hides memory latency with resident warps; ptxas, left alone, may spend registers on instruction-level
parallelism instead (a bf16 gelu with 8 lanes per thread took 64 registers: 4 blocks of 256 threads
per SM). Option `elementwise-blocks=N` (default 8; 0: off) sets `nvvm.minctasm = N` on every such
kernel whose block size is known (`known_block_size`, at most 2048 / N threads) and whose path that
loads most (the 128-bit, flat or scalar one: an scf.if's regions are alternatives) loads at most
`max-load-bytes` (64) per thread, so ptxas limits its registers to fit N blocks per
SM (65536 / (N * threads): 32 registers for 8 blocks of 256 threads). Kernels that synchronize, and
wide ones (many inputs: their values would not fit those registers), are left alone.

Measured on an H100 (benchmarks/bench_gpu_variants.py, gelu(x * w + b) at [8192..32768, 4096]):
bf16 70-72 % of the copy peak without the hint, 79-81 % with 6 blocks, 82-85 % with 8; fp32 92-94 %,
92-94 %, 99-101 %.

Before:
  gpu.func @main_kernel(...) kernel attributes {known_block_size = array<i32: 256, 1, 1>} { ... }
After (elementwise-blocks=6):
  gpu.func @main_kernel(...) kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 6 : i32} { ... }
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes.registry import SymPass, located_error, register

_SYNC = ("gpu.barrier", "gpu.all_reduce", "gpu.shuffle", "gpu.subgroup_reduce", "nvvm.barrier0", "nvvm.shfl.sync")


def _synchronizes(op: ir.Operation) -> bool:
    for region in op.regions:
        for block in region.blocks:
            for c in block.operations:
                if c.operation.name in _SYNC or _synchronizes(c.operation):
                    return True
    return False


def _load_bytes_of(c: ir.Operation) -> int:
    """Bytes a vector.load or memref.load reads."""
    t = c.results[0].type
    n, et = 1, t
    if c.name == "vector.load":
        vt = ir.VectorType(t)
        et = vt.element_type
        for d in vt.shape:
            n *= d
    return n * max(1, getattr(et, "width", 64) // 8)


def _region_load_bytes(region: ir.Region) -> int:
    total = 0
    for block in region.blocks:
        for c in block.operations:
            c = c.operation
            if c.name in ("vector.load", "memref.load"):
                total += _load_bytes_of(c)
            elif c.name == "scf.if":  # alternatives: the path that loads more
                total += max((_region_load_bytes(r) for r in c.regions), default=0)
            else:
                total += sum(_region_load_bytes(r) for r in c.regions)
    return total


def _path_load_bytes(op: ir.Operation) -> int:
    """Bytes one thread loads on the path through `op` that loads the most. An scf.if's regions are
    alternatives (the 128-bit path, the flat path at odd sizes, the scalar path: counting them all
    put a kernel with a flat path over the limit, 64 registers instead of 32, 20 % slower at
    aligned sizes); ops in sequence add up, a loop body counts once."""
    return sum(_region_load_bytes(r) for r in op.regions)


@register
class GpuOccupancy(SymPass):
    """Set nvvm.minctasm on elementwise kernels (option elementwise-blocks; 0: off)."""

    name = "sym-gpu-occupancy"
    options = {"elementwise-blocks": int, "max-load-bytes": int}
    elementwise_blocks = 8
    max_load_bytes = 64

    def run(self, op: ir.Operation) -> None:
        n = getattr(self, "elementwise-blocks", self.elementwise_blocks)
        if n < 0 or n > 32:
            raise located_error(op, f"elementwise-blocks must be in 0..32, not {n}")
        if not n:
            return
        limit = getattr(self, "max-load-bytes", self.max_load_bytes)
        for child in op.regions[0].blocks[0].operations:
            m = child.operation
            if m.name != "gpu.module":
                continue
            for k in m.regions[0].blocks[0].operations:
                k = k.operation
                if k.name != "gpu.func" or "kernel" not in k.attributes or "known_block_size" not in k.attributes:
                    continue
                threads = 1
                for d in ir.DenseI32ArrayAttr(k.attributes["known_block_size"]):
                    threads *= d
                if n * threads > 2048 or _synchronizes(k) or _path_load_bytes(k) > limit:
                    continue
                k.attributes["nvvm.minctasm"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), n)
                self.bump("kernels-hinted")
