"""Move a loop nest over a row group's rows up to the group, past nests it does not depend on, so that
sym-gpu-map-parallel runs it in the group's launch.

sym-gpu-map-parallel makes one launch of consecutive nests over the same rows (a row group: a layer
norm's statistics, then the nests that read them row by row). The order of the nests is torch-mlir's,
which is the FX graph's: a layer norm's backward computes its per-row sums, then its weight and bias
grads (reductions over the rows, two column launches), then the input's grad, which reads the per-row
sums row by row. Between the sums and the input's grad the column reductions cut the group: the grad
was a launch of its own that read the rows again (4 launches a layer norm instead of 3; 9 of them in
the training benchmark's bf16 step).

Runs on the bufferized function after `convert-linalg-to-parallel-loops`, right before
sym-gpu-map-parallel. In each block, a nest N (an `scf.parallel` without results, or a reduction nest)
that would join the rows of an earlier row reduction R (sym-gpu-map-parallel's `_joins_rows`) moves
to just after R's group when the ops between them are:
  * nests that neither write a buffer N accesses nor access a buffer N writes (buffers by their root
    allocation or argument), and
  * host ops without effects (allocations, views, sizes, arithmetic), which stay; those that N uses
    and that lie after the group's last nest move up with it, in order (those before it already
    dominate N's new place, and may have users before it).
Anything else between them (a library call, a copy, control flow, a device op out of nests) stops the
search. Statistics: `nests-moved`.

Before (R: row sums into %s; C: a column sum of %x; N: reads %s at its row):
  scf.parallel (%i) ... { scf.for %j ... { %s[%i] += %x[%i, %j] } }     // R
  scf.parallel (%j) ... { scf.for %i ... { %c[%j] += %x[%i, %j] } }     // C
  scf.parallel (%i, %j) ... { %y[%i, %j] = %x[%i, %j] - %s[%i] }        // N
After: R, N, C.
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import compute_funcs, defining_op, root_buffer, walk_ops
from mlir_sym.passes.gpu_map_parallel import (_is_pure_host_name, _joins_rows, _match_argreduce, _match_reduction,
                                              _row_trips)
from mlir_sym.passes.registry import SymPass, register


def _is_nest(o: ir.Operation) -> bool:
    return (o.name == "scf.parallel" and not len(o.results)) or (
        o.name == "scf.for" and (_match_reduction(o) is not None or _match_argreduce(o) is not None))


def _buffers(o: ir.Operation) -> tuple[set, set] | None:
    """(roots read, roots written) by the accesses inside nest `o`; None if a nested op uses a buffer
    other than by `memref.load` / `memref.store` / `memref.dim` (an atomic, a vector op, a copy) or is
    a call (a deferred check of device values): we do not place those. A function argument is a root of its own: inputs may alias one
    another but are never written (sym-readonly-inputs), and the buffers written are our own or
    out-params, which the runtime allocates for the call."""
    reads, writes = set(), set()
    for c in walk_ops(o):
        if c.name == "memref.load":
            reads.add(root_buffer(c.operands[0]))
        elif c.name == "memref.store":
            writes.add(root_buffer(c.operands[1]))
        elif c.name == "func.call" or (c.name != "memref.dim" and any(
                isinstance(v.type, ir.MemRefType) for v in c.operands)):
            return None  # (a call: a deferred check of device values may be one; its order stays)
    return reads, writes


def _independent(a: tuple, b: tuple) -> bool:
    (ra, wa), (rb, wb) = a, b
    return not (wa & (rb | wb) or wb & ra)


def _defined_between(v: ir.Value, ops: list) -> ir.Operation | None:
    op = defining_op(v)
    return op if op is not None and any(op == o for o in ops) else None


@register
class GpuGatherRows(SymPass):
    """Move a nest over a row group's rows up to the group, past nests it does not depend on (one launch with the group in sym-gpu-map-parallel)."""

    name = "sym-gpu-gather-rows"

    def run(self, op: ir.Operation) -> None:
        for fn in compute_funcs(op):
            for block in fn.regions[0].blocks:
                self._block(block)

    def _block(self, block: ir.Block) -> None:
        self._seen: dict = {}  # nest -> (its buffers, its rows): nests are read once, not per candidate
        ops = [c.operation for c in block.operations]
        i = 0
        while i < len(ops):
            n = ops[i]
            moved = _is_nest(n) and self._gather(n, ops, i)
            if moved:
                ops = [c.operation for c in block.operations]
            i += 1

    def _facts(self, o: ir.Operation) -> tuple:
        """(buffers, rows, is a reduction) of nest `o`, computed once."""
        if o not in self._seen:
            self._seen[o] = (_buffers(o), _row_trips(o), _match_reduction(o) is not None)
        return self._seen[o]

    def _gather(self, n: ir.Operation, ops: list, i: int) -> bool:
        mine = self._facts(n)[0]
        if mine is None:
            return False
        between: list = []  # ops from the one before n back to the group, nearest first
        for j in range(i - 1, -1, -1):
            o = ops[j]
            if _is_nest(o):
                theirs, rows, reduction = self._facts(o)
                if rows and reduction and _joins_rows(n, rows):
                    if all(_joins_rows(x, rows) for x in between if _is_nest(x)):
                        return False  # nothing but the group (and host ops) before n: already joins it
                    return self._move(n, o, between)
                if theirs is None or not _independent(mine, theirs):
                    return False
                between.append(o)
            elif _is_pure_host_name(o.name) and not o.regions:
                between.append(o)
            else:
                return False
        return False

    def _move(self, n: ir.Operation, group_end: ir.Operation, between: list) -> bool:
        """Move `n` after `group_end` (and the nests after it that join its rows), with the host ops
        between them that it uses."""
        needed: list = []
        work = [n]
        while work:  # the ops between that n (and what it needs from there) uses, transitively
            x = work.pop()
            for v in _operands_in(x):
                d = _defined_between(v, between)
                if d is not None and not any(d == y for y in needed):
                    if _is_nest(d):
                        return False  # a nest's value: not host work
                    needed.append(d)
                    work.append(d)
        # keep the group's own trailing nests (that join its rows) before n
        anchor, k = group_end, -1
        rows = _row_trips(group_end)
        forward = list(reversed(between))  # block order, from the op after the group's reduction
        for i, o in enumerate(forward):
            if _is_nest(o) and _joins_rows(o, rows):
                anchor, k = o, i
            elif _is_nest(o):
                break
        # the host ops n needs from after the anchor move up with it, in order; those before the
        # anchor stay (they dominate it already, and may have users before it)
        order = [o for o in forward[k + 1:] if any(o == y for y in needed)]
        at = anchor
        for o in order + [n]:
            o.move_after(at)
            at = o
        self.bump("nests-moved")
        return True


def _operands_in(x: ir.Operation) -> list:
    """The values `x` and the ops nested in it use."""
    return [v for o in (x, *walk_ops(x)) for v in o.operands]
