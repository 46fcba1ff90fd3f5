"""Float inputs AOTAutograd will specialize, predicted from Dynamo's graph before tracing it.

With dynamic=True Dynamo passes Python floats it meets (module attributes such as `nn.Embedding.norm_type`,
`nn.LayerNorm.eps`, `nn.Dropout.p`, globals such as `math.pi`) into the graph as 0-d tensors read back
with `.item()`, their values backed float symbols (zf0, ...). After AOTAutograd has traced the aten
graph, its `tensorify_python_scalars` pass turns each float used in tensor arithmetic into a tensor
input; every other backed float symbol is specialized, and it raises TensorifyScalarRestartAnalysis:
Dynamo traces the frame again with those floats as constants, and AOTAutograd traces it again. The
first AOTAutograd trace (with our decompositions, the dearest part of capture) is thrown away.

`predict_specializations` finds, from the Dynamo graph alone, the float symbols that pass is certain to
specialize, so the backend can ask for the restart before AOTAutograd runs:
  - a backed float symbol with no `.item()` node in the graph that produces it (nothing to tensorify);
  - an `.item()` whose value Dynamo already specialized while tracing (a constant, e.g. an `eps`
    passed where the op's signature takes a double);
  - an `.item()` whose only uses are arguments the op ignores: `F.embedding`'s `norm_type` when
    `max_norm` is None (every `nn.Embedding` in every HuggingFace model), or Python code that makes
    a constant of it (`config.dropout_rate is not None`).
A float used in any other way is left to the pass (it may tensorify it): the prediction never asks
for a specialization the pass would not make, so compiled code and guards are the same as without it,
and a graph with such floats still restarts at most as often as before. Which floats the pass
tensorifies changed between versions: torch 2.13 counts a float whose expression reaches a tensor op
(`x * sqrt(2 / math.pi)`, GPT-2's gelu), torch 2.11 only a float a tensor op takes itself
(`_derived_floats_tensorify`).
"""
from __future__ import annotations

import functools
import logging
from typing import Any

import torch
import torch.fx as fx

log = logging.getLogger("mlir_sym.compile")

_EMBEDDING_PARAMS = ("input", "weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse")


def _ignored_use(user: fx.Node, item: fx.Node) -> bool:
    """Whether `user` passes `item` only where the op does not read it, or computes a plain Python
    constant from it (`x is not None` on a config float: nothing of it reaches the aten graph)."""
    v = user.meta.get("example_value", ())
    if v is None or type(v) in (bool, int, float):
        return True
    if user.op == "call_function" and user.target is torch.nn.functional.embedding:
        bound = {**dict(zip(_EMBEDDING_PARAMS, user.args)), **user.kwargs}
        return [k for k, a in bound.items() if a is item] == ["norm_type"] and bound.get("max_norm") is None
    return False


def _tensorify_enabled() -> bool:
    """Whether the tensorify pass runs at all (`TENSORIFY_PYTHON_SCALARS=0` turns it off: no float is
    specialized, nothing restarts)."""
    import torch._dynamo.utils

    check = getattr(torch._dynamo.utils, "_is_tensorify_enabled", None)
    return True if check is None else bool(check())


@functools.cache
def _derived_floats_tensorify() -> bool:
    """Whether this torch's tensorify pass counts a float as tensorified when an expression of it
    reaches a tensor op (`x * sqrt(2 / math.pi)`: torch 2.13 adds the expression's free symbols), or
    only when the float itself does (torch 2.11 adds the expression: GPT-2's `math.pi` in gelu is
    specialized there)."""
    import inspect

    from torch.fx.passes import _tensorify_python_scalars as tensorify

    try:
        return "tensorified_symbols.update(" in inspect.getsource(tensorify)
    except (OSError, TypeError):  # no source: assume the newer pass
        return True


def _float_symbols(shape_env) -> dict[str, Any]:
    from torch.utils._sympy.symbol import SymT, symbol_is_type

    values = getattr(shape_env, "backed_var_to_val", None)  # torch >= 2.13; older: var_to_val
    if values is None:
        values = getattr(shape_env, "var_to_val", {})
    return {str(k): k for k in values if symbol_is_type(k, SymT.FLOAT)}


def predict_specializations(gm: fx.GraphModule, shape_env) -> list[str]:
    """Names of the backed float symbols AOTAutograd's tensorify pass will specialize (see the module doc)."""
    from torch._dynamo.symbolic_convert import TensorifyState

    floats = _float_symbols(shape_env)
    if not floats or not _tensorify_enabled():
        return []
    if any(n.op == "get_attr" and isinstance(getattr(gm, str(n.target), None), torch.nn.Module)
           for n in gm.graph.nodes):
        return []  # subgraphs (checkpoint, autograd.Function bodies) may take floats: left to the pass
    maybe_tensorified: set[str] = set()
    for n in gm.graph.nodes:
        if not (n.op == "call_method" and n.target == "item" and n.args and isinstance(n.args[0], fx.Node)
                and n.args[0].op == "placeholder"):
            continue
        v = n.meta.get("example_value")
        if not isinstance(v, torch.SymFloat):
            continue  # already a constant: its symbol was specialized while tracing
        used = [u for u in n.users if not _ignored_use(u, n)]
        if not _derived_floats_tensorify():  # only the float itself, taken by a tensor op, counts
            used = [u for u in used if isinstance(u.meta.get("example_value"), torch.Tensor)]
        if used:
            maybe_tensorified |= {str(s) for s in v.node.expr.free_symbols}
    return sorted(name for name in floats
                  if name not in maybe_tensorified and not TensorifyState.should_specialize(name))


def restart(names: list[str]) -> None:
    """Make Dynamo trace the frame again with the float symbols `names` specialized."""
    from torch._dynamo.exc import TensorifyScalarRestartAnalysis
    from torch._dynamo.symbolic_convert import TensorifyState

    for name in names:
        TensorifyState.specialize(name)
    raise TensorifyScalarRestartAnalysis


def _inputs_of(gm: fx.GraphModule, names: list[str]) -> dict[str, fx.Node | None] | None:
    """For each symbol of `names`: the placeholder of the 0-d tensor Dynamo made of the float (its
    `item_memo` is the symbol), or None for a float the graph has no input for (a config float only
    tested against None). None when one cannot be specialized in the graph: its input is used other
    than by `.item()` calls, or, without an input, a value in the graph mentions its symbol."""
    found: dict[str, fx.Node | None] = {}
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        memo = getattr(n.meta.get("example_value"), "item_memo", None)
        sym = getattr(getattr(memo, "node", None), "_expr", None)  # the symbol, not its replacement
        if sym is not None and str(sym) in names:
            if not all(u.op == "call_method" and u.target == "item" for u in n.users):
                return None
            found[str(sym)] = n
    missing = set(names) - set(found)
    if missing:
        from torch.utils._pytree import tree_leaves

        for n in gm.graph.nodes:
            for v in tree_leaves(n.meta.get("example_value")):
                vals = (*v.shape, *v.stride()) if isinstance(v, torch.Tensor) else (v,)
                syms = {str(s) for x in vals if isinstance(x, (torch.SymFloat, torch.SymInt, torch.SymBool))
                        for s in x.node.expr.free_symbols}
                if missing & syms:
                    return None
        found.update(dict.fromkeys(missing))
    return found


def specialize_in_graph(gm: fx.GraphModule, shape_env) -> list[str]:
    """Specialize the floats the pass would specialize (`predict_specializations`) in Dynamo's graph
    itself, without a restart: every `.item()` of such a float input becomes its value, under a
    ShapeEnv guard on it (Dynamo then guards the float's source, `L['self'].ln.eps == 1e-05`, as it
    would for a constant after the restart), and TensorifyState marks the symbol specialized, so the
    pass does not ask for the restart either. The input stays (unused) in the graph. Returns the
    symbols specialized; [] when there are none or one cannot be handled so (then the restart is
    asked for, `restart_early`)."""
    from torch.fx.experimental.symbolic_shapes import guard_scalar
    from torch._dynamo.symbolic_convert import TensorifyState

    names = predict_specializations(gm, shape_env)
    inputs = _inputs_of(gm, names) if names else None
    if not inputs:
        return []
    for name, p in inputs.items():
        TensorifyState.specialize(name)
        if p is None:  # nothing in the graph reads it: no value to guard
            continue
        value = guard_scalar(p.meta["example_value"].item_memo)  # the guard: this float, this value
        for item in list(p.users):
            for u in list(item.users):
                u.args = fx.node.map_arg(u.args, lambda a, item=item: value if a is item else a)
                u.kwargs = fx.node.map_arg(u.kwargs, lambda a, item=item: value if a is item else a)
            gm.graph.erase_node(item)
    gm.recompile()
    log.info("float inputs %s specialized in the graph (guarded, no restart)", sorted(inputs))
    return sorted(inputs)


def restart_early(gm: fx.GraphModule, shape_env) -> None:
    """Restart Dynamo now (`restart`) with the floats the pass would specialize after AOTAutograd's
    trace, when there are any."""
    names = predict_specializations(gm, shape_env)
    if names:
        log.info("float inputs %s will be specialized: Dynamo restarts before AOTAutograd traces", names)
        restart(names)
