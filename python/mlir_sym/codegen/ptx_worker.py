"""LLVM IR -> PTX with llvmlite, in this process or in a worker process.

llvmlite serializes every call into LLVM behind one lock, so threads cannot compile kernels side by
side; `ptx.compile_ptx` splits a graph's kernels into groups and runs this file as a script, one
process per group (`MLIR_SYM_COMPILE_WORKERS`). It imports nothing but the standard library and
llvmlite, so a worker starts in a fraction of a second. Protocol: a JSON request on stdin
(`{"texts", "arch", "features", "opt", "libdevice"}`), a JSON reply on stdout (`{"ptx"}` or
`{"error"}`). With `--warm LIBDEVICE` (or `--warm ""`), the worker first initializes LLVM and parses
that libdevice, then waits for its request: `ptx.prestart` starts workers so while the kernels are
still being lowered; a worker whose stdin closes without a request exits quietly.
"""
from __future__ import annotations

import json
import sys
import threading
from functools import lru_cache

TRIPLE = "nvptx64-nvidia-cuda"

_lock = threading.Lock()
_llvm_ready = False


class PTXError(RuntimeError):
    """LLVM IR could not be turned into PTX (no libdevice, invalid IR, backend failure)."""


@lru_cache(maxsize=2)
def _libdevice_bitcode(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _init_llvm():
    global _llvm_ready
    import llvmlite.binding as llvm

    with _lock:
        if not _llvm_ready:
            try:
                llvm.initialize_all_targets()
                llvm.initialize_all_asmprinters()
            except Exception as e:  # noqa: BLE001
                raise PTXError(f"llvmlite cannot initialize its targets: {e}") from None
            _llvm_ready = True
    return llvm


_preparsed: dict = {}  # libdevice path -> its module, parsed while the worker waited (used once)


def warm(libdevice: str | None) -> None:
    """Initialize LLVM and the NVPTX target, and parse `libdevice` ahead of the request."""
    llvm = _init_llvm()
    llvm.Target.from_triple(TRIPLE)
    if libdevice:
        _preparsed[libdevice] = llvm.parse_bitcode(_libdevice_bitcode(libdevice))


# The LLVM IR pipeline's speed level (the code generator keeps `opt`). Level 2 gives the same PTX
# for GPT-2's, BERT's and T5's kernels and no reliable saving (benchmarks/bench_ptx_opt.py,
# cpu-2026-11-27p-ptx-speed-level.txt: 1.96 s at 3, 2.25 at 2 for GPT-2 on a 2-core box); a one-off
# comparison over the e2e cases' kernels found other PTX at level 2 for some (fewer unrolled loops).
MIDDLE_END_SPEED = 3


def compile_llvm(texts: list[str], arch: str, features: str, opt: int, libdevice: str | None) -> str:
    """PTX for LLVM IR modules `texts` linked into one (libdevice linked in when given)."""
    llvm = _init_llvm()
    try:
        target = llvm.Target.from_triple(TRIPLE)
    except RuntimeError as e:
        raise PTXError(f"this llvmlite has no NVPTX backend: {e}") from None
    tm = target.create_target_machine(cpu=arch, features=features, opt=opt, reloc="pic", codemodel="default")
    mod = None
    for text in texts:
        try:
            m = llvm.parse_assembly(text)
        except RuntimeError as e:
            raise PTXError(f"invalid LLVM IR for the kernels: {e}") from None
        m.triple = TRIPLE
        m.data_layout = str(tm.target_data)
        if mod is None:
            mod = m
        else:
            mod.link_in(m)
    if mod is None:
        raise PTXError("no LLVM IR to compile")
    kernels = {f.name for f in mod.functions if not f.is_declaration}
    if libdevice is not None:
        lib = _preparsed.pop(libdevice, None) or llvm.parse_bitcode(_libdevice_bitcode(libdevice))
        lib.triple = TRIPLE
        lib.data_layout = mod.data_layout
        mod.link_in(lib)
        # Keep only what the kernels use: libdevice's definitions become internal, dead ones go.
        for f in mod.functions:
            if not f.is_declaration and f.name not in kernels:
                f.linkage = llvm.Linkage.internal
        for g in mod.global_variables:
            if not g.is_declaration:
                g.linkage = llvm.Linkage.internal
        # Drop the unused ones before the optimization pipeline sees them: O3 spent 40 % of its
        # time on GPT-2's kernels in libdevice functions it later deleted (same PTX either way).
        dce = llvm.create_new_module_pass_manager()
        dce.add_global_dead_code_eliminate_pass()
        dce.run(mod, llvm.create_pass_builder(tm, llvm.PipelineTuningOptions(speed_level=0)))
    mod.verify()
    if opt:
        pto = llvm.PipelineTuningOptions(speed_level=min(opt, MIDDLE_END_SPEED))
        pb = llvm.create_pass_builder(tm, pto)
        mpm = pb.getModulePassManager()
        mpm.run(mod, pb)
    return tm.emit_assembly(mod)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--warm":
        try:
            warm(sys.argv[2] or None)
        except Exception:  # noqa: BLE001 - the request compiles without the head start
            pass
    text = sys.stdin.read()
    if not text.strip():
        return 0  # started ahead, never used
    req = json.loads(text)
    try:
        reply = {"ptx": compile_llvm(req["texts"], req["arch"], req["features"], req["opt"], req["libdevice"])}
    except Exception as e:  # noqa: BLE001 - reported to the parent, which raises PTXError
        reply = {"error": f"{type(e).__name__}: {e}"}
    json.dump(reply, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
