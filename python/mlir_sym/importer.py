"""FX graph + ShapeEnv -> one MLIR module: torch-dialect compute plus `sym` symbols, bindings and guards.

The module holds:
  * one `sym.symbol` per size variable the graph uses (range and hint from the ShapeEnv);
  * `func.func @guards(%sizes: index...)` (unit attr `sym.guards`): one argument per input size
    ("source": a SymInt input or a tensor dimension, named in the arg attr `sym.source`), a `sym.bind`
    of each source to its expression, then the ShapeEnv's guards as `sym.guard` and its runtime asserts
    as `sym.assert`, each with its origin (user source line where PyTorch recorded one);
  * `func.func @main(...)`: torch-mlir's import of the graph (locations carry FX stack traces) with a
    `sym.bind` for every tensor dimension and SymInt argument.

torch-mlir's own `import_symbolic_shape_expressions` fails on Dynamo's AOT graphs (symbols no
placeholder names), so binding is done here from each placeholder's FakeTensor sizes.
"""
from __future__ import annotations

import contextlib

import logging
import operator
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
import torch.fx as fx
from torch_mlir import ir
from torch_mlir.dialects import func as func_d
from torch_mlir.extras.fx_importer import FxImporter

from mlir_sym import attention, fx_rewrites, numerics, shapes
from mlir_sym.context import make_context
from mlir_sym.dialects import sym
from mlir_sym.pipelines import attention_fused_on_gpu

log = logging.getLogger("mlir_sym.importer")

_DROPPED_TARGETS = {  # runtime-assert nodes: become sym.assert (or are implied by ranges)
    "aten._assert_scalar.default",
    "aten.sym_constrain_range_for_size.default",
    "aten.sym_constrain_range.default",
}


_COMPUTE_CHECK = "mlir_sym_compute_check"


def _assert_async_in_compute(graph: fx.Graph) -> None:
    """`torch._assert_async(cond, msg)` checks a tensor's value: it becomes `_assert_scalar` of the
    value read in the compute (`_local_scalar_dense`), a runtime check whose failure raises with the
    message (on the GPU the host reads the value back). It used to be dropped: a failing check
    returned a result where eager raises."""
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in ("aten._assert_async.msg", "aten._assert_async.default"):
            continue
        msg = node.args[1] if len(node.args) > 1 else "Expected Tensor with single nonzero value, but got zero"
        with graph.inserting_before(node):
            value = graph.call_function(torch.ops.aten._local_scalar_dense.default, (node.args[0],))
            value.meta.update({k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack")})
            value.meta["val"] = 1  # known only at run time; an int, which torch-mlir reads a bool tensor as
            check = graph.call_function(torch.ops.aten._assert_scalar.default, (value, str(msg)))
            check.meta.update({k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack")})
            check.meta["val"] = None
            check.meta[_COMPUTE_CHECK] = True
        graph.erase_node(node)


class UnsupportedGraph(RuntimeError):
    """The graph uses something we cannot import; the message names the node and its source line."""


@dataclass
class Source:
    """One input size: `arg` is the placeholder index, `dim` the tensor dimension (None for a SymInt)."""

    arg: int
    dim: int | None
    expr: sympy.Basic
    name: str

    def describe(self) -> str:
        return self.name if self.dim is None else f"{self.name}.size({self.dim})"


@dataclass
class Check:
    """A guard or assert of the artifact, in guard-function order (ids are 1-based in lowered form)."""

    kind: str  # "guard" | "assert" | "bind"
    text: str
    origin: str


@dataclass
class AliasPlan:
    """An output that is a view of an input or of another output: the runtime makes it by replaying
    the graph's view ops on that base (AOTAutograd rebuilds aliased outputs from their size, stride
    and storage offset, so they must be real views, not fresh copies).

    `base` is ("input", placeholder index) or ("output", graph output index); `steps` are the view
    ops from the base to the output as (target, args, kwargs), where `PREV` stands for the previous
    tensor and `SymArg(k)` for the value of `exprs[k]` (a size expression over the symbols)."""

    base: tuple[str, int]
    steps: list[tuple[Any, tuple, dict]] = field(default_factory=list)
    exprs: list[sympy.Basic] = field(default_factory=list)


class _Prev:
    def __repr__(self) -> str:
        return "PREV"


PREV = _Prev()


@dataclass(frozen=True)
class SymArg:
    k: int


@dataclass
class OutputSpec:
    kind: str  # "tensor" | "sym" | "none" | "const" | "alias"
    shape: tuple = ()  # sympy sizes for tensors
    dtype: torch.dtype | None = None
    expr: Any = None  # for "sym"/"const" outputs; the AliasPlan of an "alias" output
    index: int = -1  # position among the compute function's tensor results
    device: str | None = None  # tensors: the device type eager gives it (a CUDA graph may return CPU tensors)


@dataclass
class ImportedGraph:
    module: ir.Module
    context: ir.Context
    symbols: list[str]  # declaration order, as in @guards
    sources: list[Source]
    checks: list[Check] = field(default_factory=list)
    outputs: list[OutputSpec] = field(default_factory=list)
    input_kinds: list[str] = field(default_factory=list)  # "tensor" | "symint" | "int" | "other"
    input_dtypes: list[torch.dtype | None] = field(default_factory=list)
    shape_env: Any = None
    # Float scalars computed from sizes (`1 / math.sqrt(x.shape[-1])`): trailing compute arguments
    # that the runtime evaluates from the symbols (torch-mlir lowers little float scalar math).
    derived: list[sympy.Basic] = field(default_factory=list)
    # aten op name ("aten.nonzero.default" and "aten.nonzero") -> the user's source of its first use.
    op_sources: dict[str, str] = field(default_factory=dict)
    # per input, the dim order the runtime permutes it by before the call (a transposed weight taken
    # as the contiguous tensor it views, fx_rewrites.permuted_inputs), or None
    input_perms: list = field(default_factory=list)


def find_shape_env(gm: fx.GraphModule):
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        for v in val if isinstance(val, (list, tuple)) else [val]:
            if isinstance(v, torch.Tensor) and getattr(v, "fake_mode", None) is not None:
                return v.fake_mode.shape_env
            if isinstance(v, torch.SymInt):
                return v.node.shape_env
    return None


def _expr(v: Any, shape_env) -> sympy.Basic:
    if isinstance(v, torch.SymInt):
        e = v.node.expr
        return shape_env.replace(e) if shape_env is not None else e
    return sympy.Integer(int(v))


def node_origin(node: fx.Node) -> str:
    """The user's last stack frame of a node (`File "f.py", line 3, in fn`), else its module: what a
    compiled check that the node makes names."""
    trace = node.meta.get("stack_trace") or ""
    lines = [ln.strip() for ln in trace.strip().splitlines() if ln.strip().startswith("File ")]
    return lines[-1] if lines else _module_origin(node)


def _module_origin(node: fx.Node) -> str:
    """Where a node without a stack trace comes from: the innermost module it was traced in (ops
    of torch.nn's own fast paths, like nn.TransformerEncoderLayer's, carry no user frame)."""
    stack = node.meta.get("nn_module_stack") or {}
    if stack:
        path, cls = list(stack.values())[-1]
        name = getattr(cls, "__name__", str(cls))
        return f"node {node.name} in module {path} ({name})"
    return f"node {node.name}"


def node_source(node: fx.Node) -> str:
    """The user's source line of a node: `File "f.py", line 3, in fn: <code>`, else its module."""
    trace = (node.meta.get("stack_trace") or "").rstrip().splitlines()
    for i in range(len(trace) - 1, -1, -1):
        if trace[i].strip().startswith("File "):
            code = trace[i + 1].strip() if i + 1 < len(trace) and not trace[i + 1].strip().startswith("File ") else ""
            return trace[i].strip() + (f": {code}" if code else "")
    return _module_origin(node)


def _reject_complex(graph: fx.Graph) -> None:
    """Complex tensors are not compiled: torch-mlir lowers few complex ops, and those it takes wrongly
    (`abs` of a complex tensor became `math.absf`; Meta Llama's rotary embedding through
    `view_as_complex` failed in the JIT with "Failure while creating the ExecutionEngine", which
    the eager fallback did not catch). The first node that makes or takes one, named with its line."""
    def complex_dtype(n) -> torch.dtype | None:
        val = n.meta.get("val") if isinstance(n, fx.Node) else None
        for v in val if isinstance(val, (list, tuple)) else [val]:
            if isinstance(v, torch.Tensor) and v.dtype.is_complex:
                return v.dtype
        return None

    found = None
    for node in graph.nodes:  # the first op making or taking one (it has a line), else an input
        if node.op == "call_function":
            dt = complex_dtype(node) or next(filter(None, map(complex_dtype, node.all_input_nodes)), None)
            if dt is not None:
                found = (f"'{node.target}'", dt, node)
                break
        elif node.op == "placeholder" and found is None and complex_dtype(node) is not None:
            found = (f"input '{node.name}'", complex_dtype(node), node)
    if found is not None:
        what, dt, node = found
        raise UnsupportedGraph(
            f"complex tensors are not supported: {what} ({dt}) at {node_origin(node)}; write the "
            f"computation on real and imaginary parts (torch.view_as_real), or set "
            f"mlir_sym.config.fallback_to_eager = True to run such graphs eagerly")


def import_graph(gm: fx.GraphModule, *, func_name: str = "main", target: str = "cpu") -> ImportedGraph:
    """Import an AOTAutograd inference graph with symbolic sizes (see module docstring). `target`
    "gpu" keeps the attention nodes the fused GPU kernel serves (attention.expand_attention)."""
    shape_env = find_shape_env(gm)
    graph = fx.Graph(owning_module=gm)  # get_attr constants (e.g. the value of x[mask] = 0.0) resolve on gm
    val_map: dict[fx.Node, fx.Node] = {}
    graph.output(graph.graph_copy(gm.graph, val_map))
    _reject_complex(graph)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    input_perms = fx_rewrites.permuted_inputs(graph, shape_env)  # first: sizes are read from the views

    sources: list[Source] = []
    input_kinds: list[str] = []
    input_dtypes: list[torch.dtype | None] = []
    for i, ph in enumerate(placeholders):
        val = ph.meta.get("val")
        if isinstance(val, torch.Tensor):
            input_kinds.append("tensor")
            input_dtypes.append(val.dtype)
            for d, size in enumerate(val.shape):
                sources.append(Source(i, d, _expr(size, shape_env), ph.name))
        elif isinstance(val, torch.SymInt):
            input_kinds.append("symint")
            input_dtypes.append(None)
            sources.append(Source(i, None, _expr(val, shape_env), ph.name))
        elif isinstance(val, int):
            input_kinds.append("int")
            input_dtypes.append(None)
        else:
            raise UnsupportedGraph(f"graph input '{ph.name}' has unsupported kind {type(val).__name__}")

    # Symbols whose value the artifact reads from its inputs: every backed one, and the unbacked ones
    # that are SymInt inputs (the counts that datadep.py's count phase passes to the fill graph).
    bound: set[sympy.Symbol] = set()
    for s in sources:
        bound |= s.expr.free_symbols
    asserts: list[tuple[sympy.Basic, str, str]] = []
    _assert_async_in_compute(graph)
    fx_rewrites.gathers_as_embedding(graph)
    for node in list(graph.nodes):
        if node.meta.get(_COMPUTE_CHECK):
            continue
        if node.op == "call_function" and str(node.target) in _DROPPED_TARGETS:
            if str(node.target) == "aten._assert_scalar.default":
                cond = node.args[0]
                msg = node.args[1] if len(node.args) > 1 else "runtime assertion"
                if isinstance(cond, fx.Node) and isinstance(cond.meta.get("val"), torch.SymBool):
                    expr = cond.meta["val"].node.expr
                    if shape_env is not None:
                        expr = shape_env.replace(expr)
                    if _unbacked(expr, shape_env) and not expr.free_symbols <= bound:
                        # on a data-dependent size of the compute (x[mask]): see _unbacked
                        if not _implied_for_sizes(expr, shape_env):
                            continue  # stays in the graph: checked by the compute, where the value exists
                    else:
                        asserts.append((expr, str(msg), node_origin(node)))
            graph.erase_node(node)

    try:
        if attention.causal_masks_enabled():
            attention.causal_masks(graph)
        attention.expand_attention(graph, keep_fused=target == "gpu" and attention_fused_on_gpu())
        attention.expand_attention_training(graph, keep=target == "gpu")
        fx_rewrites.op_aliases(graph)
        fx_rewrites.device_puts_within(graph, "cuda" if target == "gpu" else "cpu")
        fx_rewrites.sym_sums_as_adds(graph)
        fx_rewrites.scalar_first_operands(graph)
        fx_rewrites.var_mean_in_float(graph, corrected=target != "gpu")
        numerics.tanh_gelu_formula(graph)
        numerics.widen_half_reductions(graph)
        numerics.pow_special_exponents(graph)  # first: eager rounds a half x * x before `* x`
        numerics.half_math_in_float(graph)
        numerics.nan_propagating_selections(graph)
        numerics.reciprocal_as_division(graph)
        numerics.byte_divisions(graph)
        numerics.exact_integer_division(graph)
        numerics.python_floor_division(graph)
        numerics.self_comparisons_as_isnan(graph)
        numerics.float_comparison_scalars(graph)  # last: the rewrites above write comparisons too
        fx_rewrites.splits_to_slices(graph)
        fx_rewrites.empty_strided_as_empty(graph)
        fx_rewrites.empty_concats(graph)
        fx_rewrites.flat_put_indices(graph)
        fx_rewrites.nonnegative_dims(graph)
        fx_rewrites.scatter_as_where(graph)
        fx_rewrites.all_infinite_as_extremum(graph)
        fx_rewrites.depthwise_conv3d_doubled(graph)
        fx_rewrites.composed_permutes(graph)
        attention.packed_qkv_grads(graph)
    except fx_rewrites.ViewRewriteError as e:
        raise UnsupportedGraph(str(e)) from None

    # Outputs: tensors stay in the compute, except views of inputs or of other outputs, which the
    # runtime rebuilds as views; SymInts/ints are evaluated from symbols by the runtime.
    outputs: list[OutputSpec] = []
    tensor_outs: list[fx.Node] = []
    out_node = next(n for n in graph.nodes if n.op == "output")
    out_args = out_node.args[0]
    out_list = list(out_args) if isinstance(out_args, (list, tuple)) else [out_args]
    aliases = _alias_plans(out_list, placeholders, shape_env)
    for k, o in enumerate(out_list):
        val = o.meta.get("val") if isinstance(o, fx.Node) else o
        if k in aliases:
            outputs.append(OutputSpec("alias", tuple(_expr(s, shape_env) for s in val.shape), val.dtype,
                                      expr=aliases[k]))
        elif isinstance(val, torch.Tensor):
            outputs.append(OutputSpec("tensor", tuple(_expr(s, shape_env) for s in val.shape), val.dtype,
                                      index=len(tensor_outs), device=val.device.type))
            tensor_outs.append(o)
        elif isinstance(val, torch.SymInt):
            outputs.append(OutputSpec("sym", expr=_expr(val, shape_env)))
        elif o is None:
            outputs.append(OutputSpec("none"))
        elif isinstance(val, (int, float, bool)):
            outputs.append(OutputSpec("const", expr=val))
        else:
            raise UnsupportedGraph(f"graph output {o} of kind {type(val).__name__} is not supported")
    _reject_unbacked_outputs(out_node.args[0], outputs, bound)
    out_node.args = (tuple(tensor_outs),)
    graph.eliminate_dead_code()
    derived = _derive_float_scalars(graph, shape_env)
    try:
        fx_rewrites.as_strided_to_views(graph, shape_env)
        fx_rewrites.views_to_collapse_split(graph, shape_env)
    except fx_rewrites.ViewRewriteError as e:
        raise UnsupportedGraph(str(e)) from None
    graph.eliminate_dead_code()
    graph.lint()

    _fixed_input_dims_static(graph, shape_env)
    ctx = make_context()
    importer = FxImporter(context=ctx)
    try:
        importer.import_stateless_graph(graph, func_name=func_name)
    except Exception as e:  # torch-mlir raises NotImplementedError/KeyError naming the op
        node = _failing_node(graph, e)
        where = f" at {node_origin(node)}" if node is not None else ""
        raise UnsupportedGraph(f"cannot import the graph into MLIR{where}: {type(e).__name__}: {e}") from e
    module = importer.module
    _assert_scalar_operands_to_int(module)

    # Symbols used anywhere: inputs, outputs, guards.
    guard_exprs = _relevant_guards(shape_env, sources)
    used: set[sympy.Symbol] = set()
    for s in sources:
        used |= s.expr.free_symbols
    for o in outputs:
        if o.kind == "tensor":
            for e in o.shape:
                used |= sympy.sympify(e).free_symbols
        elif o.kind == "sym":
            used |= o.expr.free_symbols
        elif o.kind == "alias":
            for e in o.expr.exprs:
                used |= e.free_symbols
    for e in derived:
        used |= e.free_symbols
    for e, _, _ in asserts:
        used |= e.free_symbols
    symbols = shapes.sorted_symbols(used)
    asserts += _unbacked_input_asserts(symbols, bound, shape_env, {str(e) for e, _, _ in asserts})
    checks: list[Check] = []
    with ctx, ir.Location.unknown():
        body = module.body
        first = body.operations[0] if len(body.operations) else None
        ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(body)
        with ip:
            for s in symbols:
                _declare_symbol(s, shape_env)
        _build_guard_function(module, sources, guard_exprs, asserts, symbols, shape_env, checks)
        _bind_compute(module, func_name, sources)
        _record_equalities(module, guard_exprs)
    module.operation.verify()
    op_sources: dict[str, str] = {}
    for node in graph.nodes:
        if node.op == "call_function":
            name = str(node.target)
            for key in (name, name.rsplit(".", 1)[0]):
                op_sources.setdefault(key, node_source(node))
    return ImportedGraph(module, ctx, [s.name for s in symbols], sources, checks, outputs,
                         input_kinds + ["derived"] * len(derived), input_dtypes + [None] * len(derived), shape_env,
                         derived, op_sources, input_perms + [None] * len(derived))


def _derive_float_scalars(graph: fx.Graph, shape_env) -> list[sympy.Basic]:
    """Replace each float scalar computed from sizes that a tensor op consumes (e.g. the
    `1 / sqrt(head_dim)` scale of scaled_dot_product_attention, or a user's `/ math.sqrt(d)` with
    a symbolic `d`) by a new trailing graph input; returns their expressions, in input order."""
    exprs: list[sympy.Basic] = []
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    last = placeholders[-1] if placeholders else None  # a graph may have no inputs (torch.rand(6, 7))
    for node in list(graph.nodes):
        v = node.meta.get("val")
        if node.op != "call_function" or not isinstance(v, torch.SymFloat):
            continue
        if all(isinstance(u.meta.get("val"), (torch.SymInt, torch.SymFloat, torch.SymBool)) for u in node.users):
            continue  # only feeds other scalar math: replaced with it
        with graph.inserting_after(last) if last is not None else graph.inserting_before(next(iter(graph.nodes))):
            ph = graph.placeholder(f"derived_{len(exprs)}")
        ph.meta["val"] = v
        last = ph
        node.replace_all_uses_with(ph)
        e = v.node.expr
        exprs.append(shape_env.replace(e) if shape_env is not None else e)
    if exprs:
        graph.eliminate_dead_code()
    return exprs


def _fixed_input_dims_static(graph: fx.Graph, shape_env) -> None:
    """Input dims whose SymInt the ShapeEnv fixed to a number are that number in the function's type.
    torch-mlir types a SymInt dim `?` whatever its value, while ops the importer writes take their
    types from fake values that fold it: a backward's incoming grad of batch `s0 - 1` with s0 = 2
    was `?x2x...` collapsed into a static 2, which collapse_shape's verifier rejects. The sizes the
    runtime reads and checks (`Source`s, `sym.dims`) are unchanged."""
    for ph in graph.nodes:
        if ph.op != "placeholder":
            continue
        val = ph.meta.get("val")
        if not isinstance(val, torch.Tensor) or not any(isinstance(d, torch.SymInt) for d in val.shape):
            continue
        sizes = [_fixed(d, shape_env) for d in val.shape]
        if not any(isinstance(a, torch.SymInt) and isinstance(b, int) for a, b in zip(val.shape, sizes)):
            continue
        strides = [_fixed(st, shape_env) for st in val.stride()]
        with val.fake_mode if hasattr(val, "fake_mode") else contextlib.nullcontext():
            ph.meta["val"] = torch.empty_strided(sizes, strides, dtype=val.dtype, device=val.device)
        ph.meta.pop("tensor_meta", None)  # torch-mlir's importer reads it before `val`


def _fixed(size: Any, shape_env) -> Any:
    """`size` as an int when the ShapeEnv fixed its symbols' value, else itself."""
    if not isinstance(size, torch.SymInt):
        return size
    expr = _expr(size, shape_env)
    return int(expr) if getattr(expr, "is_Integer", False) else size


def _storage(val: Any):
    if not isinstance(val, torch.Tensor):
        return None
    try:
        return val.untyped_storage()._cdata
    except Exception:  # noqa: BLE001 - tensors without storage alias nothing
        return None


def _is_view_node(node: fx.Node) -> bool:
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:  # a piece of a list-returning view (split, unbind)
        src = node.args[0]
        return isinstance(src, fx.Node) and _is_view_node(src)
    return bool(getattr(node.target, "is_view", False))


def _alias_plans(out_list: list, placeholders: list[fx.Node], shape_env) -> dict[int, AliasPlan]:
    """Graph outputs that share storage with an input or with a computed output, as view replays."""
    ph_index = {ph: i for i, ph in enumerate(placeholders)}
    ph_storage = {_storage(ph.meta.get("val")): i for i, ph in enumerate(placeholders)}
    ph_storage.pop(None, None)
    # Computed outputs first: every tensor output that is not a view (nor an input, nor a repeat).
    # `aten.alias(x)` of an intermediate x is x itself (its size, strides and offset): computed, and
    # other outputs viewing x are views of it (a training forward saves attention's output for its
    # backward as an alias, and flattened for the next projection's: one buffer, not two copies).
    computed: dict[fx.Node, int] = {}
    for k, o in enumerate(out_list):
        if (isinstance(o, fx.Node) and isinstance(o.meta.get("val"), torch.Tensor) and o not in computed
                and o not in ph_index):
            if not _is_view_node(o):
                computed[o] = k
            elif o.target is torch.ops.aten.alias.default and isinstance(o.args[0], fx.Node) \
                    and not _is_view_node(o.args[0]) and o.args[0] not in ph_index and o.args[0] not in computed \
                    and o.args[0] not in out_list:
                computed[o] = computed[o.args[0]] = k
    out_storage = {_storage(o.meta["val"]): k for o, k in computed.items()}
    plans: dict[int, AliasPlan] = {}
    for k, o in enumerate(out_list):
        if not isinstance(o, fx.Node) or not isinstance(o.meta.get("val"), torch.Tensor):
            continue
        if computed.get(o) == k:
            continue
        st = _storage(o.meta["val"])
        chain: list[fx.Node] = []
        cur = o
        while True:
            if cur in ph_index:
                base = ("input", ph_index[cur])
                break
            if cur in computed and (cur is not o or computed[cur] != k):
                base = ("output", computed[cur])
                break
            if not _is_view_node(cur):
                base = None
                break
            chain.append(cur)
            cur = cur.args[0]
        if base is None:
            if st is not None and (st in ph_storage or st in out_storage):
                raise UnsupportedGraph(f"graph output {o.name} aliases "
                                       f"{'an input' if st in ph_storage else 'another output'} through ops "
                                       f"that are not views (at {node_origin(o)})")
            computed[o] = k  # a view of an intermediate that is not returned: computed as a fresh tensor
            continue
        plans[k] = _replay_plan(base, list(reversed(chain)), shape_env)
    return plans


def _replay_plan(base: tuple[str, int], chain: list[fx.Node], shape_env) -> AliasPlan:
    plan = AliasPlan(base)
    prev: fx.Node | None = None if not chain else chain[0].args[0]

    def conv(a: Any, node: fx.Node) -> Any:
        if isinstance(a, (list, tuple)):
            return type(a)(conv(x, node) for x in a)
        if isinstance(a, fx.Node):
            if a is prev:
                return PREV
            v = a.meta.get("val")
            if isinstance(v, torch.SymInt):
                plan.exprs.append(_expr(v, shape_env))
                return SymArg(len(plan.exprs) - 1)
            if isinstance(v, (int, float, bool)):
                return v
            raise UnsupportedGraph(f"view {node.name} takes {a.name} ({type(v).__name__}), which the runtime "
                                   f"cannot replay (at {node_origin(node)})")
        if isinstance(a, torch.SymInt):
            plan.exprs.append(_expr(a, shape_env))
            return SymArg(len(plan.exprs) - 1)
        return a

    for node in chain:
        args = conv(tuple(node.args), node)
        kwargs = {key: conv(v, node) for key, v in node.kwargs.items()}
        plan.steps.append((node.target, args, kwargs))
        prev = node
    return plan


def _failing_node(graph: fx.Graph, e: Exception) -> fx.Node | None:
    text = str(e)
    for node in graph.nodes:
        if node.op == "call_function" and str(node.target).split(".")[1:2] and str(node.target) in text:
            return node
    for node in graph.nodes:
        if node.op == "call_function" and getattr(node.target, "__name__", "@@") in text:
            return node
    return None


def _declare_symbol(s: sympy.Symbol, shape_env) -> None:
    rng = shapes.symbol_range(shape_env, s) if shape_env is not None else shapes.Range(0, None)
    op = sym.SymbolOp(ir.StringAttr.get(s.name), shapes._i64(rng.lo))
    if rng.hi is not None:
        op.operation.attributes["hi"] = shapes._i64(rng.hi)
    hint = None
    if shape_env is not None:
        table = getattr(shape_env, "backed_var_to_val", None)
        if table is None:
            table = getattr(shape_env, "var_to_val", {})
        hint = table.get(s)
    if hint is not None and sympy.sympify(hint).is_Integer:
        op.operation.attributes["hint"] = shapes._i64(int(hint))
    if s.name.startswith("u"):
        op.operation.attributes["unbacked"] = ir.UnitAttr.get()


def _relevant_guards(shape_env, sources: list[Source]) -> list[tuple[sympy.Basic, str]]:
    """The ShapeEnv's guards whose symbols all come from this graph's inputs, with their origins."""
    if shape_env is None:
        return []
    bound: set[sympy.Symbol] = set()
    for s in sources:
        bound |= s.expr.free_symbols
    out: list[tuple[sympy.Basic, str]] = []
    for g in shape_env.guards:
        expr = shape_env.replace(g.expr) if hasattr(shape_env, "replace") else g.expr
        if expr in (sympy.true, True) or not expr.free_symbols or not expr.free_symbols <= bound:
            continue
        out.append((expr, _sloc_text(getattr(g, "sloc", None))))
    return out


def _implied_by_ranges(expr: sympy.Basic, shape_env) -> bool:
    """True when `expr` holds for every value of its symbols within their ShapeEnv ranges (value-range
    analysis only: no other guard is assumed)."""
    if shape_env is None:
        return False
    try:
        from torch.utils._sympy.value_ranges import bound_sympy

        vr = bound_sympy(expr, dict(shape_env.var_to_range))
        if vr.is_singleton() and vr.lower == sympy.true:
            return True
    except Exception:  # noqa: BLE001 - an expression the analysis cannot bound is not implied
        pass
    # PyTorch's value ranges do not bound float powers; sympy's sign assumptions do: read the
    # relation as real arithmetic over symbols that are positive (or nonnegative) by their ranges.
    try:
        return _sign_proof(expr, shape_env)
    except Exception:  # noqa: BLE001
        return False


_FLOAT_FNS = {
    "ToFloat": lambda a: a,
    "FloatPow": lambda a, b: a**b,
    "FloatTrueDiv": lambda a, b: a / b,
    "IntTrueDiv": lambda a, b: a / b,
    "OpaqueUnaryFn_sqrt": sympy.sqrt,
}


def _sign_proof(expr: sympy.Basic, shape_env) -> bool:
    subs = {}
    for s in expr.free_symbols:
        lo = shapes.symbol_range(shape_env, s).lo
        if lo < 0:
            return False
        subs[s] = sympy.Symbol(s.name, integer=True, positive=True) if lo >= 1 else \
            sympy.Symbol(s.name, integer=True, nonnegative=True)

    def conv(e: sympy.Basic) -> sympy.Basic:
        if e in subs:
            return subs[e]
        if not e.args:
            return e
        args = [conv(a) for a in e.args]
        fn = _FLOAT_FNS.get(type(e).__name__)
        if fn is not None:
            return fn(*args)
        if isinstance(e, (sympy.Add, sympy.Mul, sympy.Pow)) or isinstance(e, sympy.Rel):
            return e.func(*args)
        raise shapes.UnsupportedExpr(str(e))

    rel = conv(expr)
    if not isinstance(rel, sympy.Rel):
        return bool(rel == sympy.true)
    d = sympy.simplify(rel.lhs - rel.rhs)
    checks = {sympy.Ge: d.is_nonnegative, sympy.Gt: d.is_positive, sympy.Le: (-d).is_nonnegative,
              sympy.Lt: (-d).is_positive, sympy.Eq: d.is_zero, sympy.Ne: d.is_nonzero}
    return checks.get(type(rel)) is True


def _sloc_text(sloc) -> str:
    if sloc is None:
        return "shape env"
    for attr in ("maybe_user_loc", "user_loc", "framework_loc"):
        v = getattr(sloc, attr, None)
        if v:
            return str(v).strip()
    return str(sloc)


def _build_guard_function(module, sources, guard_exprs, asserts, symbols, shape_env, checks) -> None:
    index = ir.IndexType.get()
    with ir.InsertionPoint(module.body):
        ftype = ir.FunctionType.get([index] * len(sources), [])
        fn = func_d.FuncOp("guards", ftype)
        fn.operation.attributes[sym.GUARD_FN_ATTR] = ir.UnitAttr.get()
        fn.arg_attrs = ir.ArrayAttr.get([
            ir.DictAttr.get({sym.SOURCE_ATTR: ir.StringAttr.get(s.describe())}) for s in sources
        ])
        block = fn.add_entry_block()
    with ir.InsertionPoint(block):
        b = shapes.ExprBuilder()
        for arg, s in zip(block.arguments, sources):
            sym.BindOp(arg, b.value(s.expr))
            checks.append(Check("bind", f"{s.describe()} == {s.expr}", "input size"))
        for s in symbols:  # range facts are guards: sizes outside the range need another artifact
            if _unbacked(s, shape_env):
                continue  # the range of a data-dependent input is the user's torch._check: an assert
            rng = shapes.symbol_range(shape_env, s) if shape_env is not None else shapes.Range(0, None)
            conds = [sympy.Ge(s, rng.lo)] + ([sympy.Le(s, rng.hi)] if rng.hi is not None else [])
            for c in conds:
                if rng.lo <= 0 and isinstance(c, sympy.Ge):
                    continue  # sizes are never negative; nothing to check
                loc = ir.Location.name(f"range of {s}")
                b.loc = loc
                sym.GuardOp(b.condition(c), ir.StringAttr.get(f"range of {s}: {rng}"), loc=loc)
                checks.append(Check("guard", str(c), f"range of {s}: {rng}"))
        b.loc = None
        for expr, origin in guard_exprs:
            try:
                cond = b.condition(expr)
            except shapes.UnsupportedExpr as e:
                if _implied_by_ranges(expr, shape_env):
                    # e.g. `1/sqrt(float(s0)) >= 0` (float math the sym dialect has no ops for):
                    # true for every value in the symbols' ranges, which the range guards check.
                    log.debug("guard '%s' from %s: implied by the symbol ranges, not checked", expr, origin)
                    continue
                raise UnsupportedGraph(f"guard '{expr}' from {origin}: {e}") from e
            sym.GuardOp(cond, ir.StringAttr.get(origin), loc=ir.Location.name(origin[:200]))
            checks.append(Check("guard", str(expr), origin))
        for expr, msg, origin in asserts:
            op = sym.AssertOp(b.condition(expr), ir.StringAttr.get(f"{msg}: {expr}"), loc=ir.Location.name(origin[:200]))
            op.operation.attributes["origin"] = ir.StringAttr.get(origin)
            checks.append(Check("assert", f"{msg}: {expr}", origin))
        func_d.ReturnOp([])


def _record_equalities(module, guard_exprs: list[tuple[sympy.Basic, str]]) -> None:
    """The guards `Eq(a, b)` between two expressions of symbols, as the module's `sym.equalities`
    (passes read equal sizes as one: sym-assert-elim, sym-unify-sizes). Inputs marked dynamic get
    symbols of their own (no duck sizing), so cross entropy over logits [s0*s1, V] and targets
    [s2*s3] has Dynamo guard `Eq(s0*s1, s2*s3)`; read apart, the two sizes differed, torch-mlir's
    check between them stayed a branch of the host program, and no kernel fused across it (a
    training step's one-hot of its targets was a 16 MiB tensor of its own). The guard function
    checks each equality before any compute runs."""
    from mlir_sym.passes.canonicalize import EQUALITIES_ATTR

    pairs = [(e.lhs, e.rhs) for e, _ in guard_exprs
             if isinstance(e, sympy.Eq) and e.lhs.free_symbols and e.rhs.free_symbols]
    if pairs:
        module.operation.attributes[EQUALITIES_ATTR] = ir.ArrayAttr.get(
            [ir.ArrayAttr.get([ir.StringAttr.get(str(a)), ir.StringAttr.get(str(b))]) for a, b in pairs])


def _bind_compute(module, func_name: str, sources: list[Source]) -> None:
    fn = next(op for op in module.body.operations if op.operation.name == "func.func"
              and ir.StringAttr(op.operation.attributes["sym_name"]).value == func_name)
    block = fn.regions[0].blocks[0]
    first = block.operations[0]
    with ir.InsertionPoint(first):
        b = shapes.ExprBuilder()
        for s in sources:
            arg = block.arguments[s.arg]
            op = sym.BindOp(arg, b.value(s.expr))
            if s.dim is not None:
                op.operation.attributes["dim"] = shapes._i64(s.dim)


# ---------------------------------------------------------------------------------------------
# Unbacked symbols (u0, ...): sizes that depend on data, e.g. the length of x[mask]. Two cases:
#  * a SymInt input of the graph (datadep.py's fill graph, whose count phase computed the value): a
#    symbol of the artifact like any other (declared `unbacked`, no hint), its range and torch._check
#    facts become `sym.assert`s (the user's error, never a guard);
#  * otherwise a value of the compute only: runtime asserts on it stay in the graph (the compute checks
#    them, after sym-mask-to-where has turned the size into a count such as sum(mask)), unless the
#    ranges of sizes imply them; an output whose size depends on one is rejected, naming the op that
#    made it (datadep.py compiles such graphs in two phases instead).


def _unbacked(expr: sympy.Basic, shape_env) -> bool:
    return any(s.name.startswith("u") for s in sympy.sympify(expr).free_symbols)


def _implied_for_sizes(expr: sympy.Basic, shape_env) -> bool:
    """True when `expr` holds for every value of its unbacked symbols that a size can take (>= 0 where the
    ShapeEnv calls the symbol size-like), with backed symbols in their ranges."""
    from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

    size_like = getattr(shape_env, "size_like", set()) if shape_env is not None else set()
    ranges = {}
    for s in sympy.sympify(expr).free_symbols:
        if s.name.startswith("u"):
            ranges[s] = ValueRanges(0, sympy.oo) if s in size_like else ValueRanges(-sympy.oo, sympy.oo)
        elif shape_env is not None and s in shape_env.var_to_range:
            ranges[s] = shape_env.var_to_range[s]
    try:
        return bound_sympy(expr, ranges) == ValueRanges(sympy.true, sympy.true)
    except Exception:  # noqa: BLE001 - cannot prove it: keep the check
        return False


def _unbacked_input_asserts(symbols: list[sympy.Symbol], bound: set[sympy.Symbol], shape_env, seen: set[str]
                            ) -> list[tuple[sympy.Basic, str, str]]:
    """Checks of the unbacked symbols the artifact takes as inputs (their values come from a count or
    from `.item()`), besides the graph's own asserts (`seen`, as text): the ShapeEnv's range of each
    (size-like: [0, oo]; narrowed by torch._check), then the deferred runtime asserts over input
    symbols only (torch._check(u0 <= x.size(0)))."""
    if shape_env is None:
        return []
    out: list[tuple[sympy.Basic, str, str]] = []

    def add(e: sympy.Basic, origin: str) -> None:
        if e in (sympy.true, True) or str(e) in seen:
            return
        seen.add(str(e))
        out.append((e, "Runtime assertion failed for expression", origin))

    inputs = [s for s in symbols if _unbacked(s, shape_env) and s in bound]
    for s in inputs:
        rng = shapes.symbol_range(shape_env, s)
        if rng.lo != shapes.I64_MIN:
            add(sympy.Ge(s, rng.lo), f"range of data-dependent {s}: {rng}")
        if rng.hi is not None:
            add(sympy.Le(s, rng.hi), f"range of data-dependent {s}: {rng}")
    for ras in getattr(shape_env, "deferred_runtime_asserts", {}).values():
        for ra in ras:
            e = shape_env.replace(ra.expr)
            syms = getattr(e, "free_symbols", set())
            if syms and syms <= bound and any(_unbacked(x, shape_env) for x in syms):
                add(e, f"torch._check on data-dependent {', '.join(sorted(str(x) for x in syms))}")
    return out


def _reject_unbacked_outputs(out_args: Any, outputs: list[OutputSpec], bound: set[sympy.Symbol]) -> None:
    for o, spec in zip(out_args if isinstance(out_args, (list, tuple)) else [out_args], outputs):
        exprs = list(spec.shape) if spec.kind in ("tensor", "alias") else [spec.expr] if spec.kind == "sym" else []
        bad = sorted({str(s) for e in exprs for s in sympy.sympify(e).free_symbols
                      if s.name.startswith("u") and s not in bound})
        if not bad:
            continue
        maker = _unbacked_maker(o, set(bad))
        what = f"{maker.target} ({maker.name})" if maker is not None else str(o)
        raise UnsupportedGraph(
            f"graph output {o} has a data-dependent size {', '.join(bad)} made by {what} at "
            f"{node_origin(maker if maker is not None else o)}: mlir_sym allocates outputs from input sizes; "
            f"keep the mask as a where (torch.where(mask, x, 0)) or reduce the selection (x[mask].sum())")


def _unbacked_maker(node: Any, names: set[str]) -> fx.Node | None:
    """The first node upstream of `node` whose own unbacked bindings or value introduce one of `names`."""
    seen, stack, found = set(), [node], None
    while stack:
        n = stack.pop()
        if not isinstance(n, fx.Node) or n in seen:
            continue
        seen.add(n)
        v = n.meta.get("val")
        shape = v.shape if isinstance(v, torch.Tensor) else [v] if isinstance(v, torch.SymInt) else []
        if any(isinstance(d, torch.SymInt) and {str(s) for s in d.node.expr.free_symbols} & names for d in shape):
            found = n
            stack.extend(a for a in n.all_input_nodes)
    return found


def _assert_scalar_operands_to_int(module: ir.Module) -> None:
    """torch-mlir imports `_assert_scalar(SymBool)` with a !torch.bool operand, but the op takes a number
    (and lowers it to cf.assert): convert the condition with torch.aten.Int.bool."""
    def walk(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    o = child.operation
                    if o.name == "torch.aten._assert_scalar" and str(o.operands[0].type) == "!torch.bool":
                        with ir.InsertionPoint(o), o.location:
                            cast = ir.Operation.create("torch.aten.Int.bool", results=[ir.Type.parse("!torch.int")],
                                                       operands=[o.operands[0]])
                        o.operands[0] = cast.result
                    walk(o)

    walk(module.operation)
