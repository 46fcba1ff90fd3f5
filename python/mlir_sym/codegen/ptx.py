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
import os
import re
import struct
import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from torch_mlir import ir

DEFAULT_ARCH = "sm_90"
DEFAULT_FEATURES = "+ptx80"
TRIPLE = "nvptx64-nvidia-cuda"
DATALAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
_COMPILER_VERSION = "1"  # bump when the emitted code for the same input changes

_lock = threading.Lock()
_llvm_ready = False


class PTXError(RuntimeError):
    """LLVM IR could not be turned into PTX (no libdevice, invalid IR, backend failure)."""


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
            "nan": "0x7FF8000000000000", "+nan": "0x7FF8000000000000", "-nan": "0xFFF8000000000000"}
_SPECIAL_RE = re.compile(r"(?<![\w%@.$\"-])([+-]?inf|[+-]?nan)(?![\w.\"])")


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
    d = os.environ.get("MLIR_SYM_CACHE_DIR")
    base = Path(d) if d else Path.home() / ".cache" / "mlir_sym"
    return base / "ptx"


def compile_ptx(llvm_ir: str | Sequence[str], *, arch: str = DEFAULT_ARCH, features: str = DEFAULT_FEATURES,
                opt: int = 3, use_cache: bool = True) -> str:
    """PTX text for `llvm_ir`: one LLVM IR module or several (linked into one), kernels with the
    ptx_kernel calling convention."""
    libdevice = find_libdevice() if needs_libdevice(llvm_ir) else None
    if needs_libdevice(llvm_ir) and libdevice is None:
        names = sorted({w.split("(")[0] for t in _texts(llvm_ir) for w in t.split("@")[1:] if w.startswith("__nv_")})
        raise PTXError(
            f"the kernels call libdevice functions ({', '.join(names)}) but no libdevice.10.bc was found: "
            "set CUDA_LIBDEVICE to its path (it ships with the CUDA toolkit under nvvm/libdevice/, and with "
            "triton under triton/backends/nvidia/lib/)")
    key = hashlib.sha256("\0".join([
        _COMPILER_VERSION, arch, features, str(opt), *_texts(llvm_ir), _file_digest(libdevice) if libdevice else "",
        _llvmlite_version()]).encode()).hexdigest()
    path = cache_dir() / f"{key}.ptx"
    if use_cache and path.is_file():
        return path.read_text()
    ptx = _compile(_texts(llvm_ir), arch, features, opt, libdevice)
    if use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(ptx)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home is no reason to fail
    return ptx


def _llvmlite_version() -> str:
    import llvmlite

    return llvmlite.__version__


@lru_cache(maxsize=8)
def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@lru_cache(maxsize=2)
def _libdevice_bitcode(path: str) -> bytes:
    return Path(path).read_bytes()


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


def _compile(texts: list[str], arch: str, features: str, opt: int, libdevice: str | None) -> str:
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
        lib = llvm.parse_bitcode(_libdevice_bitcode(libdevice))
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
    mod.verify()
    if opt:
        pto = llvm.PipelineTuningOptions(speed_level=min(opt, 3))
        pb = llvm.create_pass_builder(tm, pto)
        mpm = pb.getModulePassManager()
        mpm.run(mod, pb)
    return tm.emit_assembly(mod)
