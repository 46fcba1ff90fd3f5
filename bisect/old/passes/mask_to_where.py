"""Boolean-mask code to `where`: no data-dependent sizes left in the compute (torch dialect).

`x[mask]` has as many rows as `mask` has true elements: a size known only when the data is (an
unbacked symbol u0 in PyTorch's ShapeEnv). Most model code never lets that size escape: it writes
through the mask (`x[mask] = v`, `x[mask] += 1`), reduces the selection (`x[mask].sum()`,
`(a[m] - b[m]).pow(2).mean()`), or asks for its length (`x[mask].numel()`). Each of those has an
equivalent over the full tensor, with `where`, and then every size follows from the input sizes.

Rewrites (m: one boolean index, at position j of the index list, k = rank(m); mb: m unsqueezed on the
right to broadcast into x):
  index_put(x, [m], v)                  -> where(mb, v', x)       v' = v in x's dtype; v broadcastable
                                                                  to the selection without its u0 dim
  index_put(x, [m], v, accumulate=true) -> where(mb, x + v', x)
  index_put(x, [m], E(y[m], ...))       -> where(mb, E(y, ...), x)  (the value is the selection of a
                                                                  full tensor through the same mask)
  R(E(x[m], ...)) for a reduction R over the selected dim, E elementwise (any chain, possibly none):
      sum/prod/amax/amin/max/min/any/all -> R(where(mb, E(x, ...), identity))
          identity: 0 for sum, 1 for prod, -inf/+inf (integer min/max, false/true) for max/min;
          max/min also check at run time that the selection is not empty, as eager does
      mean                               -> sum(where(mb, E(x), 0)) / sum(where(mb, 1, 0))
  size(x[m], j) -> sum(m); size(x[m], d) -> size(x, d'); numel(x[m]) -> sum(where(mb, 1, 0))
  masked_select(x, m) is x[m] for a mask of x's rank (same rules);
  masked_scatter(x, m, s) -> where(mb, unflatten(s_padded[clamp(cumsum(m) - 1, 0, numel(s))]), x),
      with a run-time check numel(s) >= sum(m) (eager's error).
  `mask.sum()` / `count_nonzero` need nothing: they are plain reductions already.
Where would broadcast a mask whose dims differ from the indexed ones (a size-1 mask), a run-time check
raises eager's IndexError instead (messages starting `IndexError: ` are raised as IndexError by the
backend); an index_put with a floating-point index compiles to eager's IndexError. Identities keep
x's dtype (an int scalar for integer tensors, a 0-d bool tensor for boolean ones).

Left alone, with the reason logged (logger `mlir_sym.passes.mask_to_where`; `debug=1` prints it):
a selection whose value escapes with its data-dependent size (returned, or used by an op that is not
elementwise, a reduction over the selected dim, a size query or a same-mask index_put), a value
operand that has one entry per selected element but is not a selection through the same mask, masks
that are not boolean, several index tensors. With `strict=1` (the compile pipeline) a data-dependent
selection that is left is an error at its location, instead of a crash or a guess in torch-mlir.

Before:
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : ... -> !torch.vtensor<[?],f32>
  %r = torch.aten.sum.dim_IntList %s, %empty, %false, %none : ... -> !torch.vtensor<[],f32>
After:
  %float0 = torch.constant.float 0.000000e+00
  %w = torch.aten.where.ScalarOther %m, %x, %float0 : ... -> !torch.vtensor<[?],f32>
  %r = torch.aten.sum.dim_IntList %w, %empty, %false, %none : ... -> !torch.vtensor<[],f32>
"""
from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass, field

from torch_mlir import ir

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import SymPass, located_error, register

log = logging.getLogger("mlir_sym.passes.mask_to_where")

# ---------------------------------------------------------------------------------------------
# torch types: !torch.vtensor<[d0,d1],dtype>, a dim None where it is `?`.

_VT = re.compile(r"^!torch\.vtensor<\[([^\]]*)\],([\w]+)>$")
DTYPE_CODE = {"ui8": 0, "si8": 1, "si16": 2, "si32": 3, "si64": 4, "f16": 5, "f32": 6, "f64": 7, "i1": 11, "bf16": 15}
FLOATS = {"f16", "f32", "f64", "bf16"}
INT_RANGE = {"ui8": (0, 255), "si8": (-(2**7), 2**7 - 1), "si16": (-(2**15), 2**15 - 1),
             "si32": (-(2**31), 2**31 - 1), "si64": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True)
class VT:
    dims: tuple  # int or None
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.dims)

    def text(self) -> str:
        return f"!torch.vtensor<[{','.join('?' if d is None else str(d) for d in self.dims)}],{self.dtype}>"


def vt(t: ir.Type) -> VT | None:
    m = _VT.match(str(t))
    if not m:
        return None
    dims = tuple(None if d.strip() == "?" else int(d) for d in m.group(1).split(",") if d.strip())
    return VT(dims, m.group(2))


def broadcast(*shapes: tuple) -> tuple:
    """Right-aligned broadcast of dim tuples (None: unknown)."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        ds = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = [d for d in ds if d is not None and d != 1]
        if known:
            out.append(known[0])
        elif any(d is None for d in ds):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Op tables.

INDEX_OPS = {"torch.aten.index.Tensor", "torch.aten.index.Tensor_hacked_twin"}
INDEX_PUT_OPS = {"torch.aten.index_put", "torch.aten.index_put.hacked_twin", "torch.aten._index_put_impl"}
# name -> (kind, dims operand, keepdim operand, dims operand is one int)
REDUCTIONS = {
    "torch.aten.sum": ("sum", None, None, False),
    "torch.aten.sum.dim_IntList": ("sum", 1, 2, False),
    "torch.aten.mean": ("mean", None, None, False),
    "torch.aten.mean.dim": ("mean", 1, 2, False),
    "torch.aten.amax": ("max", 1, 2, False),
    "torch.aten.amin": ("min", 1, 2, False),
    "torch.aten.max": ("max", None, None, False),
    "torch.aten.min": ("min", None, None, False),
    "torch.aten.prod": ("prod", None, None, False),
    "torch.aten.prod.dim_int": ("prod", 1, 2, True),
    "torch.aten.any": ("any", None, None, False),
    "torch.aten.any.dim": ("any", 1, 2, True),
    "torch.aten.all": ("all", None, None, False),
    "torch.aten.all.dim": ("all", 1, 2, True),
}
# Elementwise ops that are total (no error, no undefined behaviour) on every input value: evaluating
# them on the unselected elements too, then masking, is exact. (No integer floor division/remainder.)
ELEMENTWISE = {f"torch.aten.{n}" for n in (
    "abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sigmoid tanh relu gelu silu square sin cos "
    "tan atan reciprocal sign sgn floor ceil round trunc frac erf logical_not bitwise_not isnan isinf "
    "nan_to_num leaky_relu hardtanh elu softplus clone to.dtype _to_copy clamp clamp_min clamp_max "
    "pow.Tensor_Scalar pow.Tensor_Tensor pow.Scalar mul.Scalar add.Scalar sub.Scalar div.Scalar rsub.Scalar "
    "eq.Scalar ne.Scalar lt.Scalar le.Scalar gt.Scalar ge.Scalar eq.Tensor ne.Tensor lt.Tensor le.Tensor "
    "gt.Tensor ge.Tensor masked_fill.Scalar masked_fill.Tensor add.Tensor sub.Tensor mul.Tensor div.Tensor "
    "maximum minimum logical_and logical_or logical_xor bitwise_and.Tensor bitwise_or.Tensor "
    "bitwise_xor.Tensor atan2 where.self where.ScalarOther where.ScalarSelf where.Scalar lerp.Scalar "
    "lerp.Tensor").split()} | {"torch.prims.convert_element_type"}
# Ops whose result size depends on data: what strict mode refuses to leave in the compute.
DATA_DEPENDENT = INDEX_OPS | {"torch.aten.masked_select", "torch.aten.nonzero", "torch.aten.nonzero_numpy",
                              "torch.aten._unique2", "torch.aten.unique_consecutive", "torch.aten.unique_dim"}


def _name(v: ir.Value) -> str | None:
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner.name


def _op(v: ir.Value):
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _const_int(v: ir.Value) -> int | None:
    op = _op(v)
    if op is not None and op.name == "torch.constant.int":
        return ir.IntegerAttr(op.attributes["value"]).value
    return None


def _const_bool(v: ir.Value) -> bool | None:
    op = _op(v)
    if op is not None and op.name == "torch.constant.bool":
        return ir.BoolAttr(op.attributes["value"]).value
    return None


def _is_none(v: ir.Value) -> bool:
    return _name(v) == "torch.constant.none"


def _int_list(v: ir.Value) -> list[int] | None:
    """The constant ints of a `torch.prim.ListConstruct` (None when not constant)."""
    op = _op(v)
    if op is None or op.name != "torch.prim.ListConstruct":
        return None
    out = [_const_int(x) for x in op.operands]
    return None if any(x is None for x in out) else out


def _where(op) -> str:
    loc = str(op.location)
    m = re.search(r'"([^"]+)":(\d+)', loc)
    return f"{m.group(1)}:{m.group(2)}" if m else loc


# ---------------------------------------------------------------------------------------------
# Building torch ops.


class Builder:
    def __init__(self, before, ctx: ir.Context) -> None:
        self.before = before
        self.ctx = ctx
        self.loc = before.location

    def t(self, text: str) -> ir.Type:
        return ir.Type.parse(text, context=self.ctx)

    def op(self, name: str, operands: list, result: str | VT | None = None, attrs: dict | None = None):
        rt = [] if result is None else [self.t(result.text() if isinstance(result, VT) else result)]
        with ir.InsertionPoint(self.before), self.loc:
            o = ir.Operation.create(name, results=rt, operands=list(operands), attributes=attrs or {})
        return o.result if result is not None else o

    def int(self, v: int) -> ir.Value:
        return self.op("torch.constant.int", [], "!torch.int",
                       {"value": ir.IntegerAttr.get(ir.IntegerType.get_signless(64, self.ctx), v)})

    def float(self, v: float) -> ir.Value:
        return self.op("torch.constant.float", [], "!torch.float", {"value": ir.FloatAttr.get(ir.F64Type.get(self.ctx), v)})

    def bool(self, v: bool) -> ir.Value:
        return self.op("torch.constant.bool", [], "!torch.bool", {"value": ir.BoolAttr.get(v, self.ctx)})

    def none(self) -> ir.Value:
        return self.op("torch.constant.none", [], "!torch.none")

    def ints(self, vals: list[int]) -> ir.Value:
        return self.op("torch.prim.ListConstruct", [self.int(v) for v in vals], "!torch.list<int>")

    def scalar(self, value: float, dtype: str) -> ir.Value:
        """A scalar that keeps a tensor of `dtype` in `dtype` under type promotion."""
        if dtype == "i1":
            return self.bool(value > 0)  # -inf (identity of max) is false, +inf (of min) true
        if dtype in FLOATS:
            return self.float(float(value))
        lo, hi = INT_RANGE.get(dtype, INT_RANGE["si64"])
        return self.int(int(max(lo, min(hi, value))) if abs(value) != float("inf") else (lo if value < 0 else hi))

    def bool_tensor(self, value: bool) -> ir.Value:
        """A 0-d boolean tensor (where.ScalarOther takes no bool scalar; an int one would promote)."""
        i1 = ir.IntegerType.get_signless(1, self.ctx)
        attr = ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i1), ir.IntegerAttr.get(i1, int(value)))
        return self.op("torch.vtensor.literal", [], VT((), "i1"), {"value": attr})

    def unsqueeze_right(self, v: ir.Value, t: VT, rank: int) -> tuple[ir.Value, VT]:
        while t.rank < rank:
            t = VT(t.dims + (1,), t.dtype)
            v = self.op("torch.aten.unsqueeze", [v, self.int(t.rank - 1)], t)
        return v, t

    def to_dtype(self, v: ir.Value, t: VT, dtype: str) -> ir.Value:
        if t.dtype == dtype:
            return v
        f = self.bool(False)
        return self.op("torch.aten.to.dtype", [v, self.int(DTYPE_CODE[dtype]), f, f, self.none()], VT(t.dims, dtype))

    def count(self, mask: ir.Value) -> ir.Value:
        """sum(mask) as a 0-d si64 tensor."""
        return self.op("torch.aten.sum.dim_IntList", [mask, self.none(), self.bool(False), self.none()],
                       VT((), "si64"))

    def check(self, ok: ir.Value, message: str) -> None:
        self.op("torch.runtime.assert", [ok], None, {"message": ir.StringAttr.get(message, self.ctx)})

    def check_mask_dims(self, mask: ir.Value, mt: VT, x: ir.Value, xt: VT, j: int) -> None:
        """Eager's IndexError for a mask whose dims differ from the indexed ones (where would broadcast
        a size-1 mask instead). The `IndexError: ` prefix makes the backend raise that type."""
        for i in range(mt.rank):
            a, b = mt.dims[i], xt.dims[j + i]
            msg = (f"IndexError: The shape of the mask at index {i} does not match the shape of the indexed "
                   f"tensor at index {j + i}")
            if a is not None and b is not None:
                if a != b:
                    self.check(self.bool(False), msg)
                continue
            n = self.op("torch.aten.size.int", [mask, self.int(i)], "!torch.int")
            m = self.op("torch.aten.size.int", [x, self.int(j + i)], "!torch.int")
            self.check(self.op("torch.aten.eq.int", [n, m], "!torch.bool"), msg)

    def check_nonempty(self, count: ir.Value, message: str) -> None:
        n = self.op("torch.aten.Int.Tensor", [count], "!torch.int")
        self.check(self.op("torch.aten.gt.int", [n, self.int(0)], "!torch.bool"), message)


# ---------------------------------------------------------------------------------------------
# Selections: values that are x[m] for a full tensor x (built lazily) and a boolean mask m.


@dataclass
class Sel:
    """`value` equals full[mask] (kind "index": mask at dims j..j+k-1 of full, value's dim j has the
    selected rows) or masked_select(full, mask) (kind "select": j = 0, mask of full's rank)."""

    value: ir.Value
    mask: ir.Value
    mask_t: VT
    j: int
    kind: str
    origin: object  # the index / masked_select op the selection comes from
    full_val: ir.Value | None = None  # set for roots; built on demand for elementwise results
    full_t: VT | None = None
    op: object = None  # the elementwise op that made it (None for roots)
    component: int = 0

    @property
    def k(self) -> int:
        return self.mask_t.rank


def _single_bool_index(indices: ir.Value) -> tuple[int, ir.Value, VT] | str:
    """(position, mask, mask type) of the one boolean index tensor in an index list, or why not."""
    op = _op(indices)
    if op is None or op.name != "torch.prim.ListConstruct":
        return "the index list is not a list construct"
    found = None
    for pos, v in enumerate(op.operands):
        if _is_none(v):
            continue
        t = vt(v.type)
        if found is not None:
            return "several index tensors"
        if t is None or t.dtype != "i1":
            return f"the index is not a boolean tensor ({v.type})"
        found = (pos, v, t)
    return found if found is not None else "no index tensor"


def _float_index(indices: ir.Value) -> bool:
    op = _op(indices)
    return op is not None and any((vt(v.type) or VT((), "")).dtype in FLOATS for v in op.operands)


def _has_bool_index(indices: ir.Value) -> bool:
    op = _op(indices)
    return op is not None and any((vt(v.type) or VT((), "")).dtype == "i1" for v in op.operands)


@dataclass
class Component:
    sels: list = field(default_factory=list)
    bad: str | None = None
    terminals: list = field(default_factory=list)  # (op, sel) uses to rewrite


@register
class MaskToWhere(SymPass):
    """Rewrite boolean-mask indexing (x[m] = v, reductions of x[m], masked_scatter) to where."""

    name = "sym-mask-to-where"
    options = {"debug": bool, "strict": bool}
    debug = False
    strict = False

    def run(self, op: ir.Operation) -> None:
        self.ctx = op.context
        for fn in op.regions[0].blocks[0].operations:
            if fn.operation.name != "func.func" or sym.GUARD_FN_ATTR in fn.operation.attributes:
                continue
            for block in fn.regions[0].blocks:
                self._run_block(block)

    # -- reporting --------------------------------------------------------------------------

    def _leave(self, op, why: str) -> None:
        msg = f"{_where(op)}: left '{op.name}' alone: {why}"
        log.debug(msg)
        if self.debug:
            print(f"sym-mask-to-where: {msg}", file=sys.stderr)
        self.bump("left-alone")

    def _did(self, op, what: str) -> None:
        log.debug("%s: %s", _where(op), what)
        if self.debug:
            print(f"sym-mask-to-where: {_where(op)}: {what}", file=sys.stderr)

    # -- driver -----------------------------------------------------------------------------

    def _run_block(self, block: ir.Block) -> None:
        ops = [o.operation for o in block.operations]
        self.sels: dict[ir.Value, Sel] = {}
        self.reasons: dict = {}
        comps: list[Component] = []
        for o in ops:
            if o.name in INDEX_OPS:
                got = _single_bool_index(o.operands[1])
                if isinstance(got, str):
                    self._leave(o, got)
                    continue
                j, mask, mt = got
                xt = vt(o.operands[0].type)
                if xt is None or vt(o.result.type) is None or j + mt.rank > xt.rank:
                    self._leave(o, "unranked or mismatched types")
                    continue
                comps.append(Component())
                s = Sel(o.result, mask, mt, j, "index", o, o.operands[0], xt, component=len(comps) - 1)
                comps[-1].sels.append(s)
                self.sels[o.result] = s
            elif o.name == "torch.aten.masked_select":
                xt, mt = vt(o.operands[0].type), vt(o.operands[1].type)
                if xt is None or mt is None or xt.rank != mt.rank or xt.rank == 0:
                    self._leave(o, "the mask's rank differs from the tensor's (broadcasting masked_select)")
                    continue
                comps.append(Component())
                s = Sel(o.result, o.operands[1], mt, 0, "select", o, o.operands[0], xt, component=len(comps) - 1)
                comps[-1].sels.append(s)
                self.sels[o.result] = s
            elif o.name in ELEMENTWISE and o.results and any(v in self.sels for v in o.operands):
                self._elementwise(o, comps)
        # Classify every use of every selection.
        for comp in comps:
            for s in list(comp.sels):
                if comp.bad:
                    break
                for use in s.value.uses:
                    why = self._classify(use.owner.operation, use.operand_number, s, comp)
                    if why:
                        comp.bad = f"{why} (at {_where(use.owner.operation)})"
                        break
            # an elementwise op that mixed two components made both bad
        for comp in comps:
            if not comp.sels:
                continue  # merged into another
            if comp.bad:
                for s in comp.sels:
                    self.reasons[s.value] = self.reasons[s.origin] = comp.bad
                self._leave(comp.sels[0].origin, f"the selection escapes with its data-dependent size: {comp.bad}")
                continue
            for s in comp.sels:
                if s.op is None and s.kind == "index":
                    Builder(s.origin, self.ctx).check_mask_dims(s.mask, s.mask_t, s.full_val, s.full_t, s.j)
            for user, s in comp.terminals:
                self._rewrite_terminal(user, s)
            for s in reversed(comp.sels):
                self._erase_if_dead(_op(s.value))
        # Writes through a mask with a value of the same size for every selected element.
        for o in [x.operation for x in block.operations]:  # afresh: the rewrites above erased ops
            if o.name in INDEX_PUT_OPS:
                self._index_put(o)
            elif o.name == "torch.aten.masked_scatter":
                self._masked_scatter(o)
        if self.strict:
            for o in block.operations:
                o = o.operation
                if o.name in DATA_DEPENDENT and (o.name not in INDEX_OPS or _has_bool_index(o.operands[1])):
                    why = self.reasons.get(o, "sym-mask-to-where has no where form for it")
                    raise located_error(o, f"'{o.name}' has a result of data-dependent size ({why}); mlir_sym "
                                           f"compiles only code whose sizes follow from input sizes: write "
                                           f"through the mask (torch.where) or reduce the selection")

    def _elementwise(self, o, comps: list[Component]) -> None:
        ins = [self.sels[v] for v in o.operands if v in self.sels]
        first = ins[0]
        comp = comps[first.component]
        rt = vt(o.result.type) if len(o.results) == 1 else None
        why = None
        if rt is None:
            why = f"'{o.name}' has an unranked or multiple results"
        for s in ins[1:]:
            if s.mask != first.mask or s.j != first.j or s.kind != first.kind:
                why = f"'{o.name}' combines selections through different masks"
            elif vt(s.value.type).rank != vt(first.value.type).rank:
                why = f"'{o.name}' combines selections of different ranks"
            if s.component != first.component:  # merge components
                other = comps[s.component]
                for t in other.sels:
                    t.component = first.component
                comp.sels.extend(other.sels)
                comp.bad = comp.bad or other.bad
                other.sels = []
        if why is None:
            rest = vt(first.value.type).rank - first.j - 1
            for v in o.operands:
                t = vt(v.type)
                if v in self.sels or t is None:
                    continue
                if t.rank > rest and not (first.k == 1 and t.dims[t.rank - rest - 1] == 1):
                    why = f"operand {v.get_name()} of '{o.name}' spans the selected dimension"
        if why is not None:
            comp.bad = comp.bad or f"{why} (at {_where(o)})"
            return
        s = Sel(o.result, first.mask, first.mask_t, first.j, first.kind, first.origin, op=o, component=first.component)
        comp.sels.append(s)
        self.sels[o.result] = s

    def _classify(self, user, operand: int, s: Sel, comp: Component) -> str | None:
        """None when `user` (a use of selection s) can be rewritten; else why not."""
        name = user.name
        if len(user.results) == 1 and user.results[0] in self.sels:
            return None  # an elementwise op on selections: its own uses decide
        if name in REDUCTIONS and operand == 0:
            kind, dims_i, keep_i, single = REDUCTIONS[name]
            rank = vt(s.value.type).rank
            dims = self._dims(user, dims_i, single, rank)
            if dims is None:
                return f"'{name}' has non-constant dims"
            if s.j not in dims:
                return f"'{name}' keeps the selected dimension {s.j} (reduces {sorted(dims)} only)"
            if single and s.k != 1:
                return f"'{name}' reduces one dim but the mask has {s.k}"
            if vt(user.result.type) is None:
                return f"'{name}' has an unranked result"
            comp.terminals.append((user, s))
            return None
        if name == "torch.aten.size.int" and operand == 0:
            if _const_int(user.operands[1]) is None:
                return "size() of a non-constant dim"
            comp.terminals.append((user, s))
            return None
        if name == "torch.aten.numel":
            comp.terminals.append((user, s))
            return None
        if name in INDEX_PUT_OPS and operand == 2 and s.kind == "index":
            got = _single_bool_index(user.operands[1])
            xt = vt(user.operands[0].type)
            if isinstance(got, str) or got[1] != s.mask or got[0] != s.j:
                return f"'{name}' writes it through another index than the selection's mask"
            if xt is None or vt(s.value.type).rank != xt.rank - s.k + 1:
                return f"'{name}' broadcasts the selection"
            comp.terminals.append((user, s))
            return None
        if name == "func.return":
            return "returned from the function"
        return f"used by '{name}', which is neither elementwise nor a reduction over the selected dim"

    def _dims(self, user, dims_i, single, rank) -> set[int] | None:
        if dims_i is None:
            return set(range(rank))
        v = user.operands[dims_i]
        if _is_none(v):
            return set(range(rank))
        if single:
            d = _const_int(v)
            return None if d is None else {d % max(rank, 1)}
        ds = _int_list(v)
        if ds is None:
            return None
        return set(range(rank)) if not ds else {d % max(rank, 1) for d in ds}

    # -- full tensors ------------------------------------------------------------------------

    def _full(self, s: Sel) -> tuple[ir.Value, VT]:
        """The full tensor whose selection is s (built right before the op that made s)."""
        if s.full_val is not None:
            return s.full_val, s.full_t
        o = s.op
        b = Builder(o, self.ctx)
        operands, shapes = [], []
        for v in o.operands:
            if v in self.sels:
                fv, ft = self._full(self.sels[v])
                operands.append(fv)
                shapes.append(ft.dims)
            else:
                operands.append(v)
                t = vt(v.type)
                if t is not None:
                    shapes.append(t.dims)
        ft = VT(broadcast(*shapes), vt(o.result.type).dtype)
        s.full_val, s.full_t = b.op(o.name, operands, ft, {a.name: a.attr for a in o.attributes}), ft
        return s.full_val, s.full_t

    def _mask_for(self, b: Builder, s: Sel, rank: int) -> ir.Value:
        """The mask, unsqueezed to broadcast into a tensor of `rank` dims whose dims j.. are the mask's."""
        if s.kind == "select":
            return s.mask
        v, _ = b.unsqueeze_right(s.mask, s.mask_t, rank - s.j)
        return v

    def _masked(self, b: Builder, s: Sel, identity: float) -> tuple[ir.Value, VT]:
        fv, ft = self._full(s)
        mb = self._mask_for(b, s, ft.rank)
        wt = VT(broadcast(ft.dims, s.mask_t.dims + (1,) * (ft.rank - s.j - s.k) if s.kind == "index" else s.mask_t.dims), ft.dtype)
        if ft.dtype == "i1":  # -inf (identity of max) is false, +inf (of min) true
            return b.op("torch.aten.where.self", [mb, fv, b.bool_tensor(identity > 0)], wt), wt
        return b.op("torch.aten.where.ScalarOther", [mb, fv, b.scalar(identity, ft.dtype)], wt), wt

    def _ones_where(self, b: Builder, s: Sel) -> tuple[ir.Value, VT]:
        """where(mask, 1, 0) broadcast to the full tensor's shape, in si64: what counting sums."""
        fv, ft = self._full(s)
        none = b.none()
        ones = b.op("torch.aten.ones_like", [fv, b.int(DTYPE_CODE["si64"]), none, none, none, none], VT(ft.dims, "si64"))
        mb = self._mask_for(b, s, ft.rank)
        wt = VT(broadcast(ft.dims, s.mask_t.dims + (1,) * (ft.rank - s.j - s.k) if s.kind == "index" else s.mask_t.dims), "si64")
        return b.op("torch.aten.where.ScalarOther", [mb, ones, b.int(0)], wt), wt

    def _count(self, b: Builder, s: Sel) -> ir.Value:
        """The number of selected rows, a 0-d si64 tensor."""
        if s.kind == "index":
            return b.count(s.mask)
        s = self.sels[s.origin.result]  # the masked_select itself: its tensor precedes every use
        w, _ = self._ones_where(b, s)
        return b.op("torch.aten.sum.dim_IntList", [w, b.none(), b.bool(False), b.none()], VT((), "si64"))

    # -- rewrites ------------------------------------------------------------------------------

    def _rewrite_terminal(self, user, s: Sel) -> None:
        name = user.name
        b = Builder(user, self.ctx)
        if name in REDUCTIONS:
            self._reduction(b, user, s)
        elif name == "torch.aten.size.int":
            rank = vt(s.value.type).rank
            d = _const_int(user.operands[1]) % max(rank, 1)
            if d == s.j:
                new = b.op("torch.aten.Int.Tensor", [self._count(b, s)], "!torch.int")
            else:
                fv, _ = self._full(s)
                new = b.op("torch.aten.size.int", [fv, b.int(d if d < s.j else d + s.k - 1)], "!torch.int")
            user.result.replace_all_uses_with(new)
            self._did(user, "size of a selection -> count of the mask")
            self._erase(user)
            self.bump("sizes")
        elif name == "torch.aten.numel":
            w, wt = self._ones_where(b, s)
            n = b.op("torch.aten.sum.dim_IntList", [w, b.none(), b.bool(False), b.none()], VT((), "si64"))
            new = b.op("torch.aten.Int.Tensor", [n], "!torch.int")
            user.result.replace_all_uses_with(new)
            self._did(user, "numel of a selection -> count of the mask")
            self._erase(user)
            self.bump("sizes")
        elif name in INDEX_PUT_OPS:
            x = user.operands[0]
            xt = vt(x.type)
            fv, ft = self._full(s)
            fv = b.to_dtype(fv, ft, xt.dtype)
            acc = _const_bool(user.operands[3])
            if acc is None:
                self._leave(user, "accumulate is not a constant")
                return
            b.check_mask_dims(s.mask, s.mask_t, x, xt, s.j)
            mb = self._mask_for(b, s, xt.rank)
            if acc:
                fv = b.op("torch.aten.add.Tensor", [x, fv, b.int(1)], xt)
            new = b.op("torch.aten.where.self", [mb, fv, x], vt(user.result.type))
            user.result.replace_all_uses_with(new)
            self._did(user, "index_put of a same-mask selection -> where")
            self._erase(user)
            self.bump("index-put")

    def _reduction(self, b: Builder, user, s: Sel) -> None:
        kind, dims_i, keep_i, single = REDUCTIONS[user.name]
        rt = vt(user.result.type)
        rank_i = vt(s.value.type).rank
        dims = self._dims(user, dims_i, single, rank_i)
        keep = False if keep_i is None else bool(_const_bool(user.operands[keep_i]))
        if keep_i is not None and _const_bool(user.operands[keep_i]) is None:
            self._leave(user, "keepdim is not a constant")
            return
        # dims of the full tensor
        dims_f: list[int] = []
        for d in sorted(dims):
            dims_f += [d] if d < s.j else list(range(s.j, s.j + s.k)) if d == s.j else [d + s.k - 1]
        identity = {"sum": 0, "mean": 0, "prod": 1, "any": 0, "all": 1,
                    "max": float("-inf"), "min": float("inf")}[kind]
        w, wt = self._masked(b, s, identity)
        if kind in ("max", "min"):  # eager's error for an empty selection, before the asserts PyTorch recorded
            op = user.name.split(".")[2]
            explicit = dims_i is not None and not (_is_none(user.operands[dims_i]) or _int_list(user.operands[dims_i]) == [])
            first = Builder(s.origin, self.ctx)
            first.check_nonempty(self._count(first, s), (
                f"IndexError: {op}(): Expected reduction dim {s.j} to have non-zero size." if explicit else
                f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                f"dim with the 'dim' argument."))
        full_dims = len(dims_f) == wt.rank
        # the result before dropping the k-1 extra kept dims of a multi-dim mask
        rt_f = rt if not keep or s.k == 1 else VT(rt.dims[: s.j + 1] + (1,) * (s.k - 1) + rt.dims[s.j + 1:], rt.dtype)
        operands = list(user.operands)
        operands[0] = w
        if dims_i is not None and not single and not (_is_none(operands[dims_i]) or _int_list(operands[dims_i]) == []):
            # explicit dims of the selection -> dims of the full tensor ([] / None already mean all)
            operands[dims_i] = b.ints(dims_f)
        name = user.name
        if kind == "mean":
            name = "torch.aten.sum" if name == "torch.aten.mean" else "torch.aten.sum.dim_IntList"
        new = b.op(name, operands, rt_f)
        if kind == "mean":
            if s.kind == "index" and full_dims and wt.rank == s.k and not keep:
                cnt = b.count(s.mask)  # every element of the full tensor is a row: count = sum(mask)
            else:
                cw, _ = self._ones_where(b, s)
                cdims = b.none() if dims_i is None or full_dims else b.ints(dims_f)
                cnt = b.op("torch.aten.sum.dim_IntList", [cw, cdims, b.bool(keep), b.none()], VT(rt_f.dims, "si64"))
            new = b.op("torch.aten.div.Tensor", [new, cnt], rt_f)
        if keep and s.k > 1:
            cur = rt_f
            for d in reversed(range(s.j + 1, s.j + s.k)):
                cur = VT(cur.dims[:d] + cur.dims[d + 1:], cur.dtype)
                new = b.op("torch.aten.squeeze.dim", [new, b.int(d)], cur)
        user.result.replace_all_uses_with(new)
        self._did(user, f"{user.name} of a selection -> {name} of where(mask, x, {identity})")
        self._erase(user)
        self.bump("reductions")

    def _index_put(self, o) -> None:
        got = _single_bool_index(o.operands[1])
        if isinstance(got, str):
            if _float_index(o.operands[1]):  # eager always raises: so does the compiled code
                b = Builder(o, self.ctx)
                b.check(b.bool(False), "IndexError: tensors used as indices must be long, int, byte or bool tensors")
                o.result.replace_all_uses_with(o.operands[0])
                self._did(o, "index_put with a floating-point index -> eager's IndexError")
                self._erase(o)
                return
            self._leave(o, got)
            return
        j, mask, mt = got
        x, v = o.operands[0], o.operands[2]
        xt, vtt, rt = vt(x.type), vt(v.type), vt(o.result.type)
        acc = _const_bool(o.operands[3])
        if xt is None or vtt is None or rt is None:
            self._leave(o, "unranked types")
            return
        if acc is None:
            self._leave(o, "accumulate is not a constant")
            return
        if acc and xt.dtype == "i1":
            self._leave(o, "accumulating into a boolean tensor")
            return
        if j + mt.rank > xt.rank:
            self._leave(o, "the mask has more dims than the tensor")
            return
        if v in self.sels:
            self._leave(o, f"the value has one entry per selected element: "
                           f"{self.reasons.get(v, 'a selection that could not be rewritten')}")
            return
        rest = xt.rank - j - mt.rank
        if vtt.rank > rest:
            u = vtt.rank - rest - 1  # the value's dim that lines up with the selected rows
            if u >= 0 and vtt.dims[u] != 1:
                self._leave(o, f"the value {vtt.text()} has one entry per selected element (data-dependent)")
                return
            if mt.rank > 1 and vtt.rank > rest + 1:
                self._leave(o, "a value with leading dims through a multi-dim mask")
                return
        b = Builder(o, self.ctx)
        if mt.rank > 1 and vtt.rank == rest + 1:
            v = b.op("torch.aten.squeeze.dim", [v, b.int(0)], VT(vtt.dims[1:], vtt.dtype))
            vtt = VT(vtt.dims[1:], vtt.dtype)
        v = b.to_dtype(v, vtt, xt.dtype)
        b.check_mask_dims(mask, mt, x, xt, j)
        mb, _ = b.unsqueeze_right(mask, mt, xt.rank - j)
        if acc:
            v = b.op("torch.aten.add.Tensor", [x, v, b.int(1)], xt)
        new = b.op("torch.aten.where.self", [mb, v, x], rt)
        o.result.replace_all_uses_with(new)
        self._did(o, "index_put through a boolean mask -> where")
        self._erase(o)
        self.bump("index-put")

    def _masked_scatter(self, o) -> None:
        x, mask, src = o.operands
        xt, mt, st, rt = vt(x.type), vt(mask.type), vt(src.type), vt(o.result.type)
        if None in (xt, mt, st, rt) or xt.rank == 0 or mt.rank > xt.rank or rt.dims != xt.dims:
            self._leave(o, "unranked, 0-d or broadcasting operands")
            return
        if st.dtype != xt.dtype:
            self._leave(o, "source and self have different dtypes (eager raises)")
            return
        b = Builder(o, self.ctx)
        i64 = DTYPE_CODE["si64"]
        mb = b.op("torch.aten.expand_as", [mask, x], VT(xt.dims, "i1"))
        n = None
        if all(d is not None for d in xt.dims):
            n = 1
            for d in xt.dims:
                n *= d
        flat_m = b.op("torch.aten.flatten.using_ints", [mb, b.int(0), b.int(-1)], VT((n,), "i1"))
        pos = b.op("torch.aten.cumsum", [flat_m, b.int(0), b.int(i64)], VT((n,), "si64"))
        pos = b.op("torch.aten.sub.Scalar", [pos, b.int(1), b.int(1)], VT((n,), "si64"))
        flat_s = b.op("torch.aten.flatten.using_ints", [src, b.int(0), b.int(-1)], VT((None,), st.dtype))
        m_src = b.op("torch.aten.size.int", [flat_s, b.int(0)], "!torch.int")
        # source numel >= number of true mask elements, as eager checks
        cnt = b.op("torch.aten.Int.Tensor", [b.count(flat_m)], "!torch.int")
        ok = b.op("torch.aten.le.int", [cnt, m_src], "!torch.bool")
        b.op("torch.runtime.assert", [ok], None, {"message": ir.StringAttr.get(
            "Number of elements of source < number of ones in mask", self.ctx)})
        # one padding element keeps the gather in bounds for unselected positions (and an empty source)
        none = b.none()
        pad = b.op("torch.aten.zeros", [b.ints([1]), b.int(DTYPE_CODE[st.dtype]), none, none, none], VT((1,), st.dtype))
        lst = b.op("torch.prim.ListConstruct", [flat_s, pad], "!torch.list<vtensor>")
        padded = b.op("torch.aten.cat", [lst, b.int(0)], VT((None,), st.dtype))
        idx = b.op("torch.aten.clamp", [pos, b.int(0), m_src], VT((n,), "si64"))
        g = b.op("torch.aten.index_select", [padded, b.int(0), idx], VT((n,), xt.dtype))
        if xt.rank > 1:
            sizes = b.op("torch.prim.ListConstruct",
                         [b.op("torch.aten.size.int", [x, b.int(d)], "!torch.int") for d in range(xt.rank)],
                         "!torch.list<int>")
            g = b.op("torch.aten.unflatten.int", [g, b.int(0), sizes], xt)
        new = b.op("torch.aten.where.self", [mb, g, x], rt)
        o.result.replace_all_uses_with(new)
        self._did(o, "masked_scatter -> where over a cumsum gather")
        self._erase(o)
        self.bump("masked-scatter")

    def _erase(self, o) -> None:
        """Erase o, and the constants and lists only it used."""
        operands = list(o.operands)
        o.erase()
        for v in operands:
            d = _op(v)
            if d is not None and (d.name.startswith("torch.constant.") or d.name == "torch.prim.ListConstruct"):
                self._erase_if_dead(d)

    def _erase_if_dead(self, o) -> None:
        if o is None or any(True for r in o.results for _ in r.uses):
            return
        self._erase(o)

