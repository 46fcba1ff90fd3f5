"""Guard evaluation cost: compiled guard functions with and without the guard passes, against Python.

Synthetic guard functions in the importer's shape (one `sym.bind` per input size, a range guard per
symbol, then the guards) with 10, 100 and 1000 guards over 4, 8 and 16 symbols: single-symbol ranges,
duplicates and rewritten duplicates (commuted operands, mirrored relations, scaled both sides),
relations between two symbols (`a <= b + c`, `a + b <= C`, `a == b`), `!=`, and nonlinear ones
(`a*b <= C`, `a % 2 == r`, `a // 2 >= c`). Every guard holds at the symbols' hint values, which is what
each call passes (the hot path: a cached artifact whose guards all hold, every check evaluated).

Measured per call (median over repeats of the mean of a batch of calls, in microseconds):
  * compiled, no passes: the guards-to-llvm pipeline without sym-canonicalize/sym-guard-cse/
    sym-guard-schedule, JIT-compiled with MLIR's ExecutionEngine and called through
    `runtime.cpu.ScalarCall` (what an artifact does);
  * compiled, passes: `pipelines.PIPELINES["guards-to-llvm"]` as it is (with the passes);
  * Python: the same checks as one generated straight-line Python function (the fastest way to
    evaluate them in Python, like `shapes.compile_exprs`), on the original and on the optimized
    guard set; and sympy `subs` on the original set (how a ShapeEnv-style evaluation of the guard
    expressions would go), on fewer calls;
  * ctypes floor: ScalarCall of an empty function of the same arity (the call overhead alone).

    python benchmarks/bench_guards.py [--sizes 10,100,1000] [--seed 0] [--calls 20000]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, field

from torch_mlir import ir

from mlir_sym.context import make_context
from mlir_sym.passes.registry import build_pipeline
from mlir_sym.pipelines import PIPELINES, TO_LLVM
from mlir_sym.runtime.cpu import JitModule, ScalarCall

NO_PASSES = f"builtin.module(canonicalize, cse, convert-sym-to-arith, canonicalize, cse, {TO_LLVM})"
GUARD_PASSES = "builtin.module(sym-canonicalize, sym-guard-cse, sym-guard-schedule)"

_PYCMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_PYBIN = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}


@dataclass
class Expr:
    """An index expression: a tree of ("sym", name) | ("const", c) | (op, lhs, rhs)."""

    node: tuple

    def py(self) -> str:
        n = self.node
        if n[0] == "sym":
            return n[1]
        if n[0] == "const":
            return str(n[1])
        return f"({n[1].py()} {_PYBIN[n[0]]} {n[2].py()})"

    def value(self, env: dict[str, int]) -> int:
        return eval(self.py(), {}, dict(env))  # noqa: S307 - our own generated text


def S(name: str) -> Expr:
    return Expr(("sym", name))


def C(c: int) -> Expr:
    return Expr(("const", c))


def B(op: str, a: Expr, b: Expr) -> Expr:
    return Expr((op, a, b))


@dataclass
class Guard:
    pred: str
    lhs: Expr
    rhs: Expr
    origin: str

    def py(self) -> str:
        return f"{self.lhs.py()} {_PYCMP[self.pred]} {self.rhs.py()}"


@dataclass
class GuardSet:
    symbols: list[str]
    hints: dict[str, int]
    guards: list[Guard] = field(default_factory=list)

    def mlir(self) -> str:
        lines = [f'"sym.symbol"() {{sym_name = "{s}", lo = 2 : i64, hint = {self.hints[s]} : i64}} : () -> ()'
                 for s in self.symbols]
        args = ", ".join(f'%a{i}: index {{sym.source = "L[\'x{i}\'].size()[0]"}}' for i in range(len(self.symbols)))
        lines.append(f"func.func @guards({args}) attributes {{sym.guards}} {{")
        counter = iter(range(10**9))
        for i, s in enumerate(self.symbols):
            lines.append(f'  %{s} = "sym.value"() {{symbol = "{s}"}} : () -> index')
            lines.append(f'  "sym.bind"(%a{i}, %{s}) : (index, index) -> ()')

        def emit(e: Expr) -> str:
            n = e.node
            if n[0] == "sym":
                return f"%{n[1]}"
            name = f"%v{next(counter)}"
            if n[0] == "const":
                lines.append(f'  {name} = "sym.constant"() {{value = {n[1]} : i64}} : () -> index')
            else:
                a, b = emit(n[1]), emit(n[2])
                lines.append(f'  {name} = "sym.{n[0]}"({a}, {b}) : (index, index) -> index')
            return name

        for g in self.guards:
            a, b = emit(g.lhs), emit(g.rhs)
            c = f"%c{next(counter)}"
            lines.append(f'  {c} = "sym.cmp"({a}, {b}) {{predicate = "{g.pred}"}} : (index, index) -> i1')
            lines.append(f'  "sym.guard"({c}) {{origin = "{g.origin}"}} : (i1) -> ()')
        lines.append("  return\n}")
        return "\n".join(lines)


def make_guards(n: int, seed: int) -> GuardSet:
    rng = random.Random(seed)
    nsym = {10: 4, 100: 8}.get(n, 16)
    syms = [f"s{i}" for i in range(nsym)]
    hints = {s: rng.choice([8, 16, 24, 32, 48, 64, 96, 128]) for s in syms}
    for i in range(1, nsym, 3):  # some sizes are equal (e.g. a batch shared by two inputs)
        hints[syms[i]] = hints[syms[i - 1]]
    gs = GuardSet(syms, hints)
    for s in syms:  # the importer's range guards
        gs.guards.append(Guard("ge", S(s), C(2), f"range of {s}: [2, oo]"))

    def holds(g: Guard) -> bool:
        return eval(g.py(), {}, dict(hints))  # noqa: S307

    def fresh(k: int) -> Guard:
        kind = rng.random()
        a, b = rng.sample(syms, 2)
        ha, hb = hints[a], hints[b]
        if kind < 0.35:  # single-symbol range
            if rng.random() < 0.5:
                return Guard(rng.choice(["ge", "gt"]), S(a), C(rng.randint(2, ha - 1)), f"model.py:{k}")
            return Guard(rng.choice(["le", "lt"]), S(a), C(rng.randint(ha + 1, 4 * ha)), f"model.py:{k}")
        if kind < 0.6:  # two symbols
            r = rng.random()
            if r < 0.4:
                return Guard("le", S(a), B("add", S(b), C(max(0, ha - hb) + rng.randint(0, 8))), f"model.py:{k}")
            if r < 0.7:
                return Guard("le", B("add", S(a), S(b)), C(ha + hb + rng.randint(0, 64)), f"model.py:{k}")
            eq = [(x, y) for x in syms for y in syms if x < y and hints[x] == hints[y]]
            x, y = rng.choice(eq) if eq else (a, a)
            return Guard("eq", S(x), S(y), f"model.py:{k}")
        if kind < 0.7:
            return Guard("ne", S(a), C(rng.choice([0, 1, ha + 1])), f"model.py:{k}")
        r = rng.random()  # nonlinear
        if r < 0.4:
            return Guard("le", B("mul", S(a), S(b)), C(ha * hb * rng.choice([1, 2, 4])), f"model.py:{k}")
        if r < 0.7:
            return Guard("eq", B("mod", S(a), C(2)), C(ha % 2), f"model.py:{k}")
        return Guard("ge", B("floordiv", S(a), C(2)), C(rng.randint(1, ha // 2)), f"model.py:{k}")

    def variant(g: Guard, k: int) -> Guard:
        """The same check written differently: mirrored, commuted, or both sides doubled."""
        r = rng.random()
        if r < 0.3:
            return Guard(g.pred, g.lhs, g.rhs, f"model.py:{k} (duplicate)")
        if r < 0.6:
            return Guard(_MIRROR[g.pred], g.rhs, g.lhs, f"model.py:{k} (mirrored)")
        if r < 0.8 and g.lhs.node[0] in ("add", "mul"):
            op, x, y = g.lhs.node
            return Guard(g.pred, B(op, y, x), g.rhs, f"model.py:{k} (commuted)")
        return Guard(g.pred, B("mul", C(2), g.lhs), B("mul", g.rhs, C(2)), f"model.py:{k} (scaled)")

    k = 0
    while len(gs.guards) < n:
        k += 1
        g = variant(rng.choice(gs.guards), k) if len(gs.guards) > nsym and rng.random() < 0.3 else fresh(k)
        if holds(g):
            gs.guards.append(g)
    gs.guards = gs.guards[:n]
    return gs


# --- evaluation ------------------------------------------------------------------------------------

def python_checker(fn_op) -> "callable":
    """One generated Python function `f(sizes) -> first failing check id or 0` for a guard function
    (sym ops read back, written as straight-line Python)."""
    ops = [o.operation for o in fn_op.regions[0].blocks[0].operations]
    names: dict = {}
    symdef: dict[str, str] = {}
    defining: set = set()  # the first bind of an input to exactly a symbol loads it (no check)
    for o in ops:
        if o.name == "sym.bind":
            e = o.operands[1].owner.operation
            if e.name == "sym.value" and ir.StringAttr(e.attributes["symbol"]).value not in symdef:
                symdef[ir.StringAttr(e.attributes["symbol"]).value] = f"a[{ir.BlockArgument(o.operands[0]).arg_number}]"
                defining.add(o)
    body, check = [], 0

    def val(v) -> str:
        return f"a[{ir.BlockArgument(v).arg_number}]" if isinstance(v.owner, ir.Block) else names[v]

    for i, o in enumerate(ops):
        n, t = o.name, f"t{i}"
        if n == "sym.value":
            expr = symdef[ir.StringAttr(o.attributes["symbol"]).value]
        elif n == "sym.constant":
            expr = str(ir.IntegerAttr(o.attributes["value"]).value)
        elif n == "sym.cmp":
            expr = f"{val(o.operands[0])} {_PYCMP[ir.StringAttr(o.attributes['predicate']).value]} {val(o.operands[1])}"
        elif n.startswith("sym.") and n[4:] in _PYBIN:
            expr = f"{val(o.operands[0])} {_PYBIN[n[4:]]} {val(o.operands[1])}"
        elif n in ("sym.and", "sym.or"):
            expr = f"{val(o.operands[0])} {n[4:]} {val(o.operands[1])}"
        elif n in ("sym.bind", "sym.guard", "sym.assert"):
            check += 1
            cond = f"{val(o.operands[0])} != {val(o.operands[1])}" if n == "sym.bind" else f"not {val(o.operands[0])}"
            if o not in defining:
                body.append(f"    if {cond}: return {check}")
            continue
        else:
            continue
        names[o.results[0]] = t
        body.append(f"    {t} = {expr}")
    src = "def f(a):\n" + "\n".join(body) + "\n    return 0\n"
    ns: dict = {}
    exec(compile(src, "<guards>", "exec"), ns)  # noqa: S102 - generated from our own IR
    return ns["f"]


def sympy_checker(gs: GuardSet):
    import sympy

    syms = {s: sympy.Symbol(s, integer=True, positive=True) for s in gs.symbols}
    rel = {"eq": sympy.Eq, "ne": sympy.Ne, "lt": sympy.Lt, "le": sympy.Le, "gt": sympy.Gt, "ge": sympy.Ge}
    exprs = [rel[g.pred](sympy.sympify(g.lhs.py(), locals=syms), sympy.sympify(g.rhs.py(), locals=syms))
             for g in gs.guards]

    def f(a):
        env = dict(zip(syms.values(), a))
        for i, e in enumerate(exprs, len(syms) + 1):
            if not bool(e.subs(env)):
                return i
        return 0

    return f


def timeit(fn, arg, calls: int, repeats: int = 7) -> float:
    """Median over `repeats` of the mean time of `calls` calls, in microseconds."""
    fn(arg)
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn(arg)
        out.append((time.perf_counter_ns() - t0) / calls / 1000)
    return statistics.median(out)


def count_checks(module: ir.Module) -> tuple[int, int]:
    """(guards + asserts, ops) of the guard function."""
    fn = next(o.operation for o in module.body.operations if o.operation.name == "func.func")
    ops = [o.operation for o in fn.regions[0].blocks[0].operations]
    return sum(o.name in ("sym.guard", "sym.assert") for o in ops), len(ops)


def compile_guards(text: str, pipeline: str, ctx: ir.Context) -> tuple[ScalarCall, JitModule, float, int]:
    """(call, its JIT module, seconds in the pipeline, LLVM-dialect ops in the lowered @guards)."""
    with ctx:
        module = ir.Module.parse(text)
        t0 = time.perf_counter()
        build_pipeline(pipeline, context=ctx).run(module)
        dt = time.perf_counter() - t0
        for op in list(module.body.operations):
            if op.operation.name == "sym.symbol":
                op.operation.erase()
        fn = next(o.operation for o in module.body.operations
                  if o.operation.name == "llvm.func" and ir.StringAttr(o.operation.attributes["sym_name"]).value == "guards")
        nops = sum(len(list(b.operations)) for b in fn.regions[0].blocks)
        jit = JitModule(module)
        return ScalarCall(jit, "guards", text.count('"sym.bind"')), jit, dt, nops


def empty_call(nargs: int, ctx: ir.Context) -> tuple[ScalarCall, JitModule]:
    args = ", ".join(f"%a{i}: index" for i in range(nargs))
    text = f"func.func @guards({args}) -> i32 {{\n  %c0 = arith.constant 0 : i32\n  return %c0 : i32\n}}"
    with ctx:
        module = ir.Module.parse(text)
        build_pipeline(f"builtin.module({TO_LLVM})", context=ctx).run(module)
        jit = JitModule(module)
        return ScalarCall(jit, "guards", nargs), jit


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args(argv)
    assert "sym-guard-cse" in PIPELINES["guards-to-llvm"], "guards-to-llvm does not run the guard passes"
    ctx = make_context()
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        gs = make_guards(n, args.seed)
        text = gs.mlir()
        sizes = [gs.hints[s] for s in gs.symbols]
        plain, jit_a, t_plain, ops_plain = compile_guards(text, NO_PASSES, ctx)
        opt, jit_b, t_opt, ops_opt = compile_guards(text, PIPELINES["guards-to-llvm"], ctx)
        floor, jit_c = empty_call(len(sizes), ctx)
        assert plain(sizes) == 0 and opt(sizes) == 0, "every guard holds at the hints"
        # The passes keep the meaning: same pass/fail on random sizes around the hints.
        rng = random.Random(args.seed)
        for _ in range(2000):
            probe = [max(0, h + rng.randint(-h, h)) for h in sizes]
            assert (plain(probe) == 0) == (opt(probe) == 0), probe
        with ctx:
            original = ir.Module.parse(text)
            optimized = ir.Module.parse(text)
            t0 = time.perf_counter()
            build_pipeline(GUARD_PASSES, context=ctx).run(optimized)
            t_passes = time.perf_counter() - t0
            fn = lambda m: next(o.operation for o in m.body.operations if o.operation.name == "func.func")  # noqa: E731
            py_orig, py_opt = python_checker(fn(original)), python_checker(fn(optimized))
        assert py_orig(sizes) == 0 and py_opt(sizes) == 0
        sp = sympy_checker(gs)
        calls = max(200, args.calls // max(1, n // 10))
        t_floor = timeit(floor, sizes, calls)
        t_a, t_b = timeit(plain, sizes, calls), timeit(opt, sizes, calls)
        row = {
            "guards": n,
            "symbols": len(gs.symbols),
            "checks after passes": count_checks(optimized)[0],
            "LLVM ops, no passes": ops_plain,
            "LLVM ops, passes": ops_opt,
            "compiled, no passes": t_a,
            "compiled, passes": t_b,
            "ctypes floor": t_floor,
            "native, no passes": max(0.0, t_a - t_floor),
            "native, passes": max(0.0, t_b - t_floor),
            "Python": timeit(py_orig, sizes, max(100, calls // 4)),
            "Python, passes": timeit(py_opt, sizes, max(100, calls // 4)),
            "sympy subs": timeit(sp, sizes, max(3, 200 // max(1, n // 10)), repeats=3),
            "pass time (s)": t_passes,
            "lowering no passes (s)": t_plain,
            "lowering with passes (s)": t_opt,
        }
        rows.append(row)
        print(f"  done: {n} guards", file=sys.stderr)

    cols = ["guards", "symbols", "checks after passes", "LLVM ops, no passes", "LLVM ops, passes",
            "compiled, no passes", "compiled, passes", "ctypes floor", "native, no passes", "native, passes",
            "Python", "Python, passes", "sympy subs", "pass time (s)"]
    print("per-call guard evaluation, median µs (all guards hold: every check evaluated); 'native' is the")
    print("compiled time less the ctypes floor (an empty function of the same arity called the same way)\n")
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---:" for _ in cols) + "|")
    for r in rows:
        cells = []
        for c in cols:
            v = r[c]
            cells.append(str(v) if isinstance(v, int) else (f"{v:.2f}" if v < 100 else f"{v:.0f}"))
        print("| " + " | ".join(cells) + " |")
    print(f"\ncommand: python benchmarks/bench_guards.py --sizes {args.sizes} --seed {args.seed} --calls {args.calls}")


if __name__ == "__main__":
    main()
