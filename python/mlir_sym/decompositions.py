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
  convolution_backward      grouped (depthwise included) and transposed convolutions, whose
                            backward torch-mlir's lowering gets wrong ("tensor.cast ... cast
                            incompatible") or cannot lower; others keep torch-mlir's. Written with
                            forward convolutions only (library calls on the GPU):
                            input grad: the output grad with stride - 1 zeros between elements,
                            padded by dilation * (k - 1) - padding, convolved with the flipped weight
                            (in and out channels swapped within each group) at stride 1, then
                            zero-padded at the end to the input's size (rows no window reached);
                            weight grad: the batch becomes the contraction: the input as
                            [C/G, G*N, ...] convolved (groups G, stride = dilation, dilation =
                            stride) with the output grad as [G*O/G, N, ...], cropped to the kernel;
                            a transposed convolution's grads are a forward convolution's with the
                            roles of input and output grad exchanged
  avg_pool2d_backward /     per input position, the output grads of the windows holding it (at most
  avg_pool3d_backward       ceil(k / s) per dim, gathered), each divided by its window's divisor
                            (eager's: the window clipped to the padded input, or to the input when
                            count_include_pad is off, or divisor_override); separable per dim
  convolution (transposed,  the input grad of the forward convolution it is the adjoint of
  depthwise)                (torch-mlir made an invalid collapse_shape); others keep torch-mlir's
  constant_pad_nd           negative (cropping) pads as slices first (torch-mlir's lowering corrupted
                            the heap or gave wrong values); non-negative pads keep torch-mlir's
  avg_pool2d /              [C, H, W] input through a batch of one (torch-mlir's lowering makes an
  max_pool2d_with_indices   invalid 4-d pooling op of the 3-d input, or fails); batched inputs keep
  (unbatched)               torch-mlir's
  _adaptive_avg_pool2d      symbolic input sizes: a mean for an output of 1 x 1, else
                            A_h @ x @ A_w^T (PyTorch's decomposition guards on the size being a
                            multiple of the output's: a recompile per remainder); static: PyTorch's
  _adaptive_avg_pool2d_backward
                            A_h^T @ grad @ A_w with A[o, i] = 1 / |window o| for i in window o
                            (eager's windows: [floor(o * n / m), ceil((o + 1) * n / m))), two matmuls
  roll (no dims)            over the flattened tensor, as eager: a roll of the 1-d view along its dim,
                            viewed back (torch-mlir lowers a roll along dims, not one without);
                            rolls along dims keep torch-mlir's
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



def _tuple(v, n: int) -> list:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


def _dilate(t: torch.Tensor, dim: int, s: int) -> torch.Tensor:
    """`t` with s - 1 zeros between consecutive elements along `dim`: size (n - 1) * s + 1."""
    n = t.shape[dim]
    if s == 1 or (isinstance(n, int) and n == 1):
        return t
    parts = [t.unsqueeze(dim + 1)] + [torch.zeros_like(t).unsqueeze(dim + 1)] * (s - 1)
    flat = torch.cat(parts, dim + 1).flatten(dim, dim + 1)
    return flat.narrow(dim, 0, (n - 1) * s + 1)


def _pad_dim(t: torch.Tensor, dim: int, before: int, after: int) -> torch.Tensor:
    """Zero padding along `dim`."""
    pads = [0, 0] * (t.dim() - 1 - dim) + [before, after]
    return torch.constant_pad_nd(t, pads, 0.0)


def _conv_input_grad(g, weight, in_sizes, stride, padding, dilation, groups):
    """The input grad of a forward convolution (see the table above): forward convolutions only."""
    nd = weight.dim() - 2
    o, cg = weight.shape[0], weight.shape[1]
    w = weight.reshape(groups, o // groups, cg, *weight.shape[2:]).transpose(1, 2)
    w = w.reshape(groups * cg, o // groups, *weight.shape[2:]).flip(list(range(2, 2 + nd)))
    cut = []
    for i in range(nd):
        # correlation with the flipped kernel over the output grad with s - 1 zeros between rows,
        # padded by d * (k - 1) - p before and that plus the rows the forward's windows left
        # unread after (the remainder r of its size division): exactly the input's rows
        edge = dilation[i] * (weight.shape[2 + i] - 1) - padding[i]
        n_out, n_in = g.shape[2 + i], in_sizes[i]
        g = _dilate(g, 2 + i, stride[i])
        if edge >= 0:
            rest = n_in + 2 * padding[i] - dilation[i] * (weight.shape[2 + i] - 1) - 1 - (n_out - 1) * stride[i]
            g = _pad_dim(g, 2 + i, edge, edge + rest)
        else:  # padding beyond the kernel's reach: cover every row, then cut the input's out
            g = _pad_dim(g, 2 + i, 0, stride[i] - 1).narrow(2 + i, -edge, g.shape[2 + i] + stride[i] - 1 + edge)
            cut.append(i)
    core = aten.convolution.default(g, w, None, [1] * nd, [0] * nd, list(dilation), False, [0] * nd, groups)
    for i in cut:
        core = core.narrow(2 + i, 0, in_sizes[i])
    return _dense(core) if cut else core


def _dense(t: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of a slice: asking a slice of symbolic sizes whether it is contiguous (as
    autograd's consumers of a grad do) would guard on its sizes, a recompile per size."""
    return t.clone(memory_format=torch.contiguous_format)


def _conv_weight_grad(x, g, kernel, stride, padding, dilation, groups, slack=None):
    """The weight grad of a forward convolution of `x` giving `g`: [O, C/G, *kernel]. The input is
    padded after by p + s - 1 - r (r < s: the rows the forward's windows left unread), so that the
    convolution's output has a static size, k + (s - 1) // d, whatever the input's size: no slice of
    symbolic size, whose contiguity checks would guard on the sizes' remainders (a recompile per
    parity), only a static cut to the kernel. `slack` (per dim, default s - 1) bounds r: a
    transposed convolution's r is its output padding, which may reach max(s, d) - 1."""
    nd = x.dim() - 2
    n, c = x.shape[0], x.shape[1]
    o = g.shape[1]
    for i in range(nd):
        reach = dilation[i] * (kernel[i] - 1)
        rest = x.shape[2 + i] + 2 * padding[i] - reach - 1 - (g.shape[2 + i] - 1) * stride[i]
        extra = stride[i] - 1 if slack is None else slack[i]
        x = _pad_dim(x, 2 + i, padding[i], padding[i] + extra - rest)
    spatial_x, spatial_g = list(x.shape[2:]), list(g.shape[2:])
    xs = x.reshape(n, groups, c // groups, *spatial_x).permute(2, 1, 0, *range(3, 3 + nd))
    xs = xs.reshape(c // groups, groups * n, *spatial_x)
    gs = g.reshape(n, groups, o // groups, *spatial_g).permute(1, 2, 0, *range(3, 3 + nd))
    gs = gs.reshape(o, n, *spatial_g)
    grad = aten.convolution.default(xs, gs, None, list(dilation), [0] * nd, list(stride), False, [0] * nd, groups)
    for i in range(nd):
        grad = grad.narrow(2 + i, 0, kernel[i])
    return grad.transpose(0, 1).contiguous()  # [C/G, O, *kernel] -> [O, C/G, *kernel]


@_register(aten.convolution.default)
def depthwise_transposed_convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """A transposed convolution with one input and one output channel per group (depthwise): the
    input grad of the forward convolution it is the adjoint of (torch-mlir's lowering made an invalid
    collapse_shape of it, in inference too). Every other convolution keeps torch-mlir's lowering."""
    if not transposed or groups == 1 or weight.shape[1] != 1 or weight.shape[0] != groups:
        return NotImplemented
    nd = weight.dim() - 2
    stride, padding, dilation = _tuple(stride, nd), _tuple(padding, nd), _tuple(dilation, nd)
    output_padding = _tuple(output_padding, nd)
    out = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight.shape[2 + i] - 1)
           + output_padding[i] + 1 for i in range(nd)]
    y = _conv_input_grad(x, weight, out, stride, padding, dilation, groups)
    return y if bias is None else y + bias.view(-1, *[1] * nd)


@_register(aten.convolution_backward.default)
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,  # noqa: A002
                         transposed, output_padding, groups, output_mask):
    nd = weight.dim() - 2
    stride, padding, dilation = _tuple(stride, nd), _tuple(padding, nd), _tuple(dilation, nd)
    grad_input = grad_weight = grad_bias = None
    if transposed:
        # y = conv_transpose(x, w) is the adjoint of z = conv(y, w): its grads exchange the roles
        if output_mask[0]:
            grad_input = aten.convolution.default(grad_output, weight, None, stride, padding, dilation, False,
                                                  [0] * nd, groups)
            for i in range(nd):  # output_padding rows past the last window
                grad_input = grad_input.narrow(2 + i, 0, input.shape[2 + i])
            grad_input = _dense(grad_input)
        if output_mask[1]:
            slack = [max(stride[i] - 1, _tuple(output_padding, nd)[i]) for i in range(nd)]
            grad_weight = _conv_weight_grad(grad_output, input, list(weight.shape[2:]), stride, padding,
                                            dilation, groups, slack)
    else:
        if output_mask[0]:
            grad_input = _conv_input_grad(grad_output, weight, list(input.shape[2:]), stride, padding, dilation,
                                          groups)
        if output_mask[1]:
            grad_weight = _conv_weight_grad(input, grad_output, list(weight.shape[2:]), stride, padding, dilation,
                                            groups)
    if output_mask[2]:
        grad_bias = grad_output.sum([0, *range(2, 2 + nd)])
    return grad_input, grad_weight, grad_bias


def _pool_grad_1d(g: torch.Tensor, dim: int, n_in, k: int, s: int, p: int) -> torch.Tensor:
    """Along `dim`: each input position's sum of the (already divided) output grads of its windows."""
    n_out = g.shape[dim]
    w = torch.arange(n_in, device=g.device) + p  # the padded coordinate of each input position
    q = torch.div(w, s, rounding_mode="floor")
    view = [1] * g.dim()
    view[dim] = -1
    acc = None
    for t in range(-(-k // s)):
        ow = q - t
        valid = (ow >= 0) & (ow < n_out) & (w - ow * s < k)
        term = torch.where(valid.view(view), g.index_select(dim, ow.clamp(0, n_out - 1)), 0)
        acc = term if acc is None else acc + term
    return acc


def _avg_pool_backward(g, x, kernel_size, stride, padding, count_include_pad, divisor_override, nd):
    kernel = _tuple(kernel_size, nd)
    stride = _tuple(stride, nd) if stride else kernel
    padding = _tuple(padding, nd)
    dtype = g.dtype
    g = g.float() if dtype in (torch.float16, torch.bfloat16) else g
    spatial = list(x.shape[-nd:])
    if divisor_override:
        g = g / divisor_override
    else:
        divisor = None
        for i in range(nd):
            n_out = g.shape[g.dim() - nd + i]
            start = torch.arange(n_out, device=g.device) * stride[i] - padding[i]
            end = torch.minimum(start + kernel[i], torch.full_like(start, 0) + (spatial[i] + padding[i]))
            if not count_include_pad:
                start, end = start.clamp(min=0), torch.minimum(end, torch.full_like(end, 0) + spatial[i])
            size = (end - start).view([-1] + [1] * (nd - 1 - i))
            divisor = size if divisor is None else divisor * size
        g = g / divisor.to(g.dtype)
    for i in range(nd):
        dim = g.dim() - nd + i
        g = _pool_grad_1d(g, dim, spatial[i], kernel[i], stride[i], padding[i])
    return g.to(dtype)


@_register(aten.avg_pool2d_backward.default)
def avg_pool2d_backward(grad_output, input, kernel_size, stride, padding, ceil_mode,  # noqa: A002
                        count_include_pad, divisor_override=None):
    return _avg_pool_backward(grad_output, input, kernel_size, stride, padding, count_include_pad,
                              divisor_override, 2)


@_register(aten.avg_pool3d_backward.default)
def avg_pool3d_backward(grad_output, input, kernel_size, stride, padding, ceil_mode,  # noqa: A002
                        count_include_pad, divisor_override=None):
    return _avg_pool_backward(grad_output, input, kernel_size, stride, padding, count_include_pad,
                              divisor_override, 3)



@_register(aten.avg_pool2d.default)
def avg_pool2d_unbatched(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                         divisor_override=None):
    if x.dim() != 3:
        return NotImplemented  # torch-mlir's lowering serves batches
    return aten.avg_pool2d.default(x.unsqueeze(0), kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override).squeeze(0)


def _adaptive_windows(n_in, n_out, device, dtype: torch.dtype) -> torch.Tensor:
    """[n_out, n_in]: 1 / |window o| where input position i lies in adaptive window o, else 0."""
    o = torch.arange(n_out, device=device).unsqueeze(1)
    i = torch.arange(n_in, device=device).unsqueeze(0)
    m = o.new_full((), n_out)  # a tensor: the output size may be a SymInt (`(3, None)` keeps the input's)
    start = torch.div(o * n_in, m, rounding_mode="floor")
    end = torch.div((o + 1) * n_in + m - 1, m, rounding_mode="floor")
    inside = (i >= start) & (i < end)
    return inside.to(dtype) / (end - start).to(dtype)


@_register(aten._adaptive_avg_pool2d.default)
def adaptive_avg_pool2d(x: torch.Tensor, output_size) -> torch.Tensor:
    out = list(output_size)
    if all(isinstance(n, int) for n in x.shape[-2:]):
        return torch._decomp.decompositions.adaptive_avg_pool2d(x, out)
    if out == [1, 1]:
        return x.mean((-2, -1), keepdim=True)
    dtype = x.dtype
    xf = x.float() if dtype in (torch.float16, torch.bfloat16) else x
    a_h = _adaptive_windows(x.shape[-2], out[0], x.device, xf.dtype)
    a_w = _adaptive_windows(x.shape[-1], out[1], x.device, xf.dtype)
    return torch.matmul(torch.matmul(a_h, xf), a_w.t()).to(dtype)


@_register(aten._adaptive_avg_pool2d_backward.default)
def adaptive_avg_pool2d_backward(grad_output, input):  # noqa: A002
    dtype = grad_output.dtype
    g = grad_output.float() if dtype in (torch.float16, torch.bfloat16) else grad_output
    a_h = _adaptive_windows(input.shape[-2], g.shape[-2], g.device, g.dtype)
    a_w = _adaptive_windows(input.shape[-1], g.shape[-1], g.device, g.dtype)
    return torch.matmul(torch.matmul(a_h.t(), g), a_w).to(dtype)


@_register(aten.max_pool2d_with_indices.default)
def max_pool2d_with_indices_unbatched(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    if x.dim() != 3:
        return NotImplemented  # torch-mlir's lowering serves batches
    values, indices = aten.max_pool2d_with_indices.default(x.unsqueeze(0), kernel_size, stride, padding, dilation,
                                                           ceil_mode)
    return values.squeeze(0), indices.squeeze(0)



@_register(aten.constant_pad_nd.default)
def constant_pad_nd(x: torch.Tensor, pad, value=0.0):
    """Negative (cropping) pads as slices first: torch-mlir's lowering of a negative pad corrupted
    the heap or gave wrong values (the backward of `F.pad`, of `padding="same"` with an even
    kernel). Non-negative pads keep torch-mlir's lowering."""
    pad = list(pad)
    if not any(isinstance(p, int) and p < 0 for p in pad):
        return NotImplemented
    for k in range(len(pad) // 2):
        dim = x.dim() - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if isinstance(before, int) and before < 0:
            x = x.narrow(dim, -before, x.shape[dim] + before)
            pad[2 * k] = 0
        if isinstance(after, int) and after < 0:
            x = x.narrow(dim, 0, x.shape[dim] + after)
            pad[2 * k + 1] = 0
    if any(not (isinstance(p, int) and p == 0) for p in pad):
        x = aten.constant_pad_nd.default(x, pad, value)
    return _dense(x)


@_register(aten.roll.default)
def roll_flattened(x: torch.Tensor, shifts, dims=()) -> torch.Tensor:
    if dims:
        return NotImplemented  # torch-mlir's lowering serves rolls along dims
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    if len(shifts) != 1:
        return NotImplemented  # eager's error (shifts and dims of different lengths)
    return aten.roll.default(x.reshape(-1), shifts, [0]).view(x.shape)
