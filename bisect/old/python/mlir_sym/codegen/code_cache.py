"""A disk cache of generated GPU code (guard function, host program, PTX), so that a second process
compiling the same graph skips lowering and code generation and is left with capture and loading.

Entries are JSON files under `$MLIR_SYM_CACHE_DIR/code` (default ~/.cache/mlir_sym/code), named by a
SHA-256 over what determines the code: the imported module (with locations, which error messages
name), the variant, the pipelines' text, the target, and the compiler itself (the sources of
mlir_sym, and the versions of torch-mlir, llvmlite and torch). `MLIR_SYM_CODE_CACHE=0` turns it off.
Writes are atomic (a temporary file renamed); an unreadable or corrupt entry is a miss.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger("mlir_sym.compile")


def enabled() -> bool:
    return os.environ.get("MLIR_SYM_CODE_CACHE", "1") != "0"


def cache_root() -> Path:
    """Where every disk cache of mlir_sym lives: `$MLIR_SYM_CACHE_DIR`, default ~/.cache/mlir_sym."""
    d = os.environ.get("MLIR_SYM_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "mlir_sym"


def cache_dir() -> Path:
    return cache_root() / "code"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `path` through a temporary file and a rename, so that a reader (another process) sees the
    whole entry or none. OSError is the caller's to handle."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data)
    os.replace(tmp, path)


@lru_cache(maxsize=1)
def compiler_digest() -> str:
    """The compiler's identity: every source file of mlir_sym and the versions it builds on."""
    import importlib.metadata as md

    import mlir_sym

    h = hashlib.sha256()
    roots = [Path(p) for p in mlir_sym.__path__]
    for sub in ("passes", "dialects"):  # mapped packages (pyproject.toml) live beside python/
        try:
            mod = __import__(f"mlir_sym.{sub}", fromlist=["_"])
            roots += [Path(p) for p in mod.__path__]
        except ImportError:
            pass
    for root in roots:
        for f in sorted(root.rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    for dist in ("torch-mlir", "llvmlite", "torch"):
        try:
            h.update(f"{dist}={md.version(dist)}".encode())
        except md.PackageNotFoundError:
            h.update(f"{dist}=?".encode())
    return h.hexdigest()


def key(*parts: Any) -> str:
    h = hashlib.sha256(compiler_digest().encode())
    for p in parts:
        h.update(b"\0" + str(p).encode())
    return h.hexdigest()


def load(k: str) -> dict | None:
    if not enabled():
        return None
    path = cache_dir() / f"{k}.json"
    try:
        with open(path) as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    log.info("GPU code cache hit %s", k[:16])
    return entry


def store(k: str, entry: dict) -> None:
    if not enabled():
        return
    path = cache_dir() / f"{k}.json"
    try:
        write_atomic(path, json.dumps(entry))
    except OSError as e:  # a read-only home is no reason to fail
        log.debug("GPU code cache not written: %s", e)
