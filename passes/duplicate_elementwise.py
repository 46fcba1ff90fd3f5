"""Give each consumer of a multi-use elementwise `linalg.generic` its own copy of it (on tensors).

`linalg-fuse-elementwise-ops` fuses a producer into its consumer only when the consumer is its single
user; a producer with several users is materialized (written to memory and read back by each).
Recomputing a few arithmetic ops is cheaper on the GPU than that, so before fusion each use beyond the
first gets its own copy of the producer (placed right before it), and fusion then reaches every
consumer. Softmax's exp(x - max) feeds both the sum and the division: without this it is materialized.
Only producers with one ranked-tensor result, all-parallel iterators and a body of at most
12 ops without calls (a gather's bounds checks are calls, see sym-defer-nested-asserts) are copied,
and only when every user is a linalg.generic in the same block taking it as an input (`ins`, not
`outs`), and the copy, with the producers fusion puts into it, loads at most `max-reads` (2)
tensors at every element (broadcasts aside). A producer that reads no tensor (an iota) is copied
into each all-parallel generic that takes it, directly or through a reshape, even when it has other
users, which keep the original: a causal mask loaded its positions as int64 from the `arange` the
forward also returns (a reduction would not absorb such a copy: it would be a kernel of its own). A chain of copies otherwise grows
with each link: GPT-2's residual stream `h[k] = h[k-1] + out[k]`, copied into each layer norm,
made the last layer norm's kernel load every layer's output; now every other `h[k]` is written
once, by its own loop, which sym-gpu-map-parallel runs in the layer norm's launch (a row group).

Before:
  %e = linalg.generic {iterator_types = ["parallel"]} ins(%x) outs(%i0) { exp }
  %s = linalg.generic {iterator_types = ["reduction"]} ins(%e) outs(%acc) { sum }
  %y = linalg.generic {iterator_types = ["parallel"]} ins(%e, %b) outs(%i1) { div }
After:
  %e1 = linalg.generic {iterator_types = ["parallel"]} ins(%x) outs(%i0) { exp }
  %e = linalg.generic {iterator_types = ["parallel"]} ins(%x) outs(%i0) { exp }
  %s = linalg.generic {iterator_types = ["reduction"]} ins(%e) outs(%acc) { sum }
  %y = linalg.generic {iterator_types = ["parallel"]} ins(%e1, %b) outs(%i1) { div }
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import MAX_COPIED_READS, defining_op, full_reads
from mlir_sym.passes.registry import SymPass, register

_MAX_DUPLICATED_BODY = 12


@register
class DuplicateElementwise(SymPass):
    """Copy a multi-use elementwise linalg.generic once per consumer, so elementwise fusion reaches them all."""

    name = "sym-duplicate-elementwise"
    options = {"max-reads": int}
    max_reads = MAX_COPIED_READS  # tensors a copy may load at every element (with what fusion puts in it)

    def run(self, op: ir.Operation) -> None:
        for fn in op.regions[0].blocks[0].operations:
            if fn.operation.name != "func.func" or len(fn.operation.regions[0].blocks) == 0:
                continue
            limit = getattr(self, "max-reads", self.max_reads)
            for block in fn.operation.regions[0].blocks:
                reads = self._reads(block, limit)
                for child in reversed(list(block.operations)):
                    o = child.operation
                    if not self._candidate(o):
                        continue
                    if len(reads[o.results[0]]) > limit:
                        self.bump("producers-kept-for-reads")
                        continue
                    uses = [(u.owner, u.operand_number) for u in o.results[0].uses]
                    if not self._fusable_uses(o):  # an index-only producer also returned: every
                        uses = [(None, None)] + [(w, n) for w, n in uses if self._absorbing_use(w, n, o)
                                                 or self._reshape_for_generics(w, o)]
                    for owner, num in uses[1:]:
                        owner = owner.operation if hasattr(owner, "operation") else owner
                        with ir.InsertionPoint(o), o.location:
                            c = o.clone()
                        owner.operands[num] = c.results[0]
                        self.bump("producers-duplicated")

    @classmethod
    def _reads(cls, block: ir.Block, limit: int) -> dict:
        """For each copyable producer's result: the tensors it loads at every element once fusion has
        put into it the producers it will hold (single-use ones, and multi-use ones that are copied)."""
        reads: dict = {}
        for child in block.operations:
            o = child.operation
            if not cls._elementwise(o):
                continue
            mine: list = []
            for v in full_reads(o):
                q = defining_op(v)
                inner = reads.get(v) if q is not None else None
                inlined = inner is not None and cls._fusable_uses(q) and (len(list(v.uses)) == 1 or (
                    cls._copyable(q) and len(inner) <= limit))
                for r in (inner if inlined else [v]):
                    if r not in mine:
                        mine.append(r)
            reads[o.results[0]] = mine
        return reads

    @classmethod
    def _candidate(cls, o: ir.Operation) -> bool:
        if not cls._copyable(o) or len(list(o.results[0].uses)) < 2:
            return False
        if cls._fusable_uses(o):
            return True
        # a producer that reads no tensor (an iota, `arange`: positions from the loop index) is copied
        # into each generic that takes it even when it is also returned (the original stays for that):
        # a consumer reading it back from memory (a causal mask comparing positions loaded as int64)
        # loads 8 bytes an element and vectorizes two elements wide; a copy loads nothing
        return not o.opview.inputs and not cls._reads_output(o) and sum(
            cls._absorbing_use(u.owner, u.operand_number, o) or cls._reshape_for_generics(u.owner, o)
            for u in o.results[0].uses) >= 1

    @staticmethod
    def _reads_output(o: ir.Operation) -> bool:
        """Whether the body reads its `outs` element (then it loads a tensor after all)."""
        return any(len(list(a.uses)) for a in o.regions[0].blocks[0].arguments)

    @classmethod
    def _reshape_for_generics(cls, owner, o: ir.Operation) -> bool:
        """Whether this use of `o` is a tensor reshape in its block whose every use is a generic's
        input (positions broadcast as [1, L] or [L, 1]: fusion by expansion then reaches the copy)."""
        owner = owner.operation if hasattr(owner, "operation") else owner
        uses = list(owner.results[0].uses) if owner.name in ("tensor.expand_shape", "tensor.collapse_shape") else []
        return bool(uses) and owner.block == o.block and all(
            cls._absorbing_use(u.owner, u.operand_number, owner) for u in uses)

    @staticmethod
    def _elementwise(o: ir.Operation) -> bool:
        if o.name != "linalg.generic" or len(o.results) != 1:
            return False
        if not isinstance(o.results[0].type, ir.RankedTensorType):
            return False
        return all("parallel" in str(a) for a in ir.ArrayAttr(o.attributes["iterator_types"]))

    @classmethod
    def _copyable(cls, o: ir.Operation) -> bool:
        if not cls._elementwise(o):
            return False
        if len(o.regions[0].blocks[0].operations) > _MAX_DUPLICATED_BODY:
            return False
        if any(b.operation.name == "func.call" for b in o.regions[0].blocks[0].operations):
            return False  # a checked gather (its bounds asserts): a copy would check again, and the
            # original, kept for its side effect, would still run as a kernel of its own
        return True

    @classmethod
    def _fusable_uses(cls, o: ir.Operation) -> bool:
        """Whether every use of `o` is an input of a linalg.generic in its block."""
        return all(cls._fusable_use(u.owner, u.operand_number, o) for u in o.results[0].uses)

    @classmethod
    def _absorbing_use(cls, owner, operand_number: int, o: ir.Operation) -> bool:
        """An input of an all-parallel generic (fusion absorbs a producer that reads nothing only
        there: a reduction's loops would lose the sizes the copy gave them)."""
        owner = owner.operation if hasattr(owner, "operation") else owner
        return cls._fusable_use(owner, operand_number, o) and cls._elementwise_loops(owner)

    @staticmethod
    def _elementwise_loops(g: ir.Operation) -> bool:
        return all("parallel" in str(a) for a in ir.ArrayAttr(g.attributes["iterator_types"]))

    @staticmethod
    def _fusable_use(owner, operand_number: int, o: ir.Operation) -> bool:
        """Whether this use of `o` is an input of a linalg.generic in its block."""
        owner = owner.operation if hasattr(owner, "operation") else owner
        if owner.name != "linalg.generic" or owner.block != o.block:
            return False
        # only as an input (fusing into an `outs` operand is not elementwise fusion)
        n_in = len(owner.operands) - len(owner.results)
        return operand_number < n_in
