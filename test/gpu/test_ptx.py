"""The GPU code generator without a GPU: sym-lower-to-nvvm, the host program and PTX (llvmlite's NVPTX
backend) on the CPU. Runs everywhere llvmlite has the NVPTX target."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("llvmlite")

from mlir_sym.codegen import ptx  # noqa: E402
from mlir_sym.context import make_context  # noqa: E402
from mlir_sym.gpu_compile import PIPELINE, lower_compute  # noqa: E402
from mlir_sym.pipelines import run_named  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LIT_INPUT = os.path.join(os.path.dirname(HERE), "Conversion", "to-nvvm.mlir")

EXP = """
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def _lower(text: str):
    from torch_mlir import ir

    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text)
        run_named(PIPELINE, module, ctx)
        return lower_compute(module, "main")


def _nvptx_available() -> bool:
    import llvmlite.binding as llvm

    try:
        llvm.initialize_all_targets()
        llvm.Target.from_triple(ptx.TRIPLE)
        return True
    except Exception:  # noqa: BLE001
        return False


needs_nvptx = pytest.mark.skipif(not _nvptx_available(), reason="llvmlite without the NVPTX backend")


def test_host_program_and_kernels():
    program, llvm_ir = _lower(open(LIT_INPUT).read())
    assert program.launches == 2 and len(program.kernels) == 2 and len(llvm_ir) == 2
    assert program.source.startswith("def host(")
    assert all("ptx_kernel" in t for t in llvm_ir)


@needs_nvptx
def test_ptx_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    _, llvm_ir = _lower(open(LIT_INPUT).read())
    text = ptx.compile_ptx(llvm_ir)
    assert ".entry main_kernel(" in text and "ld.global" in text and "shfl.sync" in text
    cached = list((tmp_path / "ptx").glob("*.ptx"))
    assert len(cached) == 1
    assert ptx.compile_ptx(llvm_ir) == text  # served from the cache


@needs_nvptx
def test_missing_libdevice_is_named(monkeypatch):
    _, llvm_ir = _lower(EXP)
    assert ptx.needs_libdevice(llvm_ir)
    monkeypatch.setattr(ptx, "find_libdevice", lambda: None)
    with pytest.raises(ptx.PTXError, match=r"__nv_expf.*CUDA_LIBDEVICE"):
        ptx.compile_ptx(llvm_ir, use_cache=False)


@needs_nvptx
def test_libdevice_linked_when_found():
    if ptx.find_libdevice() is None:
        pytest.skip("no libdevice on this machine")
    _, llvm_ir = _lower(EXP)
    text = ptx.compile_ptx(llvm_ir, use_cache=False)
    assert "__nv_expf" not in text and "ex2.approx" in text  # inlined from libdevice


def test_float_literals_by_bits_parse():
    """torch-mlir's LLVM prints some float constants by their bits (`f0x3FB504F3`); llvmlite's parser
    wants the double-format hex form for float, 0xR for bfloat."""
    text = ptx._fix_special_floats("  %9 = fdiv float %8, f0x3FB504F3\n  %a = fadd bfloat %b, f0x3F80\n")
    assert "0x3FF6A09E60000000" in text and "0xR3F80" in text and "f0x" not in text


def test_bf16_kernel_parameter_bits():
    import torch

    from mlir_sym.runtime.cuda import Runtime

    for v in (1.0, 3.14159, -2.5e-3, 1e38, float("inf"), 65504.0):
        assert Runtime.bf16_bits(v) == torch.tensor(v, dtype=torch.bfloat16).view(torch.int16).item() & 0xFFFF


def test_library_matmul_reads_transposed_views():
    """sym-gpu-library-calls passes nn.Linear's weight as a transposed view: the runtime's contractions
    (matmul and batch_matmul calls as einsums; torch's path here, cuBLAS on the GPU) take it as it is."""
    import torch

    from mlir_sym.runtime.cuda import Runtime

    x, w = torch.randn(5, 16), torch.randn(8, 16)
    c = torch.empty(5, 8)
    Runtime.torch_einsum(True, "ik,kj->ij", x, w.permute(1, 0), c)
    torch.testing.assert_close(c, x @ w.t())
    Runtime.torch_einsum(False, "ik,kj->ij", x, w.permute(1, 0), c)
    torch.testing.assert_close(c, 2 * (x @ w.t()))
    xb, wb = torch.randn(3, 5, 16), torch.randn(3, 8, 16)
    cb = torch.empty(3, 5, 8)
    Runtime.torch_einsum(True, "bik,bkj->bij", xb, wb.permute(0, 2, 1), cb)
    torch.testing.assert_close(cb, xb @ wb.transpose(1, 2))


CONSTANT_COPY = """
memref.global "private" constant @__constant_3xi64 : memref<3xi64> = dense<[4, 0, 7]>
memref.global "private" constant @__splat : memref<2xf32> = dense<1.5>
func.func @main(%out: memref<3xi64>, %out2: memref<2xf32>) -> i32 {
  %ok = arith.constant 0 : i32
  %g = memref.get_global @__constant_3xi64 : memref<3xi64>
  memref.copy %g, %out : memref<3xi64> to memref<3xi64>
  %s = memref.get_global @__splat : memref<2xf32>
  memref.copy %s, %out2 : memref<2xf32> to memref<2xf32>
  return %ok : i32
}
"""


def test_host_program_reads_constant_buffers():
    """A constant buffer (memref.global) read on the host becomes a tensor the runtime puts on the
    device once (here: the CPU) and the program reads as C_<name>; a copy of a splat constant is a
    fill (it writes the destination and reads nothing)."""
    import torch
    from torch_mlir import ir

    from mlir_sym.codegen.host import HostCodegen

    ctx = make_context()
    with ctx:
        module = ir.Module.parse(CONSTANT_COPY)
        fn = next(o for o in module.body.operations if o.operation.name == "func.func")
        program = HostCodegen(fn).build("host")
    assert program.constants["__constant_3xi64"] == {"dtype": "int64", "shape": [3], "values": [4, 0, 7]}
    # one value repeated, only copied from: a fill of the destination, the constant never on the device
    assert "__splat" not in program.constants
    assert ".fill_(1.5)" in program.source and "C___splat" not in program.source
    ns = {"C___constant_3xi64": torch.tensor([4, 0, 7])}
    exec(program.source, ns)  # noqa: S102 - the generated program
    out, out2 = torch.zeros(3, dtype=torch.int64), torch.zeros(2)
    assert ns["host"](out, out2) == 0
    assert out.tolist() == [4, 0, 7] and out2.tolist() == [1.5, 1.5]


def test_split_groups_balances_and_keeps_order():
    texts = ["a" * 50, "b" * 10, "c" * 40, "d" * 20, "e" * 30, "f" * 5]
    groups = ptx.split_groups(texts, 2)
    assert sorted(t for g in groups for t in g) == sorted(texts)
    assert [sum(map(len, g)) for g in groups] == [80, 75]  # largest first onto the lightest group
    assert all(g == sorted(g, key=texts.index) for g in groups)
    assert ptx.split_groups(texts, 1) == [texts]
    assert ptx.split_groups(texts[:3], 8) == [texts[:3]]  # too few kernels to be worth a process


def test_a_kernel_a_worker_when_workers_were_started_ahead(monkeypatch):
    """Workers started ahead take one kernel each (the largest alone bounds the wait): 6 kernels on 8
    workers are 6 groups, not 3; without workers ahead a worker still gets at least 2."""
    texts = ["a" * 50, "b" * 10, "c" * 40, "d" * 20, "e" * 30, "f" * 5]
    assert [len(g) for g in ptx.split_groups(texts, 8, 1)] == [1] * 6
    assert len(ptx.split_groups(texts, 8)) == 3

    class Alive:
        def poll(self):
            return None

    monkeypatch.delenv("MLIR_SYM_PTX_KERNELS_PER_WORKER", raising=False)
    monkeypatch.setattr(ptx, "_started", [])
    assert ptx.kernels_per_worker(8) == (ptx.MIN_KERNELS_PER_WORKER, 8)
    monkeypatch.setattr(ptx, "_started", [Alive(), Alive(), Alive()])
    assert ptx.kernels_per_worker(8) == (1, 3)  # a kernel each for the workers started ahead only
    monkeypatch.setenv("MLIR_SYM_PTX_KERNELS_PER_WORKER", "3")
    assert ptx.kernels_per_worker(8) == (3, 8)


@needs_nvptx
def test_ptx_parts_compile_in_worker_processes(tmp_path, monkeypatch):
    """Kernels in groups, each compiled by ptx_worker.py in a process of its own: the same PTX as
    compiling the group here, each group cached on its own."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ptx, "MIN_KERNELS_PER_WORKER", 1)
    program, llvm_ir = _lower(open(LIT_INPUT).read())
    parts = ptx.compile_ptx_parts(llvm_ir, workers=2)
    assert len(parts) == 2
    groups = ptx.split_groups(llvm_ir, 2)
    assert parts == [ptx.compile_ptx(g, use_cache=False) for g in groups]
    entries = [set(ptx_re_entries(p)) for p in parts]
    assert entries[0].isdisjoint(entries[1]) and entries[0] | entries[1] == set(program.kernels)
    assert len(list((tmp_path / "ptx").glob("*.ptx"))) == 2
    assert ptx.compile_ptx_parts(llvm_ir, workers=2) == parts  # from the cache
    # `then` (the GPU runtime's ptxas) gets each module as it is made, made or cached, in worker
    # threads; single-group compiles too
    seen: list = []
    assert ptx.compile_ptx_parts(llvm_ir, workers=2, then=seen.append) == parts
    assert sorted(seen) == sorted(parts)
    seen.clear()
    one = ptx.compile_ptx_parts(llvm_ir, workers=1, then=seen.append)
    assert seen == one and len(one) == 1


@needs_nvptx
def test_workers_started_ahead_compile_the_same_ptx(tmp_path, monkeypatch):
    """Workers started before the kernels exist (ptx.prestart: LLVM initialized, libdevice parsed
    while they wait) take the next jobs and give the PTX a fresh worker gives; unused ones exit."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ptx, "MIN_KERNELS_PER_WORKER", 1)
    monkeypatch.setattr(ptx, "_started", [])  # not the ones earlier compiles in this process started
    _, llvm_ir = _lower(open(LIT_INPUT).read())
    ptx.prestart(3)
    started = list(ptx._started)
    assert len(started) == 3
    parts = ptx.compile_ptx_parts(llvm_ir, workers=2, use_cache=False)
    assert len(ptx._started) == 1  # two taken
    assert parts == [ptx.compile_ptx(g, use_cache=False) for g in ptx.split_groups(llvm_ir, 2)]
    left = ptx._started.pop()
    left.stdin.close()  # as when this process exits: the worker leaves quietly
    assert left.wait(timeout=60) == 0
    # workers started ahead that died meanwhile (OOM killer, Ctrl-C) are replaced by fresh ones
    ptx.prestart(2)
    for p in ptx._started:
        p.kill()
        p.wait()
    assert ptx.compile_ptx_parts(llvm_ir, workers=2, use_cache=False) == parts


@needs_nvptx
def test_a_worker_failure_is_a_ptx_error(monkeypatch):
    monkeypatch.setattr(ptx, "MIN_KERNELS_PER_WORKER", 1)
    with pytest.raises(ptx.PTXError, match="invalid LLVM IR"):
        ptx.compile_ptx_parts(["this is not LLVM IR", "nor this"], workers=2, use_cache=False)


def ptx_re_entries(text: str) -> list[str]:
    import re

    return re.findall(r"\.entry\s+(\w+)\s*\(", text)


def test_nan_spellings_parse():
    """torch-mlir's LLVM prints a NaN constant as `nan`, `+nan` or `+qnan` (a select of NaN in the
    arg-reductions): each becomes the double-format hex form llvmlite's parser takes."""
    text = ptx._fix_special_floats("  %1 = select i1 %0, float +qnan, float %2\n  %3 = fadd float nan, -qnan\n")
    assert "qnan" not in text and " nan" not in text
    assert text.count("0x7FF8000000000000") == 2 and "0xFFF8000000000000" in text
