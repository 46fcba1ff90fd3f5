"""What the passes over outlined kernels share: the gpu.modules of one kernel each, and pointing the
`gpu.launch_func` ops (anywhere in host code, nested control flow included) at other kernels."""
from __future__ import annotations

from typing import Callable, Iterator

from torch_mlir import ir


def single_kernel_modules(op: ir.Operation) -> Iterator[tuple[ir.Operation, str, ir.Operation]]:
    """(gpu.module, its name, its one kernel gpu.func) for each top-level gpu.module holding exactly
    one kernel."""
    for child in op.regions[0].blocks[0].operations:
        m = child.operation
        if m.name != "gpu.module":
            continue
        kernels = [k.operation for k in m.regions[0].blocks[0].operations
                   if k.operation.name == "gpu.func" and "kernel" in k.operation.attributes]
        if len(kernels) == 1:
            yield m, ir.StringAttr(m.attributes["sym_name"]).value, kernels[0]


def retarget_launches(op: ir.Operation, target: Callable[[list[str]], list[str] | None]) -> int:
    """Set the kernel of every gpu.launch_func under `op` to `target(its kernel path)` where that is not
    None (a path is [module, kernel]); returns how many launches changed."""
    changed = 0

    def walk(o: ir.Operation) -> None:
        nonlocal changed
        for region in o.regions:
            for block in region.blocks:
                for c in block.operations:
                    c = c.operation
                    if c.name == "gpu.launch_func":
                        new = target(list(ir.SymbolRefAttr(c.attributes["kernel"]).value))
                        if new is not None:
                            c.attributes["kernel"] = ir.SymbolRefAttr.get(new)
                            changed += 1
                    elif c.name != "gpu.module":
                        walk(c)

    walk(op)
    return changed
