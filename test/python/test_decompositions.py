"""The decompositions of decompositions.py run eagerly against eager PyTorch (and, for rules of CUDA
eager's that a CPU cannot run, against a model of its kernel), then through the backend.

    pytest -q test/python/test_decompositions.py
"""
from __future__ import annotations

import random
from collections import Counter

import pytest
import torch
import torch._dynamo
import torch.nn as nn

from mlir_sym import backend, decompositions
from training import CONV_MODULES, check_backward

NAN = float("nan")
DTYPES = [torch.int64, torch.int32, torch.uint8, torch.bool, torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _random(g: torch.Generator, shape: list, dtype: torch.dtype, hi: int) -> torch.Tensor:
    """Small integers (repeats and ties), as `dtype`; floats with signed zeros."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype == torch.uint8:
        return torch.randint(0, 2 * hi, shape, generator=g).to(dtype)
    x = torch.randint(-hi, hi + 1, shape, generator=g).to(dtype)
    if dtype.is_floating_point:
        flip = torch.randint(0, 2, shape, generator=g).bool()
        x = torch.where(flip & (x == 0), -x, x)
    return x


def _same(got, expected, zero_signs: bool = True) -> None:
    torch.testing.assert_close(got[0], expected[0], atol=0, rtol=0, equal_nan=True)
    torch.testing.assert_close(got[1], expected[1], atol=0, rtol=0)
    if zero_signs and got[0].dtype.is_floating_point:
        assert torch.equal(torch.signbit(got[0]), torch.signbit(expected[0]))


def test_mode_matches_cpu_eager():
    """Slices of up to 16 (where std::sort is an insertion sort, so eager's index is defined): the
    smallest of the most frequent values, its largest index, that element's sign of zero."""
    g = torch.Generator().manual_seed(0)
    rnd = random.Random(0)
    for _ in range(600):
        shape = [rnd.randint(1, 5) for _ in range(rnd.randint(1, 3))]
        dim = rnd.randrange(-len(shape), len(shape))
        shape[dim] = rnd.randint(1, 16)
        x = _random(g, shape, rnd.choice(DTYPES), rnd.randint(1, 4))
        keepdim = rnd.random() < 0.5
        _same(decompositions.mode(x, dim, keepdim), tuple(torch.mode(x, dim, keepdim)))
    _same(decompositions.mode(torch.tensor(-0.0)), tuple(torch.mode(torch.tensor(-0.0))))
    _same(decompositions.mode(torch.zeros(0, 3), 1), tuple(torch.mode(torch.zeros(0, 3), 1)))
    with pytest.raises(IndexError, match="non-zero size"):
        decompositions.mode(torch.zeros(2, 0), 1)


def test_mode_long_slices():
    """Over 16 elements eager's index is whichever std::sort's introsort leaves last: the values
    match, and ours is the largest index holding the value."""
    g = torch.Generator().manual_seed(1)
    for n in (17, 40, 300):
        x = _random(g, [3, n], torch.float32, n // 4)
        v, i = decompositions.mode(x, 1)
        torch.testing.assert_close(v, torch.mode(x, 1).values, atol=0, rtol=0)
        hit = x == v[:, None]
        assert torch.equal(i, (torch.arange(n) * hit).amax(1))


@pytest.mark.parametrize("row, expected", [
    ([NAN, NAN, NAN, 1, 1], (1.0, 4)),  # NaNs are not equal to each other
    ([1, 1, NAN, NAN, NAN], (1.0, 1)),
    ([2, 1, 3, NAN], (1.0, 1)),  # NaN sorts last: it loses ties
    ([2, NAN, 1, 3], (1.0, 2)),
    ([NAN, NAN], (NAN, 0)),  # all NaN: the first
])
def test_mode_nan(row, expected):
    """Rows where eager (whose comparator is not NaN-aware) agrees with NaNs as distinct largest values."""
    x = torch.tensor(row)
    for got in (decompositions.mode(x), tuple(torch.mode(x))):
        torch.testing.assert_close(got, (torch.tensor(expected[0]), torch.tensor(expected[1])), equal_nan=True)


def _cuda_eager_model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.mode(x, -1) as CUDA eager computes it (TensorModeKernel.cu, .cuh, block_reduce.cuh), for
    NaN-free rows: up to 2048 elements, the fused kernel's block max-reduction of run lengths, step by
    step (its tie order), then the largest index of the mode; beyond, thrust's smallest most frequent
    value and its smallest index."""
    def combine(a, b):
        return b if b[0] > a[0] else a

    def warp(vals):  # shuffles down 16, 8, 4, 2, 1; an out-of-range source lane gives its own value
        for off in (16, 8, 4, 2, 1):
            vals = [combine(vals[i], vals[i + off] if i + off < 32 else vals[i]) for i in range(32)]
        return vals[0]

    values, indices = [], []
    for row in x.reshape(-1, x.shape[-1]).tolist():
        n = len(row)
        s = sorted(row)
        if n > 2048:
            counts = Counter(s)
            best = max(counts.values())
            mode = min(v for v in counts if counts[v] == best)
            index = row.index(mode)
        else:
            run = [0] * n  # equal predecessors in the run: the segmented scan's values
            for i in range(1, n):
                run[i] = run[i - 1] + 1 if s[i] == s[i - 1] else 0
            threads = (128 if n <= 128 else 1024 if n <= 1024 else 2048) // 2
            pair = lambda p: (run[p], p) if p < n else (0, 0)  # noqa: E731
            local = [combine(pair(2 * t), pair(2 * t + 1)) for t in range(threads)]
            warps = [warp(local[w:w + 32]) for w in range(0, threads, 32)]
            mode = s[warp(warps + [(0, 0)] * (32 - len(warps)))[1]]
            index = max(i for i, v in enumerate(row) if v == mode)
        values.append(row[index])
        indices.append(index)
    shape = x.shape[:-1]
    return torch.tensor(values, dtype=x.dtype).reshape(shape), torch.tensor(indices).reshape(shape)


def test_mode_cuda_rules_against_a_model_of_the_kernel():
    """The CUDA rules (decompositions._mode(..., cuda=True)) against a step-by-step model of eager's
    kernels. (On an H100, torch 2.11, the decomposition on CUDA tensors matched CUDA eager's values and
    indices for slices of 1 to 5000 elements, every dtype; its zeros' signs differ: eager's value is
    the sorted element, ours the element at the index.)"""
    g = torch.Generator().manual_seed(2)
    for n in (2, 3, 5, 16, 17, 64, 127, 129, 700, 1500, 2049):
        for hi in (1, 3, max(2, n // 8)):
            x = _random(g, [2, n], torch.int64, hi)
            _same(decompositions._mode(x, -1, False, cuda=True), _cuda_eager_model(x))


@pytest.mark.parametrize("emulate_gpu", [False, True], ids=["cpu", "emulated-gpu"])
def test_mode_cuda_rules_compiled(emulate_gpu, monkeypatch):
    """The CUDA rules through the backend on the CPU: one compilation (dynamic=True) serves slices on
    both sides of the fused kernel's limit (lowered to 8 here), picked by the symbolic slice length."""
    if emulate_gpu:
        monkeypatch.setenv("MLIR_SYM_EMULATE_GPU", "1")
    monkeypatch.setattr(decompositions, "_eager_cuda_rules", lambda x: True)
    monkeypatch.setattr(decompositions, "_CUDA_FUSED_MODE_SLICE", 8)
    fn = lambda x, k: (torch.mode(x, 1), torch.mode(k, -1, keepdim=True))  # noqa: E731
    compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
    g = torch.Generator().manual_seed(3)
    for n in (3, 8, 11, 19):
        x = _random(g, [4, n], torch.float32, 2)
        k = _random(g, [5, n], torch.int64, 1)
        expected = (decompositions._mode(x, 1, False, cuda=True), decompositions._mode(k, -1, True, cuda=True))
        got = compiled(x, k)
        _same(tuple(got[0]), expected[0])
        _same(tuple(got[1]), expected[1])
        if n > 8:  # the thrust path: the smallest index, unlike the fused kernel's largest
            assert torch.equal(expected[1][1], (k == expected[1][0]).int().argmax(1, keepdim=True))
    assert backend.stats.compiles == 1 and backend.stats.fallbacks == 0


def _conv_config(rnd: random.Random, g: torch.Generator, transposed: bool):
    nd = rnd.randint(1, 3)
    groups = rnd.choice([1, 2, 3])
    cin, cout = groups * rnd.randint(1, 3), groups * rnd.randint(1, 3)
    kernel = [rnd.randint(1, 4) for _ in range(nd)]
    stride = [rnd.randint(1, 3) for _ in range(nd)]
    dilation = [rnd.randint(1, 2) for _ in range(nd)]
    padding = [rnd.randint(0, dilation[i] * (kernel[i] - 1) + 1) for i in range(nd)]  # beyond the reach too
    output_padding = [rnd.randint(0, max(stride[i], dilation[i]) - 1) if transposed else 0 for i in range(nd)]
    if transposed:
        output_padding = [min(output_padding[i], max(stride[i], dilation[i]) - 1) for i in range(nd)]
    spatial = [rnd.randint(dilation[i] * (kernel[i] - 1) + 1, 9) for i in range(nd)]
    x = torch.randn(rnd.randint(1, 3), cin, *spatial, generator=g, dtype=torch.float64)
    w_shape = [cin, cout // groups, *kernel] if transposed else [cout, cin // groups, *kernel]
    w = torch.randn(*w_shape, generator=g, dtype=torch.float64)
    return x, w, stride, padding, dilation, output_padding, groups


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_backward_matches_aten(transposed):
    """Random convolutions (1-3 spatial dims, groups, strides, padding, dilation, output padding): every grad of the decomposition equals aten's convolution_backward."""
    g = torch.Generator().manual_seed(1)
    rnd = random.Random(1)
    checked = 0
    for _ in range(200):
        x, w, stride, padding, dilation, output_padding, groups = _conv_config(rnd, g, transposed)
        try:
            y = torch.ops.aten.convolution(x, w, None, stride, padding, dilation, transposed, output_padding, groups)
        except RuntimeError:
            continue  # an output size below 1
        checked += 1
        gy = torch.randn(y.shape, generator=g, dtype=torch.float64)
        mask = [rnd.random() < 0.8 for _ in range(3)]
        args = (gy, x, w, [w.shape[1] * groups if transposed else w.shape[0]], stride, padding, dilation, transposed,
                output_padding, groups, mask)
        got = decompositions.convolution_backward(*args)
        want = torch.ops.aten.convolution_backward(*args)
        for i, (a, b) in enumerate(zip(got, want)):
            assert (a is None) == (b is None) and (a is None or torch.allclose(a, b, atol=1e-10)), \
                f"grad {i} of {tuple(x.shape)} * {tuple(w.shape)} stride {stride} padding {padding} dilation " \
                f"{dilation} output padding {output_padding} groups {groups}"
    assert checked >= 150


def test_pool_backward_matches_aten():
    """Random average pools (2-d and 3-d, strides, padding, ceil mode, count_include_pad, divisor
    override, unbatched) and adaptive average pools: the decompositions' input grads equal aten's."""
    g = torch.Generator().manual_seed(2)
    rnd = random.Random(2)
    for _ in range(200):
        nd = rnd.choice([2, 3])
        kernel = [rnd.randint(1, 4) for _ in range(nd)]
        stride = [rnd.randint(1, 4) for _ in range(nd)]
        padding = [rnd.randint(0, k // 2) for k in kernel]
        ceil_mode, include, divisor = rnd.random() < 0.5, rnd.random() < 0.5, rnd.choice([None, None, 3])
        x = torch.randn(*[rnd.randint(1, 2) for _ in range(rnd.choice([1, 2]))],
                        *[rnd.randint(k, 9) for k in kernel], generator=g, dtype=torch.float64)
        pool = torch.ops.aten.avg_pool2d if nd == 2 else torch.ops.aten.avg_pool3d
        y = pool(x, kernel, stride, padding, ceil_mode, include, divisor)
        gy = torch.randn(y.shape, generator=g, dtype=torch.float64)
        ours = decompositions.avg_pool2d_backward if nd == 2 else decompositions.avg_pool3d_backward
        aten_backward = torch.ops.aten.avg_pool2d_backward if nd == 2 else torch.ops.aten.avg_pool3d_backward
        args = (gy, x, kernel, stride, padding, ceil_mode, include, divisor)
        torch.testing.assert_close(ours(*args), aten_backward(*args), msg=lambda m: f"{args[1:]}: {m}")
    for _ in range(50):
        x = torch.randn(rnd.randint(1, 3), rnd.randint(1, 9), rnd.randint(1, 9), generator=g, dtype=torch.float64)
        out = [rnd.randint(1, 5), rnd.randint(1, 5)]
        gy = torch.randn(x.shape[0], *out, generator=g, dtype=torch.float64)
        torch.testing.assert_close(decompositions.adaptive_avg_pool2d_backward(gy, x),
                                   torch.ops.aten._adaptive_avg_pool2d_backward(gy, x))


@pytest.mark.parametrize("name", sorted(CONV_MODULES))
def test_backward_of_convolutions_and_pools(name, dynamo_graphs):
    """Compiled forward and backward against eager at three sizes, one compilation of each: grouped,
    depthwise and transposed convolutions, average pools (torch-mlir lowered their backward wrongly,
    or not at all), unbatched pools (their forward did not lower)."""
    check_backward(name, "cpu")
    assert dynamo_graphs() == 1


def test_depthwise_transposed_convolution_matches_aten():
    """Random depthwise transposed convolutions (1-3 spatial dims, strides, padding, dilation,
    output padding, bias): the decomposition's output equals aten's; other convolutions are left to
    torch-mlir (NotImplemented)."""
    g = torch.Generator().manual_seed(3)
    rnd = random.Random(3)
    checked = 0
    for _ in range(120):
        x, w, stride, padding, dilation, output_padding, _ = _conv_config(rnd, g, True)
        c = x.shape[1]
        if c == 1:
            continue  # one group: not depthwise
        w = torch.randn(c, 1, *w.shape[2:], generator=g, dtype=torch.float64)
        bias = torch.randn(c, generator=g, dtype=torch.float64) if rnd.random() < 0.5 else None
        args = (x, w, bias, stride, padding, dilation, True, output_padding, c)
        try:
            want = torch.ops.aten.convolution(*args)
        except RuntimeError:
            continue  # an output size below 1
        checked += 1
        got = decompositions.depthwise_transposed_convolution(*args)
        torch.testing.assert_close(got, want, msg=lambda m: f"{tuple(x.shape)} {args[3:]}: {m}")
    assert checked >= 40
    x = torch.randn(1, 2, 5, dtype=torch.float64)
    assert decompositions.depthwise_transposed_convolution(
        x, torch.randn(2, 2, 3, dtype=torch.float64), None, [1], [0], [1], True, [0], 1) is NotImplemented


def _grads_match(m, pre, shapes) -> None:
    """`m(pre(x))` compiled (dynamic=True) against eager in float64 at each shape, recompiles
    allowed: the output and the input's and every parameter's gradient."""
    torch._dynamo.reset()
    f = torch.compile(lambda x: m(pre(x)), backend="mlir_sym", dynamic=True)
    g = torch.Generator().manual_seed(0)
    for s in shapes:
        x = torch.randn(*s, generator=g, dtype=torch.float64, requires_grad=True)
        x2 = x.detach().clone().requires_grad_(True)
        got, want = f(x), m(pre(x2))
        torch.testing.assert_close(got, want)
        up = torch.randn(want.shape, generator=g, dtype=torch.float64)
        grads = torch.autograd.grad(got, [x, *m.parameters()], up)
        expected = torch.autograd.grad(want, [x2, *m.parameters()], up)
        torch.testing.assert_close(grads, expected, msg=lambda msg: f"shape {s}: {msg}")


def test_strided_convolutions_after_a_recompile_at_width_one():
    """The CNN fuzz's leftover: a graph Dynamo recompiles with a static width of 1 (size 1 is
    specialized), before a strided convolution, forward and backward (1-, 2- and 3-d)."""
    torch.manual_seed(0)
    _grads_match(nn.Conv1d(3, 4, 3, stride=2, padding=1).double(), lambda x: x, [(2, 3, 9), (2, 3, 1), (2, 3, 6)])
    _grads_match(nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.ReLU(),
                               nn.Conv2d(4, 2, 3, stride=2, padding=1)).double(), lambda x: x,
                 [(2, 3, 8, 9), (2, 3, 7, 1), (2, 3, 9, 1)])
    _grads_match(nn.Conv3d(2, 2, 3, stride=2, padding=1).double(), lambda x: x, [(1, 2, 5, 6, 7), (1, 2, 4, 5, 1)])


def test_transposed_convolution_of_a_parity_slice():
    """The CNN fuzz's other leftover: `x[..., ::2]` (its size depends on the parity) before a
    transposed convolution, in training, at odd and even lengths."""
    torch.manual_seed(0)
    _grads_match(nn.ConvTranspose1d(3, 2, 3, stride=2).double(), lambda x: x[..., ::2], [(2, 3, 9), (2, 3, 10), (2, 3, 11)])
    _grads_match(nn.ConvTranspose2d(3, 2, 3, stride=2).double(), lambda x: x[..., ::2],
                 [(2, 3, 9, 8), (2, 3, 10, 8), (2, 3, 11, 9)])


def test_roll_without_dims_rolls_the_flattened_tensor(dynamo_graphs):
    """`x.roll(k)` with no dims rolls over the flattened tensor; torch-mlir lowers rolls along dims
    only (the op was reported unsupported). One compilation over the sizes, shifts of both signs."""
    torch._dynamo.reset()
    backend._CACHE.clear()
    for fn in (lambda x: x.amax(0).roll(1), lambda x: (x * 2).roll(-3) + x):
        compiled = torch.compile(fn, backend="mlir_sym", dynamic=True)
        g = torch.Generator().manual_seed(0)
        for shape in [(5, 3, 2), (7, 4, 3), (6, 5, 2)]:
            x = torch.randn(*shape, generator=g)
            torch.testing.assert_close(compiled(x), fn(x))
    assert dynamo_graphs() == 2
