"""Replace 1-D `tm_tensor.sort` on memrefs with a call to a bottom-up merge sort: O(n log n), stable.

torch-mlir lowers `aten.sort` to `tm_tensor.sort`, and `tm-tensor-to-loops` turns that into a bubble
sort (O(n^2)): 180 ms for 8192 elements, where `torch.unique` (mlir_sym/datadep.py) and `torch.sort`
need a few hundred microseconds. This pass runs after bufferization, before `tm-tensor-to-loops`,
and replaces each sort it understands with a call to a private function (one per comparator and
element types, added to the module): log2(n) passes over the data, each merging runs of width w
into runs of width 2w, ping-ponging between the operands and one scratch buffer per operand (copied
back when the result ends in the scratch). The first operand holds the keys, the others move with
them (the indices of `torch.sort`). Ties keep their order (left run first), so the comparator's
meaning is kept: a left element is taken while `cmp(left, right)` holds. NaN keys sort as PyTorch
sorts them, as the largest value: an ordered float comparator (`ole`, `oge`, which are false on NaN)
also holds when the right key (ascending) or the left key (descending) is NaN; a sort left to the
bubble sort gets the same comparator in place.

Understood: dimension 0 of rank-1 memrefs with the identity layout (static sizes are cast to dynamic),
and a comparator that is one `arith.cmpf`/`arith.cmpi` of the first operand's pair (what torch-mlir
emits: `ole`/`oge` for floats, `sle`/`sge` for integers). Anything else is left to the bubble sort.

Before:
  tm_tensor.sort dimension(0) outs(%keys, %idx : memref<?xf32>, memref<?xi64>) {
  ^bb0(%a: f32, %b: f32, %i: i64, %j: i64):
    %0 = arith.cmpf ole, %a, %b : f32
    tm_tensor.yield %0 : i1
  }
After:
  call @__sym_merge_sort_cmpf_ole_f32_i64(%keys, %idx) : (memref<?xf32>, memref<?xi64>) -> ()
  ...
  func.func private @__sym_merge_sort_cmpf_ole_f32_i64(%arg0: memref<?xf32>, %arg1: memref<?xi64>) {
    scf.while (%w = %c1, %orig = %true) ... {   // one pass per width 1, 2, 4, ... < n
      scf.for %lo = %c0 to %n step %w2 {       // merge [lo, lo+w) and [lo+w, lo+2w)
        scf.for %o = %lo to %hi step %c1 iter_args(%i = %lo, %j = %mid) ... { ... }
      }
    }
    ...
  }
"""
from __future__ import annotations

import re

from torch_mlir import ir

from mlir_sym.passes.registry import SymPass, register

_MEMREF_1D = re.compile(r"^memref<(\?|\d+)x([a-z][a-z0-9]*)>$")  # 1-d only: memref<4x7xf32> is 2-d, not one of "7xf32"
_CMP = re.compile(r"= arith\.(cmpf|cmpi) (\w+),")


def _template(name: str, op: str, pred: str, types: list[str]) -> str:
    """The merge sort of operands with element types `types`, keys compared by `op pred`."""
    k = range(len(types))
    mr = [f"memref<?x{t}>" for t in types]
    args = ", ".join(f"%k{i}: {mr[i]}" for i in k)
    lines = [f"func.func private @{name}({args}) {{",
             "  %c0 = arith.constant 0 : index",
             "  %c1 = arith.constant 1 : index",
             "  %c2 = arith.constant 2 : index",
             "  %true = arith.constant true",
             "  %false = arith.constant false",
             f"  %n = memref.dim %k0, %c0 : {mr[0]}"]
    lines += [f"  %t{i} = memref.alloc(%n) : {mr[i]}" for i in k]
    lines += ["  %res:2 = scf.while (%w = %c1, %orig = %true) : (index, i1) -> (index, i1) {",
              "    %more = arith.cmpi ult, %w, %n : index",
              "    scf.condition(%more) %w, %orig : index, i1",
              "  } do {",
              "  ^bb0(%w: index, %orig: i1):"]
    for i in k:
        lines += [f"    %s{i} = arith.select %orig, %k{i}, %t{i} : {mr[i]}",
                  f"    %d{i} = arith.select %orig, %t{i}, %k{i} : {mr[i]}"]
    lines += ["    %w2 = arith.muli %w, %c2 : index",
              "    scf.for %lo = %c0 to %n step %w2 {",
              "      %m0 = arith.addi %lo, %w : index",
              "      %mid = arith.minui %m0, %n : index",
              "      %h0 = arith.addi %lo, %w2 : index",
              "      %hi = arith.minui %h0, %n : index",
              "      %ij:2 = scf.for %o = %lo to %hi step %c1 iter_args(%i = %lo, %j = %mid) -> (index, index) {",
              "        %li = arith.cmpi ult, %i, %mid : index",
              "        %rj = arith.cmpi ult, %j, %hi : index",
              "        %take = scf.if %li -> (i1) {",
              "          %t = scf.if %rj -> (i1) {",
              f"            %a = memref.load %s0[%i] : {mr[0]}",
              f"            %b = memref.load %s0[%j] : {mr[0]}",
              *_compare(op, pred, types[0]),
              "            scf.yield %c : i1",
              "          } else {",
              "            scf.yield %true : i1",
              "          }",
              "          scf.yield %t : i1",
              "        } else {",
              "          scf.yield %false : i1",
              "        }",
              "        %src = arith.select %take, %i, %j : index"]
    for i in k:
        lines += [f"        %v{i} = memref.load %s{i}[%src] : {mr[i]}",
                  f"        memref.store %v{i}, %d{i}[%o] : {mr[i]}"]
    lines += ["        %i1 = arith.addi %i, %c1 : index",
              "        %j1 = arith.addi %j, %c1 : index",
              "        %ni = arith.select %take, %i1, %i : index",
              "        %nj = arith.select %take, %j, %j1 : index",
              "        scf.yield %ni, %nj : index, index",
              "      }",
              "    }",
              "    %no = arith.xori %orig, %true : i1",
              "    scf.yield %w2, %no : index, i1",
              "  }",
              "  %moved = arith.xori %res#1, %true : i1",
              "  scf.if %moved {"]
    lines += [f"    memref.copy %t{i}, %k{i} : {mr[i]} to {mr[i]}" for i in k]
    lines += ["  }"]
    lines += [f"  memref.dealloc %t{i} : {mr[i]}" for i in k]
    lines += ["  return", "}"]
    return "\n".join(lines)


def _compare(op: str, pred: str, t: str) -> list[str]:
    """`%c = cmp(%a, %b)` with NaN the largest float, as PyTorch sorts: an ordered `<=`/`<` also holds
    when %b is NaN (NaN last ascending), an ordered `>=`/`>` when %a is NaN (NaN first descending)."""
    if op != "cmpf" or pred not in ("ole", "olt", "oge", "ogt"):
        return [f"            %c = arith.{op} {pred}, %a, %b : {t}"]
    nan = "%b" if pred in ("ole", "olt") else "%a"
    return [f"            %cmp = arith.{op} {pred}, %a, %b : {t}",
            f"            %nan = arith.cmpf uno, {nan}, {nan} : {t}",
            "            %c = arith.ori %cmp, %nan : i1"]


def _module(op: ir.Operation) -> ir.Operation:
    cur = op
    while cur.name != "builtin.module":
        cur = cur.parent
    return cur


@register
class SortToMerge(SymPass):
    """Replace 1-D tm_tensor.sort on memrefs (a bubble sort once lowered) with a merge sort call."""

    name = "sym-sort-to-merge"

    def run(self, op: ir.Operation) -> None:
        sorts: list[ir.Operation] = []
        self._collect(op, sorts)
        for s in sorts:
            self._rewrite(s)

    def _collect(self, op: ir.Operation, out: list) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    if child.operation.name == "tm_tensor.sort":
                        out.append(child.operation)
                    else:
                        self._collect(child.operation, out)

    def _rewrite(self, s: ir.Operation) -> None:
        block = s.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        cmp = None
        if len(ops) == 2 and ops[1].name == "tm_tensor.yield" and ops[1].operands[0] == ops[0].result \
                and list(ops[0].operands) == [block.arguments[0], block.arguments[1]]:
            cmp = _CMP.search(str(ops[0]))
        types: list[str] = []
        for v in s.operands:
            m = _MEMREF_1D.match(str(v.type))
            types.append(m.group(2) if m else "")
        if cmp is None or "dimension" not in s.attributes or ir.IntegerAttr(s.attributes["dimension"]).value != 0 \
                or s.results or not all(types):
            if cmp is not None:
                self._nan_largest(block, ops[0], cmp.group(1), cmp.group(2))
            self.bump("left-alone")
            return
        kind, pred = cmp.group(1), cmp.group(2)
        name = f"__sym_merge_sort_{kind}_{pred}_{'_'.join(types)}"
        module = _module(s)
        ctx = s.context
        if not any(o.operation.name == "func.func" and ir.StringAttr(o.operation.attributes["sym_name"]).value == name
                   for o in module.regions[0].blocks[0].operations):
            fn = ir.Operation.parse(_template(name, kind, pred, types), context=ctx)
            module.regions[0].blocks[0].append(fn)
        dyn = [ir.Type.parse(f"memref<?x{t}>", context=ctx) for t in types]
        with ir.InsertionPoint(s), s.location:
            args = []
            for v, t in zip(s.operands, dyn):
                if v.type != t:
                    v = ir.Operation.create("memref.cast", results=[t], operands=[v]).result
                args.append(v)
            ir.Operation.create("func.call", results=[], operands=args,
                                attributes={"callee": ir.FlatSymbolRefAttr.get(name, context=ctx)})
        s.erase()
        self.bump("sorts-rewritten")

    def _nan_largest(self, block: ir.Block, cmp: ir.Operation, kind: str, pred: str) -> None:
        """A sort left to tm-tensor-to-loops keeps its comparator, made NaN-aware as _compare's is."""
        if kind != "cmpf" or pred not in ("ole", "olt", "oge", "ogt"):
            return
        from torch_mlir.dialects import arith

        nan = block.arguments[1] if pred in ("ole", "olt") else block.arguments[0]
        yield_op = block.operations[1].operation
        with ir.InsertionPoint(yield_op), cmp.location:
            isnan = arith.CmpFOp(arith.CmpFPredicate.UNO, nan, nan)
            either = arith.OrIOp(cmp.result, isnan.result)
        yield_op.operands[0] = either.result
        self.bump("nan-aware-comparators")
