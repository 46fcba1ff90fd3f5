"""Collapse the leading dims of a generic that every operand reads together, in order, over a
contiguous buffer (or not at all) into one: [B, L, D] rows as [B*L, D] rows.

A transformer's activations are [B, L, D] with a dynamic batch and length. Each kernel over them
(a layer norm's rows, a GELU, the column partials of a layer norm's weight grad) iterated B and L
as two loops of the generic, and sym-gpu-map-parallel split its flat row index back into (b, l) by
a division by L per row (a 64-bit `div.u64` path in the column partials' loop, whose branch kept the
loads of its unrolled rows apart: 10.4 µs a launch for [2048, 256] bf16 on an H200, latency-bound).
Over [B*L, D] the row's address is `r * D`.

Runs on the bufferized compute function, before `convert-linalg-to-parallel-loops` (after
sym-collapse-broadcast-dims). A `linalg.generic` with memref operands and no `linalg.index` collapses
its longest leading group d0..d_{k-1} (k >= 2, k < number of dims: the innermost dim stays, so a
row group of sym-gpu-map-parallel keeps its rows) whose iterators are all of one kind, when each
operand's indexing map either uses none of the group's dims, or uses all of them as consecutive
plain results in order, on a buffer contiguous over them (identity layout, or static contiguous
strides). A layer norm's statistics [B, L, 1], read as (d0, d1, 0), qualify; a position embedding
[L, D] read as (d1, d2) does not, and the generic is left alone. A function argument is PyTorch's
tensor, whose stride at a dim of size 1 is arbitrary even when `is_contiguous()`: its group's last
dim must be static, or at least 2 by the facts (`sym.dims` and the symbols' ranges: Dynamo's sizes
start at 2; an unbacked count may be 1); a group with a static unit dim is left alone too. The operands that use the group
read a `memref.collapse_shape`; the maps and iterators lose the group's other dims. Ops that share a
buffer one of them writes collapse together or not at all (sym-gpu-map-parallel groups nests over the
same rows only). Statistics: `generics-collapsed`, `fills-collapsed`, `left-with-their-neighbours`.

Before:
  linalg.generic {indexing_maps = [(d0, d1, d2) -> (d0, d1, d2), (d0, d1, d2) -> (d0, d1, 0),
                  (d0, d1, d2) -> (d2)], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%dy, %rstd : memref<?x?x256xbf16>, memref<?x?x1xf32>) outs(%dw : memref<256xf32>)
After:
  %dyc = memref.collapse_shape %dy [[0, 1], [2]] : memref<?x?x256xbf16> into memref<?x256xbf16>
  %rc = memref.collapse_shape %rstd [[0, 1], [2]] : memref<?x?x1xf32> into memref<?x1xf32>
  linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, 0), (d0, d1) -> (d1)],
                  iterator_types = ["reduction", "parallel"]} ins(%dyc, %rc) outs(%dw)
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import memref as memref_d

from mlir_sym import shapes
from mlir_sym.passes._compute_common import compute_funcs, indexing_maps, ops_named, root_buffer, walk_ops
from mlir_sym.passes.assert_elim import size_reader
from mlir_sym.passes.canonicalize import declared_ranges, module_of, recorded_ranges
from mlir_sym.passes.collapse_broadcast_dims import _DYN, _collapsed_type, _contiguous, _dims_of
from mlir_sym.passes.registry import SymPass, register


def _uses(dims: list[int | None], k: int) -> list[int]:
    """The result positions of a map (its dims per result) that read one of d0..d_{k-1}."""
    return [j for j, d in enumerate(dims) if d is not None and d < k]


def _group_size(g: ir.Operation, its: list[str], at_least_two) -> int:
    """The largest k (2 <= k < number of dims) such that d0..d_{k-1} collapse, else 0.
    `at_least_two(v, d)`: whether dim d of the function argument v is never 1."""
    maps = [_dims_of(m) for m in indexing_maps(g)]
    if any(m is None for m in maps):
        return 0
    n = len(its)
    for k in (n - 1,):
        if len(set(its[:k])) != 1:
            continue
        ok = True
        for v, dims in zip(g.operands, maps):
            used = _uses(dims, k)
            if not used:
                continue
            t = ir.MemRefType(v.type)
            if [dims[j] for j in used] != list(range(k)) or used != list(range(used[0], used[0] + k)) \
                    or not _contiguous(t, used[0], k) or 1 in t.shape[used[0]:used[0] + k]:
                ok = False  # (a unit dim costs no division: the nest stays as the ops around it see it)
                break
            last = used[0] + k - 1
            if isinstance(v.owner, ir.Block) and t.shape[last] == _DYN and not at_least_two(v, last):
                ok = False  # a PyTorch tensor's stride at a dim of size 1 is arbitrary (see the docstring)
                break
        if ok:
            return k
    return 0


def _all_or_none(ops: list, plans: list) -> list[bool]:
    """Per op, whether it collapses: ops that share the per-row result of a reduction or a fill (a row
    group's statistics, an accumulator) collapse together or not at all, since sym-gpu-map-parallel
    groups nests over the same rows only; with a softmax's max over [B, H, L, 1] collapsed and its
    normalization not, the row group came apart. Other buffers (inputs, elementwise results, vectors
    of column sums) do not tie ops together."""
    written = set()  # per-row results (rank 2 or more) of reductions and fills: what a row group's nests
    for g in ops:    # exchange (a vector of 256 column sums and its fill tie nothing)
        if g.name == "linalg.fill":
            outs = [g.operands[1]]
        elif any("reduction" in str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"])):
            outs = list(g.operands)[_inputs(g):]
        else:
            continue
        written.update(r for r in map(root_buffer, outs) if ir.MemRefType(r.type).rank >= 2)
    parent = list(range(len(ops)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict = {}
    for i, g in enumerate(ops):
        for v in g.operands:
            if not isinstance(v.type, ir.MemRefType):
                continue
            r = root_buffer(v)
            if r in written:
                j = owner.setdefault(r, i)
                parent[find(i)] = find(j)
    blocked = {find(i) for i, k in enumerate(plans) if not k}
    return [bool(k) and find(i) not in blocked for i, k in enumerate(plans)]


def _inputs(g: ir.Operation) -> int:
    return ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])[0]


@register
class CollapseLeadingDims(SymPass):
    """Collapse a generic's leading dims that every operand reads together over a contiguous buffer ([B, L, D] as [B*L, D]: no division per row on the GPU)."""

    name = "sym-collapse-leading-dims"

    def run(self, op: ir.Operation) -> None:
        module = module_of(op)
        declared, recorded = declared_ranges(module), recorded_ranges(module)
        for fn in compute_funcs(op):
            reader = size_reader(fn.operation, declared, recorded)
            self._at_least_two = lambda v, d, r=reader: r.facts.decide(
                shapes.relation("ge", r.dim(v, d), 2))[0] is True
            self._views: dict = {}  # (buffer, first, count) -> its collapse: one view per buffer, as
            # sym-gpu-map-parallel's row groups and accumulator fills compare buffers by value
            ops = ops_named(fn.operation, {"linalg.generic", "linalg.fill"})
            plans = [self._fill_plan(g) if g.name == "linalg.fill" else self._plan(g) for g in ops]
            for g, k, ok in zip(ops, plans, _all_or_none(ops, plans)):
                if not ok:
                    if k:
                        self.bump("left-with-their-neighbours")
                elif g.name == "linalg.fill":
                    g.operands[1] = self._view(g.operands[1], 0, k, g.location)
                    self.bump("fills-collapsed")
                else:
                    self._collapse(g, k)

    def _view(self, v: ir.Value, first: int, count: int, loc: ir.Location) -> ir.Value:
        """`v` collapsed over dims first..first+count-1, made once, right after `v` is defined."""
        key = (v, first, count)
        if key not in self._views:
            owner = v.owner
            if isinstance(owner, ir.Block):
                ip = ir.InsertionPoint.at_block_begin(owner)
            else:
                ip = ir.InsertionPoint.after(owner.operation if hasattr(owner, "operation") else owner)
            t = ir.MemRefType(v.type)
            reassoc = [[j] for j in range(first)] + [list(range(first, first + count))] + \
                [[j] for j in range(first + count, t.rank)]
            with ip, loc:
                self._views[key] = memref_d.CollapseShapeOp(_collapsed_type(t, first, count), v, reassoc).result
        return self._views[key]

    def _fill_plan(self, f: ir.Operation) -> int:
        """The group of a fill of a buffer contiguous over its leading dims (the accumulator of a
        reduction over the same rows: a row group wants the two over the same loops), else 0."""
        v = f.operands[1]
        if not isinstance(v.type, ir.MemRefType):
            return 0
        t = ir.MemRefType(v.type)
        k = t.rank - 1
        if k < 2 or not _contiguous(t, 0, k) or 1 in t.shape[:k] or (
                isinstance(v.owner, ir.Block) and t.shape[k - 1] == _DYN and not self._at_least_two(v, k - 1)):
            return 0
        return k

    def _plan(self, g: ir.Operation) -> int:
        """The group of a generic's leading dims that collapse (see the module's docstring), else 0."""
        its = [str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"])]
        if len(its) < 3 or not all(isinstance(v.type, ir.MemRefType) for v in g.operands) \
                or any(o.name == "linalg.index" for o in walk_ops(g)):
            return 0
        return _group_size(g, its, self._at_least_two)

    def _collapse(self, g: ir.Operation, k: int) -> None:
        its = [str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"])]
        old_maps = indexing_maps(g)
        n = len(its)
        new_maps = []
        for i, v in enumerate(list(g.operands)):
            dims = _dims_of(old_maps[i])
            used = _uses(dims, k)
            exprs = []
            for j, (d, e) in enumerate(zip(dims, old_maps[i].results)):
                if j in used[1:]:
                    continue
                if d is None:
                    exprs.append(e)  # a constant stays
                else:
                    exprs.append(ir.AffineDimExpr.get(0 if d < k else d - k + 1))
            new_maps.append(ir.AffineMap.get(n - k + 1, 0, exprs))
            if used:
                g.operands[i] = self._view(v, used[0], k, g.location)
        g.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
        kept = list(ir.ArrayAttr(g.attributes["iterator_types"]))
        g.attributes["iterator_types"] = ir.ArrayAttr.get([kept[0]] + kept[k:])
        self.bump("generics-collapsed")
