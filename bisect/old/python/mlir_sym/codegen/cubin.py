"""PTX -> cubin with `ptxas`, several modules side by side, cached on disk.

The driver JIT-compiles PTX in `cuModuleLoadData`, one module at a time however many threads call it
(a GPT-2 graph's kernels took ~2 s to load). When a `ptxas` is at hand, `assemble` runs one ptxas
process per PTX module in parallel and the runtime loads the cubins, which costs next to nothing;
the cubins are cached by a hash of the PTX, the target and ptxas's version. Without ptxas (it is
optional: the driver JIT is always there) or when it fails on a module, that module stays PTX and the
driver compiles it, as before; the reason is logged.

ptxas is looked up in: `$MLIR_SYM_PTXAS` (a path; `0` turns assembling off), triton's bundled copy,
`$CUDA_HOME`/`$CUDA_PATH`/`/usr/local/cuda*` `/bin/ptxas`, then `PATH`.
"""
from __future__ import annotations

import glob
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from mlir_sym.codegen import code_cache

log = logging.getLogger("mlir_sym.codegen")


@lru_cache(maxsize=1)
def find_ptxas() -> str | None:
    env = os.environ.get("MLIR_SYM_PTXAS")
    if env is not None:
        return env if env not in ("", "0") and os.access(env, os.X_OK) else None
    candidates: list[str] = []
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        if spec and spec.submodule_search_locations:
            for base in spec.submodule_search_locations:
                candidates.append(os.path.join(base, "backends", "nvidia", "bin", "ptxas"))
    except Exception:  # noqa: BLE001 - triton is optional
        pass
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    roots += sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    candidates += [os.path.join(r, "bin", "ptxas") for r in roots if r]
    on_path = shutil.which("ptxas")
    if on_path:
        candidates.append(on_path)
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


@lru_cache(maxsize=4)
def _ptxas_version(ptxas: str) -> str:
    try:
        return subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cache_dir() -> Path:
    return code_cache.cache_root() / "cubin"


def assemble(ptx_parts: Sequence[str], arch: str, *, ptxas: str | None = None, workers: int = 8,
             use_cache: bool = True) -> list[bytes | None]:
    """A cubin for each PTX module of `ptx_parts` (for `arch`, e.g. "sm_90"), or None where there is
    none (no ptxas, or ptxas failed on it: the driver compiles that module's PTX instead)."""
    ptxas = ptxas or find_ptxas()
    if ptxas is None or not ptx_parts:
        return [None] * len(ptx_parts)
    version = _ptxas_version(ptxas)
    paths = [cache_dir() / f"{hashlib.sha256(chr(0).join([arch, version, p]).encode()).hexdigest()}.cubin"
             for p in ptx_parts]
    out: list[bytes | None] = [None] * len(ptx_parts)
    misses = []
    for i, path in enumerate(paths):
        if use_cache and path.is_file():
            out[i] = path.read_bytes()
        else:
            misses.append(i)
    if misses:
        with ThreadPoolExecutor(max(1, min(workers, len(misses)))) as pool:  # each waits on a ptxas process
            for i, cubin in zip(misses, pool.map(lambda i: _run_ptxas(ptxas, ptx_parts[i], arch), misses)):
                out[i] = cubin
                if cubin is not None and use_cache:
                    _write(paths[i], cubin)
    return out


def _run_ptxas(ptxas: str, ptx: str, arch: str) -> bytes | None:
    with tempfile.TemporaryDirectory(prefix="mlir_sym_ptxas_") as d:
        src, dst = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        Path(src).write_text(ptx)
        try:
            p = subprocess.run([ptxas, f"-arch={arch}", "-O3", "-o", dst, src], capture_output=True, text=True,
                               timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            log.warning("ptxas could not run (%s); the driver compiles the PTX instead", e)
            return None
        if p.returncode != 0 or not os.path.isfile(dst):
            log.warning("ptxas failed (exit %d); the driver compiles the PTX instead: %s", p.returncode,
                        p.stderr.strip()[-1000:])
            return None
        return Path(dst).read_bytes()


def _write(path: Path, data: str | bytes) -> None:
    try:
        code_cache.write_atomic(path, data)
    except OSError:
        pass  # a read-only home is no reason to fail
