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


def _datadep_decompositions():
    from mlir_sym import datadep as D

    return {
        "select_rows": lambda x, m, m2, xi: D._select_rows(x, m, 5),
        "nonzero": lambda x, m, m2, xi: D._nonzero(x, 5),
        "bool_index": lambda x, m, m2, xi: D._bool_index(x, m, 5, 0),
        "masked_select": lambda x, m, m2, xi: D._masked_select(x, m2, 5),
        "masked_select_count": lambda x, m, m2, xi: D._masked_select_count(x, m2),
        "unique": lambda x, m, m2, xi: D._unique(xi, 5, True, True),
        "unique_count": lambda x, m, m2, xi: D._unique_count(xi),
        "unique_consecutive": lambda x, m, m2, xi: D._unique_consecutive(xi, 5, True, True),
        "repeat_interleave": lambda x, m, m2, xi: D._repeat_interleave(xi, 5),
        "masked_write": lambda x, m, m2, xi: D._masked_write(x, m, x, 0, True),
    }


def test_data_dependent_decompositions_trace_on_cuda_values():
    """datadep's decompositions are traced with make_fx over the graph's fake values; on CUDA values
    nothing may make a real tensor (Python indexing `t[:u]` did: the H100 run failed in aten.copy_ of
    a real CUDA tensor into a fake one). A CPU-only torch raises if anything allocates on CUDA."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from mlir_sym import datadep

    mode = FakeTensorMode(shape_env=ShapeEnv())
    with mode:
        vals = (torch.empty(8, 3, device="cuda"), torch.empty(8, dtype=torch.bool, device="cuda"),
                torch.empty(8, 3, dtype=torch.bool, device="cuda"), torch.empty(8, dtype=torch.int64, device="cuda"))
    table = datadep._decompositions()
    for name, fn in _datadep_decompositions().items():
        with mode:
            gm = make_fx(fn, decomposition_table=table, tracing_mode="real")(*vals)
        assert not [n for n in gm.graph.nodes if n.op == "get_attr"], name


def test_host_constants_are_real_tensors_when_compiled_under_a_fake_mode():
    """The count/fill phases of data-dependent graphs are compiled while Dynamo's FakeTensorMode is
    active; the host program's constant buffers (a `memref.global`, e.g. nonzero's padding row) must
    still be real tensors: 12 of 18 data-dependent patterns failed on the H100 copying from a fake one."""
    from torch._subclasses.fake_tensor import FakeTensor

    from mlir_sym.runtime.cuda import device_constants

    consts = {"__constant_1x2xi64": {"dtype": "int64", "shape": [1, 2], "values": [7, -1]}}
    with FakeTensorMode():
        made = device_constants(consts, torch.device("cpu"))
    t = made["__constant_1x2xi64"]
    assert not isinstance(t, FakeTensor)
    assert t.tolist() == [[7, -1]]


def test_library_sort_is_stable_and_moves_the_indices():
    """Runtime.library_sort (sym-gpu-library-calls' tm_tensor.sort): ties keep their input order, as
    torch-mlir's comparator (`oge`/`ole`, a left element first while it holds) means; the other
    operands (the indices) are permuted with the keys."""
    from mlir_sym.runtime.cuda import Runtime

    keys = torch.tensor([[3.0, 1.0, 3.0, 2.0], [0.0, 5.0, 5.0, -1.0]])
    idx = torch.arange(4).expand(2, 4).contiguous()
    Runtime.library_sort(True, 1, keys, idx)
    assert keys.tolist() == [[3.0, 3.0, 2.0, 1.0], [5.0, 5.0, 0.0, -1.0]]
    assert idx.tolist() == [[0, 2, 3, 1], [1, 2, 0, 3]]
    u = torch.tensor([4, 1, 4, 0])
    Runtime.library_sort(False, 0, u)
    assert u.tolist() == [0, 1, 4, 4]
