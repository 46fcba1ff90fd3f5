"""Pass registry and the textual pipeline builder shared by `symopt` and the compile pipelines.

This MLIR build has no global registry for Python-defined passes (`PassManager.add(callable, name)`
only), so we keep our own: `register` adds a `SymPass` subclass under its `--name`, `build_pipeline`
parses MLIR's textual pipeline syntax (`builtin.module(func.func(cse), sym-guard-cse, canonicalize)`)
and turns it into one `PassManager` in which upstream segments are added as text and our passes as
Python callables. A Python pass written inside an op anchor (`func.func(sym-x)`) runs on each op of
that kind (it is added at module level with a filter), so ordering between consecutive upstream
nested passes and ours is kept per function.
"""
from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass, field
from typing import Callable, ClassVar

from torch_mlir import ir
from torch_mlir.passmanager import PassManager


class PassError(Exception):
    """A pass found input it cannot accept; the message names the op or symbol."""


class SymPass:
    """Base of our passes. Subclasses set `name` (the flag), a docstring whose first line is the
    `--help` summary, optional `options` (name -> type, with defaults as class attributes), and
    implement `run(op)` on the anchor op. `statistics` maps a counter name to a count."""

    name: ClassVar[str] = ""
    options: ClassVar[dict[str, type]] = {}

    def __init__(self, **opts: object) -> None:
        for key, value in opts.items():
            if key not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise PassError(f"pass '{self.name}' has no option '{key}' (options: {known})")
            setattr(self, key, _convert_option(self.options[key], value))
        self.statistics: dict[str, int] = {}

    @classmethod
    def summary(cls) -> str:
        doc = inspect.getdoc(cls) or ""
        return doc.splitlines()[0] if doc else ""

    def run(self, op: ir.Operation) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def bump(self, stat: str, n: int = 1) -> None:
        self.statistics[stat] = self.statistics.get(stat, 0) + n


def _convert_option(typ: type, value: object) -> object:
    if typ is bool and isinstance(value, str):
        if value.lower() in ("1", "true", "on", ""):
            return True
        if value.lower() in ("0", "false", "off"):
            return False
        raise PassError(f"expected a boolean, got '{value}'")
    return typ(value)


_REGISTRY: dict[str, type[SymPass]] = {}


def register(cls: type[SymPass]) -> type[SymPass]:
    assert cls.name and cls.name not in _REGISTRY, cls.name
    _REGISTRY[cls.name] = cls
    return cls


_PIPELINES: dict[str, tuple[str, str]] = {}  # name -> (textual pipeline, summary)


def register_pipeline(name: str, text: str, summary: str) -> None:
    """A named pipeline usable as an element of any pipeline (and as a symopt flag)."""
    _PIPELINES[name] = (text, summary)


def registered_pipelines() -> dict[str, tuple[str, str]]:
    _load_all()
    import mlir_sym.pipelines  # noqa: F401 - registers the named pipelines

    return dict(_PIPELINES)


def registered() -> dict[str, type[SymPass]]:
    _load_all()
    return dict(_REGISTRY)


def _load_all() -> None:
    # Importing the package imports every pass module, each of which registers itself.
    import mlir_sym.passes  # noqa: F401


# ---------------------------------------------------------------------------------------------
# Upstream passes: the names this MLIR build knows, found by asking its parser (no list to rot).

_UPSTREAM_CACHE: dict[str, bool] = {}
_UPSTREAM_CTX: list = []  # one context for the parser's checks (a context each cost 2 ms a name)


def is_upstream_pass(name: str) -> bool:
    if name not in _UPSTREAM_CACHE:
        if not _UPSTREAM_CTX:
            _UPSTREAM_CTX.append(ir.Context())
        with _UPSTREAM_CTX[0]:
            try:
                PassManager.parse(f"builtin.module({name})")
                ok = True
            except ValueError:
                try:  # function-level passes must be nested under an anchor
                    PassManager.parse(f"builtin.module(func.func({name}))")
                    ok = True
                except ValueError:
                    ok = False
        _UPSTREAM_CACHE[name] = ok
    return _UPSTREAM_CACHE[name]


# ---------------------------------------------------------------------------------------------
# Textual pipeline syntax.


@dataclass
class Element:
    """One pipeline element: a pass `name{opts}` or an anchor `name(children)`."""

    name: str
    options: str = ""  # raw text inside {...}, without the braces
    children: list["Element"] | None = None  # set for an op anchor

    def text(self) -> str:
        if self.children is not None:
            return f"{self.name}({','.join(c.text() for c in self.children)})"
        return self.name + (f"{{{self.options}}}" if self.options else "")


def parse_pipeline(text: str) -> list[Element]:
    """Parse `a,b{x=1},func.func(c,d)` into elements (whitespace allowed)."""
    pos = 0
    s = text.strip()

    def skip_ws() -> None:
        nonlocal pos
        while pos < len(s) and s[pos].isspace():
            pos += 1

    def parse_list(closing: str | None) -> list[Element]:
        nonlocal pos
        out: list[Element] = []
        while True:
            skip_ws()
            if closing and pos < len(s) and s[pos] == closing and not out:
                pos += 1
                return out
            out.append(parse_element())
            skip_ws()
            if pos >= len(s):
                if closing:
                    raise PassError(f"unbalanced pipeline: expected '{closing}' at end of '{text}'")
                return out
            if s[pos] == ",":
                pos += 1
                continue
            if closing and s[pos] == closing:
                pos += 1
                return out
            raise PassError(f"unexpected '{s[pos]}' at offset {pos} in pipeline '{text}'")

    def parse_element() -> Element:
        nonlocal pos
        skip_ws()
        start = pos
        while pos < len(s) and (s[pos].isalnum() or s[pos] in "-_."):
            pos += 1
        name = s[start:pos]
        if not name:
            raise PassError(f"expected a pass name at offset {start} in pipeline '{text}'")
        skip_ws()
        if pos < len(s) and s[pos] == "{":
            depth, begin = 0, pos
            while pos < len(s):
                depth += s[pos] == "{"
                depth -= s[pos] == "}"
                pos += 1
                if depth == 0:
                    break
            if depth:
                raise PassError(f"unbalanced '{{' in pipeline '{text}'")
            return Element(name, s[begin + 1 : pos - 1].strip())
        if pos < len(s) and s[pos] == "(":
            pos += 1
            return Element(name, children=parse_list(")"))
        return Element(name)

    return parse_list(None) if s else []


def _parse_options(text: str) -> dict[str, str]:
    """`a=1 b=x,y` or `a=1,b=2`: options split on spaces, and on commas that start a new `key=`."""
    import re

    opts: dict[str, str] = {}
    for part in re.split(r"\s+|,(?=\s*[\w-]+=)", text.strip()):
        if part:
            key, _, value = part.partition("=")
            opts[key] = value
    return opts


@dataclass
class Pipeline:
    """A built pass pipeline: run it with `run(module)`; our passes' statistics are kept."""

    pm: PassManager
    sym_passes: list[SymPass] = field(default_factory=list)

    def run(self, module: ir.Module | ir.Operation) -> None:
        op = module.operation if isinstance(module, ir.Module) else module
        self.pm.run(op)

    def statistics(self) -> dict[str, dict[str, int]]:
        return {p.name: dict(p.statistics) for p in self.sym_passes if p.statistics}


def unknown_pass_message(name: str) -> str:
    ours = ", ".join(sorted(registered()))
    pipes = ", ".join(sorted(registered_pipelines()))
    return (
        f"unknown pass '{name}'. mlir_sym passes: {ours}; named pipelines: {pipes}; upstream passes: any "
        f"pass of the bundled MLIR (see `symopt --help`)"
    )


def build_pipeline(text: str, *, context: ir.Context, print_ir_after_all: bool = False,
                   timing: bool = False, verify_each: bool = True) -> Pipeline:
    """Build one PassManager on `builtin.module` from textual pipeline `text`.

    `text` may be wrapped in `builtin.module(...)` or be a bare list. Raises PassError naming an unknown
    pass or a bad option."""
    passes = registered()
    named = registered_pipelines()
    elements = parse_pipeline(text)
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].children is not None:
        elements = elements[0].children
    with context:
        pm = PassManager("builtin.module")
        if print_ir_after_all:
            pm.enable_ir_printing(print_after_all=True, print_module_scope=True)
        if timing:  # MLIR's report (wall time per pass, ours included) goes to stderr after the run
            pm.enable_timing()
        if not verify_each:  # the caller verifies the result once instead (mlir-opt's --verify-each=0)
            pm.enable_verifier(False)
        pipe = Pipeline(pm)
        pending: list[str] = []  # consecutive upstream elements, added as one text segment

        def flush() -> None:
            if pending:
                segment = ",".join(pending)
                try:
                    pm.add(segment)
                except ValueError as e:
                    raise PassError(f"invalid upstream pipeline segment '{segment}': {e}") from None
                pending.clear()

        def add_sym(el: Element, anchor: str | None) -> None:
            cls = passes[el.name]
            p = cls(**_parse_options(el.options))
            pipe.sym_passes.append(p)
            flush()
            pm.add(_as_callback(p, anchor), name=p.name, argument=p.name, description=p.summary())

        def walk(els: list[Element], anchor: str | None) -> None:
            for el in els:
                if el.name in named and el.children is None and not el.options:
                    inner = parse_pipeline(named[el.name][0])
                    if len(inner) == 1 and inner[0].name == "builtin.module" and inner[0].children is not None:
                        inner = inner[0].children
                    if anchor is not None:
                        raise PassError(f"named pipeline '{el.name}' runs on the module; do not nest it")
                    walk(inner, None)
                    continue
                if el.children is not None:
                    if _contains_sym(el, passes):
                        if anchor is not None:
                            raise PassError(f"mlir_sym passes cannot be nested two anchors deep ('{el.text()}')")
                        # Split the anchor into runs of upstream text and our filtered passes.
                        run: list[Element] = []
                        for child in el.children:
                            if child.name in passes:
                                if run:
                                    pending.append(Element(el.name, children=run).text())
                                    run = []
                                add_sym(child, el.name)
                            else:
                                run.append(child)
                        if run:
                            pending.append(Element(el.name, children=run).text())
                    else:
                        pending.append(el.text())
                elif el.name in passes:
                    add_sym(el, anchor)
                elif is_upstream_pass(el.name) or el.options:
                    pending.append(el.text() if anchor is None else Element(anchor, children=[el]).text())
                else:
                    raise PassError(unknown_pass_message(el.name))

        try:
            walk(elements, None)
            flush()
        finally:  # `walk` refers to itself: without this the PassManager lives until a GC (and reports its timing then)
            walk = None  # noqa: F841
    return pipe


def _contains_sym(el: Element, passes: dict[str, type[SymPass]]) -> bool:
    return any(c.name in passes or (c.children and _contains_sym(c, passes)) for c in el.children or [])


def _as_callback(p: SymPass, anchor: str | None) -> Callable:
    def callback(op: ir.Operation, pass_) -> None:  # noqa: ANN001 - ExternalPass
        targets = [op] if anchor is None else _ops_named(op, anchor)
        try:
            with op.location:  # ops a pass creates without a location get the anchor's
                for target in targets:
                    p.run(target)
        except PassError as e:
            op.location.emit_error(f"{p.name}: {e}") if not _has_location(e) else None
            pass_.signal_pass_failure()
        except Exception as e:  # a bug in a pass must fail the pipeline, not the process
            logging.getLogger("mlir_sym.passes").debug("%s: internal error", p.name, exc_info=True)
            op.location.emit_error(f"{p.name}: internal error: {type(e).__name__}: {e}")
            pass_.signal_pass_failure()

    callback.__name__ = p.name.replace("-", "_")
    return callback


def _has_location(e: PassError) -> bool:
    return bool(getattr(e, "emitted", False))


def _ops_named(root: ir.Operation, name: str) -> list[ir.Operation]:
    out: list[ir.Operation] = []
    for region in root.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name == name:
                    out.append(op.operation)
    return out


def located_error(op: ir.Operation | ir.OpView, message: str) -> PassError:
    """Emit `message` at `op`'s location and return a PassError to raise (it fails the pass)."""
    op.location.emit_error(message)
    err = PassError(message)
    err.emitted = True  # type: ignore[attr-defined]
    return err
