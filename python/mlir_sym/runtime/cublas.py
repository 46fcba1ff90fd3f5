"""cuBLAS GEMMs on memref descriptors: the host programs' contractions without torch tensors.

A library contraction (`rt.library_einsum`: linear layers, attention's two products) went through
torch.matmul / torch.mm: 12 to 56 us of host time a call on the H100 host (a tensor view per operand,
torch's dispatcher, and for half operands with a float32 result a product and then a copy into the
output; `benchmarks/bench_host_primitives.py`, `benchmarks/profile_hf_calls.py --host-profile`), 25
of them a call in GPT-2 (4 layers). Here a contraction is one ctypes call of `cublasGemmEx` (or
`cublasGemmStridedBatchedEx` for a batch) on a cuBLAS handle of our own whose stream and workspace
follow torch's current stream, with the operands' pointers, sizes and strides taken from their memref
descriptors. So its operands need not be torch tensors: buffers that only kernels and contractions
use are carved from the call's arena (codegen/host.py `_descriptor_views`) instead of a torch.empty
and a view each.

`gemm_plan` (pure integer arithmetic, tested on the CPU against a column-major emulation) maps an
einsum equation in `matmul_form` (batch dims P, rows I, contracted K, columns J) and the operands'
sizes and strides onto cuBLAS's column-major GEMM: each group of dims must collapse into one strided
dim, each matrix must have a unit stride on one side, and the output is computed as C = A B when it
is column-major or as C^T = B^T A^T when it is row-major (the usual case). Where it cannot (an
operand with no unit stride, groups that do not collapse, integer or mixed operand types, an empty
contraction) the runtime takes torch's path on tensors wrapping the same memory.
"""
from __future__ import annotations

import ctypes
import logging
import re
import threading
from dataclasses import dataclass
from typing import Sequence

import torch

log = logging.getLogger("mlir_sym.runtime")

CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
CUBLAS_GEMM_DEFAULT = -1
# cudaDataType and the cuBLAS compute type of a product whose operands are of that type
DATA_TYPES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 14}
COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F = 68, 77, 70
WORKSPACE_BYTES = 32 << 20  # what torch gives cuBLAS on Hopper (CUBLAS_WORKSPACE_CONFIG :4096:8)
_INT_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class GemmPlan:
    """cuBLAS's arguments but the pointers: C' = op(A') op(B') with C' column-major m x n. `swap`: A'
    is the einsum's b and B' its a (C row-major: C^T = B^T A^T)."""

    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    stride_a: int
    stride_b: int
    stride_c: int
    batch: int
    swap: bool


def collapse(sizes: Sequence[int], strides: Sequence[int], dims: Sequence[int]) -> tuple[int, int] | None:
    """(size, stride) of the dims `dims` (outer to inner) taken as one strided dim, or None when they
    do not collapse. Unit dims do not count; the stride of a group of size <= 1 is 0 (free)."""
    n, st = 1, 0
    for d in reversed(dims):
        s = sizes[d]
        if s == 1:
            continue
        if s == 0:
            return 0, 0
        if n == 1:
            n, st = s, strides[d]
        elif strides[d] == st * n:
            n *= s
        else:
            return None
    return n, st


def _operand(rows: int, rs: int, cols: int, cs: int) -> tuple[int, int] | None:
    """(op, ld) under which cuBLAS reads a rows x cols matrix with these strides, or None."""
    if (rows <= 1 or rs == 1) and (cols <= 1 or cs >= max(rows, 1)):  # column-major as it is
        return CUBLAS_OP_N, cs if cols > 1 else max(rows, 1)
    if (cols <= 1 or cs == 1) and rs >= max(cols, 1):  # row-major (rows > 1 here): its transpose is
        return CUBLAS_OP_T, rs
    return None


def _in_form_order(form: tuple, a: tuple, b: tuple) -> tuple:
    """a and b as (sizes, strides) permuted by the form (a as P I K, b as [P] K J)."""
    pa, pb = form[0], form[1]
    (sa, ta), (sb, tb) = a, b
    if pa is not None:
        sa, ta = [sa[i] for i in pa], [ta[i] for i in pa]
    if pb is not None:
        sb, tb = [sb[i] for i in pb], [tb[i] for i in pb]
    return (sa, ta), (sb, tb)


def gemm_plan(form: tuple, a: tuple, b: tuple, c: tuple, row_major_out: bool = False) -> GemmPlan | None:
    """The GEMM computing `einsum(a, b)` into `c` for `matmul_form`'s `form` (permutations of a and b,
    |P|, |I|, |K|, |J|), each operand given as (sizes, strides) in its own dim order; None when
    cuBLAS cannot read them as they are (see the module's summary). `row_major_out`: an output of
    one row with unit column stride is taken as row-major (C^T = B^T A^T: a bias epilogue's vector
    then runs along the output's columns)."""
    _, _, np_, ni, nk, nj = form
    (sa, ta), (sb, tb) = _in_form_order(form, a, b)
    sc, tc = c
    rng = lambda lo, n: range(lo, lo + n)  # noqa: E731
    b_batched = len(sb) == np_ + nk + nj
    groups = (
        collapse(sa, ta, rng(0, np_)), collapse(sa, ta, rng(np_, ni)), collapse(sa, ta, rng(np_ + ni, nk)),
        collapse(sb, tb, rng(0, np_)) if b_batched else (1, 0),
        collapse(sb, tb, rng(np_ if b_batched else 0, nk)), collapse(sb, tb, rng((np_ if b_batched else 0) + nk, nj)),
        collapse(sc, tc, rng(0, np_)), collapse(sc, tc, rng(np_, ni)), collapse(sc, tc, rng(np_ + ni, nj)))
    if any(g is None for g in groups):
        return None
    (pa_n, pa_s), (i, ai), (k, ak), (pb_n, pb_s), (kb, bk), (j, bj), (pc_n, pc_s), (ic, ci), (jc, cj) = groups
    batch = pc_n
    if kb != k or ic != i or jc != j or pa_n != batch or (pb_n != batch and pb_n != 1):
        return None
    if k == 0 or max(i, j, k, batch) > _INT_MAX or (batch > 1 and pc_s == 0):
        return None
    out = (CUBLAS_OP_T, max(j, 1)) if row_major_out and i <= 1 and (j <= 1 or cj == 1) else _operand(i, ci, j, cj)
    if out is None:
        return None
    if out[0] == CUBLAS_OP_N:  # C column-major: C = A B
        swap, m, n, ldc = False, i, j, out[1]
        first, second = _operand(i, ai, k, ak), _operand(k, bk, j, bj)
        s1, s2 = pa_s, (pb_s if pb_n == batch else 0)
    else:  # C row-major: C^T (j x i, column-major) = B^T A^T
        swap, m, n, ldc = True, j, i, out[1]
        first, second = _operand(j, bj, k, bk), _operand(k, ak, i, ai)
        s1, s2 = (pb_s if pb_n == batch else 0), pa_s
    if first is None or second is None or max(first[1], second[1], ldc) > _INT_MAX:
        return None
    return GemmPlan(first[0], second[0], m, n, k, first[1], second[1], ldc, s1 if batch > 1 else 0,
                    s2 if batch > 1 else 0, pc_s if batch > 1 else 0, batch, swap)


SMALL_N = 32  # output rows below which a float32 product with a transposed right operand goes through torch


def slow_transposed(plan: GemmPlan, dtype: str) -> bool:
    """Whether cuBLAS would multiply float32 operands with the right one stored transposed (nn.Linear's
    weight as it is) into a row-major output of fewer than SMALL_N rows: its heuristic picks a "tn"
    kernel several times slower than the "nn" one (BERT at length 8 on the H100: 30 us a GEMM of
    8 x 256 x 256, 359 of its 587 us of GPU time a call, `profile_hf_calls.py`,
    h100-2026-11-26i-profile-bert8-f32.txt). The runtime takes torch's path, which copies the
    operand contiguous first (runtime/cuda.py `_rhs`). Half operands are fast as they are (BERT at
    length 8 in bf16: 218 us of GPU time a call, 307 with the copies)."""
    return dtype == "float32" and plan.swap and plan.n < SMALL_N and plan.transa == CUBLAS_OP_T


MAX_CALLS = 16  # GEMMs one contraction may be split into (else torch's path)
# Batch indices a contraction may be split into: past it, torch's path copies the operand whose batch
# dims do not collapse and makes one batched GEMM. Attention's `p @ v` reading v from the projection's
# [B, L, H, E] buffer split into B GEMMs of H heads: 8 x 11 us on an H200 at B 8, L 256, where the
# copy (2 MB) and one GEMM of 32 heads take about 12 (benchmarks/profile_training.py).
MAX_BATCH_SPLIT = 2


def gemm_calls(form: tuple, a: tuple, b: tuple, c: tuple, init: bool,
               max_batch_split: int = MAX_BATCH_SPLIT) -> list[tuple] | None:
    """The GEMMs computing `einsum(a, b)` into `c` (operands as in `gemm_plan`): one when gemm_plan
    takes it; else a group of dims that does not collapse (BERT's attention output read as [length,
    heads * head_dim] from its heads-first buffer: the contracted heads and head_dim are L * 64 and 1
    apart) is split at its outermost dim into one GEMM per index, recursively, at most MAX_CALLS:
    [(plan, element offsets of a, b and c, init)], a split contracted dim accumulating (only its first
    GEMM sets an output that `init` sets). None when cuBLAS cannot read the operands at all, or only
    by splitting the batch into more than `max_batch_split` GEMMs (a copy and one GEMM are faster)."""
    _, _, np_, ni, nk, nj = form
    (sa, ta), (sb, tb) = _in_form_order(form, a, b)
    sc, tc = c
    out: list[tuple] = []
    ok = _split((list(sa), list(ta)), (list(sb), list(tb)), (list(sc), list(tc)), [np_, ni, nk, nj],
                len(sb) == np_ + nk + nj, init, 0, 0, 0, out, max_batch_split)
    return out if ok and out else None


def _split(a, b, c, groups: list[int], b_batched: bool, init: bool, oa: int, ob: int, oc: int,
           out: list, max_batch: int) -> bool:
    np_, ni, nk, nj = groups
    plan = gemm_plan((None, None, np_, ni, nk, nj), (a[0], a[1]), (b[0], b[1]), (c[0], c[1]))
    if plan is not None:
        if len(out) >= MAX_CALLS:
            return False
        out.append((plan, oa, ob, oc, init))
        return True
    bp = np_ if b_batched else 0
    # where each group's dims sit in a, b and c (None: the operand lacks the group)
    where = {0: (0, 0 if b_batched else None, 0), 1: (np_, None, np_), 2: (np_ + ni, bp, None),
             3: (None, bp + nk, np_ + ni)}
    for g in (2, 1, 3, 0):  # contracted, rows, columns, batch: the first group that does not collapse
        n = groups[g]
        pos = where[g]
        if n < 2 or all(p is None or collapse(op[0], op[1], range(p, p + n)) is not None
                        for p, op in zip(pos, (a, b, c))):
            continue
        ops = (a, b, c)
        lead = next((p for p in range(n) if any(q is not None and ops[k][0][q + p] != 1 for k, q in enumerate(pos))), None)
        if lead is None:
            return False
        size = next(ops[k][0][q + lead] for k, q in enumerate(pos) if q is not None)
        if size == 0 or (g == 0 and size > max_batch):
            return False  # empty (torch's path does nothing), or too many GEMMs
        max_batch //= size if g == 0 else 1
        strides = [ops[k][1][q + lead] if q is not None else 0 for k, q in enumerate(pos)]
        sub = [(op[0][:q + lead] + op[0][q + lead + 1:], op[1][:q + lead] + op[1][q + lead + 1:]) if q is not None
               else op for op, q in zip(ops, pos)]
        sub_groups = list(groups)
        sub_groups[g] -= 1
        for i in range(size):
            sub_init = init and (g != 2 or i == 0)  # a contracted index adds to what the first one set
            if not _split(sub[0], sub[1], sub[2], sub_groups, b_batched, sub_init, oa + i * strides[0],
                          ob + i * strides[1], oc + i * strides[2], out, max_batch):
                return False
        return True
    return False


def compute_type(a: str, c: str) -> int | None:
    """cuBLAS's compute type for operands of dtype `a` into `c` (torch's choice: float32 products of
    half operands, TF32 only when torch allows it), None for pairs cublasGemmEx does not take."""
    if a == "float64":
        return COMPUTE_64F if c == "float64" else None
    if a == "float32":
        if c != "float32":
            return None
        return COMPUTE_32F_FAST_TF32 if torch.backends.cuda.matmul.allow_tf32 else COMPUTE_32F
    if a in ("float16", "bfloat16") and c in (a, "float32"):
        return COMPUTE_32F
    return None


def _find_library(name: str = "cublas") -> str | None:
    """The lib<name> (cublas, cublasLt) torch has loaded (its own copy, found in this process's
    mappings), else the system's."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                m = re.search(rf"(/\S*/lib{name}\.so[.\d]*)$", line.strip())
                if m:
                    return m.group(1)
    except OSError:
        pass
    import ctypes.util

    for lib in (ctypes.util.find_library(name), f"lib{name}.so.13", f"lib{name}.so.12", f"lib{name}.so"):
        if lib:
            try:
                ctypes.CDLL(lib)
                return lib
            except OSError:
                continue
    return None


def _earlier_failure(index: int) -> str:
    """Why the device's context may be unusable: a kernel that failed before (a device-side
    assertion, such as an index check's, stops the context; the next call, here the first cuBLAS
    handle's creation, is what reports it, as status 14), from torch's synchronize; else ''."""
    try:
        torch.cuda.synchronize(index)
    except RuntimeError as e:  # torch.AcceleratorError is a RuntimeError
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return f": an earlier kernel failed on the device ({first}; its message, if any, is on stderr)"
    return ""


class Blas:
    """A cuBLAS handle of this thread on one device, its stream and workspace following torch's
    current stream (a workspace per stream, from torch's allocator, as torch keeps one)."""

    _lib: ctypes.CDLL | None = None
    _local = threading.local()

    @classmethod
    def get(cls, index: int) -> "Blas | None":
        """This thread's handle on device `index`, None when no libcublas can be loaded (the runtime
        then multiplies with torch: logged once)."""
        handles = getattr(cls._local, "handles", None)
        if handles is None:
            handles = cls._local.handles = {}
        h = handles.get(index, 0)
        if h == 0:
            h = handles[index] = cls._create(index)
        return h

    @classmethod
    def _create(cls, index: int) -> "Blas | None":
        if cls._lib is None:
            torch.cuda.init()
            path = _find_library()
            if path is None:
                log.warning("libcublas not found: contractions run through torch.matmul")
                return None
            cls._lib = ctypes.CDLL(path)
        return cls(cls._lib, index)

    def __init__(self, lib: ctypes.CDLL, index: int) -> None:
        self.lib = lib
        self.index = index
        handle = ctypes.c_void_p()
        with torch.cuda.device(index):
            rc = lib.cublasCreate_v2(ctypes.byref(handle))
        if rc != 0:
            raise RuntimeError(f"cublasCreate failed with status {rc}{_earlier_failure(index)}")
        self.handle = handle
        self.stream = -1
        self.workspaces: dict[int, torch.Tensor] = {}
        self.gemm = lib["cublasGemmEx"]  # no argtypes: every argument passed as a ctypes object or C int
        self.gemm.restype = ctypes.c_int
        self.gemm_batched = lib["cublasGemmStridedBatchedEx"]
        self.gemm_batched.restype = ctypes.c_int
        self.set_stream = lib.cublasSetStream_v2
        self.set_workspace = lib.cublasSetWorkspace_v2
        self.scalars = {t: (ctypes.pointer(t(1)), ctypes.pointer(t(0))) for t in (ctypes.c_float, ctypes.c_double)}

    def use_stream(self, stream: int) -> None:
        """Point the handle at `stream` with that stream's workspace (cublasSetStream resets it)."""
        rc = self.set_stream(self.handle, ctypes.c_void_p(stream))
        if rc != 0:
            raise RuntimeError(f"cublasSetStream failed with status {rc}")
        ws = self.workspaces.get(stream)
        if ws is None:
            ws = self.workspaces[stream] = torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device=f"cuda:{self.index}")
        rc = self.set_workspace(self.handle, ctypes.c_void_p(ws.data_ptr()), ctypes.c_size_t(WORKSPACE_BYTES))
        if rc != 0:
            raise RuntimeError(f"cublasSetWorkspace failed with status {rc}")
        self.stream = stream

    def args(self, plan: GemmPlan, init: bool, a_type: int, c_type: int, compute: int) -> tuple:
        """The ctypes argument list of the plan's call, pointers left as None (filled per call)."""
        one, zero = self.scalars[ctypes.c_double if compute == COMPUTE_64F else ctypes.c_float]
        alpha, beta = one, (zero if init else one)
        ll = ctypes.c_longlong
        if plan.batch == 1:
            return (self.handle, plan.transa, plan.transb, plan.m, plan.n, plan.k, alpha, None, a_type, plan.lda,
                    None, a_type, plan.ldb, beta, None, c_type, plan.ldc, compute, CUBLAS_GEMM_DEFAULT)
        return (self.handle, plan.transa, plan.transb, plan.m, plan.n, plan.k, alpha, None, a_type, plan.lda,
                ll(plan.stride_a), None, a_type, plan.ldb, ll(plan.stride_b), beta, None, c_type, plan.ldc,
                ll(plan.stride_c), plan.batch, compute, CUBLAS_GEMM_DEFAULT)


# cuBLASLt: a GEMM that adds a bias in its epilogue (sym-gpu-gemm-bias-epilogue's calls). cublasLt.h:
# cublasLtMatmulDescAttributes_t, cublasLtEpilogue_t, cublasLtMatmulPreferenceAttributes_t.
_LT_TRANSA, _LT_TRANSB, _LT_EPILOGUE, _LT_BIAS_POINTER = 3, 4, 7, 8
LT_EPILOGUE_BIAS, LT_EPILOGUE_BGRADB = 4, 512  # D = A B + bias[m]; D = A B, bias[n] = sum_k B[k, n]
_LT_PREF_MAX_WORKSPACE, _LT_PREF_ALIGN_A = 1, 5  # _ALIGN_B, _C, _D follow A's
_SCALE_TYPE = {COMPUTE_32F: 0, COMPUTE_32F_FAST_TF32: 0, COMPUTE_64F: 1}  # cudaDataType of alpha and beta


class _Heuristic(ctypes.Structure):
    """cublasLtMatmulHeuristicResult_t."""

    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_size", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def alignment(pointer: int) -> int:
    """The largest power of two up to 256 that divides `pointer` (cuBLASLt picks kernels by it)."""
    return min(256, pointer & -pointer) if pointer else 256


def bias_plan(form: tuple, a: tuple, b: tuple, c: tuple) -> GemmPlan | None:
    """The one GEMM computing `einsum(a, b)` into `c` with the output row-major (C^T = B^T A^T, m =
    the einsum's columns J, n its rows I), so that cuBLASLt's bias, a vector over m, is indexed by
    the output's last dim, and a bias gradient of B' = a, a vector over n, by a's kept dim; None for
    other products (a batch, a column-major output, groups that do not collapse)."""
    plan = gemm_plan(form, a, b, c, row_major_out=True)
    return plan if plan is not None and plan.swap and plan.batch == 1 else None


class BiasGemm:
    """One cuBLASLt GEMM with a bias epilogue: D = op(A') op(B') + bias (`LT_EPILOGUE_BIAS`, a vector
    over D's m rows), or D = op(A') op(B') and bias = op(B') summed over k (`LT_EPILOGUE_BGRADB`, a
    vector over D's n columns: a linear layer's bias gradient), its descriptors and algorithm chosen
    once for these sizes, types, pointer alignments and epilogue; `run` runs it on a stream with a
    workspace (the cuBLAS handle's, `Blas.workspaces`)."""

    _lib: ctypes.CDLL | None = None

    @classmethod
    def library(cls) -> ctypes.CDLL | None:
        if cls._lib is None:
            path = _find_library("cublasLt")
            if path is None:
                return None
            cls._lib = ctypes.CDLL(path)
        return cls._lib

    @classmethod
    def make(cls, index: int, plan: GemmPlan, a_type: int, c_type: int, compute: int,
             aligns: tuple[int, int, int], epilogue: int = LT_EPILOGUE_BIAS) -> "BiasGemm | None":
        """The GEMM, None when cuBLASLt is missing or offers no algorithm for it (logged)."""
        lib = cls.library()
        if lib is None:
            log.info("libcublasLt not found: biases are added through torch")
            return None
        handles = getattr(Blas._local, "lt_handles", None)  # per thread, as Blas's handles
        if handles is None:
            handles = Blas._local.lt_handles = {}
        h = handles.get(index)
        if h is None:
            h = ctypes.c_void_p()
            with torch.cuda.device(index):
                rc = lib.cublasLtCreate(ctypes.byref(h))
            if rc != 0:
                raise RuntimeError(f"cublasLtCreate failed with status {rc}{_earlier_failure(index)}")
            handles[index] = h
        g = cls(lib, h, plan, a_type, c_type, compute, aligns, epilogue)
        return g if g.found else None

    def __init__(self, lib: ctypes.CDLL, handle: ctypes.c_void_p, plan: GemmPlan, a_type: int, c_type: int,
                 compute: int, aligns: tuple[int, int, int], epilogue: int = LT_EPILOGUE_BIAS) -> None:
        self.lib, self.handle = lib, handle
        self.desc, self.pref = ctypes.c_void_p(), ctypes.c_void_p()
        self.layouts = [ctypes.c_void_p() for _ in range(3)]
        _check(lib.cublasLtMatmulDescCreate(ctypes.byref(self.desc), compute, _SCALE_TYPE[compute]), "MatmulDescCreate")
        for attr, value in ((_LT_TRANSA, ctypes.c_int32(plan.transa)), (_LT_TRANSB, ctypes.c_int32(plan.transb)),
                            (_LT_EPILOGUE, ctypes.c_uint32(epilogue))):
            self._set(attr, value)
        u64, i64 = ctypes.c_uint64, ctypes.c_int64
        a_rows, a_cols = (plan.m, plan.k) if plan.transa == CUBLAS_OP_N else (plan.k, plan.m)
        b_rows, b_cols = (plan.k, plan.n) if plan.transb == CUBLAS_OP_N else (plan.n, plan.k)
        for layout, t, rows, cols, ld in ((self.layouts[0], a_type, a_rows, a_cols, plan.lda),
                                          (self.layouts[1], a_type, b_rows, b_cols, plan.ldb),
                                          (self.layouts[2], c_type, plan.m, plan.n, plan.ldc)):
            _check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(layout), t, u64(rows), u64(cols), i64(ld)),
                   "MatrixLayoutCreate")
        _check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(self.pref)), "MatmulPreferenceCreate")
        ws = u64(WORKSPACE_BYTES)
        _check(lib.cublasLtMatmulPreferenceSetAttribute(self.pref, _LT_PREF_MAX_WORKSPACE, ctypes.byref(ws),
                                                        ctypes.c_size_t(8)), "MatmulPreferenceSetAttribute")
        for k, align in enumerate((aligns[0], aligns[1], aligns[2], aligns[2])):  # A', B', C, D
            v = ctypes.c_uint32(align)
            _check(lib.cublasLtMatmulPreferenceSetAttribute(self.pref, _LT_PREF_ALIGN_A + k, ctypes.byref(v),
                                                            ctypes.c_size_t(4)), "MatmulPreferenceSetAttribute")
        self.result = _Heuristic()
        count = ctypes.c_int(0)
        a, b, c = self.layouts
        rc = lib.cublasLtMatmulAlgoGetHeuristic(handle, self.desc, a, b, c, c, self.pref, 1,
                                                ctypes.byref(self.result), ctypes.byref(count))
        self.found = rc == 0 and count.value > 0 and self.result.state == 0
        if not self.found:
            log.info("cuBLASLt has no GEMM with epilogue %d for %s (status %d): through torch", epilogue, plan, rc)
        one, zero = (ctypes.c_double(1), ctypes.c_double(0)) if compute == COMPUTE_64F else (ctypes.c_float(1), ctypes.c_float(0))
        self.alpha, self.beta = ctypes.pointer(one), ctypes.pointer(zero)
        self.bias = ctypes.c_void_p(0)
        self.lock = threading.Lock()  # the bias pointer is the descriptor's: set and used under it
        self.matmul = lib["cublasLtMatmul"]
        self.matmul.restype = ctypes.c_int

    def _set(self, attr: int, value) -> None:
        _check(self.lib.cublasLtMatmulDescSetAttribute(self.desc, attr, ctypes.byref(value),
                                                       ctypes.c_size_t(ctypes.sizeof(value))), "MatmulDescSetAttribute")

    def run(self, stream: int, pa: int, pb: int, bias: int, pc: int, workspace: int) -> int:
        """D (at `pc`) = A' B' (+ bias, or its bias gradient into `bias`) with A' at `pa`, B' at `pb`
        (already swapped): cuBLASLt's status."""
        a, b, c = self.layouts
        with self.lock:
            if bias != self.bias.value:
                self.bias.value = bias
                self._set(_LT_BIAS_POINTER, self.bias)
            return self.matmul(self.handle, self.desc, self.alpha, ctypes.c_void_p(pa), a, ctypes.c_void_p(pb), b,
                               self.beta, ctypes.c_void_p(pc), c, ctypes.c_void_p(pc), c,
                               ctypes.byref(self.result.algo), ctypes.c_void_p(workspace),
                               ctypes.c_size_t(WORKSPACE_BYTES), ctypes.c_void_p(stream))

    def __del__(self) -> None:
        lib = self.lib
        try:
            for layout in self.layouts:
                if layout.value:
                    lib.cublasLtMatrixLayoutDestroy(layout)
            if self.pref.value:
                lib.cublasLtMatmulPreferenceDestroy(self.pref)
            if self.desc.value:
                lib.cublasLtMatmulDescDestroy(self.desc)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"cublasLt{what} failed with status {rc}")
