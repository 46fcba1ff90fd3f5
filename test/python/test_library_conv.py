"""The GPU runtime's convolution call (`Runtime.library_conv`, what sym-gpu-library-convolutions'
calls run) against PyTorch's convolutions, on CPU tensors: linalg's layouts (grouped: [N, G, C/G,
...] views; depthwise: [C, k...] filters), init (out = conv) and accumulate (out += conv), with and
without a bias."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from mlir_sym.runtime.cuda import Runtime


@pytest.mark.parametrize("init", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_plain_2d(init, bias):
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(2, 3, 9, 7, generator=g), torch.randn(5, 3, 3, 3, generator=g), torch.randn(5, generator=g)
    want = F.conv2d(x, w, b if bias else None, stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    out = torch.randn(want.shape, generator=g)
    before = out.clone()
    Runtime.library_conv(init, "plain", (2, 1), (1, 2), (1, 2), bias, False, x, w, *([b] if bias else []), out)
    torch.testing.assert_close(out, want if init else before + want)


def test_grouped_writes_the_buffer_through_linalg_views():
    g = torch.Generator().manual_seed(1)
    x, w, b = torch.randn(2, 8, 9, 9, generator=g), torch.randn(6, 4, 3, 3, generator=g), torch.randn(6, generator=g)
    want = F.conv2d(x, w, b, stride=2, groups=2)
    buf = torch.empty(want.shape)
    x5 = x.view(2, 2, 4, 9, 9)  # [N, G, C/G, H, W]
    w5 = w.view(2, 3, 4, 3, 3)  # [G, F/G, C/G, KH, KW]
    out5 = buf.view(2, 2, 3, *want.shape[2:])  # [N, G, F/G, OH, OW]
    Runtime.library_conv(True, "grouped", (2, 2), (0, 0), (1, 1), True, False, x5, w5, b, out5)
    torch.testing.assert_close(buf, want)


def test_depthwise_3d_and_1d():
    g = torch.Generator().manual_seed(2)
    x, w = torch.randn(1, 4, 8, 8, generator=g), torch.randn(4, 3, 3, generator=g)
    want = F.conv2d(x, w.unsqueeze(1), None, padding=1, groups=4)
    out = torch.zeros(want.shape)
    Runtime.library_conv(False, "depthwise", (1, 1), (1, 1), (1, 1), False, False, x, w, out)
    torch.testing.assert_close(out, want)
    x3, w3 = torch.randn(1, 2, 5, 6, 4, generator=g), torch.randn(3, 2, 3, 3, 3, generator=g)
    want3 = F.conv3d(x3, w3, padding=1)
    out3 = torch.empty(want3.shape)
    Runtime.library_conv(True, "plain", (1, 1, 1), (1, 1, 1), (1, 1, 1), False, False, x3, w3, out3)
    torch.testing.assert_close(out3, want3)
    x1, w1 = torch.randn(2, 3, 10, generator=g), torch.randn(4, 3, 2, generator=g)
    out1 = torch.empty(2, 4, 9)
    Runtime.library_conv(True, "plain", (1,), (0,), (1,), False, False, x1, w1, out1)
    torch.testing.assert_close(out1, F.conv1d(x1, w1))


def test_grouped_reads_a_flat_source():
    """With its padding folded, a grouped call reads the [N, C, ...] source itself."""
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(2, 4, 7, 6, generator=g), torch.randn(6, 2, 3, 3, generator=g)
    want = F.conv2d(x, w, padding=1, groups=2)
    buf = torch.empty(want.shape)
    Runtime.library_conv(True, "grouped", (1, 1), (1, 1), (1, 1), False, False, x, w.view(2, 3, 2, 3, 3),
                         buf.view(2, 2, 3, *want.shape[2:]))
    torch.testing.assert_close(buf, want)


def test_result_handed_out_as_the_buffer():
    """With `result`, PyTorch's contiguous result is returned to be the buffer (nothing written into
    it); a channels-last result is copied into the buffer and None returned."""
    g = torch.Generator().manual_seed(4)
    x, w, b = torch.randn(2, 4, 6, 6, generator=g), torch.randn(8, 2, 3, 3, generator=g), torch.randn(8, generator=g)
    want = F.conv2d(x, w, b, padding=1, groups=2)
    buf = torch.full(want.shape, 7.0)
    got = Runtime.library_conv(True, "grouped", (1, 1), (1, 1), (1, 1), True, True, x, w.view(2, 4, 2, 3, 3), b,
                               buf.view(2, 2, 4, 6, 6), buf)
    assert got is not None and got.shape == buf.shape and bool((buf == 7.0).all())
    torch.testing.assert_close(got, want)
    xl = x.to(memory_format=torch.channels_last)
    buf2 = torch.empty(want.shape)
    assert Runtime.library_conv(True, "grouped", (1, 1), (1, 1), (1, 1), True, True, xl, w.view(2, 4, 2, 3, 3), b,
                                buf2.view(2, 2, 4, 6, 6), buf2) is None
    torch.testing.assert_close(buf2, want)


def test_half_inputs_into_a_float32_accumulator():
    """bf16 inputs with a float32 output buffer (torch-mlir's half conv): the call computes in bf16 as
    eager (a float32 bias rounded to bf16, exact for the bf16 bias it was made from) and converts the
    result into the buffer; it is not handed out (another dtype)."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 4, 6, 6, generator=g).bfloat16()
    w = torch.randn(8, 4, 3, 3, generator=g).bfloat16()
    b = torch.randn(8, generator=g).bfloat16()
    want = F.conv2d(x, w, b, padding=1)
    out = torch.empty(want.shape, dtype=torch.float32)
    assert Runtime.library_conv(True, "plain", (1, 1), (1, 1), (1, 1), True, True, x, w, b.float(), out, out) is None
    assert torch.equal(out.bfloat16(), want)


def test_lazy_buffer_allocated_only_when_the_result_cannot_be_it():
    """A buffer only the call uses comes as its (shape, dtype): PyTorch's result is returned as it when
    laid out as the buffer; a channels-last result is copied into a buffer allocated then, and a half
    result into a float32 buffer converts, both returned."""
    g = torch.Generator().manual_seed(6)
    x, w = torch.randn(2, 4, 6, 6, generator=g), torch.randn(8, 4, 3, 3, generator=g)
    want = F.conv2d(x, w, padding=1)
    spec = (tuple(want.shape), torch.float32)
    got = Runtime.library_conv(True, "plain", (1, 1), (1, 1), (1, 1), False, True, x, w, spec, spec)
    torch.testing.assert_close(got, want)
    xl = x.to(memory_format=torch.channels_last)
    got = Runtime.library_conv(True, "plain", (1, 1), (1, 1), (1, 1), False, True, xl, w, spec, spec)
    assert got.is_contiguous() and got.shape == want.shape
    torch.testing.assert_close(got, want)
    xh, wh = x.bfloat16(), w.bfloat16()
    got = Runtime.library_conv(True, "plain", (1, 1), (1, 1), (1, 1), False, True, xh, wh, spec, spec)
    assert got.dtype == torch.float32
    assert torch.equal(got.bfloat16(), F.conv2d(xh, wh, padding=1))
    half = (tuple(want.shape), torch.bfloat16)
    got = Runtime.library_conv(True, "plain", (1, 1), (1, 1), (1, 1), False, True, xh, wh, half, half)
    assert got.dtype == torch.bfloat16 and torch.equal(got, F.conv2d(xh, wh, padding=1))
