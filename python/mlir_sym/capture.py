"""From an AOTAutograd graph (with its ShapeEnv) to a compiled CPU artifact.

import (importer.py) -> split guards / compute (pipelines.py) -> lower both -> one JIT module
(runtime/cpu.py) -> Artifact (runtime/artifact.py).
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import sympy
import torch
import torch.fx as fx
from torch_mlir import ir

from mlir_sym import shapes, timing
from mlir_sym.importer import PREV, AliasPlan, ImportedGraph, SymArg, UnsupportedGraph, import_graph
from mlir_sym.passes.sym_to_arith import lowered_check_table
from mlir_sym.passes.registry import build_pipeline
from mlir_sym.pipelines import LoweringError, run_named, split_guards, unsupported_ops
from mlir_sym.runtime.artifact import Artifact, OutputPlan, Variant
from mlir_sym.runtime.cpu import ComputeCall, JitModule, ScalarCall

log = logging.getLogger("mlir_sym.compile")
guard_log = logging.getLogger("mlir_sym.guards")


class UnsupportedOpError(RuntimeError):
    """The graph contains an op we cannot lower; names the op and its Python source line."""


@dataclass
class CompileStats:
    import_s: float = 0.0
    lower_s: float = 0.0
    jit_s: float = 0.0
    guards_before: int = 0
    extra: dict = field(default_factory=dict)


def compile_graph(
    gm: fx.GraphModule,
    *,
    name: str = "main",
    specializations: Sequence[dict[str, int]] = (),
    specialize_hints: bool = False,
) -> tuple[Artifact, ImportedGraph, CompileStats]:
    """Compile `gm` into an artifact: one variant per entry of `specializations` (symbol -> value,
    applied by `sym-specialize` under a guard), tried first, then the generic variant.
    `specialize_hints` adds a variant for the sizes seen while tracing (every symbol at its hint)."""
    stats = CompileStats()
    t0 = time.perf_counter()
    with timing.phase("import"):
        ig = import_graph(gm, func_name=name)
    stats.import_s = time.perf_counter() - t0
    log.info("imported graph %s:\n%s", name, ig.module)

    check_supported(ig)
    source_ir = ig.module.operation.get_asm(large_elements_limit=16)
    variants = compile_variants(ig, name, variant_specs(ig, specializations, specialize_hints),
                                lambda spec: _compile_variant(ig, name, spec, stats))
    artifact = build_artifact(ig, name, variants, source_ir, stats)
    log.info("compiled %s (%d variants): import %.3fs, lower %.3fs, jit %.3fs", name, len(variants),
             stats.import_s, stats.lower_s, stats.jit_s)
    return artifact, ig, stats


def _hints(ig: ImportedGraph) -> dict[str, int]:
    se = ig.shape_env
    table = getattr(se, "backed_var_to_val", None) or getattr(se, "var_to_val", {}) if se is not None else {}
    out = {}
    for name in ig.symbols:
        v = table.get(sympy.Symbol(name, integer=True, positive=True)) or next(
            (val for k, val in table.items() if getattr(k, "name", None) == name), None)
        if v is not None and sympy.sympify(v).is_Integer:
            out[name] = int(v)
    return out


def build_artifact(ig: ImportedGraph, name: str, variants: Sequence[Variant], source_ir: str,
                   stats: CompileStats, device=None) -> Artifact:
    """The artifact over compiled `variants` (CPU or GPU): the per-call plan from the imported graph,
    plus the explain log of each variant's checks."""
    artifact = artifact_from_plan(artifact_plan(ig, name), variants, device)
    for plan, o in zip(artifact.outputs, ig.outputs):  # views of inputs/outputs: replayed, not planned as data
        if o.kind == "alias":
            plan.base, plan.replay = o.expr.base, _replayer(o.expr, ig.symbols)
    artifact.source_ir = source_ir  # the imported module (torch + sym), for explain/demo output
    if guard_log.isEnabledFor(logging.INFO):
        for v in variants:
            lines = [f"  {i:3d} {kind:6s} {text}    [{origin}]" for i, (kind, text, origin) in enumerate(v.checks, 1)]
            guard_log.info("graph %s, variant %s: %d checks (%d guards, %d asserts), symbols %s\n%s", name, v.name,
                           len(v.checks), sum(c[0] == "guard" for c in v.checks),
                           sum(c[0] == "assert" for c in v.checks), ", ".join(ig.symbols), "\n".join(lines))
    stats.guards_before = sum(1 for c in artifact.checks if c[0] != "bind")
    return artifact


def artifact_plan(ig: ImportedGraph, name: str) -> dict:
    """The per-call plan of an artifact as JSON-able data: where each input size is read, which source
    holds each symbol, the output sizes and derived float scalars as Python expressions of the
    symbols, and each output's kind. `artifact_from_plan` turns it (with compiled variants) into an
    Artifact; the artifact cache stores it. Alias outputs and constants that are not plain values
    make `plan["storable"]` false (their replay is code, not data)."""
    from torch.utils._sympy.printers import PythonPrinter

    printer = PythonPrinter()
    exprs: list = []
    outputs: list[dict] = []
    storable = True
    for o in ig.outputs:
        d: dict = {"kind": o.kind}
        if o.kind == "tensor":
            d.update(dtype=str(o.dtype).removeprefix("torch."), size_slice=[len(exprs), len(exprs) + len(o.shape)],
                     device=o.device)
            exprs.extend(o.shape)
        elif o.kind == "sym":
            d["index"] = len(exprs)
            exprs.append(o.expr)
        elif o.kind == "const":
            d["const"] = o.expr
            storable &= o.expr is None or type(o.expr) in (bool, int, float, str)
        elif o.kind == "alias":
            d["dtype"] = str(o.dtype).removeprefix("torch.") if o.dtype is not None else None
            storable = False
        outputs.append(d)
    return {
        "name": name,
        "symbols": list(ig.symbols),
        "sources": [[s.arg, s.dim] for s in ig.sources],
        "symbol_from_source": _solve_symbols(ig),
        "sizes": [printer.doprint(sympy.sympify(e)) for e in exprs],
        "derived": [printer.doprint(e) for e in ig.derived] if getattr(ig, "derived", None) else [],
        "outputs": outputs,
        "storable": storable,
        "input_perms": list(getattr(ig, "input_perms", None) or []),
    }


def artifact_from_plan(plan: dict, variants: Sequence[Variant], device=None) -> Artifact:
    """An Artifact over `variants` from `artifact_plan`'s data (alias outputs get their replay from the
    caller)."""
    outputs = []
    for d in plan["outputs"]:
        dtype = getattr(torch, d["dtype"]) if d.get("dtype") else None
        outputs.append(OutputPlan(d["kind"], dtype, tuple(d.get("size_slice", (0, 0))), d.get("index", -1),
                                  d.get("const"), device=d.get("device")))
    artifact = Artifact(
        name=plan["name"],
        variants=variants,
        read_sources=_source_reader(plan["sources"]),
        symbol_from_source=plan["symbol_from_source"],
        sizes_fn=_python_fn("_sizes", plan["symbols"], plan["sizes"], "") if plan["sizes"] else (lambda *a: ()),
        outputs=outputs,
        device=device,
    )
    if plan["derived"]:  # float scalars computed from sizes: trailing compute inputs
        artifact.derived_fn = _python_fn("_derived", plan["symbols"], plan["derived"], "float")
    if any(plan.get("input_perms") or ()):
        artifact.input_perms = [tuple(p) if p is not None else None for p in plan["input_perms"]]
    artifact.plan = plan
    return artifact


def check_supported(ig: ImportedGraph) -> None:
    """Reject ops torch-mlir imported as opaque `torch.operator`, naming the op and the user's line."""
    bad = unsupported_ops(ig.module)
    if bad:
        op, loc = bad[0]
        where = getattr(ig, "op_sources", {}).get(op.removeprefix("torch."), _pretty_loc(loc))
        raise UnsupportedOpError(f"unsupported op '{op}' at {where}: mlir_sym cannot lower it "
                                 f"(set mlir_sym.config.fallback_to_eager = True to run such graphs eagerly)")


def variant_specs(ig: ImportedGraph, specializations: Sequence[dict[str, int]], specialize_hints: bool
                  ) -> list[dict[str, int]]:
    """The specializations to compile, in dispatch order; the generic variant ({}) last."""
    specs = [dict(s) for s in specializations if s]
    if specialize_hints:
        hints = _hints(ig)
        if hints:
            specs.append(hints)
    return specs + [{}]


def compile_variants(ig: ImportedGraph, name: str, specs: list[dict[str, int]],
                     compile_one: Callable[[dict[str, int]], Variant]) -> list[Variant]:
    """`compile_one` of each spec, in `variant_specs`' order (the generic variant, `{}`, last). The
    generic variant is compiled first and its failure raised: then no specialized variant is tried
    (a graph with a data-dependent size goes to datadep.py's count/fill phases, and a warning that
    the generic variant serves the specialized sizes would be wrong). A specialized variant that
    does not lower is left out with a warning, the generic one serving its sizes too: it is a fast
    path, not needed for correctness."""
    generic = compile_one({}) if {} in specs else None
    out = []
    for spec in specs:
        if not spec:
            out.append(generic)
            continue
        try:
            out.append(compile_one(spec))
        except (UnsupportedOpError, LoweringError) as e:
            lines = [x.strip() for x in str(e).splitlines() if x.strip()]
            log.warning("mlir_sym: graph %s: the variant specialized to %s does not lower; the generic "
                        "variant serves those sizes (%s)", name, spec, " ".join(lines[:2])[:400])
            log.debug("mlir_sym: graph %s: the specialized variant's error in full:\n%s", name, e)
    return out


def variant_modules(ig: ImportedGraph, spec: dict[str, int]) -> tuple[str, ir.Module, ir.Module]:
    """(label, guards module, compute module) of one variant: the imported module, specialized by
    `sym-specialize` under a guard when `spec` names symbols, split into its two parts. Shared by the
    CPU and GPU compilers."""
    ctx = ig.context
    module = ig.module
    label = ",".join(f"{k}={v}" for k, v in spec.items()) or "generic"
    if spec:
        with ctx:
            module = ir.Module.parse(ig.module.operation.get_asm(enable_debug_info=True))
        values = ",".join(f"{k}:{v}" for k, v in spec.items())
        build_pipeline(f"builtin.module(sym-specialize{{values={values}}})", context=ctx).run(module)
    guards_mod, compute_mod = split_guards(module, ctx)
    return label, guards_mod, compute_mod


def torch_to_linalg(ig: ImportedGraph, compute_mod: ir.Module, specialized: bool = False) -> None:
    """torch dialect -> linalg on tensors; a variant `specialized` to sizes has its shapes refined
    before the lowering (pipelines.py, "torch-to-linalg-specialized")."""
    try:
        run_named("torch-to-linalg-specialized" if specialized else "torch-to-linalg", compute_mod, ig.context)
    except LoweringError as e:
        raise UnsupportedOpError(_explain_lowering_failure(str(e), getattr(ig, "op_sources", None),
                                                           _constant_users(compute_mod))) from None


def _compile_variant(ig: ImportedGraph, name: str, spec: dict[str, int], stats: CompileStats) -> Variant:
    ctx = ig.context
    label, guards_mod, compute_mod = variant_modules(ig, spec)
    t1 = time.perf_counter()
    with ctx:
        with timing.phase("torch-to-linalg"):
            torch_to_linalg(ig, compute_mod, specialized=bool(spec))
        main = _func(compute_mod, name)
        arg_types = list(ir.FunctionType(ir.TypeAttr(main.operation.attributes["function_type"]).value).inputs)
        with timing.phase("cpu-compute-pipeline"):
            run_named(cpu_compute_pipeline(), compute_mod, ctx)
        assert_msgs = _assert_msgs(compute_mod, name)
        run_named("guards-to-llvm", guards_mod, ctx)
        checks = lowered_check_table(guards_mod)  # ids after the guard passes erased/reordered
        for op in list(guards_mod.body.operations):  # one JIT module: move the guard function in
            if op.operation.name != "sym.symbol":
                compute_mod.body.append(op.operation)
    stats.lower_s += time.perf_counter() - t1
    t2 = time.perf_counter()
    with timing.phase("llvm-jit"):
        jit = JitModule(compute_mod, cpu_opt_level())
    stats.jit_s += time.perf_counter() - t2
    arg_kinds = [_arg_kind(t) for t in arg_types]
    out_kinds = [("tensor", len(o.shape)) for o in ig.outputs if o.kind == "tensor"]
    variant = cpu_variant(jit, ctx, label, name, len(ig.sources), arg_kinds + out_kinds, checks, assert_msgs)
    variant.record = lambda: {"target": "cpu", "label": label, "func": name, "n_sources": len(ig.sources),
                              "kinds": [list(k) for k in arg_kinds + out_kinds], "checks": [list(c) for c in checks],
                              "assert_msgs": assert_msgs, "llvm": compute_mod.operation.get_asm()}
    return variant


def cpu_variant(jit: JitModule, ctx: ir.Context, label: str, func: str, n_sources: int, kinds: Sequence[tuple],
                checks: list, assert_msgs: list[str]) -> Variant:
    """A CPU variant over a JIT module holding the guard function `guards` and the compute `func`."""
    return Variant(
        name=label,
        guard=ScalarCall(jit, "guards", n_sources),
        compute=ComputeCall(jit, func, list(kinds)),
        checks=checks,
        assert_msgs=assert_msgs,
        keepalive=(jit, ctx),
    )


def cpu_compute_pipeline() -> str:
    """`linalg-to-llvm`; with MLIR_SYM_EMULATE_GPU=1, `gpu-emulated`: the GPU mapping executed on the
    CPU, to test the GPU kernels' index math against eager on a machine without a GPU."""
    return "gpu-emulated" if os.environ.get("MLIR_SYM_EMULATE_GPU", "0") == "1" else "linalg-to-llvm"


def cpu_opt_level() -> int | None:
    """The JIT's optimization level for compute modules: 0 for the emulated GPU mapping (torch-mlir's
    JIT at 1..3 computed a wrong emulated column sum of a view, `x.view(m, 2, -1).sum(1)`, that
    llvmlite's LLVM 22 computes right from the same IR; a test aid, so exactness first), else the
    default (MLIR_SYM_OPT_LEVEL, 2)."""
    return 0 if cpu_compute_pipeline() == "gpu-emulated" else None


def _pretty_loc(loc: str) -> str:
    # loc("file.py":12:0) -> file.py:12
    s = loc.replace('loc(', '').rstrip(')').replace('"', '')
    return s


def _constant_users(module: ir.Module) -> dict[str, str]:
    from mlir_sym.passes._compute_common import walk_ops

    """After a failed torch-to-linalg (torch-mlir's conversion rolled back): for each constant's text
    as torch-mlir prints it in "failed to legalize" (`"torch.constant.int"() <{value = 15 : i64}>`)
    at its location, the first torch op using it that is not itself a constant or list."""
    out: dict[str, str] = {}
    plain = ("torch.constant.", "torch.prim.", "torch_c.")
    try:
        for o in walk_ops(module.operation):
            if not o.name.startswith("torch.constant.") or not o.results:
                continue
            for use in o.results[0].uses:
                user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
                if not user.name.startswith(plain):
                    key = f"{o.name}|{o.attributes['value'] if 'value' in o.attributes else ''}|{o.location}"
                    out.setdefault(key, user.name)
                    break
    except Exception:  # noqa: BLE001 - only improves a message; the IR may be in any state
        pass
    return out


def _explain_lowering_failure(text: str, op_sources: dict[str, str] | None = None,
                              constant_users: dict[str, str] | None = None) -> str:
    """Name the op torch-mlir failed to legalize and its source line. Constants and list ops fail
    only because a consumer could not be lowered: the first other op is the culprit (found in the
    message, or as the constant's user in the module: `constant_users`)."""
    import re

    failed = re.findall(r'(?:loc\("([^"]+)":(\d+)[^)]*\)|loc\(unknown\)|\S+): failed to legalize operation \'([^\']+)\'', text)
    if not failed:
        return text
    plain = ("torch.constant.", "torch.prim.", "torch.vtensor.literal", "torch_c.")
    pick = next((f for f in failed if not f[2].startswith(plain)), None)
    reason = ""
    if pick is None:
        # only constants failed: the op that used them reported why it could not be lowered (e.g.
        # `aten.roll` without dims: "list sizes of shifts and dims are not the same")
        said = re.search(r'loc\("([^"]+)":(\d+)[^)]*\): (?!failed to legalize)([^\n]+)\n\s*note: [^\n]*see current '
                         r'operation: [^\n]*?"(torch\.aten\.[\w.]+)"', text)
        if said:
            pick, reason = (said.group(1), said.group(2), said.group(4)), f" ({said.group(3)})"
        else:
            pick = failed[0]
            user = _user_of_failed_constant(text, constant_users or {})
            if user is not None:
                pick = (pick[0], pick[1], user)
    path, line, op = pick
    where = (op_sources or {}).get(op.removeprefix("torch."))
    if where is None:
        where = f"{path}:{line}" if path else "an unknown location"
    return (f"unsupported op '{op}' at {where}{reason}: torch-mlir cannot lower it to linalg (set "
            f"mlir_sym.config.fallback_to_eager = True to run such graphs eagerly)\n{text}")


def _user_of_failed_constant(text: str, constant_users: dict[str, str]) -> str | None:
    """The op using the first constant the message says failed to legalize, from `_constant_users`."""
    import re

    m = re.search(r'failed to legalize operation \'(torch\.constant\.\w+)\': %\S+ = "torch\.constant\.\w+"\(\) '
                  r'<\{value = ([^}]*)\}>[^\n]*?(loc\([^\n]*\))?$', text, re.M)
    if not m:
        return None
    name, value = m.group(1), m.group(2).strip()
    for key, user in constant_users.items():
        k_name, k_value, _ = key.split("|", 2)
        if k_name == name and k_value == value:
            return user
    return None


def _func(module: ir.Module, name: str):
    return next(op for op in module.body.operations if op.operation.name == "func.func"
                and ir.StringAttr(op.operation.attributes["sym_name"]).value == name)


def _assert_msgs(module: ir.Module, name: str) -> list[str]:
    for op in module.body.operations:
        if "sym.assert_msgs" in op.operation.attributes:
            return [ir.StringAttr(a).value for a in ir.ArrayAttr(op.operation.attributes["sym.assert_msgs"])]
    return []


def _arg_kind(t: ir.Type) -> tuple:
    if isinstance(t, (ir.MemRefType, ir.RankedTensorType)):
        return ("tensor", ir.ShapedType(t).rank)
    s = str(t)
    if s in ("i64", "index"):
        return ("i64",)
    if s == "f64":
        return ("f64",)
    if s == "i1":
        return ("i1",)
    raise UnsupportedGraph(f"compute argument of type {t} is not supported by the CPU runtime")


def _source_reader(sources: Sequence[Sequence]):
    """`read(args) -> [sizes]` for sources given as (arg, dim) pairs (dim None: a SymInt argument)."""
    parts = [f"a[{arg}]" if dim is None else f"a[{arg}].shape[{dim}]" for arg, dim in sources]
    src = f"def _read(a):\n    return [{', '.join(parts)}]\n"
    ns: dict = {}
    exec(compile(src, "<mlir_sym sources>", "exec"), ns)  # noqa: S102 - generated from our own plan
    return ns["_read"]


def _solve_symbols(ig: ImportedGraph) -> list[int]:
    """For each symbol (in ig.symbols order), the index of the source that holds its value."""
    out = []
    for name in ig.symbols:
        idx = next((k for k, s in enumerate(ig.sources) if isinstance(s.expr, sympy.Symbol) and s.expr.name == name), None)
        if idx is None:
            raise UnsupportedGraph(f"symbol '{name}' is not the size of any input; cannot compute it at run time")
        out.append(idx)
    return out


def _python_fn(fname: str, symbols: Sequence[str], exprs: Sequence[str], conv: str):
    """`f(*symbol_values) -> tuple(conv(e) for e in exprs)` from printed Python expressions (conv ""
    leaves them as they are: sizes are ints already)."""
    body = ", ".join(f"{conv}({e})" for e in exprs)
    src = f"def {fname}({', '.join(symbols)}):\n    return ({body},)\n"
    ns: dict = {"math": __import__("math"), "torch": torch}
    exec(compile(src, f"<mlir_sym {fname}>", "exec"), ns)  # noqa: S102 - our own printed expressions
    fn = ns[fname]
    fn.source = src  # type: ignore[attr-defined]
    return fn


def _replayer(plan: AliasPlan, symbols: Sequence[str]):
    """`replay(base, symbol_values)`: the plan's view ops applied to `base` (see importer.AliasPlan)."""
    values = shapes.compile_exprs(plan.exprs, symbols) if plan.exprs else (lambda *a: ())
    steps = plan.steps

    def subst(a, prev, vals):
        if a is PREV:
            return prev
        if isinstance(a, SymArg):
            return vals[a.k]
        if isinstance(a, (list, tuple)):
            return type(a)(subst(x, prev, vals) for x in a)
        return a

    def replay(base: torch.Tensor, symvals: Sequence[int]) -> torch.Tensor:
        vals = values(*symvals)
        cur = base
        for target, args, kwargs in steps:
            cur = target(*subst(args, cur, vals), **{k: subst(v, cur, vals) for k, v in kwargs.items()})
        return cur

    return replay
