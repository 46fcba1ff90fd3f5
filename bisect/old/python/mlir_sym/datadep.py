"""Data-dependent output sizes, compiled in phases: count, allocate, fill.

`torch.nonzero(x)`, `x[mask]`, `torch.masked_select`, `torch.unique`, `torch.unique_consecutive`,
`repeat_interleave(repeats)` and sizes taken from `.item()` have a size that depends on the data:
PyTorch's ShapeEnv names it with an unbacked symbol (u0, no hint). sym-mask-to-where removes such
sizes where they do not escape (a selection that is reduced or written through). Where one does escape
(a graph output, or an op with no `where` form uses it), this module compiles the graph in phases, all
inside one artifact:

  1. count: an FX graph that computes the value of each unbacked symbol as a 0-d int64 tensor, from
     the op's inputs (`nonzero(x)`: `(x != 0).sum()`; `x[m]`: `m.sum()`; `unique`: the number of runs
     of the sorted values (sym-sort-to-merge); `repeat_interleave(r)`: `r.sum()`; `t.item()`: `t`).
     It has only backed sizes (or unbacked ones of an earlier phase: chained selections count in
     several phases) and is compiled like any graph. Sizes of an op over unbacked inputs (the
     length of `x[:n]`) are computed from the symbol values in Python.
  2. allocate + fill: the original graph, where each unbacked symbol is a trailing SymInt input (so
     the importer declares it as a `sym.symbol` with the `unbacked` attribute and no hint, and its
     range and torch._check facts become `sym.assert`s), and each data-dependent op is decomposed
     into ops torch-mlir lowers that write into a result of that explicit size: positions
     `cumsum(mask) - 1` scattered into `zeros(u + 1, ...)` (row u takes the unselected entries) and
     sliced to `[:u]`; unique from a sort; repeat_interleave from a scatter-add at the run ends and a
     cumsum. The runtime allocates the outputs from the symbol values with torch's allocator, as for
     every graph. A write through a mask of a value with one row per selected element
     (`out[m] = layer(x[m])`, the backward of `x[m]`) becomes a bounds-checked gather and a where
     (in every graph, the backward's too). Every scatter gets one extra update into the trash row:
     torch-mlir sizes index_put's updates as max(n, 1) and reads out of bounds for n = 0.

The runtime (runtime/artifact.py, `CountFillArtifact`) runs the count phases, reads the counts (on a GPU
that is a device-to-host copy: a synchronization, unavoidable when an output's size depends on the
data), and calls the fill artifact with the symbol values; its guard function checks their asserts
first (a failed torch._check raises `SymAssertionError`, a RuntimeError as in eager).

An op with a data-dependent size that none of the rules below covers is an error naming the op and the
user's source line (never an eager fallback, unless `fallback_to_eager` asks for one).
"""
from __future__ import annotations

import logging
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import sympy
import torch
import torch.fx as fx
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import resolve_unbacked_bindings
from torch.utils._pytree import key_get

from mlir_sym import shapes
from mlir_sym.importer import _DROPPED_TARGETS, UnsupportedGraph, find_shape_env, node_source
from mlir_sym.runtime.artifact import CountFillArtifact, CountPhase

log = logging.getLogger("mlir_sym.datadep")

# What sym-mask-to-where{strict=1} says about a data-dependent op it left (the count/fill path takes it).
LEFT_BY_MASK_TO_WHERE = "has a result of data-dependent size"


# ---------------------------------------------------------------------------------------------
# Decompositions: plain torch, traced to aten by make_fx over the graph's fake values. `u` is the size
# (a SymInt input of the fill graph); nothing here reads data to decide a size. No Python indexing
# (`t[:u]`, `t[idx]`): on CUDA values its tracing makes a real device tensor among the fake ones;
# narrow / index_select instead.


def _scatter(out: torch.Tensor, idx: torch.Tensor, values: torch.Tensor, trash: Any, accumulate: bool = False
             ) -> torch.Tensor:
    """out.index_put((idx,), values) with one more update, of a zero row into row `trash`: torch-mlir
    sizes index_put's updates as max(n, 1), which reads out of bounds when n is 0 (an empty selection
    whose size is data-dependent); with n + 1 updates that bound is exact."""
    idx = torch.cat([idx, torch.zeros((1,), dtype=idx.dtype, device=idx.device) + trash])
    values = torch.cat([values, torch.zeros((1,) + tuple(values.shape[1:]), dtype=values.dtype, device=values.device)])
    return out.index_put((idx,), values, accumulate=accumulate)


def _select_rows(x: torch.Tensor, m: torch.Tensor, u: Any) -> torch.Tensor:
    """x[m] for a 1-D boolean m over x's dim 0, written into a result of u rows: selected row i goes to
    row cumsum(m)[i] - 1, the others to a trash row u, sliced off."""
    pos = torch.cumsum(m.to(torch.int64), 0) - 1
    idx = torch.where(m, pos, u)
    out = x.new_zeros((u + 1,) + tuple(x.shape[1:]))
    return _scatter(out, idx, x, u).narrow(0, 0, u)


def _nonzero(x: torch.Tensor, u: Any) -> torch.Tensor:
    m = (x != 0).reshape(-1)
    if x.dim() == 0:
        return _select_rows(torch.zeros((1, 0), dtype=torch.int64, device=x.device), m, u)
    cols = []
    for d in range(x.dim()):
        shape = [1] * x.dim()
        shape[d] = x.shape[d]
        cols.append(torch.arange(x.shape[d], device=x.device).view(shape).expand(x.shape).reshape(-1))
    return _select_rows(torch.stack(cols, 1), m, u)


def _nonzero_count(x: torch.Tensor) -> torch.Tensor:
    return (x != 0).sum()


def _bool_index(x: torch.Tensor, m: torch.Tensor, u: Any, j: int) -> torch.Tensor:
    """x[(:,) * j + (m,)]: the mask's dims (j .. j+k-1 of x) become one dim of size u at position j."""
    if m.dim() == 0:
        x, m = x.unsqueeze(j), m.reshape(1)
    k = m.dim()
    xf = x.flatten(j, j + k - 1) if k > 1 else x
    if j:
        xf = xf.movedim(j, 0)
    out = _select_rows(xf, m.reshape(-1), u)
    return out.movedim(0, j) if j else out


def _mask_count(m: torch.Tensor) -> torch.Tensor:
    return m.sum(dtype=torch.int64)


def _masked_select(x: torch.Tensor, m: torch.Tensor, u: Any) -> torch.Tensor:
    shape = torch.broadcast_shapes(x.shape, m.shape)
    return _select_rows(x.expand(shape).reshape(-1), m.expand(shape).reshape(-1), u)


def _masked_select_count(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    return m.expand(torch.broadcast_shapes(x.shape, m.shape)).sum(dtype=torch.int64)


def _run_starts(s: torch.Tensor) -> torch.Tensor:
    """For sorted 1-D s: True where a run of equal values starts."""
    i = torch.arange(s.shape[0], device=s.device)
    prev = s.index_select(0, torch.clamp(i - 1, min=0))
    return (i == 0) | (s != prev)


def _unique_count(x: torch.Tensor) -> torch.Tensor:
    s, _ = torch.sort(x.reshape(-1))
    return _run_starts(s).sum(dtype=torch.int64)


def _unique(x: torch.Tensor, u: Any, inverse: bool, counts: bool) -> tuple[torch.Tensor, ...]:
    """torch._unique2(x, sorted, inverse, counts): the sorted distinct values (CPU eager returns them
    sorted for sorted=False too), the group of each element, the size of each group."""
    s, perm = torch.sort(x.reshape(-1))
    return _runs(s, perm, x, u, inverse, counts)


def _unique_consecutive_count(x: torch.Tensor) -> torch.Tensor:
    return _run_starts(x.reshape(-1)).sum(dtype=torch.int64)


def _unique_consecutive(x: torch.Tensor, u: Any, inverse: bool, counts: bool) -> tuple[torch.Tensor, ...]:
    """torch.unique_consecutive(x) (dim=None): the first value of each run, as _unique without a sort."""
    return _runs(x.reshape(-1), None, x, u, inverse, counts)


def _runs(s: torch.Tensor, perm: torch.Tensor | None, x: torch.Tensor, u: Any, inverse: bool, counts: bool
          ) -> tuple[torch.Tensor, ...]:
    """(first value of each run of s, run index of each element of x, length of each run); s is x
    flattened and permuted by `perm` (None: not permuted)."""
    first = _run_starts(s)
    group = torch.cumsum(first.to(torch.int64), 0) - 1
    values = _select_rows(s, first, u)
    empty = torch.zeros(0, dtype=torch.int64, device=x.device)
    inv = empty
    if inverse:
        n = group.shape[0]
        inv = group if perm is None else _scatter(torch.zeros((n + 1,), dtype=torch.int64, device=x.device),
                                                  perm, group, n).narrow(0, 0, n)
        inv = inv.reshape(x.shape)
    cnt = empty
    if counts:
        cnt = _scatter(torch.zeros((u + 1,), dtype=torch.int64, device=x.device), group, torch.ones_like(group),
                       u, accumulate=True).narrow(0, 0, u)
    return values, inv, cnt


def _repeat_interleave(r: torch.Tensor, u: Any) -> torch.Tensor:
    """repeat_interleave(r): output j is the number of run ends cumsum(r) <= j (a scatter-add of ones
    at the run ends, then a cumsum); run ends equal to u land in a trash slot."""
    ends = torch.cumsum(r, 0)
    hits = _scatter(torch.zeros((u + 1,), dtype=torch.int64, device=r.device), ends,
                    torch.ones_like(ends, dtype=torch.int64), u, accumulate=True)
    return torch.cumsum(hits.narrow(0, 0, u), 0).to(r.dtype)


def _repeat_count(r: torch.Tensor) -> torch.Tensor:
    return r.sum(dtype=torch.int64)


def _item_count(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.int64)


def _masked_write(x: torch.Tensor, m: torch.Tensor, v: torch.Tensor, j: int, accumulate: bool) -> torch.Tensor:
    """index_put(x, [None] * j + [m], v, accumulate) where v has one row per selected element (u rows,
    u data-dependent: `out[m] = mlp(x[m])`, the backward of x[m]): selected element i takes v's row
    cumsum(m)[i] - 1 (a gather), the others keep x (a where). A v whose row count is not the mask's
    count gathers out of range: the gather's bounds check raises, as eager raises a shape mismatch."""
    k = m.dim()
    rest = tuple(x.shape[j + k:])
    u = v.shape[v.dim() - len(rest) - 1]
    sel = tuple(x.shape[:j]) + (u,) + rest
    xf = x.flatten(j, j + k - 1) if k > 1 else x
    vf = v.to(x.dtype).expand(sel)
    if j:
        xf, vf = xf.movedim(j, 0), vf.movedim(j, 0)
    inner = 1
    for d in xf.shape[1:]:
        inner = inner * d
    pad = torch.zeros((1,) + tuple(vf.shape[1:]), dtype=x.dtype, device=x.device)
    vpad = torch.cat([vf, pad]).reshape(u + 1, inner)
    mf = m.reshape(-1)
    idx = torch.where(mf, torch.cumsum(mf.to(torch.int64), 0) - 1, u)
    idx = torch.where(mf.sum() != u, u + 1, idx)
    rows = torch.nn.functional.embedding(idx, vpad).reshape(xf.shape)
    if accumulate:
        rows = xf + rows
    out = torch.where(mf.reshape((-1,) + (1,) * (xf.dim() - 1)), rows, xf)
    if j:
        out = out.movedim(0, j)
    return out.unflatten(j, m.shape) if k > 1 else out


# ---------------------------------------------------------------------------------------------
# Rules: for an op whose result has a data-dependent size, where that size is in its value, how to
# count it and how to fill a result of that size.


@dataclass
class Rule:
    size: Callable[[fx.Node], Any]  # node -> the SymInt of its data-dependent size
    count: Callable[[fx.Node], tuple[Callable, list]]  # node -> (count function, its inputs)
    fill: Callable[[fx.Node], tuple[Callable, list]] | None  # node -> (fill function of (*inputs, u), inputs)
    applies: Callable[[fx.Node], bool] = lambda n: True  # x[i] is data-dependent only for a boolean i


def _tensor_args(node: fx.Node, *positions: int) -> list:
    return [node.args[i] for i in positions]


def _index_rule_parts(node: fx.Node) -> tuple[int, fx.Node]:
    indices = node.args[1]
    used = [(j, i) for j, i in enumerate(indices) if i is not None]
    if len(used) != 1:
        raise UnsupportedGraph(f"{node.target} ({node.name}) at {node_source(node)}: indexing with a boolean mask "
                               f"beside other index tensors has a data-dependent size mlir_sym cannot count; "
                               f"index with the mask alone (x[m]) or with torch.where")
    j, m = used[0]
    mv = m.meta.get("val") if isinstance(m, fx.Node) else None
    if not isinstance(mv, torch.Tensor) or mv.dtype not in (torch.bool, torch.uint8):
        raise UnsupportedGraph(f"{node.target} ({node.name}) at {node_source(node)}: an index of data-dependent "
                               f"size that is not a boolean mask")
    return j, m


def _index_size(node: fx.Node) -> Any:
    j, _ = _index_rule_parts(node)
    return node.meta["val"].shape[j]


def _has_bool_index(node: fx.Node) -> bool:
    return any(isinstance(i, fx.Node) and isinstance(i.meta.get("val"), torch.Tensor)
               and i.meta["val"].dtype in (torch.bool, torch.uint8) for i in node.args[1])


RULES: dict[str, Rule] = {
    "aten.nonzero.default": Rule(
        size=lambda n: n.meta["val"].shape[0],
        count=lambda n: (_nonzero_count, _tensor_args(n, 0)),
        fill=lambda n: (_nonzero, _tensor_args(n, 0))),
    "aten.index.Tensor": Rule(
        size=_index_size,
        count=lambda n: (_mask_count, [_index_rule_parts(n)[1]]),
        fill=lambda n: (_bind(_bool_index, j=_index_rule_parts(n)[0]), [n.args[0], _index_rule_parts(n)[1]]),
        applies=_has_bool_index),
    "aten.masked_select.default": Rule(
        size=lambda n: n.meta["val"].shape[0],
        count=lambda n: (_masked_select_count, _tensor_args(n, 0, 1)),
        fill=lambda n: (_masked_select, _tensor_args(n, 0, 1))),
    "aten._unique2.default": Rule(
        size=lambda n: n.meta["val"][0].shape[0],
        count=lambda n: (_unique_count, _tensor_args(n, 0)),
        fill=lambda n: (_bind(_unique, **_unique_flags(n)), _tensor_args(n, 0))),
    "aten.unique_consecutive.default": Rule(
        size=lambda n: n.meta["val"][0].shape[0],
        count=lambda n: (_unique_consecutive_count, _tensor_args(n, 0)),
        fill=lambda n: (_bind(_unique_consecutive, **_unique_flags(n, 1)), _tensor_args(n, 0)),
        applies=lambda n: _arg(n, 3, "dim") is None),
    "aten.repeat_interleave.Tensor": Rule(
        size=lambda n: n.meta["val"].shape[0],
        count=lambda n: (_repeat_count, _tensor_args(n, 0)),
        fill=lambda n: (_repeat_interleave, _tensor_args(n, 0))),
    "aten._local_scalar_dense.default": Rule(
        size=lambda n: n.meta["val"],
        count=lambda n: (_item_count, _tensor_args(n, 0)),
        fill=None),  # the value itself: the node becomes the symbol's input
}
RULES["aten.index.Tensor_hacked_twin"] = RULES["aten.index.Tensor"]
# Writes through a boolean mask of a value with one row per selected element (data-dependent rows).
INDEX_PUT = {"aten.index_put.default", "aten._index_put_impl.default", "aten.index_put.hacked_twin"}
# Ops sym-mask-to-where has no where form for: their data-dependent size always takes this path.
NO_WHERE_FORM = {"aten.nonzero.default", "aten._unique2.default", "aten.repeat_interleave.Tensor",
                 "aten._unique.default", "aten.unique_consecutive.default", "aten.unique_dim.default",
                 "aten.unique_dim_consecutive.default"}


def _arg(node: fx.Node, i: int, name: str, default: Any = None) -> Any:
    if name in node.kwargs:
        return node.kwargs[name]
    return node.args[i] if len(node.args) > i else default


def _unique_flags(node: fx.Node, first: int = 2) -> dict[str, bool]:
    """return_inverse / return_counts: arguments 2, 3 of _unique2(self, sorted, inverse, counts), 1, 2
    of unique_consecutive(self, inverse, counts, dim)."""
    return {"inverse": bool(_arg(node, first, "return_inverse", False)),
            "counts": bool(_arg(node, first + 1, "return_counts", False))}


def _bind(fn: Callable, **consts: Any) -> Callable:
    """`fn` with constant keyword arguments, as a function of the traced inputs only (make_fx traces
    every parameter of what it is given, defaults included)."""
    def bound(*args: Any) -> Any:
        return fn(*args, **consts)

    return bound


# ---------------------------------------------------------------------------------------------
# The plan: a fill graph, count graphs per phase, and how each unbacked symbol gets its value.


@dataclass
class Counter:
    symbol: sympy.Symbol
    placeholder: fx.Node  # the SymInt input of the fill graph that carries the value
    node: fx.Node | None = None  # the count (a 0-d int64 tensor) in the rewritten graph
    derive: Callable[[dict[str, int], Sequence[Any]], int] | None = None  # a size computed from others
    deps: set[sympy.Symbol] = field(default_factory=set)
    phase: int = 0
    origin: str = ""


@dataclass
class Plan:
    fill: fx.GraphModule
    fill_inputs: list[str]  # unbacked symbols appended to the graph's inputs, in this order
    phases: list[tuple[fx.GraphModule, list[str], list[str], list[Counter]]]  # (graph, inputs, outputs, derived)


def _is_unbacked(s: sympy.Basic) -> bool:
    return isinstance(s, sympy.Symbol) and s.name.startswith("u")


def _sym_expr(v: Any, shape_env) -> sympy.Basic:
    if isinstance(v, torch.SymInt):
        e = v.node.expr
        return shape_env.replace(e) if shape_env is not None else e
    return sympy.Integer(int(v))


def _val_symbols(v: Any, shape_env) -> set[sympy.Symbol]:
    """The unbacked integer symbols in a node's value (tensor sizes, SymInts)."""
    out: set[sympy.Symbol] = set()
    for x in v if isinstance(v, (list, tuple)) else [v]:
        if isinstance(x, torch.Tensor):
            for d in x.shape:
                if isinstance(d, torch.SymInt):
                    out |= {s for s in _sym_expr(d, shape_env).free_symbols if _is_unbacked(s)}
        elif isinstance(x, torch.SymInt):
            out |= {s for s in _sym_expr(x, shape_env).free_symbols if _is_unbacked(s)}
    return out


def _escaping_symbols(gm: fx.GraphModule, shape_env) -> set[sympy.Symbol]:
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outs = out_node.args[0] if isinstance(out_node.args[0], (list, tuple)) else [out_node.args[0]]
    found: set[sympy.Symbol] = set()
    for o in outs:
        if isinstance(o, fx.Node):
            found |= _val_symbols(o.meta.get("val"), shape_env)
    return found


def wanted(gm: fx.GraphModule) -> bool:
    """True when `gm` needs the count/fill path: an unbacked size that no input carries escapes as an
    output size (or a SymInt output), or an op that sym-mask-to-where has no where form for makes one."""
    shape_env = find_shape_env(gm)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if _escaping_symbols(gm, shape_env) - _input_symbols(placeholders, shape_env):
        return True  # (a size the inputs carry, like a backward graph's u0, is no count)
    return any(n.op == "call_function" and str(n.target) in NO_WHERE_FORM and _val_symbols(n.meta.get("val"), shape_env)
               for n in gm.graph.nodes)


def has_data_dependent_ops(gm: fx.GraphModule) -> bool:
    shape_env = find_shape_env(gm)
    return any(n.op == "call_function" and str(n.target) in RULES and _val_symbols(n.meta.get("val"), shape_env)
               for n in gm.graph.nodes)


def _fake_mode(gm: fx.GraphModule):
    from torch._guards import detect_fake_mode

    vals = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
    mode = detect_fake_mode([v for v in vals if isinstance(v, torch.Tensor)])
    if mode is None:
        raise UnsupportedGraph("the graph has no fake tensors to trace data-dependent decompositions with")
    return mode


def _decompositions() -> dict:
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    return get_decomposition_table()


class _Splicer:
    """Traces a decomposition (plain torch) with make_fx over the fake values of its input nodes and
    copies the aten nodes into the graph, before a given node, with that node's source location."""

    def __init__(self, graph: fx.Graph, fake_mode) -> None:
        self.graph = graph
        self.mode = fake_mode
        self.table = _decompositions()

    def __call__(self, before: fx.Node, fn: Callable, inputs: list, origin: fx.Node) -> Any:
        vals = [i.meta["val"] if isinstance(i, fx.Node) else i for i in inputs]
        with self.mode:
            sub = make_fx(fn, decomposition_table=self.table, tracing_mode="real")(*vals)
        env: dict[fx.Node, Any] = {}
        out: Any = None
        phs = [n for n in sub.graph.nodes if n.op == "placeholder"]
        for ph, i in zip(phs, inputs):
            env[ph] = i
        meta = {k: origin.meta[k] for k in ("stack_trace", "nn_module_stack", "source_fn_stack") if k in origin.meta}
        with self.graph.inserting_before(before):
            for n in sub.graph.nodes:
                if n.op == "placeholder":
                    continue
                if n.op == "output":
                    out = fx.map_arg(n.args[0], lambda a: env[a])
                    break
                if n.op == "get_attr":
                    raise UnsupportedGraph(f"decomposition of {origin.target} made a constant tensor")
                same = self._same_as_arg(n, env)
                if same is not None:  # sym_max(s1, 1) of contiguous strides, = s1 for s1 >= 2
                    env[n] = same
                    continue
                new = self.graph.node_copy(n, lambda a: env[a])
                new.meta.update(meta)
                env[n] = new
        return out

    @staticmethod
    def _same_as_arg(n: fx.Node, env: dict) -> Any:
        """For a SymInt min/max whose value is one of its arguments: that argument (torch-mlir imports
        no sym_max; the ShapeEnv's ranges decided it)."""
        if n.op != "call_function" or n.target not in (torch.sym_max, torch.sym_min):
            return None
        v = n.meta.get("val")
        if not isinstance(v, torch.SymInt):
            return None
        e = v.node.expr
        for a in n.args:
            av = a.meta.get("val") if isinstance(a, fx.Node) else a
            if isinstance(av, (int, torch.SymInt)) and sympy.simplify(_sym_expr(av, None) - e) == 0:
                return env[a] if isinstance(a, fx.Node) else av
        return None


def plan(gm: fx.GraphModule) -> Plan:
    """Rewrite `gm` into its fill graph and count graphs (see the module docstring)."""
    shape_env = find_shape_env(gm)
    graph = fx.Graph(owning_module=gm)
    graph.output(graph.graph_copy(gm.graph, {}))
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if not placeholders:
        raise UnsupportedGraph("a graph with a data-dependent size and no inputs")
    splice = _Splicer(graph, _fake_mode(gm))
    last = placeholders[-1]
    counters: dict[sympy.Symbol, Counter] = {}
    inputs = _input_symbols(placeholders, shape_env)  # e.g. a backward graph's tangent of size u0

    def symbol_input(s: sympy.Symbol, v: torch.SymInt) -> fx.Node:
        nonlocal last
        with graph.inserting_after(last):
            ph = graph.placeholder(f"datadep_{s.name}")
        ph.meta["val"] = v
        last = ph
        return ph

    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        target = str(node.target)
        val = node.meta.get("val")
        if _masked_write_of_rows(node, shape_env):
            _rewrite_masked_write(node, splice, shape_env, set(counters) | inputs)
            continue
        rule = RULES.get(target)
        if rule is not None and rule.applies(node) and _val_symbols(val, shape_env):
            size = rule.size(node)
            s = _sym_expr(size, shape_env) if isinstance(size, torch.SymInt) else None
            if s is None or not _is_unbacked(s):
                raise UnsupportedGraph(f"{target} ({node.name}) at {node_source(node)}: its data-dependent size "
                                       f"{s} is not a single unbacked symbol; mlir_sym cannot count it")
            if s not in counters:
                c = Counter(s, symbol_input(s, size), origin=node_source(node))
                fn, ins = rule.count(node)
                c.node = splice(node, fn, ins, node)
                counters[s] = c
            u = counters[s].placeholder
            if rule.fill is None:
                node.replace_all_uses_with(u)
            else:
                fn, ins = rule.fill(node)
                new = splice(node, fn, ins + [u], node)
                if isinstance(new, (tuple, list)):
                    for user in list(node.users):
                        if user.target is not operator.getitem:
                            raise UnsupportedGraph(f"{target} ({node.name}) at {node_source(node)}: a use of its "
                                                   f"results that is not an element")
                        user.replace_all_uses_with(new[user.args[1]])
                        graph.erase_node(user)
                else:
                    node.replace_all_uses_with(new)
            graph.erase_node(node)
            continue
        bindings = node.meta.get("unbacked_bindings")
        if not bindings:
            continue
        for s, path in (resolve_unbacked_bindings(shape_env, bindings) or {}).items():
            s = shape_env.replace(s)
            if not _is_unbacked(s) or s in counters:
                continue
            if target == "aten.slice.Tensor":
                counters[s] = _slice_counter(node, s, key_get(val, path), symbol_input, shape_env, placeholders)
            else:
                kind = "a float or bool" if not isinstance(val, (torch.Tensor, torch.SymInt, list, tuple)) else "a"
                raise UnsupportedGraph(f"{target} ({node.name}) at {node_source(node)}: makes {kind} data-dependent "
                                       f"size {s} that mlir_sym has no count for (supported: nonzero, x[mask], "
                                       f"masked_select, unique, unique_consecutive (dim=None), repeat_interleave, "
                                       f".item(), slicing by them)")
    # Every data-dependent size left in the graph must be one of ours (or an input's).
    for node in graph.nodes:
        free = _val_symbols(node.meta.get("val"), shape_env) - set(counters) - inputs
        if free and node.op != "output":
            raise UnsupportedGraph(f"{node.target} ({node.name}) at {node_source(node)}: data-dependent size "
                                   f"{', '.join(sorted(map(str, free)))} that mlir_sym cannot compute before the "
                                   f"graph runs")
    _assign_phases(counters, graph, shape_env)
    phases = []
    for r in range(1, max((c.phase for c in counters.values()), default=0) + 1):
        counted = [c for c in counters.values() if c.phase == r and c.node is not None]
        derived = [c for c in counters.values() if c.phase == r and c.node is None]
        known = [c for c in counters.values() if c.phase < r]  # in input order
        cg = _count_graph(gm, graph, counted, {c.symbol for c in known}, counters, shape_env) if counted else None
        phases.append((cg, [c.symbol.name for c in known], [c.symbol.name for c in counted], derived))
    graph.eliminate_dead_code()
    graph.lint()
    return Plan(fx.GraphModule(gm, graph), [c.symbol.name for c in counters.values()], phases)


def _input_symbols(placeholders: list[fx.Node], shape_env) -> set[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    for ph in placeholders:
        out |= _val_symbols(ph.meta.get("val"), shape_env)
    return out


def _masked_write_of_rows(node: fx.Node, shape_env) -> bool:
    """An index_put through one boolean mask whose value has data-dependent rows (see _masked_write)."""
    if node.op != "call_function" or str(node.target) not in INDEX_PUT or len(node.args) < 3:
        return False
    used = [i for i in node.args[1] if i is not None]
    if len(used) != 1 or not _has_bool_index(node) or node.args[1].count(None) + 1 != len(node.args[1]):
        return False
    m, v = used[0], node.args[2]
    return (isinstance(v, fx.Node) and m.meta["val"].dim() >= 1
            and bool(_val_symbols(v.meta.get("val"), shape_env)))


def _rewrite_masked_write(node: fx.Node, splice: "_Splicer", shape_env, known: set[sympy.Symbol]) -> None:
    x, indices, v = node.args[0], node.args[1], node.args[2]
    free = _val_symbols(v.meta.get("val"), shape_env) - known
    if free:
        raise UnsupportedGraph(f"{node.target} ({node.name}) at {node_source(node)}: writes a value of "
                               f"data-dependent size {', '.join(sorted(map(str, free)))} that mlir_sym cannot count")
    j = next(k for k, i in enumerate(indices) if i is not None)
    accumulate = bool(_arg(node, 3, "accumulate", False))
    new = splice(node, _bind(_masked_write, j=j, accumulate=accumulate), [x, indices[j], v], node)
    node.replace_all_uses_with(new)
    node.graph.erase_node(node)


def rewrite_masked_writes(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with each write through a boolean mask of a value whose data-dependent rows come from the
    graph's inputs (a backward graph: the gradient of x[m]) rewritten as a gather and a where (see
    _masked_write); `gm` itself when there is none. Writes of a same-mask selection are left to
    sym-mask-to-where."""
    shape_env = find_shape_env(gm)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    inputs = _input_symbols(placeholders, shape_env)
    if not inputs or not any(_masked_write_of_rows(n, shape_env)
                             and _val_symbols(n.args[2].meta.get("val"), shape_env) <= inputs for n in gm.graph.nodes):
        return gm
    graph = fx.Graph(owning_module=gm)
    graph.output(graph.graph_copy(gm.graph, {}))
    splice = _Splicer(graph, _fake_mode(gm))
    for node in list(graph.nodes):
        if _masked_write_of_rows(node, shape_env) and _val_symbols(node.args[2].meta.get("val"), shape_env) <= inputs:
            _rewrite_masked_write(node, splice, shape_env, inputs)
    graph.eliminate_dead_code()
    graph.lint()
    return fx.GraphModule(gm, graph)


def _slice_counter(node: fx.Node, s: sympy.Symbol, size: Any, symbol_input, shape_env,
                   placeholders: list[fx.Node]) -> Counter:
    """The length of x[start:end:step] along a dim, when a bound is unbacked (`x[:n.item()]`): Python's
    slice arithmetic over the symbol values, after the phase that counts the bound."""
    x, dim = node.args[0], node.args[1] if len(node.args) > 1 else 0
    start = node.args[2] if len(node.args) > 2 else None
    end = node.args[3] if len(node.args) > 3 else None
    step = node.args[4] if len(node.args) > 4 else 1

    def expr(a: Any) -> sympy.Basic | None:
        if a is None:
            return None
        v = a.meta.get("val") if isinstance(a, fx.Node) else a
        if not isinstance(v, (int, torch.SymInt)):
            raise UnsupportedGraph(f"{node.target} ({node.name}) at {node_source(node)}: a slice bound of type "
                                   f"{type(v).__name__}")
        return _sym_expr(v, shape_env)

    parts = [_sym_expr(x.meta["val"].shape[dim], shape_env), expr(start), expr(end), expr(step)]
    present = [p for p in parts if p is not None]
    names = sorted({str(a) for p in present for a in p.free_symbols})
    fn = shapes.compile_exprs(present, names)
    backed = [n for n in names if not n.startswith("u")]
    readers = _backed_readers(backed, placeholders, shape_env, node)
    has = [p is not None for p in parts]

    def derive(vals: dict[str, int], args: Sequence[Any]) -> int:
        env = dict(vals)
        for name, (i, d) in readers.items():
            env[name] = int(args[i] if d is None else args[i].shape[d])
        it = iter(fn(*[env[n] for n in names]))
        n, lo, hi, st = (next(it) if h else None for h in has)
        return len(range(*slice(lo, hi, st).indices(n)))

    c = Counter(s, symbol_input(s, size), derive=derive, origin=node_source(node))
    c.deps = {a for p in present for a in p.free_symbols if _is_unbacked(a)}
    return c


def _backed_readers(names: list[str], placeholders: list[fx.Node], shape_env, node: fx.Node
                    ) -> dict[str, tuple[int, int | None]]:
    """Where each backed symbol's value sits among the graph inputs: (input index, dim or None)."""
    out: dict[str, tuple[int, int | None]] = {}
    for i, ph in enumerate(placeholders):
        v = ph.meta.get("val")
        dims = list(enumerate(v.shape)) if isinstance(v, torch.Tensor) else [(None, v)]
        for d, size in dims:
            if isinstance(size, torch.SymInt):
                e = _sym_expr(size, shape_env)
                if isinstance(e, sympy.Symbol) and e.name in names:
                    out.setdefault(e.name, (i, d))
    missing = set(names) - set(out)
    if missing:
        raise UnsupportedGraph(f"{node.target} ({node.name}) at {node_source(node)}: its size depends on "
                               f"{', '.join(sorted(missing))}, which no input size holds")
    return out


def _assign_phases(counters: dict[sympy.Symbol, Counter], graph: fx.Graph, shape_env) -> None:
    """Phase of a count: 1 + the latest phase of the unbacked symbols its computation needs (inputs or
    sizes of its ancestors); a derived size is computed right after the phase of its inputs."""
    by_ph = {c.placeholder: c.symbol for c in counters.values()}
    for c in counters.values():  # creation order is graph order: dependencies come first
        if c.node is not None:
            deps: set[sympy.Symbol] = set()
            seen: set[fx.Node] = set()
            stack = [c.node]
            while stack:
                n = stack.pop()
                if n in seen:
                    continue
                seen.add(n)
                if n in by_ph:
                    deps.add(by_ph[n])
                deps |= _val_symbols(n.meta.get("val"), shape_env)
                stack.extend(n.all_input_nodes)
            c.deps = deps & set(counters)
            c.phase = 1 + max((counters[d].phase for d in c.deps), default=0)
        else:
            c.phase = max((counters[d].phase for d in c.deps if d in counters), default=1)


def _count_graph(gm: fx.GraphModule, fill: fx.Graph, counted: list[Counter], known: set[sympy.Symbol],
                 counters: dict[sympy.Symbol, Counter], shape_env) -> fx.GraphModule:
    """The counts of one phase: the rewritten graph with these counts as outputs, inputs for the
    symbols of earlier phases only, asserts over later symbols dropped (the fill graph checks them)."""
    g = fx.Graph(owning_module=gm)
    env: dict[fx.Node, fx.Node] = {}
    g.graph_copy(fill, env)
    g.output(tuple(env[c.node] for c in counted))
    for n in list(g.nodes):
        if n.op == "call_function" and str(n.target) in _DROPPED_TARGETS:
            cond = n.args[0] if n.args else None
            v = cond.meta.get("val") if isinstance(cond, fx.Node) else None
            syms = _sym_expr_bool(v, shape_env)
            if syms is None or {s for s in syms if _is_unbacked(s)} - known:
                g.erase_node(n)
    g.eliminate_dead_code()
    for s, c in counters.items():
        if s not in known:
            ph = env[c.placeholder]
            if ph.users:
                raise UnsupportedGraph(f"count graph uses {ph.name}, a size it is meant to compute")
            g.erase_node(ph)
    g.lint()
    return fx.GraphModule(gm, g)


def _sym_expr_bool(v: Any, shape_env) -> set[sympy.Symbol] | None:
    if isinstance(v, torch.SymBool):
        e = v.node.expr
        return set((shape_env.replace(e) if shape_env is not None else e).free_symbols)
    return None


# ---------------------------------------------------------------------------------------------
# Compilation.


def compile_count_fill(gm: fx.GraphModule, compile_fn: Callable, **kwargs: Any):
    """Compile `gm` as count phases + fill graph with `compile_fn` (capture.compile_graph or the GPU
    one); returns (CountFillArtifact, the fill graph's ImportedGraph, its CompileStats)."""
    p = plan(gm)
    name = kwargs.pop("name", "main")
    phases = []
    for r, (cg, inputs, outputs, derived) in enumerate(p.phases, 1):
        art = None
        if cg is not None:
            log.info("count phase %d of %s: counts %s from inputs + %s\n%s", r, name, outputs, inputs, cg.code)
            art, _, _ = compile_fn(cg, name=f"{name}_count{r}", **kwargs)
        phases.append(CountPhase(art, inputs, outputs, [(c.symbol.name, c.derive) for c in derived]))
    log.info("fill graph of %s (sizes %s are inputs)\n%s", name, p.fill_inputs, p.fill.code)
    fill, ig, stats = compile_fn(p.fill, name=name, **kwargs)
    art = CountFillArtifact(name=name, phases=phases, fill=fill, fill_inputs=p.fill_inputs)
    return art, ig, stats


def compile_graph(gm: fx.GraphModule, compile_fn: Callable, **kwargs: Any):
    """`compile_fn(gm, **kwargs)`, or the count/fill path where a data-dependent size needs it: up front
    when one escapes (or comes from an op with no where form), else when sym-mask-to-where reports a
    selection it cannot turn into a where."""
    gm = rewrite_masked_writes(gm)
    if wanted(gm):
        return compile_count_fill(gm, compile_fn, **kwargs)
    from mlir_sym.capture import UnsupportedOpError
    from mlir_sym.pipelines import LoweringError

    try:
        return compile_fn(gm, **kwargs)
    except (UnsupportedOpError, LoweringError) as e:
        if LEFT_BY_MASK_TO_WHERE not in str(e) or not has_data_dependent_ops(gm):
            raise
        log.info("sym-mask-to-where left a data-dependent size (%s); compiling with count/fill",
                 str(e).splitlines()[0])
        return compile_count_fill(gm, compile_fn, **kwargs)
