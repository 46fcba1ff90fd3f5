"""Drop `sym` facts from compute functions before lowering them (the guard function checks them).

`sym.bind` in a compute function states what the guard function already verified on entry; once the
compute is handed to torch-mlir's lowering (which knows no `sym`), the facts are erased together with
the expressions only they used. What they said about tensor arguments survives as the arg attribute
`sym.dims` (one string per dimension: the bound expression in sympy syntax, e.g. `["s0", "32",
"2*s1"]`, `"?"` where nothing was bound), and what they said about SymInt arguments as `sym.int`
(the bound expression, e.g. `"s0"`), which later passes (sym-assert-elim) read. Guard functions (`sym.guards`) and module-level `sym.symbol`
declarations are left alone; use `sym-split-guards` style module surgery to separate them first.

Before:
  func.func @main(%x: !torch.vtensor<[?],f32>) -> ... {
    %s0 = "sym.value"() {symbol = "s0"} : () -> index
    "sym.bind"(%x, %s0) {dim = 0 : i64} : (!torch.vtensor<[?],f32>, index) -> ()
    ...
After:
  func.func @main(%x: !torch.vtensor<[?],f32> {sym.dims = ["s0"]}) -> ... {
    ...
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import SymPass, located_error, register


@register
class StripFacts(SymPass):
    """Erase sym.bind facts and their expressions from compute (non-guard) functions."""

    name = "sym-strip-facts"

    def run(self, op: ir.Operation) -> None:
        for fn in op.regions[0].blocks[0].operations:
            if fn.operation.name != "func.func" or sym.GUARD_FN_ATTR in fn.operation.attributes:
                continue
            self._record_dims(fn)
            for block in fn.regions[0].blocks:
                for child in reversed(list(block.operations)):
                    name = child.operation.name
                    if not name.startswith("sym."):
                        continue
                    if name in ("sym.guard", "sym.assert"):
                        raise located_error(child.operation, f"'{name}' in a compute function; guards and asserts belong in the guard function")
                    o = child.operation
                    if any(True for r in o.results for _ in r.uses):
                        if name == "sym.bind":
                            continue
                        raise located_error(o, f"'{name}' result is used by a non-sym op and cannot be stripped")
                    o.erase()
                    self.bump("facts-erased")

    def _record_dims(self, fn) -> None:
        from mlir_sym import shapes

        entry = fn.regions[0].blocks[0]
        dims: dict[int, dict[int, str]] = {}
        ints: dict[int, str] = {}
        for child in entry.operations:
            o = child.operation
            if o.name != "sym.bind":
                continue
            arg = o.operands[0]
            if not isinstance(arg, ir.BlockArgument):
                continue
            try:
                text = str(shapes.to_sympy(o.operands[1]))
            except Exception:  # an expression we cannot read back: no fact, not a wrong one
                continue
            if "dim" in o.attributes:
                dims.setdefault(arg.arg_number, {})[ir.IntegerAttr(o.attributes["dim"]).value] = text
            else:  # a SymInt argument: its value
                ints.setdefault(arg.arg_number, text)
        if not dims and not ints:
            return
        old = list(ir.ArrayAttr(fn.arg_attrs)) if fn.arg_attrs is not None else [ir.DictAttr.get({})] * len(entry.arguments)
        new = []
        for i, a in enumerate(old):
            d = {n.name: n.attr for n in ir.DictAttr(a)}
            if i in dims:
                rank = sym._rank(entry.arguments[i].type) or (max(dims[i]) + 1)
                d["sym.dims"] = ir.ArrayAttr.get([ir.StringAttr.get(dims[i].get(k, "?")) for k in range(rank)])
            if i in ints:
                d["sym.int"] = ir.StringAttr.get(ints[i])
            new.append(ir.DictAttr.get(d))
        fn.arg_attrs = ir.ArrayAttr.get(new)
