"""LLVM IR (from the NVVM dialect) -> PTX, with llvmlite's NVPTX backend.

The LLVM inside torch-mlir has no NVPTX target, so `gpu-module-to-binary` cannot make PTX in-process;
llvmlite (LLVM 22) can. `gpu_module_to_llvm_ir` turns one lowered `gpu.module` into LLVM IR text,
`compile_ptx` optimizes it (libdevice linked in when the kernels call `__nv_*` math functions) and
emits PTX for sm_90 (ptx80). Results are cached on disk by a hash of everything that goes in, in
`$MLIR_SYM_CACHE_DIR` (default `~/.cache/mlir_sym/ptx`).

libdevice is looked up in: `$CUDA_LIBDEVICE` (the file), `$CUDA_HOME`/`$CUDA_PATH`/`/usr/local/cuda*`
(`nvvm/libdevice/libdevice.10.bc`), then triton's bundled copy.
"""
from __future__ import annotations

import glob
import hashlib
import json
import logging
import os
import re
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from torch_mlir import ir

from mlir_sym.codegen import code_cache
from mlir_sym.codegen.ptx_worker import TRIPLE, PTXError, _init_llvm, compile_llvm  # noqa: F401 - PTXError is raised here too

log = logging.getLogger("mlir_sym.codegen")

DEFAULT_ARCH = "sm_90"
DEFAULT_FEATURES = "+ptx80"
DATALAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
_COMPILER_VERSION = "1"  # bump when the emitted code for the same input changes

def gpu_module_to_llvm_ir(gpu_modules) -> list[str]:
    """LLVM IR text for the LLVM-dialect body of each lowered `gpu.module` (after convert-gpu-to-nvvm).
    `compile_ptx` links them into one module (LLVM's linker renames clashing internal globals such as
    the assertion messages every module names `assert_message_0`)."""
    from torch_mlir.dialects import llvm as llvm_d

    if not isinstance(gpu_modules, (list, tuple)):
        gpu_modules = [gpu_modules]
    out = []
    for gm in gpu_modules:
        op = gm.operation
        with op.context, ir.Location.unknown():
            m = ir.Module.create()
            with ir.InsertionPoint(m.body):
                for child in op.regions[0].blocks[0].operations:
                    child.operation.clone()
            try:
                out.append(_fix_special_floats(llvm_d.translate_module_to_llvmir(m.operation)))
            except Exception as e:  # noqa: BLE001 - translation reports through a generic error
                raise PTXError(f"cannot translate the kernels to LLVM IR: {e}\n{m}") from None
    return out


_SPECIAL = {"-inf": "0xFFF0000000000000", "inf": "0x7FF0000000000000", "+inf": "0x7FF0000000000000",
            "nan": "0x7FF8000000000000", "+nan": "0x7FF8000000000000", "-nan": "0xFFF8000000000000",
            "qnan": "0x7FF8000000000000", "+qnan": "0x7FF8000000000000", "-qnan": "0xFFF8000000000000"}
_SPECIAL_RE = re.compile(r"(?<![\w%@.$\"-])([+-]?inf|[+-]?q?nan)(?![\w.\"])")


_BITS_RE = re.compile(r"\bf0x([0-9A-Fa-f]+)\b")
_FLOAT_TYPE_RE = re.compile(r"\b(half|bfloat|float|double)\b")


def _fix_special_floats(text: str) -> str:
    """The translation prints float infinities/NaNs as `-inf`/`nan`, and floats that are not short
    decimals by their bits (`f0x3FB504F3`), which llvmlite's IR parser rejects; write them in the
    hexadecimal forms it accepts (double format for float and double, 0xH/0xR for half/bfloat)."""
    text = _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group(1)], text)
    out = []
    for line in text.split("\n"):
        if "f0x" in line:
            line = _BITS_RE.sub(lambda m: _hex_literal(m.group(1), line[: m.start()]), line)
        if "float" in line or "half" in line or "bfloat" in line:
            line = _DECIMAL_RE.sub(lambda m: _narrow_decimal(m.group(1), line[: m.start()]), line)
        out.append(line)
    return "\n".join(out)


# A decimal constant (`4.471500e-02`): LLVM's parser wants float/half constants exactly representable,
# while the translation prints the shortest decimal that rounds to the value.
_DECIMAL_RE = re.compile(r"(?<![\w.%@$\"-])([-+]?\d+\.\d+e[-+]\d+)(?![\w.])")


def _narrow_decimal(digits: str, before: str) -> str:
    types = _FLOAT_TYPE_RE.findall(before)
    if not types or types[-1] == "double":
        return digits
    value = float(digits)
    if types[-1] == "float":
        (value,) = struct.unpack("<f", struct.pack("<f", value))
    elif types[-1] == "half":
        (value,) = struct.unpack("<e", struct.pack("<e", value))
    else:  # bfloat: the 16 high bits of the float, rounded to nearest even
        (b,) = struct.unpack("<I", struct.pack("<f", value))
        return "0xR%04X" % (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF)
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


def _hex_literal(digits: str, before: str) -> str:
    types = _FLOAT_TYPE_RE.findall(before)
    ty = types[-1] if types else {4: "half", 8: "float", 16: "double"}.get(len(digits), "double")
    if len(digits) == 8:  # float bits -> the double with the same value
        (value,) = struct.unpack("<f", struct.pack("<I", int(digits, 16)))
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if len(digits) == 4:
        return ("0xR" if ty == "bfloat" else "0xH") + digits.upper()
    return "0x" + digits.upper()


def find_libdevice() -> str | None:
    env = os.environ.get("CUDA_LIBDEVICE")
    if env:
        return env if os.path.isfile(env) else None
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    roots += sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for root in roots:
        if root:
            p = os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")
            if os.path.isfile(p):
                return p
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        if spec and spec.submodule_search_locations:
            for base in spec.submodule_search_locations:
                hits = glob.glob(os.path.join(base, "backends", "nvidia", "lib", "libdevice*.bc"))
                if hits:
                    return hits[0]
    except Exception:  # noqa: BLE001 - triton is optional
        pass
    return None


def nvptx_available() -> bool:
    """Whether this llvmlite has the NVPTX target (PTX can be made on this machine, GPU or not)."""
    try:
        _init_llvm()
        import llvmlite.binding as llvm

        llvm.Target.from_triple(TRIPLE)
        return True
    except Exception:  # noqa: BLE001 - an llvmlite without NVPTX
        return False


def needs_libdevice(llvm_ir: str | Sequence[str]) -> bool:
    return any("@__nv_" in t for t in _texts(llvm_ir))


def _texts(llvm_ir: str | Sequence[str]) -> list[str]:
    return [llvm_ir] if isinstance(llvm_ir, str) else list(llvm_ir)


def cache_dir() -> Path:
    return code_cache.cache_root() / "ptx"


def compile_ptx(llvm_ir: str | Sequence[str], *, arch: str = DEFAULT_ARCH, features: str = DEFAULT_FEATURES,
                opt: int = 3, use_cache: bool = True) -> str:
    """PTX text for `llvm_ir`: one LLVM IR module or several (linked into one), kernels with the
    ptx_kernel calling convention; compiled in this process."""
    texts = _texts(llvm_ir)
    libdevice = _libdevice_for(texts)
    path = cache_dir() / f"{_key(texts, arch, features, opt, libdevice)}.ptx"
    if use_cache and path.is_file():
        return path.read_text()
    ptx = compile_llvm(texts, arch, features, opt, libdevice)
    if use_cache:
        _write(path, ptx)
    return ptx


def _libdevice_for(texts: Sequence[str]) -> str | None:
    """libdevice's path when the kernels call it (a clear error when they do and it is missing)."""
    if not needs_libdevice(texts):
        return None
    libdevice = find_libdevice()
    if libdevice is None:
        names = sorted({w.split("(")[0] for t in texts for w in t.split("@")[1:] if w.startswith("__nv_")})
        raise PTXError(
            f"the kernels call libdevice functions ({', '.join(names)}) but no libdevice.10.bc was found: "
            "set CUDA_LIBDEVICE to its path (it ships with the CUDA toolkit under nvvm/libdevice/, and with "
            "triton under triton/backends/nvidia/lib/)")
    return libdevice


def _key(texts: Sequence[str], arch: str, features: str, opt: int, libdevice: str | None) -> str:
    return hashlib.sha256("\0".join([
        _COMPILER_VERSION, arch, features, str(opt), *texts, _file_digest(libdevice) if libdevice else "",
        _llvmlite_version()]).encode()).hexdigest()


def _write(path: Path, data: str | bytes) -> None:
    try:
        code_cache.write_atomic(path, data)
    except OSError:
        pass  # a read-only home is no reason to fail


def _llvmlite_version() -> str:
    import llvmlite

    return llvmlite.__version__


@lru_cache(maxsize=8)
def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def compile_workers() -> int:
    """How many processes compile kernels side by side: `MLIR_SYM_COMPILE_WORKERS`, else the cores
    (at most 8); 1 compiles in this process."""
    env = os.environ.get("MLIR_SYM_COMPILE_WORKERS")
    if env:
        return max(1, int(env))
    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


MIN_KERNELS_PER_WORKER = 2  # below this a worker's start (~0.1 s) costs more than its kernels


def kernels_per_worker(workers: int) -> tuple[int, int]:
    """(the fewest kernels a worker process gets, how many workers): MIN_KERNELS_PER_WORKER, or 1 for
    as many workers as were started ahead and are alive (`prestart`: their start overlapped the
    lowering, so a kernel of its own costs one request; the largest kernel alone then bounds the
    wait). `MLIR_SYM_PTX_KERNELS_PER_WORKER` sets the first."""
    env = os.environ.get("MLIR_SYM_PTX_KERNELS_PER_WORKER")
    if env:
        return max(1, int(env)), workers
    with _started_lock:
        ahead = sum(1 for p in _started if p.poll() is None)
    return (1, min(workers, ahead)) if ahead >= 2 else (MIN_KERNELS_PER_WORKER, workers)


def split_groups(texts: Sequence[str], workers: int, per_worker: int | None = None) -> list[list[str]]:
    """`texts` in at most `workers` groups of similar total size (largest first onto the lightest
    group), each keeping the input order, at least `per_worker` (MIN_KERNELS_PER_WORKER) texts a
    group; one group when there are too few to be worth a process."""
    n = min(workers, len(texts) // (MIN_KERNELS_PER_WORKER if per_worker is None else per_worker))
    if n <= 1:
        return [list(texts)]
    load = [0] * n
    member: list[list[int]] = [[] for _ in range(n)]
    for i in sorted(range(len(texts)), key=lambda i: -len(texts[i])):
        g = load.index(min(load))
        member[g].append(i)
        load[g] += len(texts[i])
    return [[texts[i] for i in sorted(m)] for m in member]


def compile_ptx_parts(llvm_ir: Sequence[str], *, arch: str = DEFAULT_ARCH, features: str = DEFAULT_FEATURES,
                      opt: int = 3, use_cache: bool = True, workers: int | None = None,
                      then: Callable[[str], object] | None = None) -> list[str]:
    """PTX modules for the kernels `llvm_ir` (one LLVM IR text each), compiled in groups side by side
    in worker processes (ptx_worker.py); each group is one PTX module, cached on its own. `then` runs
    on each module as soon as it is made, in the same thread (the GPU runtime assembles its cubin:
    one module's ptxas overlaps the others' PTX)."""
    per_worker, workers = kernels_per_worker(compile_workers() if workers is None else workers)
    groups = split_groups(list(llvm_ir), workers, per_worker)
    if len(groups) == 1:
        ptx = compile_ptx(groups[0], arch=arch, features=features, opt=opt, use_cache=use_cache)
        if then is not None:
            then(ptx)
        return [ptx]
    jobs = [_Job(g, arch, features, opt) for g in groups]

    def run(j: _Job) -> None:
        if not (use_cache and j.load()):
            j.ptx = _run_worker(j)
            if use_cache:
                j.store()
        if then is not None:
            then(j.ptx)

    with ThreadPoolExecutor(len(jobs)) as pool:  # each thread waits on its worker process
        list(pool.map(run, jobs))
    return [j.ptx for j in jobs]


class _Job:
    """One group of kernels: its cache entry and its PTX."""

    def __init__(self, texts: list[str], arch: str, features: str, opt: int) -> None:
        self.texts, self.arch, self.features, self.opt = texts, arch, features, opt
        self.libdevice = _libdevice_for(texts)
        self.path = cache_dir() / f"{_key(texts, arch, features, opt, self.libdevice)}.ptx"
        self.ptx = ""

    def load(self) -> bool:
        if self.path.is_file():
            self.ptx = self.path.read_text()
            return True
        return False

    def store(self) -> None:
        _write(self.path, self.ptx)


_WORKER = Path(__file__).with_name("ptx_worker.py")
_started: list[subprocess.Popen] = []  # workers started ahead (prestart), each waiting for one request
_started_lock = threading.Lock()


def _spawn(warm: bool) -> subprocess.Popen:
    args = [sys.executable, str(_WORKER)] + (["--warm", find_libdevice() or ""] if warm else [])
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _forget_started_in_child() -> None:
    """In a fork()ed child (a DataLoader worker): drop its copies of the idle workers' stdin pipes, so
    that they still see the end of input, and exit, when the process that started them does."""
    for p in _started:
        try:
            p.stdin.close()
        except OSError:
            pass
    _started.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_started_in_child)


def prestart(n: int | None = None) -> None:
    """Start worker processes now (up to `n`, default `compile_workers()`), so that their start,
    llvmlite's initialization and libdevice's parsing overlap the lowering of the kernels they will
    compile. Workers left unused wait for the next compile (and exit with this process)."""
    n = compile_workers() if n is None else n
    if n <= 1:
        return
    with _started_lock:
        _started[:] = [p for p in _started if p.poll() is None]
        try:
            while len(_started) < n:
                _started.append(_spawn(warm=True))
        except OSError as e:
            log.debug("cannot start PTX workers ahead: %s", e)


def _take_started() -> subprocess.Popen | None:
    """A worker started ahead that is still alive (one killed meanwhile, by the OOM killer or a
    terminal's Ctrl-C, is skipped), or None."""
    with _started_lock:
        while _started:
            p = _started.pop()
            if p.poll() is None:
                return p
    return None


def _ask(p: subprocess.Popen, req: str) -> tuple[str, str]:
    try:
        return p.communicate(req, timeout=600)
    except subprocess.TimeoutExpired as e:
        p.kill()
        p.communicate()
        raise PTXError(f"the PTX worker process failed: {e}") from None


def _run_worker(job: _Job) -> str:
    req = json.dumps({"texts": job.texts, "arch": job.arch, "features": job.features, "opt": job.opt,
                      "libdevice": job.libdevice})
    p = _take_started()
    try:
        out, err = _ask(p, req) if p is not None else ("", "")
        if p is None or (not out.strip() and p.returncode != 0):  # none ahead, or it died: a fresh one
            p = _spawn(warm=False)
            out, err = _ask(p, req)
    except OSError as e:
        raise PTXError(f"the PTX worker process failed: {e}") from None
    try:
        reply = json.loads(out)
    except ValueError:
        raise PTXError(f"the PTX worker process failed (exit {p.returncode}): {err.strip()[-2000:]}") from None
    if "error" in reply:
        raise PTXError(reply["error"])
    return reply["ptx"]
