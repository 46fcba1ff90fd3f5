"""codegen/cubin.py: PTX modules assembled to cubins by ptxas side by side, cached, and loaded by the
runtime; a module ptxas fails on stays PTX (the driver compiles it). The fake-ptxas tests run anywhere;
the last one needs a GPU and a real ptxas."""
from __future__ import annotations

import logging
import re
import stat

import pytest

torch = pytest.importorskip("torch")

from mlir_sym.codegen import cubin  # noqa: E402


def _fake_ptxas(tmp_path, body: str) -> str:
    """A ptxas stand-in: a shell script that records each call and runs `body` ($OUT: the -o file)."""
    path = tmp_path / "ptxas"
    path.write_text("#!/bin/sh\n"
                    "[ \"$1\" = --version ] && { echo 'fake ptxas 1.0'; exit 0; }\n"
                    f"echo call >> {tmp_path}/calls\n"
                    "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && OUT=$2; shift; done\n"
                    f"{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _calls(tmp_path) -> int:
    p = tmp_path / "calls"
    return len(p.read_text().splitlines()) if p.exists() else 0


def test_assemble_runs_ptxas_per_module_and_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path / "cache"))
    ptxas = _fake_ptxas(tmp_path, 'printf built > "$OUT"')
    out = cubin.assemble(["// a", "// b", "// c"], "sm_90", ptxas=ptxas, workers=3)
    assert out == [b"built"] * 3 and _calls(tmp_path) == 3
    assert len(list((tmp_path / "cache" / "cubin").glob("*.cubin"))) == 3
    assert cubin.assemble(["// a", "// b", "// c"], "sm_90", ptxas=ptxas) == out
    assert _calls(tmp_path) == 3  # all three from the cache
    cubin.assemble(["// a"], "sm_80", ptxas=ptxas)
    assert _calls(tmp_path) == 4  # another target is another cubin


def test_a_module_ptxas_fails_on_stays_ptx(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path / "cache"))
    ptxas = _fake_ptxas(tmp_path, 'echo "ptxas fatal: bad PTX" >&2; exit 2')
    with caplog.at_level(logging.WARNING, logger="mlir_sym.codegen"):
        assert cubin.assemble(["// a", "// b"], "sm_90", ptxas=ptxas) == [None, None]
    assert "ptxas failed (exit 2)" in caplog.text and "bad PTX" in caplog.text
    assert not list((tmp_path / "cache").rglob("*.cubin"))  # failures are not cached


def test_no_ptxas_means_no_cubins(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIR_SYM_PTXAS", "0")
    cubin.find_ptxas.cache_clear()
    try:
        assert cubin.find_ptxas() is None
        assert cubin.assemble(["// a"], "sm_90") == [None]
        monkeypatch.setenv("MLIR_SYM_PTXAS", _fake_ptxas(tmp_path, "exit 0"))
        cubin.find_ptxas.cache_clear()
        assert cubin.find_ptxas() == str(tmp_path / "ptxas")
    finally:
        cubin.find_ptxas.cache_clear()


needs_gpu_ptxas = pytest.mark.skipif(not torch.cuda.is_available() or cubin.find_ptxas() is None,
                                     reason="needs a CUDA GPU and ptxas")


@needs_gpu_ptxas
def test_cubins_load_and_run_and_a_bad_cubin_falls_back_to_ptx(tmp_path, monkeypatch, caplog):
    """A compiled graph's modules assembled by the real ptxas load and compute what eager does; a
    corrupt cubin is reported and its PTX loaded instead."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    from mlir_sym.runtime.cuda import CudaModule

    def f(x, y):
        return torch.softmax(x * 2 + y, dim=-1).sum(0)

    x, y = torch.randn(37, 101, device="cuda"), torch.randn(37, 101, device="cuda")
    cf = torch.compile(f, backend="mlir_sym", dynamic=True)
    torch.testing.assert_close(cf(x, y), f(x, y))
    assert list((tmp_path / "cubin").glob("*.cubin"))  # the graph's modules went through ptxas
    code_parts = [p.read_text() for p in sorted((tmp_path / "ptx").glob("*.ptx"))]
    entries = {e for p in code_parts for e in re.findall(r"\.entry\s+(\w+)\s*\(", p)}
    kernels = {e: [] for e in entries}
    good = cubin.assemble(code_parts, "sm_%d%d" % torch.cuda.get_device_capability())
    assert all(isinstance(c, bytes) and c[:4] == b"\x7fELF" for c in good)
    assert set(CudaModule(code_parts, kernels, torch.device("cuda"), cubins=good).kernels) == entries
    with caplog.at_level(logging.WARNING, logger="mlir_sym.runtime"):
        mod = CudaModule(code_parts, kernels, torch.device("cuda"), cubins=[b"not a cubin"] * len(code_parts))
    assert set(mod.kernels) == entries and "the cubin did not load" in caplog.text
