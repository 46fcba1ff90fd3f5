"""`symopt`: an mlir-opt for mlir_sym, on the MLIR bundled in torch-mlir.

    symopt [INPUT|-] [-o OUT] [--pass-pipeline='builtin.module(...)' | --PASS[='opt=v ...'] ...]
           [--split-input-file] [--verify-diagnostics] [--mlir-print-ir-after-all]
           [--mlir-print-op-generic] [--allow-unregistered-dialect]

A thin driver: it parses flags, reads and splits the input, builds one pipeline with
`registry.build_pipeline`, runs it and prints. Every pass lives in passes/. Pass flags run in
command-line order; `--NAME` is accepted for each registered mlir_sym pass and for every pass of the
bundled MLIR (`registry.is_upstream_pass`). Diagnostics are printed as `file:line:col: error: ...`
with line numbers of the original file, also under `--split-input-file`.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from typing import Sequence, TextIO

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from mlir_sym.context import make_context
from mlir_sym.passes import registry

PROG = "symopt"
SPLIT_MARKER = "// -----"
_SPLIT_LINE = re.compile(r"^[ \t]*// -----[ \t]*$")
_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.REMARK: "remark",
    ir.DiagnosticSeverity.NOTE: "note",
}
# The name MLIR gives a buffer parsed from a string; diagnostics show the input's name instead.
_PARSER_BUFFER_NAME = "-"


class UsageError(Exception):
    """A bad command line (unknown pass, bad pipeline): reported without touching the input."""


# ---------------------------------------------------------------------------------------------
# Command line.


def _help_epilog() -> str:
    lines = ["mlir_sym passes (run in command-line order; options as --NAME='opt=value opt2=value'):"]
    passes = registry.registered()
    if not passes:
        lines.append("  (none registered)")
    for name, cls in sorted(passes.items()):
        lines.append(f"  --{name:<28} {cls.summary()}")
        for opt, typ in cls.options.items():
            default = getattr(cls, opt, getattr(cls, opt.replace("-", "_"), None))  # block-size -> block_size
            lines.append(f"  {'':<30}   {opt}={getattr(typ, '__name__', typ)} (default: {default})")
    lines += ["", "named pipelines (as a flag, or an element of --pass-pipeline):"]
    for name, (_, summary) in sorted(registry.registered_pipelines().items()):
        lines.append(f"  --{name:<28} {summary}")
    lines += [
        "",
        "upstream passes: every pass of the bundled MLIR is accepted as a flag, --NAME or",
        "  --NAME='opt=value ...' (e.g. --cse, --canonicalize, --symbol-dce, --inline); there is no list",
        "  to print, a name is checked against MLIR's own pass parser. Passes restricted to func.func are",
        "  nested under func.func automatically. --pass-pipeline takes MLIR's textual syntax mixing both.",
    ]
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    def format_help(self) -> str:
        self.epilog = _help_epilog()  # lazily: importing every pass is only needed for --help
        return super().format_help()


def _arg_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Parse, verify, transform and print MLIR with the sym dialect (an mlir-opt for mlir_sym).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("input", nargs="?", default="-", help="input file, '-' for stdin (default)")
    p.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
    p.add_argument("--pass-pipeline", metavar="PIPELINE",
                   help="textual pipeline, e.g. 'builtin.module(func.func(cse),canonicalize)'")
    p.add_argument("--split-input-file", action="store_true",
                   help=f"split the input on lines '{SPLIT_MARKER}' and process each chunk separately")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check the diagnostics against expected-error/warning/remark/note comments")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after each pass to stderr")
    p.add_argument("--mlir-timing", action="store_true",
                   help="print the wall time of each pass (ours included) to stderr after the run")
    p.add_argument("--mlir-print-op-generic", action="store_true", help="print every op in generic form")
    p.add_argument("--allow-unregistered-dialect", action="store_true", help="accept ops of unknown dialects")
    p.add_argument("--mlir-disable-threading", action="store_true",
                   help="accepted for mlir-opt compatibility (symopt always runs single-threaded)")
    return p


@dataclass
class Options:
    input: str
    output: str
    pipeline: str  # textual pipeline, "" for none
    split_input_file: bool
    verify_diagnostics: bool
    print_ir_after_all: bool
    print_generic: bool
    timing: bool
    allow_unregistered: bool


def _pass_flag_element(flag: str) -> str:
    """`--name[=opts]` -> pipeline element text; UsageError for a name that is no pass."""
    name, has_opts, opts = flag.lstrip("-").partition("=")
    element = name + (f"{{{opts}}}" if has_opts and opts.strip() else "")
    if name in registry.registered() or name in registry.registered_pipelines():
        return element
    if name and re.fullmatch(r"[A-Za-z0-9_.-]+", name) and registry.is_upstream_pass(name):
        return element if _runs_on_module(name) else f"func.func({element})"
    raise UsageError(registry.unknown_pass_message(name))


def _runs_on_module(name: str) -> bool:
    """mlir-opt nests a pass restricted to an op kind implicitly; we nest func.func-only passes."""
    with ir.Context():
        try:
            PassManager.parse(f"builtin.module({name})")
            return True
        except ValueError:
            return False


def parse_args(argv: Sequence[str]) -> Options:
    parser = _arg_parser()
    known = parser._option_string_actions  # noqa: SLF001 - option string -> action
    rest: list[str] = []
    elements: list[str] = []
    args_iter = iter(argv)
    for tok in args_iter:
        if tok == "--":
            rest += ["--", *args_iter]
            break
        if not tok.startswith("-") or tok == "-":
            rest.append(tok)
            continue
        name = tok.partition("=")[0]
        if not name.startswith("--") and len(name) > 2 and "-" + name in known:
            tok, name = "-" + tok, "-" + name  # mlir-opt style single-dash long option
        if name in known:
            rest.append(tok)
            if known[name].nargs is None and "=" not in tok:  # takes a value: keep it with the flag
                value = next(args_iter, None)
                if value is not None:
                    rest.append(value)
        else:
            # Not ours: a pass flag. Handled here, not by argparse, which would take
            # `--pass='a=1 b=2'` (a space after a dash) for a positional argument.
            elements.append(_pass_flag_element(tok))
    args = parser.parse_args(rest)
    if args.pass_pipeline is not None and elements:
        raise UsageError("--pass-pipeline cannot be combined with individual pass flags")
    pipeline = args.pass_pipeline or (f"builtin.module({','.join(elements)})" if elements else "")
    return Options(
        input=args.input,
        output=args.output,
        pipeline=pipeline,
        split_input_file=args.split_input_file,
        verify_diagnostics=args.verify_diagnostics,
        print_ir_after_all=args.mlir_print_ir_after_all,
        print_generic=args.mlir_print_op_generic,
        timing=args.mlir_timing,
        allow_unregistered=args.allow_unregistered_dialect,
    )


# ---------------------------------------------------------------------------------------------
# Input: chunks that keep the original line numbers.


@dataclass
class Chunk:
    text: str  # padded with newlines so that line N of `text` is line N of the input
    first_line: int


def split_input(text: str, split: bool) -> list[Chunk]:
    if not split:
        return [Chunk(text, 1)]
    chunks: list[Chunk] = []
    lines = text.splitlines(keepends=True)
    start, cur = 0, []
    for i, line in enumerate(lines):
        if _SPLIT_LINE.match(line.rstrip("\r\n")):
            chunks.append(Chunk("\n" * start + "".join(cur), start + 1))
            start, cur = i + 1, []
        else:
            cur.append(line)
    chunks.append(Chunk("\n" * start + "".join(cur), start + 1))
    return chunks


# ---------------------------------------------------------------------------------------------
# Diagnostics.


@dataclass
class Diag:
    severity: str
    message: str
    file: str | None  # None: no file location
    line: int = 0
    col: int = 0
    notes: list["Diag"] = field(default_factory=list)


def _file_loc(loc: ir.Location) -> ir.FileLineColLoc | None:
    """The first file location inside `loc`, as MLIR's `findInstanceOf<FileLineColLoc>` finds it."""
    if isinstance(loc, ir.FileLineColLoc):
        return loc
    if isinstance(loc, ir.NameLoc):
        return _file_loc(loc.child_loc)
    if isinstance(loc, ir.CallSiteLoc):
        return _file_loc(loc.callee) or _file_loc(loc.caller)
    if isinstance(loc, ir.FusedLoc):
        for sub in loc.locations:
            found = _file_loc(sub)
            if found is not None:
                return found
    return None


def _to_diag(d, input_name: str) -> Diag:  # noqa: ANN001 - ir.Diagnostic
    loc = _file_loc(d.location)
    if loc is None:
        out = Diag(_SEVERITY[d.severity], d.message, None)
    else:
        name = input_name if loc.filename == _PARSER_BUFFER_NAME else loc.filename
        out = Diag(_SEVERITY[d.severity], d.message, name, loc.start_line, loc.start_col)
    out.notes = [_to_diag(n, input_name) for n in d.notes]
    return out


class Printer:
    """Writes diagnostics like mlir-opt: `file:line:col: severity: message`, then the source line."""

    def __init__(self, input_name: str, source: str, stream: TextIO) -> None:
        self.input_name = input_name
        self.lines = source.splitlines()
        self.stream = stream

    def emit(self, d: Diag) -> None:
        if d.file is None:
            self.stream.write(f"{self.input_name}: {d.severity}: {d.message}\n")
        else:
            self.stream.write(f"{d.file}:{d.line}:{d.col}: {d.severity}: {d.message}\n")
            if d.file == self.input_name and 1 <= d.line <= len(self.lines):
                src = self.lines[d.line - 1]
                self.stream.write(src + "\n")
                self.stream.write(" " * max(d.col - 1, 0) + "^\n")
        for n in d.notes:
            self.emit(n)


# ---------------------------------------------------------------------------------------------
# --verify-diagnostics: mlir-opt's `expected-<kind>[-re][@+N|@-N|@above|@below|@unknown] {{text}}`.

_EXPECTED = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}"
)


@dataclass
class Expected:
    kind: str
    text: str
    regex: re.Pattern[str] | None
    line: int | None  # None: a diagnostic without file location (@unknown)
    written_at: int  # line of the expected-* comment
    col: int
    matched: bool = False

    def matches(self, message: str) -> bool:
        return bool(self.regex.search(message)) if self.regex is not None else self.text in message


def _re_pattern(text: str) -> re.Pattern[str]:
    """`-re` text: literal text with `{{regex}}` parts, as in MLIR/FileCheck."""
    out, pos = [], 0
    for m in re.finditer(r"\{\{(.*?)\}\}", text):
        out.append(re.escape(text[pos : m.start()]))
        out.append(f"(?:{m.group(1)})")
        pos = m.end()
    out.append(re.escape(text[pos:]))
    return re.compile("".join(out))


def parse_expectations(chunk: Chunk) -> list[Expected]:
    out: list[Expected] = []
    below: list[Expected] = []  # waiting for the next line that is not itself a designator
    last_plain_line = 0
    for lineno, line in enumerate(chunk.text.splitlines(), start=1):
        m = _EXPECTED.search(line)
        if m is None:
            for e in below:
                e.line = lineno
            below.clear()
            last_plain_line = lineno
            continue
        kind, is_re, where, text = m.group(1), m.group(2), m.group(4), m.group(5)
        try:
            regex = _re_pattern(text) if is_re else None
        except re.error as err:
            raise UsageError(f"line {lineno}: invalid regex in expected-{kind}-re: {err}") from None
        e = Expected(kind, text, regex, lineno, lineno, m.start() + 1)
        if where is None:
            pass
        elif where == "unknown":
            e.line = None
        elif where == "above":
            e.line = last_plain_line
        elif where == "below":
            below.append(e)
        else:
            e.line = lineno + int(where)
        out.append(e)
    return out


class Verifier:
    """Matches produced diagnostics against the chunk's expectations; collects mismatches."""

    def __init__(self, expected: list[Expected], input_name: str) -> None:
        self.expected = expected
        self.input_name = input_name
        self.problems: list[Diag] = []

    def process(self, d: Diag) -> None:
        self._one(d)
        for n in d.notes:
            # mlir-opt disables printing the op on diagnostics under --verify-diagnostics.
            if n.severity == "note" and n.message.startswith("see current operation:"):
                continue
            self._one(n)

    def _one(self, d: Diag) -> None:
        if d.file is not None and d.file != self.input_name:
            line = -1  # a diagnostic in another file can never be expected here
        else:
            line = None if d.file is None else d.line
        candidates = [e for e in self.expected if e.line == line and e.matches(d.message)]
        same_kind = [e for e in candidates if e.kind == d.severity]
        if same_kind:
            fresh = [e for e in same_kind if not e.matched]
            (fresh or same_kind)[0].matched = True
            return
        if candidates:
            e = candidates[0]
            self.problems.append(Diag("error", f"'{d.severity}' diagnostic emitted when expecting a '{e.kind}'",
                                      d.file, d.line, d.col))
            return
        self.problems.append(Diag("error", f"unexpected {d.severity}: {d.message}", d.file, d.line, d.col))

    def finish(self) -> list[Diag]:
        for e in self.expected:
            if not e.matched:
                self.problems.append(Diag("error", f'expected {e.kind} "{e.text}" was not produced',
                                          self.input_name, e.written_at, e.col))
        return self.problems


# ---------------------------------------------------------------------------------------------
# Processing one chunk.


def process_chunk(chunk: Chunk, opts: Options, input_name: str) -> tuple[str | None, list[Diag]]:
    """Parse, run the pipeline, print. Returns (output or None on failure, diagnostics in order)."""
    diags: list[Diag] = []
    ctx = make_context()
    ctx.enable_multithreading(False)  # deterministic diagnostic order; Python passes hold the GIL anyway
    ctx.emit_error_diagnostics = True  # errors reach the handler (located), not only MLIRError's text
    if opts.allow_unregistered:
        ctx.allow_unregistered_dialects = True

    def handler(d) -> bool:  # noqa: ANN001
        diags.append(_to_diag(d, input_name))
        return True

    ctx.attach_diagnostic_handler(handler)
    with ctx:
        pipeline = None
        if opts.pipeline:
            try:
                pipeline = registry.build_pipeline(opts.pipeline, context=ctx,
                                                   print_ir_after_all=opts.print_ir_after_all,
                                                   timing=opts.timing)
            except registry.PassError as e:
                raise UsageError(str(e)) from None
        try:
            module = ir.Module.parse(chunk.text)
        except ir.MLIRError as e:
            _add_error(diags, e, input_name)
            return None, diags
        if pipeline is not None:
            try:
                pipeline.run(module)
            except ir.MLIRError as e:
                _add_error(diags, e, input_name)
                return None, diags
        text = module.operation.get_asm(print_generic_op_form=opts.print_generic)
        return text.rstrip("\n"), diags


def _add_error(diags: list[Diag], e: ir.MLIRError, input_name: str) -> None:
    """Make sure a failure shows up as at least one error diagnostic."""
    diags.extend(_to_diag(d, input_name) for d in getattr(e, "error_diagnostics", []))
    if not any(d.severity == "error" for d in diags):
        diags.append(Diag("error", str(e), None))


def _read_input(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def run(opts: Options) -> int:
    try:
        source, input_name = _read_input(opts.input)
    except (OSError, UnicodeDecodeError) as e:
        sys.stderr.write(f"{PROG}: error: cannot read input '{opts.input}': {e}\n")
        return 1
    printer = Printer(input_name, source, sys.stderr)
    outputs: list[str] = []
    ok = True
    for chunk in split_input(source, opts.split_input_file):
        verifier = Verifier(parse_expectations(chunk), input_name) if opts.verify_diagnostics else None
        out, diags = process_chunk(chunk, opts, input_name)
        if verifier is not None:
            for d in diags:
                verifier.process(d)
            problems = verifier.finish()
            for d in problems:
                printer.emit(d)
            ok = ok and not problems
        else:
            for d in diags:
                printer.emit(d)
            ok = ok and out is not None
        if out is not None:
            outputs.append(out)
    # Like mlir-opt, the chunks that went through are printed even when another one failed.
    text = f"\n{SPLIT_MARKER}\n".join(outputs) + "\n" if outputs else ""
    try:
        if opts.output == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            with open(opts.output, "w", encoding="utf-8") as f:
                f.write(text)
    except OSError as e:
        sys.stderr.write(f"{PROG}: error: cannot write output '{opts.output}': {e}\n")
        return 1
    if not ok and opts.verify_diagnostics:
        sys.stderr.write(f"{PROG}: error: {input_name}: diagnostics do not match the expected-* comments\n")
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = parse_args(argv)
        return run(opts)
    except UsageError as e:
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return 2
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
