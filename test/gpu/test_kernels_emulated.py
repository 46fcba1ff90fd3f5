"""The GPU kernels' index math, run on the CPU: sym-gpu-map-parallel's output executed by an emulator.

No GPU needed (CI runs it). A torch function is captured and lowered like the GPU path does, up to and
including `sym-gpu-map-parallel`; then every `gpu.launch` becomes loops over blocks and threads and
the function is JIT-compiled for the host (sym-gpu-emulate-launches: launches as loops) and run
against eager PyTorch on sizes that take each path:
the 128-bit path (row length a multiple of the vector width, aligned buffers), the scalar path (odd
row lengths, a misaligned input) and row groups (softmax, layer norm: the loops of a row in one
block). Launches with barriers or block reductions run one thread per block (a barrier is then a
no-op and a block reduction the thread's own value): what this checks is which elements each thread
and phase computes; the cross-thread combination is upstream's gpu.all_reduce, checked on the GPU.

    pytest -q test/gpu/test_kernels_emulated.py
"""
from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch_mlir.execution_engine import ExecutionEngine
from torch_mlir.runtime.np_to_memref import get_ranked_memref_descriptor

from mlir_sym.backend import _decompositions
from mlir_sym.capture import torch_to_linalg, variant_modules
from mlir_sym.importer import import_graph
from mlir_sym.passes.registry import build_pipeline
from mlir_sym.pipelines import PIPELINES

TO_MAP = PIPELINES["sym-lower-to-nvvm"].split(" gpu-launch-sink-index-computations")[0].rstrip(", ") + ")"
HOST = ("builtin.module(convert-scf-to-cf, expand-strided-metadata, lower-affine, convert-vector-to-llvm, "
        "finalize-memref-to-llvm, convert-math-to-llvm, convert-math-to-libm, convert-arith-to-llvm, "
        "convert-cf-to-llvm, convert-func-to-llvm, convert-ub-to-llvm, reconcile-unrealized-casts)")


class Emulated:
    """The compute function of `fn` (dynamic shapes), mapped for the GPU and emulated on the CPU."""

    def __init__(self, fn, example_args, to_map: str = TO_MAP, dynamic: bool = True) -> None:
        self.mapped_ir = ""
        self.launches = 0

        def compiler(gm, _):
            ig = import_graph(gm, target="gpu")  # as the GPU path imports (var_mean_in_float)
            _, _, cmod = variant_modules(ig, {})
            with ig.context:
                torch_to_linalg(ig, cmod)
                build_pipeline(to_map, context=ig.context).run(cmod)
                self.mapped_ir = str(cmod)
                func = next(o.operation for o in cmod.body.operations if o.operation.name == "func.func")
                self.launches = self.mapped_ir.count("gpu.launch ")
                build_pipeline("builtin.module(sym-gpu-emulate-launches)", context=ig.context).run(cmod)
                self.sig = [str(a.type) for a in func.regions[0].blocks[0].arguments]
                build_pipeline(HOST, context=ig.context).run(cmod)
                # opt_level 0: torch-mlir's JIT at 1..3 computed a wrong column sum of a view (x.view(m, 2, -1)
                # .sum(1): every output column landed in column 0); the same LLVM IR optimized by llvmlite
                # (LLVM 22) at O1 and O2 is right
                self.engine = ExecutionEngine(cmod, opt_level=0)
                self.ig = ig
            return make_boxed_func(gm.forward)

        torch._dynamo.reset()
        be = aot_autograd(fw_compiler=compiler, decompositions=_decompositions())
        with torch.no_grad():
            torch.compile(fn, backend=be, dynamic=dynamic)(*example_args)

    def __call__(self, out_shape, *arrays: np.ndarray) -> np.ndarray:
        return self.run_outputs([np.zeros(out_shape, dtype=np.float32)], *arrays)[0]

    def run_outputs(self, outs: list, *arrays: np.ndarray) -> list:
        """Run with `outs` (zeroed arrays of the outputs' shapes and dtypes) filled in place."""
        keep, ptrs = [], []
        ints = [a for a in self.sig if a.startswith("i")]
        sizes = _symbol_values(self.ig, arrays)
        assert len(ints) == len(sizes), (self.sig, sizes)
        sizes_left, buffers_left = iter(sizes), iter(list(arrays) + list(outs))
        for t in self.sig:  # in the signature's order: Dynamo interleaves SymInts and tensors
            if t.startswith("i"):
                c = ctypes.c_int64(next(sizes_left))
                keep.append(c)
                ptrs.append(ctypes.pointer(c))
            else:
                d = get_ranked_memref_descriptor(next(buffers_left))
                keep.append(d)
                ptrs.append(ctypes.pointer(ctypes.pointer(d)))
        status = ctypes.c_int32(-1)
        self.engine.invoke("main", *ptrs, ctypes.pointer(status))
        assert status.value == 0
        return outs


def _symbol_values(ig, arrays) -> list[int]:
    """The values of the compute function's integer arguments: the graph's SymInt inputs (its other
    inputs are the tensors, in order)."""
    tensor_of = [k for k, kind in enumerate(ig.input_kinds) if kind == "tensor"]
    vals = {}
    for s in ig.sources:
        if s.dim is not None:
            vals.setdefault(str(s.expr), arrays[tensor_of.index(s.arg)].shape[s.dim])
    return [vals[str(s.expr)] for s in ig.sources if s.dim is None]


def _misaligned(a: np.ndarray) -> np.ndarray:
    """A copy of `a` whose data starts 4 bytes past a 16-byte boundary."""
    buf = np.zeros(a.size + 8, dtype=a.dtype)
    start = next(k for k in range(1, 5) if (buf[k:].ctypes.data % 16) == 4)
    view = buf[start:start + a.size].reshape(a.shape)
    view[...] = a
    assert view.ctypes.data % 16 == 4
    return view


def _gelu_chain(x, w, b):
    return F.gelu(x * w + b)


def _softmax(x):
    return torch.softmax(x, dim=-1)


def _layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def _mask_add(x, w):
    return torch.where(x > 0, x * w, x - w)


# odd row lengths (777, 13, 1031, 3) take the peeled path of row loops and block reductions: rows start
# at every alignment, a head and a tail around whole vectors (3: shorter than a vector, no vector)
SIZES = [(5, 8), (3, 777), (33, 12), (1, 1), (2, 4096), (7, 13), (4, 3), (9, 1031)]


@pytest.fixture(scope="module")
def kernels():
    def ex(n_vec):
        return [torch.randn(6, 16)] + [torch.randn(16) for _ in range(n_vec)]

    return {
        "gelu_chain": Emulated(_gelu_chain, ex(2)),
        "softmax": Emulated(_softmax, ex(0)),
        "layernorm": Emulated(_layernorm, ex(2)),
        "mask_add": Emulated(_mask_add, ex(1)),
    }


FNS = {"gelu_chain": (_gelu_chain, 2), "softmax": (_softmax, 0), "layernorm": (_layernorm, 2),
       "mask_add": (_mask_add, 1)}


@pytest.mark.parametrize("misaligned", [False, True])
@pytest.mark.parametrize("m,n", SIZES)
@pytest.mark.parametrize("name", list(FNS))
def test_emulated_kernel_matches_eager(kernels, name, m, n, misaligned):
    fn, nvec = FNS[name]
    g = torch.Generator().manual_seed(m * 1000 + n)
    x = torch.randn(m, n, generator=g)
    vecs = [torch.randn(n, generator=g) for _ in range(nvec)]
    arrays = [x.numpy()] + [v.numpy() for v in vecs]
    if misaligned:
        arrays[0] = _misaligned(arrays[0])
    got = kernels[name]((m, n), *arrays)
    want = fn(x, *vecs).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def shifted_layernorm():
    assert TO_MAP.endswith("sym-gpu-map-parallel)")
    to_map = TO_MAP[:-1] + "{shifted-loads=2})"
    return Emulated(_layernorm, [torch.randn(6, 16), torch.randn(16), torch.randn(16)], to_map)


@pytest.mark.parametrize("m,n", [(9, 13), (5, 777), (3, 1031), (6, 5)])
def test_layer_norm_reads_its_weight_shifted_at_odd_rows(shifted_layernorm, m, n):
    """`shifted-loads=2` (not the default: see GpuMapParallel.shifted_loads): at odd row lengths each
    row starts at another alignment and the weight and bias (read at the same place by every row)
    at none of them; the peeled path reads them as two aligned vectors shifted by the row's offset
    (_peel_split's shifts, _shifted_load), in registers (13: the rows a thread holds) and in memory
    (777, 1031), where the scalar path took 3 rows in 4. Every offset 0..3 of float32 vectors shows
    up among the rows."""
    k = shifted_layernorm
    assert k.mapped_ir.count("vector.shuffle") >= 4 * 4  # 4 shifted loads a path (concat, 3 stages)
    g = torch.Generator().manual_seed(n)
    x, w, b = torch.randn(m, n, generator=g), torch.randn(n, generator=g), torch.randn(n, generator=g)
    got = k((m, n), x.numpy(), w.numpy(), b.numpy())
    np.testing.assert_allclose(got, _layernorm(x, w, b).numpy(), rtol=1e-5, atol=1e-5)
    # a weight 8 bytes past a 16-byte boundary: no aligned vectors of it, the rows take the scalar path
    wb = torch.randn(n + 2, generator=g)
    got = k((m, n), x.numpy(), wb[2:].numpy(), b.numpy())
    np.testing.assert_allclose(got, _layernorm(x, wb[2:], b).numpy(), rtol=1e-5, atol=1e-5)


def _channel_affine(s, x, b):  # in the order Dynamo lifts them (s.view before the product)
    return torch.relu(x * s.view(1, -1, 1, 1) + b.view(1, -1, 1, 1))


# (N, C, H, W): H*W a multiple of 4 (the plain 128-bit path), odd H*W at least 4 (the flat path: a
# thread's 4 elements may span two channels; a total no multiple of 4 leaves the last thread a
# partial vector), H*W below 4 (scalar)
CHANNEL_SIZES = [(2, 3, 4, 4), (2, 3, 5, 7), (1, 5, 3, 3), (3, 2, 1, 5), (1, 3, 1, 3), (2, 2, 1, 1)]


@pytest.fixture(scope="module")
def channel_kernel():
    return Emulated(_channel_affine, [torch.randn(6), torch.randn(2, 6, 4, 5), torch.randn(6)])  # no two sizes equal


@pytest.mark.parametrize("misaligned", [False, True])
@pytest.mark.parametrize("shape", CHANNEL_SIZES)
def test_per_channel_kernel_at_odd_sizes(channel_kernel, shape, misaligned):
    """A batch-norm-like per-channel kernel (flattened to [N, C, H*W] by sym-collapse-broadcast-dims)
    at sizes that take each of its three paths, against eager; a misaligned input takes the scalar
    one. The mapped IR has the flat path: the 1-D views of x and the output, two loads of a
    per-channel value (the first lane's channel and the last lane's)."""
    assert channel_kernel.mapped_ir.count("memref.reinterpret_cast") == 2, channel_kernel.mapped_ir
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(*shape, generator=g)
    s, b = torch.randn(shape[1], generator=g), torch.randn(shape[1], generator=g)
    arrays = [s.numpy(), x.numpy(), b.numpy()]
    if misaligned:
        arrays[1] = _misaligned(arrays[1])
    got = channel_kernel(shape, *arrays)
    np.testing.assert_allclose(got, _channel_affine(s, x, b).numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("misaligned", [False, True])
@pytest.mark.parametrize("m,n", [(5, 8), (7, 13), (9, 1031), (4, 3)])
def test_row_sums_at_odd_lengths(m, n, misaligned):
    """A block reduction per row (x * x summed over the row): odd lengths take the peeled path."""
    k = Emulated(lambda x: (x * x).sum(-1), [torch.randn(6, 16)])
    assert "memref.alloc" not in k.mapped_ir
    x = torch.randn(m, n, generator=torch.Generator().manual_seed(m * n))
    a = _misaligned(x.numpy()) if misaligned else x.numpy()
    got = k.run_outputs([np.zeros((m,), dtype=np.float32)], a)[0]
    np.testing.assert_allclose(got, (x * x).sum(-1).numpy(), rtol=1e-5, atol=1e-5)


def _slice_row_sum(x):
    return (x[:, 1:17] * x[:, 1:17]).sum(-1)


def _slice_softmax(x):
    return torch.softmax(x[:, 1:17], dim=-1)


@pytest.mark.parametrize("m,n", [(5, 17), (3, 20), (4, 33), (2, 16 + 8)])
@pytest.mark.parametrize("fn", [_slice_row_sum, _slice_softmax])
def test_static_rows_that_start_unaligned(fn, m, n):
    """Rows of a static 16 elements (a multiple of every width) sliced from rows of n: each row starts
    at another alignment, so the plain 128-bit check fails and the peeled path runs (vectors from the
    row's first aligned element, its head and tail one per thread)."""
    k = Emulated(fn, [torch.randn(6, 20)])
    assert "arith.minui" in k.mapped_ir  # the peeled split (_peel_split)
    x = torch.randn(m, n, generator=torch.Generator().manual_seed(m * n))
    want = fn(x)
    got = k.run_outputs([np.zeros(tuple(want.shape), dtype=np.float32)], x.numpy())[0]
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 5, 7), (2, 1, 300), (4, 257, 3), (1, 1, 1), (5, 3, 256), (2, 600, 2)])
def test_scalar_path_steps_indices(shape):
    """The scalar path of a 3-d launch (a transposed read: no vectors): each thread's later elements
    step their indices by the block size with carries through both inner dims (_step_digits), one
    wrap or many (inner sizes from 1 to 600 against 256 threads)."""
    fn = lambda x: x.transpose(1, 2) * 2 + 1  # noqa: E731
    k = Emulated(fn, [torch.randn(2, 6, 5)])
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))
    want = fn(x)
    got = k.run_outputs([np.zeros(tuple(want.shape), dtype=np.float32)], x.numpy())[0]
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)


def _full_sum(x):
    return (x * x).sum()


def _full_max(x):
    return x.amax()


@pytest.mark.parametrize("fn", [_full_sum, _full_max])
def test_full_reduction_split_over_blocks(fn):
    """A reduction to one value runs in two launches: blocks of at least 8192 elements reduce their
    chunk into partials (sizes giving 1, 4 and 8 blocks, odd and vector-aligned rows, a misaligned
    input), then one block combines the partials; the accumulator's fill is their start value, not
    a launch. (torch-mlir reduces amax over all dims a dim at a time: row maxima first.)"""
    k = Emulated(fn, [torch.randn(6, 16)])
    assert k.launches == (2 if fn is _full_sum else 3) and "memref.alloc" in k.mapped_ir
    for m, n in [(5, 8), (33, 777), (64, 1024), (2, 4096)]:
        for misaligned in (False, True):
            x = torch.randn(m, n, generator=torch.Generator().manual_seed(m + n))
            a = _misaligned(x.numpy()) if misaligned else x.numpy()
            got = k((), a)
            np.testing.assert_allclose(got, fn(x).numpy(), rtol=1e-4)


@pytest.mark.parametrize("fn,shape,launches", [
    (_layernorm, (1, 1, 256), 3), (_softmax, (1, 1, 1, 37), 3), (_full_sum, (3, 100), 1),
    (_full_sum, (2, 4097), 2)])
def test_static_reductions_within_one_chunk_are_one_launch(fn, shape, launches):
    """The one row of a decode step at batch 1 (static sizes, unit row dims folded away): each of a
    layer norm's or softmax's reductions to one value is one block in one launch, not a block of
    partials and a launch combining them (5 launches before); past 8192 elements the split stays."""
    torch.manual_seed(len(shape))
    n = shape[-1]
    args = [torch.randn(*shape)] + ([torch.randn(n), torch.randn(n)] if fn is _layernorm else [])
    k = Emulated(fn, args, dynamic=False)
    assert k.launches == launches, k.mapped_ir
    want = fn(*args)
    got = k.run_outputs([np.zeros(tuple(want.shape), dtype=np.float32)], *(a.numpy() for a in args))[0]
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)


# name: (function, launches): two per column reduction (a fill and an elementwise nest over its
# outputs that reads only its own output's result fold into them)
COLUMN_FNS = {"sum0": (lambda x: x.sum(0), 2), "amax0": (lambda x: x.amax(0), 2),
              "scaled_sum0": (lambda x: (x * x[0]).sum(0), 3),  # x[0]: the same element for every row
              "sum1_of_3d": (lambda x: x.view(x.shape[0], 2, -1).sum(1), 2),
              "mean0": (lambda x: x.mean(0), 2),  # not a row group over the columns; the division fused
              "row_weighted_sum0": (lambda x: (x * x[:, :1]).sum(0), 2),  # a per-row weight: x[j, 0]
              "sum0_epilogue": (lambda x: x.sum(0).exp() * 2, 2),
              "sum0_flipped": (lambda x: (lambda s: s - s.flip(0))(x.sum(0)), 3)}  # reads other outputs


@pytest.mark.parametrize("name", list(COLUMN_FNS))
def test_column_reductions_coalesced(name):
    """Reductions over outer dims: a thread per output element and chunk of rows (consecutive threads
    on consecutive columns), partials in a buffer, then lanes per output combine them; the
    accumulator's fill is folded (x * x[0] is a launch of its own before), so is an elementwise nest
    over the outputs that reads only its own output's result. Sizes with one chunk and with many
    (5000 rows: 16 rows per chunk), odd columns, a single row."""
    fn, launches = COLUMN_FNS[name]
    k = Emulated(fn, [torch.randn(6, 16)])
    assert k.launches == launches and "gpu.all_reduce" not in k.mapped_ir, k.mapped_ir  # not a block per column
    for m, n in [(5, 8), (33, 778), (1, 6), (5000, 6)]:
        x = torch.randn(m, n, generator=torch.Generator().manual_seed(m + n))
        want = fn(x)
        got = k.run_outputs([np.zeros(tuple(want.shape), dtype=np.float32)], x.numpy())[0]
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4)


def _assert_exact(k: Emulated, fn, x: torch.Tensor) -> None:
    """The emulated kernels' outputs (values and int64 positions) equal eager's exactly."""
    want = fn(x)
    want = want if isinstance(want, tuple) else (want,)
    outs = [np.zeros(tuple(w.shape), dtype=np.float32 if w.dtype.is_floating_point else np.int64) for w in want]
    for got, w in zip(k.run_outputs(outs, x.numpy()), want):
        np.testing.assert_array_equal(got, w.numpy())


COLUMN_ARG_FNS = {"argmax0": lambda x: x.argmax(0), "argmin0": lambda x: x.argmin(0),
                  "max0": lambda x: x.max(0)}  # sym-parallel-dims-first renumbers their linalg.index


@pytest.mark.parametrize("name", list(COLUMN_ARG_FNS))
def test_column_arg_reductions(name):
    """argmax / argmin / max over the rows: two coalesced launches (a thread per column and chunk of
    rows, then lanes per column over the chunks; the accumulators' fills folded), no block
    reduction: eager's result on
    random columns, ties, -inf columns, NaNs first, later and in several chunks (5000 rows: 16 rows
    a chunk), one row."""
    fn = COLUMN_ARG_FNS[name]
    k = Emulated(fn, [torch.randn(16, 6)])
    assert k.launches == 2 and "gpu.all_reduce" not in k.mapped_ir, k.mapped_ir
    g = torch.Generator().manual_seed(2)
    for m, n in [(8, 5), (777, 33), (5000, 3), (1, 4)]:
        ties = torch.randint(0, 3, (m, n), generator=g).float()
        inf = torch.full((m, n), float("-inf"))
        inf[m - 1, 1::3] = 0.0
        nans = torch.randn(m, n, generator=g)
        nans[m // 2, ::2] = float("nan")
        nans[m - 1, ::2] = float("nan")
        nans[0, 1::3] = float("nan")
        for x in [torch.randn(m, n, generator=g), ties, inf, nans]:
            _assert_exact(k, fn, x)


ARG_FNS = {"argmax_rows": lambda x: x.argmax(-1), "argmin_rows": lambda x: x.argmin(-1),
           "max_dim": lambda x: x.max(dim=-1), "argmax_all": lambda x: x.argmax()}


@pytest.mark.parametrize("name", list(ARG_FNS))
def test_arg_reductions_as_block_reductions(name):
    """argmax / argmin / max.dim run a block per output (three block reductions: the first NaN, the
    extreme before it, its first position), not a thread per output: eager's result on ties, -inf
    rows, NaNs (first and later), odd and long rows, and over all elements."""
    fn = ARG_FNS[name]
    k = Emulated(fn, [torch.randn(6, 16)])
    assert k.mapped_ir.count("gpu.all_reduce minsi") == 2, k.mapped_ir
    g = torch.Generator().manual_seed(1)
    for m, n in [(5, 8), (33, 777), (3, 5000)]:
        cases = [torch.randn(m, n, generator=g), torch.randint(0, 3, (m, n), generator=g).float()]
        inf = torch.full((m, n), float("-inf"))
        inf[1::3, n - 1] = 0.0
        first_nan = torch.randn(m, n, generator=g)
        first_nan[:, 0] = float("nan")
        nans = torch.randn(m, n, generator=g)  # a NaN wins, at its first position, as in eager
        nans[::2, n // 2] = float("nan")
        nans[::2, n - 1] = float("nan")
        for x in cases + [inf, first_nan, nans]:
            _assert_exact(k, fn, x)


def test_paths_present(kernels):
    """The mapped IR has what the sizes above exercise: a 128-bit path beside the scalar one for the
    elementwise kernels, and softmax / layer norm each in one launch (a row group) whose two row
    reductions (max and sum; mean and variance) keep their results in registers: no buffer for them.
    Each row group has two paths (rows held in registers, up to 16 elements per thread, and loops over
    longer rows), each with the two block reductions; in the first, the row is loaded once (its
    odd rows' head and tail elements aside)."""
    assert "vector.load" in kernels["gelu_chain"].mapped_ir and "vector.store" in kernels["gelu_chain"].mapped_ir
    assert "vector.load" in kernels["mask_add"].mapped_ir
    # odd rows (777): the flat path, vectors over the flattened [m, n] (x and the output as 1-D views)
    assert kernels["gelu_chain"].mapped_ir.count("memref.reinterpret_cast") == 2
    for name in ("softmax", "layernorm"):
        k = kernels[name]
        assert k.launches == 1 and k.mapped_ir.count("gpu.all_reduce") == 4, name
        in_regs = k.mapped_ir.split("} else {")[0]  # the register path comes first
        row_loads = re.findall(r"vector\.load [^\n]*: memref<\?x(?:1x)?\?xf32>", in_regs)  # of x or x's [m, 1, n] view
        # no loop over the row: only each of the three loops' head / tail elements (odd rows, one a thread)
        assert len(row_loads) == 4 and "gpu.all_reduce" in in_regs and in_regs.count("scf.for") == 3, (name, row_loads)
        assert "memref.alloc" not in k.mapped_ir, name
