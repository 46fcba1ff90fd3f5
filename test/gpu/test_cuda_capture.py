"""What the backend does differently when Dynamo hands it CUDA tensors, checked without a GPU (fake
CUDA tensors): scaled_dot_product_attention is traced in its math form, not as a fused kernel
(flash / memory-efficient / cuDNN attention) that torch-mlir cannot lower."""
from __future__ import annotations

import pytest
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


def _scan_reference(combine, inclusive, dim, src, acc):
    """tm_tensor.scan's scalar semantics (torch-mlir's tm-tensor-to-loops): out[0] = in[0] (inclusive)
    or acc (exclusive); out[i] = f(out[i-1], in[i]) (inclusive) or f(out[i-1], in[i-1]); acc = out[-1]."""
    f = {"add": torch.add, "mul": torch.mul, "max": torch.maximum, "min": torch.minimum}[combine]
    s, a = src.movedim(dim, -1), acc.clone()
    out = torch.empty_like(s)
    for i in range(s.shape[-1]):
        if i == 0:
            out[..., 0] = s[..., 0] if inclusive else a
        else:
            out[..., i] = f(out[..., i - 1], s[..., i] if inclusive else s[..., i - 1])
    return out.movedim(-1, dim), out[..., -1]


@pytest.mark.parametrize("combine", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("inclusive", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_library_scan_matches_the_scan_semantics(combine, inclusive, dim):
    """Runtime.library_scan (sym-gpu-library-calls' tm_tensor.scan) against the loop semantics."""
    from mlir_sym.runtime.cuda import Runtime

    src = torch.randint(-3, 4, (3, 5), dtype=torch.int64)
    acc = torch.randint(1, 3, (5 if dim == 0 else 3,), dtype=torch.int64)
    want_out, want_acc = _scan_reference(combine, inclusive, dim, src, acc)
    out = torch.empty_like(src)
    Runtime.library_scan(combine, inclusive, dim, src, out, acc)
    assert out.tolist() == want_out.tolist()
    assert acc.tolist() == want_acc.tolist()
    if inclusive:  # an accumulator nothing reads is not passed (codegen/host.py): the same out
        out = torch.empty_like(src)
        Runtime.library_scan(combine, inclusive, dim, src, out, None)
        assert out.tolist() == want_out.tolist()


@pytest.mark.parametrize("combine", ["max", "min"])
@pytest.mark.parametrize("inclusive", [True, False])
def test_library_scan_max_min_propagate_nan(combine, inclusive):
    """max / min scans of floats (arith.maximumf / minimumf): a NaN stays from where it is met."""
    from mlir_sym.runtime.cuda import Runtime

    src = torch.tensor([[1.0, float("nan"), 3.0, -2.0], [0.5, 2.0, -1.0, 4.0]])
    acc = torch.tensor([0.0, float("nan")])
    want_out, want_acc = _scan_reference(combine, inclusive, 1, src, acc.clone())
    out = torch.empty_like(src)
    Runtime.library_scan(combine, inclusive, 1, src, out, acc)
    torch.testing.assert_close(out, want_out, equal_nan=True)
    torch.testing.assert_close(acc, want_acc, equal_nan=True)


def _scatter_reference(add, dim_map, updates, indices, original):
    """tm_tensor.scatter's scalar semantics (tm-tensor-to-loops), element by element."""
    out = original.clone()
    rank, k = out.dim(), updates.dim() - 1
    for ivs in torch.cartesian_prod(*[torch.arange(s) for s in updates.shape]).reshape(-1, updates.dim()).tolist():
        starts = [None] * rank
        for j, iv in enumerate(ivs[1:]):
            starts[j + rank - k] = iv
        for i, d in enumerate(dim_map):
            idx = int(indices[ivs[0], i])
            starts[d] = idx if starts[d] is None else starts[d] + idx
        u = updates[tuple(ivs)]
        out[tuple(starts)] = out[tuple(starts)] + u if add else u
    return out


@pytest.mark.parametrize("updates_shape,original_shape,dim_map,add", [
    ((3, 1, 1), (5, 1), (0,), False),   # the fill of nonzero: one row per selected element
    ((3, 1, 4), (5, 4), (0,), False),   # x[mask] rows
    ((3, 4), (6, 5), (0,), False),      # rows of 4 into rows of 5 (the slice starts at column 0)
    ((4, 1), (5,), (0,), True),         # index_put accumulate with a repeated index
    ((2, 1), (3, 4), (0, 1), False),    # two index columns: single elements
])
def test_library_scatter_matches_the_scatter_semantics(updates_shape, original_shape, dim_map, add):
    """Runtime.library_scatter (sym-gpu-library-calls' tm_tensor.scatter) against the loop semantics."""
    from mlir_sym.runtime.cuda import Runtime

    g = torch.Generator().manual_seed(0)
    updates = torch.randint(1, 9, updates_shape, generator=g).float()
    n = updates_shape[0]
    k = len(updates_shape) - 1
    cols = []
    for i, d in enumerate(dim_map):
        size = original_shape[d] - (updates_shape[d - (len(original_shape) - k) + 1] - 1
                                    if d >= len(original_shape) - k else 0)
        cols.append(torch.tensor([0, 2, 0, 1][:n]) if add else torch.randperm(size, generator=g)[:n])
    indices = torch.stack(cols, 1)
    original = torch.randint(-5, 5, original_shape, generator=g).float()
    want = _scatter_reference(add, dim_map, updates, indices, original)
    Runtime.library_scatter(add, dim_map, updates, indices, original)
    assert original.tolist() == want.tolist()


def test_library_einsum_sets_or_accumulates():
    """Runtime.torch_einsum (sym-gpu-library-calls' generalized contractions): `c = einsum` after a
    folded zero fill, `c += einsum` otherwise; strided views in and out."""
    from mlir_sym.runtime.cuda import Runtime

    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(2, 3, 4, generator=g), torch.randn(5, 4, generator=g).t()  # w: a transposed view
    c = torch.full((2, 3, 5), 7.0)
    Runtime.torch_einsum(True, "abd,dc->abc", x, w, c)
    torch.testing.assert_close(c, x @ w)
    Runtime.torch_einsum(False, "abd,dc->abc", x, w, c)
    torch.testing.assert_close(c, 2 * (x @ w))


def test_descriptors_and_first_element_addresses():
    """runtime/cuda.py `_descriptors` (the cuBLASLt calls' operands): a tensor's descriptor, and a
    descriptor with an element offset, each with the address of its first element."""
    from mlir_sym.runtime.cuda import Runtime, _descriptors

    t = torch.zeros(3, 4, dtype=torch.bfloat16)
    d = (1024, 1024, 5, 8, 1)
    descs, ptrs = _descriptors((t, d), ("bfloat16", "float32"))
    assert descs == (Runtime.desc(t), d) and ptrs == (t.data_ptr(), 1024 + 5 * 4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_library_einsum_bgrad_through_torch(dtype):
    """Runtime.torch_einsum_bgrad (sym-gpu-gemm-bias-grad's call where cuBLASLt cannot take it): the
    weight gradient, and dY summed over its rows in float32, rounded once into a [1, N] gradient."""
    from mlir_sym.runtime.cuda import Runtime

    g = torch.Generator().manual_seed(4)
    dy, x = torch.randn(300, 6, generator=g).to(dtype), torch.randn(300, 5, generator=g).to(dtype)
    dw, db = torch.full((6, 5), float("nan"), dtype=dtype), torch.full((1, 6), float("nan"), dtype=dtype)
    Runtime.torch_einsum_bgrad("ca,cb->ab", dy, x, dw, db)
    torch.testing.assert_close(dw.double(), dy.double().t() @ x.double(), atol=5e-2 if dtype != torch.float32 else 1e-4, rtol=1e-2)
    want = dy.double().sum(0, keepdim=True)
    assert torch.equal(db, want.to(dtype)) if dtype == torch.bfloat16 else torch.allclose(db.double(), want, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_library_einsum_bias_rounds_once(dtype):
    """Runtime.torch_einsum_bias (sym-gpu-gemm-bias-epilogue's call where cuBLASLt cannot take it):
    the product in float32, plus the bias, rounded once into the output (eager's addmm), not the
    rounded product plus the bias rounded again."""
    from mlir_sym.runtime.cuda import Runtime

    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 5, 300, generator=g).to(dtype)
    w = torch.randn(7, 300, generator=g).to(dtype)
    bias = (torch.randn(7, generator=g) * 100).to(dtype)
    c = torch.full((2, 5, 7), float("nan"), dtype=dtype)
    Runtime.torch_einsum_bias("abd,cd->abc", x, w, bias, c)
    exact = torch.einsum("abd,cd->abc", x.double(), w.double()) + bias.double()
    assert torch.equal(c, exact.to(dtype)) if dtype == torch.bfloat16 else torch.allclose(c.double(), exact, atol=1e-4)
    if dtype == torch.bfloat16:  # rounding twice differs somewhere here
        twice = (torch.einsum("abd,cd->abc", x.double(), w.double()).to(dtype).double() + bias.double()).to(dtype)
        assert not torch.equal(twice, c)


@pytest.mark.parametrize("equation", ["abd,dc->abc", "abce,abde->abcd", "abe,cde->abcd", "ab,ab->a", "ab,b->a"])
def test_library_einsum_of_half_operands_accumulates_in_float32(equation):
    """bf16 operands and a float32 accumulator (a bf16 nn.Linear, `a.float() @ v.float()`): the
    product is computed in float32, matmul-shaped or not (a non-matmul form once came back rounded to
    bf16: 0.046 off for a 300-long dot product)."""
    from mlir_sym.runtime.cuda import Runtime

    sizes = dict(zip("abcde", (2, 3, 4, 5, 300)))
    lhs, res = equation.split("->")
    ea, eb = lhs.split(",")
    g = torch.Generator().manual_seed(2)
    a = torch.randn([sizes[x] for x in ea], generator=g).bfloat16()
    b = torch.randn([sizes[x] for x in eb], generator=g).bfloat16()
    want = torch.einsum(equation, a.double(), b.double())
    c = torch.zeros([sizes[x] for x in res])
    Runtime.torch_einsum(True, equation, a, b, c)
    torch.testing.assert_close(c.double(), want, atol=1e-4, rtol=1e-5)
    Runtime.torch_einsum(False, equation, a, b, c)
    torch.testing.assert_close(c.double(), 2 * want, atol=2e-4, rtol=1e-5)


@pytest.mark.parametrize("equation, form", [
    ("abd,dc->abc", (None, None, 0, 2, 1, 1)),  # a linear layer: batch and rows are one row dim
    ("abce,abed->abcd", (None, None, 2, 1, 1, 1)),  # attention's p @ v
    ("abce,abde->abcd", (None, (0, 1, 3, 2), 2, 1, 1, 1)),  # q @ k^T with k as stored
    ("abec,abed->abcd", ((0, 1, 3, 2), None, 2, 1, 1, 1)),
    ("abce,aebd->abcd", (None, (0, 2, 1, 3), 2, 1, 1, 1)),  # p @ v with v in [batch, length, heads, dim]
    ("ab,cb->ac", (None, (1, 0), 0, 1, 1, 1)),
    ("abde,dec->abc", (None, None, 0, 2, 2, 1)),  # attention's output projection over (heads, head dim)
    ("abde,cde->abc", (None, (1, 2, 0), 0, 2, 2, 1)),
    ("abe,cde->abcd", (None, (2, 0, 1), 0, 2, 1, 2)),  # a projection into (heads, head dim)
    ("aeb,ecd->abcd", ((0, 2, 1), None, 0, 2, 1, 2)),
    ("bce,de->bcd", (None, (1, 0), 0, 2, 1, 1)),
    ("abde,ced->abc", (None, (2, 1, 0), 0, 2, 2, 1)),  # contracted letters in another order
    ("abc,abc->ab", None),  # no contracted pair left for a matmul: torch.einsum
    ("abd,dc->acb", None),  # output transposed
    ("abd,ad->ab", None),
    ("ab,bc->a", None),  # a letter summed in one operand only
])
@pytest.mark.parametrize("out", ["contiguous", "strided"])
def test_library_einsum_matmul_forms(equation, form, out):
    """Contractions that are (batched) matmuls run as torch.matmul (with `out=` into a contiguous
    result), the others as torch.einsum; the same values either way, set or accumulated."""
    from mlir_sym.runtime.cuda import Runtime, matmul_form

    assert matmul_form(equation) == form
    sizes = dict(zip("abcde", (2, 3, 4, 5, 6)))
    lhs, res = equation.split("->")
    ea, eb = lhs.split(",")
    g = torch.Generator().manual_seed(1)
    a = torch.randn([sizes[x] for x in ea], generator=g, dtype=torch.float64)
    b = torch.randn([sizes[x] for x in eb], generator=g, dtype=torch.float64)
    shape = [sizes[x] for x in res]
    c = torch.full(shape, 3.0, dtype=torch.float64)
    if out == "strided":  # transposed views in and out
        c = torch.full(shape[::-1], 3.0, dtype=torch.float64).permute(*reversed(range(len(shape))))
        a = a.mT.contiguous().mT
    want = torch.einsum(equation, a, b)
    Runtime.torch_einsum(True, equation, a, b, c)
    torch.testing.assert_close(c, want)
    Runtime.torch_einsum(False, equation, a, b, c)
    torch.testing.assert_close(c, 2 * want)


def test_device_scalar_one_copy_per_value():
    """Runtime.device_scalar (CPU scalar inputs of a GPU artifact): one device copy per (dtype, value),
    -0.0 and 0.0 apart, every NaN one entry."""
    from mlir_sym.runtime.cuda import Runtime

    rt = object.__new__(Runtime)  # the device part of a Runtime needs a GPU: the cache does not
    rt.device, rt._scalars = torch.device("cpu"), {}
    one = rt.device_scalar(torch.tensor(1e-5))
    assert rt.device_scalar(torch.tensor(1e-5)) is one
    assert rt.device_scalar(torch.tensor(1e-5, dtype=torch.float64)) is not one
    neg = rt.device_scalar(torch.tensor(-0.0))
    assert str(neg.item()) == "-0.0" and str(rt.device_scalar(torch.tensor(0.0)).item()) == "0.0"
    nan = rt.device_scalar(torch.tensor(float("nan")))
    assert rt.device_scalar(torch.tensor(float("nan"))) is nan
    assert len(rt._scalars) == 5


@pytest.mark.parametrize("base", ["contiguous", "column", "offset"])
def test_descriptor_views_match_tensor_views(base):
    """Runtime.dsubview / dexpand / dcollapse / dtranspose (views only kernels read, as memref descriptors) give
    the descriptor of the tensor view the host program would otherwise make."""
    from mlir_sym.runtime.cuda import Runtime

    t = torch.randn(6, 8, 10)
    if base == "column":
        t = t.permute(2, 1, 0)
    elif base == "offset":
        t = t[1:, 2:, 3:]
    item = t.element_size()
    for offs, sizes, strides, keep in [([1, 2, 3], [2, 3, 3], [1, 1, 1], None), ([0, 1, 0], [3, 1, 3], [1, 1, 2], [0, 2]),
                                       ([2, 0, 1], [1, 3, 1], [1, 2, 1], [1])]:
        want = Runtime.desc(Runtime.subview(t, offs, sizes, strides, keep))
        got = Runtime.dsubview(t, item, offs, sizes, strides, keep)
        assert got == want
        assert Runtime.dsubview(Runtime.desc(t), item, offs, sizes, strides, keep) == want  # from a descriptor
    c = torch.randn(6, 8, 10)[1:]
    assert Runtime.dexpand(c, [[0, 1], [2], [3]], (5, 1, 8, 10)) == Runtime.desc(c.view(5, 1, 8, 10))
    assert Runtime.dexpand(c, [[0], [1, 2], [3, 4]], (5, 2, 4, 5, 2)) == Runtime.desc(c.view(5, 2, 4, 5, 2))
    assert Runtime.dcollapse(c, [[0, 1], [2]]) == Runtime.desc(c.view(40, 10))
    assert Runtime.dcollapse(c, [[0, 1, 2]]) == Runtime.desc(c.view(400))
    u = torch.randn(7, 1)
    assert Runtime.dcollapse(u, [[0, 1]]) == Runtime.desc(u.view(7))
    assert Runtime.dtranspose(t, [0, 2, 1]) == Runtime.desc(t.permute(0, 2, 1))
    assert Runtime.dtranspose(Runtime.desc(c), [2, 0, 1]) == Runtime.desc(c.permute(2, 0, 1))


def test_arena_carves_aligned_descriptors():
    """Runtime.Arena: contiguous descriptors 256-byte aligned, one chunk a call once the program's
    size is known (arena_hint), another chunk when a call needs more."""
    from mlir_sym.runtime.cuda import Runtime

    rt = object.__new__(Runtime)
    rt.device, rt.arena_hint = torch.device("cpu"), 0
    a = Runtime.Arena(rt)
    d1 = a.take((3, 5), 4)
    d2 = a.take((7,), 8)
    assert d1[3:] == (3, 5, 5, 1) and d1[0] == d1[1] and d1[2] == 0
    assert d2[3:] == (7, 1)
    assert len(a.chunks) == 2 and rt.arena_hint == 512  # no hint on the first call: a chunk each
    b = Runtime.Arena(rt)
    e1, e2 = b.take((3, 5), 4), b.take((7,), 8)
    assert len(b.chunks) == 1 and b.chunks[0].numel() == 512 and e2[0] - e1[0] == 256
    b.take((100,), 4)
    assert len(b.chunks) == 2 and rt.arena_hint == 512 + 512
    assert a.take((0, 4), 4)[3:] == (0, 4, 4, 1)  # an empty buffer is a valid descriptor


def test_transposed_right_operand_copied_only_for_few_rows():
    """Runtime `_rhs`: a transposed weight view is copied contiguous before a matmul of fewer than
    SMALL_M rows (cuBLAS's slow "tn" choice there) and read as a view from SMALL_M rows on."""
    from mlir_sym.runtime.cuda import SMALL_M, _rhs

    w = torch.randn(16, 24)
    wt = w.t()  # [24, 16], column-major
    few, many = torch.randn(SMALL_M - 1, 24), torch.randn(SMALL_M, 24)
    b = _rhs(few, wt)
    assert b.is_contiguous() and torch.equal(b, wt)
    assert _rhs(many, wt) is wt
    c = torch.randn(24, 16)
    assert _rhs(few, c) is c


@pytest.mark.parametrize("batch", [(3,), (2, 3), (2, 2, 3)])
@pytest.mark.parametrize("mask", [None, "causal", "bool", "float"])
def test_library_attention_matches_sdpa(batch, mask):
    """Runtime.library_attention (sym-gpu-attention's branch for long sequences) on tensors: PyTorch's
    attention of ranks 3 to 5 (made 4-d for its fused kernels), a mask broadcast from dims of size 1,
    L != S, v's head dim apart from q's, into a transposed view of the output's buffer."""
    from mlir_sym.runtime.cuda import Runtime

    torch.manual_seed(0)
    q, k, v = torch.randn(*batch, 5, 8), torch.randn(*batch, 7, 8), torch.randn(*batch, 7, 6)
    m = None
    if mask in ("bool", "float") and len(batch) <= 2:
        m = torch.rand(batch[0], *([1] * (len(batch) - 1)), 1, 7) > 0.4
        m[..., 0] = True
        m = m if mask == "bool" else torch.where(m, 0.0, -1e9)
    out = torch.empty(*batch[:-1], 5, batch[-1], 6).transpose(-3, -2)  # [..., H, L, E] over [..., L, H, E]
    args = [q, k, v] + ([m] if m is not None else []) + [out]
    assert Runtime.library_attention(mask == "causal", 0.3, ("float32",) * len(args), (None,) * len(args), False, *args) is None
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=mask == "causal", scale=0.3)
    torch.testing.assert_close(out, want)
    # descriptors of views of one buffer (the host program's q / k / v and output), with that buffer
    # as their root: strided views of it
    base = torch.randn(4, *batch, 5, 8)
    base[3] = 0
    views = [base[0], base[1], base[2][..., :6], base[3][..., :6]]
    descs = [Runtime.desc(x) for x in views]
    Runtime.library_attention(mask == "causal", 0.3, ("float32",) * 4, (base,) * 4, False, *descs)
    want = torch.nn.functional.scaled_dot_product_attention(base[0], base[1], base[2][..., :6],
                                                            is_causal=mask == "causal", scale=0.3)
    torch.testing.assert_close(base[3][..., :6], want)


@pytest.mark.parametrize("out_kind", ["tensor", "descriptor"])
@pytest.mark.parametrize("transposed", [False, True])
def test_library_attention_result_is_the_buffer(transposed, out_kind):
    """With `result`, library_attention gives PyTorch's result as the output's buffer when it is laid
    out as the output view (no copy), else copies it into the view and returns None; either way the
    buffer's contents (or the result) are the attention's. The output view may be a descriptor of
    the buffer (the host program's transposed view), its layout read from the descriptor."""
    from mlir_sym.runtime.cuda import Runtime

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    buf = torch.full((2, 5, 3, 8), float("nan")) if transposed else torch.full((2, 3, 5, 8), float("nan"))
    out = buf.transpose(1, 2) if transposed else buf
    roots = (None,) * 5
    if out_kind == "descriptor":
        out, roots = Runtime.desc(out), (None, None, None, buf, None)
    res = Runtime.library_attention(True, 0.3, ("float32",) * 5, roots, True, q, k, v, out, buf)
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)
    got = buf if res is None else res
    assert got.shape == buf.shape
    torch.testing.assert_close(got.transpose(1, 2) if transposed else got, want)
    if res is not None:
        assert torch.isnan(buf).all()  # not written: the result is PyTorch's memory
