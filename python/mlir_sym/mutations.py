"""Input mutations of inference graphs, written into the caller's tensors by the compiled code.

AOTAutograd traces a graph that mutates an input (`cache.index_copy_(2, pos, k)` in HuggingFace's
static KV cache, `self.counter.add_(1)`, a BatchNorm's running stats) functionally: the new value is
computed as a fresh tensor. With `keep_inference_input_mutations` (on: `config.inplace_mutations`)
the graph ends with `aten.copy_(input, new_value)`; without it, the graph returns the new value and
AOTAutograd's runtime wrapper copies it into the input after the call. Either way a new value of
the whole input is materialized and then copied: for a static cache, two full passes over every
layer's cache per token where one row changed.

`split(gm)` takes the `copy_` nodes out of the graph (which then has value semantics throughout,
as every later stage expects) and returns each as a `Mutation`: the new value is appended to the
graph's outputs. `with_mutations(run, ...)` wraps the compiled call: after it, each new value that
is not already in its input's memory is copied there, and the appended outputs are dropped.

Written in place: where the new value overwrites part of the input and reads nothing else of it
(index_copy / index_put / slice_scatter / select_scatter / scatter of the input, which is read by
that op alone), the artifact passes the input itself as that output's buffer (`Artifact.into`), so
the compute writes it there: a copy of the input onto itself (elementwise, each element read before
it is written by the same thread) and the scatter. Such ops are idempotent: a value recomputed from
the already-written input (a fused consumer) is the same. Other mutations (`x.add_(1)`: recomputed
from the written input it would be added twice) get a fresh buffer and the copy. So does a call
where the input cannot be the buffer as it is (not contiguous, read permuted by the importer, or
sharing its storage with another argument of the call: Dynamo does not guard on inputs that alias).

A value that is an input or a view of one (`prev.copy_(cur)`) is cloned in the graph, while the
input still holds what the graph read: an output on an input's memory would be read after the
input changed. The same graph with and without a mutation differs only in `Artifact.into`, which
is part of the process cache's key (backend._compile_aten). Training forward graphs keep the
mutations of inputs without grad (BatchNorm's running stats) under the same flag and are split the
same way.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx

log = logging.getLogger("mlir_sym.backend")

# ops whose result is their first operand with some elements overwritten from other operands
_OVERWRITES = {
    torch.ops.aten.index_copy.default, torch.ops.aten.slice_scatter.default,
    torch.ops.aten.select_scatter.default, torch.ops.aten.scatter.src, torch.ops.aten.scatter.value,
}


@dataclass(frozen=True)
class Mutation:
    input: int  # the graph input (placeholder position) the value is copied into
    output: int  # the graph output that holds the new value
    in_place: bool  # the compute may write the new value into the input's own memory


def _flat(node: fx.Node) -> list:
    out: list = []
    fx.node.map_arg((node.args, node.kwargs), out.append)
    return out


def _overwrites(val: fx.Node, ph: fx.Node, copy: fx.Node) -> bool:
    """`val` is an overwrite of `ph` (see the module doc) that nothing else of the graph reads `ph` beside."""
    if val.op != "call_function" or not val.args or val.args[0] is not ph:
        return False
    if val.target is torch.ops.aten.index_put.default:
        accumulate = val.args[3] if len(val.args) > 3 else val.kwargs.get("accumulate", False)
        if accumulate:
            return False
    elif val.target not in _OVERWRITES:
        return False
    if sum(a is ph for a in _flat(val)) != 1:  # ph also as the source: read while written
        return False
    if set(ph.users) != {val, copy}:
        return False
    pv, vv = ph.meta.get("val"), val.meta.get("val")
    return (isinstance(pv, torch.Tensor) and isinstance(vv, torch.Tensor) and pv.dtype == vv.dtype
            and pv.shape == vv.shape)


_FULL = 1 << 62  # a slice's end at least this: to the end (functionalization writes INT64_MAX)


def _sizes(n: Any) -> tuple | None:
    v = n.meta.get("val") if isinstance(n, fx.Node) else None
    return (tuple(str(d) for d in v.shape), v.dtype) if isinstance(v, torch.Tensor) else None


def _full(args: tuple, dim_at: int) -> bool:
    """Whether slice arguments from `dim_at` (dim, start, end, step) cover the whole dim."""
    rest = list(args[dim_at + 1:]) + [None] * 3
    start, end, step = rest[0], rest[1], rest[2]
    return start in (None, 0) and (end is None or (isinstance(end, int) and end >= _FULL)) and step in (None, 1)


def _aliases(n: Any) -> bool:
    """Whether node `n`'s value may share memory with an input: a placeholder or a view op's result."""
    if not isinstance(n, fx.Node) or n.op == "placeholder":
        return True
    t = n.target
    return not isinstance(t, torch._ops.OpOverload) or any(r.alias_info is not None for r in t._schema.returns)


def _identities(graph: fx.Graph) -> None:
    """What functionalization writes around an in-place update, made plain: a slice of a whole dim
    is its input, a slice_scatter of a whole dim is its source, `aten.copy(dst, src)` of a source of
    dst's sizes and dtype is the source (it reads only dst's sizes): `x[:, pos] = k` is then an
    index_put of `x` itself, `x[:, 1:3] = v` a slice_scatter of `x` itself."""
    for n in list(graph.nodes):
        if n.op != "call_function" or n.kwargs:
            continue
        new = None
        if n.target is torch.ops.aten.slice.Tensor and _full(n.args, 1):
            new = n.args[0]
        elif n.target is torch.ops.aten.slice_scatter.default and _full(n.args, 2) and _sizes(n.args[1]) == _sizes(n):
            new = n.args[1]
        elif n.target is torch.ops.aten.copy.default and _sizes(n.args[1]) is not None and _sizes(n.args[1]) == _sizes(n) \
                and not _aliases(n.args[1]):  # a copy of an input (or a view) is a value of its own
            new = n.args[1]
        if new is not None:
            n.replace_all_uses_with(new)
            graph.erase_node(n)
    for n in reversed(list(graph.nodes)):  # views left without readers
        if n.op == "call_function" and not n.users and n.target in (torch.ops.aten.slice.Tensor, torch.ops.aten.select.int):
            graph.erase_node(n)


def split(gm: fx.GraphModule) -> list[Mutation]:
    """Take `gm`'s input-mutating `copy_(placeholder, value)` nodes out; each value becomes a trailing
    output. Returns the mutations (none: `gm` unchanged)."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    index = {p: i for i, p in enumerate(placeholders)}
    copies = [n for n in graph.nodes if n.op == "call_function" and n.target is torch.ops.aten.copy_.default
              and isinstance(n.args[0], fx.Node) and n.args[0] in index]
    if not copies:
        return []
    _identities(graph)
    out = next(n for n in graph.nodes if n.op == "output")
    # decided before any copy_ goes: another mutation's value that reads an input (`prev.copy_(cur)`)
    # is a reader of it, as much as the copy_ node that holds it
    decided = [(c, c.args[0], c.args[1], isinstance(c.args[1], fx.Node) and _overwrites(c.args[1], c.args[0], c))
               for c in copies]
    taken = []
    for c, ph, val, in_place in decided:
        if _aliases(val):  # a value on an input's memory (`prev.copy_(cur)`): a copy of its own, made
            with graph.inserting_before(c):  # while that input still holds what the graph read
                fresh = graph.call_function(torch.ops.aten.clone.default, (val,))
            fresh.meta = dict(val.meta) if isinstance(val, fx.Node) else {}
            val, in_place = fresh, False
        c.replace_all_uses_with(val)  # an output that is the mutated input (AOTAutograd remakes it as one)
        taken.append((index[ph], val, in_place))
        graph.erase_node(c)
    results = list(out.args[0]) if isinstance(out.args[0], (list, tuple)) else [out.args[0]]
    mutations = [Mutation(i, len(results) + n, in_place) for n, (i, _, in_place) in enumerate(taken)]
    out.args = (tuple(results + [val for _, val, _ in taken]),)
    graph.lint()
    gm.recompile()
    log.debug("input mutations: %s", mutations)
    return mutations


def with_mutations(run: Callable, mutations: Sequence[Mutation], stats: Any = None) -> Callable:
    """`run` (boxed: a list of inputs -> the list of outputs) with each mutation's value copied into
    its input unless it is there already, and the mutation outputs dropped; `stats` counts both
    (`mutations_in_place`, `mutations_copied`)."""
    if not mutations:
        return run
    drop = {m.output for m in mutations}
    pairs = [(m.input, m.output) for m in mutations]

    def call(args: list) -> list:
        outs = run(args)
        dsts, srcs = [], []
        for i, k in pairs:
            a, v = args[i], outs[k]
            if v.data_ptr() != a.data_ptr() or v.stride() != a.stride() or v.shape != a.shape:
                dsts.append(a)
                srcs.append(v)
            elif stats is not None:
                stats.mutations_in_place += 1
        if dsts:
            copy_all(dsts, srcs)
            if stats is not None:
                stats.mutations_copied += len(dsts)
        return [o for k, o in enumerate(outs) if k not in drop]

    call._boxed_call = True  # type: ignore[attr-defined]
    for attr in ("artifact",):
        if hasattr(run, attr):
            setattr(call, attr, getattr(run, attr))
    return call


def copy_all(dsts: list, srcs: list) -> list:
    """Copy each of `srcs` into the `dsts` beside it: one multi-tensor kernel (torch._foreach_copy_) per
    dtype and devices, where one copy each costs a launch or a copy-engine transfer apiece (Llama's 9
    graph outputs: 9 device-to-device copies, 22 us of a 286 us call; a static cache's position
    counter: one small copy a layer). The foreach kernel takes tensors of one dtype only. The order
    does not matter: mutated inputs are distinct (AOTAutograd merges those that alias into one base)
    and the values are the call's own buffers."""
    groups: dict = {}
    for d, s in zip(dsts, srcs):
        ds, ss = groups.setdefault((s.dtype, d.dtype, s.device, d.device), ([], []))
        ds.append(d)
        ss.append(s)
    for ds, ss in groups.values():
        if len(ds) == 1:
            ds[0].copy_(ss[0])
        else:
            torch._foreach_copy_(ds, ss)
    return dsts


def written_into(mutations: Sequence[Mutation]) -> dict[int, int]:
    """Output index -> input index of the mutations the compute writes in place (`Artifact.into`)."""
    return {m.output: m.input for m in mutations if m.in_place}


def storages(args: Sequence[Any]) -> list:
    """Per argument, the address of its storage (None for non-tensors): `take`'s alias check."""
    return [a.untyped_storage().data_ptr() if isinstance(a, torch.Tensor) else None for a in args]


def take(args: Sequence[Any], k: int, into: dict[int, int], shape: tuple, dtype: torch.dtype,
         device: Any, bases: list) -> torch.Tensor | None:
    """The caller's input that output `k` is written into, when it can be its buffer as it is
    (contiguous, of the output's dtype, sizes and device, and no other argument on its storage), else
    None (a fresh buffer and the copy). `bases`: `storages(args)`. Another argument on the same
    storage (a view of the input, passed beside it at this call though not when the graph was traced:
    Dynamo does not guard on it) could be read by the compute after the write."""
    i = into.get(k)
    if i is None:
        return None
    a = args[i]
    if (isinstance(a, torch.Tensor) and a.dtype == dtype and tuple(a.shape) == tuple(shape)
            and a.is_contiguous() and (device is None or a.device == torch.device(device))
            and bases.count(bases[i]) == 1):
        return a
    return None
