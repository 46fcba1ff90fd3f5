"""Lower `tm_tensor.scatter` on memrefs (index_put, the fill of data-dependent sizes) to a parallel loop.

torch-mlir's `tm-tensor-to-loops` makes a scatter a nest of `scf.for` over the updates: one thread on
the GPU. Its indices are used as they are: a negative index (`x[i] = v` with i = -1, which torch
wraps) writes before the buffer, and an index past the end writes after it. Here a scatter that
overwrites with unique indices (`unique_indices(true)`: index_put without accumulate) or adds
(`accumulate=True`) becomes one `scf.parallel` over the updates (the update element and its slice
position), which the GPU mapping launches like any elementwise nest:
- each index of the `dimension_map` is wrapped as torch wraps it (i < 0: i + size) and checked
  (0 <= i < size) by a deferred check (`@__mlir_sym_nested_assert` with an `IndexError` message,
  as sym-defer-nested-asserts parks checks nested in loops: a device assert on the GPU, a status on
  the CPU), before the write;
- the update's own slice dims address the original's last dims, as in the loop form;
- an overwrite is a `memref.store`; an add is a `memref.atomic_rmw addf/addi` (concurrent updates of
  one element add up), for element types with hardware atomics (f16, bf16, f32, f64, i32, i64);
  with the option `atomics=0` (the CPU pipeline, which runs parallel loops in order) a load, an add
  and a store (x86 has no bf16 atomic add: LLVM would call a conversion routine the JIT lacks).
An overwrite whose indices may repeat (`aten.scatter`, which torch-mlir cannot mark unique) becomes
a loop nest over the updates in order instead (the last writer of an element decides, as in the
loop lowering's form: one GPU thread), with the same wrapped and checked indices: the loop lowering
wrote an index out of range into another row, or past the buffer. Other combiners and adds of
narrow integers are left for the loop lowering.

Before:
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false)
      ins(%u, %i : memref<?x1xf32>, memref<?x1xi64>) outs(%o : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    tm_tensor.yield %s : f32
  }
After:
  %n = memref.dim %u, %c0
  %size = memref.dim %o, %c0
  scf.parallel (%k) = (%c0) to (%n) step (%c1) {
    %v = memref.load %u[%k, %c0]
    %raw = memref.load %i[%k, %c0] ; index_cast ; wrapped by %size if negative
    func.call @__mlir_sym_nested_assert(%in_range) {sym.assert_msg = "IndexError: ..."}
    %old = memref.atomic_rmw addf %v, %o[%p]
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, memref, scf
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.defer_nested_asserts import MARKER, MSG_ATTR, _loc_text
from mlir_sym.passes.registry import SymPass, register

_ATOMIC_ADD = {"f16": "addf", "bf16": "addf", "f32": "addf", "f64": "addf", "i32": "addi", "i64": "addi"}
_RMW_KIND = {"addf": 0, "addi": 1}  # arith::AtomicRMWKind


def scatter_combiner(o: ir.Operation) -> str | None:
    """"set" when a tm_tensor.scatter's region yields the update, "add" when it yields update +
    original (either order), else None."""
    body = o.regions[0].blocks[0]
    ops = [c.operation for c in body.operations]
    args = list(body.arguments)
    if len(args) != 2 or ops[-1].name != "tm_tensor.yield" or len(ops[-1].operands) != 1:
        return None
    y = ops[-1].operands[0]
    if len(ops) == 1:
        return "set" if y == args[0] else None
    if len(ops) == 2 and ops[0].name in ("arith.addf", "arith.addi") and y == ops[0].results[0]:
        a, b = ops[0].operands[0], ops[0].operands[1]
        if (a == args[0] and b == args[1]) or (a == args[1] and b == args[0]):
            return "add"
    return None


@register
class ScatterToParallel(SymPass):
    """Lower tm_tensor.scatter (overwrite with unique indices, or add) on memrefs to a parallel loop
    with wrapped, checked indices; an overwrite whose indices may repeat to a checked loop nest."""

    name = "sym-scatter-to-parallel"
    options = {"atomics": int}
    atomics = 1

    def run(self, op: ir.Operation) -> None:
        self.atomics = bool(getattr(self, "atomics", type(self).atomics))
        found = ops_named(op, {"tm_tensor.scatter"})
        todo = [(o, kind) for o in found for kind in [self._kind(o)] if kind is not None]
        if not todo:
            return
        self._declare_marker(op)
        for o, kind in todo:
            self._lower(o, kind)
            self.bump("scatters-in-order" if kind == "set-in-order" else "scatters-parallel")

    @staticmethod
    def _kind(o: ir.Operation) -> str | None:
        """"set", or the atomic_rmw kind of an add; None where the loop lowering keeps it."""
        if len(o.results) or len(o.operands) != 3 or not all(isinstance(v.type, ir.MemRefType) for v in o.operands):
            return None
        combine = scatter_combiner(o)
        if combine == "set":
            unique = "unique_indices" in o.attributes and ir.BoolAttr(o.attributes["unique_indices"]).value
            return "set" if unique else "set-in-order"
        if combine == "add":
            return _ATOMIC_ADD.get(str(ir.MemRefType(o.operands[2].type).element_type))
        return None

    @staticmethod
    def _declare_marker(module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        for child in body.operations:
            c = child.operation
            if c.name == "func.func" and ir.StringAttr(c.attributes["sym_name"]).value == MARKER:
                return
        i1 = ir.IntegerType.get_signless(1)
        with ir.InsertionPoint(body), ir.Location.unknown():
            func_d.FuncOp(MARKER, ir.FunctionType.get([i1], []), visibility="private")

    def _lower(self, o: ir.Operation, kind: str) -> None:
        updates, indices, original = list(o.operands)
        dims = list(ir.DenseI64ArrayAttr(o.attributes["dimension_map"]))
        urank = ir.MemRefType(updates.type).rank
        orank = ir.MemRefType(original.type).rank
        k = urank - 1  # the update's slice dims address the original's last k dims
        where = _loc_text(o.location)
        msg = "IndexError: index out of bounds in index_put / scatter" + (f" (at {where})" if where else "")
        with ir.InsertionPoint(o), o.location:
            index = ir.IndexType.get()
            c0 = arith.ConstantOp(index, 0).result
            c1 = arith.ConstantOp(index, 1).result
            trips = [memref.DimOp(updates, arith.ConstantOp(index, d).result).result for d in range(urank)]
            sizes = {d: memref.DimOp(original, arith.ConstantOp(index, d).result).result for d in dims}
            if kind == "set-in-order":
                # indices may repeat: a loop nest in the updates' order (the last write of an element
                # wins, as in tm-tensor-to-loops' form), with the same wrapped, checked indices
                ivs, ip = [], ir.InsertionPoint(o)
                for t in trips:
                    with ip:
                        loop = scf.ForOp(c0, t, c1)
                    ivs.append(loop.induction_variable)
                    with ir.InsertionPoint(loop.body):
                        end = scf.YieldOp([])
                    ip = ir.InsertionPoint(end)
                with ip:
                    self._body(o, kind, ivs, dims, sizes, orank, k, msg, c0)
                o.erase()
                return
            loop = scf.ParallelOp([], [c0] * urank, trips, [c1] * urank, [])
            block = loop.regions[0].blocks.append(*([index] * urank))
            with ir.InsertionPoint(block):
                self._body(o, kind, list(block.arguments), dims, sizes, orank, k, msg, c0)
                scf.ReduceOp([], 0)
        o.erase()

    def _body(self, o: ir.Operation, kind: str, ivs: list, dims: list, sizes: dict, orank: int, k: int,
              msg: str, c0: ir.Value) -> None:
        """One update at loop variables `ivs`: its indices wrapped and checked, then the write."""
        updates, indices, original = list(o.operands)
        index = ir.IndexType.get()
        value = memref.LoadOp(updates, ivs).result
        pos: list[ir.Value | None] = [None] * orank
        for d in range(orank - k, orank):
            pos[d] = ivs[d - (orank - k) + 1]
        ok = None
        for i, d in enumerate(dims):
            raw = memref.LoadOp(indices, [ivs[0], arith.ConstantOp(index, i).result]).result
            idx = raw if str(raw.type) == "index" else arith.IndexCastOp(index, raw).result
            neg = arith.CmpIOp(arith.CmpIPredicate.slt, idx, c0).result
            idx = arith.SelectOp(neg, arith.AddIOp(idx, sizes[d]).result, idx).result
            p = idx if pos[d] is None else arith.AddIOp(idx, pos[d]).result
            inside = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, p, c0).result,
                                  arith.CmpIOp(arith.CmpIPredicate.slt, p, sizes[d]).result).result
            ok = inside if ok is None else arith.AndIOp(ok, inside).result
            pos[d] = p
        if any(p is None for p in pos):
            raise ValueError(f"scatter at {o.location}: dimension {pos.index(None)} of the original is not indexed")
        if ok is not None:
            call = func_d.CallOp([], ir.FlatSymbolRefAttr.get(MARKER), [ok])
            call.operation.attributes[MSG_ATTR] = ir.StringAttr.get(msg)
        if kind in ("set", "set-in-order"):
            memref.StoreOp(value, original, pos)
        elif not self.atomics:  # a sequential target (the CPU runs scf.parallel in order)
            old = memref.LoadOp(original, pos).result
            if str(value.type) in ("bf16", "f16"):  # added in f32 (no half-precision libcalls)
                f32 = ir.F32Type.get()
                wide = arith.AddFOp(arith.ExtFOp(f32, old).result, arith.ExtFOp(f32, value).result).result
                total = arith.TruncFOp(value.type, wide).result
            else:
                total = (arith.AddFOp if kind == "addf" else arith.AddIOp)(old, value).result
            memref.StoreOp(total, original, pos)
        else:
            i64 = ir.IntegerType.get_signless(64)
            memref.AtomicRMWOp(ir.IntegerAttr.get(i64, _RMW_KIND[kind]), value, original, pos)
