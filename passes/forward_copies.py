"""Forward a fresh buffer into the copy of it: `%b = alloc; copy %a, %b` with `%a` dead afterwards
becomes one buffer.

`tm-tensor-bufferize` (scatter, scan, sort) allocates a new buffer for the op's `outs` and copies the
init into it, even when the init is a temporary nothing reads afterwards (the zeros a scatter
writes into): on the GPU one `copy_` per call from the host program. When, in one block,

  %a = memref.alloc(...) : T        written and read only before the copy (no views of it)
  %b = memref.alloc(...) : T        (or %b an argument of the function: an out-param)
  memref.copy %a, %b                %b not used before it, %a not used after it

the copy is redundant (every use of %a is a plain access: linalg / tm_tensor ops, loads, stores,
dims, copies, or a view whose uses are, transitively, all before the copy; a yield or a call could
alias it): %b takes %a's place (its alloc moves to %a's, whose sizes it must be able
to use; an argument is available everywhere), every use of %a becomes a use of %b, and %a's alloc and
the copy go. Types must match exactly (identity layouts).

The copy may also read %a through one `memref.collapse_shape` or `expand_shape` (its only use): a
result computed in a finer shape and copied into the function's output ([b, s, 4, 64] collapsed into
[b, s, 256], attention's heads). %a then becomes the reverse reshape of %b (an expand_shape with %a's
sizes, or a collapse_shape), made where %a was allocated: the producers write the output in place.
That reshape may have other uses, each a plain access before the copy or a view whose uses are
(transitively): a training forward saves a layer norm's output for the backward in the shape the
next linear layer's contraction reads ([b * s, 256]), and it was computed in a temporary and
copied into its out-param at the end (one device copy per saved activation and step).

A copy of a buffer into itself through `memref.cast`s (an out-param the computation wrote in place,
copied from a cast of it) is erased.

Before:
  %a = memref.alloc(%n) : memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%a : memref<?xi64>)
  %b = memref.alloc(%n) : memref<?xi64>
  memref.copy %a, %b : memref<?xi64> to memref<?xi64>
  tm_tensor.scatter ... outs(%b : memref<?xi64>)
After:
  %b = memref.alloc(%n) : memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%b : memref<?xi64>)
  tm_tensor.scatter ... outs(%b : memref<?xi64>)
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import memref

from mlir_sym.passes._compute_common import ancestor_in
from mlir_sym.passes.registry import SymPass, register


def _alloc_of(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    return op if op.name == "memref.alloc" else None


def _identity_layout(t: ir.Type) -> bool:
    layout = ir.MemRefType(t).layout
    if not isinstance(layout, ir.AffineMapAttr):
        return False
    m = ir.AffineMapAttr(layout).value
    return m == ir.AffineMap.get_identity(m.n_dims)


def _is_function_argument(v: ir.Value, fn: ir.Operation) -> bool:
    return isinstance(v.owner, ir.Block) and v.owner == fn.regions[0].blocks[0]


def _plain_access(op: ir.Operation) -> bool:
    """Whether `op` only reads or writes the buffers it is given (no alias of them escapes it)."""
    if op.name.startswith(("linalg.", "tm_tensor.")):
        return not any(isinstance(r.type, ir.MemRefType) for r in op.results)
    return op.name in ("memref.load", "memref.store", "memref.dim", "memref.copy", "memref.dealloc")


def _uncast(v: ir.Value) -> ir.Value:
    while not isinstance(v.owner, ir.Block):
        op = v.owner.operation if hasattr(v.owner, "operation") else v.owner
        if op.name != "memref.cast":
            break
        v = op.operands[0]
    return v


def _copies_itself(copy: ir.Operation) -> bool:
    """`memref.copy` of a buffer into itself through `memref.cast`s (which change only static
    knowledge of sizes and strides, not the memory): an out-param the computation wrote in place and
    then copied from a cast of it (a result whose type bufferization generalized)."""
    return _uncast(copy.operands[0]) == _uncast(copy.operands[1])




@register
class ForwardCopies(SymPass):
    """Replace `%b = alloc; copy %a, %b` by one buffer when %a is a temporary dead after the copy."""

    name = "sym-forward-copies"

    def run(self, op: ir.Operation) -> None:
        for child in op.regions[0].blocks[0].operations:
            fn = child.operation
            if fn.name == "func.func" and fn.regions[0].blocks:
                for block in fn.regions[0].blocks:
                    self._block(fn, block)

    def _block(self, fn: ir.Operation, block: ir.Block) -> None:
        changed = True
        while changed:
            changed = False
            ops = [c.operation for c in block.operations]
            pos = {o: i for i, o in enumerate(ops)}
            for copy in ops:
                if copy.name == "memref.copy" and _copies_itself(copy):
                    copy.erase()  # the result was computed in the out-param already
                    self.bump("self-copies-erased")
                    changed = True
                    break
                if copy.name == "memref.copy" and self._forward(fn, block, copy, pos):
                    self.bump("copies-forwarded")
                    changed = True
                    break

    def _forward(self, fn: ir.Operation, block: ir.Block, copy: ir.Operation, pos: dict) -> bool:
        a, b = copy.operands[0], copy.operands[1]
        if a.type != b.type or not isinstance(a.type, ir.MemRefType):
            return False
        if not _identity_layout(a.type):
            return False
        reshape = _reshape_of(a, copy, block, pos)
        if reshape is not None:  # copy (collapse_shape %a), %b: %a becomes a view of %b
            a = reshape.operands[0]
            if not _identity_layout(a.type):
                return False
        a_alloc = _alloc_of(a)
        b_alloc = _alloc_of(b)
        if a_alloc is None or a_alloc.block != block:
            return False
        if b_alloc is None and not _is_function_argument(b, fn):
            return False
        if b_alloc is not None and b_alloc.block != block:
            return False
        at = pos[copy]
        for use in a.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user == copy:
                continue
            if reshape is not None and user == reshape:
                continue
            if user.name in _VIEWS:  # a view of %a (a cache expanded for grouped-query attention):
                if all(_accessed_before(u, block, pos, at) for r in user.results for u in r.uses):
                    continue  # read or written through only before the copy: it becomes a view of %b
                return False
            top = ancestor_in(user, block)
            if top is None or pos[top] >= at:
                return False  # read or written after the copy
            if not _plain_access(user):
                return False  # a view, a yield, a call...: an alias of %a we do not follow
        for use in b.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user == copy:
                continue
            top = ancestor_in(user, block)
            if top is None or pos[top] <= at:
                return False  # %b is used before the copy
        if b_alloc is not None:
            start = pos[a_alloc]
            for v in b_alloc.operands:  # %b's sizes must exist where %a is allocated
                owner = v.owner
                if isinstance(owner, ir.Block):
                    continue
                d = owner.operation if hasattr(owner, "operation") else owner
                top = ancestor_in(d, block)
                if top is not None and pos[top] >= start:
                    return False
            b_alloc.move_before(a_alloc)
        if reshape is not None:
            b = _reverse_reshape(reshape, a_alloc, b)
        copy.erase()
        if reshape is not None and not list(reshape.results[0].uses):
            reshape.erase()
        a.replace_all_uses_with(b)
        a_alloc.erase()
        return True


_VIEWS = ("memref.collapse_shape", "memref.expand_shape", "memref.cast", "memref.subview", "memref.transpose")


def _reshape_of(a: ir.Value, copy: ir.Operation, block: ir.Block, pos: dict) -> ir.Operation | None:
    """The collapse_shape / expand_shape that makes `a` when its other uses only access it (or
    views of it) before the copy."""
    owner = a.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name not in ("memref.collapse_shape", "memref.expand_shape"):
        return None
    others = [u for u in a.uses if (u.owner.operation if hasattr(u.owner, "operation") else u.owner) != copy]
    return op if all(_accessed_before(u, block, pos, pos[copy]) for u in others) else None


def _accessed_before(use, block: ir.Block, pos: dict, at: int) -> bool:
    """Whether the user of `use` is a plain access before position `at` of `block`, or a view whose
    own uses all are."""
    user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
    if user.name in _VIEWS:
        return all(_accessed_before(u, block, pos, at) for r in user.results for u in r.uses)
    top = ancestor_in(user, block)
    return top is not None and pos[top] < at and _plain_access(user)


def _reverse_reshape(reshape: ir.Operation, a_alloc: ir.Operation, b: ir.Value) -> ir.Value:
    """%b reshaped to the type of `reshape`'s source (the buffer `a_alloc` made), before `a_alloc`."""
    a_type = a_alloc.results[0].type
    reassoc = reshape.attributes["reassociation"]
    with ir.InsertionPoint(a_alloc), a_alloc.location:
        if reshape.name == "memref.expand_shape":  # %a was expanded: collapse %b back
            return memref.CollapseShapeOp(a_type, b, reassoc).result
        mtype = ir.MemRefType(a_type)
        dynamic = list(a_alloc.operands)  # the alloc's sizes, one per dynamic dim in order
        return memref.ExpandShapeOp(a_type, b, reassoc, dynamic, list(mtype.shape)).result
