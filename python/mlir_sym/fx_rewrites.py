"""Rewrites of the aten FX graph that use symbolic sizes, run by the importer before torch-mlir.

`views_to_collapse_split`: torch-mlir lowers `aten.view`/`_unsafe_view`/`reshape` with several
dynamic dimensions by guessing (e.g. it casts [?, ?, 32] to [?, 1, 32] for a view to [s0*s1, 32],
which is wrong for s1 != 1). We know the sizes symbolically, so each dynamic view is split into
groups of input and output dims with equal symbolic products and rewritten as `aten.flatten` of each
many-to-one group (`prims.collapse`) followed by `aten.unflatten` of each one-to-many group,
which torch-mlir lowers to exact `collapse_shape`/`expand_shape`. Groups are proven symbolically, using
the ShapeEnv's facts (its guards and asserts, which the artifact checks at run time: e.g. `d % 4 == 0`
for a view of [b, s, d] as [b, s, 4, d // 4]), never guessed; a view whose finer groups cannot be
proven becomes one group (flatten everything, unflatten to the view's sizes), which is always exact.
A `-1` in the view's sizes is replaced by its explicit symbolic size (torch-mlir's unflatten
mis-lowers a dynamic -1: `x.view(-1).view(d, -1)` returned zeros).

`gathers_as_embedding`: torch-mlir lowers `index_select` and `x[i]` without bounds checks (an
out-of-range index read other memory), but checks `aten.embedding`'s indices per element (a
deferred check raising in Python; a device assert on the GPU, no synchronization). Gathers from a float
tensor of any rank are rewritten as embeddings of its rows (`x[...]` first wraps negative indices, as
eager does): index_select along any dim and `x[...]` with one index tensor at any dim take a table of
[n, -1] (a reshape; a transposed copy first when the dim is not the first), the embedding, then the
result's shape (the index's dims back in the gathered dim's place); `x[i, j, ...]` on the leading dims
gathers row `i * n1 + j ...` of the flattened leading dims, -1 (which the check rejects) where any
index is out of its own dim. Other advanced indexing (indices apart, integer tables) is unchanged.

`empty_concats`: torch-mlir's concat lowering drops the pieces that are statically empty along the
concat dim; when every piece is (`torch.cat([x[1:], x[1:]])` at a batch of 1, which Dynamo
specializes), it built a `tensor.concat` of no inputs, and the backend then aborted the process
(LLVM's "SmallVector unable to grow"). Such a concat is an empty copy of its first piece.

`flat_put_indices`: torch-mlir's `index_put` with index tensors of rank >= 2 broadcast the values
to a wrong shape when their trailing dims are static (values [b, t, 4] at an index [b, t] became
[b, 1, 4]: only each first column was put). An embedding's backward is such a put (accumulated), so
a training step's embedding gradient was wrong at every dynamic batch size; so was
`index_put((arange(b)[:, None], idx), h)`. The indices are expanded to their broadcast shape and
flattened to one dim, and the values (expanded first) to [numel, trailing dims].

`scatter_as_where`: `self.scatter(d, index, value)` whose index has one element along `d` and
self's sizes elsewhere writes one element per slice: it is `where(iota_d == index, value, self)`,
an elementwise op that fuses with its neighbours. Cross entropy's backward is such a scatter (a
one-hot [tokens, vocab] of -1 at the targets). torch-mlir made it a `tm_tensor.scatter` that no
pass could prove free of repeated indices, which ran in one GPU thread after a fill of the whole
tensor. Each index goes through an embedding of the positions, whose lowering checks it (eager's
scatter raises on an index out of range).

`all_infinite_as_extremum`: `(x == -inf).all(d)` (PyTorch's safe softmax, in every attention that
training differentiates in its math form: rows whose scores are all masked give 0) is
`x.amax(d) == -inf` (and `== inf` is `amin`), also for NaN (amax propagates it; NaN == -inf is
false, as is the `all`). The boolean `all` was a kernel of one thread per row reading the row with
a stride (49 us a layer of a training step, H200); the max is a row reduction like softmax's own,
which sibling fusion computes in the same launch.

`depthwise_conv3d_doubled`: torch-mlir cannot lower a 3-d convolution with one in and one out
channel per group (`nn.Conv3d(C, C, k, groups=C)`: "failed to legalize" with no op named), while it
lowers a channel multiplier of 2. Such a convolution becomes one with a zero filter after each
filter, whose even output channels are the result (twice the products; rare in models).

`nonnegative_dims`: torch-mlir's `convert-torch-to-tmtensor` crashed the process (a segmentation
fault, or "LLVM ERROR: out of memory") on `aten.scatter_add` with a negative dim, which the backward
of every `x.gather(-1, i)`, `sort(-1)` and `topk(dim=-1)` holds; the dim argument of scatters and
gathers is made non-negative first.

`sym_sums_as_adds`: `torch.sym_sum([a, b, ...])` (sizes that AOTAutograd adds up, e.g. in the
backward of a slice followed by views) has no mapping in torch-mlir's FX importer ("Unimplemented
call_function"); it becomes a chain of `operator.add`. `torch.sym_max` / `torch.sym_min` of two
sizes (`max(x.size(0), y.size(0))`, padding to the longer of two inputs) have none either; they become
`prim.max.int` / `prim.min.int`, which it imports and lowers to `arith.maxsi` / `arith.minsi`.

`empty_strided_as_empty`: torch-mlir decomposes `aten.new_empty_strided` / `aten.empty_strided` into
an empty tensor under a runtime assert that the strides are the default (contiguous) ones. PyTorch
allows any strides there, and AOTAutograd writes such a tensor as the destination of a `copy` in
backward graphs with the strides of the view it stands for (`x.t().clone()` then a slice assigned:
the backward's `new_empty_strided(grad, [n, m], [1, n])`), so the backward failed with "not all
strides are default" at every call. A copy's result is a value, whose strides mean nothing but to
`as_strided`: in a graph without one, each that is only a copy's destination becomes `new_empty` /
`empty` of the same sizes.

`splits_to_slices`: torch-mlir cannot lower `aten.split_with_sizes` whose sizes are not constants
(it fails on the list of sizes); each piece taken out of such a split is rewritten as `aten.slice`
between symbolic bounds, which it lowers exactly.
"""
from __future__ import annotations

import functools
import logging
import math
import operator
from typing import Callable

import sympy
import torch
import torch.fx as fx

try:
    from torch.utils._sympy.functions import Mod as _TorchMod  # the Mod that ShapeEnv facts are written with
except ImportError:  # pragma: no cover
    _TorchMod = sympy.Mod

log = logging.getLogger("mlir_sym.compile")

VIEW_TARGETS = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"}


class ViewRewriteError(RuntimeError):
    pass


def _sym(v) -> sympy.Basic:
    if isinstance(v, torch.SymInt):
        se = v.node.shape_env
        return se.replace(v.node.expr) if se is not None else v.node.expr
    return sympy.Integer(int(v))


def known_equal(a, b) -> bool:
    """Whether two sizes are equal for every input the graph admits: the same expression, or an
    equality the ShapeEnv holds as a fact (a guard or check, e.g. cross entropy's that the targets
    are as many as the logits' rows, when Dynamo gave them symbols of their own: inputs marked
    dynamic are not duck-sized)."""
    x, y = _sym(a), _sym(b)
    if x == y:
        return True
    se = next((v.node.shape_env for v in (a, b) if isinstance(v, torch.SymInt) and v.node.shape_env is not None), None)
    return _prover(se)(sympy.Eq(x, y))


def _known_positive(v) -> bool:
    """Whether a size is at least 1 for every input the graph admits: a positive number, or a symbol
    whose range starts at 1 (Dynamo's sizes start at 2; a data-dependent count at 0)."""
    if not isinstance(v, torch.SymInt):
        return int(v) > 0
    return _prover(v.node.shape_env)(sympy.Ge(_sym(v), 1))


def _divides(a: sympy.Basic, b: sympy.Basic) -> bool:
    """True when b / a is a polynomial in the symbols (a divides b for every symbol value)."""
    num, den = sympy.fraction(sympy.cancel(b / a))
    return den.is_number and bool(den == 1) or (den.is_number and (num / den).is_integer is True)


def _prover(shape_env) -> Callable[[sympy.Basic], bool]:
    """`known(rel)`: True when `rel` follows from the ShapeEnv's ranges and facts (guards/asserts)."""

    def known(rel: sympy.Basic) -> bool:
        if rel is sympy.true:
            return True
        if shape_env is None:
            return False
        try:
            r = shape_env._maybe_evaluate_static(rel)
        except Exception:  # noqa: BLE001 - a fact we cannot evaluate is not a known fact
            return False
        return r is not None and bool(r == sympy.true)

    return known


def _equal_fn(known: Callable[[sympy.Basic], bool]) -> Callable[[sympy.Basic, sympy.Basic], bool]:
    # Sizes here are products of symbols and integers: structural equality or expansion decides most
    # pairs (sympy.simplify cost about 5 ms a call, a second of a GPT-2 compile); the ShapeEnv's facts
    # decide the rest.
    return lambda a, b: a == b or sympy.expand(a - b) == 0 or known(sympy.Eq(a, b))


def _divides_fn(known: Callable[[sympy.Basic], bool]) -> Callable[[sympy.Basic, sympy.Basic], bool]:
    return lambda a, b: _divides(a, b) or known(sympy.Eq(_TorchMod(b, a), 0))


def group_dims(ins: list[sympy.Basic], outs: list[sympy.Basic], shape_env=None) -> list[tuple[list[int], list[int]]] | None:
    """Pair consecutive input and output dims into groups of equal symbolic product (equalities and
    divisibility proven from the polynomials, else from `shape_env`'s facts)."""
    known = _prover(shape_env)
    equal, divides = _equal_fn(known), _divides_fn(known)
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(ins) or j < len(outs):
        if i >= len(ins) or j >= len(outs):
            # leftover size-1 dims join the last group
            rest_in, rest_out = ins[i:], outs[j:]
            if not groups or any(d != 1 for d in rest_in + rest_out):
                return None
            groups[-1][0].extend(range(i, len(ins)))
            groups[-1][1].extend(range(j, len(outs)))
            break
        gi, go = [i], [j]
        pi, po = ins[i], outs[j]
        i, j = i + 1, j + 1
        while not equal(pi, po):
            if divides(po, pi) and j < len(outs):  # output side is still a factor: take more outputs
                po = po * outs[j]
                go.append(j)
                j += 1
            elif divides(pi, po) and i < len(ins):
                pi = pi * ins[i]
                gi.append(i)
                i += 1
            elif i < len(ins) and j < len(outs):  # e.g. [a, b] -> [b, a]: grow both sides
                pi, po = pi * ins[i], po * outs[j]
                gi.append(i)
                go.append(j)
                i, j = i + 1, j + 1
            else:
                return None
        # absorb size-1 dims that follow, on both sides
        while i < len(ins) and ins[i] == 1 and not (j < len(outs) and outs[j] == 1):
            gi.append(i)
            i += 1
        while j < len(outs) and outs[j] == 1 and not (i < len(ins) and ins[i] == 1):
            go.append(j)
            j += 1
        groups.append((gi, go))
    return groups


def _fake(a):
    return a.meta["val"] if isinstance(a, fx.Node) else a


def views_to_collapse_split(graph: fx.Graph, shape_env=None) -> int:
    """Rewrite dynamic views in place; returns how many were rewritten."""
    count = 0
    prims = torch.ops.prims
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in VIEW_TARGETS:
            continue
        src, sizes = node.args[0], node.args[1]
        in_val, out_val = src.meta.get("val"), node.meta.get("val")
        if not isinstance(in_val, torch.Tensor) or not isinstance(out_val, torch.Tensor):
            continue
        ins = [_sym(s) for s in in_val.shape]
        outs = [_sym(s) for s in out_val.shape]
        if all(e.is_Integer for e in ins + outs):
            continue  # static: torch-mlir's lowering is exact
        groups = group_dims(ins, outs, shape_env)
        if groups is None:
            # One group of every dim: flatten, then unflatten to the view's sizes. Always exact (a
            # view is a row-major reinterpretation, and tracing the view proved or guarded that
            # the element counts match); only less structured than finer groups.
            groups = [(list(range(len(ins))), list(range(len(outs))))]
        size_list = list(sizes)
        trace = node.meta.get("stack_trace")
        with graph.inserting_before(node):
            cur, cur_val = src, in_val

            def emit(target, *args):
                nonlocal cur, cur_val
                fake_args = [cur_val] + [[_fake(a) for a in x] if isinstance(x, list) else _fake(x) for x in args]
                cur = graph.call_function(target, (cur, *args))
                cur_val = target(*fake_args)
                cur.meta["val"] = cur_val
                cur.meta["stack_trace"] = trace

            # 1) collapse every multi-input group, right to left so indices stay valid
            for gi, _ in reversed(groups):
                if len(gi) > 1:
                    emit(prims.collapse.default, gi[0], gi[-1])
            # after step 1, group k sits at dim k; 2) expand multi-output groups, right to left
            for k, (gi, go) in reversed(list(enumerate(groups))):
                if len(go) > 1:
                    emit(torch.ops.aten.unflatten.int, k, _explicit_sizes(graph, src, in_val, gi,
                                                                          [size_list[o] for o in go], trace))
        if cur is not src:
            # the view's own value: its readers' values were computed from it. A dim the view's sizes
            # give as a number may be an expression there (`x.view(-1, 2, l)`: dim 1 is
            # `(b*c)//((b*c)//2)`), and a static dim here under a dynamic one downstream left
            # torch-mlir's conversion with an unresolved cast (a pool of such a view)
            cur.meta["val"] = out_val
        node.replace_all_uses_with(cur)
        graph.erase_node(node)
        count += 1
    return count


def _explicit_sizes(graph: fx.Graph, src: fx.Node, in_val: torch.Tensor, gi: list[int], sizes: list, trace) -> list:
    """The view's sizes for one group with its `-1` replaced by an explicit size: the product of the
    group's input dims divided by the other sizes (torch-mlir's unflatten mis-lowers a dynamic -1)."""
    if not any(_is_static(s) and int(s) == -1 for s in sizes):
        return sizes
    total = 1
    for d in gi:
        size = in_val.shape[d]
        if isinstance(size, torch.SymInt):
            size = graph.call_function(torch.ops.aten.sym_size.int, (src, d))
            size.meta["val"] = in_val.shape[d]
            size.meta["stack_trace"] = trace
        total = _sym_binop(graph, operator.mul, total, size, trace)
    known = 1
    for s in sizes:
        if not (_is_static(s) and int(s) == -1):
            known = _sym_binop(graph, operator.mul, known, s, trace)
    inferred = _sym_binop(graph, operator.floordiv, total, known, trace)
    return [inferred if _is_static(s) and int(s) == -1 else s for s in sizes]


def _sym_binop(graph: fx.Graph, op, a, b, trace):
    """`op(a, b)` for int/SymInt-node FX arguments: folded for ints and units, else a node."""
    if _is_static(a) and _is_static(b):
        return op(int(a), int(b))
    if op is operator.mul and _is_static(a) and int(a) == 1:
        return b
    if _is_static(b) and int(b) == 1 and op in (operator.mul, operator.floordiv):
        return a
    n = graph.call_function(op, (a, b))
    n.meta["val"] = op(_sym_val(a), _sym_val(b))
    n.meta["stack_trace"] = trace
    return n


SPLIT_TARGETS = {"aten.split_with_sizes.default", "aten.split.Tensor"}
_INT64_MAX = 2**63 - 1  # slice end "to the end", as PyTorch writes it


def _is_static(v) -> bool:
    return not isinstance(v, (fx.Node, torch.SymInt))


def splits_to_slices(graph: fx.Graph) -> int:
    """Rewrite each piece of a split with symbolic sizes as a slice; returns how many splits."""
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in SPLIT_TARGETS:
            continue
        src = node.args[0]
        in_val = src.meta.get("val") if isinstance(src, fx.Node) else None
        pieces = node.meta.get("val")
        if not isinstance(in_val, torch.Tensor) or not isinstance(pieces, (list, tuple)):
            continue
        dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
        dim = dim % in_val.dim() if in_val.dim() else 0
        if str(node.target) == "aten.split_with_sizes.default":
            sizes = list(node.args[1])
        else:  # split.Tensor: pieces of `split_size`, the last one up to the end
            sizes = [node.args[1]] * (len(pieces) - 1) + [None]
        if all(_is_static(s) for s in sizes):
            continue  # constant sizes: torch-mlir's lowering is exact
        users = list(node.users)
        if not all(u.op == "call_function" and u.target is operator.getitem for u in users):
            raise ViewRewriteError(f"split {node.name} is used other than by taking its pieces")
        trace = node.meta.get("stack_trace")
        starts: list = []
        with graph.inserting_before(node):
            acc = 0
            for k, size in enumerate(sizes):
                starts.append(acc)
                if k + 1 < len(sizes):
                    acc = _sym_add(graph, acc, size, trace)
        for u in users:
            k = u.args[1]
            size = sizes[k]
            with graph.inserting_before(u):
                end = _INT64_MAX if size is None else _sym_add(graph, starts[k], size, trace)
                sl = graph.call_function(torch.ops.aten.slice.Tensor, (src, dim, starts[k], end, 1))
            sl.meta["val"] = u.meta["val"]
            sl.meta["stack_trace"] = u.meta.get("stack_trace") or trace
            u.replace_all_uses_with(sl)
            graph.erase_node(u)
        graph.erase_node(node)
        count += 1
    graph.eliminate_dead_code()
    return count


def empty_concats(graph: fx.Graph) -> int:
    """Each `aten.cat` whose pieces all have a static 0 along the concat dim (and the result's rank):
    a copy of its first piece in the result's dtype (an empty tensor of the result's shape)."""
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) != "aten.cat.default":
            continue
        out = node.meta.get("val")
        pieces = list(node.args[0])
        vals = [_meta_val(p) for p in pieces]
        if not isinstance(out, torch.Tensor) or not pieces or not all(
                isinstance(v, torch.Tensor) and v.dim() == out.dim() for v in vals):
            continue
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
        dim = dim % out.dim() if out.dim() else 0
        if not all(_is_static(v.shape[dim]) and int(v.shape[dim]) == 0 for v in vals):
            continue
        e = Emitter(graph, node)
        copy = (e(torch.ops.aten.clone.default, pieces[0]) if vals[0].dtype == out.dtype
                else e(torch.ops.aten._to_copy.default, pieces[0], dtype=out.dtype))
        node.replace_all_uses_with(copy)
        graph.erase_node(node)
        count += 1
    return count


def flat_put_indices(graph: fx.Graph) -> int:
    """Each `aten.index_put` whose index tensors (integer, on the leading dims, no None) broadcast to
    a shape of rank >= 2: every index expanded to that shape and flattened, the values expanded to
    (that shape + the destination's other dims) and flattened to match."""
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) != "aten.index_put.default":
            continue
        dest, indices, values = node.args[0], list(node.args[1]), node.args[2]
        if not indices or not all(isinstance(i, fx.Node) for i in indices) or not isinstance(values, fx.Node):
            continue
        d, v, idxs = _meta_val(dest), _meta_val(values), [_meta_val(i) for i in indices]
        if not (isinstance(d, torch.Tensor) and isinstance(v, torch.Tensor)) or d.dim() < len(indices) or not all(
                isinstance(t, torch.Tensor) and t.dtype in (torch.int64, torch.int32) for t in idxs):
            continue
        rank = max(t.dim() for t in idxs)
        if rank < 2:
            continue
        e = Emitter(graph, node)
        # each broadcast dim's size, from an index whose dim (right-aligned) is not a static 1
        shape = []
        for k in range(rank):
            src = [(i, t.dim() - rank + k) for i, t in zip(indices, idxs) if t.dim() - rank + k >= 0]
            i, dd = next(((i, dd) for i, dd in src if not (_is_static(_meta_val(i).shape[dd])
                                                          and int(_meta_val(i).shape[dd]) == 1)), src[0])
            shape.append(e.size(i, dd))
        # always expanded, to the destination's trailing sizes: values whose trailing dims the
        # ShapeEnv equates with static ones may still be typed dynamic, and a reshape of them to a
        # static trailing size would not verify (collapse_shape of ?x?x? into ?x4)
        trailing = [e.size(dest, k) for k in range(len(indices), d.dim())]
        flat = []
        for i, t in zip(indices, idxs):
            if list(t.shape) != [_meta_val(x) if isinstance(x, fx.Node) else x for x in shape]:
                i = e(torch.ops.aten.expand.default, i, shape)
            flat.append(e(torch.ops.aten.reshape.default, i, [-1]))
        values = e(torch.ops.aten.expand.default, values, shape + trailing)
        flat_v = e(torch.ops.aten.reshape.default, values, [-1] + trailing)
        node.args = (dest, flat, flat_v, *node.args[3:])
        count += 1
    return count


def depthwise_conv3d_doubled(graph: fx.Graph) -> int:
    """Each 3-d `aten.convolution` (not transposed) with `groups` = in channels = out channels > 1 as
    one with a zero filter after each filter (out channels 2C), its even channels taken (the module
    doc). Returns how many."""
    aten = torch.ops.aten
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.convolution.default or node.kwargs:
            continue
        x, w, bias, stride, padding, dilation, transposed, out_pad, groups = node.args
        xv, wv = _meta_val(x), _meta_val(w)
        if transposed or not isinstance(groups, int) or groups < 2 or wv.dim() != 5 or not all(
                _is_static(d) for d in (wv.shape[0], wv.shape[1], xv.shape[1])):
            continue
        if not (int(wv.shape[0]) == groups and int(wv.shape[1]) == 1 and int(xv.shape[1]) == groups):
            continue
        e = Emitter(graph, node)
        w2 = e(aten.view.default, e(aten.stack.default, [w, e(aten.zeros_like.default, w)], 1),
               [2 * groups, 1, *wv.shape[2:]])
        b2 = None if bias is None else e(aten.view.default, e(aten.stack.default, [bias, e(aten.zeros_like.default, bias)], 1),
                                         [2 * groups])
        y2 = e(aten.convolution.default, x, w2, b2, stride, padding, dilation, transposed, out_pad, groups)
        out = e(aten.clone.default, e(aten.slice.Tensor, y2, 1, 0, 2 * groups, 2), memory_format=torch.contiguous_format)
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        count += 1
    return count


def _permutation(node: fx.Node) -> list[int] | None:
    """The dim order of an `aten.permute` / `aten.transpose.int` node (dims normalized), else None."""
    if node.op != "call_function" or not isinstance(node.meta.get("val"), torch.Tensor):
        return None
    rank = node.meta["val"].dim()
    if node.target is torch.ops.aten.permute.default:
        return [d % rank for d in node.args[1]] if rank else None
    if node.target is torch.ops.aten.transpose.int and rank:
        perm = list(range(rank))
        a, b = node.args[1] % rank, node.args[2] % rank
        perm[a], perm[b] = perm[b], perm[a]
        return perm
    return None


def composed_permutes(graph: fx.Graph) -> int:
    """A permute (or transpose) of a permute as one permute of the first's source, or that source
    itself when they cancel. Training attention reads q, k, v in PyTorch's fused kernels' [B, L, H, E]
    layout (attention.attention_forward): transposes of the user's [B, H, L, E] views of one
    projection, which would each be a copy kernel; composed, they are views of the projection.
    Returns how many nodes changed."""
    count = 0
    for node in list(graph.nodes):
        outer = _permutation(node)
        if outer is None or not isinstance(node.args[0], fx.Node):
            continue
        inner = _permutation(node.args[0])
        if inner is None or not isinstance(node.args[0].args[0], fx.Node):
            continue
        first = node.args[0]
        src = first.args[0]
        perm = [inner[d] for d in outer]
        if perm == list(range(len(perm))):
            node.replace_all_uses_with(src)
            graph.erase_node(node)
        else:
            node.target, node.args, node.kwargs = torch.ops.aten.permute.default, (src, perm), {}
        if not first.users:
            graph.erase_node(first)
        count += 1
    return count


def all_infinite_as_extremum(graph: fx.Graph) -> int:
    """Each `aten.all.dim(aten.eq.Scalar(x, ±inf), d, keepdim)` of a floating-point x becomes
    `aten.eq.Scalar(aten.amax/amin(x, [d], keepdim), ±inf)` (the module doc). Returns how many."""
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not torch.ops.aten.all.dim or node.kwargs:
            continue
        eq = node.args[0]
        if not (isinstance(eq, fx.Node) and eq.op == "call_function" and eq.target is torch.ops.aten.eq.Scalar
                and not eq.kwargs and isinstance(eq.args[1], float) and math.isinf(eq.args[1])):
            continue
        x = eq.args[0]
        xv = _meta_val(x)
        if not (isinstance(xv, torch.Tensor) and xv.dtype.is_floating_point and xv.dim() > 0):
            continue
        dim = node.args[1]
        size = xv.shape[dim] if isinstance(dim, int) else None
        if size is None or not _known_positive(size):
            continue  # a dim that may be empty: all() is true where amax raises (a data-dependent count)
        keep = bool(node.args[2]) if len(node.args) > 2 else False
        e = Emitter(graph, node)
        extremum = torch.ops.aten.amax.default if eq.args[1] < 0 else torch.ops.aten.amin.default
        out = e(torch.ops.aten.eq.Scalar, e(extremum, x, [dim], keep), eq.args[1])
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        if not eq.users:
            graph.erase_node(eq)
        count += 1
    return count


def scatter_as_where(graph: fx.Graph) -> int:
    """Each `aten.scatter.value` / `aten.scatter.src` whose index is [.., 1 at dim d, ..] with self's
    other sizes: `where(arange(size_d) (along d) == index, value, self)` (a src contributes its
    elements at position 0 along d). An index out of range raises IndexError, as eager's scatter
    raises (the scatter this replaces wrote past its row unchecked)."""
    count = 0
    for node in list(graph.nodes):
        target = str(node.target)
        if node.op != "call_function" or target not in ("aten.scatter.value", "aten.scatter.src") or node.kwargs:
            continue
        dest, dim, index, value = node.args[:4]
        d, idx = _meta_val(dest), _meta_val(index)
        if not (isinstance(d, torch.Tensor) and isinstance(idx, torch.Tensor)) or d.dim() == 0 or idx.dim() != d.dim():
            continue
        dim = dim % d.dim()
        if not (_is_static(idx.shape[dim]) and int(idx.shape[dim]) == 1):
            continue
        if not all(k == dim or known_equal(idx.shape[k], d.shape[k]) for k in range(d.dim())):
            log.debug("%s at %s stays a scatter: index %s, self %s", target, node.meta.get("stack_trace", "?"),
                      [_sym(s) for s in idx.shape], [_sym(s) for s in d.shape])
            continue
        e = Emitter(graph, node)
        if target == "aten.scatter.src":
            src = _meta_val(value)
            if not isinstance(src, torch.Tensor) or src.dim() != d.dim() or src.dtype != d.dtype or any(
                    k != dim and not known_equal(src.shape[k], d.shape[k]) for k in range(d.dim())):
                continue
            value = e(torch.ops.aten.slice.Tensor, value, dim, 0, 1)
        # the index through an embedding of the positions (a [size, 1] table of 0..size-1 in float64,
        # exact): its lowering checks every index (an IndexError; a device assert on the GPU, no
        # synchronization), as eager's scatter raises on one out of range; a kernel over the index only
        size = e.size(dest, dim)
        table = e(torch.ops.aten.unsqueeze.default,
                  e(torch.ops.aten.arange.default, size, dtype=torch.float64, device=d.device), 1)
        checked = e(torch.ops.aten.squeeze.dim, e(torch.ops.aten.embedding.default, table, index), -1)
        checked = e(torch.ops.prims.convert_element_type.default, checked, torch.int64)
        # the positions compared with it: an iota of their own, computed from the loop index where it is
        # read (the table's positions, read back as float64 at every element, halved the vector width
        # of cross entropy's backward kernel and added 8 bytes of loads an element)
        iota = e(torch.ops.aten.arange.default, size, dtype=torch.int64, device=d.device)
        for _ in range(d.dim() - 1 - dim):
            iota = e(torch.ops.aten.unsqueeze.default, iota, -1)
        hit = e(torch.ops.aten.eq.Tensor, iota, checked)
        if target == "aten.scatter.value":
            value = e(torch.ops.aten.scalar_tensor.default, value, dtype=d.dtype, device=d.device)
        out = e(torch.ops.aten.where.self, hit, value, dest)
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        count += 1
    return count


_DIM_OPS = {"aten.scatter.src", "aten.scatter.value", "aten.scatter.reduce", "aten.scatter.value_reduce",
            "aten.scatter_add.default", "aten.scatter_reduce.two", "aten.gather.default",
            "aten.index_add.default", "aten.index_copy.default", "aten.index_fill.int_Scalar",
            "aten.index_fill.int_Tensor", "aten.index_select.default"}


def nonnegative_dims(graph: fx.Graph) -> int:
    """The dim argument (the second) of scatters, gathers and index ops, made non-negative."""
    count = 0
    for node in graph.nodes:
        if node.op != "call_function" or str(node.target) not in _DIM_OPS or len(node.args) < 2:
            continue
        t, dim = _meta_val(node.args[0]), node.args[1]
        if isinstance(t, torch.Tensor) and isinstance(dim, int) and dim < 0 and t.dim() > 0:
            node.args = (node.args[0], dim % t.dim(), *node.args[2:])
            count += 1
    return count


_STRIDED_EMPTY = {"aten.new_empty_strided.default", "aten.empty_strided.default"}
_AS_STRIDED = {"aten.as_strided.default", "aten.as_strided_.default", "aten.as_strided_scatter.default",
               "aten.as_strided_copy.default"}


def empty_strided_as_empty(graph: fx.Graph) -> int:
    """Each `new_empty_strided(x, size, stride)` as `new_empty(x, size)` and `empty_strided(size,
    stride)` as `empty(size)` (the same dtype, device and layout) when it is only the destination of
    copies (`aten.copy`: their results are values), unless the graph reads memory through strides
    (`as_strided`)."""
    nodes = [n for n in graph.nodes if n.op == "call_function"]
    if any(str(n.target) in _AS_STRIDED for n in nodes):
        return 0
    count = 0
    for node in nodes:
        t = str(node.target)
        if t not in _STRIDED_EMPTY or not node.users or not all(
                str(u.target) == "aten.copy.default" and u.args[0] is node for u in node.users):
            continue  # only as a copy's destination: a tensor handed out keeps the strides it was made with
        kwargs = {k: v for k, v in node.kwargs.items() if k in ("dtype", "layout", "device", "pin_memory")}
        e = Emitter(graph, node)
        if t == "aten.new_empty_strided.default":
            new = e(torch.ops.aten.new_empty.default, node.args[0], node.args[1], **kwargs)
        else:
            new = e(torch.ops.aten.empty.memory_format, node.args[0], **kwargs)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        count += 1
    return count


def sym_sums_as_adds(graph: fx.Graph) -> int:
    """Each `torch.sym_sum(terms)` as `((t0 + t1) + t2) ...` (`_sym_add`: folded where static)."""
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not torch.sym_sum or len(node.args) != 1:
            continue
        terms = list(node.args[0])
        if not any(isinstance(t, fx.Node) for t in terms):
            continue
        trace = node.meta.get("stack_trace")
        with graph.inserting_before(node):
            acc = 0
            for t in terms:
                acc = _sym_add(graph, acc, t, trace)
        node.replace_all_uses_with(acc)
        graph.erase_node(node)
        count += 1
    for node in list(graph.nodes):
        prim = _SYM_EXTREMA.get(node.target) if node.op == "call_function" else None
        if prim is None or len(node.args) != 2 or node.kwargs:
            continue
        if not all(isinstance(_sym_val(a), (int, torch.SymInt)) for a in node.args):
            continue  # SymFloats: no int extremum
        node.target = prim
        count += 1
    return count


_SYM_EXTREMA = {torch.sym_max: torch.ops.prim.max.int, torch.sym_min: torch.ops.prim.min.int}


def _sym_val(v):
    return v.meta["val"] if isinstance(v, fx.Node) else v


def _sym_add(graph: fx.Graph, a, b, trace):
    """`a + b` for int/SymInt-node FX arguments: folded for ints, else an `operator.add` node."""
    if _is_static(a) and _is_static(b):
        return int(a) + int(b)
    if _is_static(a) and int(a) == 0:
        return b
    if _is_static(b) and int(b) == 0:
        return a
    n = graph.call_function(operator.add, (a, b))
    n.meta["val"] = _sym_val(a) + _sym_val(b)
    n.meta["stack_trace"] = trace
    return n


def as_strided_to_views(graph: fx.Graph, shape_env=None) -> int:
    """`aten.as_strided(x, size, stride, 0)` that only reinterprets a contiguous `x` with the
    contiguous strides of `size` (same element count) is a view: rewrite it as `aten.view`, which
    `views_to_collapse_split` then lowers exactly (torch-mlir imports as_strided with static sizes
    only). Others are left alone (and fail to import with an error naming the node)."""
    known = _prover(shape_env)
    equal = _equal_fn(known)
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) != "aten.as_strided.default":
            continue
        src, size = node.args[0], node.args[1]  # strides: read from the node's value (meta) below
        offset = node.args[3] if len(node.args) > 3 else node.kwargs.get("storage_offset")
        in_val, out_val = _fake(src), node.meta.get("val")
        if not isinstance(in_val, torch.Tensor) or not isinstance(out_val, torch.Tensor):
            continue
        if offset is not None and not (_is_static(offset) and int(offset) == 0):
            continue
        if not isinstance(in_val, torch.Tensor) or _sym(in_val.storage_offset()) != 0:
            continue
        ins = [_sym(s) for s in in_val.shape]
        outs = [_sym(s) for s in out_val.shape]
        want = [_sym(s) for s in out_val.stride()]
        if not (_contiguous(ins, [_sym(s) for s in in_val.stride()], equal) and _contiguous(outs, want, equal)):
            continue
        if not equal(sympy.Mul(*ins), sympy.Mul(*outs)):
            continue
        with graph.inserting_before(node):
            view = graph.call_function(torch.ops.aten.view.default, (src, list(size)))
        view.meta.update(node.meta)
        node.replace_all_uses_with(view)
        graph.erase_node(node)
        count += 1
    return count


def _hint(v) -> int:
    """A size's value at the example inputs (0 when unknown: such a dim is not ordered before others)."""
    if not isinstance(v, torch.SymInt):
        return int(v)
    hint = v.node.hint
    return int(hint) if hint is not None else 0


def permuted_inputs(graph: fx.Graph, shape_env=None) -> list[list[int] | None]:
    """Inputs laid out as a permutation of a contiguous tensor (the `weight.t()` each linear layer's
    forward saves for its backward, which AOTAutograd hands over as that view) are taken as that
    contiguous tensor: the placeholder becomes `x.permute(order)` (dims by decreasing stride) and its
    readers read `aten.permute` of it back. The runtime passes that view of the argument, no copy (it
    copied every such input to a contiguous one before: 17 copies a training step of a 4-layer
    model), and the compiler sees a transpose of an argument, which a matmul reads as a transposed
    operand. Returns each placeholder's order, or None where it is taken as it is."""
    equal = _equal_fn(_prover(shape_env))
    orders: list[list[int] | None] = []
    for ph in [n for n in graph.nodes if n.op == "placeholder"]:
        val = ph.meta.get("val")
        orders.append(None)
        if not isinstance(val, torch.Tensor) or val.dim() < 2 or val.layout != torch.strided:
            continue
        shape, strides = [_sym(s) for s in val.shape], [_sym(s) for s in val.stride()]
        if _contiguous(shape, strides, equal):
            continue
        hints = [_hint(s) for s in val.stride()]
        order = sorted(range(val.dim()), key=lambda d: -hints[d])
        if order == list(range(val.dim())) or not _contiguous([shape[d] for d in order], [strides[d] for d in order], equal):
            continue
        back = [order.index(d) for d in range(val.dim())]
        with graph.inserting_after(ph):
            view = graph.call_function(torch.ops.aten.permute.default, (ph, back))
        ph.replace_all_uses_with(view, delete_user_cb=lambda u: u is not view)
        view.meta["val"] = val
        ph.meta["val"] = val.permute(order)
        ph.meta.pop("tensor_meta", None)
        orders[-1] = order
    return orders


def _contiguous(shape: list, strides: list, equal) -> bool:
    expect = sympy.Integer(1)
    for size, stride in reversed(list(zip(shape, strides))):
        if not (size == 1 or equal(stride, expect)):  # a size-1 dim's stride does not matter
            return False
        expect = expect * size
    return True



# aten ops that are another aten op under another name, which torch-mlir only knows by the other
# name (Dynamo's tensorified float scalars produce `true_divide`: `x / math.sqrt(x.shape[-1])`).
OP_ALIASES = {
    # every sort we run is stable (sort_to_merge's merge sort, torch.sort(stable=True) on the GPU)
    "aten.sort.stable": torch.ops.aten.sort.default,
    "aten.true_divide.Tensor": torch.ops.aten.div.Tensor,
    "aten.true_divide.Scalar": torch.ops.aten.div.Scalar,
    "prims.scalar_tensor.default": torch.ops.aten.scalar_tensor.default,  # xlogy(x, 0.7)'s decomposition
}


def op_aliases(graph: fx.Graph) -> int:
    count = 0
    for node in graph.nodes:
        if node.op == "call_function" and str(node.target) in OP_ALIASES:
            node.target = OP_ALIASES[str(node.target)]
            node.kwargs = {k: v for k, v in node.kwargs.items() if k != "stable"}
            count += 1
    return count


def device_puts_within(graph: fx.Graph, device_type: str) -> int:
    """`prims.device_put(x, d)` (`x.to(d)`) where `d` is the device the graph computes on is `x`:
    the compute has one device, and a tensor the graph makes on another (HF's static cache makes a
    CPU counter and moves it, `self.cumulative_length.to(self.device)`; torch-mlir's import reads every
    tensor as the graph's own) is made there, and CPU scalar inputs are moved there by the runtime.
    Where the moved tensor is an output it becomes a clone that keeps the move's metadata (the output
    is made on `d`, not on the device `x` was made on). A move to another device (`.cpu()` on the GPU
    path, another GPU's index than the inputs') stays, refused by name."""
    indices = {v.device.index for n in graph.nodes if n.op == "placeholder"
               for v in [n.meta.get("val")] if isinstance(v, torch.Tensor) and v.device.type == device_type}
    count = 0
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.ops.prims.device_put.default:
            dev = torch.device(node.args[1] if len(node.args) > 1 else node.kwargs.get("device"))
            if dev.type != device_type or (dev.index is not None and indices and indices != {dev.index}):
                continue
            src = node.args[0]
            for user in list(node.users):
                if user.op == "output":
                    with graph.inserting_before(node):
                        clone = graph.call_function(torch.ops.aten.clone.default, (src,))
                    clone.meta = dict(node.meta)
                    user.replace_input_with(node, clone)
            node.replace_all_uses_with(src)
            graph.erase_node(node)
            count += 1
    return count


_COMMUTATIVE = {"aten.add.Tensor", "aten.mul.Tensor"}


def scalar_first_operands(graph: fx.Graph) -> int:
    """`aten.sub.Tensor(n, t)` with a size `n` (a SymInt node, as decompositions of reflection padding
    write `(size - 1) - |i|`) does not verify in torch-mlir (operand #0 must be a tensor): it becomes
    `aten.rsub.Scalar(t, n)`; an add or mul with the scalar first swaps its operands (`n + alpha * t`
    becomes `(t * alpha) + n`)."""
    count = 0
    for node in graph.nodes:
        t = str(node.target)
        if node.op != "call_function" or t not in _COMMUTATIVE | {"aten.sub.Tensor"} or len(node.args) != 2:
            continue
        a, b = node.args
        if isinstance(_meta_val(a), torch.Tensor) or not isinstance(_meta_val(b), torch.Tensor):
            continue
        if t == "aten.add.Tensor" and node.kwargs.get("alpha", 1) != 1:  # n + alpha * t = (alpha * t) + n
            e = Emitter(graph, node)
            node.args = (e(torch.ops.aten.mul.Tensor, b, node.kwargs["alpha"]), a)
            node.kwargs = {k: v for k, v in node.kwargs.items() if k != "alpha"}
            count += 1
            continue
        if t == "aten.sub.Tensor":
            node.target = torch.ops.aten.rsub.Scalar  # rsub(t, n, alpha) = n - alpha * t
        node.args = (b, a)
        count += 1
    return count


def _gather_form(node: fx.Node) -> tuple[fx.Node, int, list[fx.Node], bool] | None:
    """(x, first gathered dim, index tensors, negative indices wrap) of an index_select or an
    `x[...]` with one advanced index (at any dim) or several on the leading dims; None otherwise."""
    t = str(node.target)
    if t == "aten.index_select.default" and len(node.args) == 3 and isinstance(node.args[1], int):
        return node.args[0], node.args[1], [node.args[2]], False
    if t != "aten.index.Tensor" or len(node.args) != 2:
        return None
    idx = list(node.args[1])
    used = [k for k, i in enumerate(idx) if i is not None]
    if len(used) == 1:
        return node.args[0], used[0], [idx[used[0]]], True
    if used and used == list(range(len(used))) and len(used) == len(idx):
        return node.args[0], 0, idx, True
    return None


def gathers_as_embedding(graph: fx.Graph) -> int:
    aten = torch.ops.aten
    count = 0
    for node in list(graph.nodes):
        form = _gather_form(node) if node.op == "call_function" else None
        if form is None:
            continue
        x, dim, idxs, wrap = form
        xv = x.meta.get("val") if isinstance(x, fx.Node) else None
        ivs = [i.meta.get("val") if isinstance(i, fx.Node) else None for i in idxs]
        if not (isinstance(xv, torch.Tensor) and xv.dim() >= len(idxs) and xv.dtype.is_floating_point
                and all(isinstance(v, torch.Tensor) and v.dtype in (torch.int64, torch.int32) for v in ivs)):
            continue
        rank, k = xv.dim(), len(idxs)
        dim %= rank
        gathered = list(range(dim, dim + k))
        if any(isinstance(d, int) and d == 0 for d in xv.shape):
            continue  # nothing to read, and a [n, -1] table would be ambiguous

        e = Emitter(graph, node)

        def add(target, args):
            return e(target, *args)

        size, mul = e.size, functools.partial(e.scalar, operator.mul)

        rows = size(x, dim)
        if wrap:  # x[i] takes -n <= i < 0 as i + n
            for j, i in enumerate(idxs):
                n = size(x, dim + j)
                idxs[j] = add(aten.where.self, (add(aten.lt.Scalar, (i, 0)), add(aten.add.Tensor, (i, n)), i))
        idx = idxs[0]
        if k > 1:  # x[i, j]: one row index into the leading dims; any index out of its dim -> -1
            ok = None
            for j, i in enumerate(idxs):
                n = size(x, j)
                inside = add(aten.bitwise_and.Tensor, (add(aten.ge.Scalar, (i, 0)), add(aten.lt.Scalar, (i, n))))
                ok = inside if ok is None else add(aten.bitwise_and.Tensor, (ok, inside))
                if j:
                    rows = mul(rows, n)
                    idx = add(aten.add.Tensor, (add(aten.mul.Tensor, (idx, n)), i))
            idx = add(aten.where.self, (ok, idx, add(aten.full_like.default, (idx, -1))))
        table = x
        order = gathered + [d for d in range(rank) if d not in gathered]
        if dim != 0:  # the gathered dim first (a transposed copy): rows of the table
            table = add(aten.permute.default, (x, order))
        rest = [size(x, d) for d in order[k:]]
        if rank != 2 or k != 1 or dim != 0:
            table = add(aten.reshape.default, (table, [rows, -1] if rest else [rows, 1]))
        out = add(aten.embedding.default, (table, idx))
        r = idx.meta["val"].dim()
        if rank != 2 or k != 1 or dim != 0:
            out = add(aten.reshape.default, (out, [size(idx, d) for d in range(r)] + rest))
        if dim != 0:  # the index's dims in the gathered dim's place
            out = add(aten.permute.default, (out, list(range(r, r + dim)) + list(range(r)) +
                                              list(range(r + dim, r + rank - k))))
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        count += 1
    return count


def _meta_val(a):
    return a.meta["val"] if isinstance(a, fx.Node) else a


class Emitter:
    """Adds nodes before `at`, each with the fake value of what it computes, found by running the op
    on its arguments' fake values in the graph's fake mode (no tracing), and with `at`'s stack trace
    and module stack (locations in MLIR)."""

    def __init__(self, graph: fx.Graph, at: fx.Node) -> None:
        self.graph, self.at = graph, at
        self.meta = {k: v for k, v in at.meta.items() if k in ("stack_trace", "nn_module_stack")}
        self.mode = next((t.fake_mode for t in torch.utils._pytree.tree_leaves(at.meta.get("val"))
                          if hasattr(t, "fake_mode")), None)

    def _add(self, target, args: tuple, kwargs: dict, val) -> fx.Node:
        with self.graph.inserting_before(self.at):
            n = self.graph.call_function(target, args, kwargs)
        n.meta["val"] = val
        n.meta.update(self.meta)
        return n

    def __call__(self, target, *args, **kwargs) -> fx.Node:
        """A tensor op. A factory on CUDA names the CPU in its node, as gpu_compile._factories_on_cpu does
        for the graph's own (torch-mlir refuses other devices; buffers are the runtime's business)."""
        vals, kvals = fx.node.map_arg((args, kwargs), _meta_val)
        mode = next((t.fake_mode for t in torch.utils._pytree.tree_leaves(vals) if hasattr(t, "fake_mode")), self.mode)
        with mode:
            val = target(*vals, **kvals)
        node_kwargs = dict(kwargs)
        if isinstance(kwargs.get("device"), torch.device) and kwargs["device"].type == "cuda":
            node_kwargs["device"] = torch.device("cpu")
        return self._add(target, tuple(args), node_kwargs, val)

    def scalar(self, fn, *args):
        """Python scalar arithmetic (SymInt/SymFloat) on size nodes; folded when every argument is a number."""
        if not any(isinstance(a, fx.Node) for a in args):
            return fn(*args)
        return self._add(fn, tuple(args), {}, fn(*[_meta_val(a) for a in args]))

    def size(self, t: fx.Node, d: int):
        """Dim `d` of `t`: an int when static, else an `aten.sym_size` node."""
        s = t.meta["val"].shape[d]
        if not isinstance(s, torch.SymInt):
            return int(s)
        return self._add(torch.ops.aten.sym_size.int, (t, d), {}, s)


def var_mean_in_float(graph: fx.Graph, corrected: bool = False) -> int:
    """`var_mean(x, dims, correction=0, keepdim=True)` (layer and group norm) as mean, then the mean of
    squared deviations, in float32 (half inputs converted first, results converted back): what PyTorch
    computes in its float accumulation type. torch-mlir's lowering computes it in float64, which
    costs a GPU kernel twice the arithmetic and registers for no accuracy the eager result has.

    `corrected` (the CPU path, whose loops sum a row in order): the mean m0 gets the mean c of the
    deviations from it added (the corrected two-pass algorithm: mean = m0 + c, var = mean((x - m0)^2)
    - c^2). A row summed in order is off by up to n roundings, and a layer norm of a constant row
    (eager: exactly 0, its Welford mean exact) gave (x - m0) * rsqrt(eps) = up to 3e-2 at 127
    floats; with the correction such a row's mean is exact. The GPU's tree reductions are off by
    log2(n) roundings, and the extra reduction there is not measured yet."""
    aten, prims = torch.ops.aten, torch.ops.prims
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) != "aten.var_mean.correction":
            continue
        x = node.args[0]
        dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        if node.kwargs.get("correction", 1) != 0 or not node.kwargs.get("keepdim", False) or not dims:
            continue
        xv = x.meta.get("val") if isinstance(x, fx.Node) else None
        users = list(node.users)
        if not isinstance(xv, torch.Tensor) or not xv.dtype.is_floating_point or xv.dtype == torch.float64 \
                or not all(u.op == "call_function" and u.target is operator.getitem for u in users):
            continue
        half = xv.dtype in (torch.bfloat16, torch.float16)

        e = Emitter(graph, node)
        xf = e(prims.convert_element_type.default, x, torch.float32) if half else x
        mean = e(aten.mean.dim, xf, list(dims), True)
        dev = e(aten.sub.Tensor, xf, mean)
        var = e(aten.mean.dim, e(aten.mul.Tensor, dev, dev), list(dims), True)
        if corrected:
            c = e(aten.mean.dim, dev, list(dims), True)
            mean = e(aten.add.Tensor, mean, c)
            var = e(aten.sub.Tensor, var, e(aten.mul.Tensor, c, c))
        if half:
            var = e(prims.convert_element_type.default, var, xv.dtype)
            mean = e(prims.convert_element_type.default, mean, xv.dtype)
        for u in users:
            u.replace_all_uses_with(var if u.args[1] == 0 else mean)
            graph.erase_node(u)
        graph.erase_node(node)
        count += 1
    return count
