"""Rewrites of the aten FX graph that use symbolic sizes, run by the importer before torch-mlir.

`views_to_collapse_split`: torch-mlir lowers `aten.view`/`_unsafe_view`/`reshape` with several
dynamic dimensions by guessing (e.g. it casts [?, ?, 32] to [?, 1, 32] for a view to [s0*s1, 32],
which is wrong for s1 != 1). We know the sizes symbolically, so each dynamic view is split into
groups of input and output dims with equal symbolic products and rewritten as `aten.flatten` of each
many-to-one group (`prims.collapse`) followed by `aten.unflatten` of each one-to-many group,
which torch-mlir lowers to exact `collapse_shape`/`expand_shape`. A view whose groups cannot be proven is rejected with an
error naming the node, never guessed.
"""
from __future__ import annotations

import sympy
import torch
import torch.fx as fx

VIEW_TARGETS = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"}


class ViewRewriteError(RuntimeError):
    pass


def _sym(v) -> sympy.Basic:
    if isinstance(v, torch.SymInt):
        se = v.node.shape_env
        return se.replace(v.node.expr) if se is not None else v.node.expr
    return sympy.Integer(int(v))


def _divides(a: sympy.Basic, b: sympy.Basic) -> bool:
    """True when b / a is a polynomial in the symbols (a divides b for every symbol value)."""
    num, den = sympy.fraction(sympy.cancel(b / a))
    return den.is_number and bool(den == 1) or (den.is_number and (num / den).is_integer is True)


def group_dims(ins: list[sympy.Basic], outs: list[sympy.Basic]) -> list[tuple[list[int], list[int]]] | None:
    """Pair consecutive input and output dims into groups of equal symbolic product."""
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
        while sympy.simplify(pi - po) != 0:
            if _divides(po, pi) and j < len(outs):  # output side is still a factor: take more outputs
                po = po * outs[j]
                go.append(j)
                j += 1
            elif _divides(pi, po) and i < len(ins):
                pi = pi * ins[i]
                gi.append(i)
                i += 1
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


def views_to_collapse_split(graph: fx.Graph) -> int:
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
        groups = group_dims(ins, outs)
        if groups is None:
            where = (node.meta.get("stack_trace") or "").strip().splitlines()[-2:] or [node.name]
            raise ViewRewriteError(
                f"cannot prove the dimension grouping of view {node.name} from {ins} to {outs} "
                f"(at {' '.join(s.strip() for s in where)})")
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
            for k, (_, go) in reversed(list(enumerate(groups))):
                if len(go) > 1:
                    emit(torch.ops.aten.unflatten.int, k, [size_list[o] for o in go])
        node.replace_all_uses_with(cur)
        graph.erase_node(node)
        count += 1
    return count
