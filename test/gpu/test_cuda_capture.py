"""What the backend does differently when Dynamo hands it CUDA tensors, checked without a GPU (fake
CUDA tensors): scaled_dot_product_attention is traced in its math form, not as a fused kernel
(flash / memory-efficient / cuDNN attention) that torch-mlir cannot lower."""
from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from mlir_sym.backend import attention_math


def _flags() -> tuple[bool, bool, bool]:
    b = torch.backends.cuda
    return b.math_sdp_enabled(), b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled()


def test_cuda_inputs_trace_attention_in_math_form():
    with FakeTensorMode():
        t = torch.empty(2, 3, device="cuda")
    before = _flags()
    with attention_math([t, 3]):
        assert _flags() == (True, False, False)
        assert not torch.backends.cuda.cudnn_sdp_enabled()
    assert _flags() == before


def test_cpu_inputs_keep_pytorchs_choice():
    before = _flags()
    with attention_math([torch.empty(2, 3)]):
        assert _flags() == before
