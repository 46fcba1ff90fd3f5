"""From an AOTAutograd graph (with its ShapeEnv) to a compiled CUDA artifact: the GPU counterpart of
capture.compile_graph.

import (importer.py) -> split guards / compute (pipelines.py) -> guards: `guards-to-llvm`, JIT on the
CPU (runtime/cpu.py, as for the CPU path) -> compute: `torch-to-linalg`, then `sym-lower-to-nvvm`
(destination passing, fusion, bufferization, cuBLAS calls for matmuls, parallel loops mapped onto
linearized 1-D launches, kernel outlining, NVVM) -> the gpu.modules: LLVM IR -> PTX (codegen/ptx.py,
llvmlite) -> the host function: Python source (codegen/host.py) -> runtime/cuda.py loads the PTX and
binds the host program -> Artifact (runtime/artifact.py), whose outputs torch allocates on the device.

One compilation serves every size: grid sizes, buffer sizes and kernel arguments are computed from
the symbol values of each call; nothing is recompiled per size.

Command line (for tests and inspection), on linalg-on-tensors input such as torch-to-linalg's output:
    python -m mlir_sym.gpu_compile INPUT.mlir [--emit=mlir|host|llvm|ptx] [--func=main]
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
import dataclasses
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.fx as fx
from torch_mlir import ir

from mlir_sym.capture import (
    CompileStats, UnsupportedOpError, _assert_msgs, _func, build_artifact, check_supported, torch_to_linalg,
    compile_variants, variant_modules, variant_specs,
)
from mlir_sym import timing
from mlir_sym.codegen import code_cache, cubin
from mlir_sym.codegen import ptx as ptx_codegen
from mlir_sym.codegen.host import HostCodegen, HostCodegenError, HostProgram, KernelParam
from mlir_sym.importer import ImportedGraph, import_graph
from mlir_sym.passes.sym_to_arith import lowered_check_table
from mlir_sym.pipelines import PIPELINES, LoweringError, run_named
from mlir_sym.runtime.artifact import Artifact, Variant
from mlir_sym.runtime.cpu import JitModule, ScalarCall

log = logging.getLogger("mlir_sym.compile")
ir_log = logging.getLogger("mlir_sym.ir")

PIPELINE = "sym-lower-to-nvvm"


def graph_device(gm: fx.GraphModule, example_inputs: Sequence | None = None) -> torch.device:
    for t in example_inputs or ():
        if isinstance(t, torch.Tensor) and t.device.type == "cuda":
            return t.device
    for n in gm.graph.nodes:
        v = n.meta.get("val") if n.op == "placeholder" else None
        if isinstance(v, torch.Tensor) and v.device.type == "cuda":
            return v.device
    return torch.device("cuda", torch.cuda.current_device() if torch.cuda.is_available() else 0)


def compile_graph(
    gm: fx.GraphModule,
    *,
    name: str = "main",
    specializations: Sequence[dict[str, int]] = (),
    specialize_hints: bool = False,
    device: torch.device | None = None,
) -> tuple[Artifact, ImportedGraph, CompileStats]:
    """Compile `gm` for the GPU: same contract as capture.compile_graph (variants included)."""
    device = device or graph_device(gm)
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    stats = CompileStats()
    t0 = time.perf_counter()
    with _factories_on_cpu(gm), timing.phase("import"):
        ig = import_graph(gm, func_name=name, target="gpu")
    stats.import_s = time.perf_counter() - t0
    check_supported(ig)
    source_ir = ig.module.operation.get_asm(large_elements_limit=16)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    cpu_inputs = [i for i, n in enumerate(placeholders)
                  if isinstance(n.meta.get("val"), torch.Tensor) and n.meta["val"].device.type == "cpu"]
    variants = compile_variants(ig, name, variant_specs(ig, specializations, specialize_hints),
                                lambda spec: _compile_variant(ig, name, spec, stats, device, cpu_inputs))
    artifact = build_artifact(ig, name, variants, source_ir, stats, device)
    artifact.gpu = variants[-1].keepalive["gpu"]  # generic variant: host source, PTX, kernels (inspection)
    log.info("compiled %s for %s (%d variants, %d kernels): import %.3fs, lower %.3fs, ptx+load %.3fs",
             name, device, len(variants), len(artifact.gpu["kernels"]), stats.import_s, stats.lower_s, stats.jit_s)
    return artifact, ig, stats


@contextlib.contextmanager
def _factories_on_cpu(gm: fx.GraphModule):
    """While importing: factory ops of the graph (empty, full, arange, scalar_tensor, ...) name the CPU
    as their device. torch-mlir's lowering refuses other devices, and the device is the runtime's
    business here (every buffer the compute makes is allocated on the artifact's device), and constant
    tensors the graph holds on the GPU are read from CPU copies. The graph is restored afterwards: the
    backend may still run it eagerly."""
    from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

    saved = []
    attrs = []
    for n in gm.graph.nodes:
        dev = n.kwargs.get("device") if n.op == "call_function" else None
        if isinstance(dev, (torch.device, str)) and torch.device(dev).type == "cuda":
            saved.append((n, n.kwargs))
            n.kwargs = {**n.kwargs, "device": torch.device("cpu")}
        if n.op == "get_attr":  # a constant tensor on the GPU: torch-mlir reads it with tolist(), a copy
            owner, _, name = n.target.rpartition(".")  # to the CPU that the active fake mode would intercept
            mod = gm.get_submodule(owner) if owner else gm
            t = getattr(mod, name, None)
            if isinstance(t, torch.Tensor) and not isinstance(t, FakeTensor) and t.device.type == "cuda":
                with unset_fake_temporarily():
                    attrs.append((mod, name, t))
                    setattr(mod, name, t.cpu())
    try:
        yield
    finally:
        for n, kw in saved:
            n.kwargs = kw
        for mod, name, t in attrs:
            setattr(mod, name, t)


@dataclass
class GpuCode:
    """One variant's generated code, made on the CPU without touching a GPU: the guard function (LLVM
    dialect, JIT-compiled on the CPU), the host program, and the kernels' PTX."""

    label: str
    guards: ir.Module
    checks: list
    assert_msgs: list[str]
    program: HostProgram
    llvm_ir: list[str]
    ptx_parts: list[str]  # PTX modules (the kernels compiled in groups side by side, codegen/ptx.py)

    @property
    def ptx(self) -> str:
        """All the PTX, one module after another (for reading; each part is loaded on its own)."""
        return "\n".join(self.ptx_parts)

    def to_json(self) -> dict:
        """A JSON-able form (the disk caches'); `from_json` inverts it (the LLVM IR is not kept)."""
        p = self.program
        return {
            "label": self.label, "guards": self.guards.operation.get_asm(enable_debug_info=True),
            "checks": [list(c) for c in self.checks], "assert_msgs": self.assert_msgs,
            "program": {"source": p.source, "launches": p.launches, "constants": p.constants,
                        "library_calls": p.library_calls,
                        "kernels": {k: [dataclasses.asdict(q) for q in qs] for k, qs in p.kernels.items()}},
            "ptx_parts": self.ptx_parts}

    @staticmethod
    def from_json(d: dict) -> "GpuCode":
        """Under the MLIR context the guard module is to be parsed in."""
        p = d["program"]
        program = HostProgram(p["source"], {k: [KernelParam(**q) for q in qs] for k, qs in p["kernels"].items()},
                              p["launches"], p["library_calls"], p.get("constants", {}))
        return GpuCode(d["label"], ir.Module.parse(d["guards"]), [tuple(c) for c in d["checks"]],
                       d["assert_msgs"], program, [], d["ptx_parts"])


def codegen_variant(ig: ImportedGraph, name: str, spec: dict[str, int], stats: CompileStats,
                    cubin_arch: str | None = None) -> GpuCode:
    """Lower one variant down to PTX and the host program (everything but loading it on a device).
    The result is cached on disk by a hash of the imported module, the variant and the compiler
    (code_cache.py): a second process compiling the same graph skips lowering and PTX. With
    `cubin_arch` ("sm_90"), each PTX module is also assembled (ptxas, into its disk cache) as soon as
    it is made, beside the other modules' PTX, so that loading finds the cubins made."""
    with timing.phase("code-cache-key"):
        key = code_cache.key(ig.module.operation.get_asm(enable_debug_info=True), name, sorted(spec.items()),
                             PIPELINES[PIPELINE], PIPELINES["guards-to-llvm"], ptx_codegen.DEFAULT_ARCH)
    t0 = time.perf_counter()
    with timing.phase("code-cache-load"):
        hit = code_cache.load(key)
    if hit is not None:
        with ig.context:
            code = GpuCode.from_json(hit)
        stats.lower_s += time.perf_counter() - t0
        stats.extra["code_cache_hits"] = stats.extra.get("code_cache_hits", 0) + 1
        return code
    code = _codegen_variant(ig, name, spec, stats, cubin_arch)
    code_cache.store(key, code.to_json())
    return code


def _codegen_variant(ig: ImportedGraph, name: str, spec: dict[str, int], stats: CompileStats,
                     cubin_arch: str | None = None) -> GpuCode:
    ctx = ig.context
    ptx_codegen.prestart()  # PTX workers start (llvmlite, libdevice) while the kernels are lowered
    label, guards_mod, compute_mod = variant_modules(ig, spec)
    t1 = time.perf_counter()
    with ctx:
        with timing.phase("torch-to-linalg"):
            torch_to_linalg(ig, compute_mod, specialized=bool(spec))
        try:
            with timing.phase("sym-lower-to-nvvm"):
                run_named(PIPELINE, compute_mod, ctx)
        except LoweringError as e:
            raise UnsupportedOpError(f"cannot lower graph {name} for the GPU: {e}") from None
        assert_msgs = _assert_msgs(compute_mod, name)
        with timing.phase("llvm-ir"):
            llvm_ir = kernels_llvm_ir(compute_mod)
        # PTX is made in worker processes (or by llvmlite, which releases the GIL): the host program
        # is generated and the guard function lowered meanwhile
        t2 = time.perf_counter()
        with ThreadPoolExecutor(1) as pool:
            def assemble(ptx: str) -> None:  # this module's cubin, while the others' PTX is made
                cubin.assemble([ptx], cubin_arch, workers=1)

            ptx_future = pool.submit(ptx_codegen.compile_ptx_parts, llvm_ir,
                                     then=assemble if cubin_arch else None) if llvm_ir else None
            with timing.phase("host-program"):
                program = host_program(compute_mod, name)
            with timing.phase("guards-to-llvm"):
                run_named("guards-to-llvm", guards_mod, ctx)
            checks = lowered_check_table(guards_mod)  # ids after the guard passes erased/reordered
            for op in list(guards_mod.body.operations):  # symbol declarations have no LLVM form
                if op.operation.name == "sym.symbol":
                    op.operation.erase()
            with timing.phase("ptx-wait"):
                ptx = ptx_future.result() if ptx_future is not None else []
    stats.lower_s += t2 - t1
    stats.extra.setdefault("ptx_s", 0.0)
    stats.extra["ptx_s"] += time.perf_counter() - t2
    stats.extra["kernels"] = stats.extra.get("kernels", 0) + program.launches  # launch sites (kernels may repeat)
    stats.extra["kernels_compiled"] = stats.extra.get("kernels_compiled", 0) + len(llvm_ir)
    return GpuCode(label, guards_mod, checks, assert_msgs, program, llvm_ir, ptx)


def _compile_variant(ig: ImportedGraph, name: str, spec: dict[str, int], stats: CompileStats,
                     device: torch.device, cpu_inputs: Sequence[int] = ()) -> Variant:
    major, minor = torch.cuda.get_device_capability(device)
    code = codegen_variant(ig, name, spec, stats, cubin_arch=f"sm_{major}{minor}")
    t2 = time.perf_counter()
    variant = load_variant(code, len(ig.sources), ig.context, device, cpu_inputs, name)
    stats.jit_s += time.perf_counter() - t2
    return variant


def load_variant(code: GpuCode, n_sources: int, ctx: ir.Context, device: torch.device,
                 cpu_inputs: Sequence[int] = (), name: str = "main") -> Variant:
    """Make `code` runnable on `device`: JIT the guard function on the CPU, load the PTX, bind the host
    program."""
    from mlir_sym.runtime.cuda import CudaModule, HostCall, Runtime  # CUDA stays in runtime/cuda.py

    with timing.phase("guard-jit"):
        guard_jit = JitModule(code.guards)
    program = code.program
    if program.kernels:
        with timing.phase("ptxas"):
            major, minor = torch.cuda.get_device_capability(device)
            cubins = cubin.assemble(code.ptx_parts, f"sm_{major}{minor}", workers=ptx_codegen.compile_workers())
        with timing.phase("module-load"):
            cmod = CudaModule(code.ptx_parts, program.kernels, device, cubins)
    else:
        cmod = _NoKernels(device)
    with timing.phase("host-exec"):
        host = HostCall(program.source, "host", cmod, Runtime(device), cpu_inputs, program.constants)
    if ir_log.isEnabledFor(logging.INFO):
        ir_log.info("graph %s, variant %s: host program\n%s", name, code.label, program.source)
        ir_log.info("graph %s, variant %s: PTX\n%s", name, code.label, code.ptx)
    gpu = {"host_source": program.source, "ptx": code.ptx, "llvm_ir": code.llvm_ir, "kernels": list(program.kernels),
           "launch_sites": program.launches, "library_calls": program.library_calls,
           "code": code}
    return Variant(
        name=code.label,
        guard=ScalarCall(guard_jit, "guards", n_sources),
        compute=host,
        checks=code.checks,
        assert_msgs=code.assert_msgs,
        keepalive={"jit": guard_jit, "ctx": ctx, "module": cmod, "gpu": gpu},
        record=lambda: {"target": "cuda", "func": name, "n_sources": n_sources, "cpu_inputs": list(cpu_inputs),
                        "code": code.to_json()},
    )


class _NoKernels:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.kernels: dict = {}


def gpu_modules(module: ir.Module) -> list:
    return [op for op in module.body.operations if op.operation.name == "gpu.module"]


def lower_compute(compute_mod: ir.Module, name: str):
    """After sym-lower-to-nvvm: the host program of function `name` and the kernels' LLVM IR (one text
    per gpu.module, each kernel once: sym-gpu-dedup-kernels merged the identical ones; empty when the
    graph needs no kernel)."""
    return host_program(compute_mod, name), kernels_llvm_ir(compute_mod)


def host_program(compute_mod: ir.Module, name: str) -> HostProgram:
    try:
        return HostCodegen(_func(compute_mod, name)).build("host")
    except HostCodegenError as e:
        raise UnsupportedOpError(f"graph {name}: {e}") from None


def kernels_llvm_ir(compute_mod: ir.Module) -> list[str]:
    mods = gpu_modules(compute_mod)
    return ptx_codegen.gpu_module_to_llvm_ir(mods) if mods else []


# ---------------------------------------------------------------------------------------------
# Command line: lower a linalg-on-tensors file and print one stage.


def main(argv: Sequence[str] | None = None) -> int:
    from mlir_sym.context import make_context

    p = argparse.ArgumentParser(prog="python -m mlir_sym.gpu_compile", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="linalg-on-tensors MLIR file ('-' for stdin)")
    p.add_argument("--emit", choices=["mlir", "host", "llvm", "ptx"], default="mlir")
    p.add_argument("--func", default="main", help="the compute function (for --emit=host)")
    args = p.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    ctx = make_context()
    try:
        with ctx:
            module = ir.Module.parse(text)
            run_named(PIPELINE, module, ctx)
    except (LoweringError, ir.MLIRError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.emit == "mlir":
        print(module)
        return 0
    with ctx:
        program, llvm_ir = lower_compute(module, args.func)
    if args.emit == "host":
        print(program.source)
        for k, params in program.kernels.items():
            print(f"# kernel {k}: " + ", ".join(p.kind + (f"/{p.rank}" if p.kind == "memref" else "") for p in params))
    elif args.emit == "llvm":
        print("\n".join(llvm_ir))
    else:
        try:
            print(ptx_codegen.compile_ptx(llvm_ir, use_cache=False))
        except ptx_codegen.PTXError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
