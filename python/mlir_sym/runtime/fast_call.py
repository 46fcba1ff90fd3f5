"""The call Dynamo makes of a directly called artifact, as one generated Python function.

A call through the general path goes through four layers: the backend's wrapper (grad mode off, the
outputs' dynamic dims marked), the runner (guard misses and assertion errors), `Artifact.__call__`
(input sizes, the plan remembered for them, CUDA graphs) and `Artifact._run` (outputs allocated,
inputs made contiguous, the compute called), each looping over lists that never change for an
artifact. This module writes those steps out once per artifact, for the input kinds Dynamo passes
(tensor or int at each position, fixed by its guards) and the artifact's outputs:

    def call(a0, a1):
        plan = memo_get((a0, a1.shape[0]))
        if plan is None:
            return slow(a0, a1)
        variant, symvals, shapes = plan
        o0 = empty(shapes[0], dtype=D0, device=DEV)
        if not a1.is_contiguous(): a1 = a1.contiguous()
        values = [a0, a1, o0]
        stats.calls += 1; art.calls += 1; variant.calls += 1
        rc = variant.compute(values)          # grad mode off around it when it is on
        if rc != 0:
            raise fail(variant, rc)
        mark(o0, M0)
        return [o0]

A size tuple not planned yet takes the general path (`slow`, the layers above): its guards run
there, and a guard miss or a failed assert of the guard function is handled there; once planned,
the size's calls are the generated function's. A failed runtime check of the compute raises the
error the general path raises (`fail`), without running the call again (a graph that draws random
numbers would draw again). Artifacts with CUDA graphs, outputs that alias inputs or live on
another device, or inputs other than tensors and ints keep the general path.
"""
from __future__ import annotations

import itertools
import linecache
from typing import Any, Callable, Sequence

import torch

from mlir_sym.runtime.artifact import Artifact

_SERIAL = itertools.count()  # a file name of its own for each generated call (linecache)


def why_not(art: Artifact, kinds: Sequence[str]) -> str | None:
    """Why `art` gets no generated call for inputs of these kinds ("tensor" / "int" per position), or
    None."""
    if not isinstance(art, Artifact):
        return f"a {type(art).__name__} (count and fill phases)"
    if art.plan is None:
        return "no per-call plan as data"
    if art.graphs is not None:
        return "CUDA graphs (runtime/cuda_graphs.py) decide its calls"
    if getattr(art, "into", None):
        return "input mutations written in place (mutations.py)"
    if any(k not in ("tensor", "int") for k in kinds):
        return f"an input that is neither a tensor nor an int ({kinds})"
    device = torch.device(art.device).type if art.device is not None else "cpu"
    for o in art.outputs:
        if o.kind == "alias":
            return "an output is a view of an input or another output"
        if o.kind == "tensor" and o.device is not None and o.device != device:
            return f"an output on {o.device}, not the artifact's device"
        if o.kind not in ("tensor", "sym", "const", "none"):
            return f"an output of kind {o.kind}"
    if any(not (0 <= arg < len(kinds)) or (dim is not None and kinds[arg] != "tensor")
           for arg, dim in art.plan["sources"]):
        return "a size read from an input that is not a tensor"
    return None


def _compute_lines(disable_amp: bool) -> list[str]:
    """The compute's call with grad mode off when it is on (and autocast off, `disable_amp`)."""
    lines = ["if is_grad_enabled():",
             "    set_grad(False)",
             "    try:",
             "        rc = variant.compute(values)",
             "    finally:",
             "        set_grad(True)",
             "else:",
             "    rc = variant.compute(values)"]
    if disable_amp:
        return ["    with no_amp():"] + [" " * 8 + ln for ln in lines]
    return [" " * 4 + ln for ln in lines]


def generate(art: Artifact, kinds: Sequence[str], dynamic_dims: Sequence[tuple[int, set[int]]],
             slow: Callable, mark: Callable, stats: Any, fail: Callable[[Any, int], Exception],
             disable_amp: bool = False) -> Callable:
    """The generated call of `art` (see the module doc); `slow(*args)` is the general path, `mark` how
    this torch marks an output's dynamic dims, `stats` the backend's counters (`calls`), `fail(variant,
    status)` the exception of a failed runtime check; `disable_amp`: autocast off around the compute
    (a graph traced under autocast, as AOTAutograd's wrapper does)."""
    perms = art.input_perms or []
    args = [f"a{i}" for i in range(len(kinds))]  # as Dynamo passes them (the general path takes these)
    names = [f"p{i}" if i < len(perms) and perms[i] is not None else a for i, a in enumerate(args)]
    reads = [names[arg] if dim is None else f"{names[arg]}.shape[{dim}]" for arg, dim in art.plan["sources"]]
    key = f"({', '.join(reads)}{',' if len(reads) == 1 else ''})"
    ns: dict[str, Any] = {"art": art, "memo_get": art._memo.get, "slow": slow, "mark": mark, "stats": stats,
                          "empty": torch.empty, "DEV": art.device, "is_grad_enabled": torch.is_grad_enabled,
                          "set_grad": torch._C._set_grad_enabled, "derived": art.derived_fn, "fail": fail,
                          "no_amp": torch._C._DisableAutocast}
    body = [f"def call({', '.join(args)}):"]
    body += [f"    {n} = {a}.permute({tuple(perms[i])})" for i, (a, n) in enumerate(zip(args, names)) if n != a]
    body += [f"    plan = memo_get({key})",
             "    if plan is None:",
             f"        return slow({', '.join(args)})",
             "    variant, symvals, shapes = plan"]
    results: list[str] = []
    outs: list[str] = []
    for k, o in enumerate(art.outputs):
        if o.kind == "tensor":
            ns[f"D{k}"] = o.dtype
            body.append(f"    o{k} = empty(shapes[{k}], dtype=D{k}, device=DEV)")
            results.append(f"o{k}")
            outs.append(f"o{k}")
        elif o.kind == "sym":
            results.append(f"shapes[{k}]")
        elif o.kind == "const":
            ns[f"C{k}"] = o.const
            results.append(f"C{k}")
        else:
            results.append("None")
    values = []
    for n, kind in zip(names, kinds):
        if kind == "tensor":
            body.append(f"    if not {n}.is_contiguous(): {n} = {n}.contiguous()")
        values.append(n)
    tail = " + list(derived(*symvals))" if art.derived_fn is not None else ""
    body += [f"    values = [{', '.join(values + outs)}]" if not tail else
             f"    values = [{', '.join(values)}]{tail}" + (f" + [{', '.join(outs)}]" if outs else ""),
             "    stats.calls += 1",
             "    art.calls += 1",
             "    variant.calls += 1",
             *_compute_lines(disable_amp),
             "    if rc != 0:",
             "        raise fail(variant, rc)"]
    for i, dims in dynamic_dims:
        if art.outputs[i].kind == "tensor":
            ns[f"M{i}"] = set(dims)
            body.append(f"    mark(o{i}, M{i})")
    body.append(f"    return [{', '.join(results)}]")
    src = "\n".join(body) + "\n"
    filename = f"<mlir_sym call {art.name} #{next(_SERIAL)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)  # tracebacks show it
    exec(compile(src, filename, "exec"), ns)  # noqa: S102 - generated from the plan
    fn = ns["call"]
    fn.source = src  # type: ignore[attr-defined]
    return fn
