"""Decompositions of aten ops torch-mlir cannot lower, added to the table AOTAutograd traces with
(torch-mlir's own, `torch_mlir.extras.fx_decomp_util`). Each writes the op as ops we compile, with
eager's semantics, under symbolic sizes:

  median.dim / median       a stable sort along the dim, then the lower median ((n - 1) // 2-th
                            value) picked with a gather; a slice with NaNs gives NaN and the index
                            of its first NaN (sorts put NaNs last, in order), as eager does
  nanmedian.dim / nanmedian the same over the non-NaN values ((c - 1) // 2-th of the c non-NaN);
                            an all-NaN slice gives NaN at index 0 (eager: its nth_element's, unspecified)
  dist                      the p-norm of the broadcast difference
  _cdist_forward            pairwise p-norm distances from the broadcast differences (fused into one
                            reduction kernel: nothing of size P x R x M is materialized); p = 0, 1, 2,
                            inf and other p. Eager takes a matrix-product form for p = 2 from 25
                            rows on (less accurate: it cancels for close points); this is the form it
                            uses below that.
  searchsorted              a 1-d sorted sequence: bucketize's binary search (PyTorch's
                            decomposition), sorter applied with a gather first; batched sequences
                            [..., M] with values [..., N]: per value, the count of the sequence's
                            elements it is not below (`!(s >= v)`, `!(s > v)` for right), which is
                            binary search's answer on a sorted row (a NaN value gives M, as eager),
                            fused into one reduction (nothing of size N x M is materialized)
  frexp                     by the bits: the exponent field less the bias, the mantissa's exponent
                            set to -1; subnormals scaled by 2^64 first; 0, inf and NaN give (x, 0)
                            as C's frexp; half types through float32 (exact)
  histc                     eager's linear binning: bin (x - lo) * bins / (hi - lo) truncated, x == hi
                            in the last bin, values outside [lo, hi] (and NaN) not counted; lo, hi
                            the data's min and max when both bounds are equal (widened by 1 each way
                            when those are equal too; a non-finite range fails as eager's does);
                            counts added by an index_put with accumulate
                            (a scatter: atomic adds on the GPU)
  mode                      a stable sort along the dim; runs of equal values (a run starts where a
                            value differs from its predecessor: every NaN is a run of its own, -0.0 and
                            0.0 are one), their starts by a cumulative max of positions, each position's
                            length so far; the value is the input's element at the returned index.
                            CPU (eager's std::sort then a scan keeping the first longest run): the
                            smallest of the most frequent values, its largest index (eager's for slices
                            of up to 16, where std::sort is an insertion sort; beyond, eager's index is
                            whichever introsort leaves last: unspecified). CUDA tensors get CUDA eager's
                            rules: slices of up to 2048, its fused kernel's (ties between longest runs
                            resolved in its block reduction's order, which is not the smallest value;
                            the largest index); longer ones, thrust's (the smallest value, the smallest
                            index), chosen at run time from the symbolic length. NaN: eager's comparator
                            is not NaN-aware, so its result depends on where NaNs sit; ours treats NaNs
                            as distinct values sorted last (an all-NaN slice gives NaN at index 0, as
                            eager); it matches CPU eager for trailing NaNs, and for leading ones
                            before a repeated value; CUDA eager's bitonic network can disagree even
                            for trailing NaNs (not modeled)
"""
from __future__ import annotations

from typing import Callable

import torch

aten = torch.ops.aten

DECOMPOSITIONS: dict = {}


def _register(*ops) -> Callable:
    def wrap(fn: Callable) -> Callable:
        for op in ops:
            DECOMPOSITIONS[op] = fn
        return fn
    return wrap


def _median_position(n, nans: torch.Tensor | None, ignore_nan: bool, shape: list, device) -> torch.Tensor:
    """Where the median sits among `n` sorted values with `nans` NaNs (sorted last; None: integers):
    the lower median, the first NaN when NaNs propagate, the lower median of the others when ignored."""
    if nans is None:
        return torch.full(shape, (n - 1) // 2, dtype=torch.int64, device=device)
    if ignore_nan:
        valid = n - nans
        return torch.where(valid > 0, torch.div(valid - 1, 2, rounding_mode="floor"), 0)
    return torch.where(nans > 0, n - nans, (n - 1) // 2)


def _pick(x: torch.Tensor, dim: int, keepdim: bool, ignore_nan: bool) -> tuple[torch.Tensor, torch.Tensor]:
    dim = dim % max(x.dim(), 1)
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    n = x.shape[dim]
    values, order = torch.sort(x, dim=dim, stable=True)
    shape = list(x.shape)
    shape[dim] = 1
    nans = torch.isnan(x).sum(dim, keepdim=True) if x.is_floating_point() else None
    pos = _median_position(n, nans, ignore_nan, shape, x.device)
    value, index = torch.gather(values, dim, pos), torch.gather(order, dim, pos)
    if not keepdim:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return value, index


@_register(aten.median.dim)
def median_dim(x: torch.Tensor, dim: int = 0, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _pick(x, dim, keepdim, ignore_nan=False)


@_register(aten.nanmedian.dim)
def nanmedian_dim(x: torch.Tensor, dim: int = 0, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _pick(x, dim, keepdim, ignore_nan=True)


def _pick_all(x: torch.Tensor, ignore_nan: bool) -> torch.Tensor:
    """The median of every element, read from the sorted values by a one-hot sum, not a gather: a
    gather of one element is a loop of one iteration, which canonicalization moves to the host, where
    the GPU runtime cannot read the index it loads. (A median of -0.0 comes back as 0.0.)"""
    flat = x.reshape(-1)
    n = flat.shape[0]
    values = torch.sort(flat, stable=True)[0]
    nans = torch.isnan(flat).sum() if x.is_floating_point() else None
    pos = _median_position(n, nans, ignore_nan, [], x.device)
    hit = torch.arange(n, device=x.device) == pos
    out = torch.where(hit, values, torch.zeros((), dtype=x.dtype, device=x.device)).sum(dtype=x.dtype)
    if x.is_floating_point():  # an empty tensor's median is NaN
        out = torch.where(hit.any(), out, torch.full((), float("nan"), dtype=x.dtype, device=x.device))
    return out


@_register(aten.median.default)
def median_all(x: torch.Tensor) -> torch.Tensor:
    return _pick_all(x, ignore_nan=False)


@_register(aten.nanmedian.default)
def nanmedian_all(x: torch.Tensor) -> torch.Tensor:
    return _pick_all(x, ignore_nan=True)


@_register(aten.dist.default)
def dist(x: torch.Tensor, y: torch.Tensor, p: float = 2) -> torch.Tensor:
    return torch.linalg.vector_norm(x - y, p)


@_register(aten._cdist_forward.default)
def cdist(x1: torch.Tensor, x2: torch.Tensor, p: float, compute_mode: int | None = None) -> torch.Tensor:
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()  # [..., P, R, M]
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if p == float("inf"):
        return diff.amax(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    return diff.pow(p).sum(-1).pow(1.0 / p)


@_register(aten.searchsorted.Tensor, aten.searchsorted.Scalar)
def searchsorted(sorted_sequence: torch.Tensor, self, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: torch.Tensor | None = None) -> torch.Tensor:
    right = side == "right" if side is not None else right
    seq = sorted_sequence if sorter is None else torch.gather(sorted_sequence, -1, sorter)
    values = self if isinstance(self, torch.Tensor) else torch.full((), self, dtype=seq.dtype, device=seq.device)
    if seq.dim() == 1:
        return torch.bucketize(values, seq, out_int32=out_int32, right=right)
    below = ~(seq.unsqueeze(-2) > values.unsqueeze(-1)) if right else ~(seq.unsqueeze(-2) >= values.unsqueeze(-1))
    return below.sum(-1, dtype=torch.int32 if out_int32 else torch.int64)


_FREXP = {torch.float32: (torch.int32, 23, 127, 1.1754943508222875e-38),
          torch.float64: (torch.int64, 52, 1023, 2.2250738585072014e-308)}


@_register(aten.frexp.Tensor)
def frexp(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dtype in (torch.float16, torch.bfloat16):  # their values are normal float32 values
        m, e = frexp(x.float())
        return m.to(x.dtype), e
    int_t, bits_m, bias, tiny = _FREXP[x.dtype]
    small = x.abs() < tiny  # subnormal (or zero): made normal
    xs = torch.where(small, x * 2.0 ** 64, x)
    bits = xs.view(int_t)
    field = (bits >> bits_m) & (2 * bias + 1)
    e = field - (bias - 1) - torch.where(small, 64, 0)
    m = ((bits & ~((2 * bias + 1) << bits_m)) | ((bias - 1) << bits_m)).view(x.dtype)
    special = (x == 0) | ~torch.isfinite(x)
    return torch.where(special, x, m), torch.where(special, 0, e).to(torch.int32)


@_register(aten.histc.default)
def histc(x: torch.Tensor, bins: int = 100, min: float = 0, max: float = 0) -> torch.Tensor:  # noqa: A002 - aten's names
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for dimension 0")
    if max < min:
        raise RuntimeError("torch.histc: max must be larger than min")
    flat = x.reshape(-1)
    if min == max:  # the data's range, widened when it is one value
        lo, hi = flat.min(), flat.max()
        torch._assert_async(torch.isfinite(lo) & torch.isfinite(hi), "torch.histc: range of the input is not finite")
        same = lo == hi
        lo, hi = torch.where(same, lo - 1, lo), torch.where(same, hi + 1, hi)
    else:
        lo = torch.scalar_tensor(min, dtype=x.dtype, device=x.device)
        hi = torch.scalar_tensor(max, dtype=x.dtype, device=x.device)
    keep = (flat >= lo) & (flat <= hi)
    pos = ((flat - lo) * bins / (hi - lo)).to(torch.int64)
    pos = torch.where(keep, torch.clamp(pos, 0, bins - 1), 0)
    counts = torch.zeros(bins, dtype=x.dtype, device=x.device)
    return counts.index_put((pos,), keep.to(x.dtype), accumulate=True)


# CUDA eager's mode (aten/src/ATen/native/cuda/TensorModeKernel.cpp, .cu, .cuh): slices of at most
# 2048 elements whose input fits 32-bit index math go through one fused kernel a slice (a bitonic sort,
# run lengths by a segmented scan, a block max-reduction of them, then the largest index holding the
# mode); longer slices through thrust, one slice at a time (a stable radix sort, the first longest run,
# `find` of its value: the smallest index).
_CUDA_FUSED_MODE_SLICE = 2048


def _eager_cuda_rules(x: torch.Tensor) -> bool:
    """Whether mode follows CUDA eager's rules (ROCm's kernel, 256 threads and 64-lane warps, is not modeled)."""
    return x.device.type == "cuda"


def _bit_reverse5(v: torch.Tensor) -> torch.Tensor:
    return sum(((v >> b) & 1) << (4 - b) for b in range(5))


def _cuda_fused_priority(pos: torch.Tensor) -> torch.Tensor:
    """The rank of sorted position `pos` among ties in the fused kernel's block max-reduction of run
    lengths (`b.val > a.val ? b : a`, block_reduce.cuh): thread t holds positions 2t, 2t + 1 (the first
    kept on a tie), then warps reduce by shuffles down 16, 8, 4, 2, 1 (lane i keeps itself against lane
    i + offset on a tie: the lane of smallest bit-reversed number wins), then warp 0 reduces the warps'
    results the same way. Smallest wins."""
    t = pos >> 1
    return _bit_reverse5(t >> 5) * 64 + _bit_reverse5(t & 31) * 2 + (pos & 1)


def _mode(x: torch.Tensor, dim: int, keepdim: bool, cuda: bool) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    dim = dim % x.dim()
    n = x.shape[dim]
    if isinstance(n, int) and n == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    # sort keys: half types through float32 (exact, same order), bool as uint8
    key = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x.to(torch.uint8) if x.dtype == torch.bool else x
    values, order = torch.sort(key, dim=dim, stable=True)  # NaNs last, equal values in input order
    shape = [1] * x.dim()
    shape[dim] = n
    pos = torch.arange(n, device=x.device).view(shape)
    # a run of equal values starts where a value differs from its predecessor (every NaN starts one)
    first = torch.ones_like(values.narrow(dim, 0, 1), dtype=torch.bool)
    starts = torch.cat([first, values.narrow(dim, 1, n - 1) != values.narrow(dim, 0, n - 1)], dim)
    run_start = torch.cummax(torch.where(starts, pos, 0), dim).values
    length = pos - run_start + 1  # the run's length so far: its whole length at its last element
    end = length.argmax(dim, keepdim=True)  # the last element of the first longest run (ties: the smallest value)
    if not cuda:  # CPU eager: its last element after std::sort (the largest index for slices of up to 16)
        index = torch.gather(order, dim, end)
    else:
        longest = length == length.amax(dim, keepdim=True)
        fused_end = torch.where(longest, _cuda_fused_priority(pos), 1 << 16).argmin(dim, keepdim=True)
        full = lambda v: torch.full((), v, dtype=torch.int64, device=x.device)  # noqa: E731
        thrust = (full(n) > _CUDA_FUSED_MODE_SLICE) | (full(x.numel()) > 2 ** 31 - 1)
        index = torch.where(thrust, torch.gather(order, dim, torch.gather(run_start, dim, end)),
                            torch.gather(order, dim, fused_end))
    value = torch.gather(x, dim, index)  # the input's element at that index (its sign of zero)
    if not keepdim:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return value, index


@_register(aten.mode.default)
def mode(x: torch.Tensor, dim: int = -1, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _mode(x, dim, keepdim, _eager_cuda_rules(x))
